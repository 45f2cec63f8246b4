"""The local backend: the workstations are names for this host, their jobs the host's own Open MPI
(see backend.py). For development, tests and benchmarks without Docker."""
from __future__ import annotations

from testbed.backends.local.backend import LocalBackend, local_spec

__all__ = ["LocalBackend", "local_spec"]
