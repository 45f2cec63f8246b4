"""A Swarm host's kernel settings, read through its engine: a one-shot container in the host's
network namespace (the neighbour table's limits exist only there, not in a container's own).

Used by `up` to warn when a large cluster may overflow a host's neighbour table
(overlay.neighbour_warnings). Docker I/O only.
"""
from __future__ import annotations

import docker
import docker.errors
import requests

from testbed.backends.docker import engine


def sysctl_path(name: str) -> str:
    if not name or not all(part.replace("_", "").replace("-", "").isalnum() for part in name.split(".")):
        raise ValueError(f"name: not a sysctl name: {name!r}")
    return "/proc/sys/" + name.replace(".", "/")


def read_sysctl(c: docker.DockerClient, image: str, name: str) -> int | None:
    """The host's integer sysctl `name`, or None when it cannot be read there (a host whose
    engine runs in a namespace of its own, as a Docker-in-Docker node does, has no such file)."""
    try:
        out = c.containers.run(image, [sysctl_path(name)], entrypoint=["cat"], network_mode="host", remove=True,
                               labels={engine.ROLE_LABEL: "kernel-read"}, stderr=False)
        return int(out.decode().strip())
    except (docker.errors.DockerException, requests.RequestException, ValueError, OSError):
        return None
