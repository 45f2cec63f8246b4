"""Experiment configs: every shipped config loads; every bad one fails on one line naming the key."""
from __future__ import annotations

from pathlib import Path

import pytest

from experiments.config import ConfigError, load

EXPERIMENTS = Path(__file__).resolve().parents[3] / "experiments"
CONFIG_DIRS = (EXPERIMENTS / "configs", EXPERIMENTS / "studies" / "padhye_dowdy" / "configs",
               EXPERIMENTS / "studies" / "padhye_dowdy" / "configs" / "paper-volumes",
               EXPERIMENTS / "studies" / "anastasiadis_sevcik" / "configs")
SPEC = (Path(__file__).resolve().parents[3] / "compose" / "specs" / "demo4.toml").as_posix()

GOOD = f'''
name = "tiny"
title = "A tiny run"
minutes = 3
cluster = "{SPEC}"
policies = ["RA", "folding"]

[class.syn]
workload = "synthetic"
args = {{ phases = 10, mults = 1000 }}
pmax = 4

[arrivals]
rates = [0.1, 0.2]
jobs = 4
warmup = 1
mix = {{ syn = 1.0 }}

[[claim]]
text = "Folding responds faster than RA"
metric = "response"
lower = "FOLDING"
than = "RA"
'''


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "exp.toml"
    path.write_text(text)
    return path


def test_good_config_loads_and_normalises_policies(tmp_path):
    config = load(write(tmp_path, GOOD))
    assert config.policies == ["RA", "FOLDING"]
    assert config.classes["syn"].argv(1.0) == ["python3", "-m", "workloads.synthetic", "--phases", "10",
                                               "--mults", "1000"]
    assert config.classes["syn"].argv(0.26)[4] == "3"  # demand rounds to whole phases
    assert config.classes["syn"].realized(0.26) == pytest.approx(0.3)
    assert config.dump()["class"]["syn"]["pmax"] == 4


@pytest.mark.parametrize("edit, message", [
    (("rates = [0.1, 0.2]", "rats = [0.1, 0.2]"), "arrivals.rats: unknown key"),
    (('"RA", "folding"', '"RA", "FOLDNG"'), "policies: unknown policy 'FOLDNG'"),
    (("rates = [0.1, 0.2]", "rates = [0.1, 0]"), "arrivals.rates: every rate must be > 0"),
    (("warmup = 1", "warmup = 4"), "arrivals: warmup (4) must be below jobs (4)"),
    (("syn = 1.0 }", "cg = 1.0 }"), "arrivals.mix names unknown class 'cg'"),
    (('workload = "synthetic"', 'workload = "lu"'), "class.syn.workload"),
    (('lower = "FOLDING"', 'lower = "EQUI"'), "claim[0] names 'EQUI'"),
    (("args = {", "arguments = {"), "class.syn.arguments: unknown key"),
])
def test_bad_config_names_the_key(tmp_path, edit, message):
    old, new = edit
    assert old in GOOD
    with pytest.raises(ConfigError) as err:
        load(write(tmp_path, GOOD.replace(old, new, 1)))
    text = str(err.value)
    assert "\n" not in text
    assert message in text, text


def test_owner_load_on_an_unknown_workstation(tmp_path):
    with pytest.raises(ConfigError, match=r"load\.owner\.ws9: no such workstation"):
        load(write(tmp_path, GOOD + "\n[load.owner.ws9]\nn = 1\nz = 1.0\nd = 0.2\n"))


def test_runner_args_are_refused(tmp_path):
    with pytest.raises(ConfigError, match=r"class\.syn\.args: .*'hosts' is set by the runner"):
        load(write(tmp_path, GOOD.replace("mults = 1000", "mults = 1000, hosts = 'x'")))


def test_missing_cluster_spec(tmp_path):
    with pytest.raises(ConfigError, match="cluster: .*no such spec file"):
        load(write(tmp_path, GOOD.replace(SPEC, "/nonexistent.toml")))


@pytest.mark.parametrize("path", sorted(p for d in CONFIG_DIRS for p in d.glob("*.toml")), ids=lambda p: p.name)
def test_shipped_configs_load(path):
    config = load(path)
    assert config.minutes > 0
    assert config.arrivals.jobs > config.arrivals.warmup


def test_work_follows_speed_scales_each_class_work_and_nothing_else():
    """The demo on a slow host: speeds and work scaled alike, so a job takes as long as at full
    speed; safe points (phases), data sizes (n) and pmax stay."""
    from experiments import config as cfg
    from workloads.synthetic_demand import DEFAULT_MULTS
    base = cfg.load(Path(__file__).resolve().parents[3] / "experiments" / "configs" / "demo.toml")
    assert base.work_follows_speed and base.with_work_scaled() == base  # at scale 1: itself
    half = base.model_copy(update={"speed_scale": 0.5}).with_work_scaled()
    assert half.classes["syn"].args == {"phases": 20, "work": 0.2}
    assert half.classes["cg"].args == {"n": 2500, "iterations": 200} and half.classes["cg"].pmax == 4
    plain = base.model_copy(update={"speed_scale": 0.5, "work_follows_speed": False})
    assert plain.with_work_scaled() == plain
    mults = base.model_copy(update={"speed_scale": 0.5, "classes": {
        "s": cfg.ClassSpec(workload="synthetic", args={"phases": 5}), "st": cfg.ClassSpec(workload="stencil")}})
    scaled = mults.with_work_scaled().classes
    assert scaled["s"].args == {"phases": 5, "mults": round(DEFAULT_MULTS * 0.5)}
    assert scaled["st"].args["iterations"] >= 1
