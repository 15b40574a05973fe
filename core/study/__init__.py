"""Studies across lanes: sweeps of widths, refinement of a crossover, the knob ladder, anatomies of models."""
