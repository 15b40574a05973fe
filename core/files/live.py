"""Files that grow while a run or a sweep is measured: valid on disk at every moment, written off the caller's thread.

The per-batch CSV and its sidecar are first written as a pair (old pair or new pair, never a
mixture); records are then appended as whole lines, and the sidecar is replaced whenever a
lane starts or ends. A kill at any moment leaves a readable CSV with what had been written and
a sidecar of the same run. `finish()` writes the complete pair once more, atomically.
"""
from __future__ import annotations

import errno
import hashlib
import os
import stat
import queue
import tempfile
import threading
import time
from pathlib import Path
from typing import Callable, Iterable, Mapping, Sequence

from ..config import ConfigError
from ..json_data import JsonValue
from .run_files import HEADER, batches_text, sidecar_path, sidecar_text
from .atomic import (NO_FOLLOW, ExportError, append_lines, atomic_write_files, atomic_write_text, csv_text,
                     kind_of, name_problem, split_lines, target_problem)
from ..records import LANE_ENDS, BatchTiming, LaneEvent, RunStarted, SegmentEnded, SegmentStarted
from ..results import RunResult
from ..plurals import plural

FLUSH_INTERVAL_S = 1.0  # records reach the disk at most this late: what a kill -9 can lose

try:
    import fcntl
except ImportError:  # Windows: no advisory locks; two writers of one path are not detected there
    fcntl = None  # type: ignore[assignment]


# What each option writes, as its refusals' examples name it ("-o DIR" suggested DIR/timings.csv for a report).
EXAMPLES = {"--csv": "timings.csv", "-o": "report.html", "--json": "rule.json", "--json-file": "anatomy.json"}


def check_output_path(path: str, what: str = "--csv") -> Path:
    """Refuse, before anything is measured, a path that cannot be written: a ConfigError saying why."""
    example = EXAMPLES.get(what, "timings.csv")
    if not path or not path.strip():
        raise ConfigError(f"{what} is empty: name the file to write, e.g. {what} {example}")
    target = expand_home(path, what)
    problem = name_problem(target)
    if problem:
        raise ConfigError(f"{what} {path}: {problem}; choose a shorter name")
    if _is_dir(target):
        raise ConfigError(f"{what} {path} is a folder: name a file in it, e.g. {target / example}")
    problem = target_problem(target)
    if problem:
        raise ConfigError(f"{what} {path}: {problem}; choose another name")
    folder = target.parent if str(target.parent) else Path(".")
    if not _is_dir(folder):
        raise ConfigError(f"{what} {path}: the folder {folder} does not exist")
    if target.exists() and not os.access(target, os.W_OK):
        raise ConfigError(f"{what} {path}: the file is not writable")
    try:  # the only sure test (read-only mounts, /proc, permissions that root ignores): make a file there
        fd, trial = tempfile.mkstemp(prefix=".crossover-check-", dir=folder)
        os.close(fd)
        os.unlink(trial)
    except OSError as exc:
        raise ConfigError(f"{what} {path}: the folder {folder} is not writable ({exc.strerror or exc})") from None
    return target


def expand_home(path: str, what: str) -> Path:
    """`path` with a leading ~ or ~USER made the home folder; ConfigError where there is no such user (pathlib's
    RuntimeError was a traceback for `--csv ~nouser/x.csv`)."""
    try:
        return Path(path).expanduser()
    except RuntimeError:
        raise ConfigError(f"{what} {path}: there is no such user's home folder") from None


def _is_dir(path: Path) -> bool:
    try:
        return path.is_dir()
    except OSError:  # a name too long, a loop: not a folder, and target_problem says what it is
        return False


