"""Block partitioning of rows across ranks.

Both workloads keep their distributed arrays in contiguous row blocks, one per
rank, so that a resize only moves whole row ranges and every rank can work out
the whole layout from (rows, ranks) alone, without asking anyone.
Runs inside the workstation containers: standard library only.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Block:
    """Half-open row range [lo, hi) of a distributed array."""

    lo: int
    hi: int

    @property
    def rows(self) -> int:
        return self.hi - self.lo

    def overlap(self, other: "Block") -> "Block | None":
        lo, hi = max(self.lo, other.lo), min(self.hi, other.hi)
        return Block(lo, hi) if lo < hi else None


def block_bounds(n_rows: int, n_ranks: int) -> list[Block]:
    """Split n_rows into n_ranks contiguous blocks whose sizes differ by at most one.

    The first n_rows % n_ranks blocks get the extra row, as MPI codes usually do,
    so the layout is the same whichever rank computes it.
    """
    if n_ranks < 1:
        raise ValueError(f"need at least one rank, got {n_ranks}")
    if n_rows < 0:
        raise ValueError(f"negative row count {n_rows}")
    base, extra = divmod(n_rows, n_ranks)
    blocks: list[Block] = []
    lo = 0
    for rank in range(n_ranks):
        hi = lo + base + (1 if rank < extra else 0)
        blocks.append(Block(lo, hi))
        lo = hi
    return blocks


def counts_and_displacements(n_rows: int, n_ranks: int, row_len: int = 1) -> tuple[list[int], list[int]]:
    """Element counts and offsets for Allgatherv of a row-blocked array."""
    blocks = block_bounds(n_rows, n_ranks)
    counts = [b.rows * row_len for b in blocks]
    displs = [b.lo * row_len for b in blocks]
    return counts, displs
