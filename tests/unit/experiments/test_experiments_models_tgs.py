"""TGS (Table 1) against timelines worked by hand, and the Monte Carlo of Fig. 2 around it."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from experiments.models.owner_trace import OwnerTrace
from experiments.models.tgs import GuestCount, Network, tgs
from experiments.models.tgs_montecarlo import MonteCarloSettings, monte_carlo
from experiments.studies.menasce_rao.files import load_graph, load_workstations
from scheduler.taskgraph.placement import POLICIES, get_policy, pvm_default
from scheduler.taskgraph.spec import TaskGraph
from scheduler.taskgraph.workstations import Owners, Workstation, select
from testbed.load.model import owner_utilization

NET = Network(bandwidth_bit_s=8_000_000)   # 100,000 bytes take 0.1 s
MSG = 100_000
OWNERS_125 = Owners(n=1, z_s=4.0, d_s=1.0)  # rho = 0.25: eq. 7 inflates by 1.25


def graph(demands: dict[str, float], arcs: list[tuple[str, str]]) -> TaskGraph:
    return TaskGraph.model_validate({
        "task": [{"name": k, "demand_ref_s": v} for k, v in demands.items()],
        "arc": [{"from": a, "to": b, "bytes": MSG} for a, b in arcs]})


FIG1 = graph({"T1": 1, "T2": 2, "T3": 1, "T4": 1, "T5": 1, "T6": 1, "T7": 1, "T8": 1, "T9": 1, "T10": 1},
             [("T1", "T2"), ("T1", "T3"), ("T2", "T4"), ("T2", "T5"), ("T3", "T6"), ("T3", "T7"),
              ("T4", "T8"), ("T5", "T8"), ("T6", "T9"), ("T7", "T9"), ("T8", "T10"), ("T9", "T10")])
FORK_JOIN = graph({"F": 1, "A": 2, "B": 1, "C": 1, "J": 1},
                  [("F", "A"), ("F", "B"), ("F", "C"), ("A", "J"), ("B", "J"), ("C", "J")])


def timeline(result) -> dict[str, tuple[str, float, float, int]]:
    return {t.task: (t.workstation, round(t.start_s, 9), round(t.finish_s, 9), t.guests) for t in result.timings}


def test_fig1_on_two_dedicated_workstations_by_hand():
    # Round robin from ws0: T1 ws0 [0, 1]; T2 ws1, T3 ws0 at 1.1; T3 ends first (2.1), so T6 ws1 and T7 ws0
    # start at 2.2, T6 beside T2 (P = 2); T2 ends 3.1: T4 ws1 (beside T6, P = 2), T5 ws0 alone (T7 ends
    # just as it starts) at 3.2; T9 at 4.3 on ws1 beside T4; T8 at 5.3 on ws0; T10 at 6.4 on ws1.
    ws = (Workstation(name="ws0", speed=1.0), Workstation(name="ws1", speed=1.0))
    r = tgs(FIG1, ws, pvm_default, NET)
    assert timeline(r) == {
        "T1": ("ws0", 0.0, 1.0, 1), "T2": ("ws1", 1.1, 3.1, 1), "T3": ("ws0", 1.1, 2.1, 1),
        "T6": ("ws1", 2.2, 4.2, 2), "T7": ("ws0", 2.2, 3.2, 1), "T4": ("ws1", 3.2, 5.2, 2),
        "T5": ("ws0", 3.2, 4.2, 1), "T9": ("ws1", 4.3, 6.3, 2), "T8": ("ws0", 5.3, 6.3, 1),
        "T10": ("ws1", 6.4, 7.4, 1)}
    assert r.makespan_s == pytest.approx(7.4)
    assert [t.task for t in r.timings] == ["T1", "T2", "T3", "T6", "T7", "T4", "T5", "T9", "T8", "T10"]


def test_fig1_with_owners_on_one_workstation_by_hand():
    # ws1's owners inflate its tasks by 1.25: T2 ends 1.1 + 2.5 = 3.6, after T7 (3.2); T6 (P = 2) 2.2 + 2.5;
    # T4 3.7 + 2.5 (beside T6); T9 at 4.8 beside T4: + 2.5; T8 at 6.3 on ws0; T10 7.4 + 1.25.
    ws = (Workstation(name="ws0", speed=1.0), Workstation(name="ws1", speed=1.0, owners=OWNERS_125))
    r = tgs(FIG1, ws, pvm_default, NET)
    assert timeline(r) == {
        "T1": ("ws0", 0.0, 1.0, 1), "T2": ("ws1", 1.1, 3.6, 1), "T3": ("ws0", 1.1, 2.1, 1),
        "T6": ("ws1", 2.2, 4.7, 2), "T7": ("ws0", 2.2, 3.2, 1), "T4": ("ws1", 3.7, 6.2, 2),
        "T5": ("ws0", 3.7, 4.7, 1), "T9": ("ws1", 4.8, 7.3, 2), "T8": ("ws0", 6.3, 7.3, 1),
        "T10": ("ws1", 7.4, 8.65, 1)}


def test_fork_join_without_and_with_owners_by_hand():
    ws = (Workstation(name="ws0", speed=1.0), Workstation(name="ws1", speed=1.0))
    # F ws0; A ws1, B ws0, C ws1 at 1.1: A and C share ws1 (P = 2): A 1.1 + 4, C 1.1 + 2, B 1.1 + 1; J ws0 at 5.2.
    assert timeline(tgs(FORK_JOIN, ws, pvm_default, NET)) == {
        "F": ("ws0", 0.0, 1.0, 1), "A": ("ws1", 1.1, 5.1, 2), "B": ("ws0", 1.1, 2.1, 1),
        "C": ("ws1", 1.1, 3.1, 2), "J": ("ws0", 5.2, 6.2, 1)}
    owned = tuple(w.model_copy(update={"owners": OWNERS_125}) for w in ws)  # every task x 1.25
    r = tgs(FORK_JOIN, owned, pvm_default, NET)
    assert timeline(r) == {
        "F": ("ws0", 0.0, 1.25, 1), "A": ("ws1", 1.35, 6.35, 2), "B": ("ws0", 1.35, 2.6, 1),
        "C": ("ws1", 1.35, 3.85, 2), "J": ("ws0", 6.45, 7.7, 1)}
    assert r.makespan_s == pytest.approx(7.7)


def test_literal_guest_count_follows_table_1_word_for_word():
    # A is first on ws1 when the loop reaches it, so P = 1; C comes second, P = 2; both end at 3.1.
    ws = (Workstation(name="ws0", speed=1.0), Workstation(name="ws1", speed=1.0))
    assert timeline(tgs(FORK_JOIN, ws, pvm_default, NET, guest_count=GuestCount.LITERAL)) == {
        "F": ("ws0", 0.0, 1.0, 1), "A": ("ws1", 1.1, 3.1, 1), "B": ("ws0", 1.1, 2.1, 1),
        "C": ("ws1", 1.1, 3.1, 2), "J": ("ws0", 3.2, 4.2, 1)}


def test_every_timeline_respects_every_arc_under_every_policy():
    ws = load_workstations("menasce-rao-classes").workstations
    for name in ("fig1", "wavefront", "small-then-large"):
        g = load_graph(name)
        for policy in ("pvm-default", "workstation-speed", "parallel-load-speed", "workstation-load-speed"):
            r = tgs(g, select(ws, 4), get_policy(policy), NET)
            at = {t.task: t for t in r.timings}
            assert set(at) == {t.name for t in g.tasks}
            for a in g.arcs:
                assert at[a.target].start_s >= at[a.source].finish_s + NET.transfer_s(a.size_bytes) - 1e-9


def test_speed_only_placement_loses_on_small_then_large():
    """§6: speed-only placement is poor when small tasks come first; demand-aware placement is not."""
    ws = (Workstation(name="slow", speed=0.1), Workstation(name="mid", speed=0.2), Workstation(name="fast", speed=0.3))
    g = load_graph("small-then-large")
    t = {p: tgs(g, ws, get_policy(p), NET).makespan_s for p in ("workstation-speed", "parallel-load-speed")}
    assert t["parallel-load-speed"] < t["workstation-speed"]


def test_monte_carlo_without_owners_is_the_deterministic_answer():
    ws = tuple(Workstation(name=f"ws{i}", speed=1.0) for i in range(2))
    det = tgs(FIG1, ws, pvm_default, NET).makespan_s
    mc = monte_carlo(FIG1, ws, pvm_default, NET, MonteCarloSettings(batch_size=2, min_batches=3))
    assert mc.mean_s == pytest.approx(det) and mc.half_width_s == 0.0
    assert mc.converged and mc.batches == 3
    assert {m.task: m.finish_s for m in mc.tasks}["T10"] == pytest.approx(det)


def test_monte_carlo_interval_covers_eq_7_for_one_long_task():
    # One task of 200 s on a workstation with owners N = 2, Z = 5, D = 1: eq. 7 gives 200 x 1.48 = 296 s.
    g = TaskGraph.model_validate({"task": [{"name": "T", "demand_ref_s": 200.0}]})
    ws = (Workstation(name="ws", speed=1.0, owners=Owners(n=2, z_s=5.0, d_s=1.0)),)
    det = tgs(g, ws, pvm_default).makespan_s
    assert det == pytest.approx(296.0)
    mc = monte_carlo(g, ws, pvm_default, settings=MonteCarloSettings(rel_width=0.02, seed=3))
    assert mc.converged and mc.rel_half_width <= 0.02
    # A 95% interval misses 1 time in 20, and the sample path adds about 0.5 s (an owner command may be
    # running at time 0; 2e4 draws gave 296.55 ± 0.12 s), so the check allows twice the half-width.
    assert abs(mc.mean_s - det) <= 2 * mc.half_width_s


def test_monte_carlo_is_seeded_and_reaches_its_interval_fast_on_the_wavefront():
    g = load_graph("wavefront")
    ws = select(load_workstations("menasce-rao-classes").workstations, 3, "LX", Owners(n=2, z_s=1.0, d_s=0.2))
    a = monte_carlo(g, ws, pvm_default, settings=MonteCarloSettings(seed=7))
    b = monte_carlo(g, ws, pvm_default, settings=MonteCarloSettings(seed=7))
    assert a.mean_s == b.mean_s and a.converged
    print(f"wavefront Monte Carlo: {a.mean_s:.2f} s ± {a.half_width_s:.2f} s in {a.elapsed_s:.2f} s")
    assert a.elapsed_s < 10.0


def test_an_owner_trace_leaves_the_guests_what_m_m_1_n_says():
    o = Owners(n=2, z_s=5.0, d_s=1.0)
    trace = OwnerTrace(o, np.random.default_rng(11))
    assert trace.busy_fraction(20_000.0) == pytest.approx(owner_utilization(2, 5.0, 1.0), abs=0.02)
    end = trace.finish_after(100.0, 50.0)
    assert end >= 150.0 and trace.finish_after(end, 0.0) == end


def test_network_refuses_nonsense():
    with pytest.raises(ValueError, match="bandwidth_bit_s"):
        Network(bandwidth_bit_s=0)
    with pytest.raises(ValueError, match="rel_width"):
        MonteCarloSettings(rel_width=0.0)


def test_monte_carlo_says_when_it_gave_up():
    ws = select(load_workstations("menasce-rao-classes").workstations, 1, "LX", Owners(n=2, z_s=1.0, d_s=0.2))
    mc = monte_carlo(load_graph("wavefront"), ws, pvm_default,
                     settings=MonteCarloSettings(rel_width=1e-6, batch_size=2, min_batches=2, max_batches=3))
    assert not mc.converged and mc.batches == 3 and mc.half_width_s > 0


@st.composite
def dags(draw):
    n = draw(st.integers(min_value=1, max_value=8))
    demands = draw(st.lists(st.floats(min_value=0.1, max_value=5.0), min_size=n, max_size=n))
    arcs = [(f"t{i}", f"t{j}") for j in range(n) for i in range(j) if draw(st.booleans())]
    g = TaskGraph.model_validate({
        "task": [{"name": f"t{i}", "demand_ref_s": d} for i, d in enumerate(demands)],
        "arc": [{"from": a, "to": b, "bytes": draw(st.integers(min_value=0, max_value=10**6))} for a, b in arcs]})
    speeds = draw(st.lists(st.floats(min_value=0.1, max_value=1.0), min_size=1, max_size=4))
    ws = tuple(Workstation(name=f"w{i}", speed=s) for i, s in enumerate(speeds))
    return g, ws


@settings(max_examples=60, deadline=None)
@given(dags(), st.sampled_from(sorted(POLICIES)), st.sampled_from(list(GuestCount)))
def test_any_dag_under_any_policy_gives_a_timeline_that_keeps_every_arc(case, policy, count):
    g, ws = case
    r = tgs(g, ws, get_policy(policy), NET, guest_count=count)
    at = {t.task: t for t in r.timings}
    speed = {w.name: w.speed_ref_cores for w in ws}
    assert set(at) == {t.name for t in g.tasks}
    for a in g.arcs:
        assert at[a.target].start_s >= at[a.source].finish_s + NET.transfer_s(a.size_bytes) - 1e-9
    for t in g.tasks:  # never faster than alone on its workstation, and P guests take P times as long
        x = at[t.name]
        assert x.finish_s - x.start_s == pytest.approx(x.guests * t.demand_ref_s / speed[x.workstation])
    assert r.makespan_s == pytest.approx(max(x.finish_s for x in r.timings))
