"""Every per-job CSV nowlab writes starts with Batsim's jobs.csv columns, in Batsim's order, with
values true to the record; evalys (Batsim's analysis library) reads the file and plots it."""
from __future__ import annotations

import importlib.util

import pandas as pd
import pytest

from scheduler.engine import simulate
from scheduler.live import Arrival, LiveExecutor
from experiments.traces.live_inputs import job_class
from scheduler.model import Job, SevcikModel
from scheduler.results import BATSIM_JOB_COLUMNS
from workloads.host.launch import LocalLauncher

# Batsim's out_jobs.csv header as Batsim writes it, spelled out here rather than imported so that
# a change to results.py cannot move both sides at once.
BATSIM = ["job_id", "workload_name", "profile", "submission_time", "requested_number_of_resources",
          "requested_time", "success", "final_state", "starting_time", "execution_time", "finish_time",
          "waiting_time", "turnaround_time", "stretch", "allocated_resources", "consumed_energy", "metadata"]
OURS = ["preemptions", "mean_partition", "partition_sizes"]

# evalys is not a nowlab dependency (it pulls in seaborn and procset); only the reading check needs it.
needs_evalys = pytest.mark.skipif(importlib.util.find_spec("evalys") is None,
                                  reason="evalys not installed: the columns are checked, the evalys read is not")


def three_jobs():
    """Three overlapping jobs under FOLDING on 8 processors: job 0 is folded, job 2 unfolds."""
    jobs = [Job(0, 0.0, SevcikModel(8, 0, 0.1), phases=4),           # pmax ceil(sqrt(80)) = 9, capped at 8
            Job(1, 0.5, SevcikModel(4, 0, 0.1, pmax=2), phases=4),
            Job(2, 1.0, SevcikModel(6, 0, 0.05), phases=4)]
    return simulate(jobs, "FOLDING", P=8)


def test_the_constant_is_batsims_header():
    assert list(BATSIM_JOB_COLUMNS) == BATSIM


def test_simulator_frame_has_batsims_columns_in_order_then_ours():
    df = three_jobs().to_dataframe()
    assert list(df.columns) == BATSIM + OURS
    assert df.workload_name.tolist() == ["w0"] * 3
    assert df.profile.tolist() == ["SevcikModel"] * 3
    assert df.requested_number_of_resources.tolist() == [8, 2, 8]
    assert df.requested_time.tolist() == [-1.0] * 3
    assert df.success.tolist() == [1, 1, 1] and (df.final_state == "COMPLETED_SUCCESSFULLY").all()
    assert df.consumed_energy.tolist() == [-1.0] * 3
    # job 0 held 8 then 4: the column is the union, partition_sizes the history
    assert df.allocated_resources[0] == "0-7" and df.partition_sizes[0] == "8 4"
    assert df.preemptions[0] == 1


def test_success_flags_must_match_the_jobs():
    with pytest.raises(ValueError, match="success: 2 flags for 3 jobs"):
        three_jobs().to_dataframe(success=[True, False])
    df = three_jobs().to_dataframe(success=[True, False, True])
    assert df.success.tolist() == [1, 0, 1]
    assert df.final_state.tolist() == ["COMPLETED_SUCCESSFULLY", "COMPLETED_FAILED", "COMPLETED_SUCCESSFULLY"]


SHORT = job_class("short", {
    "argv": ["python3", "-m", "workloads.synthetic", "--phases", "3", "--mults", "200000"],
    "W": 2.0, "alpha": 0.3, "beta": 0.1, "pmax": 2,
})
BROKEN = job_class("broken", {"argv": ["python3", "-c", "import sys; sys.exit(3)"], "pmax": 2})


@pytest.mark.host_mpi
def test_live_frame_has_batsims_columns_and_the_true_outcome():
    """A real (local Open MPI, no containers) run of one good and one failing job."""
    result = LiveExecutor([Arrival(0, BROKEN, 0.0), Arrival(1, SHORT, 0.1)], "RA", LocalLauncher(),
                          ["ws1", "ws2"], "127.0.0.1", run_timeout_s=60, connect_timeout_s=30,
                          job_timeout_s=30).run()
    df = result.to_dataframe()
    assert list(df.columns) == BATSIM + OURS + ["status", "error", "overhead_s", "launch_via", "launch_s"]
    assert df.profile.tolist() == ["broken", "short"]
    assert df.requested_number_of_resources.tolist() == [2, 2]
    assert df.success.tolist() == [0, 1]
    assert df.final_state.tolist() == ["COMPLETED_FAILED", "COMPLETED_SUCCESSFULLY"]
    assert df.status.tolist() == ["failed", "done"]


@needs_evalys
def test_evalys_reads_and_plots_the_simulators_file(tmp_path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from evalys.jobset import JobSet

    path = tmp_path / "jobs.csv"
    three_jobs().to_dataframe().to_csv(path, index=False)
    js = JobSet.from_csv(str(path))
    assert js.df.jobID.tolist() == ["0", "1", "2"]  # evalys renames job_id
    assert [len(p) for p in js.df.allocated_resources] == [8, 2, 6]
    js.plot(with_details=True)
    plt.close("all")
    # what evalys computed from our columns: its queue counts requested processors while waiting
    assert js.queue["load"].max() == 2  # job 1 waited 0.4 s asking for 2
    assert pd.read_csv(path).columns.tolist()[:len(BATSIM)] == BATSIM
