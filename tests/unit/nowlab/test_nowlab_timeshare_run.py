"""`nowlab timeshare run` and `report`: their one-line errors, and a report redone from a run's CSVs."""
from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from experiments.studies.zhou_brent.files import write_rows
from experiments.studies.zhou_brent.measure import (IntervalRow, JobRow, ManagerRow, RunRow, RunRows, ShareRow, SkewRow,
                                           TableRow)
from nowlab.cli import app

CONFIGS = Path(__file__).resolve().parents[3] / "experiments" / "studies" / "zhou_brent" / "configs"
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
                          (["timeshare", "run", str(CONFIGS / "short-jobs-beside-large.toml"), "--host",
                            "--resync", "gang"], "error: resync: unknown 'gang'")):
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
    assert "| strict | strict | yes | polite | J1 140 | 1 | 2.00 |" in text and "| none | none | yes | polite | J1 140 | 1 | 2.00 |" in text


def test_report_of_a_directory_without_csvs_is_one_line(tmp_path):
    out = CliRunner().invoke(app, ["timeshare", "report", str(tmp_path)], terminal_width=400)
    assert out.exit_code == 2 and "run.csv: missing" in out.output and len(out.output.splitlines()) == 1


def test_report_fills_a_run_without_dedicated_runs_from_one_with_them(tmp_path):
    from dataclasses import replace

    from experiments.studies.zhou_brent.files import read_rows

    nan = float("nan")
    write_rows(tmp_path / "loose1", rows("loose"))
    bare = rows("strict")
    bare = replace(bare, jobs=(JobRow("J1", "ws1 ws2", 2, 0.3, nan, nan, 150.0, nan, nan, nan, nan, "-"),))
    write_rows(tmp_path / "strict", bare)
    argv = ["timeshare", "report", str(tmp_path / "strict"), "--dedicated-from", str(tmp_path / "loose1")]
    out = CliRunner().invoke(app, argv, terminal_width=400)
    assert out.exit_code == 0, out.output
    got = read_rows(tmp_path / "strict")
    j = got.jobs[0]
    # T_d from loose1 (80 s, 41 s), T_e its own (150 s): S_d 80/41, predicted 0.3 S_d, measured 80/150
    assert (j.t_d1_s, j.t_dp_s, j.t_e_s, j.same_answer) == (80.0, 41.0, 150.0, "-")
    assert j.s_e_predicted == 0.3 * 80.0 / 41.0 and j.error == (80.0 / 150.0) / (0.3 * 80.0 / 41.0) - 1
    assert got.run.dedicated_from == "loose1"
    assert "taken from the dedicated runs of loose1" in (tmp_path / "strict" / "report.md").read_text()
    # again: nothing to fill, nothing changes
    assert CliRunner().invoke(app, argv, terminal_width=400).exit_code == 0
    assert read_rows(tmp_path / "strict") == got


def test_dedicated_times_of_other_jobs_are_one_line_naming_the_job(tmp_path):
    from dataclasses import replace

    nan = float("nan")
    write_rows(tmp_path / "other", replace(rows("loose"), jobs=(
        JobRow("J1", "ws1 ws3", 2, 0.3, 80.0, 41.0, 140.0, 1.95, 0.585, 0.571, -0.024, "yes"),)))
    write_rows(tmp_path / "strict", replace(rows("strict"), jobs=(
        JobRow("J1", "ws1 ws2", 2, 0.3, nan, nan, 150.0, nan, nan, nan, nan, "-"),)))
    out = CliRunner().invoke(app, ["timeshare", "report", str(tmp_path / "strict"), "--dedicated-from",
                                   str(tmp_path / "other")], terminal_width=400)
    assert out.exit_code == 2 and len(out.output.splitlines()) == 1, out.output
    assert out.output.startswith("error: J1: ran on ws1 ws2 here, on ws1 ws3 in other"), out.output


def test_a_run_file_written_before_dedicated_from_policy_drift_and_wait_existed_reads_with_their_defaults(tmp_path):
    from experiments.studies.zhou_brent.files import read_rows

    write_rows(tmp_path, rows("loose"))
    run_csv = tmp_path / "run.csv"
    header, values = run_csv.read_text().splitlines()
    assert header.endswith(",dedicated_from,policy,drift_ppm,wait") and values.endswith(",implicit,,polite")
    for added, default in ((",wait", ",polite"), (",dedicated_from,policy,drift_ppm", ",,implicit,")):
        header, values = header.removesuffix(added), values.removesuffix(default)
        run_csv.write_text(header + "\n" + values + "\n")
        got = read_rows(tmp_path)
        assert got == rows("loose") and got.run.wait == "polite" and got.run.managers  # it ran with managers


# --- why coscheduling matters: --wait and --resync os -------------------------------------------

NOW3 = str(CONFIGS / "coscheduling-now3.toml")
STREAM = str(CONFIGS / "short-jobs-beside-large.toml")


def test_a_bad_wait_and_what_only_managers_do_under_the_os_alone_are_one_line(tmp_path):
    for argv, message in (
            ([NOW3, "--host", "--wait", "busy"], "error: wait: unknown 'busy' (known: polite, spin)"),
            ([NOW3, "--host", "--resync", "os", "--policy", "implicit"], "error: policy: a local policy is kept by the managers"),
            ([NOW3, "--host", "--resync", "os", "--drift"], "error: drift: it runs the managers' clocks off"),
            ([STREAM, "--host", "--resync", "os"], "error: resync: os starts no managers, and a stream run"),
            ([STREAM, "--host", "--wait", "spin"], "error: job L1: wait spin: a stream run records no wait mode")):
        out = CliRunner().invoke(app, ["timeshare", "run", *argv], terminal_width=200)
        assert out.exit_code == 2 and out.output.startswith(message) and len(out.output.splitlines()) == 1, out.output


def test_wait_overrides_every_jobs_wait_and_the_os_alone_run_is_recorded_so(tmp_path, monkeypatch):
    """The run itself is stood in for (no processes): what the command gives the runner, and what it writes."""
    from experiments.studies.zhou_brent.files import read_rows
    from experiments.studies.zhou_brent.live import JobRun, OsAlone, TimeshareRun, TimeshareRunner

    seen: list[TimeshareRunner] = []

    def run(self: TimeshareRunner) -> TimeshareRun:
        seen.append(self)
        shared = {p.job: JobRun(p.job, p.hosts, 1.0, 90.0, {"compute_s": 80.0 + i}) for i, p in enumerate(self.programs)}
        return TimeshareRun(self.spec.name, self.programs, {}, shared, None, {p.job: None for p in self.programs}, 1.0)

    monkeypatch.setattr(TimeshareRunner, "run", run)
    out = CliRunner().invoke(app, ["timeshare", "run", NOW3, "--host", "--resync", "os", "--wait", "spin",
                                   "--no-dedicated", "--out", str(tmp_path / "os-spin")], terminal_width=200)
    assert out.exit_code == 0, out.output
    runner, = seen
    assert isinstance(runner.setup, OsAlone) and not runner.dedicated
    assert [p.argv[-2:] for p in runner.programs] == [("--wait", "spin")] * 2  # both jobs, though the spec says polite
    got = read_rows(tmp_path / "os-spin")
    assert (got.run.resync, got.run.managers, got.run.wait) == ("os", False, "spin")
    assert [(j.job, j.t_e_s) for j in got.jobs] == [("CGA", 80.0), ("CGB", 81.0)]
    assert "No managers: the OS scheduled the ranks." in (tmp_path / "os-spin" / "report.md").read_text()
