"""Files that grow while a run or a sweep is measured: valid on disk at every moment, written off the caller's thread.

The per-batch CSV and its sidecar are first written as a pair (old pair or new pair, never a
mixture); records are then appended as whole lines, and the sidecar is replaced whenever a
lane starts or ends. A kill at any moment leaves a readable CSV with what had been written and
a sidecar of the same run. `finish()` writes the complete pair once more, atomically.
"""
from __future__ import annotations

import hashlib
import os
import queue
import tempfile
import threading
import time
from pathlib import Path
from typing import Callable, Iterable, Mapping, Sequence

from ..config import ConfigError
from ..json_data import JsonValue
from .run_files import HEADER, batches_text, sidecar_path, sidecar_text
from .atomic import ExportError, append_lines, atomic_write_files, atomic_write_text, csv_text
from ..records import BatchTiming, LaneEvent, RunFailed, RunFinished, RunStarted
from ..results import RunResult

FLUSH_INTERVAL_S = 1.0  # records reach the disk at most this late: what a kill -9 can lose

try:
    import fcntl
except ImportError:  # Windows: no advisory locks; two writers of one path are not detected there
    fcntl = None  # type: ignore[assignment]


def check_output_path(path: str, what: str = "--csv") -> Path:
    """Refuse, before anything is measured, a path that cannot be written: a ConfigError saying why."""
    if not path or not path.strip():
        raise ConfigError(f"{what} is empty: name the file to write, e.g. {what} timings.csv")
    target = Path(path).expanduser()
    if target.is_dir():
        raise ConfigError(f"{what} {path} is a folder: name a file in it, e.g. {target / 'timings.csv'}")
    folder = target.parent if str(target.parent) else Path(".")
    if not folder.is_dir():
        raise ConfigError(f"{what} {path}: the folder {folder} does not exist")
    if target.exists() and not os.access(target, os.W_OK):
        raise ConfigError(f"{what} {path}: the file is not writable")
    try:  # the only sure test (read-only mounts, /proc, permissions that root ignores): make a file there
        fd, trial = tempfile.mkstemp(prefix=".crossover-check-", dir=folder)
        os.close(fd)
        os.unlink(trial)
    except OSError as exc:
        raise ConfigError(f"{what} {path}: the folder {folder} is not writable ({exc.strerror or exc})") from None
    if len(target.name.encode()) > 255:
        raise ConfigError(f"{what} {path}: the file name is longer than 255 bytes")
    return target


