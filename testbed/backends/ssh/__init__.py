"""The SSH backend: real workstations, one per host, reached over SSH with no Docker (backend.py).

link.py holds one host's connection (and why paramiko), discovery.py reads a host's cores
and speed, fit.py decides which host each workstation is, layout.py says what goes on a
host and maps the image's paths onto it, the host agent (containers/agents/hostagent.py,
loaded for the controller by agent.py) runs there (cgroups, processes, teardown),
control.py runs commands in a workstation, registry.py records the hosts a cluster touched. docs/ssh-backend.md says how to set hosts up and what is kept and lost.
"""
from __future__ import annotations

from testbed.backends.ssh.backend import SshBackend

__all__ = ["SshBackend"]
