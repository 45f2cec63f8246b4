"""Resident MPI world: already-initialised ranks on every workstation; each job is a sub-communicator.

Why: even warm (ssh masters, zygotes), a launch through mpiexec costs 1.1-1.6 s at p = 2-8
on 0.2-core workstations, and a resize relaunches: mpiexec, ssh, orted and MPI_Init's
wire-up every time (workloads/README.md, "Launch cost"). Here one mpiexec, started once
per cluster (testbed/pool.py), leaves a rank on every workstation slot. Each rank waits on
its own TCP port (pool_wire.port_base() + slot), using no CPU. A `run` line starts any
`python3 -m` program, so a connection is served only once it has proved it holds the
cluster's secret (NOWLAB_CLUSTER_SECRET, in the rank's environment, never on its command
line; the handshake of workloads/channel_auth.py, run by workloads/control_gate.py in a
thread of its own, which closes, counts and logs every other connection). To
run a job the host sends every member the same `run` line; the members build the
job's communicator with MPI_Comm_create_group (collective over the members only,
so jobs start and end independently) and run the module as `python3 -m` would, with
`runtime.job_comm()` returning that communicator. When the module returns, the rank
reports its exit code and captured output and is free again.

The job's meaning is unchanged: its ranks are on the workstations the scheduler
chose, in that order; its data crosses the shaped links; a resize still acknowledges
at a safe point, checkpoints and "relaunches", only the relaunch is now a `run` line.
Ranks are guests (SCHED_IDLE), as mpiexec's were.

A failed rank must not abort the world: it reports exit code 1, and the host sends
`cancel` to the job's other members, whose next polite wait raises
`polite.Cancelled`. A member that dies outright takes the world with it (Open MPI
aborts the job); the host side starts a new world at the next launch.

Runs inside the containers: standard library, numpy and mpi4py only.
    mpiexec ... python3 -m workloads.pool [--slots N]
"""
from __future__ import annotations

import argparse
import contextlib
import ctypes
import gc
import importlib
import io
import logging
import os
import queue
import runpy
import socket
import sys
import threading
import time
import traceback
from typing import Any

from mpi4py import MPI

from workloads import channel_auth, polite, runtime
from workloads.control_gate import Gate
from workloads.wire import pool as pool_wire

PRELOAD = ("numpy", "workloads.cg", "workloads.synthetic", "workloads.stencil", "workloads.compute", "workloads.hello")


IDLE_NAME = "nowlab-pool"
PR_SET_NAME = 15


