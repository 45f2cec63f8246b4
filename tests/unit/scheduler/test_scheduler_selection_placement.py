"""A policy's processors chosen by machine selection (scheduler.selection.placement)."""
from __future__ import annotations

import itertools
import math
import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scheduler.actions import Action, Resize
from scheduler.alloc import grow, shrink
from scheduler.availability import Availability
from scheduler.engine import simulate
from scheduler.invariants import check_timeline
from scheduler.model import Job, SevcikModel
from scheduler.policies.ra import RA
from scheduler.policy import Policy
from scheduler.registry import get_policy
from scheduler.selection import SubsetSummary
from scheduler.selection.placement import SelectingPolicy, choose, profile_predictor
from scheduler.selection.registry import algorithm_names
from scheduler.snapshot import JobView, Reason, Snapshot
from scheduler.state_machine import SchedulerState, TrackedJob

GBIT = 1e9
P = 8
LOADED = (0, 1)  # 30% of their CPU left to guests
CONGESTED = (2, 3)  # their link carries traffic: 50 Mbit/s of 1 Gbit/s left


def loaded_cluster() -> Availability:
    cpu = tuple(0.3 if i in LOADED else 1.0 for i in range(P))
    bw = np.full((P, P), 1 * GBIT)
    bw[CONGESTED] = bw[CONGESTED[::-1]] = 0.05 * GBIT
    return Availability(cpu, None, bw)


def sevcik(pmax: int | None = None) -> SevcikModel:
    return SevcikModel(W=80.0, alpha=0.5, beta=0.0, pmax=pmax)


def snapshot(state: SchedulerState, reason: Reason, subject: JobView | None,
             availability: Availability | None) -> Snapshot:
    return Snapshot(0.0, state.P, reason, subject, state.free, state.running, state.preempting,
                    state.preempted, state.queue, availability)


def queued(state: SchedulerState, job_id: int, pmax: int) -> TrackedJob:
    job = TrackedJob(job_id, len(state.by_id), 0.0, sevcik(pmax), state.P)
    state.admit(job)
    return job


def avoids_the_load(procs: tuple[int, ...]) -> bool:
    return not set(LOADED) & set(procs) and not set(CONGESTED) <= set(procs)


@pytest.mark.parametrize("algorithm", algorithm_names())
def test_wrapped_ra_starts_on_unloaded_workstations_and_avoids_the_congested_pair(algorithm):
    state = SchedulerState(RA(), P)
    job = queued(state, 0, pmax=4)
    plain = RA().decide(snapshot(state, Reason.ARRIVAL, job, loaded_cluster()))
    assert plain[0].procs == (0, 1, 2, 3)  # lowest-numbered first: both loaded ones and the congested pair
    wrapped = SelectingPolicy(RA(), algorithm, budget_s=0.05, seed=3)
    (start,) = wrapped.decide(snapshot(state, Reason.ARRIVAL, job, loaded_cluster()))
    assert len(start.procs) == 4 and avoids_the_load(start.procs), start.procs
    assert wrapped.last[0].predicted_s == pytest.approx(sevcik().T(4))  # unloaded: the profile's time


def test_two_starts_in_one_decision_share_the_free_set_without_overlap():
    state = SchedulerState(RA(), P)
    a, b = queued(state, 0, pmax=8), queued(state, 1, pmax=8)  # RA: target P/2 = 4 each
    actions = SelectingPolicy(RA(), "BRUTE").decide(snapshot(state, Reason.ARRIVAL, a, loaded_cluster()))
    first, second = actions
    assert (first.job, second.job) == (a.id, b.id)
    assert avoids_the_load(first.procs)  # the earlier job gets the good four
    assert sorted(first.procs + second.procs) == list(range(P))


