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
    assert [r.id for r in runs] == [t.name for t in g.tasks] and {r.cls for r in runs} == {g.name}
    assert precedence_violations(g, runs) == []
    # messages between different workstations went over the network, in full
    crossing = [(a, r) for r in runs for a in r.extra.messages if placement[a.source] != r.extra.workstation]
    assert crossing and all(a.size_bytes == 40000 for a, _ in crossing)
    first = runs[0]
    assert first.start_s == pytest.approx(0.0, abs=0.5) and first.extra.messages == ()
    assert 0 < makespan_s(runs) < 30
    # a raw-cap cluster has no reference speeds for the model: refused in one line
    with pytest.raises(ValueError, match=r"^workstation ws1: task graphs need a speed in reference cores"):
        workstations_of(live_cluster)


def test_a_measured_timeline_that_breaks_an_arc_is_named():
    """Tasks as finished records (arrival 0, start when ready, finish when computed): an arc whose
    target started before its source finished, or with a short message, is one line each."""
    from experiments.studies.menasce_rao.live import MessageArrival, TaskPlace, task_run

    g = load_graph("wavefront")
    arc = g.arcs[0]
    runs = {t.name: task_run(t.name, g.name, 0.0, 1.0, TaskPlace("ws1", 1.0)) for t in g.tasks}
    runs[arc.target] = task_run(arc.target, g.name, 0.5, 2.0,
                                TaskPlace("ws2", 2.0, (MessageArrival(arc.source, 0.4, arc.size_bytes - 1),)))
    broken = precedence_violations(g, list(runs.values()))
    assert f"arc {arc.label}: {arc.size_bytes - 1} bytes arrived of {arc.size_bytes}" in broken
    assert any(line.startswith(f"arc {arc.label}: {arc.target} started at 0.500 s, before") for line in broken)
    assert makespan_s(list(runs.values())) == 2.0 and runs[arc.target].execution_s == 1.5
