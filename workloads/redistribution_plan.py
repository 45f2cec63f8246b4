"""Redistribution plans: which row ranges move from which workstation to which.

A plan is pure data computed from the old and the new host lists, so it is
unit-tested without MPI and every rank computes the same plan independently.
Hosts are named, not numbered, because rank numbers change across a restart
while a workstation (and the checkpoint on its disk) does not.
Runs inside the workstation containers: standard library only.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from workloads.partition import Block, block_bounds


class SubsetRestrictionError(ValueError):
    """The new processor set neither contains nor is contained in the old one."""


@dataclass(frozen=True)
class Move:
    """Rows [lo, hi) of every distributed array go from src to dst (host names)."""

    src: str
    dst: str
    lo: int
    hi: int

    @property
    def local(self) -> bool:
        return self.src == self.dst

    @property
    def rows(self) -> int:
        return self.hi - self.lo


def resize_kind(old_hosts: Sequence[str], new_hosts: Sequence[str]) -> str:
    """'loser', 'winner' or 'same', after checking the subset restriction (§2.4).

    P1 ∩ P2 = P1 if |P1| <= |P2|, else P2: the smaller set lies inside the larger.
    """
    old, new = set(old_hosts), set(new_hosts)
    if len(old) != len(old_hosts) or len(new) != len(new_hosts):
        raise ValueError(f"duplicate host in {list(old_hosts)} or {list(new_hosts)}")
    if not new:
        raise ValueError("the new partition is empty")
    if old == new:
        return "same"
    if new < old:
        return "loser"
    if old < new:
        return "winner"
    raise SubsetRestrictionError(
        f"new partition {sorted(new)} neither contains nor is contained in old {sorted(old)}")


def layout(n_rows: int, hosts: Sequence[str]) -> dict[str, Block]:
    """Which rows each host holds when the job runs on `hosts` in that rank order."""
    return dict(zip(hosts, block_bounds(n_rows, len(hosts))))


def plan_moves(n_rows: int, old_hosts: Sequence[str], new_hosts: Sequence[str]) -> list[Move]:
    """All row ranges that must reach their new host, local copies included.

    Every row of the new layout comes from exactly one old host, so the union of
    the moves into a host is its new block.
    """
    resize_kind(old_hosts, new_hosts)
    old_layout = layout(n_rows, old_hosts)
    new_layout = layout(n_rows, new_hosts)
    moves: list[Move] = []
    for dst, new_block in new_layout.items():
        for src, old_block in old_layout.items():
            common = new_block.overlap(old_block)
            if common is not None:
                moves.append(Move(src, dst, common.lo, common.hi))
    return moves


def rows_over_network(moves: Sequence[Move]) -> int:
    """Rows that cross the network (not local copies)."""
    return sum(m.rows for m in moves if not m.local)
