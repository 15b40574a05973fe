"""The lanes another machine offers, asked over SSH: `devices --host ssh://lab-gpu` and the window's "Add host"."""
from __future__ import annotations

import dataclasses
import threading
import time
from dataclasses import dataclass
from typing import Any

from ...config import SSH_PREFIX, ConfigError, check_host
from ... import APP_VERSION
from ..devices import LaneOption
from ...messages import LaneStartFailed
from .channel import RemoteChannel, RemoteSettings
from .wire import PROTOCOL, DevicesListed, ListDevices

LIST_TIMEOUT_S = 300.0  # the remote starts a process per backend to ask for its GPUs


def host_of(text: str) -> str:
    """`ssh://[user@]host[:port]` (a trailing / too) or the bare `[user@]host[:port]` → the bare form."""
    text = text.strip()
    if text.lower().startswith(SSH_PREFIX):
        text = text[len(SSH_PREFIX):]
    return check_host(text.rstrip("/"))


@dataclass(frozen=True)
class RemoteMachine:
    """What a remote machine said about itself: its hardware and versions, and its lanes named from here."""

    host: str  # [user@]host[:port]
    python: str  # the interpreter that answered there
    machine: dict[str, Any]  # its host_info()
    options: tuple[LaneOption, ...]  # named ssh://host/LANE

    @property
    def url(self) -> str:
        return f"{SSH_PREFIX}{self.host}"


def list_remote_lanes(host: str, settings: RemoteSettings, timeout: float = LIST_TIMEOUT_S,
                      cancel: threading.Event | None = None) -> RemoteMachine:
    """Ask `host` which lanes it offers; ConfigError with the reason when it cannot say (unreachable, no
    Crossover there, another version…), or when `cancel` is set first."""
    host = host_of(host)
    channel = RemoteChannel(host, ListDevices(APP_VERSION, PROTOCOL), settings)
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            if cancel is not None and cancel.is_set():
                raise ConfigError(f"stopped asking {SSH_PREFIX}{host} for its lanes")
            try:
                message = channel.receive(0.1)
            except EOFError:
                break
            if isinstance(message, DevicesListed):
                hello = channel.hello
                options = tuple(dataclasses.replace(o, spec=dataclasses.replace(o.spec, host=host))
                                for o in message.options if isinstance(o, LaneOption))
                return RemoteMachine(host, hello.python if hello else "", hello.machine if hello else {}, options)
            if isinstance(message, LaneStartFailed):
                raise ConfigError(message.reason)
        if channel.alive:
            raise ConfigError(f"{SSH_PREFIX}{host} did not list its lanes within {timeout:.0f} s")
        raise ConfigError(channel.exit_reason())
    finally:
        channel.close()
