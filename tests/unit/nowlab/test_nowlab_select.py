"""`nowlab select`: fit a model from runs, show it, choose hosts; bad input is one line."""
from __future__ import annotations

import json

import numpy as np
from typer.testing import CliRunner

from experiments.models.sv_model import SvModel
from nowlab.cli import app

TRUTH = SvModel(application="cg", problem_size_range=(500, 4000), f_comp="N^2", f_comm="N", f_cpu="x", f_bw="x",
                f_pcomp="P", f_pcomm="P/log P", a_comp_s=2e-5, a_comm_s=3e-3)


def write_runs(path) -> None:
    rng = np.random.default_rng(0)
    lines = ["problem_size,procs,min_avail_cpu,min_avail_bw_bit_s,elapsed_s"]
    for n in (500, 1000, 2000, 4000):
        for p in (1, 2, 4, 8):
            for loaded in (False, True):
                cpu, bw = (rng.uniform(0.1, 1), rng.uniform(1e8, 1e9)) if loaded else (1.0, 1e9)
                lines.append(f"{n},{p},{cpu},{bw},{TRUTH.predict_s(n, p, cpu, bw) * rng.normal(1, 0.01)}")
    path.write_text("\n".join(lines) + "\n")


def test_fit_show_and_hosts(tmp_path):
    runner = CliRunner()
    write_runs(tmp_path / "runs.csv")
    model = tmp_path / "cg.json"
    fitted = runner.invoke(app, ["select", "fit", str(tmp_path / "runs.csv"), "--application", "cg", "--out", str(model)])
    assert fitted.exit_code == 0, fitted.output
    assert "N^2 / (cpu·P)" in fitted.output and "mean abs error" in fitted.output
    shown = runner.invoke(app, ["select", "show", str(model), "--application", "cg"])
    assert shown.exit_code == 0 and shown.output.startswith("cg: T = ")
    cpu = {"ws1": 1.0, "ws2": 0.1, "ws3": 1.0, "ws4": 0.95}
    bw = {f"{a},{b}": 9e8 for a in cpu for b in cpu if a != b}
    (tmp_path / "avail.json").write_text(json.dumps({"cpu": cpu, "bw_bit_s": bw}))
    hosts = runner.invoke(app, ["select", "hosts", str(model), "--application", "cg", "--problem-size", "2000",
                                "--availability", str(tmp_path / "avail.json"), "--algorithm", "brute"])
    assert hosts.exit_code == 0, hosts.output
    assert hosts.output.startswith("BRUTE: ws1, ws3, ws4\n")


def test_a_model_of_another_application_and_an_unknown_algorithm_are_one_line(tmp_path):
    runner = CliRunner()
    write_runs(tmp_path / "runs.csv")
    model = tmp_path / "cg.json"
    runner.invoke(app, ["select", "fit", str(tmp_path / "runs.csv"), "--application", "cg", "--out", str(model)])
    wrong = runner.invoke(app, ["select", "show", str(model), "--application", "stencil"])
    assert wrong.exit_code == 2
    assert wrong.output.strip() == "error: model file cg.json: application is 'cg', not 'stencil'"
    (tmp_path / "avail.json").write_text(json.dumps({"cpu": {"a": 1.0, "b": 1.0}, "bw_bit_s": {"a,b": 1e9}}))
    for args, start in ((["--algorithm", "tabu"], "error: algorithm: unknown 'tabu'; known: SA, GA, DP, BE, BRUTE, SA-FIG1, GA-FIG2"),
                        (["--budget-s", "0"], "error: budget_s: 0 is not"),
                        (["--problem-size", "-1"], "error: problem_size: -1 is not > 0")):
        base = ["select", "hosts", str(model), "--application", "cg", "--problem-size", "1000",
                "--availability", str(tmp_path / "avail.json")]
        result = runner.invoke(app, base + args)
        assert result.exit_code == 2 and result.output.startswith(start), result.output
        assert result.output.count("\n") == 1
