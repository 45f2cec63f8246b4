"""One mpiexec of one job, watched from the host: the executor's adapter to workloads/.

`workloads.host.malleable.MalleableJob.resize` runs a whole preemption (request,
ack, partition, release, relaunch) as one blocking call. A scheduler needs
the steps apart: the ack is an event the policy answers, and the partition
it answers with may come much later (EQUI waits for every job to ack). So
this module speaks the same protocol (workloads.wire.control, through
workloads.host.control_server's server) one message at a time: each `Launch` starts
one mpiexec through any workloads.host.launch.Launcher and a thread turns
everything the job says, and finally its exit, into `Event`s on one queue.

A rigid launch (`rigid=True`) runs its command as given and says nothing on the channel: its
only event is `exited`, whose message carries its stdout tail, how it was launched (`via`:
pool or mpiexec) and its launch cost (`launch_s`: from the launch to its program's start line,
workloads/wire/rigid.py, else to the pool members' `started`; NaN when neither is known).
"""
from __future__ import annotations

import math
import queue
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Sequence

from workloads.host.control_server import ControlServer, JobConnection
from workloads.host.launch import Handle, Launcher
from workloads.host.pool_client import PoolHandle
from workloads.wire.control import JOB_TYPES
from workloads.wire.rigid import started_at

_KINDS = tuple(sorted(JOB_TYPES - {"hello"}))
_POLL_S = 0.5


@dataclass
class Event:
    """Something a launch did; `at` is time.monotonic() on the host when it was seen."""

    at: float
    kind: str  # hello, ack, released, restored, done, error, no_connect, exited
    launch: "Launch"
    message: dict[str, Any] = field(default_factory=dict)
    exit_code: int | None = None
    output: str = ""  # stderr tail (exited events)


def workload_argv(program: Sequence[str], job: str, hosts: Sequence[str], control: str, resume: bool) -> list[str]:
    """The command line a malleable workload expects (as MalleableJob.argv builds it)."""
    return [*program, "--job", job, "--hosts", ",".join(hosts), "--control", control,
            *(["--resume"] if resume else [])]


class Launch:
    """One mpiexec of a job on `hosts`, from start() to its `exited` event."""

    def __init__(self, job: Any, key: str, number: int, hosts: Sequence[str], resume: bool,
                 rigid: bool = False) -> None:
        self.job = job  # the executor's job object (opaque here)
        self.key = key  # the workload's --job (checkpoint directory, hello name)
        self.number = number
        self.hosts = list(hosts)
        self.resume = resume
        self.rigid = rigid  # run the program as given, no control channel (module docstring)
        self.launched_epoch = math.nan  # time.time() at the launch: a program's start line is in epoch seconds
        self.handle: Handle | None = None
        self.conn: JobConnection | None = None
        self.launched_at = float("nan")
        self.hello_at = float("nan")
        self.exited_at = float("nan")
        self.exit_code: int | None = None

    def start(self, launcher: Launcher, server: ControlServer, program: Sequence[str], control: str,
              events: "queue.Queue[Event]", *, env: dict[str, str] | None, connect_timeout_s: float,
              exit_timeout_s: float) -> None:
        argv = list(program) if self.rigid else workload_argv(program, self.key, self.hosts, control, self.resume)
        self.launched_epoch = time.time()
        self.launched_at = time.monotonic()
        self.handle = launcher.mpirun_popen(self.hosts, argv, env=env)
        watch = self._watch_rigid if self.rigid else self._watch
        threading.Thread(target=watch, args=(server, events, connect_timeout_s, exit_timeout_s),
                         name=f"nowlab-live-{self.key}-{self.number}", daemon=True).start()

    def send(self, message: dict[str, Any]) -> float | None:
        """Send one control line now; None if the job has closed its channel (its exit event follows)."""
        if self.conn is None:
            raise RuntimeError(f"launch {self.number} of {self.key} is not connected")
        try:
            return self.conn.send(message)
        except OSError:
            return None

    def terminate(self) -> None:
        if self.handle is not None and self.handle.poll() is None:
            self.handle.terminate()

    def release(self) -> None:
        """Drop the exited mpiexec's handle and channel, keeping the times and the exit code.

        A cell keeps its jobs' launches to its end, and each held its process's pipes, its
        reader threads' queues and its decoded lines: about 40 KB a launch, the runner's
        growth of ~19 MiB/h in the two-hour soak (hardening/leak_executor.py)."""
        self.handle = None
        self.conn = None

    def _watch(self, server: ControlServer, events: "queue.Queue[Event]", connect_timeout_s: float,
               exit_timeout_s: float) -> None:
        handle = self.handle
        deadline = time.monotonic() + connect_timeout_s
        conn = None
        while conn is None:
            try:
                conn = server.connection(self.key, _POLL_S)
            except TimeoutError:
                if handle.poll() is not None:
                    break
                if time.monotonic() > deadline:
                    events.put(Event(time.monotonic(), "no_connect", self,
                                     {"error": f"no hello within {connect_timeout_s:g} s"}))
                    handle.terminate()
                    break
        if conn is not None:
            self.conn = conn
            self.hello_at = conn.hello.at
            events.put(Event(conn.hello.at, "hello", self, conn.hello.message))
            while True:
                try:
                    got = conn.expect(_KINDS, _POLL_S)
                except TimeoutError:
                    continue
                except ConnectionError:
                    break
                events.put(Event(got.at, got.message["type"], self, got.message))
            conn.close()
        try:
            result = handle.wait(exit_timeout_s)
            code, err = result.exit_code, result.stderr
        except TimeoutError:
            handle.terminate()
            code, err = -1, f"mpiexec still running {exit_timeout_s:g} s after the job closed its channel"
        self.exited_at = time.monotonic()
        self.exit_code = code
        events.put(Event(self.exited_at, "exited", self, exit_code=code, output=(err or "")[-2000:]))

    def _watch_rigid(self, server: ControlServer, events: "queue.Queue[Event]", connect_timeout_s: float,
                     exit_timeout_s: float) -> None:
        """A rigid job: no channel; wait for its exit, then report it with its launch cost."""
        handle = self.handle
        out = ""
        try:
            result = handle.wait(exit_timeout_s)
            code, err, out = result.exit_code, result.stderr, result.stdout
        except TimeoutError:
            handle.terminate()
            code, err = -1, f"rigid job still running {exit_timeout_s:g} s after its launch"
        self.exited_at = time.monotonic()
        self.exit_code = code
        via = "pool" if isinstance(handle, PoolHandle) else "mpiexec"
        begun = started_at(out)
        if math.isnan(begun) and isinstance(handle, PoolHandle) and all(t is not None for t in handle.started_at):
            begun = max(handle.started_at)
        message = {"stdout": (out or "")[-2000:], "via": via, "launch_s": begun - self.launched_epoch}
        events.put(Event(self.exited_at, "exited", self, message, exit_code=code, output=(err or "")[-2000:]))
