"""Samplers' JSON lines from many hosts, as the monitor's newest readings per workstation.

A backend whose workstations the controller cannot read with a file read (Swarm's other
hosts; the SSH backend's real workstations) runs one long-lived sampler on each host, which
writes one line per interval with its workstations' readings. How a line reaches the
controller is the backend's (Swarm: the sampler container's stdout through the host's
engine; SSH: the sampler's stdout over one ssh channel), given here as `open_(host)`, and so
is a workstation's reading in it (`parse`, on workloads/wire/sampler_lines.py, the line's one
parser). This holds the newest reading of each workstation.
"""
from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable

from testbed.backends.base import Sampled
from testbed.backends.follow import HostThreads

Open = Callable[[str], Iterable[bytes]]  # host -> the sampler's output as it comes
Parse = Callable[[str], dict[str, Sampled]]  # one line -> its readings by workstation ({} if not one)


class LineSampleStream:
    """Every host's sampler, followed in one thread per host; `latest()` holds the newest readings.

    A reading older than `stale_s` (by the controller's clock, at its arrival) is dropped:
    the monitor then reads that workstation itself. A thread whose stream ended (a host gone,
    the sampler stopped) is started again at the next `latest()`, at most once per RETRY_S."""

    RETRY_S = 5.0

    def __init__(self, hosts: Iterable[str], open_: Open, parse: Parse, stale_s: float,
                 errors: tuple[type[BaseException], ...]) -> None:
        self.open, self.parse, self.stale_s = open_, parse, stale_s
        self.stream_errors = errors  # what a broken stream raises (then it is followed again later)
        self._latest: dict[str, tuple[float, Sampled]] = {}  # ws -> (arrived, monotonic; readings)
        self._lock = threading.Lock()
        self._threads = HostThreads(hosts, self._follow, "nowlab-sampler", self.RETRY_S)
        self._stop = threading.Event()
        self.errors: list[str] = []  # why a host's stream ended, newest last (kept short)

    def _follow(self, host: str) -> None:
        buf = b""
        try:
            for chunk in self.open(host):
                if self._stop.is_set():
                    return
                buf += chunk
                *lines, buf = buf.split(b"\n")
                for line in lines:
                    got = self.parse(line.decode(errors="replace"))
                    now = time.monotonic()
                    with self._lock:
                        for ws, s in got.items():
                            self._latest[ws] = (now, s)
        except self.stream_errors as exc:
            self.errors = [*self.errors[-9:], f"{host}: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}"]

    def latest(self) -> dict[str, Sampled]:
        if not self._stop.is_set():
            self._threads.ensure()
        now = time.monotonic()
        with self._lock:
            return {ws: s for ws, (arrived, s) in self._latest.items() if now - arrived <= self.stale_s}

    def close(self) -> None:
        self._stop.set()
