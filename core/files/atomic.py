"""Writing files so that nothing half-written is ever seen: atomic replacement, several files as one, appends.

A reader of any file Crossover writes sees the old content or the new, never a mixture: each
file is written to a temporary name beside it, flushed to disk, and renamed over the target.
Files that belong together (a CSV and its JSON sidecar) are all written before any is renamed,
so a full disk leaves the old pair, not a new CSV beside an old sidecar.
"""
from __future__ import annotations

import csv
import errno
import io
import os
import re
import secrets
import stat
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping, Sequence, Union

from ..config import ConfigError


class ExportError(OSError):
    """The file could not be written; nothing partial was left and nothing in memory was lost."""


NAME_MAX = 255  # bytes in one file name, on every file system Crossover writes to
# What a path that is neither a regular file nor a folder is, in a user's words (stat.S_IFMT → words).
_KINDS = {stat.S_IFCHR: "a character device", stat.S_IFBLK: "a block device", stat.S_IFIFO: "a named pipe (fifo)",
          stat.S_IFSOCK: "a socket", stat.S_IFDIR: "a folder", stat.S_IFREG: "a file",
          stat.S_IFLNK: "a symbolic link"}
# The flags that open a file only if it is one: never through a symbolic link, never blocking on a fifo.
NO_FOLLOW = getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)


def kind_of(mode: int) -> str:
    """"a folder", "a character device"…: what a path whose st_mode is `mode` is (not a regular file)."""
    return _KINDS.get(stat.S_IFMT(mode), "not a regular file")


def name_problem(target: Path) -> str:
    """Why `target`'s name (its last part) cannot be a file's, as the end of a sentence, or ""."""
    size = len(os.fsencode(target.name))
    if size > NAME_MAX:
        return f"its name is {size} bytes long, and a file name may have at most {NAME_MAX}"
    return ""


def target_problem(target: Path) -> str:
    """Why a file written at `target` would not replace a regular file there, as the end of a sentence after
    "cannot write X: ", or "" when it can (nothing there, a regular file, or a symbolic link to one)."""
    problem = name_problem(target)
    if problem:
        return problem
    try:
        mode = os.stat(target).st_mode
    except FileNotFoundError:
        return ""  # nothing there, or a link to nothing: the new file takes the name
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return "it is a symbolic link that leads round in a loop"
        if exc.errno == errno.ENAMETOOLONG:
            return f"the path is too long ({exc.strerror})"
        return exc.strerror or str(exc)
    if stat.S_ISREG(mode):
        return ""
    if stat.S_ISDIR(mode):
        return "it is a folder"
    return f"it is {kind_of(mode)}, not a regular file, and Crossover replaces only regular files"


# A CSV cell as csv.writer takes it: a str written as is, a number as str() writes it, None as an empty cell.
Cell = Union[str, int, float, None]
# A spreadsheet runs a cell that starts with one of these as a formula (OWASP, "CSV Injection"): `=HYPERLINK(…)`,
# `@SUM(…)`, `-2+3+cmd|' /C calc'!A0`. A number that starts with a sign is a number, and stays one.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
_NUMBER = re.compile(r"[+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|inf|infinity|nan)", re.IGNORECASE)


def _formula_like(text: str) -> bool:
    """A text cell a spreadsheet would run, behind any number of quotes already put before it (so that inert_cell
    and plain_cell undo each other on every text: a name that itself begins "'=" reads back as it was)."""
    bare = text.lstrip("'")
    return bare.startswith(FORMULA_STARTS) and not _NUMBER.fullmatch(bare)


def inert_cell(cell: Cell) -> Cell:
    """`cell` as a CSV Crossover writes holds it: a text a spreadsheet would run as a formula behind a leading
    quote, which shows it as text (OWASP's advice); numbers, and any other text, as they are."""
    return "'" + cell if isinstance(cell, str) and _formula_like(cell) else cell


def plain_cell(text: str) -> str:
    """A cell read back as it was before inert_cell: the one quote it added taken off; any other text as it is."""
    return text[1:] if text.startswith("'") and _formula_like(text[1:]) else text


def plain_row(row: Mapping[Any, Any]) -> dict[str, str | None]:
    """A row as csv.DictReader gives it, each text cell as plain_cell reads it (cells past the header, which
    DictReader keeps in a list under None, are left out: no column reads them)."""
    return {key: plain_cell(value) if isinstance(value, str) and value[:1] == "'" else value
            for key, value in row.items() if isinstance(key, str)}


