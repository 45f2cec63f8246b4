"""A task graph run live: each task a real process on the workstation its placement gave it.

Every task is started at once on its workstation (`workloads/taskgraph_task.py`, a
guest at idle priority, so owners keep theirs) and listens. Once the host has reached
every one of them it sends each a common start time just ahead (`go`). A task then waits
for its predecessors' messages, which cross the emulated network over TCP, computes its
demand, and sends its own. What each reports (wall-clock times; the workstations share
the host's clock) becomes one `TaskRun` on the graph's clock, t = 0 at the start, beside
the TGS prediction for the same placement: the shared finished record of scheduler/jobs.py, a
task being a job of one processor that arrives when its graph starts.

Each run has its own secret, handed to the tasks in their environment: the go and every
message prove it (workloads/channel_auth.py, context TASKGRAPH), so nothing else that
reaches a task's port can start it early or pose as a predecessor.
"""
from __future__ import annotations

import json
import socket
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from scheduler.jobs import FinishedJob
from scheduler.taskgraph.spec import TaskGraph
from scheduler.taskgraph.workstations import Owners, Workstation
from testbed.cluster import GUEST_PREFIX, Cluster
from testbed.remote_exec import ExecResult
from workloads import channel_auth
from workloads.taskgraph_task import GO, HEADER_BYTES

BASE_PORT = 21000


class TaskGraphRunError(RuntimeError):
    """A live task-graph run that did not complete: one line naming the task."""


@dataclass(frozen=True)
class MessageArrival:
    """A predecessor's message as it reached a task: from which task, when (seconds from the
    graph's start) and how many bytes. A message, not a job (jobs arrive as `SubmittedJob`s)."""

    source: str
    at_s: float
    size_bytes: int


@dataclass(frozen=True)
class TaskPlace:
    """What a task of a graph adds to its finished record (`TaskRun`), seconds from the graph's start."""

    workstation: str
    sent_s: float     # its messages had all been delivered
    messages: tuple[MessageArrival, ...] = ()  # its predecessors' messages as they reached it


TaskRun = FinishedJob[TaskPlace]
"""One task as measured: id its name, cls its graph's, arrival 0 (the graph's start), start_s when
every predecessor's message had arrived, finish_s when its computation ended; one processor."""


def task_run(task: str, graph: str, start_s: float, done_s: float, place: TaskPlace) -> TaskRun:
    return FinishedJob(id=task, cls=graph, demand=1.0, arrival_s=0.0, start_s=start_s, finish_s=done_s,
                       mean_procs=1.0, max_procs=1, requested_procs=1, preemptions=0, extra=place)


def workstations_of(cluster: Cluster) -> list[Workstation]:
    """The cluster's workstations as the model sees them: speed in reference cores, owners.

    A raw cap in cores has no reference speed to predict with: refused, in one line."""
    out = []
    for ws in cluster.workstations:
        speed = cluster.spec.speed(ws)
        if speed is None:
            raise ValueError(f"workstation {ws}: task graphs need a speed in reference cores "
                             f"(speed = ...), not a raw cap of {cluster.spec.cpu(ws):g} core")
        o = cluster.spec.owner(ws)
        owners = Owners(n=o.n, z_s=o.z, d_s=o.d) if o is not None and o.n > 0 else None
        out.append(Workstation(name=ws, speed=speed, owners=owners))
    return out


def task_argv(graph: TaskGraph, placement: Mapping[str, str], ips: Mapping[str, str], task: str,
              timeout_s: float) -> list[str]:
    """The command line of one task: its demand, port, predecessors and where to send what."""
    port = {t.name: BASE_PORT + i for i, t in enumerate(graph.tasks)}
    argv = [*GUEST_PREFIX, "python3", "-m", "workloads.taskgraph_task", "--name", task,
            "--work-ref-s", repr(graph.task[task].demand_ref_s), "--port", str(port[task]),
            "--timeout-s", repr(timeout_s)]
    for p in graph.pred[task]:
        argv += ["--expect", p]
    for s in graph.succ[task]:
        argv += ["--send", f"{ips[placement[s]]}:{port[s]}:{graph.arc_bytes[(task, s)]}"]
    return argv


def ports(graph: TaskGraph) -> dict[str, int]:
    return {t.name: BASE_PORT + i for i, t in enumerate(graph.tasks)}


