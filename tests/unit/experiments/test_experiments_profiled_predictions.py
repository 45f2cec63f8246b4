"""Predictions from profiles and calibration alone (issue 12, items 3 and 4), without containers.

The resize-cost fit, the engine's per-resize cost, start-up and work-first
safe points, the overhead knob in config and replay, and the report's raw
and speed-normalised errors. The live halves: the overhead knob in
test_experiments_overhead_knob_live.py; EQUI's preemptions live against predicted in
checks/equi_preemptions.py.
"""
from __future__ import annotations

import math
import tomllib

import pandas as pd
import pytest

from experiments.config import ConfigError, from_dict
from experiments.models.resize import (ResizeFit, ResizeSample, busiest_fraction, busiest_received_fraction,
                                      moved_fraction)
from experiments.predict import ClassModel, predict
from experiments.profiles import ResizeScript, resize_sizes
from scheduler.jobs import SubmittedJob
from experiments.reporting.run_stats import cell_table, compare, error_table, normalised, summarize
from scheduler.engine import simulate
from scheduler.model import Job, SevcikModel


def test_moved_fraction_follows_the_block_plan():
    assert moved_fraction((0, 1), (0, 1, 2, 3)) == pytest.approx(0.75)  # rows 1/4..1/2 and 1/2..1 leave
    assert moved_fraction((0, 1, 2, 3), (0, 1)) == pytest.approx(0.75)
    assert moved_fraction((0,), (0, 1)) == pytest.approx(0.5)


def test_busiest_fraction_is_the_largest_share_one_workstation_sends():
    # 4 -> 2: 1 sends rows 1/4..1/2 to 0, 2 and 3 send theirs to 1: a quarter each
    assert busiest_fraction((0, 1, 2, 3), (0, 1)) == pytest.approx(0.25)
    # 2 -> 4: 0 sends 1/4..1/2 to 1, 1 sends 1/2..3/4 and 3/4..1 to 2 and 3: a half from 1
    assert busiest_fraction((0, 1), (0, 1, 2, 3)) == pytest.approx(0.5)
    assert busiest_fraction((0,), (0, 1)) == pytest.approx(0.5) and busiest_fraction((0, 1), (0, 1)) == 0.0


def test_resize_fit_recovers_a_fixed_part_a_grow_part_and_the_bytes_over_the_links():
    data, link, fixed, grow = 2_000_000, 10_000_000, 1.5, 0.3
    pairs = [((0, 1, 2, 3), (0, 1)), ((0, 1), (0, 1, 2, 3)), ((0, 1), (0,)), ((0,), (0, 1))] * 2
    samples = [ResizeSample(o, n, fixed + (grow if len(n) > len(o) else 0) + 8 * data * busiest_fraction(o, n) / link,
                            round(data * moved_fraction(o, n)), 0.4 if len(n) < len(o) else None) for o, n in pairs]
    fit = ResizeFit.fit(samples, link)
    assert fit.data_bytes == pytest.approx(data, rel=1e-6)
    assert fit.fixed_s == pytest.approx(fixed, abs=1e-6) and fit.per_proc_s == pytest.approx(0, abs=1e-6)
    assert fit.grow_s == pytest.approx(grow, abs=1e-6) and fit.release_s == pytest.approx(0.4)
    # 4 -> 2: the busiest sender moves 0.25 of 2 MB = 0.4 s at 10 Mbit/s; 1 -> 2 moves 0.5: 0.8 s, plus the grow's 0.3
    assert fit.cost((0, 1, 2, 3), (0, 1)) == pytest.approx(1.9)
    assert fit.cost((0,), (0, 1)) == pytest.approx(2.6)
    assert ResizeFit.from_dict(fit.to_dict()) == fit


def test_busiest_received_fraction_is_the_largest_share_one_workstation_takes_in():
    # 4 -> 2: 1 takes in rows 1/2..1 from 2 and 3; 0 takes in 1/4..1/2 from 1
    assert busiest_received_fraction((0, 1, 2, 3), (0, 1)) == pytest.approx(0.5)
    # 8 -> 4 on the profile's sets: each survivor takes in at most a quarter
    assert busiest_received_fraction(tuple(range(8)), (0, 1, 2, 3)) == pytest.approx(0.25)
    assert busiest_received_fraction((0, 1), (0, 1)) == 0.0


