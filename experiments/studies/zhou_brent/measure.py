"""What a time-sharing run measured, as flat rows: S_e against β·S_d, shares, who ran when, skew, switch cost.

Pure: from a TimeshareRun (experiments/studies/zhou_brent/live.py) to the rows the report writes as CSV
and draws (experiments/studies/zhou_brent/report.py). Zhou & Brent §2: a job given utilisation ratio β
on p processors has effective speedup S_e(p) = β·S_d(p), S_d(p) = T_d(1) / T_d(p); measured,
S_e(p) = T_d(1) / T_e(p), with T_e(p) its time time-shared. Times of one workstation's
timeline are on its manager's clock, given here from that workstation's round 0.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace

from experiments.studies.zhou_brent.live import OS_ALONE, TimeshareRun, wait_of
from experiments.studies.zhou_brent.timeline import intervals, shares, whole_rounds

NAN = math.nan


@dataclass(frozen=True, slots=True)
class RunRow:
    spec: str
    resync: str
    every_rounds: int
    round_s: float
    run_s: float                 # first launch to last job done (host clock)
    lead_before_round0_s: float  # launch to round 0: the jobs ran unmanaged, all at once
    watchdog_bound_s: float
    dead_managers: str
    # "": T_d(1) and T_d(p) are this run's own dedicated runs (or it ran none); else the run
    # directory they were taken from (borrow_dedicated), the same spec on the same cluster
    dedicated_from: str = ""
    policy: str = "implicit"     # the local policy in the slots (the managers' default: implicit)
    drift_ppm: str = ""          # "ws1:200 ws2:-100": managers' clocks run off by this ("": none, one clock)
    wait: str = "polite"         # how the ranks waited on MPI: polite, spin, or per job "A:spin B:polite"

    @property
    def managers(self) -> bool:
        """Whether local managers ran: not under the OS-alone arm (resync "os"), whose run has no
        timeline, tables, skew or managers' rows. A property of `resync`, so the two cannot disagree."""
        return self.resync != OS_ALONE


@dataclass(frozen=True, slots=True)
class JobRow:
    job: str
    workstations: str            # space-separated, rank order
    p: int
    beta: float
    t_d1_s: float                # dedicated on one workstation (NaN: not run)
    t_dp_s: float                # dedicated on its p
    t_e_s: float                 # time-shared on its p
    s_d: float
    s_e_predicted: float         # beta * s_d
    s_e_measured: float          # t_d1 / t_e
    error: float                 # s_e_measured / s_e_predicted - 1
    same_answer: str             # yes, no, or - (no dedicated run to compare)


@dataclass(frozen=True, slots=True)
class ShareRow:
    workstation: str
    job: str
    beta: float
    share: float                 # its time holding the workstation over whole rounds while it ran
    rounds: int


@dataclass(frozen=True, slots=True)
class IntervalRow:
    workstation: str
    job: str                     # "" : no parallel job (sequential work only)
    start_s: float               # from that workstation's round 0, on its clock
    end_s: float


@dataclass(frozen=True, slots=True)
class TableRow:
    workstation: str
    slot: int
    process: str                 # "" : a dummy slot (sequential work)
    offset_s: float
    parallel_s: float
    sequential_s: float


@dataclass(frozen=True, slots=True)
class SkewRow:
    workstation: str
    kind: str                    # sample: measured at a timeline poll; correction: removed by a resync
    at_s: float                  # since round 0, global clock
    skew_s: float
    rtt_s: float                 # the clock estimate's round trip: its error is at most half of it


@dataclass(frozen=True, slots=True)
class ManagerRow:
    workstation: str
    switches: int
    switch_median_s: float       # slot end to the next process continued
    switch_p95_s: float
    switch_max_s: float
    wake_median_s: float         # slot end to the manager's timer awake
    cpu_s: float
    cpu_share: float             # cpu_s over round 0 to its last status (its CPU before round 0 counted: an upper bound)
    dead: bool