def go(addresses: Mapping[str, tuple[str, int]], secret: bytes, *, ready_timeout_s: float, lead_s: float) -> float:
    """Connect to every task (retrying until it listens) and prove the run's secret, then send
    each the start time, `lead_s` ahead; returns it. A task that never listens, or refuses
    the secret, is named."""
    conns: dict[str, socket.socket] = {}
    deadline = time.monotonic() + ready_timeout_s
    try:
        for task, (ip, port) in addresses.items():
            while task not in conns:
                try:
                    conns[task] = socket.create_connection((ip, port), timeout=1.0)
                except OSError:
                    if time.monotonic() > deadline:
                        raise TaskGraphRunError(f"task {task}: not listening on {ip}:{port} after "
                                                f"{ready_timeout_s:g} s") from None
                    time.sleep(0.05)
            try:
                channel_auth.client_handshake(conns[task], secret, channel=channel_auth.TASKGRAPH)
            except channel_auth.AuthError as exc:
                raise TaskGraphRunError(f"task {task}: {exc}") from None
        start_at = time.time() + lead_s
        for conn in conns.values():
            conn.sendall(GO.encode().ljust(HEADER_BYTES, b"\0") + repr(start_at).encode())
            conn.shutdown(socket.SHUT_WR)
        return start_at
    finally:
        for conn in conns.values():
            conn.close()


def run(cluster: Cluster, graph: TaskGraph, placement: Mapping[str, str], *, lead_s: float = 0.2,
        ready_timeout_s: float = 60.0, timeout_s: float = 600.0) -> list[TaskRun]:
    """Run the graph once with every task on `placement[task]`; one TaskRun per task, in graph order."""
    missing = [t.name for t in graph.tasks if t.name not in placement]
    if missing:
        raise ValueError(f"task {missing[0]}: no workstation in the placement")
    unknown = sorted({ws for ws in placement.values()} - set(cluster.workstations))
    if unknown:
        raise ValueError(f"placement: workstation {unknown[0]} is not in cluster {cluster.name}")
    ips, port = cluster.ips, ports(graph)
    secret = channel_auth.new_secret()
    procs = {t.name: cluster.start(placement[t.name], task_argv(graph, placement, ips, t.name, timeout_s),
                                   env=channel_auth.secret_env(secret))
             for t in graph.tasks}
    try:
        start_at = go({t: (ips[placement[t]], port[t]) for t in procs}, secret, ready_timeout_s=ready_timeout_s,
                      lead_s=lead_s)
    except TaskGraphRunError:
        for name, proc in procs.items():  # the others exit at their own timeout; say why this one failed
            if proc.poll() is not None and proc.exit_code != 0:
                raise TaskGraphRunError(f"task {name} on {placement[name]}: exited "
                                        f"({_last_line(proc.wait(timeout=1.0))})") from None
        raise
    results = {}
    for name, proc in procs.items():
        out = proc.wait(timeout=timeout_s + 30.0)
        lines = [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]
        final = lines[-1] if lines else {}
        if out.exit_code != 0 or "error" in final or "done" not in final:
            raise TaskGraphRunError(f"task {name} on {placement[name]}: {final.get('error') or _last_line(out)}")
        results[name] = final
    return [task_run(t.name, graph.name, results[t.name]["ready"] - start_at, results[t.name]["done"] - start_at,
                     TaskPlace(placement[t.name], results[t.name]["sent"] - start_at,
                               tuple(MessageArrival(src, a["at"] - start_at, int(a["bytes"]))
                                     for src, a in sorted(results[t.name]["arrivals"].items()))))
            for t in graph.tasks]


def _last_line(out: ExecResult) -> str:
    return ((out.stderr or out.stdout).strip().splitlines() or ["no output"])[-1]


def precedence_violations(graph: TaskGraph, runs: Sequence[TaskRun]) -> list[str]:
    """Every arc the measured timeline breaks, one line each (none when the run is sound):
    a task that started before a predecessor had finished computing, or before its message
    arrived in full, or with fewer bytes than the arc carries."""
    by = {r.id: r for r in runs}
    out = []
    for arc in graph.arcs:
        src, dst = by[arc.source], by[arc.target]
        got = {a.source: a for a in dst.extra.messages}.get(arc.source)
        if got is None:
            out.append(f"arc {arc.label}: no message arrived")
            continue
        if got.size_bytes != arc.size_bytes:
            out.append(f"arc {arc.label}: {got.size_bytes} bytes arrived of {arc.size_bytes}")
        if dst.start_s < src.finish_s:
            out.append(f"arc {arc.label}: {arc.target} started at {dst.start_s:.3f} s, "
                       f"before {arc.source} finished at {src.finish_s:.3f} s")
        if dst.start_s < got.at_s:
            out.append(f"arc {arc.label}: {arc.target} started before the message arrived")
    return out


def makespan_s(runs: Sequence[TaskRun]) -> float:
    """From the graph's start to the last task's end of computation (TGS's execution time)."""
    return max(r.finish_s for r in runs)