def test_resize_fit_finds_a_receive_cost_when_shrinks_onto_few_take_longer():
    # the profile's pairs: 8 <-> 4 and 4 <-> 2, each twice; a receiver takes in at 400 Mbit/s
    data, link, recv, fixed = 50_000_000, 100_000_000, 400_000_000, 0.1
    pairs = [(tuple(range(8)), (0, 1, 2, 3)), ((0, 1, 2, 3), tuple(range(8))),
             ((0, 1, 2, 3), (0, 1)), ((0, 1), (0, 1, 2, 3))] * 2
    samples = [ResizeSample(o, n, fixed + 8 * data * busiest_fraction(o, n) / link
                            + 8 * data * busiest_received_fraction(o, n) / recv,
                            round(data * moved_fraction(o, n))) for o, n in pairs]
    fit = ResizeFit.fit(samples, link)
    assert fit.recv_bit_s == pytest.approx(recv, rel=1e-6) and fit.fixed_s == pytest.approx(fixed, abs=1e-6)
    # a shrink onto one workstation it never profiled: 2 s over the link, then 25 MB in at 400 Mbit/s
    assert fit.cost((3, 5), (5,)) == pytest.approx(0.1 + 2.0 + 0.5)
    assert ResizeFit.from_dict(fit.to_dict()) == fit
    # times that do not grow with the receiver's bytes leave the term out
    flat = [ResizeSample(s.old, s.new, fixed + 8 * data * busiest_fraction(s.old, s.new) / link, s.bytes_moved)
            for s in samples]
    assert ResizeFit.fit(flat, link).recv_bit_s is None


def test_resize_fit_keeps_a_per_p_part_only_when_the_data_show_one():
    pairs = [((0, 1, 2, 3), (0, 1)), ((0, 1), (0, 1, 2, 3)), ((0, 1), (0,)), ((0,), (0, 1))]
    samples = [ResizeSample(o, n, 1.0 + 0.5 * max(len(o), len(n)), 0) for o, n in pairs]
    fit = ResizeFit.fit(samples, 1e9)
    assert (fit.fixed_s, fit.per_proc_s) == (pytest.approx(1.0, abs=1e-6), pytest.approx(0.5, abs=1e-6))
    with pytest.raises(ValueError, match="no profiled resize"):
        ResizeFit.fit([], 1e9)


def test_the_profile_script_shrinks_and_grows_between_the_largest_sizes():
    assert resize_sizes([1, 2, 4, 8]) == [8, 4, 8, 4, 2, 4]
    assert resize_sizes([1, 2]) == [2, 1, 2, 1]
    with pytest.raises(ValueError):
        ResizeScript([4])


def _two_jobs(**job):
    model = SevcikModel(8.0, 0.0, 0.0, 2)  # T(1) = 8, T(2) = 4
    return [Job(0, 0.0, model, 4, **job), Job(1, 0.0, model, 4, **job)]


def test_engine_acknowledges_at_once_unless_jobs_work_first():
    # both arrive at 0; EQUI starts job 0 on {0,1}, then preempts it for job 1
    old = simulate(_two_jobs(), "EQUI", 2)
    assert [e.time for e in old.timeline if e.event == "ack"] == [0.0]  # at progress 0: the engine's idealisation
    new = simulate(_two_jobs(work_first=True), "EQUI", 2)
    assert [e.time for e in new.timeline if e.event == "ack"][0] == pytest.approx(1.0)  # one phase of 4 s on 2
    late = simulate(_two_jobs(work_first=True, startup=2.5), "EQUI", 2)
    assert [e.time for e in late.timeline if e.event == "ack"][0] == pytest.approx(3.5)  # launched, then a phase
    assert late.jobs[0].start == 0.0  # the start-up counts in its execution, as live


