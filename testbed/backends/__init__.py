"""Cluster backends: where a cluster's workstations run (base.py says what one must do).

Docker on this host is the only kind today. A new backend (SSH hosts, several hosts) is a
new folder beside docker/ implementing `Backend`, and one more branch in `get`; a cluster
records its kind, so `Cluster.attach` finds it again. Backends load on first use: naming
this package costs no Docker import.
"""
from __future__ import annotations

from testbed.backends.base import Backend, BackendError, CpuCap, CpuLimits, MachineId, Provisioned

DEFAULT = "docker"
KINDS = ("docker",)

__all__ = ["Backend", "BackendError", "CpuCap", "CpuLimits", "DEFAULT", "KINDS", "MachineId", "Provisioned", "get"]


def get(kind: str = DEFAULT) -> Backend:
    """A backend of `kind`, ready to use (its engine is reached on first call)."""
    if kind == "docker":
        from testbed.backends.docker import DockerBackend
        return DockerBackend()
    raise ValueError(f"backend: unknown kind {kind!r} (known: {', '.join(KINDS)})")
