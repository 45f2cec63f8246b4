"""Remote hosts' speed probes (workloads/speed_probe.py) as one stream of samples keyed by slot.

The speed keeper (testbed/keeper.py) meters this machine's cores in process; another host's
cores are metered by a probe running there, whose JSON lines the keeper follows. How a line
reaches the controller is the backend's (Swarm: the probe container's log through the host's
engine; SSH: the probe's stdout over an ssh channel), given here as `open(host, since)`.
"""
from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Iterable

from testbed.backends.follow import HostThreads
from testbed.meter import Sample, parse_sample

# host, the newest sample time already had (epoch s) -> the probe's output as it comes
Open = Callable[[str, float], Iterable[bytes]]


class MeterStream:
    """Every host's probe output, as Samples whose `core` is the cluster's slot id.

    One thread per host follows its probe; `drain` returns what arrived since the last call.
    A thread whose stream ends (a host gone, the probe stopped) is started again at the next
    `drain`, at most once per RETRY_S; a sample no newer than one already had is dropped (a
    restarted log follow repeats lines)."""

    RETRY_S = 5.0

    def __init__(self, hosts: Iterable[str], open_: Open, slot_of: dict[tuple[str, int], int],
                 errors: tuple[type[BaseException], ...]) -> None:
        self.hosts = list(hosts)
        self.open = open_
        self.slot_of = slot_of    # (host, core) -> slot id
        self.errors = errors      # what a broken stream raises (then it is started again later)
        self._q: queue.Queue[Sample] = queue.Queue()
        self._threads = HostThreads(self.hosts, self._follow, "nowlab-meter", self.RETRY_S)
        self._stop = threading.Event()
        start = time.time()
        self._last_t = {h: start for h in self.hosts}

    def _follow(self, host: str) -> None:
        buf = b""
        try:
            for chunk in self.open(host, self._last_t[host]):
                if self._stop.is_set():
                    return
                buf += chunk
                *lines, buf = buf.split(b"\n")
                for line in lines:
                    s = parse_sample(line.decode(errors="replace"))
                    slot = None if s is None else self.slot_of.get((host, s.core))
                    if s is not None and slot is not None and s.t > self._last_t[host]:
                        self._last_t[host] = s.t
                        self._q.put(Sample(s.t, slot, s.kernel, s.factor, s.cpu_s))
        except self.errors:
            return  # `drain` starts it again later

    def drain(self) -> list[Sample]:
        self._threads.ensure()
        out: list[Sample] = []
        while True:
            try:
                out.append(self._q.get_nowait())
            except queue.Empty:
                return out

    def close(self) -> None:
        self._stop.set()
