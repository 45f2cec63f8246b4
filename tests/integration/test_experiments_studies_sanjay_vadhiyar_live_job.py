"""The live experiment's job path with the host's own Open MPI: the CG and stencil workloads run on
exactly the set given, through the live executor, and a run past its timeout is recorded, not raised."""
from __future__ import annotations

import pytest

from experiments.studies.sanjay_vadhiyar.live import run_job
from experiments.studies.sanjay_vadhiyar.live_inputs import LiveApp
from experiments.studies.sanjay_vadhiyar.live_records import compute_s, ran
from workloads.host.launch import LocalLauncher

pytestmark = pytest.mark.host_mpi  # real jobs on this host's Open MPI


@pytest.mark.parametrize("application, size", [("cg", 300), ("stencil", 64)])
def test_a_chosen_set_runs_and_its_loop_time_is_kept(application, size):
    run = run_job(LocalLauncher(), "127.0.0.1", LiveApp(application, 5), size, ["ws2", "ws5"], f"t-sv-{application}",
                  timeout_s=120)
    assert run.outcome.status == "done", run.outcome.error
    assert 0 < compute_s(run.outcome) <= run.outcome.execution_s
    assert run.span is not None and run.span[1] - run.span[0] == pytest.approx(run.outcome.execution_s)


def test_a_run_past_its_timeout_is_recorded():
    run = run_job(LocalLauncher(), "127.0.0.1", LiveApp("cg", 100_000), 300, ["ws1", "ws2"], "t-sv-timeout",
                  timeout_s=3)
    assert run.outcome.status == "timeout" and "still going after 3 s" in run.outcome.error
    assert run.span is None and not ran(run.outcome)
