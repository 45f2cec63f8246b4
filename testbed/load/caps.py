"""Owner load in cap mode: the owner's activity changes the workstation's CPU cap over time.

A schedule (time, available fraction) is a description, rendered ahead of time from the
same ON/OFF closed workload as process mode, or from an availability trace; a controller
thread then carries it out by changing the cgroup quota live. The cap is
nominal x fraction, never below 0.1% of a core (the CFS period then grows to 1 s so that
the quota stays at the kernel's 1 ms floor). A fraction of 0, an owner's burst, freezes
the workstation's processes instead (Cluster.hold): the 1 s period's timer outlives the
burst and stalled the guest for up to another second after it (checks/owner_burst_cost.py). On a governed (speed) workstation the cap is
the governed quota x fraction: the fraction goes to the speed keeper, which applies it on
every step (testbed.keeper.set_scale).
"""
from __future__ import annotations

import csv
import io
import heapq
import json
import random
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from testbed import keeper
from testbed.load.owners import OwnerLoad
from testbed.spec import SpecError, cfs_period_us

if TYPE_CHECKING:
    from testbed.cluster import Cluster

MIN_SHARE = 0.001
Schedule = list[tuple[float, float]]  # (seconds from start, available fraction in [0, 1])


def onoff_schedule(spec: OwnerLoad, duration: float, seed: int) -> Schedule:
    """The closed M/M/1//N owner workload as availability: 0 while any owner computes, else 1.

    Only the CPU's busy periods matter, and they are the same for any work-conserving order,
    so owners are served first come, first served; the mean available fraction is p0.
    """
    if spec.n == 0:
        return [(0.0, 1.0)]
    rng = random.Random(seed)
    wakes = [rng.expovariate(1 / spec.z) for _ in range(spec.n)]
    heapq.heapify(wakes)
    out: Schedule = [(0.0, 1.0)]
    queued, t, service_end = 0, 0.0, float("inf")
    while t < duration:
        if wakes and wakes[0] < service_end:
            t = heapq.heappop(wakes)
            queued += 1
            if queued == 1:
                service_end = t + rng.expovariate(1 / spec.d)
                out.append((t, 0.0))
        else:
            t = service_end
            queued -= 1
            heapq.heappush(wakes, t + rng.expovariate(1 / spec.z))
            if queued:
                service_end = t + rng.expovariate(1 / spec.d)
            else:
                service_end = float("inf")
                out.append((t, 1.0))
    return [(t, f) for t, f in out if t < duration]


def read_trace(path: str | Path) -> dict[str, Schedule]:
    """A CSV of `time,workstation,available`; times in seconds, rising per workstation."""
    path = Path(path)
    out: dict[str, Schedule] = {}
    try:
        text = path.read_bytes().decode("utf-8")  # whole, so a byte that is not UTF-8 is one line here
    except FileNotFoundError:
        raise SpecError(f"{path}: no such trace file") from None
    except OSError as exc:
        raise SpecError(f"{path}: cannot read ({exc.strerror})") from None
    except UnicodeDecodeError:
        raise SpecError(f"{path.name}: not UTF-8 text") from None
    with io.StringIO(text, newline="") as fh:
        reader = csv.DictReader(fh)
        missing = {"time", "workstation", "available"} - set(reader.fieldnames or [])
        if missing:
            raise SpecError(f"{path.name}: missing column(s) {', '.join(sorted(missing))}")
        for row in reader:
            line = reader.line_num
            if any(row.get(c) is None for c in ("time", "workstation", "available")):  # a short row
                got = sum(v is not None for k, v in row.items() if k is not None)
                raise SpecError(f"{path.name}:{line}: expected {len(reader.fieldnames or [])} columns, got {got}")
            try:
                t, frac = float(row["time"]), float(row["available"])
            except ValueError:
                raise SpecError(f"{path.name}:{line}: time and available must be numbers") from None
            if not 0 <= t < float("inf"):  # also refuses NaN
                raise SpecError(f"{path.name}:{line}: time: must be a finite number >= 0, got {row['time']!r}")
            if not 0.0 <= frac <= 1.0:
                raise SpecError(f"{path.name}:{line}: available: {frac} is outside [0, 1]")
            if not row["workstation"].strip():
                raise SpecError(f"{path.name}:{line}: workstation: empty")
            sched = out.setdefault(row["workstation"], [])
            if sched and t <= sched[-1][0]:
                raise SpecError(f"{path.name}:{line}: time: {t} is not after {sched[-1][0]} for {row['workstation']}")
            sched.append((t, frac))
    return out


