"""The Swarm backend: workstations as standalone containers on several Docker hosts (backend.py).

hosts.py says which hosts and how their engines are reached, overlay.py the overlay
network's settings and Open MPI's, membership.py forms the Swarm and moves the image,
readings.py reads a workstation's cgroup from inside it, registry.py records the hosts a
cluster touched. docs/multi-host.md says how to set hosts up and what is kept and lost.
"""
from __future__ import annotations

from testbed.backends.swarm.backend import SwarmBackend

__all__ = ["SwarmBackend"]
