"""Which process owns a cluster, and whether it still runs: how orphans are told apart.

Every backend tags what it makes with the `pid:start-time` of the process that ran `up`.
The start time (field 22 of /proc/PID/stat, in clock ticks since boot) makes a reused pid
look dead, as it should.
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Iterable

PROC = Path("/proc")


def start_time(pid: int, proc: Path = PROC) -> str | None:
    """The process's start time in clock ticks since boot, or None if there is no such process."""
    try:
        return (proc / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


def owner_tag(pid: int | None = None, proc: Path = PROC) -> str:
    """`pid:start-time` of this process (or of `pid`)."""
    pid = os.getpid() if pid is None else pid
    return f"{pid}:{start_time(pid, proc)}"


def tag_alive(tag: str, proc: Path = PROC) -> bool:
    """The tagged process runs: same pid and same start time (not a reused pid)."""
    pid, _, started = tag.partition(":")
    return pid.isdigit() and start_time(int(pid), proc) == started


def any_alive(tags: Iterable[str], proc: Path = PROC) -> bool:
    return any(tag_alive(t, proc) for t in tags)


def unattended(cluster: str, home: str, owner: str, proc: Path = PROC) -> bool:
    """Nobody looks after `cluster`: its `up` (tagged `owner`) is gone and it was never marked
    ready in its state home `home`. The one rule every backend's `leftovers` applies."""
    state_file = Path(home) / "clusters" / cluster / "cluster.json"
    ready = False
    if state_file.exists():
        try:
            ready = bool(json.loads(state_file.read_text()).get("ready"))
        except ValueError:
            ready = False
    return not ready and not tag_alive(owner, proc)
