"""Processor placement and share arithmetic, shared by the policies.

Placement prefers contiguous blocks of workstation ids (first fit: the
lowest block that is long enough) and keeps the subset
restriction of Padhye & Dowdy §2.4: a job that shrinks keeps the lowest ids
of its old set, a job that grows keeps all of it and adds the free ids
nearest to it. All functions are pure except that `take` and `grow` remove
what they hand out from the `free` set they are given (the caller's copy).
"""
from __future__ import annotations

from typing import Sequence


def first_fit(mask: int, n: int) -> int:
    """Lowest id starting n consecutive set bits of `mask`, or -1.

    Bit tricks instead of a scan over ids: this is on the hot path of every
    start. r has bit i set iff bits i..i+span-1 of mask are all set.
    """
    r, span = mask, 1
    while span * 2 <= n:
        r &= r >> span
        span *= 2
    if span < n:
        r &= r >> (n - span)
    return (r & -r).bit_length() - 1


def take_mask(mask: int, n: int) -> tuple[tuple[int, ...], int]:
    """Like `take` on a bitmask of free ids: (ids taken, mask left)."""
    start = first_fit(mask, n)
    if start >= 0:
        return tuple(range(start, start + n)), mask & ~(((1 << n) - 1) << start)
    procs = []
    while len(procs) < n:
        if not mask:
            raise ValueError(f"cannot take {n} processors: too few free")
        low = mask & -mask
        procs.append(low.bit_length() - 1)
        mask ^= low
    return tuple(procs), mask


def take(free: set[int], n: int) -> tuple[int, ...]:
    """n free ids: the lowest contiguous block that holds them (first fit),
    else the lowest ids. Removes them from `free`."""
    k = len(free)
    if n > k or n < 1:
        raise ValueError(f"cannot take {n} of {k} free processors")
    if n == k:
        procs = tuple(sorted(free))
        free.clear()
        return procs
    mask = 0
    for p in free:
        mask |= 1 << p
    start = first_fit(mask, n)
    procs = tuple(range(start, start + n)) if start >= 0 else tuple(sorted(free)[:n])
    free.difference_update(procs)
    return procs


def shrink(old: Sequence[int], n: int) -> tuple[int, ...]:
    """Keep the n lowest ids of the old set (a subset, contiguous if old was)."""
    return tuple(sorted(old)[:n])


def grow(old: Sequence[int], free: set[int], extra: int) -> tuple[int, ...]:
    """The old set plus `extra` free ids, nearest to the old set first."""
    if extra <= 0:
        return tuple(sorted(old))
    lo, hi = min(old), max(old)
    ranked = sorted(free, key=lambda p: (lo - p if p < lo else p - hi if p > hi else 0, p))
    added = ranked[:extra]
    free.difference_update(added)
    return tuple(sorted((*old, *added)))


def equal_shares(n_jobs: int, P: int) -> list[int]:
    """P split over n_jobs as equally as possible, never below 1, larger shares first.

    With more jobs than processors only the first P get one each; the rest get 0.
    """
    if n_jobs <= 0:
        return []
    if n_jobs >= P:
        return [1] * P + [0] * (n_jobs - P)
    base, extra = divmod(P, n_jobs)
    return [base + 1] * extra + [base] * (n_jobs - extra)


def water_fill(caps: Sequence[int], P: int) -> list[int]:
    """Equal shares of P under per-job caps (pmax); leftover goes to the earliest.

    caps are in priority order. A job whose cap is below the equal share gets
    its cap and the rest is shared again among the others; remainders of one
    processor go to the earliest uncapped jobs. More jobs than P: the first P
    get one each.
    """
    n = len(caps)
    if n == 0:
        return []
    if n >= P:
        return [1] * P + [0] * (n - P)
    base, extra = divmod(P, n)
    if min(caps) > base:  # nobody is capped: plain equal shares
        return [base + 1] * extra + [base] * (n - extra)
    order = sorted(range(n), key=caps.__getitem__)
    sizes = [0] * n
    left, k, i = P, n, 0
    while i < n and caps[order[i]] <= left // k:
        sizes[order[i]] = caps[order[i]]
        left -= caps[order[i]]
        k -= 1
        i += 1
    if k:
        share, extra = divmod(left, k)
        for rank, j in enumerate(sorted(order[i:])):
            sizes[j] = share + (1 if rank < extra else 0)
    return sizes
