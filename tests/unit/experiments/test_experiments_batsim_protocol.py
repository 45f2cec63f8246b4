"""The Batsim protocol codec against its documentation and against what pybatsim 3.2.1 reads.

The quoted messages are the examples of Batsim's docs/protocol.rst at tag v4.2.1 (oar-team/batsim),
the Batsim 4 JSON protocol that pybatsim 3.2.1 speaks; where an example is not valid JSON as
printed (trailing commas in "Message Composition" and EXECUTE_JOB) the comment says so and the
JSON is the example with the comma removed.
"""
from __future__ import annotations

import json

import pytest

from experiments.batsim import protocol as p

# --- docs/protocol.rst examples, Batsim -> scheduler ------------------------------------------------

DOC_SIMULATION_BEGINS = """
  {
    "now": 0,
    "events": [
      {
        "timestamp": 0,
        "type": "SIMULATION_BEGINS",
        "data": {
          "nb_resources": 4,
          "nb_compute_resources": 4,
          "nb_storage_resources": 0,
          "allow_compute_sharing": false,
          "allow_storage_sharing": true,
          "config": {
            "redis-enabled": false,
            "redis-hostname": "127.0.0.1",
            "redis-port": 6379,
            "redis-prefix": "default",
            "profiles-forwarded-on-submission": false,
            "dynamic-jobs-enabled": false,
            "dynamic-jobs-acknowledged": false,
            "profile-reuse-enabled": false,
            "sched-config": "Scheduler-specific configuration. In this instance, just a meaningless example string.",
            "forward-unknown-events": false
          },
          "compute_resources": [
            {"id": 0, "name": "Bourassa", "state": "idle", "properties": {"role": ""}, "zone_properties": {}},
            {"id": 1, "name": "Fafard", "state": "idle", "properties": {"role": ""}, "zone_properties": {}},
            {"id": 2, "name": "Ginette", "state": "idle", "properties": {"role": ""}, "zone_properties": {}},
            {"id": 3, "name": "Jupiter", "state": "idle", "properties": {"role": ""}, "zone_properties": {}}
          ],
          "storage_resources": [],
          "workloads": {
            "w0": "/home/carni/proj/batsim/workloads/test_various_profile_types.json"
          },
          "profiles": {
            "w0": {
              "homogeneous": {"type": "parallel_homogeneous", "cpu": 10000000, "com": 1000000},
              "delay": {"type": "delay", "delay": 20.2}
            }
          }
        }
      }
    ]
  }
"""  # the example's profile list shortened to two of its profiles
DOC_JOB_SUBMITTED = """{"timestamp": 10.0, "type": "JOB_SUBMITTED", "data": {"job_id": "dyn!my_new_job",
  "job": {"profile": "delay_10s", "res": 1, "id": "dyn!my_new_job", "walltime": 12.0},
  "profile": {"type": "delay", "delay": 10}}}"""  # "without redis and with forwarded profiles"
DOC_JOB_COMPLETED = """{"timestamp": 80.087881, "type": "JOB_COMPLETED", "data": {"job_id": "26dceb!4",
  "job_state": "COMPLETED_SUCCESSFULLY", "return_code": 0, "alloc": "0-3"}}"""
DOC_JOB_KILLED = """{"timestamp": 10.0, "type": "JOB_KILLED", "data": {"job_ids": ["w0!1", "w0!2", "w0!3"],
  "job_progress": {"w0!1": {"profile": "my_simple_profile", "progress": 0.52},
                   "w0!2": {"profile": "my_sequence_profile", "current_task_index": 1,
                            "current_task": {"profile": "my_simple_profile", "progress": 0.2}}}}}"""
DOC_REQUESTED_CALL = """{"timestamp": 25.5, "type": "REQUESTED_CALL", "data": {}}"""
DOC_SIMULATION_ENDS = """{"timestamp": 100.0, "type": "SIMULATION_ENDS", "data": {}}"""
DOC_NOTIFY_NO_MORE = """{"timestamp": 23.50, "type": "NOTIFY", "data": { "type": "no_more_static_job_to_submit" }}"""

# --- docs/protocol.rst examples, scheduler -> Batsim ------------------------------------------------