@dataclass(frozen=True, slots=True)
class RunRows:
    run: RunRow
    jobs: tuple[JobRow, ...]
    shares: tuple[ShareRow, ...]
    intervals: tuple[IntervalRow, ...]
    tables: tuple[TableRow, ...]
    skews: tuple[SkewRow, ...]
    managers: tuple[ManagerRow, ...]


def _none(x: float | None) -> float:
    return NAN if x is None else float(x)


def job_row(run: TimeshareRun, job: str) -> JobRow:
    program = next(p for p in run.programs if p.job == job)
    p = len(program.hosts)
    one = run.dedicated.get((job, 1))
    on_p = run.dedicated.get((job, p))
    t_d1_s = one.compute_s if one is not None else NAN
    t_dp_s = on_p.compute_s if on_p is not None else NAN
    same = run.answers_equal.get(job)
    return with_times(job, " ".join(program.hosts), p, program.beta, t_d1_s, t_dp_s, run.shared[job].compute_s,
                      "-" if same is None else ("yes" if same else "no"))


def with_times(job: str, workstations: str, p: int, beta: float, t_d1_s: float, t_dp_s: float, t_e_s: float,
               same_answer: str) -> JobRow:
    """A job's row from its three times: S_d = T_d(1)/T_d(p), predicted S_e = β·S_d, measured T_d(1)/T_e."""
    s_d = t_d1_s / t_dp_s
    predicted = beta * s_d
    measured = t_d1_s / t_e_s
    return JobRow(job, workstations, p, beta, t_d1_s, t_dp_s, t_e_s, s_d, predicted, measured,
                  measured / predicted - 1, same_answer)


class BorrowError(ValueError):
    """Dedicated times that do not belong to this run's jobs: one line naming the job."""


def borrow_dedicated(rows: RunRows, source: RunRows, source_name: str) -> RunRows:
    """This run's jobs with T_d(1) and T_d(p) taken from another run of the same jobs.

    A resync variant run with --no-dedicated shares the dedicated runs of the variant that
    made them: a job alone does not depend on how the others are time-shared, and running
    them again costs some 17 minutes a variant. The answers are not compared (same answer: -).
    """
    theirs = {j.job: j for j in source.jobs}
    jobs = []
    for j in rows.jobs:
        d = theirs.get(j.job)
        if d is None:
            raise BorrowError(f"{j.job}: not among {source_name}'s jobs ({', '.join(theirs) or 'none'})")
        if (d.workstations, d.p) != (j.workstations, j.p):
            raise BorrowError(f"{j.job}: ran on {j.workstations} here, on {d.workstations} in {source_name}")
        if math.isnan(d.t_d1_s) or math.isnan(d.t_dp_s):
            raise BorrowError(f"{j.job}: {source_name} has no dedicated times for it")
        jobs.append(with_times(j.job, j.workstations, j.p, j.beta, d.t_d1_s, d.t_dp_s, j.t_e_s, "-"))
    return replace(rows, run=replace(rows.run, dedicated_from=source_name), jobs=tuple(jobs))


def run_wait(run: TimeshareRun) -> str:
    """The run's wait mode: one word when every job waited alike, else each job's."""
    waits = {p.job: wait_of(p.argv) for p in run.programs}
    modes = set(waits.values())
    return modes.pop() if len(modes) == 1 else " ".join(f"{j}:{w}" for j, w in waits.items())


def measure_os_alone(run: TimeshareRun) -> RunRows:
    """A run with no managers: each job's times only (no round, no timeline, no tables, no skew)."""
    first_launch_s = min(r.launched_s for r in run.shared.values())
    last_done_s = max(r.done_s for r in run.shared.values())
    run_row = RunRow(run.spec_name, OS_ALONE, 0, NAN, last_done_s - first_launch_s, NAN, NAN, "", policy="",
                     wait=run_wait(run))
    return RunRows(run_row, tuple(job_row(run, p.job) for p in run.programs), (), (), (), (), ())


