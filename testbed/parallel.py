"""Run one function over many workstations at once: Docker and SSH calls mostly wait."""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Callable, Iterable, TypeVar

T = TypeVar("T")
R = TypeVar("R")


def parallel(fn: Callable[[T], R], items: Iterable[T], workers: int = 16) -> list[R]:
    """`[fn(x) for x in items]`, in order, on up to `workers` threads; the first error is raised."""
    with ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(fn, items))
