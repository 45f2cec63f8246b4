"""Batsim workload files (docs/input-workload.rst, Batsim v4.2.1): jobs, delay,
parallel_homogeneous and nowlab profiles; each bad file one line naming the job or profile."""
from __future__ import annotations

import json

import pytest

from experiments.batsim import workload as w
from experiments.batsim.protocol import JobDescription

# The documentation's example profiles ("delay": 20.20; parallel_homogeneous cpu 10e6, com 1e6).
WORKLOAD = {
    "nb_res": 4,
    "jobs": [
        {"id": 2, "subtime": 5, "res": 4, "profile": "homogeneous", "walltime": 100, "queue": "big"},
        {"id": "1", "subtime": 0, "res": 1, "profile": "delay"},
        {"id": 3, "subtime": 5, "res": 2, "profile": "cg", "walltime": -1},
    ],
    "profiles": {
        "delay": {"type": "delay", "delay": 20.20},
        "homogeneous": {"type": "parallel_homogeneous", "cpu": 10e6, "com": 1e6},
        "cg": {"type": "nowlab", "program": "cg", "args": ["--iterations", "250"], "ret": 0},
    },
}


def write(tmp_path, body) -> str:
    path = tmp_path / "wl.json"
    path.write_text(json.dumps(body))
    return str(path)


def test_a_workload_reads_with_its_jobs_in_submit_order_and_typed_profiles(tmp_path):
    wl = w.read_workload(write(tmp_path, WORKLOAD))
    assert wl.nb_res == 4 and wl.name == "w0" and wl.path.endswith("wl.json")
    assert [j.id for j in wl.jobs] == ["w0!1", "w0!2", "w0!3"]  # by subtime; ties keep file order
    big = wl.jobs[1]
    assert (big.subtime_s, big.res, big.profile, big.walltime_s, big.extra) == (5.0, 4, "homogeneous", 100.0,
                                                                              {"queue": "big"})
    assert wl.jobs[2].walltime_s is None  # -1: no walltime
    assert wl.profiles == {"delay": w.DelayProfile("delay", 20.2),
                           "homogeneous": w.ParallelHomogeneousProfile("homogeneous", 10e6, 1e6),
                           "cg": w.NowlabProfile("cg", "cg", ("--iterations", "250"))}
    assert wl.profiles_json["cg"]["args"] == ["--iterations", "250"]  # as written, for SIMULATION_BEGINS
    assert big.description() == JobDescription(id="w0!2", subtime=5.0, res=4, profile="homogeneous", walltime=100.0)


def test_a_job_whose_profile_is_missing_is_one_line_naming_the_job(tmp_path):
    body = {**WORKLOAD, "jobs": WORKLOAD["jobs"] + [{"id": 9, "subtime": 1, "res": 1, "profile": "p9"}]}
    path = write(tmp_path, body)
    with pytest.raises(w.WorkloadError, match=r"wl\.json: job 'w0!9' \(jobs\[3\]\): profile 'p9' is not among the "
                                              r"workload's profiles \(cg, delay, homogeneous\)$"):
        w.read_workload(path)


@pytest.mark.parametrize(("change", "message"), [
    ({"nb_res": 0}, r"nb_res: must be an integer >= 1, got 0$"),
    ({"jobs": {}}, r"jobs: must be a list$"),
    ({"profiles": {"x": {"type": "composed", "seq": []}}},
     r"profile 'x': type 'composed' is not one nowlab runs \(delay, parallel_homogeneous, nowlab\)$"),
    ({"profiles": {"x": {"type": "delay", "delay": -1}}}, r"profile 'x': delay: must be a number >= 0, got -1$"),
    ({"profiles": {"x": {"type": "parallel_homogeneous", "cpu": 1}}}, r"profile 'x': com: must be a number >= 0"),
    ({"profiles": {"x": {"type": "nowlab", "program": "lammps"}}},
     r"profile 'x': program: 'lammps' is not one of the project's programs \(synthetic, cg, stencil\) nor "
     r"'command' \(a user's command in args\)$"),
    ({"profiles": {"x": {"type": "nowlab", "program": "cg", "args": "--iterations 5"}}},
     r"profile 'x': args: must be a list of strings"),
    ({"profiles": {"x": {"type": "delay", "delay": 1, "ret": "0"}}}, r"profile 'x': ret: must be an integer"),
])
def test_a_bad_workload_is_one_line_naming_the_field(tmp_path, change, message):
    body = {**WORKLOAD, **change}
    if "profiles" in change:
        body["jobs"] = []
    with pytest.raises(w.WorkloadError, match=message):
        w.read_workload(write(tmp_path, body))


@pytest.mark.parametrize(("job", "message"), [
    ({"id": 1, "subtime": -1, "res": 1, "profile": "delay"}, r"job 'w0!1' \(jobs\[0\]\): subtime: must be a number"),
    ({"id": 1, "subtime": 0, "res": 0, "profile": "delay"}, r"job 'w0!1' \(jobs\[0\]\): res: must be an integer >= 1"),
    ({"id": 1, "subtime": 0, "res": 1, "profile": "delay", "walltime": 0}, r"walltime: must be a number > 0"),
    ({"id": True, "subtime": 0, "res": 1, "profile": "delay"}, r"jobs\[0\]: id: must be a string or an integer"),
    ({"id": 1, "subtime": 0, "res": 1}, r"job 'w0!1' \(jobs\[0\]\): profile: must be a profile name, got None$"),
])
def test_a_bad_job_names_the_job_and_the_field(tmp_path, job, message):
    with pytest.raises(w.WorkloadError, match=message):
        w.read_workload(write(tmp_path, {**WORKLOAD, "jobs": [job]}))


def test_duplicate_ids_and_non_json_are_refused(tmp_path):
    jobs = [{"id": 1, "subtime": 0, "res": 1, "profile": "delay"}, {"id": "w0!1", "subtime": 1, "res": 1,
                                                                     "profile": "delay"}]
    with pytest.raises(w.WorkloadError, match=r"job 'w0!1' \(jobs\[1\]\): id given twice$"):
        w.read_workload(write(tmp_path, {**WORKLOAD, "jobs": jobs}))
    path = tmp_path / "bad.json"
    path.write_text("{\n  nb_res: 4}")
    with pytest.raises(w.WorkloadError, match=r"bad\.json: not JSON \(line 2, column 3: "):
        w.read_workload(path)


def test_the_nowlab_programs_are_the_projects_workloads():
    from workloads.host.profile import WORKLOADS
    assert set(w.PROGRAMS) == set(WORKLOADS)
    assert all(WORKLOADS[p] == f"workloads.{p}" for p in w.PROGRAMS)  # the module live.job_argv runs
