"""Every sentence a user reads, made from typed results: numbers, verdicts, sweeps, the anatomy."""