DOC_COMPOSITION = """{"now": 1024.24, "events": [
  {"timestamp": 1000, "type": "EXECUTE_JOB", "data": {"job_id": "workload!job_1234", "alloc": "1 2 4-8"}},
  {"timestamp": 1012, "type": "EXECUTE_JOB", "data": {"job_id": "workload!job_1235", "alloc": "12-100"}}]}"""
DOC_REJECT_JOB = """{"timestamp": 10.0, "type": "REJECT_JOB", "data": { "job_id": "w12!45" }}"""
DOC_EXECUTE_JOB = """{"timestamp": 10.0, "type": "EXECUTE_JOB", "data": {"job_id": "w12!45", "alloc": "2-3",
  "mapping": {"0": "0", "1": "0", "2": "1", "3": "1"}, "storage_mapping": {"pfs": 2}}}"""
DOC_CALL_ME_LATER = """{"timestamp": 10.0, "type": "CALL_ME_LATER", "data": {"timestamp": 25.5}}"""
DOC_KILL_JOB = """{"timestamp": 10.0, "type": "KILL_JOB", "data": {"job_ids": ["w0!1", "w0!2"]}}"""
DOC_REGISTER_JOB = """{"timestamp": 10.0, "type": "REGISTER_JOB", "data": {"job_id": "dyn!my_new_job",
  "job": {"profile": "delay_10s", "res": 1, "id": "dyn!my_new_job", "walltime": 12.0}}}"""
DOC_REGISTER_PROFILE = """{"timestamp": 10.0, "type": "REGISTER_PROFILE", "data": {"workload_name": "dyn_wl1",
  "profile_name": "delay_10s", "profile": {"type": "delay", "delay": 10}}}"""
DOC_SET_JOB_METADATA = """{"timestamp": 13.0, "type": "SET_JOB_METADATA", "data": {"job_id": "wload!42",
  "metadata": "scheduler-defined string"}}"""
DOC_NOTIFY_REGISTRATION = """{"timestamp": 42.0, "type": "NOTIFY", "data": { "type": "registration_finished" }}"""


def one(event: str, direction: str, now: float = 1e9, **kw) -> p.Event:
    (decoded,) = p.decode(f'{{"now": {now}, "events": [{event}]}}', direction=direction, **kw).events
    return decoded


def test_simulation_begins_as_documented_decodes_and_encodes_back_field_for_field():
    message = p.decode(DOC_SIMULATION_BEGINS, direction="to_scheduler")
    (begins,) = message.events
    assert isinstance(begins, p.SimulationBegins) and message.now == 0 and begins.timestamp == 0
    assert [(r.id, r.name, r.state, dict(r.properties)) for r in begins.resources] == [
        (0, "Bourassa", "idle", {"role": ""}), (1, "Fafard", "idle", {"role": ""}),
        (2, "Ginette", "idle", {"role": ""}), (3, "Jupiter", "idle", {"role": ""})]
    assert begins.config.sched_config.startswith("Scheduler-specific") and begins.config.redis_port == 6379
    assert begins.allow_storage_sharing is True and begins.allow_compute_sharing is False
    assert begins.profiles["w0"]["delay"] == {"type": "delay", "delay": 20.2}
    assert json.loads(p.encode(message)) == json.loads(DOC_SIMULATION_BEGINS)  # every field, every value


