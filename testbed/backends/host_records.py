"""The controller's own record of the hosts a cluster touched, for backends whose machines
are on other hosts (ssh/, swarm/): what labels on one engine are to the Docker backend.

Written before the first host is changed, so `remove` (and `gc` after a killed controller)
finds every host a cluster may have reached, even if `up` died half way. One JSON file per
cluster in the state home's folder of the backend's kind; each backend says when it goes.
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Callable, Generic, TypeVar

from testbed import state
from testbed.backends.base import BackendError
from testbed.backends.ownership import unattended


@dataclass
class HostRecord:
    """What every backend's record holds first: the cluster and who looks after it. A
    backend's own record adds `hosts` (each with a `.name`) and what else it needs."""

    cluster: str
    owner: str  # pid:start-time of the process that ran `up` (testbed.backends.ownership)
    home: str  # its state home: a cluster is looked after once marked ready there

    def host(self, name: str) -> Any:
        for h in self.hosts:  # type: ignore[attr-defined]
            if h.name == name:
                return h
        raise KeyError(f"host {name!r} is not one of cluster {self.cluster!r}'s")

    def abandoned(self) -> bool:
        """Not marked ready in its state folder and its `up` process is gone."""
        return unattended(self.cluster, self.home, self.owner)


R = TypeVar("R", bound=HostRecord)


class HostRecords(Generic[R]):
    """The records of one backend kind: `state.home()/KIND/CLUSTER.json`."""

    def __init__(self, kind: str, label: str, record: Callable[..., R], host: Callable[..., Any]) -> None:
        self.kind, self.label, self.record, self.make_host = kind, label, record, host

    def folder(self) -> Path:
        return state.home() / self.kind

    def path(self, cluster: str) -> Path:
        return self.folder() / f"{cluster}.json"

    def save(self, rec: R) -> None:
        self.folder().mkdir(parents=True, exist_ok=True)
        tmp = self.path(rec.cluster).with_suffix(".tmp")
        tmp.write_text(json.dumps(asdict(rec), indent=1))
        tmp.replace(self.path(rec.cluster))

    def load(self, cluster: str) -> R | None:
        try:
            raw = json.loads(self.path(cluster).read_text())
        except FileNotFoundError:
            return None
        raw["hosts"] = [self.make_host(**h) for h in raw["hosts"]]
        return self.record(**raw)

    def require(self, cluster: str) -> R:
        """The record, or a BackendError saying there is none (a cluster this backend never made)."""
        rec = self.load(cluster)
        if rec is None:
            raise BackendError(f"cluster {cluster!r}: no {self.label} hosts recorded for it ({self.path(cluster)})")
        return rec

    def forget(self, cluster: str) -> None:
        self.path(cluster).unlink(missing_ok=True)

    def stranded(self, cluster: str) -> list[str]:
        """The hosts still recorded for a cluster that was taken down (its state folder is gone:
        `Cluster.provision` makes it before the record, `down` removes it after) because they did
        not answer; [] if there is no such record. Its name stays taken until `gc` reaches them."""
        rec = self.load(cluster)
        if rec is None or state.cluster_dir(cluster).exists():
            return []
        return [h.name for h in rec.hosts]  # type: ignore[attr-defined]

    def forget_stranded(self, cluster: str) -> list[str]:
        """Drop the record if the cluster is stranded (`stranded`); returns the hosts it named."""
        hosts = self.stranded(cluster)
        if hosts:
            self.forget(cluster)
        return hosts

    def names(self) -> list[str]:
        d = self.folder()
        return sorted(p.stem for p in d.glob("*.json")) if d.is_dir() else []
