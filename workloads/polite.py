"""Waiting on MPI without spinning.

Workstations are CPU-capped (e.g. 0.1 core). Open MPI's blocking calls spin, so a
rank that waits in Recv/Barrier burns its quota and is then throttled: a ping-pong
took 100 ms under a 0.1-core cap against 1.6 ms when polling Test() with a short
sleep (/work/shared/probes). Every wait in the workloads goes through here.

The wait has a mode (Zhou & Brent §1, why coscheduling matters): `polite` (the default:
Test() then a short sleep, so owners and other jobs get the core) or `spin` (Test() in a
busy loop, as Open MPI's blocking calls do: fast when the peers are coscheduled, a waste of
the slot when they are not). A job sets it once at start (runtime: --wait).
Runs inside the containers: standard library, numpy and mpi4py only.
"""
from __future__ import annotations

import json
import threading
import time
from enum import Enum
from typing import Any, Sequence

import numpy as np
from mpi4py import MPI

POLL_SLEEP_S = 0.0002
# Set by a resident pool rank (workloads.pool) when the host cancels its job: a rank whose
# peer failed would otherwise wait for it forever, since the pool's world must not abort.
CANCEL = threading.Event()


class Cancelled(RuntimeError):
    """The host cancelled this job while the rank was waiting on MPI."""


def _check() -> None:
    if CANCEL.is_set():
        raise Cancelled("the host cancelled the job")


class WaitMode(str, Enum):
    POLITE = "polite"  # Test(), then sleep POLL_SLEEP_S
    SPIN = "spin"      # Test() again at once: the core stays busy while waiting


_mode = WaitMode.POLITE


def set_wait_mode(mode: WaitMode | str) -> None:
    """How every later wait of this process waits; a bad name is one line naming the choices."""
    global _mode
    try:
        _mode = WaitMode(mode)
    except ValueError:
        raise ValueError(f"wait: unknown mode {mode!r} (known: polite, spin)") from None


def wait_mode() -> WaitMode:
    return _mode


def _pause() -> None:
    _check()
    if _mode is WaitMode.POLITE:
        time.sleep(POLL_SLEEP_S)


# Requests a cancelled job left behind, and its communicator: never freed. A collective its
# peers gave up on never completes, and Open MPI's libnbc progresses it on every later MPI
# call; freeing it (or its communicator) made the rank's next MPI_Comm_create_group segfault.
ABANDONED: list = []


def wait(request: MPI.Request) -> None:
    """Complete one non-blocking request, sleeping between polls."""
    try:
        _check()  # also when it completes at once (a one-rank job never polls)
        while not request.Test():
            _pause()
    except Cancelled:
        ABANDONED.append(request)
        raise


def waitall(requests: Sequence[MPI.Request]) -> None:
    """Complete all requests, sleeping between polls."""
    pending = list(requests)
    try:
        _check()
        while pending:
            if MPI.Request.Testall(pending):
                return
            _pause()
    except Cancelled:
        ABANDONED.extend(pending)
        raise


def barrier(comm: MPI.Comm) -> None:
    wait(comm.Ibarrier())


def allreduce_scalar(comm: MPI.Comm, value: float, op: MPI.Op = MPI.SUM) -> float:
    """Reduce one float64 across the communicator."""
    send = np.array([value], dtype=np.float64)
    recv = np.empty(1, dtype=np.float64)
    wait(comm.Iallreduce(send, recv, op=op))
    return float(recv[0])


def allreduce_int(comm: MPI.Comm, value: int, op: MPI.Op = MPI.SUM) -> int:
    send = np.array([value], dtype=np.int64)
    recv = np.empty(1, dtype=np.int64)
    wait(comm.Iallreduce(send, recv, op=op))
    return int(recv[0])


def allgather_int(comm: MPI.Comm, value: int) -> list[int]:
    send = np.array([value], dtype=np.int64)
    recv = np.empty(comm.Get_size(), dtype=np.int64)
    wait(comm.Iallgather(send, recv))
    return [int(v) for v in recv]


def bcast_bytes(comm: MPI.Comm, payload: bytes | None, root: int = 0) -> bytes:
    """Broadcast a byte string of any length (length first, then the bytes)."""
    length = np.array([len(payload) if comm.Get_rank() == root else 0], dtype=np.int64)
    wait(comm.Ibcast(length, root=root))
    buf = np.empty(int(length[0]), dtype=np.uint8)
    if comm.Get_rank() == root:
        buf[:] = np.frombuffer(payload, dtype=np.uint8)
    if buf.size:
        wait(comm.Ibcast(buf, root=root))
    return buf.tobytes()


def bcast_json(comm: MPI.Comm, obj: Any, root: int = 0) -> Any:
    """Broadcast a JSON-serialisable object from root."""
    payload = json.dumps(obj).encode("utf-8") if comm.Get_rank() == root else None
    return json.loads(bcast_bytes(comm, payload, root).decode("utf-8"))


def gather_json(comm: MPI.Comm, obj: Any, root: int = 0) -> list[Any] | None:
    """Gather one small JSON object per rank to root, with point-to-point messages."""
    tag = 7101
    if comm.Get_rank() != root:
        payload = np.frombuffer(json.dumps(obj).encode("utf-8"), dtype=np.uint8).copy()
        size = np.array([payload.size], dtype=np.int64)
        waitall([comm.Isend(size, dest=root, tag=tag), comm.Isend(payload, dest=root, tag=tag + 1)])
        return None
    out: list[Any] = []
    for rank in range(comm.Get_size()):
        if rank == root:
            out.append(obj)
            continue
        size = np.empty(1, dtype=np.int64)
        wait(comm.Irecv(size, source=rank, tag=tag))
        buf = np.empty(int(size[0]), dtype=np.uint8)
        wait(comm.Irecv(buf, source=rank, tag=tag + 1))
        out.append(json.loads(buf.tobytes().decode("utf-8")))
    return out
