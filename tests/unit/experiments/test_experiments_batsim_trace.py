"""The messages of one short simulated run, checked field by field against Batsim's protocol documentation.

The reference is docs/protocol.rst at tag v4.2.1 of oar-team/batsim; the field lists below are
copied from it (section named beside each), not from nowlab's encoder. The run is a scripted
scheduler (tests/batsim_scripted_scheduler.py, mode choreo) that sends every decision kind once:
w0!1 (2 resources, 10 s) runs on 0-1 with metadata and asks for a call 4 s later, where it kills
w0!1; w0!2 (1 resource, 5 s) runs on 2; w0!3 (8 resources, wider than the machine) is rejected.
"""
from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest

from batsim_harness import scheduler, write_workload
from experiments.traces.intervals import parse_intervals
from experiments.batsim.platform import uniform
from experiments.batsim.run import read_input, serve

PROFILES = {"d10": {"type": "delay", "delay": 10}, "d5": {"type": "delay", "delay": 5}}
JOBS = [{"id": 1, "subtime": 1, "res": 2, "profile": "d10", "walltime": 100},
        {"id": 2, "subtime": 2, "res": 1, "profile": "d5"},
        {"id": 3, "subtime": 3, "res": 8, "profile": "d5"}]

# "Message Composition" / "Constraints"
MESSAGE_KEYS = {"now", "events"}
EVENT_KEYS = {"timestamp", "type", "data"}
# "SIMULATION_BEGINS": data fields, config keys (its example), a compute resource's fields
BEGINS_KEYS = {"nb_resources", "nb_compute_resources", "nb_storage_resources", "allow_compute_sharing",
               "allow_storage_sharing", "config", "compute_resources", "storage_resources", "workloads", "profiles"}
CONFIG_KEYS = {"redis-enabled", "redis-hostname", "redis-port", "redis-prefix", "profiles-forwarded-on-submission",
               "dynamic-jobs-enabled", "dynamic-jobs-acknowledged", "profile-reuse-enabled", "sched-config",
               "forward-unknown-events"}
RESOURCE_KEYS = {"id", "name", "state", "properties", "zone_properties"}
RESOURCE_STATES = {"sleeping", "idle", "computing", "switching_on", "switching_off"}
# "JOB_SUBMITTED" (without redis, profiles not forwarded): job_id and the job's description;
# subtime is pybatsim's addition (it reads job["subtime"])
SUBMITTED_JOB_KEYS = {"profile", "res", "id", "walltime", "subtime"}
# "JOB_COMPLETED"
COMPLETED_KEYS = {"job_id", "job_state", "return_code", "alloc"}
JOB_STATES = {"NOT_SUBMITTED", "SUBMITTED", "RUNNING", "COMPLETED_SUCCESSFULLY", "COMPLETED_FAILED",
              "COMPLETED_WALLTIME_REACHED", "COMPLETED_KILLED", "REJECTED"}
# "JOB_KILLED" (with progress); "NOTIFY"; "REQUESTED_CALL" and "SIMULATION_ENDS" (data: None, `{}`)
KILLED_KEYS = {"job_ids", "job_progress"}


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("trace")
    path = write_workload(tmp / "w.json", JOBS, PROFILES)
    with scheduler("scripted", "choreo", tmp) as (endpoint, proc):
        outcome = serve(read_input(path), uniform(4), endpoint=endpoint, timeout_s=10, out_dir=tmp / "out",
                        keep_messages=True)
        assert proc.wait(timeout=10) == 0
    lines = [json.loads(line) for line in Path(outcome.messages_jsonl).read_text().splitlines()]
    sent = [json.loads(x["text"]) for x in lines if x["direction"] == "to_scheduler"]
    replies = [json.loads(x["text"]) for x in lines if x["direction"] == "to_batsim"]
    return outcome, sent, replies, path


def test_the_run_ends_cleanly(run):
    outcome, sent, replies, _ = run
    assert outcome.error is None and len(sent) == len(replies) == outcome.stats.messages


