"""What is left for guests: the Network Weather Service's job, done from the host.

CPU, per workstation: the cap in force (the cgroup's quota/period) minus the CPU rate of
the owner processes, the CPU time of the workstation's processes that run the owner agent
(with Docker, /proc/<pid>/schedstat of the pids in its cgroup). This is the kernel's own
accounting split by process, so it stays right while a guest runs: a low-priority probe
would have to compete with that guest, and the cgroup's total would count the guest as
load. AvailCPU is the result as a fraction of the workstation's nominal speed. Both reads
go through the cluster's backend (testbed/backends/), so nothing here knows Docker.

Bandwidth, per link src->dst: the ceil HTB enforces on src's class for dst, less the
traffic that class and the whole egress carried (tc's byte counters, which count frames
the way HTB meters them). It counts all traffic, a guest's own included, as a passive
sensor does; it sends no probe traffic.

Memory: the rows of the last `keep_s` seconds stay in memory (`cpu_rows`, `link_rows`); the
whole series goes to disk as it is sampled (testbed/load/monitor_spool.py), so a run of any
length holds a bounded window, and `frames(t0, t1)` reads an older window back from disk.
"""
from __future__ import annotations

import math
import re
import threading
import time
from collections import Counter, deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Iterable

import pandas as pd

from testbed import shaping
from testbed.keeper import read_scales
from testbed.state import cluster_dir
from testbed.backends import BackendError
from testbed.load.monitor_spool import Spool
from testbed.parallel import parallel

if TYPE_CHECKING:
    from testbed.backends.base import SampleSource
    from testbed.cluster import Cluster

OWNER_MARK = "agents/owner.py"
_CLASS = re.compile(r"class htb (\S+) .*?ceil (\S+) .*?\n\s*Sent (\d+) bytes", re.S)
_UNITS = {"bit": 1, "Kbit": 10**3, "Mbit": 10**6, "Gbit": 10**9}
KEEP_S = 900.0  # rows this recent stay in memory: longer than a job's availability window, as a rule


def parse_tc_rate(text: str) -> int:
    m = re.fullmatch(r"([\d.]+)([KMG]?bit)", text)
    if not m:
        raise ValueError(f"not a tc rate: {text!r}")
    return int(round(float(m.group(1)) * _UNITS[m.group(2)]))


def parse_class_stats(text: str) -> dict[str, tuple[int, int]]:
    """`tc -s class show` -> {classid: (ceil bit/s, bytes sent)}."""
    return {cid: (parse_tc_rate(ceil), int(sent)) for cid, ceil, sent in _CLASS.findall(text)}


TC_READ_ARGV = ["tc", "-s", "class", "show", "dev", shaping.DEV]


def read_tc(c: "Cluster", ws: str) -> str:
    """`stamp\ntc output` of `ws`'s class counters, the stamp the host's wall clock midway
    through the read (as parse_stamped_class_stats expects); empty if the read failed.
    Read through the backend's cheap network read, not an exec (backend.read_net)."""
    t0 = time.time()
    res = c.read_net(ws, TC_READ_ARGV, timeout=10)
    t1 = time.time()
    return f"{(t0 + t1) / 2:.6f}\n{res.stdout}" if res.ok else ""


def parse_stamped_class_stats(text: str) -> tuple[float, dict[str, tuple[int, int]]]:
    """The output of read_tc -> (wall-clock time of the read, parse_class_stats)."""
    first, _, rest = text.partition("\n")
    try:
        return float(first), parse_class_stats(rest)
    except ValueError:
        raise ValueError(f"not a time stamp before tc's output: {first!r}") from None


def owner_cpu_ns(c: "Cluster", ws: str) -> int:
    """CPU time of the owner processes on one workstation, in ns."""
    return c.processes_cpu_ns(ws, OWNER_MARK)


def nominal_cores(spec, ws: str, cap: float, scales: dict[str, float]) -> float:
    """The cores a workstation has when no owner takes any: what AvailCPU is a fraction of.

    A raw cap: its spec (cap mode lowers the live cap to emulate owners, so the live cap over
    the spec is what they left). A governed speed: the quota the governor is giving it now,
    before cap mode's scale (the reserve in the spec is only a ceiling; measured against it a
    governed workstation with no owner read 0.55-0.73 available, demo 24 Nov 2026)."""
    if spec.speed(ws) is None:
        return spec.cpu(ws)
    scale = scales.get(ws, 1.0)
    return cap / scale if scale > 0 else spec.cpu(ws)