def test_batsim_events_as_documented():
    # The documented job has no subtime, but pybatsim 3.2.1 reads job["subtime"] (Job.from_json_dict)
    # and would stop with a KeyError: the codec asks for it, and what nowlab sends always has it.
    with pytest.raises(p.ProtocolError, match=r"^message: events\[0\] \(JOB_SUBMITTED\): data\.job: "
                                              r"data\.subtime: missing$"):
        one(DOC_JOB_SUBMITTED, "to_scheduler")
    with_subtime = DOC_JOB_SUBMITTED.replace('"res": 1,', '"res": 1, "subtime": 10.0,')
    submitted = one(with_subtime, "to_scheduler")
    assert submitted == p.JobSubmitted(timestamp=10.0, job=p.JobDescription(
        id="dyn!my_new_job", subtime=10.0, res=1, profile="delay_10s", walltime=12.0),
        profile={"type": "delay", "delay": 10})
    assert submitted.to_json() == json.loads(with_subtime)
    completed = one(DOC_JOB_COMPLETED, "to_scheduler")
    assert completed == p.JobCompleted(timestamp=80.087881, job_id="26dceb!4", job_state="COMPLETED_SUCCESSFULLY",
                                       return_code=0, alloc=(0, 1, 2, 3))
    assert completed.to_json() == json.loads(DOC_JOB_COMPLETED)
    killed = one(DOC_JOB_KILLED, "to_scheduler")
    assert killed.job_ids == ("w0!1", "w0!2", "w0!3") and killed.job_progress["w0!1"]["progress"] == 0.52
    assert killed.to_json() == json.loads(DOC_JOB_KILLED)
    for doc, cls in ((DOC_REQUESTED_CALL, p.RequestedCall), (DOC_SIMULATION_ENDS, p.SimulationEnds)):
        event = one(doc, "to_scheduler")
        assert type(event) is cls and event.to_json() == json.loads(doc)
    notify = one(DOC_NOTIFY_NO_MORE, "to_scheduler")
    assert notify == p.Notify(timestamp=23.5, type="no_more_static_job_to_submit")
    assert notify.to_json() == json.loads(DOC_NOTIFY_NO_MORE)


def test_decisions_as_documented():
    message = p.decode(DOC_COMPOSITION, direction="to_batsim")  # the example without its trailing commas
    assert message.now == 1024.24 and [(e.job_id, e.alloc) for e in message.events] == [
        ("workload!job_1234", (1, 2, 4, 5, 6, 7, 8)), ("workload!job_1235", tuple(range(12, 101)))]
    # written back canonically: "1 2 4-8" names the set whose canonical string is "1-2 4-8"
    assert json.loads(p.encode(message)) == json.loads(DOC_COMPOSITION.replace('"1 2 4-8"', '"1-2 4-8"'))
    assert one(DOC_REJECT_JOB, "to_batsim") == p.RejectJob(timestamp=10.0, job_id="w12!45")
    execute = one(DOC_EXECUTE_JOB, "to_batsim")  # without the trailing comma; storage_mapping is not kept
    assert execute == p.ExecuteJob(timestamp=10.0, job_id="w12!45", alloc=(2, 3),
                                   mapping={"0": "0", "1": "0", "2": "1", "3": "1"})
    assert one(DOC_CALL_ME_LATER, "to_batsim") == p.CallMeLater(timestamp=10.0, at_s=25.5)
    assert one(DOC_KILL_JOB, "to_batsim") == p.KillJob(timestamp=10.0, job_ids=("w0!1", "w0!2"))
    with pytest.raises(p.ProtocolError, match=r"REGISTER_JOB\): data\.job: data\.subtime: missing$"):
        one(DOC_REGISTER_JOB, "to_batsim")  # pybatsim's register_job always sends subtime
    registered = one(DOC_REGISTER_JOB.replace('"res": 1,', '"res": 1, "subtime": 10.0,'), "to_batsim")
    assert registered.job.id == "dyn!my_new_job" and registered.job.walltime == 12.0
    assert one(DOC_REGISTER_PROFILE, "to_batsim") == p.RegisterProfile(
        timestamp=10.0, workload_name="dyn_wl1", profile_name="delay_10s", profile={"type": "delay", "delay": 10})
    assert one(DOC_SET_JOB_METADATA, "to_batsim") == p.SetJobMetadata(timestamp=13.0, job_id="wload!42",
                                                                       metadata="scheduler-defined string")
    assert one(DOC_NOTIFY_REGISTRATION, "to_batsim") == p.Notify(timestamp=42.0, type="registration_finished")
    for doc in (DOC_REJECT_JOB, DOC_CALL_ME_LATER, DOC_KILL_JOB, DOC_REGISTER_PROFILE, DOC_SET_JOB_METADATA,
                DOC_NOTIFY_REGISTRATION):
        assert one(doc, "to_batsim").to_json() == json.loads(doc)


