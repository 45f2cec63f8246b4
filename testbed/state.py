"""Where a running cluster's facts live between commands: one folder per cluster.

`nowlab up` and `nowlab set` run in different processes, so the current spec, addresses
and pinning are kept on disk. The backend's labels remain the source of truth for cleanup:
`gc` works even when this folder is gone.
"""
from __future__ import annotations

import json
import os
import shutil
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from testbed.spec import ClusterSpec


def home() -> Path:
    # Read at call time, not import time, so tests and users can point it elsewhere.
    return Path(os.environ.get("NOWLAB_HOME", Path.home() / ".nowlab"))


def cluster_dir(name: str) -> Path:
    return home() / "clusters" / name


@dataclass
class ClusterState:
    spec: dict[str, Any]
    network: str
    subnet: str
    gateway: str
    image: str
    ips: dict[str, str]
    cores: dict[str, int]
    containers: dict[str, str] = field(default_factory=dict)  # workstation -> machine id (a container id)
    ready: bool = False  # set once every workstation answered ssh; `gc` spares ready clusters
    backend: str = "docker"  # the kind of testbed.backends that runs it (older state files: Docker)

    @property
    def cluster_spec(self) -> ClusterSpec:
        return ClusterSpec.model_validate(self.spec)

    @property
    def name(self) -> str:
        return str(self.spec["name"])

    def save(self) -> None:
        d = cluster_dir(self.name)
        d.mkdir(parents=True, exist_ok=True)
        tmp = d / "cluster.json.tmp"
        tmp.write_text(json.dumps(asdict(self), indent=2))
        tmp.replace(d / "cluster.json")

    @classmethod
    def load(cls, name: str) -> "ClusterState":
        path = cluster_dir(name) / "cluster.json"
        if not path.exists():
            raise LookupError(f"no running cluster named {name!r} (see `nowlab status`)")
        return cls(**json.loads(path.read_text()))


def running_names() -> list[str]:
    root = home() / "clusters"
    return sorted(p.name for p in root.iterdir() if (p / "cluster.json").exists()) if root.exists() else []


def forget(name: str) -> None:
    shutil.rmtree(cluster_dir(name), ignore_errors=True)
