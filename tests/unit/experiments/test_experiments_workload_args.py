"""A class's workload arguments are checked when the config loads, before any results file exists."""
from __future__ import annotations

import ast
import shutil
from pathlib import Path

import pytest

from experiments import config as cfg
from experiments import workload_args
from experiments.live import open_store

ROOT = Path(__file__).resolve().parents[3]
DATA = Path(__file__).resolve().parents[2] / "data"
# Where each workload's argparse options are defined (runtime: the options every workload shares).
SOURCES = {"synthetic": ["synthetic.py", "synthetic_demand.py", "runtime.py"],
           "cg": ["cg.py", "runtime.py"], "stencil": ["stencil.py", "runtime.py"]}
FLAGS = {"print_x", "print_u"}  # store_true: `--print-x True` is not a command line, so no arg may set them


def argparse_options(files: list[str]) -> dict[str, str | None]:
    """Option name -> its argparse type's name, read from the workload sources (they import MPI)."""
    out: dict[str, str | None] = {}
    for name in files:
        tree = ast.parse((ROOT / "workloads" / name).read_text())
        for node in ast.walk(tree):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "add_argument" and node.args
                    and isinstance(node.args[0], ast.Constant) and str(node.args[0].value).startswith("--")):
                kind = next((ast.unparse(k.value) for k in node.keywords if k.arg == "type"), None)
                out[str(node.args[0].value)[2:].replace("-", "_")] = kind
    return out


@pytest.mark.parametrize("workload", sorted(SOURCES))
def test_the_models_take_exactly_the_workloads_options(workload):
    options = argparse_options(SOURCES[workload])
    model = workload_args.MODELS[workload]
    expected = set(options) - set(workload_args.RUNNER_SET) - FLAGS
    assert set(model.model_fields) == expected
    for name, kind in options.items():  # an int option of the workload is an int in the model
        if name in model.model_fields and kind in ("int", "positive"):
            assert "int" in str(model.model_fields[name].annotation), name
        if name in model.model_fields and kind == "float":
            assert "float" in str(model.model_fields[name].annotation), name


def config(args: dict, workload: str = "synthetic") -> dict:
    return {"name": "w", "title": "t", "minutes": 1, "cluster": "x.toml", "policies": ["RA"],
            "class": {"c": {"workload": workload, "args": args}},
            "arrivals": {"rates": [0.1], "jobs": 3, "mix": {"c": 1.0}}}


@pytest.mark.parametrize("workload, args, message", [
    ("synthetic", {"phases": -3}, "class.c: args.phases: Input should be greater than or equal to 1, got -3"),
    ("synthetic", {"phases": 2.5}, "class.c: args.phases: Input should be a valid integer, got 2.5"),
    ("synthetic", {"phase": 5}, "class.c: args.phase: unknown option (did you mean 'phases'?)"),
    ("synthetic", {"msg_bytes": -1}, "class.c: args.msg_bytes: Input should be greater than or equal to 0, got -1"),
    ("cg", {"iterations": 0}, "class.c: args.iterations: Input should be greater than or equal to 1, got 0"),
    ("cg", {"print_x": 1}, "class.c: args.print_x: unknown option (known: ckpt_root, iterations, n, tol, wait)"),
    ("stencil", {"residual_every": 0},
     "class.c: args.residual_every: Input should be greater than or equal to 1, got 0"),
    ("stencil", {"wait": "busy"}, "class.c: args.wait: Input should be 'polite' or 'spin', got 'busy'"),
])
def test_a_bad_argument_is_one_line_naming_it(workload, args, message):
    with pytest.raises(cfg.ConfigError) as err:
        cfg.from_dict(config(args, workload))
    assert str(err.value) == message


def test_good_arguments_pass_and_render_as_before():
    spec = cfg.from_dict(config({"phases": 20, "work": 0.4, "msg_bytes": 64, "wait": "spin"})).classes["c"]
    assert spec.argv() == ["python3", "-m", "workloads.synthetic", "--phases", "20", "--work", "0.4",
                           "--msg-bytes", "64", "--wait", "spin"]


def test_every_shipped_config_still_loads():
    dirs = (ROOT / "experiments" / "configs", ROOT / "experiments" / "studies" / "padhye_dowdy" / "configs",
            ROOT / "experiments" / "studies" / "anastasiadis_sevcik" / "configs")
    configs = sorted(p for d in dirs for p in d.glob("*.toml"))
    assert len(configs) >= 10
    for path in configs:
        cfg.load(path)


def test_negative_phases_are_refused_before_the_results_file_exists(tmp_path):
    for name in ("exp_tiny.toml", "exp_tiny4.toml"):
        shutil.copy(DATA / name, tmp_path / name)
    bad = tmp_path / "exp_tiny.toml"
    bad.write_text(bad.read_text().replace("phases = 10,", "phases = -3,"))
    out = tmp_path / "results" / "r.sqlite"
    with pytest.raises(cfg.ConfigError, match=r"^exp_tiny.toml: class.syn: args.phases: .*got -3$"):
        open_store(bad, out, resume=False)
    assert not out.exists() and not out.parent.exists()
