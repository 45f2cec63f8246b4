"""Owners in live time-sharing runs (experiments/studies/zhou_brent/owners.py): their log, summaries and set-up, pure."""
from __future__ import annotations

import math

import pytest

from experiments.studies.zhou_brent.owners import (OwnerCommand, OwnerLogError, OwnerSetup, parse_owner_log,
                                          read_owner_commands, summarise, write_owner_commands)
from experiments.studies.zhou_brent.spec import TimeshareSpec


def test_the_log_reads_each_command_and_leaves_out_a_line_cut_by_the_stop():
    text = "0 100.0 0.5 0.1\n1 100.2 1.5 0.3\n0 101"
    assert parse_owner_log("ws4", text) == (OwnerCommand("ws4", 0, 100.0, 0.5, 0.1), OwnerCommand("ws4", 1, 100.2, 1.5, 0.3))


@pytest.mark.parametrize("text", ["0 1 2\n", "x 1 2 3\n", "0 1 2 3 4\n"])
def test_a_bad_log_line_is_one_line_naming_the_workstation(text):
    with pytest.raises(OwnerLogError, match=r"^ws2: owner log line 1: expected"):
        parse_owner_log("ws2", text)


def test_summaries_per_workstation_within_the_window():
    commands = [OwnerCommand("ws1", 0, t, r, 0.1) for t, r in ((0.0, 9.0), (1.0, 0.2), (2.0, 0.4), (3.0, 0.6))]
    (s,) = summarise(commands, since_s=1.0)
    assert (s.workstation, s.commands) == ("ws1", 3)
    assert s.mean_response_s == pytest.approx(0.4) and s.median_response_s == pytest.approx(0.4)
    assert s.p95_response_s == pytest.approx(0.6) and s.stretch == pytest.approx(4.0)
    assert summarise(commands, since_s=10.0) == ()


def test_commands_survive_the_csv_round_trip(tmp_path):
    assert read_owner_commands(tmp_path) is None
    commands = (OwnerCommand("ws4", 0, 1795615770.17096, 0.277461, 0.073026),)
    write_owner_commands(tmp_path, commands)
    assert read_owner_commands(tmp_path) == commands
    write_owner_commands(tmp_path, ())
    assert read_owner_commands(tmp_path) == ()


def test_bad_owner_setups_are_one_line():
    with pytest.raises(ValueError, match=r"^owner.think_s: must be > 0"):
        OwnerSetup({"ws1": 1}, math.nan, 0.1)
    with pytest.raises(ValueError, match=r"^simulate.owners.ws1: must be >= 1"):
        OwnerSetup({"ws1": 0}, 1.0, 0.1)
    owners = OwnerSetup({"ws1": 2, "ws3": 1}, 3.0, 1.0, seed=7)
    argv = owners.argv("python3", "owner.py", "ws3", "/l", "/p", 0.2)
    assert argv[argv.index("--n") + 1] == "1" and argv[argv.index("--seed") + 1] == "7001"
    assert argv[argv.index("--d") + 1] == "1.0" and argv[argv.index("--speed") + 1] == "0.2"
    assert owners.ready == 0.25


def test_a_spec_gives_live_owners_only_where_it_says():
    base = {"name": "o", "workstations": ["ws1", "ws2"], "round_s": 1.0,
            "job": [{"id": "A", "demand_ref_s": 1.0, "beta": 0.5, "workstations": ["ws1"]}]}
    assert TimeshareSpec.model_validate(base).live_owners() is None
    with pytest.raises(ValueError, match=r"owner: live owners need \[simulate\] owners"):
        TimeshareSpec.model_validate({**base, "owner": {"think_s": 1.0, "demand_s": 0.1}})
    spec = TimeshareSpec.model_validate({**base, "owner": {"think_s": 1.0, "demand_s": 0.1},
                                         "simulate": {"owners": {"ws2": 1}}})
    assert spec.live_owners() == OwnerSetup({"ws2": 1}, 1.0, 0.1, 1)
