"""The simulated platform's stated model: a profile's time on an allocation, and where its ranks go."""
from __future__ import annotations

import math
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from experiments.batsim.platform import (Host, Platform, PlatformError, check_simulable, executors, from_spec,
                                         run_time_s, uniform)
from experiments.batsim.workload import DelayProfile, NowlabProfile, ParallelHomogeneousProfile

ROOT = Path(__file__).resolve().parents[3]
# ws0 at 1 reference core, ws1 at 0.5; egress 100 and 10 Mbit/s
MIXED = Platform((Host("ws0", 1.0, 100_000_000), Host("ws1", 0.5, 10_000_000)))


def test_a_delay_takes_its_delay_wherever_it_runs():
    assert run_time_s(MIXED, DelayProfile("d", 7.5), (0,)) == 7.5
    assert run_time_s(MIXED, DelayProfile("d", 7.5), (0, 1, 1)) == 7.5


def test_parallel_homogeneous_is_the_slowest_hosts_compute_plus_the_slowest_links_traffic():
    p = ParallelHomogeneousProfile("p", cpu_flop=1e9, com_bytes=1e6)
    # compute: 1e9 / (0.5 * 1e9) = 2 s on ws1; traffic: each rank sends 1 MB to the other:
    # 8e6 bit / 10 Mbit/s = 0.8 s on ws1's link
    assert math.isclose(run_time_s(MIXED, p, (0, 1)), 2.0 + 0.8)
    # both ranks on ws0: twice the compute there (2 s), no traffic between hosts
    assert math.isclose(run_time_s(MIXED, p, (0, 0)), 2.0)
    assert math.isclose(run_time_s(MIXED, ParallelHomogeneousProfile("one", 3e9, 1e9), (0,)), 3.0)


def test_executors_go_round_robin_or_by_the_mapping():
    assert executors(4, (2, 5), None) == (2, 5, 2, 5)
    assert executors(2, (2, 5, 7), None) == (2, 5)
    assert executors(3, (2, 5), {"0": "1", "1": "1", "2": "0"}) == (5, 5, 2)
    with pytest.raises(PlatformError, match=r"^data.mapping: no position for executor 1 \(keys must be 0..1\)$"):
        executors(2, (2, 5), {"0": "0", "2": "1"})
    with pytest.raises(PlatformError, match=r"^data.mapping.0: position 2 is outside the allocation of 2 resources$"):
        executors(1, (2, 5), {"0": "2"})


@given(cpu=st.floats(0, 1e12), com=st.floats(0, 1e9), speed=st.floats(0.01, 4), n=st.integers(1, 6))
def test_more_speed_never_takes_longer_and_one_host_never_talks(cpu, com, speed, n):
    p = ParallelHomogeneousProfile("p", cpu, com)
    slow, fast = uniform(n, speed_ref_cores=speed), uniform(n, speed_ref_cores=speed * 2)
    alloc = tuple(range(n))
    assert run_time_s(fast, p, alloc) <= run_time_s(slow, p, alloc)
    assert math.isclose(run_time_s(slow, p, (0,) * n), cpu * n / (speed * 1e9))


def test_a_cluster_spec_gives_the_workstations_names_speeds_and_egress():
    platform = from_spec(ROOT / "compose" / "specs" / "demo4.toml")
    assert [(h.name, h.speed_ref_cores, h.egress_bit_s) for h in platform.hosts] == [
        ("ws1", 0.40, 100_000_000), ("ws2", 0.25, 100_000_000), ("ws3", 0.25, 100_000_000),
        ("ws4", 0.10, 20_000_000)]
    assert platform.resources()[3].properties == {"speed": "1e+08", "speed_ref_cores": "0.1",
                                                  "egress_bit_s": "20000000"}


def test_bad_platforms_and_real_programs_are_one_line():
    with pytest.raises(PlatformError, match=r"^resources: must be >= 1, got 0$"):
        uniform(0)
    with pytest.raises(PlatformError, match=r"^hosts\[1\] \(b\): speed_ref_cores must be > 0, got 0$"):
        Platform((Host("a", 1, 1), Host("b", 0, 1)))
    cg = NowlabProfile("cg", "cg", ("--n", "1000"))
    with pytest.raises(PlatformError, match=r"^profile 'cg' \(type nowlab, program cg, used by job 'w0!7'\): "
                                            r"runtime_s: missing; to be simulated it states runtime_s \(s\) or "
                                            r"work_ref_s \(reference-seconds per process\)$"):
        check_simulable({"cg": cg}, {"cg": "w0!7"})
    check_simulable({"cg": cg}, {})  # a profile no job uses is fine
    check_simulable({"cg": NowlabProfile("cg", "cg", (), runtime_s=2.0)}, {"cg": "w0!7"})


def test_a_nowlab_profile_runs_its_stated_time_or_its_work_on_the_slowest_hosts_share():
    assert run_time_s(MIXED, NowlabProfile("c", "command", ("./ring",), runtime_s=4.5), (0, 1)) == 4.5
    assert run_time_s(MIXED, NowlabProfile("cg", "cg", (), runtime_s=4.5), (1,)) == 4.5
    cg = NowlabProfile("cg", "cg", ("--n", "500"), work_ref_s=2.0)
    assert math.isclose(run_time_s(MIXED, cg, (0,)), 2.0)  # one rank on ws0 (1 reference core)
    assert math.isclose(run_time_s(MIXED, cg, (0, 1)), 4.0)  # ws1 at 0.5: its rank takes 4 s
    assert math.isclose(run_time_s(MIXED, cg, (0, 0, 1)), 4.0)  # two ranks share ws0: 4 s there too
    with pytest.raises(PlatformError, match=r"^profile 'u' \(type nowlab, a user's command\): runtime_s: missing"):
        run_time_s(MIXED, NowlabProfile("u", "command", ("./ring",)), (0,))
