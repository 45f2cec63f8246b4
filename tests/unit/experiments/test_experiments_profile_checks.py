"""Profile checks between cells (experiments/profile_checks.py): their order, how they are kept
apart from the profile taken before the first cell, the drift they show (worked by hand), and
what the predictions, the estimate, the store and the config make of them."""
from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from experiments import profile_checks as pc
from experiments.config import ExperimentConfig, Profiling
from experiments.estimate import breakdown, checks_seconds, estimate
from experiments.predict import ClassModel
from experiments.replay import class_models
from experiments.store import ResultsStore


BASE = {"name": "t", "title": "t", "minutes": 5, "cluster": "specs/now8.toml", "policies": ["RA", "FOLDING"],
        "class": {"a": {"workload": "synthetic", "args": {"phases": 10, "work": 0.1}}},
        "arrivals": {"rates": [0.1], "jobs": 4, "replications": 2, "mix": {"a": 1.0}}}


def sample(p: int, time_s: float, speed: float = 0.3, **extra) -> dict:
    return {"p": p, "rep": 0, "time_s": time_s, "done_s": time_s + 1.0, "wall_s": time_s + 1.1, "hello_s": 0.5,
            "ref_speed": speed, **extra}


# The profile before the first cell: T(p) = 8/p + 0.5 exactly, at the reference speed 0.3.
START = [sample(p, 8.0 / p + 0.5) for p in (1, 2, 4, 8) for _ in range(2)]
PROFILE = {"class": "a", "W": 8.0, "alpha": 0.5, "beta": 0.0, "phases": 10, "ref_speed": 0.3, "samples": START}


def test_checks_rotate_through_classes_then_sizes() -> None:
    order = [pc.next_check(["a", "b"], [8, 4], k) for k in range(5)]
    assert order == [("a", 8), ("b", 8), ("a", 4), ("b", 4), ("a", 8)]
    assert pc.next_check(["a"], [], 3) is None
    with pytest.raises(ValueError, match="done_so_far"):
        pc.next_check(["a"], [8], -1)


def test_a_check_is_marked_counted_and_left_out_of_the_start_profile() -> None:
    checked = pc.with_check(PROFILE, sample(8, 1.65))
    assert checked["samples"][-1][pc.MARK] is True
    assert len(checked["samples"]) == len(START) + 1 and len(PROFILE["samples"]) == len(START)  # not changed in place
    assert pc.done({"a": checked, "b": PROFILE}) == 1
    assert pc.at_start(checked)["samples"] == START
    assert pc.checks(checked) == [{**sample(8, 1.65), pc.MARK: True}]
    with pytest.raises(ValueError, match="time_s"):
        pc.with_check(PROFILE, {"p": 8})


def test_drift_by_hand() -> None:
    # start on 8: 1.5 s twice. Checks, in order: 1.65, 1.8 at 0.3, and 1.5 at 0.33 (a faster host:
    # 1.5 x 0.33 / 0.3 = 1.65 at the reference speed). Ratios 1.1, 1.2, 1.1: median 1.1; first
    # half (one check) 1.1, second half (two) median(1.2, 1.1) = 1.15.
    prof = PROFILE
    for t, v in ((1.65, 0.3), (1.8, 0.3), (1.5, 0.33)):
        prof = pc.with_check(prof, sample(8, t, v))
    (d,) = pc.drift("a", prof)
    assert (d.p, d.checks) == (8, 3)
    assert d.ratio == pytest.approx(1.1)
    assert d.first_half == pytest.approx(1.1)
    assert d.second_half == pytest.approx(1.15)
    assert pc.drift_text({"a": prof}) == "a on 8: 1.10 (1.10 -> 1.15), n 3"
    assert pc.drift_text({"a": PROFILE}) == ""


def test_the_predictions_fit_the_checks_with_the_start_runs() -> None:
    config = ExperimentConfig.model_validate(BASE)
    before = class_models(config, {"a": PROFILE})["a"]
    assert before.W == pytest.approx(8.0) and before.alpha == pytest.approx(0.5)
    slow = PROFILE
    for _ in range(8):  # every check on 8 at 2.0 s, not 1.5
        slow = pc.with_check(slow, sample(8, 2.0))
    after = class_models(config, {"a": slow})["a"]
    assert after.model().T(8) > before.model().T(8) + 0.1
    assert class_models(config, {"a": pc.at_start(slow)})["a"].model().T(8) == pytest.approx(before.model().T(8))