def test_engine_prices_each_resize_by_its_sets():
    seen = []

    def cost(old, new):
        seen.append((old, new))
        return 0.5 * len(old) + len(new)

    r = simulate(_two_jobs(work_first=True, resize_cost=cost, reconfig_cost=99.0), "EQUI", 2)
    assert seen[0] == ((0, 1), (0,))  # the shrink at job 1's arrival: 1 + 1 = 2 s
    shrink = next(e.time for e in r.timeline if e.event == "resize")
    # job 0 resumes at shrink + 2 s with 3/4 left on one processor (8 s): 6 s more
    assert r.jobs[0].finish == pytest.approx(shrink + 2.0 + 6.0)


def test_overhead_knob_in_the_replay():
    base = ClassModel("a", W=4.0, alpha=0.0, beta=0.0, phases=4, reconfig_s=1.0, pmax=2)
    slow = ClassModel("a", W=4.0, alpha=0.0, beta=0.0, phases=4, reconfig_s=1.0, pmax=2,
                      extra_launch_s=2.0, extra_resize_s=0.5)
    alone = [SubmittedJob(0, "a", 0.0)]
    assert predict(alone, {"a": base}, "EQUI", 2)[0].finish_s == pytest.approx(2.0)
    assert predict(alone, {"a": slow}, "EQUI", 2)[0].finish_s == pytest.approx(4.0)  # + the launch delay
    assert slow.resize_cost((0, 1), (0,)) == pytest.approx(1.5) and slow.startup() == pytest.approx(2.0)
    profiled = ClassModel("a", W=4.0, alpha=0.0, beta=0.0, phases=4, pmax=2, launch_s=3.0, startup_s=1.0)
    assert predict(alone, {"a": profiled}, "EQUI", 2)[0].finish_s == pytest.approx(1.0 + 2.0 + 2.0)
    fit = ResizeFit(1.0, 0.0, 1_000_000, 8_000_000)
    priced = ClassModel("a", W=4.0, alpha=0.0, beta=0.0, phases=4, resize=fit, extra_resize_s=0.5)
    assert priced.resize_cost((0, 1), (0,)) == pytest.approx(1.0 + 0.5 + 0.5)  # half of 1 MB at 1 MB/s


def _config(**overhead):
    raw = tomllib.loads("""
name = "t"
title = "t"
minutes = 1
cluster = "c.toml"
policies = ["EQUI"]
[class.a]
workload = "synthetic"
[arrivals]
rates = [0.1]
jobs = 2
mix = { a = 1.0 }
""")
    if overhead:
        raw["overhead"] = overhead
    return from_dict(raw)


def test_overhead_config_is_validated_in_one_line():
    assert _config().overhead.launch_s == 0.0
    cfg = _config(launch_s=1.5, resize_s=0.25)
    assert (cfg.overhead.launch_s, cfg.overhead.resize_s) == (1.5, 0.25)
    assert cfg.model_dump()["overhead"] == {"launch_s": 1.5, "resize_s": 0.25}  # stored with the run's config
    with pytest.raises(ConfigError, match=r"^overhead\.launch_s: .*greater than or equal to 0") as e:
        _config(launch_s=-1)
    assert "\n" not in str(e.value)
    with pytest.raises(ConfigError, match=r"^overhead\.resize: unknown key"):
        _config(resize=1.0)


def _outcomes(speed):
    rows = []
    for i, (wait, ex) in enumerate([(1.0, 10.0), (2.0, 20.0), (0.0, 30.0)]):
        rows.append({"policy": "EQUI", "rate": 0.1, "replication": 0, "job_id": i, "status": "done",
                     "wait": wait, "execution": ex, "response": wait + ex, "mean_procs": 1.0, "preemptions": 1,
                     "delivered_speed": speed})
    return pd.DataFrame(rows)


