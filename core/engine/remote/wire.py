"""What the app and a remote lane say over SSH: the handshake messages, one JSON line per message, the ssh command.

Both ends speak the typed messages of core/messages.py through its data-only codec (never
pickle: a compromised remote must not run code in the app). The remote sends `RemoteHello`
first; the app answers with `OpenLane` (or `ListDevices`); either side refuses a version it does
not match, with a sentence saying what to install.
"""
from __future__ import annotations

import dataclasses
import json
import os
import re
import shlex
import types
import typing
from dataclasses import dataclass, field
from typing import Any, TypeVar

from ...config import LaneSpec, check_host
from ... import APP_VERSION
from ..devices import LaneOption
from ...messages import Wirable, field_types, from_wire, register, to_wire
from ...analysis import anatomy as _anatomy  # noqa: F401  # registers the anatomy's point and its reply
from .guard import checked

_Checked = TypeVar("_Checked", bound=Wirable)

PROTOCOL = 7  # bumped whenever a message changes shape (2: AnatomyJob, AnatomyMeasured; 3: ModelChunk, a factory;
# 4: PrepareJob, Prepared; 5: BatchTiming.widths a list of widths, no longer their "-"-joined text; 6: RunSummary's
# arrivals_ended, once "load_ended"; 7: RunStarted.settings a RunSettings, no longer a dict)
WORKER_MODULE = "crossover_lab.core.engine.remote.worker"
DEFAULT_PYTHON = "python3"
SSH_COMMAND_ENV = "CROSSOVER_SSH_COMMAND"
MAX_LINE_BYTES = 16 * 2**20  # a message is far smaller; a longer line is a broken or hostile remote
# ssh gives up on a silent host after this; the handshake must come within 10 s of the start.
CONNECT_TIMEOUT_S = 5
HANDSHAKE_TIMEOUT_S = 9.0


@register
@dataclass(frozen=True)
class RemoteHello:
    """The remote worker's first line: who it is, before it imports any framework."""

    app_version: str
    protocol: int
    python: str  # sys.executable there
    machine: dict[str, Any] = field(default_factory=dict)  # its host_info(): CPU, GPUs, versions


@register
@dataclass(frozen=True)
class OpenLane:
    """The app's first line: run this lane (named as the remote names it)."""

    app_version: str
    protocol: int
    spec: LaneSpec


@register
@dataclass(frozen=True)
class ListDevices:
    """The app's first line instead of OpenLane: say which lanes this machine offers, then leave."""

    app_version: str
    protocol: int


@register
@dataclass(frozen=True)
class DevicesListed:
    options: tuple[LaneOption, ...]


@register
@dataclass(frozen=True)
class Refused:
    """The remote will not serve this app (another version); `reason` says what to install."""

    reason: str


@register
@dataclass(frozen=True)
class SetCancel:
    """The remote lane's cancel flag (a local lane shares an Event instead)."""

    on: bool


register(LaneOption)


def encode(message: Wirable) -> bytes:
    return json.dumps(to_wire(message), separators=(",", ":")).encode("utf-8") + b"\n"


def decode(line: bytes) -> Wirable:
    """A message from one line; ValueError on anything but a registered message's plain JSON, typed as declared."""
    try:
        data = json.loads(line)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"not JSON: {exc}") from None
    except RecursionError:
        raise ValueError("JSON nested too deep") from None
    try:
        message = from_wire(data)
    except RecursionError:
        raise ValueError("a message nested too deep") from None
    # Every value, not just the containers: typed items, finite times, bounded texts (made printable), lists, dicts.
    return checked(check_types(message))


def check_types(obj: _Checked) -> _Checked:
    """`obj` if every field of every message in it holds what its type says; else ValueError.

    The codec builds only registered classes, but it does not look inside them: a remote that sent
    `rss_mb: "x"` would break the code that reads it. Numbers may be whole where a float is meant.
    """
    if isinstance(obj, (list, tuple)):
        for item in obj:
            check_types(item)
    elif isinstance(obj, dict):
        for item in obj.values():
            check_types(item)
    elif dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        hints = field_types(type(obj))
        for f in dataclasses.fields(obj):
            value = getattr(obj, f.name)
            if not _fits(value, hints[f.name]):
                raise ValueError(f"{type(obj).__name__}.{f.name} holds {type(value).__name__}")
            check_types(value)
    return obj


def _fits(value: Wirable, hint: object) -> bool:
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        return any(_fits(value, h) for h in typing.get_args(hint))
    if hint is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if hint in (str, bool) or (isinstance(hint, type) and dataclasses.is_dataclass(hint)):
        return isinstance(value, hint)
    if hint is type(None):
        return value is None
    if origin in (tuple, dict, list):
        return isinstance(value, origin)
    return True  # Any, or a type alias of messages: their own fields are checked in turn


