"""A real OpenSSH server on 127.0.0.1 for the remote-lane tests: keys made at test time, no PAM, its own config.

The client side is the system ssh with `-F /dev/null` and explicit key and known-hosts files
(OpenSSH reads ~/.ssh from the passwd home, not $HOME), handed to Crossover through
CROSSOVER_SSH_COMMAND as a user would.
"""
from __future__ import annotations

import os
import secrets
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest

SSHD = shutil.which("sshd") or "/usr/sbin/sshd"


def sshd_missing() -> str:
    """Why no server can be started here ("" when one can)."""
    if not os.path.exists(SSHD):
        return "sshd is not installed (apt-get install openssh-server)"
    for tool in ("ssh", "ssh-keygen"):
        if shutil.which(tool) is None:
            return f"{tool} is not installed (apt-get install openssh-client)"
    if not os.path.isdir("/run/sshd"):
        try:
            os.makedirs("/run/sshd", mode=0o755, exist_ok=True)  # sshd's privilege separation directory
        except OSError as exc:
            return f"sshd needs /run/sshd and it cannot be made: {exc}"
    return ""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def keygen(path: Path) -> Path:
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(path)], check=True)
    return path


class SshServer:
    """sshd -D on a free port, accepting one key; `kill()` ends it and every session it serves."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        self.token = secrets.token_hex(6)  # in every session's environment: finds this server's workers
        self.host_key = keygen(folder / "host_key")
        self.user_key = keygen(folder / "user_key")
        self.other_key = keygen(folder / "other_key")  # a key the server does not know
        (folder / "authorized_keys").write_text((folder / "user_key.pub").read_text())
        host_pub = (folder / "host_key.pub").read_text().split()
        self.known_hosts = folder / "known_hosts"
        self.known_hosts.write_text(f"[127.0.0.1]:{self.port} {host_pub[0]} {host_pub[1]}\n")
        (folder / "empty_known_hosts").write_text("")
        self.remote_home = folder / "remote-home"
        config = folder / "sshd_config"
        config.write_text("\n".join([
            "ListenAddress 127.0.0.1", f"HostKey {self.host_key}", f"PidFile {folder / 'sshd.pid'}",
            f"AuthorizedKeysFile {folder / 'authorized_keys'}", "StrictModes no", "UsePAM no",
            "PasswordAuthentication no", "KbdInteractiveAuthentication no", "PubkeyAuthentication yes",
            "PermitRootLogin yes", "PrintMotd no", "LogLevel ERROR", "MaxStartups 50",
            # The remote worker keeps its files apart from the user's, like the tests' own.
            f"SetEnv CROSSOVER_HOME={self.remote_home} KERAS_HOME={self.remote_home / 'keras'} "
            f"CROSSOVER_TEST_SSHD={self.token}",
        ]) + "\n")
        self.log = open(folder / "sshd.log", "wb")
        self.proc = subprocess.Popen([SSHD, "-D", "-e", "-f", str(config), "-p", str(self.port)],
                                     stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"sshd exited: {(folder / 'sshd.log').read_text()}")
            try:
                socket.create_connection(("127.0.0.1", self.port), 0.2).close()
                return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("sshd did not listen within 10 s")

    def ssh_command(self, key: Path | None = None, known_hosts: Path | None = None) -> str:
        """What CROSSOVER_SSH_COMMAND would hold for this server."""
        return (f"ssh -F /dev/null -i {key or self.user_key} -o IdentitiesOnly=yes -o IdentityAgent=none "
                f"-o UserKnownHostsFile={known_hosts or self.known_hosts} -o GlobalKnownHostsFile=/dev/null "
                f"-o LogLevel=ERROR")

    def host(self) -> str:
        return f"127.0.0.1:{self.port}"

    def workers(self) -> list:
        """Remote worker processes started through this server, wherever they now are in the tree."""
        import psutil

        found = []
        for proc in psutil.process_iter(["cmdline", "environ"]):
            try:
                if ("crossover_lab.core.engine.remote.worker" in " ".join(proc.info["cmdline"] or [])
                        and (proc.info["environ"] or {}).get("CROSSOVER_TEST_SSHD") == self.token):
                    found.append(proc)
            except (psutil.Error, TypeError):
                continue
        return found

    def sessions(self) -> list:
        import psutil

        try:
            return psutil.Process(self.proc.pid).children(recursive=True)
        except psutil.Error:
            return []

    def kill(self) -> None:
        """The server and every connection it serves, at once (a machine that went away)."""
        for child in self.sessions():
            if "sshd" in (child.name() or ""):
                try:
                    child.send_signal(signal.SIGKILL)
                except OSError:
                    pass
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(5)

    def stop(self) -> None:
        self.kill()
        for worker in self.workers():
            worker.kill()
        self.log.close()


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """One server per test module; the module is skipped, saying why, where none can run."""
    why = sshd_missing()
    if why:
        pytest.skip(why)
    srv = SshServer(tmp_path_factory.mktemp("sshd"))
    yield srv
    srv.stop()
