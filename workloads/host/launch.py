"""How the host starts an MPI job: anything with mpirun_popen(hosts, argv, env).

The testbed's Cluster provides it for every backend's workstations. LocalLauncher runs the
same programs with the host's own Open MPI, all ranks on this machine, without containers
(the testbed's `local` backend is built on it); the logical host names still select the
per-host checkpoint directories.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import threading
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, Sequence

from workloads import SOURCE_DIR, channel_auth, timeshare_checkin


#: How a launcher says, in a failed job's output, that a member passed its workstation's
#: memory: the line reads "out of memory on wsN" (the executor takes it as the job's error).
OUT_OF_MEMORY = "out of memory on "


class Handle(Protocol):
    def poll(self) -> int | None: ...
    def terminate(self) -> None: ...
    def wait(self, timeout: float | None = None) -> object: ...
    def output(self) -> str: ...


class Launcher(Protocol):
    def mpirun_popen(self, hosts: Sequence[str], argv: Sequence[str], *,
                     env: dict[str, str] | None = None) -> Handle: ...


@dataclass(frozen=True)
class LocalResult:
    exit_code: int
    stdout: str
    stderr: str


@dataclass
class LocalHandle:
    process: subprocess.Popen
    _out: list[str] = field(default_factory=list)
    _err: list[str] = field(default_factory=list)
    session_base: Path | None = None  # the mpiexec's own Open MPI session directory base, removed once it exited

    def __post_init__(self) -> None:
        self._threads = [threading.Thread(target=self._pump, args=(self.process.stdout, self._out), daemon=True),
                         threading.Thread(target=self._pump, args=(self.process.stderr, self._err), daemon=True)]
        for t in self._threads:
            t.start()
        if self.session_base is not None:  # a handle dropped unwaited (or alive at exit) still removes it
            weakref.finalize(self, _remove_session_base, self.process, self.session_base)

    @staticmethod
    def _pump(stream, sink: list[str]) -> None:
        for line in stream:
            sink.append(line)

    def poll(self) -> int | None:
        return self.process.poll()

    def wait(self, timeout: float | None = None) -> LocalResult:
        try:
            code = self.process.wait(timeout)
        except subprocess.TimeoutExpired as exc:
            raise TimeoutError(f"local mpiexec still running after {timeout} s") from exc
        for t in self._threads:
            t.join(timeout=5)
        if self.session_base is not None:
            shutil.rmtree(self.session_base, ignore_errors=True)
        return LocalResult(code, "".join(self._out), "".join(self._err))

    def output(self) -> str:
        return "".join(self._out)

    def terminate(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()


def _remove_session_base(process: subprocess.Popen, base: Path) -> None:
    """Remove an mpiexec's session base once it has exited; never from under a running one."""
    try:
        process.wait(timeout=5)
    except subprocess.TimeoutExpired:
        return
    shutil.rmtree(base, ignore_errors=True)


#: Variables a job takes only from its launcher's `env`, never from the caller's shell: each names
#: a run's own manager or secret, so one left in a shell (or set by an enclosing run) would make
#: the ranks of a dedicated run, or of the OS-alone arm, check in with a manager that is not theirs.
RUN_SCOPED_ENV = (timeshare_checkin.ENV, channel_auth.SECRET_ENV)


def inherited_env() -> dict[str, str]:
    """This process's environment without the run-scoped variables."""
    return {k: v for k, v in os.environ.items() if k not in RUN_SCOPED_ENV}


def with_python(argv: Sequence[str], python: str) -> list[str]:
    """`argv` with a leading `python3` replaced by `python`: the host's interpreter that has mpi4py."""
    argv = list(argv)
    if argv and argv[0] == "python3":
        argv[0] = python
    return argv


def host_mpi_argv(ranks: int, argv: Sequence[str], session_base: Path, *, mpiexec: str = "mpiexec") -> list[str]:
    """The mpiexec command line of `ranks` ranks all on this host (the one-host counterpart of
    testbed/mpi_command.py): oversubscribed, TCP and Open MPI's own channel on loopback only, and
    its session directories under `session_base` (one per launch)."""
    if ranks < 1:
        raise ValueError(f"hosts: an MPI job needs at least one rank, got {ranks}")
    return [mpiexec, "--allow-run-as-root", "--oversubscribe", "-n", str(ranks),
            "--mca", "btl", "tcp,self", "--mca", "btl_tcp_if_include", "lo",
            "--mca", "oob_tcp_if_include", "lo", "--mca", "orte_tmpdir_base", str(session_base), *argv]


@dataclass
class LocalLauncher:
    """Host Open MPI, one process per logical host, all on this machine.

    TCP is pinned to the loopback interface: with Docker bridges on the host, Open
    MPI otherwise picks among several interfaces and a local job was seen to hang.
    """

    repo_root: Path = SOURCE_DIR.parent  # the folder that holds workloads/: the ranks' PYTHONPATH
    mpiexec: str = "mpiexec"
    python: str = "/usr/bin/python3"
    controller_address: str = "127.0.0.1"
    control_network: str = "127.0.0.0/8"  # every rank runs here: the control channel refuses any other peer

    def mpirun_popen(self, hosts: Sequence[str], argv: Sequence[str], *,
                     env: dict[str, str] | None = None) -> LocalHandle:
        argv = with_python(argv, self.python)
        # Each mpiexec gets its own session directory base: under the shared /tmp one, an exiting
        # mpiexec's clean-up removed the directory another was starting in ("orte_session_dir
        # failed", 1 launch set in 40 here when launches follow each other within milliseconds).
        base = Path(tempfile.mkdtemp(prefix="nowlab-ompi-"))
        full_env = {**inherited_env(), "PYTHONPATH": str(self.repo_root), **(env or {})}
        try:
            cmd = host_mpi_argv(len(hosts), argv, base, mpiexec=self.mpiexec)
            proc = subprocess.Popen(cmd, cwd=self.repo_root, env=full_env, text=True, stdin=subprocess.DEVNULL,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        except Exception:  # not started (no rank asked, or no mpiexec): nothing else would remove it
            shutil.rmtree(base, ignore_errors=True)
            raise
        return LocalHandle(proc, session_base=base)
