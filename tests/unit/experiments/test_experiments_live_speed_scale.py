"""`nowlab run --speed-scale`: the scale is checked before the results file exists, stored with the run,
kept by a resume, applied to the cluster's speeds, and named in the refusal and the report."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from experiments import config as cfg
from experiments import live
from experiments.report import speed_scale_lines
from experiments.runner import cluster_spec
from testbed.placement import SpeedRefused

DATA = Path(__file__).resolve().parents[2] / "data"


@pytest.fixture()
def tiny(tmp_path: Path) -> Path:
    for name in ("exp_tiny.toml", "exp_tiny4.toml"):
        shutil.copy(DATA / name, tmp_path / name)
    return tmp_path / "exp_tiny.toml"


def test_a_scale_is_stored_with_the_run_and_kept_by_its_resume(tiny: Path, tmp_path: Path) -> None:
    out = tmp_path / "r.sqlite"
    store, config = live.open_store(tiny, out, resume=False, speed_scale=0.5)
    store.close()
    assert config.speed_scale == 0.5
    store, resumed = live.open_store(tiny, out, resume=True)  # the TOML says 1: the run's own 0.5 stands
    store.close()
    assert resumed.speed_scale == 0.5
    with pytest.raises(cfg.ConfigError, match=r"^--speed-scale: a resumed run keeps the scale it began with$"):
        live.open_store(tiny, out, resume=True, speed_scale=0.25)


@pytest.mark.parametrize("scale", [0.0, 1.5, -0.2, "nan"])
def test_a_bad_scale_is_one_line_and_leaves_no_results_file(tiny: Path, tmp_path: Path, scale: object) -> None:
    out = tmp_path / "results" / "r.sqlite"
    with pytest.raises(cfg.ConfigError, match=r"^--speed-scale: must be a number in \(0, 1\] or 'fit', got "):
        live.open_store(tiny, out, resume=False, speed_scale=scale)  # type: ignore[arg-type]
    assert not out.exists()


def test_the_cluster_runs_at_the_scaled_speeds(tiny: Path) -> None:
    (tiny.parent / "exp_tiny4.toml").write_text(
        'name = "exp-tiny4"\n[[workstation]]\nname = "ws"\ncount = 3\nspeed = 0.3\n'
        '[[workstation]]\nname = "raw"\ncpu = 0.15\n')
    config = cfg.load(tiny)
    full = cluster_spec(config)
    half = cluster_spec(config.model_copy(update={"speed_scale": 0.5}))
    assert [half.speed(n) for n in half.names] == [0.15, 0.15, 0.15, None]
    assert half.cpu("raw") == full.cpu("raw") == 0.15
    assert half.name == full.name  # the same cluster, slower: not another one


def test_a_speed_refusal_suggests_the_scale_and_leaves_no_results_file(tiny: Path, tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    class Refused:
        def __init__(self, config, store, *, update, log, reprofile) -> None:
            pass

        def run(self) -> None:
            raise SpeedRefused("workstation ws7: speed 0.300 reference cores asked, 0.186 available")

    monkeypatch.setattr(live, "Runner", Refused)
    out = tmp_path / "results" / "r.sqlite"
    with pytest.raises(SpeedRefused, match=r"^workstation ws7: .*0\.186 available; to run it uniformly slower "
                                           r"on this host: --speed-scale fit$"):
        live.run_experiment(tiny, out=out, resume=False, report=False)
    assert list(out.parent.iterdir()) == []
    with pytest.raises(SpeedRefused, match=r"available$"):  # already scaled: no hint to scale again
        live.run_experiment(tiny, out=out, resume=False, report=False, speed_scale=0.5)


def test_the_report_names_the_scale_only_when_there_is_one() -> None:
    assert speed_scale_lines({"name": "t"}) == [] and speed_scale_lines({"speed_scale": 1.0}) == []
    (line,) = speed_scale_lines({"speed_scale": 0.55})
    assert line.startswith("speeds scaled by 0.55 (`--speed-scale`): every workstation ran at 0.55x")
    assert line.endswith("about 1.8x as long as at the spec's speeds")


def test_a_fitted_scale_placement_refuses_is_tried_one_step_lower(tiny: Path, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Placement reads the cores again after the fit, and may read them slower (1.27 for the fit,
    1.23 for placement, 29 Nov 2026): a refused fitted scale is tried 0.05 lower, FIT_TRIES in all."""
    tried: list[float] = []

    def runner_refusing_above(limit: float):
        class Runner:
            def __init__(self, config, store, *, update, log, reprofile) -> None:
                self.scale = config.speed_scale

            def run(self) -> None:
                tried.append(self.scale)
                if self.scale > limit:
                    raise SpeedRefused(f"workstation ws7: at {self.scale:g}x, 0.164 available")
        return Runner

    monkeypatch.setattr(live, "fitted_scale", lambda config, backend: 0.8)
    monkeypatch.setattr(live, "Runner", runner_refusing_above(0.71))
    out = tmp_path / "results" / "r.sqlite"
    path = live.run_experiment(tiny, out=out, resume=False, report=False, speed_scale="fit")
    assert tried == [0.8, 0.75, 0.7]
    store, config = live.open_store(None, path, resume=True)
    store.close()
    assert config.speed_scale == 0.7

    tried.clear()
    out2 = tmp_path / "results2" / "r.sqlite"
    monkeypatch.setattr(live, "Runner", runner_refusing_above(0.5))
    with pytest.raises(SpeedRefused, match=r"^workstation ws7: at 0\.7x, 0\.164 available$"):
        live.run_experiment(tiny, out=out2, resume=False, report=False, speed_scale="fit")
    assert tried == [0.8, 0.75, 0.7]
    assert list(out2.parent.iterdir()) == []  # nothing ran: no results file left
