"""Owner load in process mode: Menascé & Rao's daemon on each workstation.

The daemon (containers/agents/owner.py) runs at normal priority inside the workstation,
so it preempts guests, which MPI launches at SCHED_IDLE (`chrt --idle 0`). That priority
only holds because each workstation is pinned to one core: unpinned, an owner and an
idle-priority guest ran on different cores and split the cap evenly.
"""
from __future__ import annotations

import time
from typing import Any, Protocol, Sequence

from testbed.spec import ClusterSpec, OwnerLoad


class Workstations(Protocol):
    """What the owner daemons need of a cluster (testbed.cluster.Cluster has it): a
    protocol, so that the cluster, which starts them at `up`, is not imported back here."""

    @property
    def workstations(self) -> list[str]: ...
    @property
    def spec(self) -> ClusterSpec: ...
    def detach(self, ws: str, argv: Sequence[str]) -> None: ...
    def exec(self, ws: str, argv: Sequence[str]) -> Any: ...

AGENT = "/opt/nowlab/agents/owner.py"
PIDFILE = "/run/nowlab-owner.pid"


def owner_argv(spec: OwnerLoad, speed: float, seed: int) -> list[str]:
    return ["python3", AGENT, "--n", str(spec.n), "--z", repr(spec.z), "--d", repr(spec.d),
            "--speed", repr(speed), "--seed", str(seed), "--pidfile", PIDFILE]


def start(c: Workstations, owners: dict[str, OwnerLoad], seed: int = 0) -> None:
    """Start (or restart) the owner daemon on each named workstation; seeds differ per workstation."""
    for ws, spec in owners.items():
        stop(c, [ws])
        if spec.n == 0:
            continue
        index = c.workstations.index(ws)
        # nominal: a governed workstation's cap moves, its demand is counted at the cap that gives its speed
        # detached, as the zygotes are: no stream and no controller thread held for the daemon's
        # life (one per workstation at 1,024 workstations; docs/scale.md); its pid file says it runs
        c.detach(ws, owner_argv(spec, c.spec.nominal_cpu(ws), seed * 7919 + index))
    for ws, spec in owners.items():
        if spec.n:
            _wait_for(c, ws)


def _wait_for(c: Workstations, ws: str) -> None:
    for _ in range(200):
        if c.exec(ws, ["test", "-s", PIDFILE]).ok:
            return
        time.sleep(0.05)
    raise RuntimeError(f"{ws}: the owner daemon did not start")


def start_from_spec(c: Workstations) -> list[str]:
    """Start the owner load the spec gives; returns the workstations that have one."""
    owners = {ws: o for ws in c.workstations if (o := c.spec.owner(ws)) is not None and o.n > 0}
    if owners:
        start(c, owners, c.spec.seed)
    return sorted(owners)


def parse_pid(text: str) -> int | None:
    """The pid a pid file holds; None if it holds none (empty, or being written)."""
    text = text.strip()
    return int(text) if text.isdigit() and int(text) > 1 else None


def kill_argv(pid: int) -> list[str]:
    if pid <= 1:
        raise ValueError(f"pid: must be > 1, got {pid}")
    return ["kill", "-TERM", str(pid)]


def stop(c: Workstations, workstations: list[str] | None = None) -> None:
    """Stop the owner daemons (read the pid file with one exec, kill with another: no shell)."""
    for ws in workstations or c.workstations:
        read = c.exec(ws, ["cat", PIDFILE])
        pid = parse_pid(read.stdout) if read.ok else None
        if pid is not None:
            c.exec(ws, kill_argv(pid))
        for _ in range(100):
            if not c.exec(ws, ["test", "-e", PIDFILE]).ok:
                break
            time.sleep(0.02)
