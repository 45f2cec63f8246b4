"""Cluster backends: where a cluster's workstations run (base.py says what one must do).

Docker on this host (docker/), real hosts over SSH (ssh/), several Docker hosts joined
by Swarm (swarm/), and this host's own Open MPI with no containers at all (local/). A new backend is a new
folder beside them implementing `Backend`, and one more branch in `get`; a cluster
records its kind, so `Cluster.attach` finds it again. Backends load on first use: naming
this package costs no Docker (or paramiko) import.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from testbed.backends.base import (Backend, BackendError, Capabilities, CpuCap, CpuLimits, Gateway, HostMpi,
                                   HostPlacing, MachineId, OwnLogin, Provisioned, RemoteMetering, SelfSampling,
                                   Unsupported, require)

DEFAULT = "docker"
KINDS = ("docker", "ssh", "swarm", "local")

if TYPE_CHECKING:
    from testbed.spec import ClusterSpec

__all__ = ["Backend", "BackendError", "Capabilities", "CpuCap", "CpuLimits", "DEFAULT", "Gateway", "HostMpi",
           "HostPlacing", "KINDS", "MachineId", "OwnLogin", "Provisioned", "RemoteMetering", "SelfSampling",
           "Unsupported", "get", "require"]


def get(kind: str = DEFAULT, spec: "ClusterSpec | None" = None) -> Backend:
    """A backend of `kind`, ready to use (its engine is reached on first call).

    The SSH backend finds its hosts in `spec` to bring a cluster up; without one it serves
    clusters already up (their hosts are recorded). So does Swarm, whose hosts without
    `[[host]]` tables are the Swarm's nodes, listed by the local engine (the manager).
    Docker and local ignore `spec`."""
    if kind == "docker":
        from testbed.backends.docker import DockerBackend
        return DockerBackend()
    if kind == "ssh":
        from testbed.backends.ssh import SshBackend
        return SshBackend(spec)
    if kind == "swarm":
        from testbed.backends.swarm import SwarmBackend
        return SwarmBackend(spec)
    if kind == "local":
        from testbed.backends.local import LocalBackend
        return LocalBackend()
    raise ValueError(f"backend: unknown kind {kind!r} (known: {', '.join(KINDS)})")
