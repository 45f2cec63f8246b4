"""Owner-interference formulas, cap-mode schedules, traces and the monitor's parsing."""
from __future__ import annotations

import math

import pandas as pd
import pytest

from testbed.load.model import available_fraction, guest_time, inflate, owner_utilization, p0
from testbed.load.caps import extend, onoff_schedule, read_trace
from testbed.backends.docker.cgroups import processes_cpu_ns
from testbed.load.monitor import OWNER_MARK, parse_class_stats, parse_stamped_class_stats, parse_tc_rate, summarize
from testbed.spec import OwnerLoad, SpecError


def test_owner_utilisation_by_hand():
    # N=2, rho=0.2: p0 = 1 / (1 + 2*0.2 + 2*1*0.2^2) = 1/1.48
    assert p0(2, 5.0, 1.0) == pytest.approx(1 / 1.48)
    assert owner_utilization(2, 5.0, 1.0) == pytest.approx(0.48 / 1.48)
    # N=4, rho=0.5: 1 + 4*.5 + 12*.25 + 24*.125 + 24*.0625 = 10.5
    assert owner_utilization(4, 1.0, 0.5) == pytest.approx(1 - 1 / 10.5)


@pytest.mark.parametrize("rho", [0.01, 0.1, 0.5, 2.0])
def test_one_owner_is_rho_over_one_plus_rho(rho):
    assert owner_utilization(1, 1.0, rho) == pytest.approx(rho / (1 + rho))


def test_light_load_limit_is_n_rho():
    assert owner_utilization(3, 1.0, 1e-7) == pytest.approx(3e-7, rel=1e-5)
    assert owner_utilization(0, 1.0, 0.5) == 0.0


def test_inflation_and_mva():
    u = owner_utilization(2, 5.0, 1.0)
    assert inflate(10.0, u) == pytest.approx(10.0 * 1.48)
    assert guest_time(10.0, 2, 2, 5.0, 1.0) == pytest.approx(2 * 10.0 * 1.48)
    assert available_fraction(2, 5.0, 1.0) == pytest.approx(1 / 1.48)


@pytest.mark.parametrize("args, field", [((-1, 1.0, 1.0), "n"), ((1, 0.0, 1.0), "z"), ((1, 1.0, -2.0), "d"),
                                         ((1.5, 1.0, 1.0), "n")])
def test_bad_owner_parameters_name_the_field(args, field):
    with pytest.raises(ValueError, match=rf"^{field}:"):
        owner_utilization(*args)


def test_owner_spec_refuses_bad_values():
    for bad in ({"n": -1, "z": 1, "d": 1}, {"n": 1, "z": 0, "d": 1}, {"n": 1, "z": 1, "d": -1}):
        with pytest.raises(ValueError):
            OwnerLoad(**bad)


@pytest.mark.parametrize("n, rho", [(1, 0.1), (2, 0.2), (4, 0.5)])
def test_onoff_schedule_has_the_queue_s_idle_fraction(n, rho):
    horizon = 50_000.0
    sched = onoff_schedule(OwnerLoad(n=n, z=1.0, d=rho), horizon, seed=11)
    assert all(a[0] < b[0] for a, b in zip(sched, sched[1:]))
    assert {f for _, f in sched} <= {0.0, 1.0}
    assert all(a[1] != b[1] for a, b in zip(sched, sched[1:]))  # it alternates
    avail = sum(f * (t2 - t) for (t, f), (t2, _) in zip(sched, sched[1:] + [(horizon, 0.0)])) / horizon
    assert avail == pytest.approx(p0(n, 1.0, rho), abs=0.01)


def test_onoff_is_repeatable_and_seeded():
    spec = OwnerLoad(n=2, z=1.0, d=0.3)
    assert onoff_schedule(spec, 100, 5) == onoff_schedule(spec, 100, 5)
    assert onoff_schedule(spec, 100, 5) != onoff_schedule(spec, 100, 6)
    assert onoff_schedule(OwnerLoad(n=0, z=1, d=1), 100, 1) == [(0.0, 1.0)]


def write(tmp_path, text):
    path = tmp_path / "trace.csv"
    path.write_text(text)
    return path


def test_trace_parsing(tmp_path):
    trace = read_trace(write(tmp_path, "time,workstation,available\n0,ws1,1\n10,ws1,0.25\n0,ws2,0.5\n"))
    assert trace == {"ws1": [(0.0, 1.0), (10.0, 0.25)], "ws2": [(0.0, 0.5)]}


