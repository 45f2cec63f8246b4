"""Menascé & Rao's Tables 2 and 3, live: the wave front on 1, 2 and 3 workstations of each class.

Each row runs `experiments/studies/menasce_rao/configs/wavefront.toml` on the first n workstations
of one class of `compose/specs/menasce-rao.toml` (PVM's default placement, as the paper's
validation: "the same type of workstation was used in each experiment to run all tasks"),
`reps` times, and predicts it with TGS and eq. 7 (the paper's T_mod) and with the Monte
Carlo of Fig. 2. Table 3 adds the paper's owners, N = 2 daemons of D = 1 s every Z = 5 s,
scaled in time like the tasks (1/5: Z = 1 s, D = 0.2 s), started on the row's
workstations for its runs only. The paper's own numbers (`paper.py`) are printed beside.

The model's speeds come three ways, each a column: the spec's (what the governor is asked
to hold), the meter's reading of the tasks' kernel over the row's runs, and a task profile
(`profile_speeds`): one task of the graph run alone on one workstation of each class before
the rows, as the paper's model takes each task's measured service demand on each type of
workstation. The profile is a separate run, never the row being predicted.
"""
from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from experiments.models.tgs import Network, TaskTiming, tgs
from experiments.models.tgs_montecarlo import MonteCarloSettings, monte_carlo
from experiments.studies.menasce_rao import owner_use
from experiments.studies.menasce_rao.paper import CLASSES, PAPER, TIME_SCALE
from experiments.studies.menasce_rao.files import load_graph
from experiments.studies.menasce_rao.live import TaskRun, makespan_s, precedence_violations, run, workstations_of
from scheduler.taskgraph.placement import get_policy
from scheduler.taskgraph.spec import TaskGraph
from scheduler.taskgraph.workstations import Owners, Workstation
from testbed import state
from testbed.cluster import Cluster
from testbed.meter import speed_over
from testbed.load import owners as owner_daemons
from testbed.spec import OwnerLoad

#: Table 3's owners as the paper ran them (N, Z s, D s), before time scaling.
PAPER_OWNERS = (2, 5.0, 1.0)
POLICY = "pvm-default"
#: The reference kernel the tasks run (workloads/taskgraph_task.py: the multiply loop).
TASK_KERNEL = "multiply"

Log = Callable[[str], None]


@dataclass(frozen=True)
class Row:
    table: int        # 2: no owners; 3: the paper's owners
    kind: str         # LX, SPARC5, SPARC20
    n: int            # workstations of that kind


@dataclass(frozen=True)
class RowResult:
    row: Row
    workstations: tuple[str, ...]
    measured_s: tuple[float, ...]     # one makespan per repetition
    tgs_s: float                      # TGS with eq. 7: the paper's T_mod
    monte_carlo_s: float | None       # Fig. 2's mean (None without owners: it equals TGS)
    monte_carlo_half_s: float | None
    # TGS again with each workstation's speed for the tasks' own kernel (multiply), as the meter
    # read it on its core over the row's runs: the governor holds the blend of the meter's
    # kernels, which ran the multiply loop ~11% below nominal here (None: no meter series)
    tgs_metered_s: float | None = None
    # TGS with each class's speed from the task profile (`profile_speeds`; None: not profiled)
    tgs_profiled_s: float | None = None
    # every task of every repetition as measured, and TGS's timing of each at the task-profiled
    # speeds (or the spec's): where a row's error comes from
    task_runs: tuple[tuple[TaskRun, ...], ...] = ()
    task_predicted: tuple[TaskTiming, ...] = ()
    # Table 3: the owners' measured U over the row's runs (mean over its workstations and runs),
    # as a share of the cores their demand is counted at (the nominal cap), and as a share of
    # the quota the governor actually gave (what a guest shares with them); None without owners
    owner_u_nominal: float | None = None
    owner_u_quota: float | None = None
    # TGS at the task-profiled speeds with eq. 7 at each workstation's measured U (of its quota)
    # instead of M/M/1//N's: the model's error once the owners' use is taken as measured
    tgs_owner_u_s: float | None = None

    @property
    def owner_u_error(self) -> float | None:
        if self.tgs_owner_u_s is None:
            return None
        return (self.tgs_owner_u_s - self.median_s) / self.median_s

    @property
    def median_s(self) -> float:
        return statistics.median(self.measured_s)

    @property
    def error(self) -> float:
        """Eq. 8 without the absolute value: (T_mod - T_meas) / T_meas."""
        return (self.tgs_s - self.median_s) / self.median_s

    @property
    def metered_error(self) -> float | None:
        if self.tgs_metered_s is None:
            return None
        return (self.tgs_metered_s - self.median_s) / self.median_s

    @property
    def profiled_error(self) -> float | None:
        if self.tgs_profiled_s is None:
            return None
        return (self.tgs_profiled_s - self.median_s) / self.median_s

    @property
    def paper(self) -> tuple[float | None, float, float | None]:
        """The paper's T_meas, T_mod and E% for this row (T_meas None where it has none)."""
        return PAPER[(self.row.table, self.row.kind, self.row.n)]