def test_report_gives_raw_and_speed_normalised_errors():
    targets = {"response_rel": 0.1, "execution_rel": 0.05}
    fast = _outcomes(None)
    fast = fast.assign(execution=fast.execution / 2, response=fast.wait + fast.execution / 2)
    predicted = cell_table(summarize(normalised(fast, measured=False), 0))
    # the measured jobs ran at half the assumed speed: normalised, they took half as long
    slow = cell_table(summarize(normalised(_outcomes(0.5), measured=True), 0))
    table = error_table(compare(slow, predicted), targets)
    assert table["execution error"][0] == "-50.0%"
    assert table["execution error, speed-normalised"][0] == "+0.0%"
    assert table["response error, speed-normalised"][0] == "+0.0%"
    raw_only = error_table(compare(cell_table(summarize(normalised(_outcomes(None), measured=True), 0)),
                                   predicted), targets)
    assert raw_only["execution error, speed-normalised"][0] == "raw only"
    assert raw_only["execution error"][0] == "-50.0%"
    assert math.isnan(normalised(_outcomes(None).drop(columns="delivered_speed"), measured=True).execution_norm[0])


def test_report_shows_the_measured_resize_cost_beside_the_profiled_one():
    from experiments.reporting.run_stats import parse_interval_set, resize_diagnostic

    assert parse_interval_set("0-2 5") == (0, 1, 2, 5) and parse_interval_set(None) == ()
    fit = ResizeFit(1.0, 0.0, 1_000_000, 8_000_000)  # 1 s + the busiest sender's fraction × 1 s
    samples = pd.DataFrame({"cls": ["a", "a", "a"], "from_procs": ["0-3", "0-1", "0"],
                            "to_procs": ["0-1", "0-3", "0-1"], "reconfig_s": [3.0, 3.5, 2.0]})
    table = resize_diagnostic(samples, {"a": {"resize": fit.to_dict()}, "b": {}})
    a, b = table.iloc[0], table.iloc[1]
    assert a["resizes measured"] == 3 and a["measured median (s)"] == "3.00"
    # the busiest sender moves 0.25 (4->2), 0.5 (2->4) and 0.5 (1->2) of 1 MB at 1 MB/s: median 1.5
    assert a["profiled, same resizes (s)"] == "1.50"
    assert a["profiled - measured"] == "-50.0%"
    assert b["profiled, same resizes (s)"] == "no resize profile" and b["resizes measured"] == 0


def test_replay_takes_every_overhead_from_the_profile_and_the_config():
    from experiments.replay import class_models

    cfg = _config(launch_s=1.0, resize_s=0.5)
    fit = ResizeFit(2.0, 0.1, 500_000, 100_000_000, release_s=0.4)
    profile = {"W": 4.0, "alpha": 0.1, "beta": 0.01, "phases": 6, "launch_s": 3.0, "launch_per_proc_s": 0.2,
               "teardown_s": 0.5, "startup_s": 2.0, "resize": fit.to_dict()}
    m = class_models(cfg, {"a": profile})["a"]
    assert (m.resize, m.release_s, m.startup_s, m.teardown_s) == (fit, 0.4, 2.0, 0.5)
    assert m.startup() == pytest.approx(3.0)  # profiled start-up + the knob
    assert m.resize_cost((0, 1), (0,)) == pytest.approx(fit.cost((0, 1), (0,)) + 0.5)
    old = class_models(cfg, {"a": {k: v for k, v in profile.items() if k not in ("resize", "startup_s")}})["a"]
    assert old.resize is None and old.resize_cost((0, 1), (0,)) == pytest.approx(cfg.reconfig_default_s + 0.5)
    assert old.startup() == pytest.approx(1.0)


def test_governed_workstations_run_at_their_specs_speed_not_the_cores_calibration_measured():
    from experiments.replay import speeds_for

    cal = {"cpu": [{"workstation": "ws1", "measured": 0.16}, {"workstation": "ws2", "measured": 0.13},
                   {"workstation": "ws3", "measured": 0.15}]}
    assert speeds_for(cal, ["ws1", "ws2", "ws3"]) == pytest.approx([0.16 / 0.15, 0.13 / 0.15, 1.0])
    governed = {**cal, "speed_ref_cores": {"ws1": 0.3, "ws2": 0.3, "ws3": 0.6}}
    assert speeds_for(governed, ["ws1", "ws2", "ws3"]) == pytest.approx([1.0, 1.0, 2.0])
    # a host that is not governed: the cores calibration measured, for all
    assert speeds_for({**cal, "speed_ref_cores": {"ws1": 0.3}}, ["ws1", "ws2"]) == pytest.approx([0.16 / 0.145, 0.13 / 0.145])
