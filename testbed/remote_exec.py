"""Running commands on workstations: one small interface, Docker exec and SSH behind it.

Docker exec is the Docker backend's (testbed/backends/docker/control.py); SSH is here.

The scheduler, workloads and calibration speak to workstations only through `Control`,
so the same code drives containers on this host today and SSH hosts later.
"""
from __future__ import annotations

import os
import shlex
import signal
import threading
from dataclasses import dataclass, field
from typing import Callable, Protocol, Sequence

import paramiko

from testbed import ssh_command


@dataclass(frozen=True)
class ExecResult:
    exit_code: int
    stdout: str
    stderr: str

    @property
    def ok(self) -> bool:
        return self.exit_code == 0

    def check(self, what: str = "command") -> "ExecResult":
        if self.exit_code != 0:
            tail = (self.stderr or self.stdout).strip().splitlines()[-5:]
            raise RuntimeError(f"{what} failed with exit code {self.exit_code}: {' | '.join(tail)}")
        return self


@dataclass
class RemoteProcess:
    """A command left running on a workstation; output is collected in the background."""

    argv: list[str]
    _done: threading.Event = field(default_factory=threading.Event)
    _out: list[str] = field(default_factory=list)
    _err: list[str] = field(default_factory=list)
    exit_code: int | None = None
    pid: int | None = None  # host pid, when the backend knows it

    def poll(self) -> int | None:
        return self.exit_code if self._done.is_set() else None

    def wait(self, timeout: float | None = None) -> ExecResult:
        if not self._done.wait(timeout):
            raise TimeoutError(f"{shlex.join(self.argv)} still running after {timeout} s")
        return ExecResult(self.exit_code if self.exit_code is not None else -1, "".join(self._out), "".join(self._err))

    def output(self) -> str:
        return "".join(self._out)

    def terminate(self) -> None:
        if self.pid and self.poll() is None:
            try:
                os.kill(self.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass


def run_on_thread(argv: Sequence[str], run: Callable[[], ExecResult]) -> RemoteProcess:
    """`run` (a blocking run of `argv`) on a thread, as a RemoteProcess: for a control that
    cannot stream its output (an SSH exec); the remote pid is not known."""
    proc = RemoteProcess(list(argv))

    def work() -> None:
        result = run()
        proc._out.append(result.stdout)
        proc._err.append(result.stderr)
        proc.exit_code = result.exit_code
        proc._done.set()

    threading.Thread(target=work, daemon=True).start()
    return proc


class Control(Protocol):
    def run(self, argv: Sequence[str], *, env: dict[str, str] | None = None,
            timeout: float | None = None) -> ExecResult: ...

    def start(self, argv: Sequence[str], *, env: dict[str, str] | None = None) -> RemoteProcess: ...

    def detach(self, argv: Sequence[str], *, env: dict[str, str] | None = None) -> None:
        """Start a daemon and return at once (the resident MPI world is started so)."""
        ...


def with_timeout(argv: Sequence[str], timeout: float | None) -> list[str]:
    # coreutils `timeout` inside the workstation: the Docker exec API has no deadline.
    return ["timeout", "--kill-after=5", f"{timeout:g}", *argv] if timeout else list(argv)


class SshControl:
    """SSH (paramiko) to a workstation: the backend for real hosts, and the readiness probe here."""

    def __init__(self, host: str, key_path: str, *, user: str = "root", port: int = 22, connect_timeout: float = 5):
        self.host, self.user, self.port = host, user, port
        self.key = paramiko.Ed25519Key.from_private_key_file(key_path)
        self.connect_timeout = connect_timeout
        self._client: paramiko.SSHClient | None = None

    def _connect(self) -> paramiko.SSHClient:
        if self._client is None:
            client = paramiko.SSHClient()
            client.set_missing_host_key_policy(paramiko.AutoAddPolicy())  # host keys are per container
            client.connect(self.host, port=self.port, username=self.user, pkey=self.key,
                           timeout=self.connect_timeout, banner_timeout=self.connect_timeout,
                           auth_timeout=self.connect_timeout, allow_agent=False, look_for_keys=False)
            self._client = client
        return self._client

    def run(self, argv: Sequence[str], *, env: dict[str, str] | None = None,
            timeout: float | None = None) -> ExecResult:
        prefix = ["env", *[f"{k}={v}" for k, v in (env or {}).items()]] if env else []
        command = shlex.join(with_timeout([*prefix, *argv], timeout))
        chan, stdout, stderr = ssh_command.exec_command(self._connect(), command)
        out, err = stdout.read().decode(errors="replace"), stderr.read().decode(errors="replace")
        return ExecResult(chan.recv_exit_status(), out, err)

    def detach(self, argv: Sequence[str], *, env: dict[str, str] | None = None) -> None:
        """Start a daemon in its own session (`setsid -f`: no hang-up when the channel closes)."""
        prefix = ["env", *[f"{k}={v}" for k, v in (env or {}).items()]] if env else []
        command = shlex.join(["setsid", "-f", *prefix, *argv])
        chan, _stdout, _stderr = ssh_command.exec_command(self._connect(), command)
        chan.recv_exit_status()  # setsid -f returns as soon as the daemon is forked

    def start(self, argv: Sequence[str], *, env: dict[str, str] | None = None) -> RemoteProcess:
        return run_on_thread(argv, lambda: self.run(argv, env=env))

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None