def test_what_pybatsim_sends_decodes():
    # batsim/batsim.py of pybatsim 3.2.1: execute_job, reject_jobs_by_id, kill_jobs, wake_me_up_at,
    # set_job_metadata (str(metadata)), notify_registration_finished, register_profiles, register_job
    reply = {"now": 5.0, "events": [
        {"timestamp": 5.0, "type": "EXECUTE_JOB", "data": {"job_id": "w0!1", "alloc": "0-1"}},
        {"timestamp": 5.0, "type": "REJECT_JOB", "data": {"job_id": "w0!2"}},
        {"timestamp": 5.0, "type": "KILL_JOB", "data": {"job_ids": ["w0!3"]}},
        {"timestamp": 5.0, "type": "CALL_ME_LATER", "data": {"timestamp": 7.5}},
        {"timestamp": 5.0, "type": "SET_JOB_METADATA", "data": {"job_id": "w0!4", "metadata": "{'nb_resubmit': 1}"}},
        {"timestamp": 5.0, "type": "REGISTER_PROFILE", "data": {"workload_name": "w0", "profile_name": "d",
                                                                "profile": {"type": "delay", "delay": 3}}},
        {"timestamp": 5.0, "type": "REGISTER_JOB", "data": {"job_id": "w0!4#1", "job": {
            "profile": "d", "id": "w0!4#1", "res": 2, "walltime": -1, "subtime": 5.0}}},
        {"timestamp": 5.0, "type": "NOTIFY", "data": {"type": "registration_finished"}}]}
    message = p.decode(json.dumps(reply), direction="to_batsim", label="reply 3", machine_size=4)
    assert [type(e).__name__ for e in message.events] == [
        "ExecuteJob", "RejectJob", "KillJob", "CallMeLater", "SetJobMetadata", "RegisterProfile", "RegisterJob",
        "Notify"]
    assert message.events[6].job.walltime is None  # pybatsim's -1: no walltime
    assert p.decode('{"now": 3, "events": []}', direction="to_batsim").events == ()  # an empty reply


def test_a_short_run_field_by_field_as_the_documentation_specifies():
    """One run's messages as nowlab sends them: two jobs on two resources, FCFS replies."""
    resources = (p.Resource(0, "ws0", properties={"speed": "1.0"}), p.Resource(1, "ws1", properties={"speed": "0.5"}))
    job1 = p.JobDescription(id="w0!1", subtime=0.0, res=2, profile="d10", walltime=20.0)
    job2 = p.JobDescription(id="w0!2", subtime=0.0, res=1, profile="d10")
    sent = [
        p.Message(0.0, (p.SimulationBegins(timestamp=0.0, resources=resources, workloads={"w0": "/tmp/w.json"},
                                           profiles={"w0": {"d10": {"type": "delay", "delay": 10}}}),)),
        p.Message(0.0, (p.JobSubmitted(timestamp=0.0, job=job1), p.JobSubmitted(timestamp=0.0, job=job2),
                        p.Notify(timestamp=0.0, type="no_more_static_job_to_submit"))),
        p.Message(10.0, (p.JobCompleted(timestamp=10.0, job_id="w0!1", job_state="COMPLETED_SUCCESSFULLY",
                                        return_code=0, alloc=(0, 1)),)),
        p.Message(20.0, (p.JobCompleted(timestamp=20.0, job_id="w0!2", job_state="COMPLETED_SUCCESSFULLY",
                                        return_code=0, alloc=(0,)),)),
        p.Message(20.0, (p.SimulationEnds(timestamp=20.0),)),
    ]
    wire = [json.loads(p.encode(m)) for m in sent]
    for m in wire:  # "now" float, "events" array; each event timestamp, type and data; now >= timestamps
        assert set(m) == {"now", "events"} and all(set(e) == {"timestamp", "type", "data"} for e in m["events"])
        assert all(e["timestamp"] <= m["now"] for e in m["events"])
    begins = wire[0]["events"][0]["data"]
    assert set(begins) == {"nb_resources", "nb_compute_resources", "nb_storage_resources", "allow_compute_sharing",
                           "allow_storage_sharing", "config", "compute_resources", "storage_resources", "workloads",
                           "profiles"}  # SIMULATION_BEGINS' documented fields
    assert (begins["nb_resources"], begins["nb_compute_resources"], begins["nb_storage_resources"]) == (2, 2, 0)
    assert begins["compute_resources"][1] == {"id": 1, "name": "ws1", "state": "idle",
                                              "properties": {"speed": "0.5"}, "zone_properties": {}}
    assert set(begins["config"]) >= {"profiles-forwarded-on-submission", "dynamic-jobs-enabled",
                                     "dynamic-jobs-acknowledged", "forward-unknown-events"}  # what pybatsim reads
    assert begins["profiles"] == {"w0": {"d10": {"type": "delay", "delay": 10}}}
    submitted = wire[1]["events"]
    assert submitted[0]["data"] == {"job_id": "w0!1", "job": {"id": "w0!1", "subtime": 0.0, "res": 2,
                                                              "profile": "d10", "walltime": 20.0}}
    assert submitted[1]["data"]["job"] == {"id": "w0!2", "subtime": 0.0, "res": 1, "profile": "d10"}
    assert submitted[2] == {"timestamp": 0.0, "type": "NOTIFY", "data": {"type": "no_more_static_job_to_submit"}}
    assert wire[2]["events"][0]["data"] == {"job_id": "w0!1", "job_state": "COMPLETED_SUCCESSFULLY",
                                            "return_code": 0, "alloc": "0-1"}  # JOB_COMPLETED's four fields
    assert wire[4]["events"] == [{"timestamp": 20.0, "type": "SIMULATION_ENDS", "data": {}}]
    for m, text in zip(sent, map(p.encode, sent)):  # and each decodes back to itself
        assert p.decode(text, direction="to_scheduler") == m
    # the scheduler's replies: FCFS starts job 1 on both resources, then job 2 on resource 0
    reply = p.decode('{"now": 0.0, "events": [{"timestamp": 0.0, "type": "EXECUTE_JOB", '
                     '"data": {"job_id": "w0!1", "alloc": "0-1"}}]}', direction="to_batsim", machine_size=2)
    assert reply.events == (p.ExecuteJob(timestamp=0.0, job_id="w0!1", alloc=(0, 1)),)


