"""The headless command line: one module per command, and what they share."""
