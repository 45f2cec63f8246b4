"""Forming the Swarm and moving the image onto its hosts, through each host's engine API.

`init` makes one engine the manager, `join` adds another as a worker with the manager's
token, `nodes` lists the members (hosts.from_nodes turns them into hosts). `distribute`
copies the workstation image to every host that lacks it, `docker save | docker load`
through the SDK (nothing is pulled: the hosts need no registry). Docker I/O only.
"""
from __future__ import annotations

import socket
from typing import Callable
from urllib.parse import urlsplit

import docker
import docker.errors
import requests

from testbed.backends.base import BackendError
from testbed.backends.swarm.hosts import SwarmHost

Log = Callable[[str], None]
CONNECT_TIMEOUT_S = 5.0


def connect(url: str, *, what: str = "", timeout: float = 120.0) -> docker.DockerClient:
    """A client of the engine at `url`, answering; one line naming it otherwise."""
    tcp = urlsplit(url)
    if tcp.scheme == "tcp" and tcp.hostname and tcp.port:  # a host that is down fails in seconds, not minutes
        try:
            socket.create_connection((tcp.hostname, tcp.port), timeout=CONNECT_TIMEOUT_S).close()
        except OSError as exc:
            raise BackendError(f"{what or url}: its Docker engine does not answer ({exc})") from None
    try:
        c = docker.DockerClient(base_url=url, timeout=timeout)
        c.ping()
    except (docker.errors.DockerException, requests.RequestException, OSError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise BackendError(f"{what or url}: its Docker engine does not answer ({first[:160]})") from None
    return c


def swarm_state(c: docker.DockerClient) -> tuple[str, bool]:
    """(LocalNodeState, whether this engine is a manager): ("active", True) on a manager."""
    sw = c.info().get("Swarm") or {}
    return str(sw.get("LocalNodeState") or "inactive"), bool(sw.get("ControlAvailable"))


def init(c: docker.DockerClient, advertise_addr: str) -> str:
    """Make this engine a one-node Swarm's manager (already one: kept); returns its node id."""
    state, manager = swarm_state(c)
    if state == "active":
        if not manager:
            raise BackendError("this engine is a Swarm worker already; init it on a manager, or leave first")
        return str(c.info()["Swarm"]["NodeID"])
    c.swarm.init(advertise_addr=advertise_addr, listen_addr=f"{advertise_addr}:2377")
    return str(c.info()["Swarm"]["NodeID"])


def join(manager: docker.DockerClient, worker: docker.DockerClient, advertise_addr: str) -> str:
    """Join `worker` to `manager`'s Swarm (already in it: kept); returns the worker's node id."""
    state, _ = swarm_state(manager)
    if state != "active":
        raise BackendError("the manager's engine is in no Swarm: run `nowlab swarm init` on it first")
    mine = manager.info()["Swarm"]
    wstate, _ = swarm_state(worker)
    if wstate == "active":
        if worker.info()["Swarm"].get("Cluster", {}).get("ID") not in (None, mine.get("Cluster", {}).get("ID")):
            raise BackendError("that engine is in another Swarm (docker swarm leave there first)")
        return str(worker.info()["Swarm"]["NodeID"])
    manager.swarm.reload()
    token = manager.swarm.attrs["JoinTokens"]["Worker"]
    addrs = [str(a["Addr"]) for a in mine.get("RemoteManagers") or []]
    worker.swarm.join(remote_addrs=addrs, join_token=token, advertise_addr=advertise_addr,
                      listen_addr=f"{advertise_addr}:2377")
    return str(worker.info()["Swarm"]["NodeID"])


def nodes(manager: docker.DockerClient) -> list[dict]:
    return [n.attrs for n in manager.nodes.list()]


def has_image(c: docker.DockerClient, tag: str) -> bool:
    try:
        c.images.get(tag)
    except docker.errors.ImageNotFound:
        return False
    return True


def distribute(source: docker.DockerClient, targets: dict[SwarmHost, docker.DockerClient], tag: str,
               log: Log) -> list[str]:
    """Copy image `tag` from `source` to every target lacking it, streamed (`save` chunks into
    `load`, never whole in memory); returns the host names it was copied to."""
    copied = []
    for host, c in targets.items():
        if has_image(c, tag):
            continue
        log(f"copying {tag} to {host.where()}")
        try:
            c.images.load(source.images.get(tag).save(named=True))
        except docker.errors.DockerException as exc:
            raise BackendError(f"{host.where()}: loading the image failed ({exc})") from None
        if not has_image(c, tag):
            raise BackendError(f"{host.where()}: {tag} is not there after loading it")
        copied.append(host.name)
    return copied