def rows(tables: Sequence[int], classes: Sequence[str] | None = None) -> list[Row]:
    """The tables' rows, all classes or only `classes` (to repeat the rows that miss)."""
    bad = [t for t in tables if t not in (2, 3)]
    if bad:
        raise ValueError(f"tables: {bad[0]} is not one of the paper's validation tables (2, 3)")
    unknown = [k for k in classes or () if k not in CLASSES]
    if unknown:
        raise ValueError(f"classes: unknown class {unknown[0]!r} (known: {', '.join(CLASSES)})")
    kinds = [k for k in CLASSES if classes is None or k in classes]
    return [Row(t, kind, n) for t in tables for kind in kinds for n in (1, 2, 3)]


def scaled_owners() -> OwnerLoad:
    n, z, d = PAPER_OWNERS
    return OwnerLoad(n=n, z=z * TIME_SCALE, d=d * TIME_SCALE)


#: Runs of the profile's task left out on each workstation: on a cluster just brought up the first
#: ones ran 10.8 and 8.9 s where the third and every table row ran 7.4 s (LX, 24 Nov), with
#: the governor's quota x factor already on 0.1: a warm-up of the workstation, not its speed.
WARMUP_RUNS = 2


def profile_speeds(cluster: Cluster, reps: int, *, log: Log = lambda _m: None,
                   classes: Sequence[str] | None = None) -> dict[str, float]:
    """Each class's delivered reference speed for the graph's task: one task alone on the class's
    first workstation, `reps` times, demand over the median time. No owners: the model inflates
    the dedicated demand itself (eq. 7)."""
    if reps < 1:
        raise ValueError(f"task profile reps: at least 1, got {reps}")
    task = load_graph("wavefront").tasks[0]
    one = TaskGraph(name="one-task", description="one wave-front task alone", tasks=(task,))
    out = {}
    for kind, names in CLASSES.items():
        if classes is not None and kind not in classes:
            continue
        times = [makespan_s(run(cluster, one, {task.name: names[0]})) for _ in range(WARMUP_RUNS + reps)]
        kept = times[WARMUP_RUNS:]
        out[kind] = task.demand_ref_s / statistics.median(kept)
        log(f"task profile, {kind} on {names[0]}: {', '.join(f'{t:.2f}' for t in times)} s "
            f"(the first {WARMUP_RUNS} left out); speed {out[kind]:.3f} reference cores")
    return out


def measure_row(cluster: Cluster, row: Row, reps: int, *, seed: int = 0, profiled: dict[str, float] | None = None,
                log: Log = lambda _m: None) -> RowResult:
    """Run one row `reps` times live and predict it; owners run on its workstations for Table 3 only.
    `profiled`: each class's speed from `profile_speeds`, for the third prediction."""
    graph = load_graph("wavefront")
    names = CLASSES[row.kind][:row.n]
    ws = {w.name: w for w in workstations_of(cluster)}
    missing = [n for n in names if n not in ws]
    if missing:
        raise ValueError(f"cluster {cluster.name}: no workstation {missing[0]} (bring up compose/specs/menasce-rao.toml)")
    owners = scaled_owners() if row.table == 3 else None
    model_ws = [ws[n].model_copy(update={"owners": Owners(n=owners.n, z_s=owners.z, d_s=owners.d)})
                if owners else ws[n] for n in names]
    policy = get_policy(POLICY)
    network = Network(bandwidth_bit_s=min(cluster.spec.egress(n) for n in names))
    predicted = tgs(graph, model_ws, policy, network)
    mc = monte_carlo(graph, model_ws, policy, network, MonteCarloSettings(seed=seed)) if owners else None
    placement = {t.task: t.workstation for t in predicted.timings}
    t0 = time.time()
    uses: list[owner_use.OwnerUse] = []
    task_runs = repeat_runs(cluster, graph, placement, {n: owners for n in names} if owners else {}, reps,
                            seed=seed, label=f"Table {row.table}, {row.n} {row.kind}", log=log, uses=uses)
    t1 = time.time()
    times = [makespan_s(runs) for runs in task_runs]
    u_nominal, u_of_quota = owner_shares(uses) if uses else (None, None)
    u_quota = owner_use.mean_of_quota(uses) if uses else None
    if u_nominal is not None and owners is not None:
        log(f"Table {row.table}, {row.n} {row.kind}: owners' U {u_nominal:.3f} of the nominal cap, "
            f"{'n/a' if u_quota is None else f'{u_quota:.3f}'} of the quota "
            f"(M/M/1//N: {owner_use.model_utilisation(owners):.3f})")
    metered = kernel_speeds(cluster, names, t0, t1)
    tgs_metered = None
    if metered is not None:
        tgs_metered = tgs(graph, with_speeds(model_ws, metered), policy, network).makespan_s
        log(f"Table {row.table}, {row.n} {row.kind}: multiply-kernel speeds "
            f"{', '.join(f'{n} {metered[n]:.3f}' for n in names)}; TGS with them {tgs_metered:.2f} s")
    tgs_profiled, timed, tgs_owner_u = None, predicted, None
    if profiled is not None:
        timed = tgs(graph, with_speeds(model_ws, {n: profiled[row.kind] for n in names}), policy, network)
        tgs_profiled = timed.makespan_s
        if u_of_quota is not None:  # eq. 7 at the owners' measured U: what is left once their use is right
            left = {n: profiled[row.kind] * (1.0 - u_of_quota[n]) for n in names}
            bare = [w.model_copy(update={"owners": None}) for w in model_ws]
            tgs_owner_u = tgs(graph, with_speeds(bare, left), policy, network).makespan_s
    return RowResult(row, tuple(names), tuple(times), predicted.makespan_s,
                     mc.mean_s if mc else None, mc.half_width_s if mc else None, tgs_metered, tgs_profiled,
                     tuple(task_runs), tuple(timed.timings), u_nominal, u_quota, tgs_owner_u)