@pytest.mark.parametrize("pacing", ["speeds", "availability"])
def test_engine_with_selection_finishes_sooner_than_plain_ra_on_the_loaded_cluster(pacing):
    """The engine runs a job at its slowest member's speed (times its owners' availability), so
    plain RA's lowest-numbered set is held back by the loaded workstations."""
    slow = [0.3 if i in LOADED else 1.0 for i in range(P)]
    jobs = [Job(0, 0.0, sevcik(pmax=4), phases=4)]
    plain = simulate(jobs, "RA", P, **{pacing: slow})
    wrapped = simulate(jobs, get_policy("RA+BRUTE"), P, **{pacing: slow})
    t_plain, t_wrapped = plain.jobs[0].finish, wrapped.jobs[0].finish
    assert t_wrapped == pytest.approx(sevcik().T(4))
    assert t_wrapped < 0.5 * t_plain, (t_wrapped, t_plain)
    assert not set(LOADED) & set(wrapped.jobs[0].allocations[0])  # the engine gives no links: CPU decides


class ResizeOnAck(Policy):
    """Resizes the job that acknowledged to a fixed size, as the paper's policies place (alloc)."""

    name = "RESIZE-ON-ACK"

    def __init__(self, size: int) -> None:
        self.size = size

    def decide(self, snap: Snapshot) -> list[Action]:
        job = snap.subject
        if snap.reason is not Reason.ACK or job is None:
            return []
        if self.size < len(job.procs):
            return [Resize(job.id, shrink(job.procs, self.size))]
        free = set(snap.free)
        return [Resize(job.id, grow(job.procs, free, self.size - len(job.procs)))]


def preempted_on(procs: tuple[int, ...], pmax: int = P) -> tuple[SchedulerState, TrackedJob]:
    state = SchedulerState(RA(), P)
    job = queued(state, 0, pmax)
    state.start(job, procs)
    state.preempt(job)
    state.ack(job)
    return state, job


@pytest.mark.parametrize("algorithm", ["BRUTE", "DP", "BE"])
def test_a_growing_job_keeps_its_own_set_and_adds_the_best_free_ones(algorithm):
    state, job = preempted_on((4, 5, 6))
    plain = ResizeOnAck(5).decide(snapshot(state, Reason.ACK, job, loaded_cluster()))
    assert set(plain[0].procs) & {2, 3}  # alloc.grow takes the nearest: 3, then 2 or 7
    (resize,) = SelectingPolicy(ResizeOnAck(5), algorithm).decide(snapshot(state, Reason.ACK, job, loaded_cluster()))
    assert {4, 5, 6} <= set(resize.procs) and len(resize.procs) == 5
    assert avoids_the_load(resize.procs), resize.procs  # 7 and one of 2, 3


def test_a_resize_keeps_the_jobs_own_set_when_it_is_the_best():
    """The job holds the four unloaded workstations 4-7; a same-size restart stays, and a
    shrink keeps members of its own set."""
    state, job = preempted_on((4, 5, 6, 7))
    (same,) = SelectingPolicy(ResizeOnAck(4), "BRUTE").decide(snapshot(state, Reason.ACK, job, loaded_cluster()))
    assert same.procs == (4, 5, 6, 7)
    state, job = preempted_on((1, 2, 3, 4, 5))
    (cut,) = SelectingPolicy(ResizeOnAck(3), "BRUTE").decide(snapshot(state, Reason.ACK, job, loaded_cluster()))
    assert set(cut.procs) <= {1, 2, 3, 4, 5} and avoids_the_load(cut.procs), cut.procs
    assert ResizeOnAck(3).decide(snapshot(state, Reason.ACK, job, loaded_cluster()))[0].procs == (1, 2, 3)


@pytest.mark.parametrize("algorithm", ["SA", "GA", "BE"])
def test_the_time_budget_is_honoured(algorithm):
    """300 workstations: none of these finishes in 50 ms, and each stops within one evaluation of it.

    The bound is on this thread's CPU time: the budget is a wall clock, so a host busy with the
    suite's containers can only shorten the CPU a search spends, never lengthen it; a search that
    ignored its budget would spend seconds."""
    rng = np.random.default_rng(5)
    n = 300
    bw = rng.uniform(0.1, 1.0, (n, n)) * GBIT
    bw = np.minimum(bw, bw.T)
    availability = Availability(tuple(rng.uniform(0.1, 1.0, n)), None, bw)
    job = JobView(0, 0, 0.0, sevcik(), n)
    budget_s = 0.05
    predict = profile_predictor()(job, availability)
    cpu0 = time.thread_time()
    placed = choose(availability, range(n), 40, predict, algorithm, budget_s)
    cpu_s = time.thread_time() - cpu0
    assert not placed.selection.finished
    assert placed.selection.evaluations >= 1
    assert cpu_s <= budget_s + 0.25  # plus fitting the set to 40 and building the problem
    assert len(placed.procs) == 40


