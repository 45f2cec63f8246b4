"""The governor diagnostic on hand-made quota logs: how often a workstation sat at its ceiling, and
what quota x factor gave against the speed asked, over the cells' span only."""
from __future__ import annotations

import pytest

from experiments.governor_hold import governor_hold

HEAD = "t,workstation,core,quota_cores,factor,target,scale,stale\n"


def log(rows: list[tuple[float, str, float, float | str, float | str]]) -> str:
    return HEAD + "".join(f"{t},{ws},0,{q},{f},{tg},1.0,0\n" for t, ws, q, f, tg in rows)


def test_settings_at_the_ceiling_and_the_speed_held_over_the_cells():
    # ws1's ceiling is 0.25 (its largest quota, set during profiling at t=5); over the cells
    # (t >= 10) it sits there twice of four, holding 0.25 x 1.0 / 0.3 = 0.833 of its speed.
    text = log([(5, "ws1", 0.25, 1.2, 0.3),
                (10, "ws1", 0.20, 1.5, 0.3), (11, "ws1", 0.25, 1.0, 0.3),
                (12, "ws1", 0.25, 1.0, 0.3), (13, "ws1", 0.15, 2.0, 0.3)])
    got = governor_hold([text], start=10.0)
    assert got is not None and got.settings == 4
    assert got.at_ceiling == pytest.approx(0.5)
    held = sorted([0.2 * 1.5 / 0.3, 0.25 / 0.3, 0.25 / 0.3, 0.15 * 2.0 / 0.3])  # 1.0, 0.833, 0.833, 1.0
    assert got.held_mean == pytest.approx(sum(held) / 4)
    assert got.held_median == pytest.approx((held[1] + held[2]) / 2)
    assert got.factor_median == pytest.approx(1.25)
    assert "50% were at the workstation's ceiling" in got.text() and "\n" not in got.text()


def test_raw_cap_workstations_and_settings_outside_the_span_are_left_out():
    text = log([(10, "ws1", 0.2, 1.5, 0.3), (10, "raw", 0.3, "", ""), (50, "ws1", 0.1, 3.0, 0.3)])
    got = governor_hold([text], start=0.0, end=20.0)
    assert got is not None and got.settings == 1 and got.held_median == pytest.approx(1.0)


def test_no_governed_setting_is_none():
    assert governor_hold([], start=0.0) is None
    assert governor_hold([log([(1, "raw", 0.3, "", "")])], start=0.0) is None
    assert governor_hold([log([(1, "ws1", 0.2, 1.5, 0.3)])], start=5.0) is None
    assert governor_hold(["t,other\n1,2\n"], start=0.0) is None


def test_the_runner_warns_before_the_cells_when_the_governor_was_short(tmp_path, monkeypatch):
    import shutil
    from pathlib import Path

    from experiments import config as cfg
    from experiments import runner
    from testbed import meter

    data = Path(__file__).resolve().parents[2] / "data"
    shutil.copy(data / "exp_tiny.toml", tmp_path / "exp_tiny.toml")
    # three workstations of 0.3 reference cores and a raw cap of 0.15, all on core 0
    (tmp_path / "exp_tiny4.toml").write_text('name = "exp-tiny4"\n[[workstation]]\nname = "ws"\ncount = 3\n'
                                             'speed = 0.3\n[[workstation]]\nname = "raw"\ncpu = 0.15\n')
    (tmp_path / meter.QUOTAS_CSV).write_text(log([(1, "ws1", 0.25, 1.0, 0.3), (2, "ws1", 0.25, 1.0, 0.3),
                                                  (3, "ws1", 0.20, 1.5, 0.3)]))
    monkeypatch.setattr(runner, "meter_dir", lambda c: tmp_path)
    said: list[str] = []
    r = runner.Runner.__new__(runner.Runner)
    r.cluster, r.log, r.config = None, said.append, cfg.load(tmp_path / "exp_tiny.toml")
    r._governor_check()
    assert len(said) == 1 and said[0].startswith("warning: so far the governor was at its ceiling in 67% of its")
    assert "held a mean 0.89 of the speeds" in said[0]
    # core 0 at the keeper's median 1.0: (0.9 - 0.15) x 1.0 x 0.8 = 0.6 for three of 0.3 k, so k = 0.65
    assert said[0].endswith("run slower (--speed-scale 0.65 fits the keeper's reading)")

    said.clear()
    (tmp_path / meter.QUOTAS_CSV).write_text(log([(1, "ws1", 0.25, 1.2, 0.3), (2, "ws1", 0.20, 1.5, 0.3)] * 6))
    r._governor_check()  # at the ceiling in half the settings: still warned
    assert len(said) == 1
    said.clear()
    rows = [(float(i), "ws1", 0.20, 1.5, 0.3) for i in range(20)] + [(20.0, "ws1", 0.25, 1.2, 0.3)]
    (tmp_path / meter.QUOTAS_CSV).write_text(log(rows))
    r._governor_check()  # 1 of 21 at the ceiling: quiet
    assert said == []
