"""A Swarm of Docker-in-Docker nodes on this machine: the Swarm backend's test bed (issue 18, item 2).

Each node is a container of the node image with every capability but one (NODE_RIGHTS), running its own dockerd, reachable
on tcp 2375 on the nodes' bridge only (the port is not published). The node image is the
repo's own base (testbed/image.py, mmdebstrap from this machine's apt sources) with Debian's
docker.io added by apt, the same way: nothing is pulled from a registry, and the workstation
image moves into each node with `docker save | docker load` through the SDK
(membership.distribute). The node image's tag is a hash of what goes into it, so it is
built once and reused, as the workstation image is.

Each node's dockerd puts its containers' cgroups under its own parent
(`--cgroup-parent=nowlab-dind-<node>`), so a workstation's cpuset and CFS quota are real
kernel settings of this machine, nested. They say nothing about timing: three nodes share
this machine's cores, and the test that uses them checks function only.

    python -m tools.testbeds.dind up      # build if needed, start 3 nodes, form the Swarm
    python -m tools.testbeds.dind down    # remove the nodes, their network and volumes
"""
from __future__ import annotations

import hashlib
import io
import os
import sys
import tarfile
import time
from dataclasses import dataclass
from typing import Callable

import docker
import docker.errors

from testbed.backends.base import BackendError
from testbed.backends.swarm import membership
from testbed.backends.swarm.hosts import DEFAULT_PORT, SwarmHost
from testbed.image import ensure_image, image_ref

Log = Callable[[str], None]
NODE_REPOSITORY = "nowlab/swarm-node"
LABEL = "nowlab.dind"  # not nowlab.cluster: the nodes are the test bed, not a cluster, and `gc` spares them
NETWORK = "nowlab-dind"
NODES = ("node1", "node2", "node3")
NODE_PACKAGES = ("docker.io", "iptables", "tini", "procps")  # tini: `init` for the workstations (docker-init)
PROXY_VARS = ("http_proxy", "https_proxy", "no_proxy", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY")

# The path named inside is where this file was: the text is hashed into the node image's tag
# (node_tag), so it is left as it was rather than rebuild every node image for a comment.
DOCKERFILE = f"""# A Swarm node for nowlab's Docker-in-Docker test bed (testbed/backends/swarm/dind.py).
ARG BASE
FROM ${{BASE}}
RUN apt-get update \\
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends {' '.join(NODE_PACKAGES)} \\
 && apt-get clean && rm -rf /var/lib/apt/lists/*
COPY node-entrypoint /usr/local/sbin/node-entrypoint
RUN chmod 755 /usr/local/sbin/node-entrypoint
VOLUME /var/lib/docker
ENTRYPOINT ["/usr/local/sbin/node-entrypoint"]
"""

ENTRYPOINT = f"""#!/bin/sh
# dockerd of one test-bed node: unix socket and tcp {DEFAULT_PORT} (the nodes' bridge only: not published).
set -eu
if [ -f /sys/fs/cgroup/cgroup.controllers ]; then
    # cgroup v2: move this container's processes into a child, so dockerd may delegate controllers.
    mkdir -p /sys/fs/cgroup/node-init
    xargs -rn1 < /sys/fs/cgroup/cgroup.procs > /sys/fs/cgroup/node-init/cgroup.procs || :
    sed -e 's/ / +/g' -e 's/^/+/' < /sys/fs/cgroup/cgroup.controllers > /sys/fs/cgroup/cgroup.subtree_control || :
fi
set -- --host=unix:///var/run/docker.sock --host=tcp://0.0.0.0:{DEFAULT_PORT} --tls=false \\
       --cgroup-parent="nowlab-dind-$(hostname)"
if ! command -v docker-init >/dev/null 2>&1 && [ -x /usr/bin/tini-static ]; then
    set -- "$@" --init-path=/usr/bin/tini-static
fi
exec dockerd "$@"
"""


@dataclass(frozen=True)
class Node:
    name: str
    address: str  # on the nodes' bridge

    @property
    def url(self) -> str:
        return f"tcp://{self.address}:{DEFAULT_PORT}"


def node_tag(base: str) -> str:
    """The node image's tag: a hash of its base, Dockerfile and entrypoint (rebuilt when they change)."""
    h = hashlib.sha256("\0".join((base, DOCKERFILE, ENTRYPOINT)).encode()).hexdigest()[:12]
    return f"{NODE_REPOSITORY}:{h}"


def context_tar() -> io.BytesIO:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for name, text, mode in (("Dockerfile", DOCKERFILE, 0o644), ("node-entrypoint", ENTRYPOINT, 0o755)):
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), mode
            tar.addfile(info, io.BytesIO(data))
    buf.seek(0)
    return buf


