"""The controller's record of the hosts each SSH cluster touched (testbed/backends/host_records.py).

The file goes when the cluster has been removed from every host that could still be reached.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from testbed.backends.host_records import HostRecord, HostRecords
from testbed.backends.ssh.link import HostAccess


@dataclass
class Record(HostRecord):
    hosts: list[HostAccess]
    folder: str = ""  # the workstation folder's absolute path (the same on every host)
    machines: dict[str, str] = field(default_factory=dict)  # workstation -> host name
    devs: dict[str, str] = field(default_factory=dict)  # host -> the interface its links leave by
    shaped: list[str] = field(default_factory=list)  # hosts whose interface carries the cluster's qdisc
    cores: dict[str, int] = field(default_factory=dict)  # host -> the core its workstation is pinned to


RECORDS = HostRecords("ssh", "SSH", Record, HostAccess)
path, save, load, forget, names = RECORDS.path, RECORDS.save, RECORDS.load, RECORDS.forget, RECORDS.names
