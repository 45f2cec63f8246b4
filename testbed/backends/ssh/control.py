"""Commands on a workstation that is a whole host: `Control` over the controller's SSH link.

Every command runs through the host agent's `join` (layout.HostFolder.join_argv): it enters
the workstation's cgroup and core and carries the cluster's mark before it execs, so
whatever it starts (mpiexec, Open MPI's daemons on the other hosts, the ranks, the owner
daemons) is capped, counted and removed with the workstation. The image's fixed paths in
argv are mapped onto the host's folder (layout.translate).
"""
from __future__ import annotations

import shlex
from typing import Sequence

from testbed.backends.ssh.layout import HostFolder, translate
from testbed.backends.ssh.link import HostLink
from testbed.remote_exec import ExecResult, RemoteProcess, run_on_thread, with_timeout


def command_argv(argv: Sequence[str], folder: HostFolder, dev: str, *, env: dict[str, str] | None = None,
                 timeout: float | None = None, detach: bool = False) -> list[str]:
    """The argv the host's login shell runs for `argv` on the workstation (pure, tested)."""
    prefix = ["env", *[f"{k}={v}" for k, v in env.items()]] if env else []
    inner = [*prefix, *translate(argv, folder, dev)]
    return folder.join_argv(inner if detach else with_timeout(inner, timeout), detach=detach)


class SshHostControl:
    """run, start and detach on one SSH host's workstation."""

    def __init__(self, link: HostLink, folder: HostFolder, dev: str):
        self.link, self.folder, self.dev = link, folder, dev

    def run(self, argv: Sequence[str], *, env: dict[str, str] | None = None,
            timeout: float | None = None) -> ExecResult:
        code, out, err = self.link.run(command_argv(argv, self.folder, self.dev, env=env, timeout=timeout))
        return ExecResult(code, out, err)

    def detach(self, argv: Sequence[str], *, env: dict[str, str] | None = None) -> None:
        """Forked into its own session by the agent, output to the folder's daemons.log."""
        self.run_checked(command_argv(argv, self.folder, self.dev, env=env, detach=True), shlex.join(argv))

    def run_checked(self, full: list[str], what: str) -> None:
        code, out, err = self.link.run(full)
        if code != 0:
            ExecResult(code, out, err).check(f"{self.link.access.name}: {what}")

    def start(self, argv: Sequence[str], *, env: dict[str, str] | None = None) -> RemoteProcess:
        """Runs on a thread; the remote pid is not known (RemoteProcess.terminate does nothing)."""
        def run() -> ExecResult:
            try:
                return self.run(argv, env=env)
            except RuntimeError as exc:  # BackendError: the host went away
                return ExecResult(-1, "", str(exc))
        return run_on_thread(argv, run)
