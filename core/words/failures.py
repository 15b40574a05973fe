"""A lane's failure as a user reads it, in the CLI and the window alike: its cause, and the log that keeps the rest."""
from __future__ import annotations

from ..paths import lane_log_path


def failure_words(lane: str, reason: str) -> str:
    """`reason` (the framework's own message, shortened in the lane: core/lane/run.py describe_error), then where
    this machine keeps the lane's log, which holds the traceback: "ValueError: … (the lane's log: PATH)". A lane
    whose log is not on this machine (another machine's, or none written) is said without one."""
    cause = reason.strip() or "no reason reached the app"
    log = lane_log_path(lane)
    try:
        kept = log is not None and log.is_file() and log.stat().st_size > 0
    except OSError:
        kept = False
    return f"{cause} (the lane's log: {log})" if kept else cause