def test_the_sequence_of_messages(run):
    _, sent, _, _ = run
    got = [(m["now"], [(e["type"], e["data"].get("job_id", e["data"].get("type"))) for e in m["events"]])
           for m in sent]
    assert got == [
        (0.0, [("SIMULATION_BEGINS", None)]),
        (1.0, [("JOB_SUBMITTED", "w0!1")]),
        (2.0, [("JOB_SUBMITTED", "w0!2")]),
        (3.0, [("JOB_SUBMITTED", "w0!3"), ("NOTIFY", "no_more_static_job_to_submit")]),
        (5.0, [("REQUESTED_CALL", None)]),
        (5.0, [("JOB_COMPLETED", "w0!1"), ("JOB_KILLED", None)]),
        (7.0, [("JOB_COMPLETED", "w0!2")]),
        (7.0, [("SIMULATION_ENDS", None)]),
    ]


def test_every_message_keeps_the_constraints(run):
    _, sent, _, _ = run
    for m in sent:
        assert set(m) == MESSAGE_KEYS and isinstance(m["now"], float) and isinstance(m["events"], list)
        stamps = [e["timestamp"] for e in m["events"]]
        assert stamps == sorted(stamps) and all(t <= m["now"] for t in stamps)
        for e in m["events"]:
            assert set(e) == EVENT_KEYS and isinstance(e["timestamp"], float) and isinstance(e["data"], dict)


def test_simulation_begins(run):
    _, sent, _, path = run
    (e,) = sent[0]["events"]
    d = e["data"]
    assert set(d) == BEGINS_KEYS and set(d["config"]) == CONFIG_KEYS
    assert (d["nb_resources"], d["nb_compute_resources"], d["nb_storage_resources"]) == (4, 4, 0)
    assert d["allow_compute_sharing"] is False and d["storage_resources"] == []
    assert d["config"]["dynamic-jobs-enabled"] is False and d["config"]["profiles-forwarded-on-submission"] is False
    for i, r in enumerate(d["compute_resources"]):
        assert set(r) == RESOURCE_KEYS and r["id"] == i and r["state"] in RESOURCE_STATES
        assert r["name"] == f"ws{i}"
        assert all(isinstance(v, str) for v in r["properties"].values())  # SimGrid properties are strings
        assert float(r["properties"]["speed"]) == 1e9 and r["properties"]["speed_ref_cores"] == "1"
    # "the key is the unique id of the workload and the value is the absolute path of the workload"
    assert d["workloads"] == {"w0": str(path.resolve())} and Path(d["workloads"]["w0"]).is_absolute()
    assert d["profiles"] == {"w0": PROFILES}


def test_job_submitted(run):
    _, sent, _, _ = run
    events = [e for m in sent for e in m["events"] if e["type"] == "JOB_SUBMITTED"]
    assert [e["timestamp"] for e in events] == [1.0, 2.0, 3.0]
    for e, job in zip(events, JOBS):
        d = e["data"]
        assert set(d) == {"job_id", "job"}  # no "profile": profiles are not forwarded
        assert d["job_id"] == d["job"]["id"] == f"w0!{job['id']}"  # WORKLOAD!JOB_NAME
        assert set(d["job"]) == SUBMITTED_JOB_KEYS - ({"walltime"} if "walltime" not in job else set())
        assert (d["job"]["res"], d["job"]["profile"], d["job"]["subtime"]) == (job["res"], job["profile"],
                                                                             job["subtime"])


