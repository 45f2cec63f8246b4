"""The warm launch path's pure part: which ssh masters to open (the zygote's argv: test_testbed_mpi_command.py)."""
from __future__ import annotations

from testbed.warm import master_pairs


def test_masters_go_from_each_workstation_to_every_higher_numbered_one():
    assert master_pairs(["ws1", "ws2", "ws3"]) == [("ws1", "ws2"), ("ws1", "ws3"), ("ws2", "ws3")]
    assert master_pairs(["ws1"]) == []
    sixteen = [f"ws{i}" for i in range(1, 17)]
    assert len(master_pairs(sixteen)) == 120  # n(n-1)/2 up to MASTERS_UP_TO
    assert master_pairs([*sixteen, "ws17"]) == []  # above: the quadratic term is not paid

