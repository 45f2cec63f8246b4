"""Resident rank host ("zygote"): numpy, mpi4py and the workloads imported once per workstation.

Why: a cold rank start under a 0.2-core cap spends about 1 s importing numpy and
mpi4py and 0.7 s in libfabric's provider discovery inside MPI_Init, every launch and
every resize. The zygote pays both once; orted starts the
thin client (`workloads.zygote_client`), which hands its argv, environment, cwd
and stdio fds over a Unix socket. The zygote forks a child that takes them over,
becomes a guest (SCHED_IDLE), calls MPI_Init (the PMIx variables orted gave the
client are in its environment) and runs the module as `python3 -m` would.

Protocol on the socket, one request per connection:
  client -> zygote   one JSON line {argv, env, cwd} with fds 0, 1, 2 attached (SCM_RIGHTS)
  zygote -> client   "pid N\\n" once forked, "exit N\\n" when the child ends
                     (N < 0: killed by signal -N)
If the client's connection closes first (orted killed it), the zygote kills the child,
so a job never outlives the rank orted knows about.

Runs inside the containers: standard library, numpy and mpi4py only.
    python3 -m workloads.zygote [--socket PATH]
"""
from __future__ import annotations

import argparse
import json
import os
import select
import signal
import socket
import sys
import time
from typing import Any

SOCKET_PATH = "/tmp/nowlab-zygote.sock"
PRELOAD = ("workloads.cg", "workloads.synthetic", "workloads.compute")
MAX_REQUEST_BYTES = 1 << 20


def preload() -> None:
    """Import what every rank needs, without initialising MPI (each child does that)."""
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # no BLAS threads: fork keeps one thread only
    import mpi4py
    mpi4py.rc.initialize = False
    mpi4py.rc.finalize = False
    import importlib

    import numpy  # noqa: F401
    from mpi4py import MPI  # noqa: F401
    for name in PRELOAD:
        importlib.import_module(name)
    preload_libfabric()


def preload_libfabric() -> None:
    """Run libfabric's one-time provider discovery here, so no forked rank pays it again.

    Open MPI picks the OFI MTL (libfabric's tcp provider) on these workstations, and
    discovering libfabric's providers is most of MPI_Init at 0.2 core (~0.7 s).
    """
    import ctypes
    try:
        fabric = ctypes.CDLL("libfabric.so.1", mode=ctypes.RTLD_GLOBAL)
    except OSError:
        return  # no libfabric: Open MPI will not use it either
    info = ctypes.c_void_p()
    version = (1 << 16) | 5  # FI_VERSION(1, 5): any provider libfabric knows
    if fabric.fi_getinfo(ctypes.c_uint32(version), None, None, ctypes.c_uint64(0), None, ctypes.byref(info)) == 0:
        fabric.fi_freeinfo(info)


def read_request(conn: socket.socket) -> tuple[dict[str, Any], list[int]]:
    data, fds = b"", []
    while not data.endswith(b"\n"):
        chunk, got, _flags, _addr = socket.recv_fds(conn, 65536, 3)
        if not chunk:
            raise ConnectionError("client closed before its request was complete")
        data += chunk
        fds += got
        if len(data) > MAX_REQUEST_BYTES:
            raise ValueError("request: longer than 1 MiB")
    request = json.loads(data)
    for key in ("argv", "env", "cwd"):
        if key not in request:
            raise ValueError(f"{key}: missing from the zygote request")
    if len(fds) != 3:
        raise ValueError(f"fds: expected stdin, stdout and stderr, got {len(fds)}")
    return request, fds


def trace(stage: str) -> None:
    """With NOWLAB_ZYGOTE_TRACE=1, the epoch time of a stage on stderr (bench_launch.py reads it)."""
    if os.environ.get("NOWLAB_ZYGOTE_TRACE") == "1":
        print(f"NOWLAB_TRACE {stage} {time.time():.6f}", file=sys.stderr, flush=True)


