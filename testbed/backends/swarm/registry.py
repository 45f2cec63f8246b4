"""The controller's record of the hosts each Swarm cluster touched (testbed/backends/host_records.py).

Labels find a cluster's containers on a host, but only on a host one asks: after a killed
controller, `gc` must know which hosts to ask, including hosts the spec named that are not
(or no longer) in the Swarm. The file goes once the cluster is removed from every host, and
stays naming the hosts that could not be reached, for a later `gc`.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from testbed.backends.host_records import HostRecord, HostRecords
from testbed.backends.swarm.hosts import SwarmHost


@dataclass
class Record(HostRecord):
    manager: str  # the engine URL the overlay network was made through (only a manager removes it)
    hosts: list[SwarmHost]
    machines: dict[str, str] = field(default_factory=dict)  # workstation -> host name
    slots: list[list] = field(default_factory=list)  # slot id -> [host, core], as `Cluster` recorded cores
    gateway: dict = field(default_factory=dict)  # gateway.GatewayAddress as a dict ({}: none made yet)
    meters: dict[str, str] = field(default_factory=dict)  # host -> its speed probe's container id


RECORDS = HostRecords("swarm", "Swarm", Record, SwarmHost)
path, save, load, forget, names = RECORDS.path, RECORDS.save, RECORDS.load, RECORDS.forget, RECORDS.names


def known_hosts() -> list[SwarmHost]:
    """Every host any recorded cluster touched, once each (by URL)."""
    seen: dict[str, SwarmHost] = {}
    for n in names():
        rec = load(n)
        for h in rec.hosts if rec else []:
            seen.setdefault(h.url, h)
    return list(seen.values())
