"""Which Docker hosts a Swarm cluster uses, and how the controller reaches each one's engine.

A host is named by the spec's `[[host]]` table, or, for a spec without any, found in the
Swarm's membership (`docker node ls` on the manager: every ready, active node). Its
engine's URL is the host's `docker` field, else derived from its address as
`tcp://ADDRESS:2375` (dockerd listening on the hosts' private network; docs/multi-host.md
says how, and why TLS or ssh:// is wanted outside a closed lab). Pure: no Docker here.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urlsplit

from testbed.spec import DOCKER_URL, HOSTNAME, ClusterSpec, HostSpec

DEFAULT_PORT = 2375  # dockerd's unencrypted TCP port


@dataclass(frozen=True)
class SwarmHost:
    name: str  # as in the spec (or the node's hostname, made a valid host name)
    url: str  # its engine's API: tcp://HOST:PORT or ssh://[USER@]HOST[:PORT]
    address: str  # where its peers and the controller reach it (the URL's host)

    def where(self) -> str:
        return f"host {self.name!r} ({self.url})"


def docker_url(h: HostSpec) -> str:
    """The host's engine URL: its `docker` field, else tcp://ADDRESS:2375."""
    return h.docker or f"tcp://{h.address}:{DEFAULT_PORT}"


def url_address(url: str) -> str:
    """The host part of an engine URL; a ValueError naming the URL if it is not one."""
    if not DOCKER_URL.match(url):
        raise ValueError(f"docker: {url!r} is not a Docker API URL (tcp://HOST:PORT or ssh://[USER@]HOST[:PORT])")
    host = urlsplit(url).hostname
    if not host:
        raise ValueError(f"docker: {url!r} names no host")
    return host


def hosts_of(spec: ClusterSpec) -> list[SwarmHost]:
    return [SwarmHost(h.name, docker_url(h), url_address(docker_url(h))) for h in spec.hosts]


def host_name(hostname: str) -> str:
    """A node's hostname as a spec host name: lowercase, other characters as '-', at most 63."""
    name = re.sub(r"[^a-z0-9-]+", "-", hostname.lower()).strip("-")[:63].strip("-")
    if not HOSTNAME.match(name):
        raise ValueError(f"node hostname {hostname!r} gives no valid host name")
    return name


def from_nodes(nodes: list[dict], port: int = DEFAULT_PORT) -> list[SwarmHost]:
    """The Swarm's usable nodes (`docker node inspect` dicts), managers first, then by name:
    ready and active only (a drained or down node takes no workstations)."""
    out = []
    for n in nodes:
        status, spec = n.get("Status") or {}, n.get("Spec") or {}
        if status.get("State") != "ready" or spec.get("Availability", "active") != "active":
            continue
        addr = status.get("Addr") or ""
        if not addr or addr == "0.0.0.0":  # a manager reports its advertise address elsewhere
            addr = ((n.get("ManagerStatus") or {}).get("Addr") or "").rpartition(":")[0]
        if not addr:
            raise ValueError(f"node {n.get('ID', '?')[:12]}: no address in its status")
        name = host_name((n.get("Description") or {}).get("Hostname") or n.get("ID", "node"))
        out.append((0 if n.get("ManagerStatus") else 1, name, SwarmHost(name, f"tcp://{addr}:{port}", addr)))
    names = [name for _m, name, _h in out]
    dup = sorted({x for x in names if names.count(x) > 1})
    if dup:
        raise ValueError(f"nodes: hostnames {dup} are not unique; list the hosts in the spec instead")
    return [h for _m, _n, h in sorted(out, key=lambda x: (x[0], x[1]))]


def machine_id(cluster: str, host: str, container_id: str) -> str:
    """A workstation's machine id: which cluster's record names its host, and its container there."""
    return f"{cluster}/{host}/{container_id}"


def split_machine(machine: str) -> tuple[str, str, str]:
    parts = machine.split("/")
    if len(parts) != 3 or not all(parts):
        raise ValueError(f"machine: not a Swarm workstation id (<cluster>/<host>/<container>): {machine!r}")
    return parts[0], parts[1], parts[2]