class OutputClaim:
    """This process is the one writing `path`: a second Crossover writing it says so instead of overwriting.

    An advisory lock on a small hidden file beside the target; the kernel drops it if the process
    dies, so a crash never leaves the path claimed.
    """

    def __init__(self, path: Path) -> None:
        digest = hashlib.sha1(path.name.encode()).hexdigest()[:12]
        self.lock_path = path.parent / f".crossover-{digest}.lock"
        self._fd: int | None = None
        if fcntl is None:
            return
        try:
            fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT, 0o600)
        except OSError as exc:
            raise ExportError(f"cannot write {path}: {exc.strerror or exc}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            owner = os.read(fd, 32).decode(errors="replace").strip() or "unknown"
            os.close(fd)
            raise ExportError(f"{path} is being written by another Crossover process (pid {owner}): "
                              "choose another file, or wait until it has finished") from None
        os.ftruncate(fd, 0)
        os.write(fd, str(os.getpid()).encode())
        self._fd = fd

    def release(self) -> None:
        if self._fd is None:
            return
        try:
            os.unlink(self.lock_path)
        except OSError:
            pass
        os.close(self._fd)
        self._fd = None


class BackgroundWriter:
    """Runs file writes in order on one thread, so no window and no measurement waits for a disk."""

    def __init__(self, name: str = "crossover-writer") -> None:
        self._jobs: queue.SimpleQueue[Callable[[], object] | None] = queue.SimpleQueue()
        self._idle = threading.Event()
        self._idle.set()
        self._pending = 0
        self._lock = threading.Lock()
        self.error = ""  # the last write that failed, as a sentence; the caller clears it once shown
        self._thread = threading.Thread(target=self._loop, name=name, daemon=True)
        self._thread.start()

    def submit(self, job: Callable[[], object]) -> None:  # what the job returns is not kept
        with self._lock:
            self._pending += 1
            self._idle.clear()
        self._jobs.put(job)

    def _loop(self) -> None:
        while True:
            job = self._jobs.get()
            if job is None:
                return
            try:
                job()
            except (ExportError, OSError) as exc:
                self.error = str(exc)
            finally:
                with self._lock:
                    self._pending -= 1
                    if self._pending == 0:
                        self._idle.set()

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until every submitted write is done; False if that took longer than `timeout`."""
        return self._idle.wait(timeout)

    def close(self, timeout: float | None = None) -> None:
        self.flush(timeout)
        self._jobs.put(None)
        self._thread.join(timeout)


class RunFiles:
    """A per-batch CSV and its sidecar that grow with runs in progress (the CLI's --csv, the window's autosave)."""

    def __init__(self, csv_path: str | os.PathLike, host: Mapping[str, JsonValue], *,
                 extra: Mapping[str, JsonValue] | None = None, writer: BackgroundWriter | None = None,
                 claim: bool = True) -> None:
        self.csv_path = Path(csv_path)
        self.json_path = sidecar_path(self.csv_path)
        if self.csv_path.resolve() == self.json_path.resolve():
            raise ConfigError(f"{csv_path}: its JSON sidecar would be the file itself; name it .csv")
        self._host, self._extra = host, dict(extra or {})
        self._claim = OutputClaim(self.csv_path) if claim else None
        self._own_writer = writer is None
        self.writer = writer or BackgroundWriter()
        self._pending: list[BatchTiming] = []
        self._last_flush = time.monotonic()

    def begin(self, results: Sequence[RunResult]) -> None:
        """Replace whatever was at the paths with this run's pair (its records so far)."""
        csv_text_now, json_text = batches_text(results), sidecar_text(results, self._host, self._extra)
        self._pending = []
        self.writer.submit(lambda: atomic_write_files([(self.csv_path, csv_text_now), (self.json_path, json_text)]))

    def add_records(self, records: Sequence[BatchTiming]) -> None:
        self._pending.extend(records)

    def take(self, events: Iterable[LaneEvent], results: Sequence[RunResult]) -> None:
        """Fold new lane events in: records appended at most FLUSH_INTERVAL_S late, the sidecar
        replaced when a lane starts or ends. `results` already hold the events (a RunTracker's)."""
        lifecycle = False
        for event in events:
            if isinstance(event, BatchTiming):
                self._pending.append(event)
            elif isinstance(event, (RunStarted, RunFinished, RunFailed)):
                lifecycle = True
        if lifecycle:
            self.update_sidecar(results)
        elif time.monotonic() - self._last_flush >= FLUSH_INTERVAL_S:
            self.flush_records()

    def flush_records(self) -> None:
        """Append the records added since the last flush, as whole lines, in the background."""
        self._last_flush = time.monotonic()
        if not self._pending:
            return
        lines = csv_text(HEADER, (r.row() for r in self._pending)).splitlines(keepends=True)
        header, body = lines[0], lines[1:]
        self._pending = []
        self.writer.submit(lambda: append_lines(self.csv_path, header, body))

    def update_sidecar(self, results: Sequence[RunResult]) -> None:
        """Lanes started or ended: the sidecar says so (the records stay where they are)."""
        self.flush_records()
        text = sidecar_text(results, self._host, self._extra)
        self.writer.submit(lambda: atomic_write_text(self.json_path, text))

    def finish(self, results: Sequence[RunResult], timeout: float | None = 30.0) -> tuple[Path, Path]:
        """Write the complete pair now (both or neither) and release the path; raises ExportError."""
        self._pending = []
        self.writer.flush(timeout)
        if self.writer.error:
            self.writer.error = ""  # the final pair below replaces whatever a growing write left
        try:
            atomic_write_files([(self.csv_path, batches_text(results)),
                                (self.json_path, sidecar_text(results, self._host, self._extra))])
        finally:
            self.close()
        return self.csv_path, self.json_path

    def close(self) -> None:
        if self._own_writer:
            self.writer.close(10.0)
        if self._claim is not None:
            self._claim.release()
            self._claim = None
