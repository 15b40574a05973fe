"""Files that keep what was measured: atomic writes, a run's CSV + sidecar, autosaves, sweep files, user data checks."""