@pytest.mark.parametrize("text, words", [
    ("time,workstation,available\n0,ws1,1\n5,ws1,0.5\n5,ws1,0.2\n", "trace.csv:4: time"),
    ("time,workstation,available\n0,ws1,1.5\n", "trace.csv:2: available"),
    ("time,workstation,available\n-1,ws1,0.5\n", "trace.csv:2: time"),
    ("time,available\n0,1\n", "missing column(s) workstation"),
    ("time,workstation,available\nx,ws1,1\n", "trace.csv:2"),
])
def test_bad_traces_say_where(tmp_path, text, words):
    with pytest.raises(SpecError) as info:
        read_trace(write(tmp_path, text))
    assert words in str(info.value)


def test_short_traces_hold_or_repeat():
    trace = [(0.0, 1.0), (10.0, 0.5)]
    assert extend(trace, 100, "hold") == trace
    repeated = extend(trace, 45, "repeat")
    assert repeated == [(0.0, 1.0), (10.0, 0.5), (20.0, 1.0), (30.0, 0.5), (40.0, 1.0)]


TC = """class htb 1:1 root rate 20Mbit ceil 20Mbit burst 12500b cburst 12500b
 Sent 1000000 bytes 900 pkt (dropped 0, overlimits 0 requeues 0)
 backlog 0b 0p requeues 0
class htb 1:100 parent 1:1 prio 0 rate 6666Kbit ceil 4Mbit burst 6056b cburst 6056b
 Sent 250000 bytes 200 pkt (dropped 0, overlimits 0 requeues 0)
 backlog 0b 0p requeues 0
"""


def test_tc_parsing():
    assert parse_tc_rate("12500Kbit") == 12_500_000 and parse_tc_rate("1Gbit") == 10**9
    assert parse_tc_rate("96bit") == 96
    assert parse_class_stats(TC) == {"1:1": (20_000_000, 1_000_000), "1:100": (4_000_000, 250_000)}


def test_tc_counters_carry_the_time_they_were_read_inside_the_workstation():
    stamp, classes = parse_stamped_class_stats("1795442123.250000000\n" + TC)
    assert stamp == 1795442123.25 and classes == parse_class_stats(TC)
    with pytest.raises(ValueError, match="not a time stamp"):
        parse_stamped_class_stats(TC)


def test_owner_cpu_is_read_from_proc_for_owner_processes_only(tmp_path):
    proc = tmp_path / "proc"
    for pid, cmd, ns in (("10", b"python3\0/opt/nowlab/agents/owner.py\0--n\0", 5_000),
                         ("11", b"python3\0-m\0workloads.cg\0", 7_000_000),
                         ("12", b"python3\0/opt/nowlab/agents/owner.py\0", 3_000)):
        (proc / pid).mkdir(parents=True)
        (proc / pid / "cmdline").write_bytes(cmd)
        (proc / pid / "schedstat").write_text(f"{ns} 0 0\n")
    procs = tmp_path / "cgroup.procs"
    procs.write_text("10\n11\n12\n99\n")  # 99 has ended
    assert processes_cpu_ns(procs, OWNER_MARK, proc) == 8_000


def test_summary_of_a_window():
    cpu = pd.DataFrame([{"t": t, "workstation": ws, "avail_cpu": v} for t in (1, 2, 3)
                        for ws, v in (("a", 0.5 + t / 10), ("b", 1.0))])
    links = pd.DataFrame([{"t": t, "src": s, "dst": d, "avail_bps": r} for t in (1, 2, 3)
                          for s, d, r in (("a", "b", 10e6 * t), ("b", "a", 5e6), ("a", "c", 1.0))])
    s = summarize(cpu, links, ["a", "b"], t0=2, t1=3)
    assert s.avg_avail_cpu == {"a": pytest.approx(0.75), "b": 1.0}
    assert s.avg_avail_bw == {("a", "b"): pytest.approx(25e6), ("b", "a"): 5e6}
    assert s.min_avg_avail_cpu == pytest.approx(0.75) and s.min_avg_avail_bw == 5e6
    with pytest.raises(ValueError, match="workstations"):
        summarize(cpu, links, ["z"])
    assert math.isnan(summarize(cpu, links.iloc[0:0], ["a"]).min_avg_avail_bw)
