"""A lane on another machine: the system ssh client as a child process, JSON lines each way, a reader thread.

It offers what core/engine/lanes.py asks of a channel (see core/engine/local_channel.py): `send`, `receive`,
`set_cancel` (a message here, not a shared flag), `join`, `kill`, `close`, `alive`, `exit_reason`.
Nothing the remote sends can run code here: lines are decoded by the data-only codec, and
every event is renamed to this side's lane name, so a remote cannot speak for another lane.
The remote worker exits when its SSH channel closes, so killing ssh leaves nothing behind.
"""
from __future__ import annotations

import collections
import dataclasses
import queue
import signal
import subprocess
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Mapping

from ...config import ConfigError, LaneSpec
from ... import APP_VERSION
from ...messages import Bundle, Job, LaneStartFailed, Steer, Wirable
from ...paths import lane_log_path
from ...records import LaneEvent, RunStarted
from .guard import FloodGate, printable
from .model_files import chunks, model_file
from .wire import (DEFAULT_PYTHON, HANDSHAKE_TIMEOUT_S, MAX_LINE_BYTES, PROTOCOL, ListDevices, OpenLane, Refused,
                   RemoteHello, SetCancel, SshTarget, decode, encode, ssh_argv, ssh_failure, version_problem)


@dataclass(frozen=True)
class RemoteSettings:
    """How remote lanes are reached: the remote Python per host (else `python`), and the ssh command."""

    python: str = DEFAULT_PYTHON
    pythons: Mapping[str, str] = field(default_factory=dict)  # host ([user@]host[:port]) → interpreter
    ssh_command: str | None = None  # None: $CROSSOVER_SSH_COMMAND, else ssh

    def python_for(self, host: str) -> str:
        return self.pythons.get(host) or self.python


