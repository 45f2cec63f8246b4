"""The Docker backend: every workstation a container on this host (see backend.py).

engine.py speaks to dockerd (networks, containers, labels), cgroups.py to the host's
cgroup v1 files, control.py runs commands inside a container. Only testbed.backends,
testbed.cluster's callers on top (nowlab) and Docker-only tools (compose, image) import it.
"""
from __future__ import annotations

from testbed.backends.docker.backend import DockerBackend

__all__ = ["DockerBackend"]