def repeat_runs(cluster: Cluster, graph: TaskGraph, placement: Mapping[str, str], owners: Mapping[str, OwnerLoad],
                reps: int, *, seed: int = 0, label: str = "", log: Log = lambda _m: None,
                uses: list[owner_use.OwnerUse] | None = None) -> tuple[tuple[TaskRun, ...], ...]:
    """`reps` live runs of `graph` on `placement`, the owner daemons running on `owners`' workstations
    for these runs only; every task of each. A run that breaks a precedence arc is an error.
    `uses`, if given, gets each loaded workstation's owner utilisation over each run."""
    if reps < 1:
        raise ValueError(f"reps: at least 1, got {reps}")
    loaded = {n: o for n, o in owners.items() if o.n > 0}
    out: list[tuple[TaskRun, ...]] = []
    if loaded:
        owner_daemons.start(cluster, loaded, seed=seed)
    try:
        for rep in range(reps):
            before = owner_use.snapshot(cluster, list(loaded)) if loaded and uses is not None else None
            runs = run(cluster, graph, placement)
            shares = ""
            if before is not None and uses is not None:
                now = owner_use.between(cluster, before, owner_use.snapshot(cluster, list(loaded)))
                uses += now
                shares = "; owners' share of the quota " + ", ".join(
                    f"{u.workstation} {'n/a' if u.of_quota is None else f'{u.of_quota:.3f}'}" for u in now)
            broken = precedence_violations(graph, runs)
            if broken:
                raise RuntimeError(f"{label}: {broken[0]}")
            out.append(tuple(runs))
            log(f"{label}, rep {rep}: {makespan_s(runs):.2f} s{shares}")
    finally:
        if loaded:
            owner_daemons.stop(cluster, list(loaded))
    return tuple(out)


def with_speeds(workstations: Sequence[Workstation], speeds: dict[str, float]) -> list[Workstation]:
    """The same workstations at the given reference speeds (owners kept)."""
    return [w.model_copy(update={"speed_ref_cores": speeds[w.name]}) for w in workstations]


def kernel_speeds(cluster: Cluster, names: Sequence[str], t0: float, t1: float,
                  kernel: str = TASK_KERNEL) -> dict[str, float] | None:
    """Each workstation's delivered reference speed for `kernel` over [t0, t1] (epoch s), from
    the cluster's meter; None if any is not metered (the spec's speeds then stand alone)."""
    out = {}
    for n in names:
        got = speed_over(state.cluster_dir(cluster.name), n, t0, t1, kernel=kernel)
        if got.speed is None:
            return None
        out[n] = got.speed
    return out


def owner_shares(uses: Sequence[owner_use.OwnerUse]) -> tuple[float, dict[str, float] | None]:
    """The owners' mean U over `uses` as a share of the nominal cap, and each workstation's mean
    share of its quota (None when one has no quota record). Why both: the nominal cap is what
    the demand was counted at before the daemon read its cgroup's quota; a guest shares the
    quota the governor writes, which moves with the host's speed."""
    nominal = owner_use.mean_utilisation(uses)
    out = {}
    for n in sorted({u.workstation for u in uses}):
        mine = [u.of_quota for u in uses if u.workstation == n]
        if any(s is None for s in mine):
            return nominal, None
        out[n] = sum(mine) / len(mine)
    return nominal, out
