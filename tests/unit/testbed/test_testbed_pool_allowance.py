"""A resident world's start allowance grows with the workstations and their smallest cap: 32
workstations at 0.053 core answered after 124 s, where a fixed 96 s gave up on them."""
from __future__ import annotations

import types

from testbed import pool


def cluster(caps: dict[str, float]) -> types.SimpleNamespace:
    return types.SimpleNamespace(spec=types.SimpleNamespace(cpu=caps.__getitem__))


def test_the_allowance_covers_the_measured_start_and_stays_small_for_a_small_cluster():
    big = cluster({f"ws{i}": 0.053 for i in range(32)})
    assert pool.start_allowance_s(big, list(big.spec.cpu.__self__)) > 124.0
    small = cluster({f"ws{i}": 0.2 for i in range(8)})
    assert pool.start_allowance_s(small, list(small.spec.cpu.__self__)) < 30.0


def test_the_smallest_cap_sets_the_pace():
    mixed = cluster({"ws1": 0.4, "ws2": 0.05})
    alone = cluster({"ws1": 0.05, "ws2": 0.05})
    assert pool.start_allowance_s(mixed, ["ws1", "ws2"]) == pool.start_allowance_s(alone, ["ws1", "ws2"])
