"""pybatsim 3.2.1's own code reads what the codec writes, and the codec reads its replies.

Skipped unless pybatsim is installed (it is not a dependency yet; issue 49). With it: a toy
Batsim loop (delay jobs, event-driven clock, no socket) feeds messages made by
`protocol.encode` to pybatsim's `Batsim` class through a stand-in for its NetworkHandler, with
its bundled schedulers, and decodes every reply with `protocol.decode(direction="to_batsim")`.
Jobs are submitted from t = 1: pybatsim's `batsim.sched` schedulers (schedFcfs,
schedEasySjfBackfill) assert that an allocation starts after 0 (batsim/sched/alloc.py).
"""
from __future__ import annotations

import heapq
import json

import pytest

from experiments.batsim import protocol as p

pybatsim = pytest.importorskip("batsim.batsim", reason="pybatsim is not installed")
launcher = pytest.importorskip("batsim.tools.launcher", reason="pybatsim is not installed")

# id, subtime, res, delay (run time), walltime; job 5 asks for more than the machine's 4 resources
JOBS = [("w0!1", 1.0, 2, 10.0, 20.0), ("w0!2", 2.0, 4, 5.0, 10.0), ("w0!3", 3.0, 1, 3.0, 5.0),
        ("w0!4", 3.0, 2, 4.0, 6.0), ("w0!5", 4.0, 5, 1.0, 2.0)]
NB_RES = 4


class _Net:
    """pybatsim's NetworkHandler, replaced: it is handed encoded text and keeps the replies."""

    outbox: list[str] = []
    replies: list[str] = []

    def __init__(self, *args: object, **kwargs: object) -> None:
        pass

    def bind(self) -> None:
        pass

    def close(self) -> None:
        pass

    def recv(self, blocking: bool = False) -> dict:
        return json.loads(_Net.outbox.pop(0))

    def send(self, msg: dict) -> None:
        _Net.replies.append(json.dumps(msg))


def replay(name: str, monkeypatch: pytest.MonkeyPatch, tmp_path) -> list[tuple[str, float, str]]:
    """(job, time, allocation or 'rejected') for each decision of scheduler `name`."""
    monkeypatch.chdir(tmp_path)  # pybatsim's batsim.sched schedulers write out_events.csv where they run
    _Net.outbox, _Net.replies = [], []
    monkeypatch.setattr(pybatsim, "NetworkHandler", _Net)
    resources = tuple(p.Resource(i, f"ws{i}", properties={"speed": "1.0"}) for i in range(NB_RES))
    profiles = {"w0": {f"d{j[0][3:]}": {"type": "delay", "delay": j[3]} for j in JOBS}}
    _Net.outbox.append(p.encode(p.Message(0.0, (p.SimulationBegins(
        timestamp=0.0, resources=resources, workloads={"w0": "/tmp/w.json"}, profiles=profiles),))))
    bs = pybatsim.Batsim(launcher.instanciate_scheduler(name, {}), "tcp://127.0.0.1:0", 10)
    assert p.decode(_Net.replies.pop(0), direction="to_batsim", label="reply 0").events == ()
    queue = [(j[1], 0, "submit", j) for j in JOBS]
    heapq.heapify(queue)
    decisions: list[tuple[str, float, str]] = []
    free, running, n = set(range(NB_RES)), {}, 1
    while queue:
        now = queue[0][0]
        events: list[p.Event] = []
        while queue and queue[0][0] == now:
            _, _, kind, job = heapq.heappop(queue)
            if kind == "submit":
                events.append(p.JobSubmitted(timestamp=now, job=p.JobDescription(
                    id=job[0], subtime=job[1], res=job[2], profile=f"d{job[0][3:]}", walltime=job[4])))
            else:
                free |= set(running[job[0]])
                events.append(p.JobCompleted(timestamp=now, job_id=job[0], job_state="COMPLETED_SUCCESSFULLY",
                                             return_code=0, alloc=running.pop(job[0])))
        if not any(kind == "submit" for _, _, kind, _ in queue) and any(isinstance(e, p.JobSubmitted)
                                                                        for e in events):
            events.append(p.Notify(timestamp=now, type="no_more_static_job_to_submit"))
        _Net.outbox.append(p.encode(p.Message(now, tuple(events))))
        bs.do_next_event()
        reply = p.decode(_Net.replies.pop(0), direction="to_batsim", label=f"reply {n}", machine_size=NB_RES)
        n += 1
        for d in reply.events:
            if isinstance(d, p.ExecuteJob):
                assert set(d.alloc) <= free, f"{name} started {d.job_id} on busy resources"
                free -= set(d.alloc)
                running[d.job_id] = d.alloc
                job = next(j for j in JOBS if j[0] == d.job_id)
                heapq.heappush(queue, (now + job[3], n, "done", job))
                decisions.append((d.job_id, now, " ".join(map(str, d.alloc))))
            elif isinstance(d, p.RejectJob):
                decisions.append((d.job_id, now, "rejected"))
            else:
                raise AssertionError(f"{name} sent {d}, which this toy loop does not carry out")
    _Net.outbox.append(p.encode(p.Message(now, (p.SimulationEnds(timestamp=now),))))
    bs.do_next_event()
    assert p.decode(_Net.replies.pop(0), direction="to_batsim", label="last reply").events == ()
    return decisions


@pytest.mark.parametrize("name", ["easyBackfill", "schedEasySjfBackfill"])
def test_pybatsim_easy_backfilling_backfills_behind_the_wide_job(name, monkeypatch, tmp_path):
    # job 2 (all 4 resources) waits for job 1 (ends at 11); jobs 3 and 4 fit before job 1's
    # walltime ends (21), so they are backfilled; job 2 starts when job 1 ends.
    got = sorted(d for d in replay(name, monkeypatch, tmp_path) if d[2] != "rejected")
    assert [(j, t) for j, t, _ in got] == [("w0!1", 1.0), ("w0!2", 11.0), ("w0!3", 3.0), ("w0!4", 6.0)]
    assert ("w0!5", "rejected") in {(j, a) for j, _, a in replay(name, monkeypatch, tmp_path)}


@pytest.mark.parametrize("name", ["schedFcfs"])
def test_pybatsim_fcfs_starts_in_submission_order(name, monkeypatch, tmp_path):
    got = replay(name, monkeypatch, tmp_path)
    started = [(j, t) for j, t, a in got if a != "rejected"]
    assert started == [("w0!1", 1.0), ("w0!2", 11.0), ("w0!3", 16.0), ("w0!4", 16.0)]
    assert ("w0!5", "rejected") in {(j, a) for j, _, a in got}