def extend(schedule: Schedule, duration: float, end: Literal["hold", "repeat"] = "hold",
           period: float | None = None) -> Schedule:
    """Fit a trace to a run: hold its last value (default) or repeat it from its start.

    A repeated trace restarts one `period` after its start (default: its last time plus the
    gap before it, so the last value lasts as long as the one before it did).
    """
    if not schedule:
        return [(0.0, 1.0)]
    if end == "hold" or len(schedule) == 1:
        return [(t, f) for t, f in schedule if t < duration] or [schedule[0]]
    if period is None:
        period = schedule[-1][0] + (schedule[-1][0] - schedule[-2][0])
    out, offset = [], 0.0
    while offset < duration:
        out.extend((t + offset, f) for t, f in schedule if t + offset < duration)
        offset += period
    return out


@dataclass
class CapController:
    """Carries schedules out: at each time, set the workstation's cap to nominal x fraction."""

    cluster: "Cluster"
    schedules: dict[str, Schedule]
    mode: str = "onoff"
    applied: list[dict] = field(default_factory=list)
    _held: set[str] = field(default_factory=set)
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def _apply(self, ws: str, fraction: float) -> None:
        """Fraction 0 holds the workstation (its processes frozen, the cap untouched); any other
        lets it go and sets its cap to nominal x fraction (module docstring)."""
        if fraction <= 0.0:
            self.cluster.hold(ws, True)
            self._held.add(ws)
            return
        if ws in self._held:
            self.cluster.hold(ws, False)
            self._held.discard(ws)
        base = self.cluster.spec.cpu(ws)
        if self.cluster.spec.governed(ws):
            # The keeper governs this cap: it scales its quota by the fraction from its next
            # tick on; the write below applies it now, on the quota it last set.
            current = keeper.set_scale(self.cluster.name, ws, fraction)
            base = current if current is not None else self.cluster.spec.nominal_cpu(ws)
        share = max(MIN_SHARE, base * fraction)
        self.cluster.write_cpu_cap(ws, share, cfs_period_us(share))

    def _run(self) -> None:
        events = sorted((t, ws, f) for ws, sched in self.schedules.items() for t, f in sched)
        t0 = time.monotonic()
        for planned, ws, fraction in events:
            if self._stop.wait(max(0.0, planned - (time.monotonic() - t0))):
                return
            self._apply(ws, fraction)
            self.applied.append({"planned": planned, "applied": time.monotonic() - t0, "workstation": ws,
                                 "available": fraction})

    def start(self) -> "CapController":
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def stop(self, restore: bool = True) -> None:
        self._stop.set()
        if self._thread:
            self._thread.join()
        for ws in sorted(self._held):  # never leave a workstation frozen, restored or not
            self.cluster.hold(ws, False)
        self._held.clear()
        if restore:
            for ws in self.schedules:
                self._apply(ws, 1.0)

    def metadata(self) -> dict:
        lag = [a["applied"] - a["planned"] for a in self.applied]
        return {"mode": self.mode, "changes": len(self.applied),
                "max_lag_s": max(lag) if lag else 0.0, "applied": self.applied}

    def save(self, path: Path) -> None:
        path.write_text(json.dumps(self.metadata(), indent=2))
