"""Writing files so that nothing half-written is ever seen: atomic replacement, several files as one, appends.

A reader of any file Crossover writes sees the old content or the new, never a mixture: each
file is written to a temporary name beside it, flushed to disk, and renamed over the target.
Files that belong together (a CSV and its JSON sidecar) are all written before any is renamed,
so a full disk leaves the old pair, not a new CSV beside an old sidecar.
"""
from __future__ import annotations

import csv
import io
import os
import secrets
import stat
from pathlib import Path
from typing import Iterable, Iterator, Sequence, Union


class ExportError(OSError):
    """The file could not be written; nothing partial was left and nothing in memory was lost."""


# A CSV cell as csv.writer takes it: a str written as is, a number as str() writes it, None as an empty cell.
Cell = Union[str, int, float, None]


def csv_text(header: Sequence[str], rows: Iterable[Sequence[Cell]]) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return buf.getvalue()


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _mode_for(target: Path) -> int:
    """Keep the permissions of the file being replaced; a new file gets the usual ones (umask)."""
    try:
        return stat.S_IMODE(os.stat(target).st_mode)
    except OSError:
        return 0o666 & ~_umask()


def _why(exc: OSError) -> str:
    return exc.strerror or str(exc)


def _temp_beside(target: Path) -> tuple[int, Path]:
    """A new file in the target's folder. Its name is short whatever the target's (a 244-byte name
    plus a prefix and suffix would pass the 255-byte limit) and hidden, so no one mistakes it."""
    folder = target.parent
    for _ in range(100):
        tmp = folder / f".crossover-{secrets.token_hex(6)}.tmp"
        try:
            return os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), tmp
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temporary name in {folder}")


def _sync_folder(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return  # not every system lets a folder be opened: the renames are done regardless
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def atomic_write_files(files: Sequence[tuple[str | os.PathLike, str]]) -> list[Path]:
    """Write every (path, text) or none: all temporary files are complete before the first rename."""
    written: list[tuple[Path, Path]] = []
    try:
        for path, text in files:
            target = Path(path)
            if target.is_dir():
                raise ExportError(f"cannot write {target}: it is a folder")
            try:
                fd, tmp = _temp_beside(target)
            except OSError as exc:
                raise ExportError(f"cannot write {target}: {_why(exc)} (is the folder there and writable?)") from None
            written.append((tmp, target))
            try:
                os.fchmod(fd, _mode_for(target))
                with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
                    fh.write(text)
                    fh.flush()
                    os.fsync(fh.fileno())
            except OSError as exc:
                raise ExportError(f"cannot write {target}: {_why(exc)}") from None
    except BaseException:
        for tmp, _ in written:
            try:
                os.unlink(tmp)
            except OSError:
                pass
        raise
    for i, (tmp, target) in enumerate(written):
        try:
            os.replace(tmp, target)
        except OSError as exc:
            for leftover, _ in written[i:]:
                try:
                    os.unlink(leftover)
                except OSError:
                    pass
            raise ExportError(f"cannot write {target}: {_why(exc)}") from None
    for folder in {target.parent for _, target in written}:
        _sync_folder(folder)
    return [target for _, target in written]


def atomic_write_text(path: str | os.PathLike, text: str) -> Path:
    """One file, written atomically (see atomic_write_files)."""
    return atomic_write_files([(path, text)])[0]


def append_lines(path: str | os.PathLike, header: str, lines: Sequence[str]) -> None:
    """Add whole lines to a text file (creating it with `header`), in one write, then flush to disk.

    Each call writes complete lines or, if the machine dies mid-write, a last line without its
    newline, which the readers skip: the file stays readable with every earlier line intact.
    """
    target = Path(path)
    data = "".join(line if line.endswith("\n") else line + "\n" for line in lines)
    try:
        fd = os.open(target, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
    except OSError as exc:
        raise ExportError(f"cannot write {target}: {_why(exc)}") from None
    size = 0
    try:
        size = os.fstat(fd).st_size
        if size == 0:
            data = (header if header.endswith("\n") else header + "\n") + data
        view = memoryview(data.encode("utf-8"))
        while view:
            view = view[os.write(fd, view):]
        os.fsync(fd)
    except OSError as exc:
        try:
            os.ftruncate(fd, size)  # a full disk must not leave half a line for the next append to join
        except OSError:
            pass
        raise ExportError(f"cannot write {target}: {_why(exc)}") from None
    finally:
        os.close(fd)


def complete_lines(fh: Iterable[str]) -> Iterator[str]:
    """The lines of an appended file, without a last line that a crash cut short (no newline)."""
    for line in fh:
        if line.endswith("\n"):
            yield line