def test_job_completed_and_killed(run):
    _, sent, _, _ = run
    done = [e for m in sent for e in m["events"] if e["type"] == "JOB_COMPLETED"]
    for e in done:
        assert set(e["data"]) == COMPLETED_KEYS and e["data"]["job_state"] in JOB_STATES
        assert isinstance(e["data"]["return_code"], int)
        parse_intervals(e["data"]["alloc"])  # an interval set
    assert [(e["timestamp"], e["data"]["job_id"], e["data"]["job_state"], e["data"]["alloc"]) for e in done] == \
           [(5.0, "w0!1", "COMPLETED_KILLED", "0-1"), (7.0, "w0!2", "COMPLETED_SUCCESSFULLY", "2")]
    assert done[1]["data"]["return_code"] == 0
    (killed,) = [e for m in sent for e in m["events"] if e["type"] == "JOB_KILLED"]
    d = killed["data"]
    assert set(d) == KILLED_KEYS and d["job_ids"] == ["w0!1"]  # "correspond to those requested in KILL_JOB"
    progress = d["job_progress"]["w0!1"]
    # "a progress value in ]0, 1[ ... The profile name is also given": killed at 5 of its 1 + 10 s
    assert progress["profile"] == "d10" and math.isclose(progress["progress"], 0.4) and 0 < progress["progress"] < 1


def test_call_notify_and_end_carry_what_the_documentation_says(run):
    _, sent, _, _ = run
    by_type = {e["type"]: e for m in sent for e in m["events"]}
    assert by_type["REQUESTED_CALL"]["timestamp"] == 5.0 and by_type["REQUESTED_CALL"]["data"] == {}
    assert by_type["NOTIFY"]["data"] == {"type": "no_more_static_job_to_submit"}
    assert by_type["SIMULATION_ENDS"]["data"] == {} and sent[-1]["events"] == [by_type["SIMULATION_ENDS"]]


def test_the_decisions_show_in_the_jobs_file(run):
    outcome, _, replies, _ = run
    kinds = {e["type"] for r in replies for e in r["events"]}
    assert kinds == {"EXECUTE_JOB", "SET_JOB_METADATA", "CALL_ME_LATER", "REJECT_JOB", "KILL_JOB"}
    jobs = pd.read_csv(outcome.jobs_csv, keep_default_na=False).set_index("job_id")
    assert jobs.loc[1, "metadata"] == 'tagged, "by" choreo' and jobs.loc[1, "final_state"] == "COMPLETED_KILLED"
    assert float(jobs.loc[1, "execution_time"]) == 4.0 and jobs.loc[3, "final_state"] == "REJECTED"
    assert jobs.loc[3, "starting_time"] == "" and jobs.loc[2, "allocated_resources"] == "2"


def test_a_decision_stamped_later_takes_effect_then(tmp_path):
    """A decision's timestamp is when it takes effect, and a reply's now holds the next message back
    ("the scheduler finished making its decisions at timestamp now")."""
    path = write_workload(tmp_path / "w.json", [{"id": 1, "subtime": 1, "res": 2, "profile": "d5"},
                                                {"id": 2, "subtime": 1.5, "res": 2, "profile": "d5"}], PROFILES)
    with scheduler("scripted", "later", tmp_path) as (endpoint, _):
        outcome = serve(read_input(path), uniform(4), endpoint=endpoint, timeout_s=10, out_dir=tmp_path / "out",
                        keep_messages=True)
    assert outcome.error is None
    lines = map(json.loads, Path(outcome.messages_jsonl).read_text().splitlines())
    sent = [json.loads(x["text"]) for x in lines if x["direction"] == "to_scheduler"]
    # the reply to t=1 came at now 3: w0!2's submission (1.5) is sent then, with its own timestamp;
    # w0!1 starts at 2 and w0!2 (decided at 3, reply now 5) at 4, as stamped
    assert [(m["now"], [e["timestamp"] for e in m["events"]]) for m in sent] == [
        (0.0, [0.0]), (1.0, [1.0]), (3.0, [1.5, 1.5]), (7.0, [7.0]), (9.0, [9.0]), (9.0, [9.0])]
    jobs = pd.read_csv(outcome.jobs_csv).set_index("job_id")
    assert (jobs.starting_time[1], jobs.finish_time[1], jobs.starting_time[2], jobs.finish_time[2]) == (2, 7, 4, 9)
