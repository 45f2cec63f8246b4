"""`nowlab run` checks every input before the results file exists: an SWF source is imported first."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from experiments import config as cfg
from experiments.live import open_store

DATA = Path(__file__).resolve().parents[2] / "data"


def swf_config(tmp_path: Path, trace: str, classes: str = '"syn"') -> Path:
    for name in ("exp_tiny.toml", "exp_tiny4.toml"):
        shutil.copy(DATA / name, tmp_path / name)
    path = tmp_path / "exp_tiny.toml"
    path.write_text(path.read_text().replace("mix = { syn = 1.0 }",
                                             f'swf = {{ path = "trace.swf", classes = {classes} }}'))
    (tmp_path / "trace.swf").write_text(trace)
    return path


ARCHIVE = (DATA / "archive_sdsc_sp2_head.swf").read_text()


@pytest.mark.parametrize("trace, classes, message", [
    (ARCHIVE.replace("   41    327", "   41    x"), '"syn"', r"trace\.swf:29: field 4 \(run time\) must be a number"),
    (ARCHIVE, "{ syn = [64, 8] }", r"classes: range of 'syn' must be \(lo, hi\) integers with 1 <= lo <= hi"),
    ("; MaxProcs: 8\n", '"syn"', r"trace\.swf: no job left to import"),
])
def test_a_bad_trace_is_refused_before_the_results_file_exists(tmp_path, trace, classes, message):
    config = swf_config(tmp_path, trace, classes)
    out = tmp_path / "results" / "r.sqlite"
    with pytest.raises(cfg.ConfigError, match=rf"^{config}: arrivals\.swf: .*{message}"):
        open_store(config, out, resume=False)
    assert not out.exists()


def test_a_good_trace_passes_and_the_store_is_made(tmp_path):
    config = swf_config(tmp_path, ARCHIVE)
    store, loaded = open_store(config, tmp_path / "r.sqlite", resume=False)
    try:
        assert loaded.arrivals.swf is not None and store.path.exists()
    finally:
        store.close()


def test_a_cluster_that_cannot_be_placed_leaves_no_results_file(tmp_path, monkeypatch):
    """Placement reads the cores' speed at `up`: a refusal then stops the run before anything
    ran, and must not leave a results file that makes the retry ask for --resume."""
    from experiments import live
    from testbed.spec import SpecError

    class Refused:
        def __init__(self, config, store, *, update, log, reprofile) -> None:
            pass

        def run(self) -> None:
            raise SpecError("workstation ws7: speed 0.300 reference cores asked, 0.044 available")

    monkeypatch.setattr(live, "Runner", Refused)
    for name in ("exp_tiny.toml", "exp_tiny4.toml"):
        shutil.copy(DATA / name, tmp_path / name)
    out = tmp_path / "results" / "r.sqlite"
    with pytest.raises(SpecError, match="^workstation ws7: speed"):
        live.run_experiment(tmp_path / "exp_tiny.toml", out=out, resume=False, report=False)
    assert list(out.parent.iterdir()) == []


def test_the_backend_is_chosen_at_the_start_and_kept_by_a_resume(tmp_path):
    """`nowlab run --backend swarm` is stored with the run; its resume runs there too, and a
    resume asking another backend is refused in one line before any container starts."""
    for name in ("exp_tiny.toml", "exp_tiny4.toml"):
        shutil.copy(DATA / name, tmp_path / name)
    config, out = tmp_path / "exp_tiny.toml", tmp_path / "r.sqlite"
    with pytest.raises(cfg.ConfigError, match=r"^backend: unknown 'nope' \(known: docker, ssh, swarm, local\)$"):
        open_store(config, out, resume=False, backend="nope")
    assert not out.exists()
    store, _ = open_store(config, out, resume=False, backend="swarm")
    store.close()
    store, _ = open_store(config, out, resume=True)  # none asked: the run's own
    assert store.backend == "swarm"
    store.close()
    with pytest.raises(cfg.ConfigError, match=rf"^backend: {out} ran on 'swarm'; resume it there, not on 'docker'$"):
        open_store(config, out, resume=True, backend="docker")
    other, _ = open_store(config, tmp_path / "d.sqlite", resume=False)
    assert other.backend == "docker"  # the default, as every store made before the option
    other.close()
