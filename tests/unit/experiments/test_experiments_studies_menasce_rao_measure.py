"""The live part the figures and the placement comparison share: repeated runs with the owner daemons
started for them and stopped after (on the shared integration cluster; the lead's run exercises the rest)."""
from __future__ import annotations

import pytest

from experiments.studies.menasce_rao.measure import run_reps
from experiments.studies.menasce_rao.owner_use import OwnerUse
from experiments.studies.menasce_rao.files import load_graph
from scheduler.taskgraph.spec import TaskGraph
from testbed.spec import OwnerLoad


def test_reps_below_one_are_refused_before_anything_starts():
    with pytest.raises(ValueError, match="^reps: at least 1, got 0$"):
        run_reps(None, load_graph("wavefront"), {}, {}, 0)  # type: ignore[arg-type]  # nothing is touched


@pytest.mark.integration
def test_each_rep_is_timed_with_the_owners_running_and_they_stop_after(live_cluster):
    g = load_graph("small-then-large")
    short = TaskGraph.model_validate({
        "name": g.name, "task": [{"name": t.name, "demand_ref_s": 0.01} for t in g.tasks],
        "arc": [{"from": a.source, "to": a.target, "bytes": a.size_bytes} for a in g.arcs]})
    placement = {t.name: ("ws1", "ws2", "ws3")[i % 3] for i, t in enumerate(short.tasks)}
    logged: list[str] = []
    uses: list[OwnerUse] = []
    times = run_reps(live_cluster, short, placement, {"ws1": OwnerLoad(n=1, z=0.5, d=0.05)}, 2, seed=1,
                     label="short", log=logged.append, uses=uses)
    assert len(times) == 2 and all(0 < t < 30 for t in times)
    # the owners' share of ws1 over each run: M/M/1//1 gives 0.05 / 0.55 = 0.09; a run of a few
    # seconds holds a handful of bursts, so only its range is checked
    assert [u.workstation for u in uses] == ["ws1", "ws1"] and all(0 < u.utilisation < 0.6 for u in uses)
    assert [m.split(":")[0] for m in logged] == ["short, rep 0", "short, rep 1"]
    assert live_cluster.exec("ws1", ["pgrep", "-f", "agents/owner.py"]).exit_code == 1  # the daemon is gone
