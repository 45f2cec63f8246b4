"""A task graph run live: real processes on the workstations, messages over the shaped network."""
from __future__ import annotations

import pytest

from experiments.studies.menasce_rao.files import load_graph
from experiments.studies.menasce_rao.live import makespan_s, precedence_violations, run, task_argv, workstations_of
from scheduler.taskgraph.spec import TaskGraph


def scaled(graph: TaskGraph, demand_ref_s: float) -> TaskGraph:
    """The same graph with every task's demand set to `demand_ref_s` (a short live run)."""
    return TaskGraph.model_validate({
        "name": graph.name, "task": [{"name": t.name, "demand_ref_s": demand_ref_s} for t in graph.tasks],
        "arc": [{"from": a.source, "to": a.target, "bytes": a.size_bytes} for a in graph.arcs]})


def test_each_task_expects_its_predecessors_and_sends_to_its_successors():
    g = load_graph("wavefront")
    placement = {t.name: f"ws{i % 3 + 1}" for i, t in enumerate(g.tasks)}
    ips = {"ws1": "10.0.0.1", "ws2": "10.0.0.2", "ws3": "10.0.0.3"}
    argv = task_argv(g, placement, ips, "T2", 60.0)
    assert argv[:3] == ["chrt", "--idle", "0"]  # a guest: owners keep their priority
    expect = [argv[i + 1] for i, a in enumerate(argv) if a == "--expect"]
    sends = [argv[i + 1] for i, a in enumerate(argv) if a == "--send"]
    assert expect == list(g.pred["T2"])
    port = {t.name: 21000 + i for i, t in enumerate(g.tasks)}
    assert sends == [f"{ips[placement[s]]}:{port[s]}:40000" for s in g.succ["T2"]]


@pytest.mark.integration
def test_the_wavefront_runs_on_three_workstations_and_respects_every_arc(live_cluster):
    g = scaled(load_graph("wavefront"), 0.02)
    placement = {t.name: f"ws{i % 3 + 1}" for i, t in enumerate(g.tasks)}
    runs = run(live_cluster, g, placement, timeout_s=60.0)
    assert [r.task for r in runs] == [t.name for t in g.tasks]
    assert precedence_violations(g, runs) == []
    # messages between different workstations went over the network, in full
    crossing = [(a, r) for r in runs for a in r.arrivals if placement[a.source] != r.workstation]
    assert crossing and all(a.size_bytes == 40000 for a, _ in crossing)
    first = runs[0]
    assert first.start_s == pytest.approx(0.0, abs=0.5) and first.arrivals == ()
    assert 0 < makespan_s(runs) < 30
    # a raw-cap cluster has no reference speeds for the model: refused in one line
    with pytest.raises(ValueError, match=r"^workstation ws1: task graphs need a speed in reference cores"):
        workstations_of(live_cluster)