class RemoteChannel:
    """One ssh process carrying one conversation with a remote worker; starting it returns at once."""

    def __init__(self, host: str, first: OpenLane | ListDevices, settings: RemoteSettings,
                 log_path: Path | None = None, lane: str = "", handshake_timeout_s: float = HANDSHAKE_TIMEOUT_S) -> None:
        self.target = SshTarget.parse(host)
        self.python = settings.python_for(host)
        self.lane = lane  # this side's name for the lane: every event is renamed to it
        self.hello: RemoteHello | None = None
        self._messages: queue.Queue[Wirable] = queue.Queue()
        self._outbox: queue.Queue[bytes | None] = queue.Queue()
        self._done = threading.Event()
        self._failure = ""
        self._gate = FloodGate()
        self._sent_models: set[str] = set()  # the SHA-256 of each model file sent on this channel
        self._stderr: collections.deque[str] = collections.deque(maxlen=40)
        self._log: IO[str] | None = None
        if log_path is not None:
            try:
                log_path.parent.mkdir(parents=True, exist_ok=True)
                self._log = open(log_path, "a", encoding="utf-8")
            except OSError:
                self._log = None  # the lane runs without its log rather than not at all
        self._outbox.put(encode(first))
        argv = ssh_argv(self.target, self.python, settings.ssh_command)
        try:
            # A session of its own: Ctrl-C in a terminal reaches the app, which decides how runs stop.
            self._proc: subprocess.Popen[bytes] | None = subprocess.Popen(
                argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                start_new_session=True)
        except OSError as exc:
            self._proc = None
            self._finish(f"cannot start {argv[0]!r} to reach {self.target.url}: {exc.strerror or exc} "
                         "(install the OpenSSH client, or set $CROSSOVER_SSH_COMMAND)")
            return
        self._timer = threading.Timer(handshake_timeout_s, self._on_handshake_timeout, (handshake_timeout_s,))
        self._timer.daemon = True
        # stderr first: the reader waits for its last words when the connection ends.
        self._stderr_thread = threading.Thread(target=self._read_stderr, name=f"crossover-ssh-err-{host}", daemon=True)
        self._stderr_thread.start()
        threading.Thread(target=self._write, name=f"crossover-ssh-write-{host}", daemon=True).start()
        self._timer.start()
        threading.Thread(target=self._read, name=f"crossover-ssh-read-{host}", daemon=True).start()

    # ------------------------------------------------------------------ what core/engine/lanes.py uses

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    @property
    def alive(self) -> bool:
        return not self._done.is_set()

    @property
    def connected(self) -> bool:
        return self.hello is not None

    def exit_reason(self) -> str:
        return self._failure or f"the lane on {self.target.url} ended"

    def send(self, job: Job | Steer | SetCancel) -> bool:
        """Queue a message for the remote (written by a thread: a slow network never blocks the caller). A user's
        model file the message needs goes first, as bytes, once per channel (core/engine/remote/model_files.py);
        one that cannot be sent ends the lane with the sentence why."""
        if self._done.is_set():
            return False
        found = model_file(job)
        if found is not None and found.sha256 not in self._sent_models:
            try:
                for chunk in chunks(found):
                    self._outbox.put(encode(chunk))
            except ConfigError as exc:
                self._set_failure(f"{self.target.url}: {exc}")
                self.kill()
                return False
            self._sent_models.add(found.sha256)
        self._outbox.put(encode(job))
        return True

    def receive(self, timeout: float) -> Wirable | None:
        """The next message, waiting up to `timeout`; None when none came. Raises EOFError once ended."""
        try:
            return self._messages.get(timeout=timeout) if timeout > 0 else self._messages.get_nowait()
        except queue.Empty:
            if self._done.is_set() and self._messages.empty():
                raise EOFError(self.exit_reason()) from None
            return None

    def set_cancel(self, on: bool) -> None:
        self.send(SetCancel(on))

    def steer(self, message: Steer) -> bool:
        """A message for the run in progress; the remote worker counts it for the lane (core/lane/steering.py)."""
        return self.send(message)

    def join(self, timeout: float) -> bool:
        return self._done.wait(timeout)

    def kill(self) -> None:
        """End ssh: the connection closes, and the remote worker leaves with it."""
        self._set_failure(f"the lane on {self.target.url} was stopped from here")
        self._signal(signal.SIGTERM)
        if not self._done.wait(1.0):
            self._signal(signal.SIGKILL)
            self._done.wait(2.0)

    def close(self) -> None:
        """Drop the connection (the remote must be gone or going) and the threads reading it."""
        self._outbox.put(None)
        if self._proc is not None and self._proc.poll() is None:
            self.kill()
        if self._log is not None and self._done.is_set():
            self._log.close()
            self._log = None

    # ------------------------------------------------------------------ threads

    def _signal(self, sig: int) -> None:
        if self._proc is not None and self._proc.poll() is None:
            try:
                self._proc.send_signal(sig)
            except OSError:
                pass

    def _set_failure(self, reason: str) -> None:
        if not self._failure:
            self._failure = printable(reason)  # it may quote the remote (stderr, Refused.reason): never raw

    def _on_handshake_timeout(self, seconds: float) -> None:
        if self.hello is None and not self._done.is_set():
            self._set_failure(f"{self.target.url} did not answer within {seconds:g} s (no Crossover worker "
                              f"started there): check that `{self.target.command()}` logs in without a prompt")
            self._signal(signal.SIGKILL)

    def _write(self) -> None:
        assert self._proc is not None and self._proc.stdin is not None, "started once ssh runs, with its pipes"
        stdin = self._proc.stdin
        while True:
            line = self._outbox.get()
            if line is None:
                break
            try:
                stdin.write(line)
                stdin.flush()
            except (OSError, ValueError):
                break  # the connection has gone: the reader reports it
        try:
            stdin.close()  # EOF: the remote worker leaves
        except OSError:
            pass

    def _read_stderr(self) -> None:
        assert self._proc is not None and self._proc.stderr is not None, "started once ssh runs, with its pipes"
        for raw in self._proc.stderr:
            text = raw.decode("utf-8", "replace")
            self._stderr.append(text)
            if self._log is not None:
                try:
                    self._log.write(text)
                    self._log.flush()
                except (OSError, ValueError):
                    pass

    def _read(self) -> None:
        try:
            self._read_lines()
        except Exception as exc:  # a message that decodes but does not fit: the conversation is over
            self._set_failure(f"{self.target.url} sent a message this app cannot use ({type(exc).__name__}: {exc})")
        finally:
            self._timer.cancel()
            self._signal(signal.SIGTERM)
            self._reap()

    def _read_lines(self) -> None:
        assert self._proc is not None and self._proc.stdout is not None, "started once ssh runs, with its pipes"
        stdout = self._proc.stdout
        while True:
            line = stdout.readline(MAX_LINE_BYTES)
            if not line:
                return
            if not line.endswith(b"\n"):
                self._set_failure(f"{self.target.url} sent a line longer than {MAX_LINE_BYTES >> 20} MB")
                return
            if self.hello is None and not line.lstrip().startswith(b"{"):
                self._stderr.append(line.decode("utf-8", "replace"))  # a login banner, kept for the reason
                continue
            try:
                message = decode(line)
            except ValueError as exc:
                self._set_failure(f"{self.target.url} sent something that is not a Crossover message ({exc})")
                return
            if not self._take(message):
                return

    def _take(self, message: Wirable) -> bool:
        """Handle one decoded message; False ends the conversation."""
        if isinstance(message, RemoteHello) and self.hello is None:
            problem = version_problem((message.app_version, message.protocol), (APP_VERSION, PROTOCOL),
                                      self.target.url, message.python)
            if problem:
                self._set_failure(problem)
                return False
            self.hello = message
            self._timer.cancel()
            return True
        if isinstance(message, Refused):
            self._set_failure(message.reason)
            return False
        if self.hello is None:
            self._set_failure(f"{self.target.url} spoke before saying which Crossover it runs "
                              f"(this app is {APP_VERSION}, protocol {PROTOCOL})")
            return False
        if isinstance(message, Bundle):
            flood = self._gate.admit(len(message.events), any(isinstance(e, RunStarted) for e in message.events))
            if flood:  # what came before is kept; the app stops listening before it runs out of memory
                self._set_failure(f"{self.target.url} {flood}: cut off")
                return False
        self._messages.put(self._renamed(message))
        return True

    def _renamed(self, message: Wirable) -> Wirable:
        if not self.lane or not isinstance(message, Bundle):
            return message
        return Bundle(tuple(self._renamed_event(e) for e in message.events))

    def _renamed_event(self, event: LaneEvent) -> LaneEvent:
        if not dataclasses.is_dataclass(event) or not hasattr(event, "lane"):
            return event
        changes: dict[str, Any] = {"lane": self.lane}
        summary = getattr(event, "summary", None)
        if summary is not None and hasattr(summary, "lane"):
            changes["summary"] = dataclasses.replace(summary, lane=self.lane)
        if isinstance(event, RunStarted) and self.hello is not None:
            # The sidecar describes a remote lane's machine in its own settings: the file's host is this one.
            changes["settings"] = event.settings.with_extra(machine=self.hello.machine, ssh_host=self.target.text,
                                                            remote_python=self.hello.python)
        return dataclasses.replace(event, **changes)

    def _reap(self) -> None:
        """Wait for ssh to end and say why it did; the channel is done after this, whatever happens."""
        assert self._proc is not None, "reaped by the reader, which starts once ssh runs"
        code: int | None = None
        try:
            try:
                code = self._proc.wait(3.0)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                code = self._proc.wait()
            self._stderr_thread.join(2.0)  # the last words on stderr say why
        finally:
            if code == 0 and self.connected:
                self._finish(f"the lane on {self.target.url} has left")
            else:
                self._finish(ssh_failure(self.target, self.python, code, "".join(self._stderr), self.connected))

    def _finish(self, reason: str) -> None:
        self._set_failure(reason)
        if self.hello is None:
            self._messages.put(LaneStartFailed(self._failure))
        self._outbox.put(None)
        self._done.set()


def remote_lane_channel(spec: LaneSpec, settings: RemoteSettings) -> RemoteChannel:
    """A Lane's channel for `ssh://host/LANE`: the remote runs LANE as it names it."""
    return RemoteChannel(spec.host, OpenLane(APP_VERSION, PROTOCOL, spec.local), settings,
                         lane_log_path(spec.name), lane=spec.name)
