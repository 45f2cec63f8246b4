"""`nowlab timeshare table` and `simulate` on the shipped Fig. 3 spec, and their one-line errors."""
from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from nowlab.cli import app

FIG3 = str(Path(__file__).resolve().parents[3] / "experiments" / "studies" / "zhou_brent" / "configs" / "zhou-brent-fig3.toml")


def test_table_prints_the_three_tables_of_fig4():
    out = CliRunner().invoke(app, ["timeshare", "table", FIG3], terminal_width=200)
    assert out.exit_code == 0, out.output
    for title in ("scheduling table of ws1, ws2", "scheduling table of ws3, ws4", "scheduling table of ws5"):
        assert title in out.output
    assert "(dummy: sequential)" in out.output


def test_simulate_prints_every_job_and_writes_the_timeline(tmp_path):
    timeline = tmp_path / "timeline.csv"
    out = CliRunner().invoke(app, ["timeshare", "simulate", FIG3, "--resync", "strict", "--timeline", str(timeline)],
                             terminal_width=200)
    assert out.exit_code == 0, out.output
    assert all(f"J{i}" in out.output for i in range(1, 7)) and "not done" not in out.output
    rows = timeline.read_text().splitlines()
    assert rows[0] == "workstation,process,t0_s,t1_s" and rows[1].startswith("ws1,J1,0.000000,")


def test_bad_input_is_one_line(tmp_path):
    out = CliRunner().invoke(app, ["timeshare", "simulate", FIG3, "--policy", "spin"])
    assert out.exit_code == 2 and out.output.strip().splitlines() == [
        "error: --policy: unknown 'spin' (known: dedicated, implicit, proper-share)"]
    bad = tmp_path / "bad.toml"
    bad.write_text(Path(FIG3).read_text().replace("beta = 0.3\ndemand_ref_s = 160.0", "beta = 0.0\ndemand_ref_s = 160.0"))
    out = CliRunner().invoke(app, ["timeshare", "table", str(bad)])
    assert out.exit_code == 2 and len(out.output.strip().splitlines()) == 1
    assert "job[5].beta" in out.output