def csv_text(header: Sequence[str], rows: Iterable[Sequence[Cell]]) -> str:
    """A CSV of `header` and `rows`, every text cell inert in a spreadsheet (inert_cell)."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow([inert_cell(c) for c in header])
    writer.writerows([inert_cell(c) for c in row] for row in rows)
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


def _keep_owner(fd: int, target: Path) -> None:
    """The new file belongs to whoever owned the one it replaces (root replacing a user's file keeps it theirs);
    where this process may not give a file away, it stays this process's."""
    try:
        st = os.stat(target)
    except OSError:
        return
    if (st.st_uid, st.st_gid) == (os.geteuid(), os.getegid()) or not hasattr(os, "fchown"):
        return
    try:
        os.fchown(fd, st.st_uid, st.st_gid)
    except OSError:
        try:
            os.fchown(fd, -1, st.st_gid)  # a user in the file's group may keep at least the group
        except OSError:
            pass


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
            problem = target_problem(target)
            if problem:
                raise ExportError(f"cannot write {target}: {problem}; choose another name")
            try:
                fd, tmp = _temp_beside(target)
            except OSError as exc:
                raise ExportError(f"cannot write {target}: {_why(exc)} (is the folder there and writable?)") from None
            written.append((tmp, target))
            try:
                _keep_owner(fd, target)
                os.fchmod(fd, _mode_for(target))  # after the owner: a chown may clear mode bits
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
    # A piece that str.splitlines() cut at another line break (U+2028, \x85, \r…) is part of a line: kept as it is.
    data = "".join(line if line.endswith(_BREAKS) else line + "\n" for line in lines)
    if data and not data.endswith("\n"):
        data += "\n"
    try:  # never through a symbolic link (it would write into the file it points to), never into a fifo
        fd = os.open(target, os.O_WRONLY | os.O_APPEND | os.O_CREAT | NO_FOLLOW, 0o666)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise ExportError(f"cannot add to {target}: it is a symbolic link, and Crossover does not append "
                              "through links; remove it or choose another name") from None
        if exc.errno == errno.ENXIO:
            exc = OSError(exc.errno, "it is a named pipe (fifo), not a regular file")
        raise ExportError(f"cannot write {target}: {_why(exc)}") from None
    try:
        st = os.fstat(fd)
    except OSError as exc:
        os.close(fd)
        raise ExportError(f"cannot write {target}: {_why(exc)}") from None
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise ExportError(f"cannot add to {target}: it is {kind_of(st.st_mode)}, not a regular file; "
                          "remove it or choose another name")
    size = st.st_size
    try:
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


# The characters str.splitlines() breaks at; a file's lines end at "\n" alone (see split_lines).
_BREAKS = ("\n", "\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029")
MAX_LINE_CHARS = 1 << 22  # a line of a CSV Crossover reads: its rows are short, a 4 M-character one is damage


class LineTooLong(csv.Error, ConfigError):
    """A line of a CSV is longer than MAX_LINE_CHARS: the file is damaged (or not a CSV), and is not read on.
    A csv.Error to a reader counting bad lines, a ConfigError (a sentence, exit 2) to one that is not."""


def split_lines(text: str) -> list[str]:
    """`text`'s lines, each with its "\n", split at "\n" only: not at U+2028, \x85 or a lone \r inside a cell,
    as str.splitlines() would (a remote backend named "tensorflow\u2028" must not break a line in two)."""
    parts = text.split("\n")
    lines = [part + "\n" for part in parts[:-1]]
    return lines + [parts[-1]] if parts[-1] else lines


def complete_lines(fh: Iterable[str], max_chars: int = MAX_LINE_CHARS, name: str = "") -> Iterator[str]:
    """The lines of an appended file, without a last line that a crash cut short (no newline).

    Lines end at "\n" only (a file opened with newline="" also stops at a lone \r, which may sit inside a
    quoted cell: such pieces are joined). A line longer than `max_chars` raises LineTooLong, after reading
    no more than that much of it: a file of one endless line never fills the memory."""
    readline = getattr(fh, "readline", None)
    pieces = iter(fh)
    pending = ""
    while True:
        piece = readline(max_chars + 1 - len(pending)) if readline is not None else next(pieces, "")
        if not piece:
            return  # the end; a last line without its newline was cut short by a crash: skipped
        pending += piece
        if pending.endswith("\n"):
            yield pending
            pending = ""
        elif len(pending) > max_chars:
            where = name or str(getattr(fh, "name", "") or "the file")
            raise LineTooLong(f"{where} has a line longer than {max_chars:,} characters: it is damaged, or not a "
                              "CSV, and is read no further")