def test_no_availability_gives_the_inner_policys_choice_exactly():
    state = SchedulerState(RA(), P)
    a = queued(state, 0, pmax=3)
    queued(state, 1, pmax=3)
    inner = RA().decide(snapshot(state, Reason.ARRIVAL, a, None))
    assert SelectingPolicy(RA(), "BE").decide(snapshot(state, Reason.ARRIVAL, a, None)) == inner
    jobs = [Job(i, 2.0 * i, sevcik(pmax=3), phases=2) for i in range(6)]
    plain, wrapped = simulate(jobs, "RA", P), simulate(jobs, "RA+BE", P)  # no speeds: the engine shows None
    assert wrapped.timeline == plain.timeline and wrapped.jobs == plain.jobs


@settings(max_examples=25, deadline=None)
@given(cpu=st.lists(st.sampled_from([0.2, 0.5, 0.8, 1.0]), min_size=4, max_size=7),
       congested=st.lists(st.tuples(st.integers(0, 6), st.integers(0, 6)), max_size=4),
       p=st.integers(1, 7), kept=st.integers(0, 3), algorithm=st.sampled_from(["BRUTE", "DP", "BE"]))
def test_the_set_has_p_members_and_brute_force_is_the_size_p_optimum(cpu, congested, p, kept, algorithm):
    n = len(cpu)
    p = min(p, n)
    keep = tuple(range(min(kept, p)))
    bw = np.full((n, n), 1 * GBIT)
    for i, j in congested:
        if i < n and j < n and i != j:
            bw[i, j] = bw[j, i] = 0.1 * GBIT
    availability = Availability(tuple(cpu), None, bw)
    predict = profile_predictor()(JobView(0, 0, 0.0, sevcik(), n), availability)
    placed = choose(availability, range(n), p, predict, algorithm, budget_s=1.0, keep=keep)
    assert len(placed.procs) == p and set(keep) <= set(placed.procs)
    if algorithm == "BRUTE":
        def exact(procs):
            idx = np.array(procs)
            links = bw[np.ix_(idx, idx)][~np.eye(len(idx), dtype=bool)]
            mean = bw[idx[0]][np.arange(n) != idx[0]].mean()
            return predict(SubsetSummary(p, min(cpu[i] for i in procs), links.min() if links.size else mean))
        rest = [i for i in range(n) if i not in keep]
        best = min(exact(keep + extra) for extra in itertools.combinations(rest, p - len(keep)))
        assert placed.predicted_s == pytest.approx(best)


def test_bad_input_is_one_line_naming_the_field():
    with pytest.raises(ValueError, match=r"^select: unknown algorithm 'XX'; known: SA, GA, DP, BE, BRUTE, SA-FIG1, GA-FIG2$"):
        get_policy("RA+XX")
    with pytest.raises(ValueError, match="^select_budget_s: 0 is not"):
        get_policy("RA", select="BE", select_budget_s=0.0)
    with pytest.raises(ValueError, match="^unknown policy"):
        get_policy("NOPE+BE")
    with pytest.raises(ValueError, match=r"^availability.cpu\[2\]: 0.0 is not in \(0, 1\]$"):
        Availability((1.0, 1.0, 0.0))
    with pytest.raises(ValueError, match="^availability: no AvgAvailCPU for workstation ws3$"):
        Availability.from_names(["ws1", "ws2", "ws3"], {"ws1": 0.5, "ws2": 1.0})
    with pytest.raises(ValueError, match="^availability: no AvgAvailBW for link ws1-ws3$"):
        Availability.from_names(["ws1", "ws2", "ws3"], {"ws1": 0.5, "ws2": 1.0, "ws3": 1.0},
                                {("ws1", "ws2"): 1e9, ("ws3", "ws2"): 1e9})
    state = SchedulerState(RA(), P)
    job = queued(state, 0, pmax=2)
    with pytest.raises(ValueError, match="^availability: 3 workstations for P=8$"):
        SelectingPolicy(RA(), "DP").decide(snapshot(state, Reason.ARRIVAL, job, Availability((1.0,) * 3)))