def measure(run: TimeshareRun) -> RunRows:
    live = run.live
    if live is None:
        return measure_os_alone(run)
    offsets = {s.workstation: s.offset_s for s in live.sent}
    last_done_s = max(r.done_s for r in run.shared.values())
    dead = {d.workstation for d in live.dead}
    beta = {p.job: p.beta for p in run.programs}

    share_rows, interval_rows = [], []
    for w, timeline in sorted(live.timelines.items()):
        local0_s = live.local_anchor_s(w)
        end_local_s = last_done_s + offsets[w]
        done_local_s = {job: r.done_s + offsets[w] for job, r in run.shared.items()}
        for iv in intervals(timeline, end_local_s):  # cut at round 0: what ran before it was unmanaged
            if iv.end_s <= local0_s:
                continue
            start_s = max(iv.start_s, local0_s)
            # a job's slot after its end is sequential time (its manager may log no switch for it)
            cut_s = min(iv.end_s, max(start_s, done_local_s.get(iv.job, iv.end_s))) if iv.job else iv.end_s
            if cut_s > start_s:
                interval_rows.append(IntervalRow(w, iv.job or "", start_s - local0_s, cut_s - local0_s))
            if cut_s < iv.end_s:
                interval_rows.append(IntervalRow(w, "", cut_s - local0_s, iv.end_s - local0_s))
        for job in live.tables[w].processes:
            if w in dead:
                continue
            try:
                start_s, stop_s = whole_rounds(local0_s, live.round_s, local0_s, run.shared[job].done_s + offsets[w])
            except ValueError:  # ended within its first round: no whole round to measure over
                continue
            share_rows.append(ShareRow(w, job, beta[job], shares(timeline, start_s, stop_s).get(job, 0.0),
                                       round((stop_s - start_s) / live.round_s)))

    table_rows = [TableRow(w, i, s.process or "", s.offset_s, s.parallel_s, s.sequential_s)
                  for w, t in sorted(live.tables.items()) for i, s in enumerate(t.slots, start=1)]
    skew_rows = [SkewRow(s.workstation, "sample", s.at_s - live.anchor_s, s.skew_s, s.rtt_s) for s in live.skews]
    skew_rows += [SkewRow(s.workstation, "correction", s.sent_s - live.anchor_s, s.correction_s, _none(s.rtt_s))
                  for s in live.syncs if s.correction_s is not None]
    managers = []
    for w in sorted(live.tables):
        st = live.statuses.get(w)
        if st is None:
            managers.append(ManagerRow(w, 0, NAN, NAN, NAN, NAN, NAN, NAN, w in dead))
            continue
        elapsed_s = st.now_s - live.local_anchor_s(w)
        managers.append(ManagerRow(w, st.switches, _none(st.latency.median_s), _none(st.latency.p95_s),
                                   _none(st.latency.max_s), _none(st.wake_late.median_s), st.cpu_s,
                                   st.cpu_s / elapsed_s if elapsed_s > 0 else NAN, w in dead))
    first_launch_s = min(r.launched_s for r in run.shared.values())
    run_row = RunRow(run.spec_name, live.resync.kind.value, live.resync.every_rounds, live.round_s,
                     last_done_s - first_launch_s, live.anchor_s - first_launch_s, live.watchdog_bound_s,
                     " ".join(sorted(dead)), policy=live.policy or "implicit",
                     drift_ppm=" ".join(f"{w}:{d:g}" for w, d in sorted(run.drift_ppm.items()) if d),
                     wait=run_wait(run))
    jobs = tuple(job_row(run, p.job) for p in run.programs)
    return RunRows(run_row, jobs, tuple(share_rows), tuple(interval_rows), tuple(table_rows),
                   tuple(sorted(skew_rows, key=lambda r: (r.workstation, r.at_s))), tuple(managers))
