"""The controller's record of the hosts each SSH cluster touched: what labels are to Docker.

Written before the first host is changed, so `remove` (and `gc` after a killed controller)
finds every host a cluster may have reached, even if `up` died half way. One JSON file per
cluster in the state home's ssh/ folder; the file goes when the cluster has been removed
from every host that could still be reached.
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

from testbed import state
from testbed.backends.ownership import tag_alive
from testbed.backends.ssh.link import HostAccess


def registry_dir() -> Path:
    return state.home() / "ssh"


@dataclass
class Record:
    cluster: str
    owner: str  # pid:start-time of the process that ran `up` (testbed.backends.ownership)
    home: str  # its state home: a cluster is looked after once marked ready there
    hosts: list[HostAccess]
    folder: str = ""  # the workstation folder's absolute path (the same on every host)
    machines: dict[str, str] = field(default_factory=dict)  # workstation -> host name
    devs: dict[str, str] = field(default_factory=dict)  # host -> the interface its links leave by
    shaped: list[str] = field(default_factory=list)  # hosts whose interface carries the cluster's qdisc

    def host(self, name: str) -> HostAccess:
        for h in self.hosts:
            if h.name == name:
                return h
        raise KeyError(f"host {name!r} is not one of cluster {self.cluster!r}'s")

    def abandoned(self) -> bool:
        """Not marked ready in its state folder and its `up` process is gone."""
        state_file = Path(self.home) / "clusters" / self.cluster / "cluster.json"
        ready = False
        if state_file.exists():
            try:
                ready = bool(json.loads(state_file.read_text()).get("ready"))
            except ValueError:
                ready = False
        return not ready and not tag_alive(self.owner)


def path(cluster: str) -> Path:
    return registry_dir() / f"{cluster}.json"


def save(rec: Record) -> None:
    registry_dir().mkdir(parents=True, exist_ok=True)
    tmp = path(rec.cluster).with_suffix(".tmp")
    tmp.write_text(json.dumps(asdict(rec), indent=1))
    tmp.replace(path(rec.cluster))


def load(cluster: str) -> Record | None:
    try:
        raw = json.loads(path(cluster).read_text())
    except FileNotFoundError:
        return None
    raw["hosts"] = [HostAccess(**h) for h in raw["hosts"]]
    return Record(**raw)


def forget(cluster: str) -> None:
    path(cluster).unlink(missing_ok=True)


def names() -> list[str]:
    d = registry_dir()
    return sorted(p.stem for p in d.glob("*.json")) if d.is_dir() else []
