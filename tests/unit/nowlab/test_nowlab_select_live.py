"""`nowlab select train / live / avoid`: bad input is one line naming the option, before any cluster is touched."""
from __future__ import annotations

import pytest
from typer.testing import CliRunner

from experiments.models.sv_model import SvModel
from experiments.models.sv_store import save_model
from experiments.studies.sanjay_vadhiyar.live_records import LiveRecord, Minima, live_frame, measured_job
from experiments.studies.sanjay_vadhiyar.live_report import save_conditions
from nowlab.cli import app

CG = SvModel(application="cg", problem_size_range=(1000, 4000), f_comp="N^2", f_comm="N", f_cpu="x", f_bw="x",
             f_pcomp="P", f_pcomm="P/log P", a_comp_s=2e-6, a_comm_s=2e-5)
KNOWN = "known: SA, GA, DP, BE, BRUTE, SA-FIG1, GA-FIG2"


@pytest.fixture
def model(tmp_path):
    return str(save_model(CG, tmp_path / "cg.json"))


def one_line_error(args: list[str]) -> str:
    result = CliRunner().invoke(app, ["select", *args])
    assert result.exit_code == 2, result.output
    assert result.output.count("\n") == 1, result.output
    return result.output.strip()


@pytest.mark.parametrize("extra, message", [
    (["--sizes", "0"], "--sizes: 0 is not > 0"),
    (["--sizes", "2000,-5"], "--sizes: -5 is not > 0"),
    (["--sizes", "2000.5"], "--sizes: 2000.5 is not a whole number (it is the workload's --n)"),
    (["--sizes", "9000"], "--sizes: 9000 is outside the range cg was trained on, [1000, 4000]"),
    (["--budget-s", "0"], "--budget-s: 0 is not a number of seconds > 0"),
    (["--budget-s", "1,-2"], "--budget-s: -2 is not a number of seconds > 0"),
    (["--algorithms", "SA,tabu"], f"--algorithms: unknown 'tabu'; {KNOWN}"),
    (["--application", "stencil"], "--model: model file cg.json: application is 'cg', not 'stencil'"),
    (["--application", "md"], "--application: unknown 'md'; known: cg, stencil"),
    (["--experiments", "0"], "--experiments: 0 is not >= 1"),
    (["--settle-s", "0"], "--settle-s: 0 is not a number of seconds > 0"),
])
def test_live_bad_input(model, tmp_path, extra, message):
    base = {"--model": model, "--application": "cg", "--sizes": "2000", "--out": str(tmp_path / "fig7")}
    base.update(dict(zip(extra[::2], extra[1::2])))
    assert one_line_error(["live", *[x for kv in base.items() for x in kv]]) == f"error: {message}"


def test_live_never_overwrites_a_run(model, tmp_path):
    (tmp_path / "runs.csv").write_text("experiment\n")
    args = ["live", "--model", model, "--application", "cg", "--sizes", "2000", "--out", str(tmp_path)]
    assert one_line_error(args) == (f"error: --out: {tmp_path} holds a Fig. 7 run already; add --resume to continue "
                                    f"it, or name another folder")


def test_live_refuses_a_missing_model_file(tmp_path):
    args = ["live", "--model", str(tmp_path / "none.json"), "--application", "cg", "--sizes", "2000",
            "--out", str(tmp_path)]
    assert one_line_error(args) == f"error: --model: model file {tmp_path / 'none.json'}: not found"


@pytest.mark.parametrize("extra, message", [
    (["--sizes", "0"], "--sizes: 0 is not > 0"),
    (["--sizes", "big"], "--sizes: 'big' is not a number"),
    (["--runs", "0"], "--runs: 0 is not >= 1"),
    (["--window", "after"], "--window: 'after' is not one of before, run"),
    (["--iterations", "0"], "--iterations: 0 is not >= 1"),
    (["--run-timeout-s", "-1"], "--run-timeout-s: -1 is not a number of seconds > 0"),
    (["--out", "EXISTS"], "--out: EXISTS exists; add --resume to continue it, or name another file"),
])
def test_train_bad_input(tmp_path, extra, message):
    base = {"--application": "cg", "--sizes": "1000,2000", "--out": str(tmp_path / "runs.csv")}
    base.update(dict(zip(extra[::2], extra[1::2])))
    if base["--out"] == "EXISTS":  # a long run's data is never overwritten
        base["--out"] = str(tmp_path / "runs.csv")
        (tmp_path / "runs.csv").write_text("problem_size\n")
        message = message.replace("EXISTS", base["--out"])
    assert one_line_error(["train", *[x for kv in base.items() for x in kv]]) == f"error: {message}"


@pytest.mark.parametrize("extra, message", [
    (["--problem-size", "0"], "--problem-size: 0 is not > 0"),
    (["--problem-size", "9000"], "--problem-size: 9000 is outside the range cg was trained on, [1000, 4000]"),
    (["--budget-s", "0"], "--budget-s: 0 is not a number of seconds > 0"),
    (["--algorithm", "tabu"], f"--algorithm: unknown 'tabu'; {KNOWN}"),
])
def test_avoid_bad_input(model, extra, message):
    base = {"--model": model, "--application": "cg", "--problem-size": "2000"}
    base.update(dict(zip(extra[::2], extra[1::2])))
    assert one_line_error(["avoid", *[x for kv in base.items() for x in kv]]) == f"error: {message}"


def test_report_redoes_a_live_folder_from_its_runs(tmp_path):
    m = Minima(0.5, 5e7)
    records = [LiveRecord(0, 2000, 1.0, alg, subset, predicted, 10, 0.1, True, m,
                          measured_job("cg", len(subset), status, compute_s=actual, wall_s=actual + 2, error=error),
                          reused)
               for alg, subset, predicted, actual, status, error, reused in [
                   ("DP", ("ws1", "ws2"), 10.0, 10.5, "done", "", False),
                   ("BE", ("ws1", "ws2"), 10.0, 10.5, "done", "", True),
                   ("SA", ("ws3",), 30.0, float("nan"), "timeout", "run still going after 60 s", False)]]
    live_frame(records).to_csv(tmp_path / "runs.csv", index=False)
    save_conditions(tmp_path, "Fig. 7 cut short", ["cluster now16-governed"])
    result = CliRunner().invoke(app, ["select", "report", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert result.output.startswith("model error on 1 held-out runs: mean absolute 4.8% (ours: at most 10%, met;")
    text = (tmp_path / "report.md").read_text()
    assert text.startswith("# Fig. 7 cut short\n\n- cluster now16-governed\n")
    assert "experiment 0 N 2000 SA: timeout run still going after 60 s" in text
    assert (tmp_path / "fig7.png").exists()
    assert one_line_error(["report", str(tmp_path / "none")]) == (
        f"error: {tmp_path / 'none'}: no runs.csv (not a folder of `nowlab select live`)")
