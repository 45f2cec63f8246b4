"""Host side of a malleable job: launch it, resize it at safe points, record the cost.

This is the scheduler's half of the §2.4 sequence for one job: send preempt,
wait for the ack (the job is at a safe point), give the new partition, wait
until the job has redistributed or checkpointed and released its processors,
then relaunch it on the new partition with --resume. Each resize is recorded
with the ack latency, the redistribution time and the bytes moved over MPI.
"""
from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Sequence

from workloads.host.control_server import ControlServer, JobConnection, Received
from workloads.host.launch import Handle, Launcher
from workloads.host.records import ResizeRecord
from workloads.redistribution_plan import resize_kind
from workloads.wire.control import RESULT_PREFIX


@dataclass
class MalleableRun:
    """What driving one job gave: its host sets in order, each resize, and the coordinator's report."""

    job: str
    argv: list[str]
    hosts_history: list[list[str]]
    resizes: list[ResizeRecord] = field(default_factory=list)  # times: seconds since start()
    result: dict[str, Any] = field(default_factory=dict)
    wall_s: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def parse_result(stdout: str) -> dict[str, Any] | None:
    """The coordinator's result line, if any."""
    for line in stdout.splitlines():
        if line.startswith(RESULT_PREFIX):
            return json.loads(line[len(RESULT_PREFIX):])
    return None


class MalleableJob:
    """One job driven by the host: start(), resize(hosts)..., wait()."""

    def __init__(self, launcher: Launcher, server: ControlServer, job: str, program: Sequence[str],
                 hosts: Sequence[str], control_host: str, *, env: dict[str, str] | None = None,
                 timeout_s: float = 300.0) -> None:
        self.launcher, self.server, self.job = launcher, server, job
        self.program, self.hosts = list(program), list(hosts)
        self.control = f"{control_host}:{server.port}"
        self.env, self.timeout_s = {**(env or {}), **server.job_env()}, timeout_s  # the run's secret lets it in
        self.record = MalleableRun(job, self.program, [list(hosts)])
        self._handle: Handle | None = None
        self._conn: JobConnection | None = None
        self._done: dict[str, Any] | None = None
        self._t_req = 0.0
        self._ack: Received | None = None
        self._t0 = 0.0

    def __enter__(self) -> "MalleableJob":
        return self

    def __exit__(self, *exc: object) -> None:
        self.terminate()

    def terminate(self) -> None:
        """Stop the current launch if it is still running (after a failure on our side)."""
        if self._handle is not None and self._handle.poll() is None:
            self._handle.terminate()

    def argv(self, hosts: Sequence[str], resume: bool) -> list[str]:
        return [*self.program, "--job", self.job, "--hosts", ",".join(hosts), "--control", self.control,
                *(["--resume"] if resume else [])]

    def _launch(self, hosts: Sequence[str], resume: bool) -> None:
        self._handle = self.launcher.mpirun_popen(list(hosts), self.argv(hosts, resume), env=self.env)
        try:
            self._conn = self.server.connection(self.job, self.timeout_s)
        except TimeoutError:
            self._fail_with_output("did not connect")

    def _fail_with_output(self, what: str) -> None:
        out = ""
        if self._handle is not None and self._handle.poll() is not None:
            res = self._handle.wait(1)
            out = f" stdout={res.stdout[-2000:]!r} stderr={res.stderr[-2000:]!r}"
        raise RuntimeError(f"job {self.job} {what}.{out}")

    def start(self) -> "MalleableJob":
        self._t0 = time.monotonic()
        self._launch(self.hosts, resume=False)
        return self

    def resize(self, new_hosts: Sequence[str]) -> ResizeRecord | None:
        """Preempt at the next safe point and continue on new_hosts; None if the job finished first."""
        resize_kind(self.hosts, new_hosts)
        self.preempt()
        if self.await_ack() is None:
            return None
        return self.repartition(new_hosts)

    # The three steps of resize(), for a scheduler that preempts several jobs at once
    # and computes the new partitions only when all have acknowledged (§2.4, step 2).
    def preempt(self) -> None:
        """Step 1: ask for preemption at the next safe point."""
        self._t_req = self._conn.send({"type": "preempt"})

    def await_ack(self) -> int | None:
        """Step 1 (cont.): the iteration at which the job stopped, or None if it finished instead."""
        reply = self._conn.expect(("ack", "done"), self.timeout_s)
        if reply.message["type"] == "done":
            self._done = reply.message
            return None
        self._ack = reply
        return int(reply.message["iteration"])

    def repartition(self, new_hosts: Sequence[str]) -> ResizeRecord:
        """Steps 2-4: give the new partition, let the job redistribute and release, relaunch it."""
        new_hosts = list(new_hosts)
        kind = resize_kind(self.hosts, new_hosts)
        if kind == "same":
            new_hosts = list(self.hosts)  # the job carries on in place, in its current rank order
        conn, ack = self._conn, self._ack
        t_partition = conn.send({"type": "partition", "hosts": new_hosts})
        released = conn.expect("released", self.timeout_s).message
        restored: dict[str, Any] = {}
        t_released = t_relaunch = t_running = time.monotonic()
        if kind != "same":
            result = self._handle.wait(self.timeout_s)
            if result.exit_code != 0:
                raise RuntimeError(f"job {self.job} exited {result.exit_code} on release: {result.stderr[-2000:]}")
            conn.close()
            t_released = t_relaunch = time.monotonic()
            self._launch(new_hosts, resume=True)
            restored_msg = self._conn.expect("restored", self.timeout_s)
            restored, t_running = restored_msg.message, restored_msg.at
        t0 = self._t0
        record = ResizeRecord(
            job=self.job, requested_at=self._t_req - t0, from_hosts=tuple(self.hosts), to_hosts=tuple(new_hosts),
            kind=kind, iteration=int(ack.message["iteration"]), sent_at=self._t_req - t0, ack_at=ack.at - t0,
            partition_at=t_partition - t0, released_at=t_released - t0,
            exited_at=None if kind == "same" else t_released - t0,
            relaunched_at=None if kind == "same" else t_relaunch - t0, running_at=t_running - t0)
        record.add_report(released)
        record.add_report(restored)
        self.hosts = new_hosts
        self.record.hosts_history.append(new_hosts)
        self.record.resizes.append(record)
        return record

    def wait(self) -> MalleableRun:
        """Run to completion; the result is the coordinator's final report."""
        if self._done is None:
            self._done = self._conn.expect("done", self.timeout_s).message
        result = self._handle.wait(self.timeout_s)
        if result.exit_code != 0:
            raise RuntimeError(f"job {self.job} exited {result.exit_code}: {result.stderr[-2000:]}")
        self._conn.close()
        self.record.result = parse_result(result.stdout) or self._done
        self.record.wall_s = time.monotonic() - self._t0
        return self.record
