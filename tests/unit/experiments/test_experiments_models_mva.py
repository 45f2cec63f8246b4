"""Multiclass MVA at one CPU (Menascé & Rao eqs. 3-6) and eq. 7, against values worked by hand."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from experiments.models.mva import guest_time_s, inflated_time_s, residence_times_s, shared_time_s
from scheduler.taskgraph.workstations import Owners, Workstation


def test_two_guests_without_think_time_each_take_twice_their_demand():
    assert residence_times_s([2.0, 3.0]) == pytest.approx([4.0, 6.0])  # eq. 6: R = P t'


def test_two_guests_with_think_time_by_hand():
    # Z = 1. Alone: R1 = 2, n1 = 2/3; R2 = 3, n2 = 3/4. Together: R1 = 2 (1 + 3/4) = 3.5, R2 = 3 (1 + 2/3) = 5.
    assert residence_times_s([2.0, 3.0], think_s=1.0) == pytest.approx([3.5, 5.0])


def test_three_guests_by_hand():
    assert residence_times_s([1.0, 2.0, 3.0]) == pytest.approx([3.0, 6.0, 9.0])
    # Z = 1: n{2,3} = 7/9 + 5/6 = 29/18, n{1,3} = 7/11 + 9/11 = 16/11, n{1,2} = 5/8 + 3/4 = 11/8,
    # so R1 = 1 (1 + 29/18), R2 = 2 (1 + 16/11), R3 = 3 (1 + 11/8).
    assert residence_times_s([1.0, 2.0, 3.0], think_s=1.0) == pytest.approx([47 / 18, 54 / 11, 57 / 8])


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(min_value=0.01, max_value=100.0), min_size=1, max_size=7))
def test_mva_without_think_time_is_eq_6(demands):
    assert residence_times_s(demands) == pytest.approx([shared_time_s(t, len(demands)) for t in demands])


def test_one_guest_is_plain_owner_inflation():
    # N = 2, Z = 5, D = 1: rho = 0.2, 1/p0 = 1 + 2 (0.2) + 2 (0.04) = 1.48 (eq. 2 and 7).
    ws = Workstation(name="lx", speed=0.1, owners=Owners(n=2, z_s=5.0, d_s=1.0))
    assert inflated_time_s(0.68, ws) == pytest.approx(6.8 * 1.48)
    assert residence_times_s([inflated_time_s(0.68, ws)]) == pytest.approx([6.8 * 1.48])
    assert guest_time_s(0.68, ws, 1) == pytest.approx(6.8 * 1.48)


def test_eq_7_multiplies_guests_dedicated_time_and_inflation():
    ws = Workstation(name="lx", speed=0.1, owners=Owners(n=2, z_s=5.0, d_s=1.0))
    assert guest_time_s(0.68, ws, 3) == pytest.approx(3 * 6.8 * 1.48)
    dedicated = Workstation(name="s20", speed=0.25)
    assert guest_time_s(1.0, dedicated, 2) == pytest.approx(8.0)
    no_owners = Workstation(name="s5", speed=0.5, owners=Owners(n=0, z_s=5.0, d_s=1.0))
    assert guest_time_s(1.0, no_owners, 1) == pytest.approx(2.0)


@pytest.mark.parametrize("bad, match", [([], "at least one"), ([1.0, 0.0], "must be > 0")])
def test_bad_demands_are_refused(bad, match):
    with pytest.raises(ValueError, match=match):
        residence_times_s(bad)
    with pytest.raises(ValueError, match="guests"):
        shared_time_s(1.0, 0)