def test_between_cells_must_be_profiled_sizes() -> None:
    assert Profiling(procs=[1, 2, 4, 8], between_cells=[8, 2]).between_cells == [8, 2]
    with pytest.raises(ValidationError, match="between_cells: 3 not among procs"):
        Profiling(procs=[1, 2, 4, 8], between_cells=[3])


def test_the_estimate_prices_one_check_per_cell() -> None:
    base = BASE
    model = ClassModel(name="a", W=8.0, alpha=0.5, beta=0.0, phases=10)
    plain = ExperimentConfig.model_validate(base)
    checked = ExperimentConfig.model_validate({**base, "profile": {"between_cells": [8, 4]}})
    assert checks_seconds(plain, {"a": model}, 4) == 0.0
    # 4 cells: checks on 8, 4, 8, 4 -> 2 x (8/8 + 0.5) + 2 x (8/4 + 0.5) = 8 s of work, plus each run's overhead
    seconds = checks_seconds(checked, {"a": model}, 4)
    assert seconds >= 8.0
    assert checks_seconds(checked, {"a": model}, 2) == pytest.approx(seconds / 2)
    plan, plain_plan = estimate(checked, {"a": model}, 8), estimate(plain, {"a": model}, 8)
    assert plan.checks_s == pytest.approx(seconds)
    assert plan.total_s == pytest.approx(plain_plan.total_s + seconds)
    assert [s.step for s in breakdown(plan)].count("profile checks") == 1
    assert "profile checks" not in [s.step for s in breakdown(plain_plan)]


def test_the_store_updates_a_profile_keeping_when_it_was_stored(tmp_path: Path) -> None:
    with ResultsStore.create(tmp_path / "r.sqlite", {"name": "t"}, "") as s:
        s.set_profile("a", PROFILE)
        stored_at = s.timeline()["profiles"]["a"]
        s.update_profile("a", pc.with_check(PROFILE, sample(8, 1.6)))
        assert s.timeline()["profiles"]["a"] == stored_at
        assert pc.done(s.profiles()) == 1
        with pytest.raises(ValueError, match="no profile stored for class 'b'"):
            s.update_profile("b", PROFILE)


def test_the_runner_takes_one_check_after_each_cell_in_turn(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The runner's side, with the live job replaced (`run_alone` is what every profile runs)."""
    from experiments import runner as runner_mod

    taken = []

    def fake_run_check(cluster, hosts, name, cls, prof, p, index, log):
        taken.append((name, p, index))
        if index == 2:
            raise RuntimeError("ws3 did not answer")
        return sample(p, 1.6)

    monkeypatch.setattr(runner_mod, "run_check", fake_run_check)
    config = ExperimentConfig.model_validate({**BASE, "profile": {"between_cells": [8, 4]}})
    logs: list[str] = []
    with ResultsStore.create(tmp_path / "r.sqlite", config.model_dump(mode="json", by_alias=True), "") as store:
        store.set_profile("a", PROFILE)
        r = runner_mod.Runner(config, store, update=lambda *a: None, log=logs.append)
        r.hosts = [f"ws{i}" for i in range(1, 9)]
        r._check_profile()
        r._check_profile()
        r._check_profile()  # fails: logged, nothing stored, the run goes on
        assert [s["p"] for s in pc.checks(store.profiles()["a"])] == [8, 4]
        assert any("profile check 2 (a on 8) failed: RuntimeError: ws3 did not answer" in line for line in logs)
        r.hosts = r.hosts[:4]
        r._check_profile()  # the third check is still due (on 8), and 4 workstations are left
        assert taken == [("a", 8, 0), ("a", 4, 1), ("a", 8, 2)]
        assert any("profile check 2 skipped: 8 workstations asked, 4 left" in line for line in logs)


def test_a_stored_profile_run_keeps_where_and_when_it_ran() -> None:
    """So a profile can be metered again from the run's kept meter series."""
    from experiments.profiles import AloneRun, stored_sample
    from workloads.host.profile import Sample

    run = AloneRun(Sample(2, 1, 3.0, 3.4, 3.2), 0.29, 0.05, ("ws1", "ws2"), 1000.0, 1003.2)
    assert stored_sample(run) == {"p": 2, "rep": 1, "time_s": 3.0, "wall_s": 3.4, "done_s": 3.2, "hello_s": 0.05,
                                  "ref_speed": 0.29, "hosts": ["ws1", "ws2"], "t0_epoch": 1000.0, "t1_epoch": 1003.2}
