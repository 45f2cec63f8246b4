"""The four §6 placement policies on one hand-worked example, and their registry."""
from __future__ import annotations

import pytest

from scheduler.taskgraph.placement import (
    POLICIES, PlacementState, get_policy, parallel_load_speed, pvm_default, workstation_load_speed,
    workstation_speed)
from scheduler.taskgraph.spec import TaskSpec
from scheduler.taskgraph.workstations import Owners, Workstation, select

# Host list a, b, c with speeds 1, 3, 2: fastest first is b, c, a.
WS = (Workstation(name="a", speed=1.0), Workstation(name="b", speed=3.0), Workstation(name="c", speed=2.0))
BATCH = (TaskSpec(name="x", demand_ref_s=1.0), TaskSpec(name="y", demand_ref_s=5.0),
         TaskSpec(name="z", demand_ref_s=3.0))


def test_pvm_default_is_round_robin_over_the_host_list_from_the_cursor():
    assert pvm_default(BATCH, WS, PlacementState(placed=0)) == {"x": "a", "y": "b", "z": "c"}
    assert pvm_default(BATCH, WS, PlacementState(placed=1)) == {"x": "b", "y": "c", "z": "a"}


def test_workstation_speed_is_round_robin_fastest_first_and_ignores_demand():
    assert workstation_speed(BATCH, WS, PlacementState(placed=0)) == {"x": "b", "y": "c", "z": "a"}
    assert workstation_speed(BATCH, WS, PlacementState(placed=2)) == {"x": "a", "y": "b", "z": "c"}


def test_parallel_load_speed_gives_the_largest_task_the_fastest_workstation():
    # y (5) -> b (3), z (3) -> c (2), x (1) -> a (1), whatever runs there already.
    busy = PlacementState(placed=7, executing={"b": (100.0,)})
    assert parallel_load_speed(BATCH, WS, busy) == {"y": "b", "z": "c", "x": "a"}
    four = (*BATCH, TaskSpec(name="w", demand_ref_s=4.0))  # more tasks than hosts: wraps to the fastest
    assert parallel_load_speed(four, WS, PlacementState()) == {"y": "b", "w": "c", "z": "a", "x": "b"}


def test_workstation_load_speed_takes_the_least_alpha_in_ready_queue_order():
    # b already runs 6 ref-s. x: alpha a 1/1, b 7/3, c 1/2 -> c (c now 1).
    # y: a 5, b 11/3, c 6/2 = 3 -> c (c now 6). z: a 3, b 9/3 = 3, c 9/2 -> tie a, b: the faster, b.
    state = PlacementState(executing={"b": (6.0,)})
    assert workstation_load_speed(BATCH, WS, state) == {"x": "c", "y": "c", "z": "b"}


def test_workstation_load_speed_counts_owner_load_as_lost_speed():
    # c keeps a quarter of its CPU: its speed is 0.5, so x's alpha there is 2 and a (1) wins.
    state = PlacementState(executing={"b": (6.0,)}, available={"c": 0.25})
    assert workstation_load_speed(BATCH[:1], WS, state) == {"x": "a"}


def test_the_registry_knows_the_four_and_lists_them_for_an_unknown_name():
    assert list(POLICIES) == ["pvm-default", "workstation-speed", "parallel-load-speed", "workstation-load-speed"]
    assert get_policy("PVM_Default") is pvm_default
    with pytest.raises(ValueError) as exc:
        get_policy("fastest")
    assert str(exc.value) == ("policy: unknown 'fastest' (known: pvm-default, workstation-speed, "
                              "parallel-load-speed, workstation-load-speed)")


def test_asking_for_more_workstations_than_the_cluster_has_is_one_line():
    with pytest.raises(ValueError) as exc:
        select(WS, 4)
    assert str(exc.value) == "count: asked for 4 workstations, the cluster has 3"
    kinds = (Workstation(name="l1", speed=0.1, kind="LX"), Workstation(name="s1", speed=0.2, kind="S5"))
    with pytest.raises(ValueError, match="asked for 2 workstations of kind 'LX', the cluster has 1"):
        select(kinds, 2, "LX")
    with pytest.raises(ValueError, match=r"no workstation of kind 'SUN' \(known: LX, S5\)"):
        select(kinds, 1, "SUN")


def test_select_takes_the_first_in_list_order_and_can_set_owners():
    o = Owners(n=2, z_s=5.0, d_s=1.0)
    chosen = select(WS, 2, owners=o)
    assert [w.name for w in chosen] == ["a", "b"] and all(w.owners == o for w in chosen)