def version_problem(remote: tuple[str, int], app: tuple[str, int], where: str, python: str) -> str:
    """A sentence when the two ends differ ("" when they match): what to install, and where.

    `remote` and `app` are (Crossover version, protocol) of each end; `where` names the remote machine.
    """
    if remote == app:
        return ""
    return (f"{where} has Crossover {remote[0]} (protocol {remote[1]}) for {python}, and this app is "
            f"Crossover {app[0]} (protocol {app[1]}): install Crossover {app[0]} on {where} "
            f"(pip install -e . in a checkout of it, with that Python), or name a Python that has it "
            f"with --remote-python")


# ---------------------------------------------------------------- the ssh command

@dataclass(frozen=True)
class SshTarget:
    """`[user@]host[:port]` split the way ssh takes it."""

    text: str
    destination: str  # [user@]host
    port: int | None

    @classmethod
    def parse(cls, text: str) -> SshTarget:
        check_host(text)
        m = re.match(r"^(.*?)(?::(\d+))?$", text)
        destination, port = (m[1], m[2]) if m and not text.endswith("]") else (text, None)
        return cls(text, destination.replace("[", "").replace("]", ""), int(port) if port else None)

    @property
    def url(self) -> str:
        return f"ssh://{self.text}"

    def command(self, tool: str = "ssh") -> str:
        """How the user would reach it from a terminal: `ssh -p 2222 me@host`."""
        return f"{tool} -p {self.port} {self.destination}" if self.port is not None else f"{tool} {self.destination}"


def remote_command(python: str) -> str:
    """The command line the remote shell runs; a leading ~/ still means the remote home."""
    if python.startswith("~/"):
        exe = '"$HOME"/' + shlex.quote(python[2:])
    else:
        exe = shlex.quote(python)
    return f"{exe} -m {WORKER_MODULE}"


def ssh_argv(target: SshTarget, python: str, ssh_command: str | None = None) -> list[str]:
    """The system ssh (or $CROSSOVER_SSH_COMMAND), never prompting; the user's ~/.ssh/config applies.

    `--` ends ssh's options, so no host can be read as one.
    """
    base = shlex.split(ssh_command or os.environ.get(SSH_COMMAND_ENV) or "ssh")
    options = ["-T", "-o", "BatchMode=yes", "-o", f"ConnectTimeout={CONNECT_TIMEOUT_S}",
               "-o", "ServerAliveInterval=5", "-o", "ServerAliveCountMax=2"]
    if target.port is not None:
        options += ["-p", str(target.port)]
    return [*base, *options, "--", target.destination, remote_command(python)]


# ---------------------------------------------------------------- what went wrong, as a sentence

def ssh_failure(target: SshTarget, python: str, code: int | None, stderr: str, connected: bool) -> str:
    """Why the connection ended, from ssh's exit code and what it and the remote shell said."""
    text = stderr.lower()
    last = next((line.strip() for line in reversed(stderr.splitlines()) if line.strip()), "")
    last = last.removeprefix("ssh: ")
    said = f" ({last[:300]})" if last else ""
    where = target.url
    if connected:
        return f"the connection to {where} was lost{said}"
    if "host key verification failed" in text or "host key is known" in text:
        return (f"the host key of {where} is not known here, and Crossover never asks: connect once with "
                f"`{target.command()}` in a terminal to check and accept it{said}")
    if "remote host identification has changed" in text:
        return f"the host key of {where} has changed since it was accepted: check it with your admin{said}"
    if "permission denied" in text or "too many authentication failures" in text:
        return (f"{where} refused the login: Crossover uses your SSH keys and agent without prompting, so "
                f"set up key login ({target.command('ssh-copy-id')}) or name the key in ~/.ssh/config{said}")
    if any(s in text for s in ("could not resolve hostname", "connection refused", "timed out",
                               "no route to host", "network is unreachable", "connection closed by",
                               "connection reset")):
        return f"{where} cannot be reached{said}"
    if "no module named" in text and "crossover_lab" in text:
        return (f"Crossover is not installed for {python} on {where}: install Crossover {APP_VERSION} there "
                f"(pip install -e . in a checkout of it), or name the Python that has it with --remote-python")
    if code == 127 or "command not found" in text or "no such file or directory" in text:
        return (f"there is no Python at {python!r} on {where}: name the remote interpreter with "
                f"--remote-python PATH (in the window: the host's Python){said}")
    if code == 255:
        return f"ssh could not connect to {where}{said}"
    return f"the lane on {where} ended before it answered (exit code {code}){said}"
