"""The Sweep tab: its form, the sweep picture with fits and crossings, the table, saved sweeps overlaid."""