def set_process_name(name: str) -> None:
    """The name `ps` and `pgrep -x` show for this rank: its workload's while it runs one
    (`synthetic`, `cg`), IDLE_NAME otherwise; the command line stays `workloads.pool`."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_NAME, name.encode()[:15], 0, 0, 0)
    except (OSError, AttributeError):
        pass  # not Linux: names are for people only


def slot_of_this_rank() -> int:
    """0 for the first rank on a workstation, 1 for the next (Open MPI's local rank)."""
    return int(os.environ.get("OMPI_COMM_WORLD_LOCAL_RANK", "0"))


def workstation_name() -> str:
    return os.environ.get("NOWLAB_WORKSTATION") or socket.gethostname()


class Rank:
    """One resident rank: serve ping, run, stop; one authenticated connection at a time."""

    def __init__(self, slot: int, secret: bytes) -> None:
        self.world = MPI.COMM_WORLD
        self.slot = slot
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind((pool_wire.bind_host(), pool_wire.port_base() + slot))
        listener.listen(64)
        # (socket, what came with its answer), in the order they proved themselves; the gate's
        # thread makes no MPI call, and a silent peer holds up no job
        self._admitted: queue.SimpleQueue[tuple[socket.socket, bytes]] = queue.SimpleQueue()
        self.gate = Gate(listener, secret, lambda sock, rest: self._admitted.put((sock, rest)),
                         channel=channel_auth.POOL)
        self.jobs_run = 0

    def serve(self) -> None:
        try:
            while True:
                conn, rest = self._admitted.get()
                conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                try:
                    if not self.handle(conn, rest):
                        return
                except (OSError, pool_wire.WireError) as exc:
                    print(f"pool rank {self.world.Get_rank()}: connection dropped: {exc}", file=sys.stderr, flush=True)
                finally:
                    conn.close()
        finally:
            self.gate.close()

    def handle(self, conn: socket.socket, rest: bytes = b"") -> bool:
        """Answer one authenticated connection (`rest`: what it sent after its answer); False when the rank must stop."""
        lines = pool_wire.Lines(conn, rest)
        message = lines.read()
        if message is None:
            return True
        kind = message["type"]
        if kind == "ping":
            conn.sendall(pool_wire.encode({"type": "pong", "rank": self.world.Get_rank(),
                                           "size": self.world.Get_size(), "host": workstation_name(),
                                           "slot": self.slot, "jobs_run": self.jobs_run,
                                           "refused": self.gate.refusals.total}))
            return True
        if kind == "stop":
            return False
        if kind == "run":
            self.run(conn, lines, message)
            return True
        conn.sendall(pool_wire.encode({"type": "error", "error": f"type: cannot start with {kind!r}"}))
        return True

    def run(self, conn: socket.socket, lines: pool_wire.Lines, message: dict[str, Any]) -> None:
        members = [int(r) for r in message["members"]]
        argv = [str(a) for a in message["argv"]]
        if self.world.Get_rank() not in members or len(argv) < 1:
            conn.sendall(pool_wire.encode({"type": "error", "error": "members: this rank is not one of them"}))
            return
        group = self.world.Get_group().Incl(members)
        comm = self.world.Create_group(group, int(message["tag"]))
        group.Free()
        conn.sendall(pool_wire.encode({"type": "started", "at": time.time()}))
        polite.CANCEL = cancel = threading.Event()  # this job's own: a late watcher cannot touch the next
        watcher = threading.Thread(target=watch_for_cancel, args=(lines, cancel), daemon=True)
        watcher.start()
        code, out, err = run_module(comm, argv, message.get("env") or {})
        self.jobs_run += 1
        if code == 0:
            comm.Free()
        else:  # it may have left requests behind (polite.ABANDONED): keep what they point to
            polite.ABANDONED.append(comm)
        gc.collect()
        conn.sendall(pool_wire.encode({"type": "exit", "code": code, "stdout": out[-pool_wire.OUTPUT_TAIL:],
                                       "stderr": err[-pool_wire.OUTPUT_TAIL:]}))
        conn.shutdown(socket.SHUT_WR)
        watcher.join(timeout=1.0)


def watch_for_cancel(lines: pool_wire.Lines, cancel: threading.Event) -> None:
    """During a job: a `cancel` line, or the host closing the connection, cancels it."""
    try:
        while True:
            message = lines.read()
            if message is None or message["type"] == "cancel":
                cancel.set()
                return
    except (OSError, pool_wire.WireError):
        cancel.set()


def run_module(comm: MPI.Comm, argv: list[str], env: dict[str, str]) -> tuple[int, str, str]:
    """Run `-m MODULE ARGS` (argv without the -m) on `comm`; exit code, stdout, stderr."""
    module, args = argv[0], argv[1:]
    saved_env, saved_argv = dict(os.environ), sys.argv
    out, err = io.StringIO(), io.StringIO()
    code = 1
    os.environ.update(env)
    set_process_name(module.rsplit(".", 1)[-1])
    runtime.POOL_COMM = comm
    sys.argv = [module, *args]
    sys.modules.pop(module, None)  # run the main module afresh; its imports stay warm
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                runpy.run_module(module, run_name="__main__", alter_sys=True)
                code = 0
            except SystemExit as stop:
                code = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
            except polite.Cancelled:
                code = 130
            except Exception:  # noqa: BLE001 - a failed job must not take the resident rank with it
                traceback.print_exc()
                code = 1
    finally:
        set_process_name(IDLE_NAME)
        runtime.POOL_COMM = None
        sys.argv = saved_argv
        os.environ.clear()
        os.environ.update(saved_env)
    return code, out.getvalue(), err.getvalue()


def main() -> int:
    parser = argparse.ArgumentParser(description="resident MPI rank: runs jobs as sub-communicators")
    parser.parse_args()
    try:
        secret = channel_auth.secret_from_env(name=channel_auth.CLUSTER_SECRET_ENV)
    except ValueError as exc:
        parser.error(str(exc))
    if secret is None:  # never serve unauthenticated: a `run` line runs any program
        parser.error(f"{channel_auth.CLUSTER_SECRET_ENV} is not set: the pool serves only hosts that hold "
                     f"the cluster's secret (testbed/pool.py and workloads/host/pool_local.py give it)")
    logging.basicConfig(level=logging.WARNING, format=f"pool rank {MPI.COMM_WORLD.Get_rank()}: %(message)s")
    for name in PRELOAD:
        importlib.import_module(name)
    os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))  # guests yield to owners
    set_process_name(IDLE_NAME)
    rank = Rank(slot_of_this_rank(), secret)
    polite.barrier(MPI.COMM_WORLD)  # every rank listens before any answers a ping
    rank.serve()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