def run_child(request: dict[str, Any], fds: list[int]) -> None:
    """In the forked child: become the rank the client stands for, then exit (never returns)."""
    code = 1
    try:
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
            os.close(fd)
        os.environ.clear()
        os.environ.update(request["env"])
        os.chdir(request["cwd"])
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))  # guests yield to owners
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        argv = list(request["argv"])
        if len(argv) < 2 or argv[0] != "-m":
            raise ValueError(f"argv: expected -m MODULE ARGS..., got {argv[:2]}")
        import runpy

        from mpi4py import MPI
        trace("forked")
        MPI.Init_thread(MPI.THREAD_MULTIPLE)  # what mpi4py does at import by default
        trace("MPI_Init")
        sys.argv = [argv[1], *argv[2:]]
        sys.modules.pop(argv[1], None)  # run the main module afresh; its imports stay warm
        try:
            runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
            code = 0
        except SystemExit as stop:
            code = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
        if not MPI.Is_finalized():
            MPI.Finalize()
    except BaseException:  # noqa: BLE001 - the child must exit with a code, whatever happened
        import traceback
        traceback.print_exc()
        code = 1
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        os._exit(code)


class Zygote:
    """Accept requests, fork children, report their pids and exit codes."""

    def __init__(self, path: str) -> None:
        if os.path.exists(path):
            os.unlink(path)  # stale: main() checked that nobody answers on it
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(path)
        self.listener.listen(64)
        self.children: dict[int, socket.socket] = {}  # pid -> its client's connection
        self.wake_r, self.wake_w = os.pipe()
        os.set_blocking(self.wake_w, False)
        signal.set_wakeup_fd(self.wake_w)
        signal.signal(signal.SIGCHLD, lambda _s, _f: None)

    def serve(self) -> None:
        while True:
            watched = [self.listener, self.wake_r, *self.children.values()]
            readable, _, _ = select.select(watched, [], [])
            if self.wake_r in readable:
                os.read(self.wake_r, 4096)
            self.reap()
            if self.listener in readable:
                self.accept()
            for pid, conn in list(self.children.items()):
                if conn in readable and not conn.recv(1, socket.MSG_PEEK):
                    os.kill(pid, signal.SIGKILL)  # the client is gone: so is its rank

    def accept(self) -> None:
        conn, _ = self.listener.accept()
        try:
            request, fds = read_request(conn)
        except (ValueError, ConnectionError, json.JSONDecodeError) as exc:
            try:
                conn.sendall(f"error {exc}\n".encode())
            except OSError:
                pass  # a liveness probe, or a client that gave up
            conn.close()
            return
        pid = os.fork()
        if pid == 0:  # the child keeps none of the zygote's sockets or its signal pipe
            signal.set_wakeup_fd(-1)
            for sock in (self.listener, conn, *self.children.values()):
                sock.close()
            os.close(self.wake_r)
            os.close(self.wake_w)
            run_child(request, fds)
        for fd in fds:
            os.close(fd)
        conn.sendall(f"pid {pid}\n".encode())
        self.children[pid] = conn

    def reap(self) -> None:
        while self.children:
            pid, status = os.waitpid(-1, os.WNOHANG)
            if pid == 0:
                return
            conn = self.children.pop(pid, None)
            if conn is None:
                continue
            code = os.waitstatus_to_exitcode(status)
            try:
                conn.sendall(f"exit {code}\n".encode())
            except OSError:
                pass
            conn.close()


def alive(path: str) -> bool:
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        probe.connect(path)
        return True
    except OSError:
        return False
    finally:
        probe.close()


def main() -> int:
    parser = argparse.ArgumentParser(description="resident rank host for fast MPI launches")
    parser.add_argument("--socket", default=SOCKET_PATH)
    args = parser.parse_args()
    if alive(args.socket):
        return 0  # one zygote per workstation: starting it again is a no-op
    preload()
    Zygote(args.socket).serve()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
