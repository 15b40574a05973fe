"""Lanes as processes: starting and speaking to them (locally or over SSH), the pool, who trains when, a run's records, devices."""
