"""The controller's record of the hosts each Swarm cluster touched, written before any is.

Labels find a cluster's containers on a host, but only on a host one asks: after a killed
controller, `gc` must know which hosts to ask, including hosts the spec named that are not
(or no longer) in the Swarm. One JSON file per cluster in the state home's swarm/ folder;
it goes once the cluster is removed from every host, and stays naming the hosts that
could not be reached, for a later `gc`.
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

from testbed import state
from testbed.backends.ownership import tag_alive
from testbed.backends.swarm.hosts import SwarmHost


def registry_dir() -> Path:
    return state.home() / "swarm"


@dataclass
class Record:
    cluster: str
    owner: str  # pid:start-time of the process that ran `up` (testbed.backends.ownership)
    home: str  # its state home: a cluster is looked after once marked ready there
    manager: str  # the engine URL the overlay network was made through (only a manager removes it)
    hosts: list[SwarmHost]
    machines: dict[str, str] = field(default_factory=dict)  # workstation -> host name
    slots: list[list] = field(default_factory=list)  # slot id -> [host, core], as `Cluster` recorded cores

    def host(self, name: str) -> SwarmHost:
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
    raw["hosts"] = [SwarmHost(**h) for h in raw["hosts"]]
    return Record(**raw)


def forget(cluster: str) -> None:
    path(cluster).unlink(missing_ok=True)


def names() -> list[str]:
    d = registry_dir()
    return sorted(p.stem for p in d.glob("*.json")) if d.is_dir() else []


def known_hosts() -> list[SwarmHost]:
    """Every host any recorded cluster touched, once each (by URL)."""
    seen: dict[str, SwarmHost] = {}
    for n in names():
        rec = load(n)
        for h in rec.hosts if rec else []:
            seen.setdefault(h.url, h)
    return list(seen.values())