@dataclass
class Monitor:
    """Samples every `interval` s in a background thread; the last `keep_s` s of rows in memory, all on disk."""

    cluster: "Cluster"
    interval: float = 1.0
    keep_s: float = KEEP_S
    cpu_rows: deque[dict] = field(default_factory=deque)
    link_rows: deque[dict] = field(default_factory=deque)
    # frames() and save() run on other threads while sample() appends: they copy the rows
    # under this lock (a DataFrame built from a list that grows meanwhile fails with
    # "Length of values ... does not match length of index", which ended a demo).
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None
    _last: dict | None = None
    read_errors: list[str] = field(default_factory=list)  # reads skipped (the series has a gap there)
    t0: float = field(default_factory=time.monotonic)
    _spool: Spool = field(default_factory=lambda: Spool(("cpu", "links")))
    _dropped_to: float = -math.inf  # the newest time no longer in memory
    _stream: "SampleSource | None" = None  # the backend's own sampling, if it has one (started by start())
    reads: Counter = field(default_factory=Counter)  # workstation readings: "sampled" by the backend, "direct"

    def _read(self) -> dict:
        c = self.cluster
        now = time.monotonic() - self.t0
        # a backend whose hosts are elsewhere (Swarm) samples them itself, one process a host;
        # whatever it has not answered for (its first seconds, a host gone) is read here
        sampled = self._stream.latest() if self._stream is not None else {}
        cpu = {ws: (s.limits.cores, s.procs_ns, s.t) for ws, s in sampled.items() if ws in c.workstations}
        texts = {ws: sampled[ws].tc for ws in cpu}
        direct = [ws for ws in c.workstations if ws not in cpu]
        self.reads["sampled"] += len(cpu)
        self.reads["direct"] += len(direct)
        # in parallel: on one host these are file reads, but on another (Swarm) each is a
        # `docker exec` through that host's engine, a fraction of a second apiece
        cpu.update(zip(direct, parallel(lambda ws: (c.cpu_limits(ws)["cores"], owner_cpu_ns(c, ws), time.time()),
                                        direct)))
        texts.update(zip(direct, parallel(lambda ws: read_tc(c, ws), direct)))
        tc: dict = {}
        for ws, text in texts.items():
            try:
                tc[ws] = parse_stamped_class_stats(text)
            except ValueError as exc:
                # a read that failed under load (empty output was seen in a demo): keep the
                # last counters, so the next good read's rate spans both intervals
                self.read_errors.append(f"{now:.1f} s {ws}: {exc}")
                if self._last is not None and ws in self._last["tc"]:
                    tc[ws] = self._last["tc"][ws]
        return {"t": now, "cpu": cpu, "tc": tc}

    def sample(self) -> None:
        cur = self._read()
        prev, self._last = self._last, cur
        if prev is None:
            return
        dt = cur["t"] - prev["t"]
        spec = self.cluster.spec
        cpu_rows: list[dict] = []
        link_rows: list[dict] = []
        governed = any(spec.speed(ws) is not None for ws in cur["cpu"])
        scales = read_scales(cluster_dir(self.cluster.name)) if governed else {}
        for ws, (cap, owner_ns, stamp) in cur["cpu"].items():
            before = prev["cpu"].get(ws)
            span = stamp - before[2] if before is not None else 0.0  # between the two reads (wall clock)
            if span <= 0:  # no newer reading (the sampler's line had not moved): no row this time
                continue
            owner = max(0.0, (owner_ns - before[1]) / 1e9 / span)
            avail = max(0.0, cap - owner)
            cpu_rows.append({"t": cur["t"], "workstation": ws, "cap_cores": cap, "owner_cores": owner,
                                  "avail_cores": avail, "avail_cpu": avail / nominal_cores(spec, ws, cap, scales)})
        names = spec.names
        for src, (stamp, classes) in cur["tc"].items():
            then, before = prev["tc"].get(src, (stamp - dt, {}))
            span = stamp - then  # between the two reads of this workstation's counters
            if span <= 0:
                continue
            egress_ceil, egress_now = classes.get(shaping.ROOT, (0, 0))
            used_total = (egress_now - before.get(shaping.ROOT, (0, egress_now))[1]) * 8 / span
            for i, dst in enumerate(names):
                cid = shaping.classid(i)
                if dst == src or cid not in classes:
                    continue
                ceil, sent = classes[cid]
                used = (sent - before.get(cid, (0, sent))[1]) * 8 / span
                avail = max(0.0, min(ceil - used, egress_ceil - used_total))
                link_rows.append({"t": cur["t"], "src": src, "dst": dst, "ceil_bps": ceil,
                                       "used_bps": used, "avail_bps": avail})
        self._spool.append("cpu", cpu_rows)  # before memory: a window dropped from memory is on disk
        self._spool.append("links", link_rows)
        with self._lock:
            self.cpu_rows.extend(cpu_rows)
            self.link_rows.extend(link_rows)
            cutoff = cur["t"] - self.keep_s
            for rows in (self.cpu_rows, self.link_rows):
                while rows and rows[0]["t"] < cutoff:
                    self._dropped_to = max(self._dropped_to, rows.popleft()["t"])

    def _run(self) -> None:
        while not self._stop.is_set():
            started = time.monotonic()
            try:
                self.sample()
            except (OSError, ValueError, KeyError, BackendError) as exc:  # a missed sample, never a dead thread
                self.read_errors.append(f"{time.monotonic() - self.t0:.1f} s: {type(exc).__name__}: {exc}")
            self._stop.wait(max(0.0, self.interval - (time.monotonic() - started)))

    def start(self) -> "Monitor":
        self._stream = self.cluster.sample_stream(OWNER_MARK, TC_READ_ARGV, self.interval)
        self.sample()  # the first reading is the baseline for rates
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread:
            self._thread.join()
        if self._stream is not None:
            self._stream.close()

    def __enter__(self) -> "Monitor":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def frames(self, t0: float | None = None, t1: float | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
        """The samples with t0 <= t <= t1 (monitor seconds; None: from the start, to now); safe to call
        while the monitor runs. From memory when it still holds the window, else from disk."""
        lo = -math.inf if t0 is None else t0
        hi = math.inf if t1 is None else t1
        with self._lock:
            if lo > self._dropped_to or self._dropped_to == -math.inf:  # the window is all in memory
                cpu = [r for r in self.cpu_rows if lo <= r["t"] <= hi]
                links = [r for r in self.link_rows if lo <= r["t"] <= hi]
                return pd.DataFrame(cpu), pd.DataFrame(links)
            return self._spool.read("cpu", lo, hi), self._spool.read("links", lo, hi)

    def save(self, directory: Path) -> tuple[Path, Path]:
        directory.mkdir(parents=True, exist_ok=True)
        cpu, links = self.frames()
        paths = directory / "monitor_cpu.csv", directory / "monitor_links.csv"
        cpu.to_csv(paths[0], index=False)
        links.to_csv(paths[1], index=False)
        return paths


@dataclass(frozen=True)
class Availability:
    """Sanjay & Vadhiyar's averages over a window, for a set of workstations."""

    avg_avail_cpu: dict[str, float]  # fraction of nominal speed
    avg_avail_bw: dict[tuple[str, str], float]  # bit/s
    min_avg_avail_cpu: float
    min_avg_avail_bw: float


def summarize(cpu: pd.DataFrame, links: pd.DataFrame, workstations: Iterable[str],
              t0: float = float("-inf"), t1: float = float("inf")) -> Availability:
    ws = list(workstations)
    if not ws:
        raise ValueError("workstations: name at least one")
    c = cpu[(cpu.t >= t0) & (cpu.t <= t1) & cpu.workstation.isin(ws)]
    missing = sorted(set(ws) - set(c.workstation))
    if missing:
        raise ValueError(f"workstations: no samples for {', '.join(missing)} in [{t0}, {t1}]")
    avg_cpu = c.groupby("workstation").avail_cpu.mean().to_dict()
    l = links[(links.t >= t0) & (links.t <= t1) & links.src.isin(ws) & links.dst.isin(ws)] if len(links) else links
    avg_bw = {(s, d): v for (s, d), v in l.groupby(["src", "dst"]).avail_bps.mean().items()} if len(l) else {}
    return Availability(avg_cpu, avg_bw, min(avg_cpu.values()), min(avg_bw.values()) if avg_bw else float("nan"))
