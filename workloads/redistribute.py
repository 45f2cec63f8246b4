"""Carry out a redistribution plan over MPI, so the bytes cross the shaped network.

Every rank computes the same plan (plan.py) and posts its own receives and sends
with non-blocking calls, then waits politely. Local moves are plain copies.
Runs inside the containers: standard library, numpy and mpi4py only.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
from mpi4py import MPI

from workloads import polite
from workloads.redistribution_plan import layout, plan_moves

TAG_BASE = 2000


@dataclass
class MoveStats:
    bytes_sent: int = 0
    bytes_received: int = 0


def redistribute(comm: MPI.Comm, comm_hosts: Sequence[str], arrays: dict[str, np.ndarray | None],
                 n_rows: dict[str, int], old_hosts: Sequence[str],
                 new_hosts: Sequence[str]) -> tuple[dict[str, np.ndarray] | None, MoveStats]:
    """Move every array from the old block layout to the new one.

    comm_hosts[i] is the workstation of rank i of `comm`; it must cover every host
    in old_hosts and new_hosts. `arrays` holds this rank's old blocks (None on a
    rank that held nothing). Returns this rank's new blocks (None if its host is
    not in new_hosts) and the bytes it sent and received over MPI.
    """
    me = comm_hosts[comm.Get_rank()]
    rank_of = {host: rank for rank, host in enumerate(comm_hosts)}
    stats = MoveStats()
    requests: list[MPI.Request] = []
    result: dict[str, np.ndarray] = {}
    keep_alive: list[np.ndarray] = []
    tag = TAG_BASE
    for name in sorted(n_rows):
        rows = n_rows[name]
        old_layout, new_layout = layout(rows, old_hosts), layout(rows, new_hosts)
        old_block = old_layout.get(me)
        new_block = new_layout.get(me)
        old_array = arrays.get(name) if old_block is not None else None
        row_shape, dtype = _row_shape_and_dtype(comm, comm_hosts, old_hosts, old_array)
        if new_block is not None:
            result[name] = np.empty((new_block.rows, *row_shape), dtype=dtype)
        for move in plan_moves(rows, old_hosts, new_hosts):
            tag += 1
            if move.local and move.dst == me:
                result[name][move.lo - new_block.lo:move.hi - new_block.lo] = \
                    old_array[move.lo - old_block.lo:move.hi - old_block.lo]
            elif move.dst == me:
                view = result[name][move.lo - new_block.lo:move.hi - new_block.lo]
                requests.append(comm.Irecv(view, source=rank_of[move.src], tag=tag))
                stats.bytes_received += view.nbytes
            elif move.src == me:
                chunk = np.ascontiguousarray(old_array[move.lo - old_block.lo:move.hi - old_block.lo])
                keep_alive.append(chunk)
                requests.append(comm.Isend(chunk, dest=rank_of[move.dst], tag=tag))
                stats.bytes_sent += chunk.nbytes
    polite.waitall(requests)
    return (result if me in new_hosts else None), stats


def _row_shape_and_dtype(comm: MPI.Comm, comm_hosts: Sequence[str], old_hosts: Sequence[str],
                         old_array: np.ndarray | None) -> tuple[tuple[int, ...], np.dtype]:
    """Learn an array's row shape and dtype from the first old holder.

    Ranks on new workstations hold no block yet, so the first host of the old
    layout tells everyone.
    """
    root = list(comm_hosts).index(old_hosts[0])
    info = None
    if comm.Get_rank() == root:
        info = {"row_shape": list(old_array.shape[1:]), "dtype": old_array.dtype.str}
    info = polite.bcast_json(comm, info, root=root)
    return tuple(info["row_shape"]), np.dtype(info["dtype"])
