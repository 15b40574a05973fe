"""Crossover: where the GPU starts to win. `core` measures and says it, `gui` shows it, `main.py` starts either."""
