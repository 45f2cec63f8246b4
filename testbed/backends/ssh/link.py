"""One SSH connection to one host, with errors that name the host in one line.

paramiko, not asyncssh: paramiko is already a dependency (the readiness probe, SshControl),
and the backend's fan-out is a thread per host through testbed.parallel, as the Docker
backend's is; one paramiko Transport carries any number of concurrent channels, so a host
costs one TCP connection and one handshake however many commands run on it. asyncssh
would pay off at hundreds of hosts per controller (no thread each), which is not this
backend's scale (one workstation per host: a lab's machines), and it would bring an event
loop into a code base that has none.
"""
from __future__ import annotations

import shlex
import socket
import stat
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import paramiko

from testbed import ssh_command
from testbed.backends.base import BackendError

CONNECT_TIMEOUT_S = 10.0


@dataclass(frozen=True)
class HostAccess:
    """How the controller logs in to a host (from the spec's [[host]] table)."""

    name: str
    address: str
    user: str = "root"
    port: int = 22
    identity: str | None = None  # a private key file; None: the agent and ~/.ssh's keys

    def where(self) -> str:
        return f"host {self.name!r} ({self.user}@{self.address}:{self.port})"


def connect_error(access: HostAccess, exc: BaseException) -> BackendError:
    """The one-line error for a failed login: unreachable, refused key, or the SSH layer's own."""
    if isinstance(exc, paramiko.AuthenticationException):
        return BackendError(f"{access.where()}: the SSH key was refused for {access.user!r}")
    if isinstance(exc, (socket.timeout, TimeoutError)):
        return BackendError(f"{access.where()}: unreachable (no answer in {CONNECT_TIMEOUT_S:g} s)")
    if isinstance(exc, (OSError, paramiko.ssh_exception.NoValidConnectionsError)):
        return BackendError(f"{access.where()}: unreachable ({str(exc).splitlines()[0] if str(exc) else type(exc).__name__})")
    return BackendError(f"{access.where()}: SSH failed ({type(exc).__name__}: {exc})")


class HostLink:
    """A lazily opened paramiko client to one host; safe to share between threads."""

    def __init__(self, access: HostAccess, *, key_file: str | None = None):
        self.access = access
        self.key_file = key_file if key_file is not None else access.identity
        self._client: paramiko.SSHClient | None = None
        self._lock = threading.Lock()

    def client(self) -> paramiko.SSHClient:
        with self._lock:
            if self._client is None or not self._alive(self._client):
                c = paramiko.SSHClient()
                # Lab hosts are named by the spec; their keys are not pinned here (docs/ssh-backend.md)
                c.set_missing_host_key_policy(paramiko.AutoAddPolicy())
                key = str(Path(self.key_file).expanduser()) if self.key_file else None
                try:
                    c.connect(self.access.address, port=self.access.port, username=self.access.user,
                              key_filename=key, timeout=CONNECT_TIMEOUT_S, banner_timeout=CONNECT_TIMEOUT_S,
                              auth_timeout=CONNECT_TIMEOUT_S, allow_agent=key is None, look_for_keys=key is None)
                except (paramiko.SSHException, OSError, EOFError) as exc:
                    c.close()
                    raise connect_error(self.access, exc) from exc
                self._client = c
            return self._client

    @staticmethod
    def _alive(c: paramiko.SSHClient) -> bool:
        t = c.get_transport()
        return t is not None and t.is_active()

    def run(self, argv: Sequence[str], *, stdin: bytes | None = None, timeout: float | None = None
            ) -> tuple[int, str, str]:
        """Run argv (quoted for the login shell) and wait: (exit code, stdout, stderr)."""
        return self.run_command(shlex.join(argv), stdin=stdin, timeout=timeout)

    def run_command(self, command: str, *, stdin: bytes | None = None, timeout: float | None = None
                    ) -> tuple[int, str, str]:
        try:
            chan, o, e = ssh_command.exec_command(self.client(), command, timeout=timeout, stdin=stdin)
            out, err = o.read().decode(errors="replace"), e.read().decode(errors="replace")
            return chan.recv_exit_status(), out, err
        except (paramiko.SSHException, OSError, EOFError) as exc:
            raise BackendError(f"{self.access.where()}: {type(exc).__name__}: {exc}") from exc

    def check(self, argv: Sequence[str], what: str, *, stdin: bytes | None = None) -> str:
        code, out, err = self.run(argv, stdin=stdin)
        if code != 0:
            tail = " | ".join((err or out).strip().splitlines()[-3:])
            raise BackendError(f"{self.access.where()}: {what} failed ({code}): {tail}")
        return out

    def put_tree(self, local: Path, remote: str) -> int:
        """Copy a folder's files (no __pycache__) to `remote` over SFTP; the number of files."""
        sent = 0
        try:
            sftp = self.client().open_sftp()
            try:
                for path in sorted(local.rglob("*")):
                    if "__pycache__" in path.parts:
                        continue
                    target = f"{remote}/{path.relative_to(local).as_posix()}"
                    if path.is_dir():
                        _mkdir(sftp, target)
                    else:
                        _mkdir(sftp, target.rsplit("/", 1)[0])
                        sftp.put(str(path), target)
                        sent += 1
            finally:
                sftp.close()
        except (paramiko.SSHException, OSError) as exc:
            raise BackendError(f"{self.access.where()}: copying {local.name} to {remote} failed: {exc}") from exc
        return sent

    def put_file(self, data: bytes, remote: str, mode: int = 0o644) -> None:
        try:
            sftp = self.client().open_sftp()
            try:
                _mkdir(sftp, remote.rsplit("/", 1)[0])
                with sftp.open(remote, "wb") as fh:
                    fh.write(data)
                sftp.chmod(remote, mode)
            finally:
                sftp.close()
        except (paramiko.SSHException, OSError) as exc:
            raise BackendError(f"{self.access.where()}: writing {remote} failed: {exc}") from exc

    def close(self) -> None:
        with self._lock:
            if self._client is not None:
                self._client.close()
                self._client = None


def _mkdir(sftp: paramiko.SFTPClient, path: str) -> None:
    """mkdir -p over SFTP."""
    parts = path.strip("/").split("/")
    for i in range(1, len(parts) + 1):
        p = "/" + "/".join(parts[:i])
        try:
            if stat.S_ISDIR(sftp.stat(p).st_mode):
                continue
        except FileNotFoundError:
            sftp.mkdir(p, mode=0o700)