def test_from_names_takes_each_links_lower_direction_and_clips_the_monitors_noise():
    availability = Availability.from_names(["a", "b"], {"a": 1.04, "b": 0.0}, {("a", "b"): 5e8, ("b", "a"): 4e8})
    assert availability.cpu[0] == 1.0 and 0 < availability.cpu[1] < 0.01
    assert availability.bw_bit_s[0, 1] == availability.bw_bit_s[1, 0] == 4e8
    assert math.isinf(availability.bw_bit_s[0, 0])


@pytest.mark.parametrize(("name", "resizes"), [("EQUI", True), ("FOLDING", True), ("AEP(2)", False),
                                               ("DYN-EQUI", True)])
def test_policies_run_wrapped_within_the_rules(name, resizes):
    """Starts, shrinks and grows rewritten by the selection still keep the state machine's rules
    (free processors, the subset restriction) and the timeline's invariants."""
    rng = np.random.default_rng(11)
    jobs = [Job(i, float(t), SevcikModel(W=float(w), alpha=0.2, beta=0.05), phases=4, reconfig_cost=0.1)
            for i, (t, w) in enumerate(zip(np.cumsum(rng.exponential(3.0, 12)), rng.uniform(10, 60, 12)))]
    speeds = [0.4, 1.0, 0.7, 1.0, 1.0, 0.5, 1.0, 1.0]
    policy = get_policy(name, select="DP")
    result = simulate(jobs, policy, P, speeds=speeds)
    assert check_timeline(result.timeline, P, jobs=[job.id for job in jobs]) == []
    assert policy.searches > 0
    assert any(e.event == "resize" for e in result.timeline) == resizes


def test_engine_shows_the_owner_schedule_as_it_steps():
    """An owner holds workstation 0 (10% left) from t=0 to t=50: a job arriving meanwhile avoids
    it, where plain RA takes it (lowest-numbered first); after the burst it counts again."""
    schedule = [[(0.0, 0.1), (50.0, 1.0)], [], [], []]
    jobs = [Job(0, 1.0, sevcik(pmax=2)), Job(1, 100.0, sevcik(pmax=4))]
    plain = simulate(jobs, "RA", 4, schedule=schedule)
    wrapped = simulate(jobs, "RA+BRUTE", 4, schedule=schedule)
    assert plain.jobs[0].allocations[0] == (0, 1)
    assert 0 not in wrapped.jobs[0].allocations[0]
    assert wrapped.jobs[0].finish < plain.jobs[0].finish
    assert wrapped.jobs[1].allocations[0] == (0, 1, 2, 3)


@pytest.mark.host_mpi
def test_live_executor_shows_the_providers_availability_to_the_policy():
    """Real MPI jobs on this host (workloads.host.launch.LocalLauncher): ws1 and ws2 loaded, the job
    of two goes to ws3 and ws4, and the provider is asked before each policy call."""
    from scheduler.live import Arrival, LiveExecutor
    from experiments.traces.live_inputs import job_class
    from scheduler.live.audit import audit
    from workloads.host.launch import LocalLauncher

    hosts = ["ws1", "ws2", "ws3", "ws4"]
    pair = job_class("pair", {"argv": ["python3", "-m", "workloads.synthetic", "--phases", "2",
                                       "--mults", "500000", "--redist-bytes", "1024"],
                              "W": 2.0, "alpha": 0.3, "beta": 0.1, "pmax": 2})
    asked = []

    def monitor() -> Availability:
        asked.append(True)
        return Availability.from_names(hosts, {"ws1": 0.2, "ws2": 0.3, "ws3": 1.0, "ws4": 0.95})

    arrivals = [Arrival(0, pair, 0.0)]
    result = LiveExecutor(arrivals, "RA+BRUTE", LocalLauncher(), hosts, "127.0.0.1", run_timeout_s=60,
                          connect_timeout_s=30, job_timeout_s=30, availability=monitor).run()
    # every check, the replay too: a decision records the availability its policy saw
    assert audit(result, arrivals) == []
    assert [e.procs for e in result.timeline if e.event == "start"] == [(2, 3)]
    assert asked and result.states[0].status == "done"