def ensure_node_image(client: docker.DockerClient, log: Log = print) -> str:
    """The node image, built FROM the workstation's base if no image has this content's tag."""
    ensure_image(client, log=log)  # builds the base too, if missing
    base = image_ref().base
    tag = node_tag(base)
    if membership.has_image(client, tag):
        return tag
    log(f"building {tag} from {base} (apt-get install {' '.join(NODE_PACKAGES)})")
    proxies = {k: os.environ[k] for k in PROXY_VARS if os.environ.get(k)}
    try:
        client.images.build(fileobj=context_tar(), custom_context=True, tag=tag, buildargs={"BASE": base, **proxies},
                            rm=True, forcerm=True, pull=False, network_mode="host", labels={LABEL: "image"})
    except docker.errors.BuildError as exc:
        tail = "".join(str(c.get("stream", c.get("error", ""))) for c in exc.build_log)[-2000:]
        raise RuntimeError(f"building the node image failed: {exc.msg}\n{tail}") from exc
    return tag


# What a node may do. Not `privileged`: where root lacks CAP_SYS_RESOURCE (this machine's does)
# runc cannot give a privileged container its capabilities, and it does not start. A node gets
# every other capability, no seccomp or AppArmor profile, every device, and the host's cgroupfs
# read-write (bound above), which is what its dockerd needs to make its containers' cgroups.
NODE_RIGHTS = dict(cap_add=["ALL"], cap_drop=["SYS_RESOURCE"], security_opt=["seccomp=unconfined", "apparmor=unconfined"],
                   devices=["/dev/net/tun:/dev/net/tun"], device_cgroup_rules=["a *:* rwm"])


def start_nodes(client: docker.DockerClient, image: str, names: tuple[str, ...] = NODES) -> list[Node]:
    """Privileged node containers on their own bridge, each with its /var/lib/docker in a volume."""
    try:
        net = client.networks.get(NETWORK)
    except docker.errors.NotFound:
        net = client.networks.create(NETWORK, driver="bridge", labels={LABEL: "network"})
    nodes = []
    for name in names:
        ctr = client.containers.run(
            image, detach=True, name=f"nowlab-dind-{name}", hostname=name, network=net.name,
            labels={LABEL: "node"}, **NODE_RIGHTS,
            volumes={f"nowlab-dind-{name}-lib": {"bind": "/var/lib/docker", "mode": "rw"},
                     "/sys/fs/cgroup": {"bind": "/sys/fs/cgroup", "mode": "rw"}},
            # dockerd skips AppArmor inside a container that says so (the node has no apparmor_parser)
            environment={"container": "docker"})
        ctr.reload()
        nodes.append(Node(name, ctr.attrs["NetworkSettings"]["Networks"][NETWORK]["IPAddress"]))
    return nodes


def wait_engines(nodes: list[Node], timeout_s: float = 90.0) -> dict[Node, docker.DockerClient]:
    deadline = time.monotonic() + timeout_s
    out: dict[Node, docker.DockerClient] = {}
    for n in nodes:
        while True:
            try:
                out[n] = membership.connect(n.url, what=f"node {n.name}")
                break
            except BackendError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.5)
    return out


def up(log: Log = print, names: tuple[str, ...] = NODES) -> list[Node]:
    """Nodes running, the workstation image in each, node 1 the Swarm's manager and the rest
    its workers. Anything left by an earlier run is removed first."""
    client = docker.from_env(timeout=600)
    down(client)
    image = ensure_node_image(client, log)
    workstation = ensure_image(client, log=log)
    nodes = start_nodes(client, image, names)
    try:
        engines = wait_engines(nodes)
        membership.distribute(client, {SwarmHost(n.name, n.url, n.address): c for n, c in engines.items()},
                              workstation, log)
        manager = engines[nodes[0]]
        membership.init(manager, nodes[0].address)
        for n in nodes[1:]:
            membership.join(manager, engines[n], n.address)
        log(f"Swarm of {len(nodes)} nodes: " + ", ".join(f"{n.name} {n.url}" for n in nodes))
    except BaseException:
        down(client)
        raise
    return nodes


def down(client: docker.DockerClient | None = None) -> dict[str, int]:
    """Remove every node, the nodes' network and their volumes (by label and by their names)."""
    client = client or docker.from_env(timeout=600)
    flt = {"label": LABEL}
    containers = client.containers.list(all=True, filters=flt)
    for ctr in containers:
        try:
            ctr.remove(force=True, v=True)
        except docker.errors.NotFound:
            pass
    volumes = [v for v in client.volumes.list() if v.name.startswith("nowlab-dind-") and v.name.endswith("-lib")]
    for v in volumes:
        try:
            v.remove(force=True)
        except docker.errors.NotFound:
            pass
    networks = client.networks.list(filters=flt)
    for net in networks:
        try:
            net.remove()
        except docker.errors.NotFound:
            pass
    return {"containers": len(containers), "volumes": len(volumes), "networks": len(networks)}


def main(argv: list[str]) -> int:
    if argv[1:] == ["up"]:
        up()
        return 0
    if argv[1:] == ["down"]:
        print(down())
        return 0
    print("usage: python -m tools.testbeds.dind up|down", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
