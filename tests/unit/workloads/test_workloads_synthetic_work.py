"""The synthetic class's demand in reference units: `work` (reference-seconds per phase) converts to
the same multiplies in the workload, the config and the plan estimate, and bad input is one line."""
from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from experiments import config as cfg
from experiments.estimate import estimate, work_models
from workloads import synthetic_demand
from workloads.reference import MATVEC_FLOP_PER_REF_S, MULTIPLY_PER_REF_S, mults_to_ref_seconds, ref_seconds_to_mults

DEMO = Path(__file__).resolve().parents[3] / "experiments" / "configs" / "demo.toml"


def workload_mults(argv: list[str]) -> int:
    """What workloads.synthetic computes per phase from this command line (its own parser code)."""
    parser = argparse.ArgumentParser(prog="python3 -m workloads.synthetic")
    synthetic_demand.add_arguments(parser)
    args, _rest = parser.parse_known_args(argv)
    return synthetic_demand.resolve(parser, args)


def synthetic(args: dict) -> cfg.ClassSpec:
    return cfg.from_dict({"name": "w", "title": "t", "minutes": 1, "cluster": "x.toml", "policies": ["RA"],
                          "class": {"syn": {"workload": "synthetic", "args": args}},
                          "arrivals": {"rates": [0.1], "jobs": 3, "mix": {"syn": 1.0}}}).classes["syn"]


def test_the_demo_phase_in_reference_seconds_is_the_workloads_multiplies():
    syn = cfg.load(DEMO).classes["syn"]
    assert syn.mults_per_phase == 120_000_000 and syn.work_per_phase_ref_s == 0.4
    assert workload_mults(syn.argv()[3:]) == 120_000_000


@pytest.mark.parametrize("work", [0.5, 1 / 3, 2.7, 1e-4, 0.123456789])
@pytest.mark.parametrize("demand", [1.0, 0.37, 2.5])
def test_work_converts_alike_in_workload_config_and_plan(work, demand):
    spec = synthetic({"phases": 20, "work": work})
    mults = ref_seconds_to_mults(work)
    assert spec.mults_per_phase == mults == workload_mults(spec.argv(demand)[3:])
    assert spec.work_ref_s(demand) == pytest.approx(spec.units(demand) * mults / MULTIPLY_PER_REF_S, rel=1e-12)
    # the plan: a job of this demand computes its work at `speed` reference cores per workstation
    config = cfg.from_dict({"name": "w", "title": "t", "minutes": 1, "cluster": "x.toml", "policies": ["RA"],
                            "class": {"syn": {"workload": "synthetic", "args": {"phases": 20, "work": work}}},
                            "arrivals": {"rates": [0.1], "jobs": 3, "mix": {"syn": 1.0}}})
    model = work_models(config, speed=1.6)["syn"].model(spec.realized(demand))
    assert model.T(1) == pytest.approx(spec.units(demand) * mults_to_ref_seconds(mults) / 1.6, rel=1e-9)
    assert model.T(4) == pytest.approx(model.T(1) / 4, rel=1e-9)


def test_mults_keep_working_and_cg_work_is_its_matvec():
    spec = synthetic({"phases": 10, "mults": 60_000_000})
    assert spec.mults_per_phase == 60_000_000 == workload_mults(spec.argv()[3:])
    assert spec.work_ref_s() == pytest.approx(10 * 0.2)
    assert synthetic({"phases": 10}).mults_per_phase == synthetic_demand.DEFAULT_MULTS == workload_mults([])
    cg = cfg.ClassSpec(workload="cg", args={"n": 100})
    # a CG iteration's work is its matrix-vector product, 2·n² flop; 250 iterations by default
    assert cg.mults_per_phase is None
    assert cg.work_ref_s() == pytest.approx(250 * 2 * 100**2 / MATVEC_FLOP_PER_REF_S, rel=1e-12)


@pytest.mark.parametrize("argv, message", [
    (["--mults", "5", "--work", "0.5"], "give --mults or --work, not both"),
    (["--work", "0"], "--work: must be > 0 reference-seconds, got 0.0"),
    (["--work", "nan"], "--work: must be > 0 reference-seconds, got nan"),
    (["--mults", "-3"], "--mults: must be >= 0, got -3"),
])
def test_the_workload_refuses_bad_demand_in_one_line(argv, message, capsys):
    with pytest.raises(SystemExit) as exit_:
        workload_mults(argv)
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert err == f"python3 -m workloads.synthetic: error: {message}\n"


@pytest.mark.parametrize("args, message", [
    ({"work": 0.5, "mults": 5}, "class.syn: args.work: give mults or work, not both"),
    ({"work": -1.0}, "class.syn: args.work: must be a number > 0 (reference-seconds per phase), got -1.0"),
    ({"work": float("inf")}, "class.syn: args.work: must be a number > 0 (reference-seconds per phase), got inf"),
    ({"work": "fast"}, "class.syn: args.work: must be a number > 0 (reference-seconds per phase), got 'fast'"),
])
def test_the_config_refuses_bad_work_in_one_line(args, message):
    with pytest.raises(cfg.ConfigError) as err:
        synthetic(args)
    assert str(err.value) == message


def test_work_on_a_cg_class_is_refused():
    with pytest.raises(cfg.ConfigError, match=r"^class.cg: args.work: only the synthetic workload takes work"):
        cfg.from_dict({"name": "w", "title": "t", "minutes": 1, "cluster": "x.toml", "policies": ["RA"],
                       "class": {"cg": {"workload": "cg", "args": {"work": 1.0}}},
                       "arrivals": {"rates": [0.1], "jobs": 3, "mix": {"cg": 1.0}}})


def test_the_plan_estimate_of_the_demo_from_its_work():
    config = cfg.load(DEMO)
    models = work_models(config, speed=0.4)
    assert set(models) == {"syn", "cg"}  # cg's work: its matvec, 2·n² flop per iteration
    assert models["syn"].W == pytest.approx(20 * 0.4 / 0.4)
    only_syn = config.model_copy(update={"arrivals": config.arrivals.model_copy(update={"mix": {"syn": 1.0}}),
                                         "classes": {"syn": config.classes["syn"]}})
    plan = estimate(only_syn, models, P=8)
    for cell in plan.cells:  # the last job cannot end before its own work is done on all 8 workstations
        assert cell.makespan_s >= models["syn"].W / 8
        assert 0 < cell.utilisation <= 1.0 + 1e-9
    with pytest.raises(ValueError, match="^speed: must be > 0 reference cores"):
        work_models(config, speed=0.0)