def test_job_killed_always_carries_progress_as_pybatsim_reads_it():
    killed = p.JobKilled(timestamp=3.0, job_ids=("w0!1",))  # a job that finished before the kill
    assert killed.to_json()["data"] == {"job_ids": ["w0!1"], "job_progress": {}}


@pytest.mark.parametrize(("text", "direction", "message"), [
    ("{not json", "to_batsim", r"^reply 7: not JSON \("),
    ("[]", "to_batsim", r"^reply 7: must be a JSON object with now and events, got list$"),
    ('{"events": []}', "to_batsim", r"^reply 7: now: missing$"),
    ('{"now": "0", "events": []}', "to_batsim", r"^reply 7: now: must be a finite number, got '0'$"),
    ('{"now": 0, "events": {}}', "to_batsim", r"^reply 7: events: must be a list"),
    ('{"now": 5, "events": [{"timestamp": 5, "type": "JOB_COMPLETED", "data": {}}]}', "to_batsim",
     r"^reply 7: events\[0\]: type: 'JOB_COMPLETED' is not an event this side accepts \(EXECUTE_JOB, "),
    ('{"now": 5, "events": [{"timestamp": 5, "type": "EXECUTE_JOB", "data": {"alloc": "0"}}]}', "to_batsim",
     r"^reply 7: events\[0\] \(EXECUTE_JOB\): data\.job_id: missing$"),
    ('{"now": 5, "events": [{"timestamp": 5, "type": "EXECUTE_JOB", "data": {"job_id": "w0!1", "alloc": "2-4"}}]}',
     "to_batsim", r"^reply 7: events\[0\] \(EXECUTE_JOB\): data\.alloc: '2-4' in '2-4' is outside the machine "
                  r"\(resources 0-3\)$"),
    ('{"now": 5, "events": [{"timestamp": 5, "type": "EXECUTE_JOB", "data": {"job_id": "w0!1", "alloc": ""}}]}',
     "to_batsim", r"^reply 7: events\[0\] \(EXECUTE_JOB\): data\.alloc: is empty"),
    ('{"now": 5, "events": [{"type": "REJECT_JOB", "data": {"job_id": "w0!1"}}]}', "to_batsim",
     r"^reply 7: events\[0\] \(REJECT_JOB\): timestamp: missing$"),
    ('{"now": 5, "events": [{"timestamp": 6, "type": "REJECT_JOB", "data": {"job_id": "w0!1"}}]}', "to_batsim",
     r"^reply 7: events\[0\] \(REJECT_JOB\): timestamp 6\.0 is after now 5\.0$"),
    ('{"now": 5, "events": [{"timestamp": 4, "type": "REJECT_JOB", "data": {"job_id": "w0!1"}}, '
     '{"timestamp": 3, "type": "REJECT_JOB", "data": {"job_id": "w0!2"}}]}', "to_batsim",
     r"^reply 7: events\[1\] \(REJECT_JOB\): timestamp 3\.0 is before the previous event's 4\.0"),
    ('{"now": 5, "events": [{"timestamp": 5, "type": "CALL_ME_LATER", "data": {"timestamp": 4}}]}', "to_batsim",
     r"^reply 7: events\[0\] \(CALL_ME_LATER\): data\.timestamp: 4\.0 is before the event's own timestamp"),
    ('{"now": 5, "events": [{"timestamp": 5, "type": "KILL_JOB", "data": {"job_ids": []}}]}', "to_batsim",
     r"^reply 7: events\[0\] \(KILL_JOB\): data\.job_ids: must be a non-empty list of job ids, got \[\]$"),
    ('{"now": 5, "events": [{"timestamp": 5, "type": "NOTIFY", "data": {"type": "no_more_static_job_to_submit"}}]}',
     "to_batsim", r"^reply 7: events\[0\] \(NOTIFY\): data\.type: unknown 'no_more_static_job_to_submit' "
                  r"\(registration_finished, continue_registration\)$"),
    ('{"now": 5, "events": [{"timestamp": 5, "type": "SET_JOB_METADATA", "data": {"job_id": "w0!1", '
     '"metadata": {"a": 1}}}]}', "to_batsim",
     r"^reply 7: events\[0\] \(SET_JOB_METADATA\): data\.metadata: must be a string"),
    ('{"now": 5, "events": [{"timestamp": 5, "type": "JOB_COMPLETED", "data": {"job_id": "w0!1", '
     '"job_state": "DONE", "return_code": 0, "alloc": "0"}}]}', "to_scheduler",
     r"^reply 7: events\[0\] \(JOB_COMPLETED\): data\.job_state: unknown 'DONE' \(NOT_SUBMITTED, "),
])
def test_a_malformed_message_is_one_line_naming_the_message_and_the_field(text, direction, message):
    with pytest.raises(p.ProtocolError, match=message):
        p.decode(text, direction=direction, label="reply 7", machine_size=4)


def test_encode_refuses_events_out_of_order_and_decode_an_unknown_direction():
    late = p.Message(1.0, (p.RequestedCall(timestamp=2.0),))
    with pytest.raises(p.ProtocolError, match=r"^message: events\[0\] \(REQUESTED_CALL\): timestamp 2\.0 is "
                                              r"after now 1\.0$"):
        p.encode(late)
    with pytest.raises(ValueError, match=r"^direction: unknown 'sideways'"):
        p.decode('{"now": 0, "events": []}', direction="sideways")  # type: ignore[arg-type]


def test_simulation_begins_counts_must_match_its_resources():
    bad = DOC_SIMULATION_BEGINS.replace('"nb_resources": 4', '"nb_resources": 5')
    with pytest.raises(p.ProtocolError, match=r"\(SIMULATION_BEGINS\): data\.nb_resources: is 5 but the resources "
                                              r"listed make 4$"):
        p.decode(bad, direction="to_scheduler")
    no_flag = DOC_SIMULATION_BEGINS.replace('"dynamic-jobs-enabled": false,', "")
    with pytest.raises(p.ProtocolError, match=r"data\.config\.dynamic-jobs-enabled: missing$"):
        p.decode(no_flag, direction="to_scheduler")
