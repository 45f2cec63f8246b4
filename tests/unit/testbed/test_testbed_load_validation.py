"""The pure parts of `nowlab validate owner`: the guest's progress stamps, the dedicated
speed over a window, and the rotation of roles."""
import pytest

from testbed.load.validation import ROLES, _stamps, dedicated_seconds, round_roles


def test_stamps_parse_iterations_and_wall_clock():
    assert _stamps("0 100.5\n50000 101.0\n\n100000 101.5\n") == [(0, 100.5), (50000, 101.0), (100000, 101.5)]


def test_dedicated_seconds_at_a_steady_speed():
    stamps = [(k * 1000, 10.0 + k) for k in range(11)]  # 1000 iterations a second
    assert dedicated_seconds(stamps, 5000, 12.0, 16.0) == pytest.approx(5.0)


def test_dedicated_seconds_follows_a_speed_change_inside_the_window():
    # 1000/s for 5 s, then 500/s: over [13, 17] the meter did 2000 + 1000 iterations in 4 s
    stamps = [(k * 1000, 10.0 + k) for k in range(6)] + [(5000 + k * 500, 15.0 + k) for k in range(1, 6)]
    assert dedicated_seconds(stamps, 3000, 13.0, 17.0) == pytest.approx(4.0)
    assert dedicated_seconds(stamps, 3000, 16.0, 19.0) == pytest.approx(6.0)


def test_every_workstation_plays_every_role_once():
    hosts = [f"ws{i}" for i in range(1, 10)]
    rounds = [round_roles(hosts, r) for r in range(len(ROLES))]
    for ws in hosts:
        assert sorted(r[ws].name for r in rounds) == sorted(role.name for role in ROLES)
    for r in rounds:  # every round has each role three times
        assert sorted(role.name for role in r.values()) == sorted([role.name for role in ROLES] * 3)


def test_round_robin_cores_see_dedicated_and_loaded_in_every_round():
    hosts = [f"ws{i}" for i in range(1, 10)]
    core = {ws: i % 2 for i, ws in enumerate(hosts)}
    for r in range(len(ROLES)):
        roles = round_roles(hosts, r)
        for c in (0, 1):
            here = {roles[ws].owners for ws in hosts if core[ws] == c}
            assert here == {True, False}