def check_output_pair(path: str, what: str = "--csv") -> tuple[Path, Path]:
    """The CSV at `path` and its sidecar (the .json beside it), both checked before anything is measured:
    ConfigError with a sentence naming the one that cannot be written."""
    target = check_output_path(path, what)
    sidecar = sidecar_path(target)
    if target.resolve() == sidecar.resolve():
        raise ConfigError(f"{path}: its JSON sidecar would be the file itself; name it .csv")
    problem = target_problem(sidecar)
    if problem:
        raise ConfigError(f"{what} {path}: its sidecar {sidecar} cannot be written: {problem}; "
                          "choose another name for the CSV, or move that out of the way")
    return target, sidecar


def _lock_path(path: Path) -> Path:
    return path.parent / f".crossover-{hashlib.sha1(path.name.encode(errors='surrogateescape')).hexdigest()[:12]}.lock"


class OutputClaim:
    """This process is the one writing `paths` (a CSV and its sidecar, a sweep's three files): a second Crossover
    writing any of them says so instead of overwriting.

    An advisory lock on a small hidden file beside each path; the kernel drops it if the process
    dies, so a crash never leaves a path claimed. A lock file is opened only if it is a plain file of its
    own: never through a symbolic link, never one with other names (hard links), so a planted link
    cannot make Crossover overwrite another file with its pid.
    """

    def __init__(self, *paths: Path) -> None:
        self.lock_paths = [_lock_path(Path(p)) for p in paths]
        self.lock_path = self.lock_paths[0]
        self._held: list[tuple[Path, int]] = []
        self.notes: list[str] = []  # a stale lock taken over (left by a process killed with kill -9)
        if fcntl is None:
            return
        stale: dict[str, list[str]] = {}  # pid → the paths whose lock it left
        try:
            for path, lock in zip(paths, self.lock_paths):
                if all(lock != held for held, _ in self._held):
                    fd, pid = self._take(Path(path), lock)
                    self._held.append((lock, fd))
                    if pid:
                        stale.setdefault(pid, []).append(str(path))
        except BaseException:
            self.release()
            raise
        for pid, held in stale.items():
            self.notes.append(f"took over the {plural(len(held), 'lock')} of {' and '.join(held)} left by pid "
                              f"{pid}, which no longer writes {'them' if len(held) > 1 else 'it'} (a run killed "
                              "with kill -9, or a power cut, leaves one)")

    @staticmethod
    def _take(path: Path, lock: Path) -> tuple[int, str]:
        """The lock's descriptor, held, and the pid a stale lock file named ("" when it was new or empty)."""
        try:
            fd = os.open(lock, os.O_RDWR | os.O_CREAT | NO_FOLLOW, 0o600)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise ExportError(f"cannot claim {path}: its lock file {lock} is a symbolic link, which Crossover "
                                  "does not follow; remove the link and try again") from None
            raise ExportError(f"cannot write {path}: {exc.strerror or exc}") from None
        held = False  # once the lock is ours, the lock file is too, and a failure removes it as release() would
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode) or st.st_nlink != 1:
                what = "has other names (hard links)" if stat.S_ISREG(st.st_mode) else f"is {kind_of(st.st_mode)}"
                raise ExportError(f"cannot claim {path}: its lock file {lock} {what}, and Crossover writes only a "
                                  "lock file of its own; remove it and try again")
            try:
                assert fcntl is not None  # the caller takes no lock where there is none
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                owner = os.read(fd, 32).decode(errors="replace").strip() or "unknown"
                raise ExportError(f"{path} is being written by another Crossover process (pid {owner}): "
                                  "choose another file, or wait until it has finished") from None
            held = True
            # Held now, so whatever pid the file names is not writing: a stale lock, taken over with a note.
            stale = os.read(fd, 32).decode(errors="replace").strip()
            os.ftruncate(fd, 0)
            os.lseek(fd, 0, os.SEEK_SET)
            os.write(fd, str(os.getpid()).encode())
        except BaseException as exc:
            if held:  # a full disk takes the lock file's few bytes too: no empty lock file is left per try
                try:
                    os.unlink(lock)
                except OSError:
                    pass
            os.close(fd)
            if isinstance(exc, OSError) and not isinstance(exc, ExportError):
                raise ExportError(f"cannot write {path}: {exc.strerror or exc} (even its lock file {lock.name}, "
                                  "a few bytes beside it, could not be written)") from None
            raise
        return fd, "".join(c for c in stale if c.isdigit())[:12]

    def release(self) -> None:
        for lock, fd in reversed(self._held):
            try:
                os.unlink(lock)
            except OSError:
                pass
            os.close(fd)
        self._held = []


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
        # The pair is claimed, not the CSV alone: `res.csv` and `res` share the sidecar res.json.
        self._claim = OutputClaim(self.csv_path, self.json_path) if claim else None
        self.claim_notes = list(self._claim.notes) if self._claim else []
        self._appending = True  # False once the pair could not be written or an append failed (see _append)
        self._own_writer = writer is None
        self.writer = writer or BackgroundWriter()
        self._pending: list[BatchTiming] = []
        self._last_flush = time.monotonic()

    def begin(self, results: Sequence[RunResult]) -> None:
        """Replace whatever was at the paths with this run's pair (its records so far)."""
        csv_text_now, json_text = batches_text(results), sidecar_text(results, self._host, self._extra)
        self._pending = []
        self.writer.submit(lambda: self._replace_pair(csv_text_now, json_text))

    def _replace_pair(self, csv_text_now: str, json_text: str) -> None:
        try:
            atomic_write_files([(self.csv_path, csv_text_now), (self.json_path, json_text)])
        except OSError:
            self._appending = False  # appends would go to whatever is at the path: finish() writes the pair whole
            raise
        self._appending = True

    def _append(self, header: str, body: list[str]) -> None:
        """Records at the end of the CSV, while every earlier write went through: once one failed (a full
        disk), none follows, so the file never has a hole, and finish() writes it whole or not at all."""
        if not self._appending:
            return
        try:
            append_lines(self.csv_path, header, body)
        except OSError:
            self._appending = False
            raise

    def add_records(self, records: Sequence[BatchTiming]) -> None:
        self._pending.extend(records)

    def take(self, events: Iterable[LaneEvent], results: Sequence[RunResult]) -> None:
        """Fold new lane events in: records appended at most FLUSH_INTERVAL_S late, the sidecar
        replaced when a lane starts, ends a segment or ends. `results` already hold the events (a RunTracker's)."""
        lifecycle = False
        for event in events:
            if isinstance(event, BatchTiming):
                self._pending.append(event)
            elif isinstance(event, (RunStarted, SegmentStarted, SegmentEnded, *LANE_ENDS)):
                # A lane the app ended (a watchdog, a kill) too; and each segment's start and end, so that a run
                # killed mid-segment (kill -9) leaves a sidecar naming the model its records trained (analyze
                # reads them as a point cut short), and one killed mid-ramp every width it completed.
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
        lines = split_lines(csv_text(HEADER, (r.row() for r in self._pending)))  # at "\n" only, not at U+2028
        header, body = lines[0], lines[1:]
        self._pending = []
        self.writer.submit(lambda: self._append(header, body))

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

    def whole(self, results: Sequence[RunResult]) -> bool:
        """Whether the pair grown at the paths holds every record of `results` (the CSV's rows counted) beside a
        sidecar: what a final write that failed (a full disk) may still have left whole."""
        want = sum(len(lane.records) for result in results for lane in result.lanes.values())
        try:
            with open(self.csv_path, "rb") as fh:
                rows = sum(chunk.count(b"\n") for chunk in iter(lambda: fh.read(1 << 20), b"")) - 1
            return rows == want and self.json_path.is_file()
        except OSError:
            return False

    def close(self) -> None:
        if self._own_writer:
            self.writer.close(10.0)
        if self._claim is not None:
            self._claim.release()
            self._claim = None
