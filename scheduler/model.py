"""Job execution-time models and job specs.

A model answers T(p), the execution time in seconds on p processors, and
declares which of Table 2's facts (Anastasiadis & Sevcik) it can supply, so
an engine can refuse a policy that needs more than the jobs tell.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from enum import Enum
from typing import Callable, Protocol

ResizeCostFn = Callable[[tuple[int, ...], tuple[int, ...]], float]  # (old set, new set) -> seconds


class Knowledge(str, Enum):
    """Application facts a policy may use (Table 2 of Anastasiadis & Sevcik)."""

    PMAX = "pmax"
    T1 = "T(1)"
    TP = "T(p)"


ALL_KNOWLEDGE = frozenset(Knowledge)


class Model(Protocol):
    """What the engine and the policies need from an execution-time model."""

    pmax: int | None  # None: no limit of its own (the machine size bounds it)
    knows: frozenset[Knowledge]

    def T(self, p: int) -> float: ...


@dataclass(frozen=True, slots=True)
class SevcikModel:
    """Sevcik's T(p) = W/p + alpha + beta*p seconds, with phi(p) = 1.

    pmax defaults to ceil(sqrt(W/beta)) (eq. 6; unlimited when beta = 0).
    Beyond pmax the job cannot use more processors, so T(p) = T(pmax):
    the cap is where extra processors stop helping, not a penalty.
    """

    W: float
    alpha: float = 0.0
    beta: float = 0.0
    pmax: int | None = None
    knows: frozenset[Knowledge] = field(default=ALL_KNOWLEDGE, init=False)

    def __post_init__(self) -> None:
        if self.W <= 0 or self.alpha < 0 or self.beta < 0:
            raise ValueError(f"Sevcik model needs W > 0, alpha >= 0, beta >= 0; got "
                             f"W={self.W}, alpha={self.alpha}, beta={self.beta}")
        if self.pmax is None and self.beta > 0:
            ratio = self.W / self.beta
            if ratio < 2.0**62:  # otherwise as good as unlimited (and sqrt(inf) has no ceil)
                object.__setattr__(self, "pmax", max(1, math.ceil(math.sqrt(ratio))))
        if self.pmax is not None and self.pmax < 1:
            raise ValueError(f"pmax must be >= 1, got {self.pmax}")

    def T(self, p: int) -> float:
        if p < 1:
            raise ValueError(f"T(p) needs p >= 1, got {p}")
        if self.pmax is not None and p > self.pmax:
            p = self.pmax
        return self.W / p + self.alpha + self.beta * p


@dataclass(frozen=True, slots=True)
class TableModel:
    """T(p) from measured times: times[i] is T(i+1) in seconds.

    pmax defaults to the table length; beyond the table T stays at its last
    entry (the job uses no more processors than it was measured on).
    """

    times: tuple[float, ...]
    pmax: int | None = None
    knows: frozenset[Knowledge] = field(default=ALL_KNOWLEDGE, init=False)

    def __post_init__(self) -> None:
        times = tuple(float(t) for t in self.times)
        if not times or any(t <= 0 for t in times):
            raise ValueError("TableModel needs at least one time and all times > 0")
        object.__setattr__(self, "times", times)
        if self.pmax is None:
            object.__setattr__(self, "pmax", len(times))
        if self.pmax < 1:
            raise ValueError(f"pmax must be >= 1, got {self.pmax}")

    def T(self, p: int) -> float:
        if p < 1:
            raise ValueError(f"T(p) needs p >= 1, got {p}")
        p = min(p, self.pmax, len(self.times))
        return self.times[p - 1]


@dataclass(frozen=True, slots=True)
class DemandModel:
    """Only T(1) is known (a jobs CSV with a `t1` column).

    Policies that need T(p) must refuse these jobs. The engine still has to
    run them, so it assumes linear speedup T(p) = t1/p up to pmax; that
    assumption is the engine's, and no policy may rely on it.
    """

    t1: float
    pmax: int | None = None
    knows: frozenset[Knowledge] = field(default=frozenset({Knowledge.PMAX, Knowledge.T1}), init=False)

    def __post_init__(self) -> None:
        if self.t1 <= 0:
            raise ValueError(f"t1 must be > 0, got {self.t1}")
        if self.pmax is not None and self.pmax < 1:
            raise ValueError(f"pmax must be >= 1, got {self.pmax}")

    def T(self, p: int) -> float:
        if p < 1:
            raise ValueError(f"T(p) needs p >= 1, got {p}")
        if self.pmax is not None and p > self.pmax:
            p = self.pmax
        return self.t1 / p


@dataclass(frozen=True, slots=True)
class RuntimeModel:
    """A rigid job's run time, given directly (a trace's run time, a delay job): T(p) = runtime_s.

    A rigid job only ever runs on its own size, so its time there is all a model needs to
    say; it knows T(p) in that sense (a policy estimating an end from it, as EASY does for a
    job with no requested walltime, reads the trace's run time, as Batsim and AccaSim do).
    A run time of 0 is allowed (archive traces hold them): the job ends as it starts.
    """

    runtime_s: float
    pmax: int | None = None
    knows: frozenset[Knowledge] = field(default=frozenset({Knowledge.PMAX, Knowledge.TP}), init=False)

    def __post_init__(self) -> None:
        if not (self.runtime_s >= 0 and math.isfinite(self.runtime_s)):
            raise ValueError(f"runtime_s must be a finite time >= 0, got {self.runtime_s}")
        if self.pmax is not None and self.pmax < 1:
            raise ValueError(f"pmax must be >= 1, got {self.pmax}")

    def T(self, p: int) -> float:
        if p < 1:
            raise ValueError(f"T(p) needs p >= 1, got {p}")
        return self.runtime_s


@dataclass(frozen=True, slots=True)
class Job:
    """One job of a stream: arrival in seconds, its model, its safe points.

    `phases` is the number of equal slices of work; a preemption request is
    acknowledged at the next slice boundary. `reconfig_cost` (seconds) is
    paid each time the job is restarted on a different processor set.
    `teardown` and `release` (seconds) are how long processors stay unusable
    after the job finishes, or after a resize gives them up: a real job's
    processes take that long to exit. Whoever gets those processors next
    starts that much later (see the engine).
    `resize_cost(old, new)`: seconds for a resize between those processor
    sets (fixed + bytes over the link); None charges `reconfig_cost` for all.
    `startup`: seconds (at speed 1) from a start until the job begins its
    work (a live job's launch up to its hello); it holds its processors and
    makes no progress meanwhile, and T(p) is its time after that. A
    preemption requested meanwhile is answered at a safe point after it.
    `setup_work`: processor-seconds (at speed 1) of set-up split among the
    members, paid in the same pause: a job started on n processors pauses
    startup + setup_work/n (CG builds its rows of A before its first safe
    point: 2.3 s at p=1, 0.6 s at p=4, measured).
    `pause(n)`: when given, the whole pause on n processors (seconds at speed 1), in place
    of startup + setup_work/n: a measured set-up need not fall like 1/n (CG's said hello
    3.8, 1.0, 0.6 and 0.2 s after its start at n = 1, 2, 4, 8).
    `work_first`: a job checks for a request only after finishing a phase, so
    after a start or a resize it answers no sooner than one phase on (the
    live workloads do this); False: a job just (re)started answers at once.
    `size`: a rigid job's processors. It asks for exactly that many, starts once on them and
    runs to its end: no preemption, no resize (the state machine refuses both). None: a
    malleable job (1..pmax processors, preemptible).
    `walltime`: the requested time in seconds, counted from its start; a job still running
    then is killed and recorded COMPLETED_WALLTIME_REACHED (one that ends exactly at it
    completes). None: it asked for none and is never killed.
    """

    id: int | str
    arrival: float
    model: Model
    phases: int = 1
    reconfig_cost: float = 0.0
    teardown: float = 0.0
    release: float = 0.0
    resize_cost: ResizeCostFn | None = None
    startup: float = 0.0
    work_first: bool = False
    setup_work: float = 0.0
    pause: Callable[[int], float] | None = None
    size: int | None = None
    walltime: float | None = None

    def __post_init__(self) -> None:
        if self.size is not None and (type(self.size) is not int or self.size < 1):
            raise ValueError(f"job {self.id}: size must be an integer >= 1 (a rigid job's processors), got {self.size!r}")
        if self.walltime is not None and not (self.walltime > 0 and math.isfinite(self.walltime)):
            raise ValueError(f"job {self.id}: walltime must be a finite time > 0 in seconds, got {self.walltime}")
        if self.arrival < 0 or not math.isfinite(self.arrival):
            raise ValueError(f"job {self.id}: arrival must be a finite time >= 0, got {self.arrival}")
        if self.phases < 1:
            raise ValueError(f"job {self.id}: phases must be >= 1, got {self.phases}")
        for name in ("reconfig_cost", "teardown", "release", "startup", "setup_work"):
            value = getattr(self, name)
            if not (value >= 0 and math.isfinite(value)):
                raise ValueError(f"job {self.id}: {name} must be a finite time >= 0, got {value}")


JobSpec = Job

