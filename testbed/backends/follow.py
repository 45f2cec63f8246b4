"""One thread per host that follows a stream from the host, started again when it ends.

Remote speed probes (meter_stream.py) and Swarm's samplers (swarm/sampling.py) write lines
that the controller follows host by host; a stream ends when a host goes or its probe is
removed, and the reader asks again later rather than at once (a lost host would be asked
many times a second).
"""
from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable


class HostThreads:
    """`ensure()` starts `follow(host)` in a daemon thread for each host with none alive, at most
    once per `retry_s` a host."""

    def __init__(self, hosts: Iterable[str], follow: Callable[[str], None], name: str, retry_s: float = 5.0) -> None:
        self.hosts = list(hosts)
        self.follow, self.name, self.retry_s = follow, name, retry_s
        self._threads: dict[str, threading.Thread] = {}
        self._started: dict[str, float] = {}

    def ensure(self) -> None:
        now = time.monotonic()
        for host in self.hosts:
            t = self._threads.get(host)
            if (t is None or not t.is_alive()) and now - self._started.get(host, -self.retry_s) >= self.retry_s:
                self._started[host] = now
                self._threads[host] = threading.Thread(target=self.follow, args=(host,), daemon=True,
                                                       name=f"{self.name}-{host}")
                self._threads[host].start()
