"""The warm launch path's pure parts: which ssh masters to open, how argv goes through the zygote."""
from __future__ import annotations

from testbed.warm import CLIENT_ARGV, master_pairs, through_zygote


def test_masters_go_from_each_workstation_to_every_higher_numbered_one():
    assert master_pairs(["ws1", "ws2", "ws3"]) == [("ws1", "ws2"), ("ws1", "ws3"), ("ws2", "ws3")]
    assert master_pairs(["ws1"]) == []
    sixteen = [f"ws{i}" for i in range(1, 17)]
    assert len(master_pairs(sixteen)) == 120  # n(n-1)/2 up to MASTERS_UP_TO
    assert master_pairs([*sixteen, "ws17"]) == []  # above: the quadratic term is not paid


def test_python_modules_go_through_the_zygote_client_and_other_programs_do_not():
    assert through_zygote(["python3", "-m", "workloads.cg", "--n", "5"]) == [
        *CLIENT_ARGV, "-m", "workloads.cg", "--n", "5"]
    assert through_zygote(["true"]) == ["true"]
    assert through_zygote(["python3", "script.py"]) == ["python3", "script.py"]
