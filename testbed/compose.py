"""Compose files rendered from a spec: the same image, entrypoint and NOWLAB_TC as `nowlab up`.

One file serves `docker-compose up` on one host and `docker stack deploy` on a Swarm. The
per-cluster SSH key pair is written next to it as file secrets (never committed, never in
the image); both tools mount those at /run/secrets, where the entrypoint looks.
"""
from __future__ import annotations

import ipaddress
import os
from pathlib import Path
from typing import Any

import yaml

from testbed.backends.docker import engine as backend
from testbed.image import LATEST
from testbed.placement import place
from testbed.spec import ClusterSpec
from testbed.sshkeys import KEY_NAME, make_keypair

# Compose files get their own block so a rendered cluster never collides with a live one.
COMPOSE_SUBNETS = ipaddress.ip_network("172.27.0.0/16")


def compose_subnet(spec: ClusterSpec) -> ipaddress.IPv4Network:
    """A stable /24 per cluster name, so re-rendering gives the same file."""
    index = sum(spec.name.encode()) % 256
    return list(COMPOSE_SUBNETS.subnets(new_prefix=24))[index]


def render(spec: ClusterSpec, *, cores: int, image: str | None = None, key_dir: str = "keys",
           swarm: bool = False) -> dict[str, Any]:
    """The Compose document as data (tested without Docker)."""
    subnet = compose_subnet(spec)
    ips = backend.addresses(spec, subnet)
    placement = place(spec, list(range(cores)))
    image = image or LATEST
    services: dict[str, Any] = {}
    for ws in spec.names:
        cfg = backend.container_config(spec, ws, image=image, ips=ips, core=placement.cores[ws],
                                       key_dir=Path(key_dir))
        services[ws] = {
            "image": image,
            "hostname": ws,
            "init": True,
            "cap_add": cfg["cap_add"],
            "cpu_period": cfg["cpu_period"],
            "cpu_quota": cfg["cpu_quota"],
            "cpuset": cfg["cpuset_cpus"],
            "mem_limit": cfg["mem_limit"],
            "memswap_limit": cfg["memswap_limit"],
            "pids_limit": cfg["pids_limit"],
            "security_opt": list(cfg["security_opt"]),
            "environment": cfg["environment"],
            "labels": dict(cfg["labels"]),
            "extra_hosts": [f"{n}:{ip}" for n, ip in ips.items()],
            "sysctls": dict(cfg["sysctls"]),
            "networks": {"now": {"ipv4_address": ips[ws]}},
            "volumes": ["../workloads:/opt/nowlab/workloads:ro"],
            "secrets": [{"source": "nowlab_ssh_key", "target": KEY_NAME},
                        {"source": "nowlab_ssh_key_pub", "target": f"{KEY_NAME}.pub"}],
        }
        if swarm:
            # Swarm ignores cpu_period/cpu_quota/cpuset and takes the cap from here, with
            # its fixed 100 ms period; docker-compose refuses both at once, hence two files.
            for key in ("cpu_period", "cpu_quota", "cpuset", "mem_limit", "memswap_limit"):
                del services[ws][key]
            services[ws]["deploy"] = {"resources": {"limits": {"cpus": f"{spec.cpu(ws):g}",
                                                               "memory": str(spec.memory(ws))}}}
    return {
        "version": "3.8",
        "services": services,
        "networks": {"now": {"driver": "overlay" if swarm else "bridge",
                             "labels": {backend.LABEL: spec.name},
                             "ipam": {"config": [{"subnet": str(subnet)}]}}},
        "secrets": {"nowlab_ssh_key": {"file": f"./{key_dir}/{KEY_NAME}"},
                    "nowlab_ssh_key_pub": {"file": f"./{key_dir}/{KEY_NAME}.pub"}},
    }


class _Dumper(yaml.SafeDumper):
    """Block style for multi-line strings (NOWLAB_TC), and no anchors for repeated dicts."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def _str(dumper: yaml.SafeDumper, data: str) -> yaml.Node:
    style = "|" if "\n" in data else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", data, style=style)


_Dumper.add_representer(str, _str)


def to_yaml(doc: dict[str, Any]) -> str:
    return yaml.dump(doc, Dumper=_Dumper, sort_keys=False, width=1000)


def write_compose(spec: ClusterSpec, out_dir: Path, *, cores: int | None = None) -> list[Path]:
    """Write OUT/NAME.yml, OUT/NAME.stack.yml and the key pair in OUT/keys/NAME/ (kept on re-render)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    key_dir = out_dir / "keys" / spec.name
    if not (key_dir / KEY_NAME).exists():
        make_keypair(key_dir, comment=f"nowlab-{spec.name}")
    cores = cores or len(os.sched_getaffinity(0))
    paths = []
    for swarm, suffix, usage in ((False, "yml", "docker-compose -f {file} -p {name} up -d"),
                                 (True, "stack.yml", "docker stack deploy -c {file} {name}")):
        doc = render(spec, cores=cores, key_dir=f"keys/{spec.name}", swarm=swarm)
        path = out_dir / f"{spec.name}.{suffix}"
        header = (f"# nowlab cluster {spec.name!r}, rendered by `nowlab compose` from its spec; edit the spec.\n"
                  f"# Run: {usage.format(file=path.name, name=spec.name)}\n")
        path.write_text(header + to_yaml(doc))
        paths.append(path)
    return paths
