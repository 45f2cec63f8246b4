"""`nowlab timeshare run` and `report`: their one-line errors, and a report redone from a run's CSVs."""
from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from experiments.timeshare_files import write_rows
from experiments.timeshare_measure import (IntervalRow, JobRow, ManagerRow, RunRow, RunRows, ShareRow, SkewRow,
                                           TableRow)
from nowlab.cli import app

CONFIGS = Path(__file__).resolve().parent.parent / "experiments" / "configs" / "timeshare"
FIG3 = str(CONFIGS / "zhou-brent-fig3.toml")


def rows(resync: str) -> RunRows:
    return RunRows(RunRow("fig", resync, 1, 10.0, 300.0, 2.0, 1.0, ""),
                   (JobRow("J1", "ws1 ws2", 2, 0.3, 80.0, 41.0, 140.0, 1.95, 0.585, 0.571, -0.024, "yes"),),
                   (ShareRow("ws1", "J1", 0.3, 0.301, 13),),
                   (IntervalRow("ws1", "J1", 0.0, 3.0), IntervalRow("ws1", "", 3.0, 10.0)),
                   (TableRow("ws1", 1, "J1", 0.0, 3.0, 0.0), TableRow("ws1", 2, "", 3.0, 0.0, 7.0)),
                   (SkewRow("ws1", "sample", 5.0, 0.002, 0.001),),
                   (ManagerRow("ws1", 26, 0.0004, 0.002, 0.005, 0.0002, 0.2, 0.001, False),))


def test_run_needs_a_cluster_or_the_host_and_a_known_resync(tmp_path):
    for argv, message in ((["timeshare", "run", FIG3], "error: give --cluster NAME or --host"),
                          (["timeshare", "run", FIG3, "--host", "--cluster", "x"], "error: give --cluster NAME or --host"),
                          (["timeshare", "run", FIG3, "--host", "--resync", "loose:0"], "error: resync: K in loose:K"),
                          (["timeshare", "run", str(CONFIGS / "short-jobs-beside-large.toml"), "--host"],
                           "error: simulate.replan: a live run keeps its tables fixed")):
        out = CliRunner().invoke(app, argv, terminal_width=200)
        assert out.exit_code == 2 and out.output.startswith(message) and len(out.output.splitlines()) == 1, out.output


def test_report_redoes_each_run_and_writes_the_variants_side_by_side(tmp_path):
    for resync in ("strict", "none"):
        write_rows(tmp_path / resync, rows(resync))
    compare = tmp_path / "variants.md"
    out = CliRunner().invoke(app, ["timeshare", "report", str(tmp_path / "strict"), str(tmp_path / "none"),
                                   "--compare", str(compare)], terminal_width=400)
    assert out.exit_code == 0, out.output
    for resync in ("strict", "none"):
        assert (tmp_path / resync / "report.md").read_text().startswith(f"# Time sharing live: fig under {resync}")
        assert (tmp_path / resync / "timeline.png").stat().st_size > 0
    text = compare.read_text()
    assert "| strict | strict | 1 | 2.00 |" in text and "| none | none | 1 | 2.00 |" in text


def test_report_of_a_directory_without_csvs_is_one_line(tmp_path):
    out = CliRunner().invoke(app, ["timeshare", "report", str(tmp_path)], terminal_width=400)
    assert out.exit_code == 2 and "run.csv: missing" in out.output and len(out.output.splitlines()) == 1
