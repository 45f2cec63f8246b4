"""The report of a hand-made results store: files, the error table's numbers
(expected values computed here from the inputs, not by the report's code),
targets, claims, failed jobs and resumed cells."""
from __future__ import annotations

import shutil
import statistics
from pathlib import Path

import matplotlib.image
import matplotlib.pyplot as plt
import pandas as pd
import pytest

from scheduler.jobs import FinishedJob, SubmittedJob
from experiments.report import analyse, error_table_text, write_report
from experiments.reporting.run_stats import error_table, targets_text
from experiments.reporting.plots import DPI, METRIC_FIGURES, METRIC_SIZE_IN, PANEL_SIZE_IN, metric_figure
from experiments.store import ResultsStore

POLICIES = ["RA", "FOLDING"]
RATES = [0.1, 0.2]
REPS = 2
JOBS, WARMUP = 4, 1
# Per (policy, rate): base wait W, base execution E, predicted/measured factors for wait and execution.
W = {("RA", 0.1): 4.0, ("RA", 0.2): 10.0, ("FOLDING", 0.1): 2.0, ("FOLDING", 0.2): 6.0}
E = {("RA", 0.1): 20.0, ("RA", 0.2): 20.0, ("FOLDING", 0.1): 18.0, ("FOLDING", 0.2): 23.0}
PW = {("RA", 0.1): 1.0, ("RA", 0.2): 1.5, ("FOLDING", 0.1): 1.0, ("FOLDING", 0.2): 1.0}
PE = {("RA", 0.1): 1.02, ("RA", 0.2): 1.0, ("FOLDING", 0.1): 0.97, ("FOLDING", 0.2): 1.10}
FAILED = ("FOLDING", 0.2, 1, 2)  # policy, rate, replication, job: failed live
RESUMED = ("RA", 0.2, 1)  # run in two segments
CLAIMS = [
    {"text": "Folding responds faster than RA", "metric": "response", "lower": "FOLDING", "than": "RA",
     "rates": None},
    {"text": "Folding executes faster than RA", "metric": "execution", "lower": "FOLDING", "than": "RA",
     "rates": [0.1, 0.2]},
    {"text": "RA waits less than Folding", "metric": "wait", "lower": "RA", "than": "FOLDING", "rates": None},
]
CONFIG = {"name": "t", "title": "Hand-made test", "paper": "Padhye & Dowdy (1996), Fig. 4",
          "cluster": "specs/now8.toml", "policies": POLICIES,
          "arrivals": {"rates": RATES, "jobs": JOBS, "warmup": WARMUP, "replications": REPS, "seed": 7},
          "targets": {"response_rel": 0.10, "execution_rel": 0.05}, "claim": CLAIMS}


def measured(pol: str, rate: float, rep: int, j: int) -> tuple[float, float]:
    """(wait, execution) of a measured job; the warm-up job is absurd so including it would show."""
    if j < WARMUP:
        return 500.0, 900.0
    return W[pol, rate] + rep + 0.5 * j, E[pol, rate] + j + 0.5 * rep


def predicted(pol: str, rate: float, rep: int, j: int) -> tuple[float, float]:
    w, e = measured(pol, rate, rep, j)
    return w * PW[pol, rate], e * PE[pol, rate]


def make_outcome(job: SubmittedJob, wait: float, execution: float, status: str = "done") -> FinishedJob:
    return FinishedJob(job.id, job.cls, job.demand, job.arrival_s, job.arrival_s + wait, job.arrival_s + wait + execution,
                      2.0, 4, 4, 0, status, "" if status == "done" else "ws3 died")


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("exp") / "fig4.db"
    with ResultsStore.create(path, CONFIG, "title = 'Hand-made test'\n") as s:
        s.add_calibration({"time": 1.7e9, "cpu": [{"workstation": "ws1", "error": -0.02}],
                           "links": [{"src": "ws1", "dst": "ws2", "error": 0.01}]})
        s.set_profile("A", {"W": 120.5, "alpha": 0.02, "beta": 1.5, "pmax": 8, "fit_error": 0.031})
        for pol in POLICIES:
            for rate in RATES:
                for rep in range(REPS):
                    jobs = [SubmittedJob(j, "A", 30.0 * j) for j in range(JOBS)]
                    cid = s.ensure_cell(pol, rate, rep, jobs)
                    s.set_cell_status(cid, "running")
                    seg = s.start_segment(cid, 0.0, ["ws1", "ws2"], None)
                    for job in jobs:
                        if (pol, rate, rep) == RESUMED and job.id == 2:
                            s.set_cell_status(cid, "interrupted", "ws2 died")
                            seg = s.start_segment(cid, job.arrival_s, ["ws1"], None)
                            s.set_cell_status(cid, "running")
                        status = "failed" if (pol, rate, rep, job.id) == FAILED else "done"
                        s.add_job(cid, make_outcome(job, *measured(pol, rate, rep, job.id), status), seg)
                    s.set_predictions(cid, [make_outcome(job, *predicted(pol, rate, rep, job.id)) for job in jobs])
                    s.set_cell_status(cid, "done")
    return path


def expected(pol: str, rate: float) -> dict[str, float]:
    """The cell's figures by hand: per replication over done jobs past warm-up, then the mean over replications."""
    out: dict[str, list[float]] = {k: [] for k in ("m_resp", "p_resp", "m_med", "p_med", "m_exec", "m_wait")}
    for rep in range(REPS):
        ids = [j for j in range(WARMUP, JOBS) if (pol, rate, rep, j) != FAILED]
        m = [measured(pol, rate, rep, j) for j in ids]
        p = [predicted(pol, rate, rep, j) for j in ids]
        out["m_resp"].append(statistics.mean(w + e for w, e in m))
        out["p_resp"].append(statistics.mean(w + e for w, e in p))
        out["m_med"].append(statistics.median(e for _, e in m))
        out["p_med"].append(statistics.median(e for _, e in p))
        out["m_exec"].append(statistics.mean(e for _, e in m))
        out["m_wait"].append(statistics.mean(w for w, _ in m))
    x = {k: statistics.mean(v) for k, v in out.items()}
    x["err_resp"] = (x["p_resp"] - x["m_resp"]) / x["m_resp"]
    x["err_med"] = (x["p_med"] - x["m_med"]) / x["m_med"]
    return x


@pytest.fixture(scope="module")
def report(results: Path):
    return write_report(results)


def test_each_figure_plots_this_runs_cells_measured_and_predicted(results: Path) -> None:
    a = analyse(results)
    for stat in METRIC_FIGURES:
        fig = metric_figure(a.compared, stat, "t")
        ax = fig.axes[0]
        measured = {c.get_label(): c.lines[0] for c in ax.containers}  # errorbar: its data line
        predicted = {ln.get_label(): ln for ln in ax.lines if ln.get_label().endswith(" predicted")}
        for policy, g in a.compared.groupby("policy"):
            g = g.sort_values("rate")
            line = measured[f"{policy} measured"]
            assert list(line.get_xdata()) == pytest.approx(list(g.rate))
            assert list(line.get_ydata()) == pytest.approx(list(g[f"measured_{stat}"]))
            assert list(predicted[f"{policy} predicted"].get_ydata()) == pytest.approx(list(g[f"predicted_{stat}"]))
        plt.close(fig)


def test_files_are_written(results: Path, report) -> None:
    assert report.out_dir == results.parent / "fig4-report"
    for p in (report.markdown, report.html, report.cells_csv, report.jobs_csv):
        assert p.is_file() and p.stat().st_size > 0
    names = sorted(p.name for p in report.figures)
    assert names == ["execution.png", "panel.png", "partition.png", "preemptions.png", "response.png", "wait.png"]
    for fig in report.figures:
        pixels = matplotlib.image.imread(fig)
        size = PANEL_SIZE_IN if fig.name == "panel.png" else METRIC_SIZE_IN
        assert pixels.shape[:2] == (round(size[1] * DPI), round(size[0] * DPI)), fig.name
        assert pixels[..., :3].std() > 0.05, fig.name  # not a blank canvas
    md = report.markdown.read_text()
    for fig in report.figures:
        assert f"({fig.name})" in md and f"src='{fig.name}'" in report.html.read_text()
    assert "# Hand-made test" in md and "Padhye & Dowdy (1996), Fig. 4" in md
    assert "| A | 120.5 | 0.02 | 1.5 | 8 | 0.031 |" in md  # profile keys as present
    assert "-2.0% to -2.0%" in md and "+1.0% to +1.0%" in md  # calibration errors


def _row(text: str, pol: str, rate: float) -> list[str]:
    (line,) = [ln for ln in text.splitlines() if ln.startswith(f"| {pol} | {rate:g}/s |")]
    return [c.strip() for c in line.strip("|").split("|")]


@pytest.mark.parametrize("pol", POLICIES)
@pytest.mark.parametrize("rate", RATES)
def test_error_table_has_the_hand_computed_numbers(report, pol: str, rate: float) -> None:
    x = expected(pol, rate)
    row = _row(report.markdown.read_text(), pol, rate)
    assert row[2:5] == [f"{x['m_resp']:.2f}", f"{x['p_resp']:.2f}", f"{x['err_resp']:+.1%}"]
    assert row[5] == ("✓" if abs(x["err_resp"]) <= 0.10 else "✗")
    assert row[6:9] == [f"{x['m_med']:.2f}", f"{x['p_med']:.2f}", f"{x['err_med']:+.1%}"]
    assert row[9] == ("✓" if abs(x["err_med"]) <= 0.05 else "✗")
    cells = pd.read_csv(report.cells_csv)
    c = cells[(cells.policy == pol) & (cells.rate == rate)].iloc[0]
    assert c.measured_response == pytest.approx(x["m_resp"]) and c.predicted_response == pytest.approx(x["p_resp"])
    assert c.err_response == pytest.approx(x["err_resp"]) and c.err_median_execution == pytest.approx(x["err_med"])
    assert c.measured_execution == pytest.approx(x["m_exec"]) and c.measured_wait == pytest.approx(x["m_wait"])
    assert c.replications == REPS
    assert c.failed == (1 if (pol, rate) == FAILED[:2] else 0)
    assert c.jobs == REPS * (JOBS - WARMUP) - c.failed
    assert c.resumed == (1 if (pol, rate) == RESUMED[:2] else 0)


def test_terminal_table_matches_the_report(results: Path, report) -> None:
    text = error_table_text(results)
    assert _row(text, "RA", 0.2) == _row(report.markdown.read_text(), "RA", 0.2)
    assert "Missed:" in text


def test_targets_paragraph_names_the_missing_cells(report) -> None:
    md = report.markdown.read_text()
    resp_miss = [(p, r) for p in POLICIES for r in RATES if abs(expected(p, r)["err_resp"]) > 0.10]
    exec_miss = [(p, r) for p in POLICIES for r in RATES if abs(expected(p, r)["err_med"]) > 0.05]
    assert resp_miss == [("RA", 0.2)] and exec_miss == [("FOLDING", 0.2)]  # the inputs were chosen so
    x, y = expected("RA", 0.2), expected("FOLDING", 0.2)
    assert f"Missed: mean response within 10% in 1 of 4 cells (RA at 0.2/s: {x['err_resp']:+.1%})" in md
    assert f"Missed: median execution within 5% in 1 of 4 cells (FOLDING at 0.2/s: {y['err_med']:+.1%})" in md


def test_claims_verdicts(report) -> None:
    md = report.markdown.read_text()
    rows = {c["text"]: [s.strip() for s in ln.strip("|").split("|")]
            for c in CLAIMS for ln in md.splitlines() if ln.startswith(f"| {c['text']} |")}
    margins = [(expected("RA", r)["m_resp"] - expected("FOLDING", r)["m_resp"]) / expected("RA", r)["m_resp"]
               for r in RATES]
    assert all(m > 0 for m in margins)
    lo, hi = (f"{m * 100:.0f}" for m in sorted(margins))
    # Two replications a cell, and a replication moves both policies alike (wait + rep, execution + rep/2):
    # paired by replication that shared shift cancels, so the margins resolve although n = 2.
    assert rows["Folding responds faster than RA"][2:4] == ["holds", f"holds, by {lo}–{hi}%"]
    assert rows["Folding responds faster than RA"][4].endswith("[paired t, n = 2]")
    exec_rows = rows["Folding executes faster than RA"]
    # 18 < 20 at 0.1/s, 23 > 20 at 0.2/s: a reversed sign, resolved, fails the claim
    assert exec_rows[2:4] == ["fails", "fails: holds at 1 of 2 rates; not at 0.2/s"] and "0.2/s: -" in exec_rows[4]
    assert rows["RA waits less than Folding"][2] == "fails"  # RA's base wait is the higher at both rates


def test_failed_and_resumed_cells_are_listed(report) -> None:
    md = report.markdown.read_text()
    assert "FOLDING at 0.2/s, replication 1, job 2 (class A): ws3 died" in md
    assert "RA at 0.2/s, replication 1: resumed: run in 2 segments; interrupted 1 time(s)" in md
    jobs = pd.read_csv(report.jobs_csv)
    assert len(jobs) == len(POLICIES) * len(RATES) * REPS * JOBS
    assert jobs.warmup.sum() == len(POLICIES) * len(RATES) * REPS * WARMUP
    first = jobs[(jobs.policy == "RA") & (jobs.rate == 0.2) & (jobs.replication == 1) & (jobs.job_id == 3)].iloc[0]
    w, e = measured("RA", 0.2, 1, 3)
    pw, pe = predicted("RA", 0.2, 1, 3)
    assert (first.measured_wait, first.measured_execution, first.segment) == pytest.approx((w, e, 2))
    assert (first.predicted_wait, first.predicted_execution) == pytest.approx((pw, pe))


def test_a_run_in_progress_still_reports(tmp_path: Path) -> None:
    """No jobs yet, then one replication without predictions: the report says so instead of failing."""
    path = tmp_path / "run.db"
    config = {**CONFIG, "arrivals": {**CONFIG["arrivals"], "replications": 1}}
    with ResultsStore.create(path, config, "") as s:
        jobs = [SubmittedJob(j, "A", 30.0 * j) for j in range(JOBS)]
        cid = s.ensure_cell("RA", 0.1, 0, jobs)
    assert error_table_text(path) == "No measured jobs past warm-up yet."
    paths = write_report(path, tmp_path / "out")
    assert "No measured jobs past warm-up yet." in paths.markdown.read_text()
    with ResultsStore.open(path) as s:
        seg = s.start_segment(cid, 0.0, ["ws1"], None)
        s.set_cell_status(cid, "running")
        for job in jobs[:3]:
            s.add_job(cid, make_outcome(job, 1.0, 10.0), seg)
    md = write_report(path, tmp_path / "out").markdown.read_text()
    assert "| RA | 0.1/s | 11.00 | n/a | n/a |  | 10.00 | n/a | n/a |  |" in md
    assert "status running, 3 of 4 jobs stored" in md
    assert "| Folding responds faster than RA | response | no data |" in md


def test_statistics_agree_with_the_predictors_summary(results: Path) -> None:
    """The report's per-replication figures are those of experiments.predict.summarize, when it exists."""
    predict = pytest.importorskip("experiments.predict")
    from experiments.reporting.run_stats import summarize

    with ResultsStore.open(results, readonly=True) as s:
        jobs = s.jobs_frame()
    mine = summarize(jobs, WARMUP).set_index(["policy", "rate", "replication"])
    for key, g in jobs.groupby(["policy", "rate", "replication"]):
        outcomes = [FinishedJob.from_row(r) for r in g.to_dict("records")]
        theirs = predict.summarize(outcomes, WARMUP)
        row = mine.loc[key]
        assert (row.jobs, row.failed) == (theirs["jobs"], theirs["failed"])
        assert row.response == pytest.approx(theirs["mean_response"])
        assert row.wait == pytest.approx(theirs["mean_wait"])
        assert row.execution == pytest.approx(theirs["mean_execution"])
        assert row.median_execution == pytest.approx(theirs["median_execution"])
        assert row.mean_procs == pytest.approx(theirs["mean_partition"])
        assert row.preemptions == pytest.approx(theirs["preemptions_per_job"])


def test_an_ensemble_band_becomes_the_prediction_and_its_interval(results: Path, tmp_path: Path) -> None:
    path = tmp_path / "banded.db"
    shutil.copy(results, path)
    # Replay k of replication r predicts response 30 + k + 2r and median execution 20 + k (k = 0..19).
    with ResultsStore.open(path) as s:
        for row in s.cells_frame().itertuples():
            r = int(row.replication)
            s.set_band(int(row.cell_id), {"response": [30.0 + k + 2 * r for k in range(20)],
                                          "median_execution": [20.0 + k for k in range(20)]}, {"A": 0.05})
    a = analyse(path)
    row = a.compared[(a.compared.policy == "RA") & (a.compared.rate == 0.1)].iloc[0]
    # the mean over replications replay by replay: 31 + k; its mean 40.5, 5% and 95% points 31.95 and 49.05
    assert row.predicted_response == pytest.approx(40.5)
    assert (row.band_response_lo, row.band_response_hi) == pytest.approx((31.95, 49.05))
    assert row.single_response == pytest.approx(expected("RA", 0.1)["p_resp"])
    assert row.err_response == pytest.approx((40.5 - row.measured_response) / row.measured_response)
    table = error_table(a.compared, a.targets)
    first = table[(table.policy == "RA") & (table.rate == "0.1/s")].iloc[0]
    assert first["response, 90% band (s)"] == "31.95-49.05"
    assert first["median execution, 90% band (s)"] == "20.95-38.05"
    # measured RA 0.1/s: response 27.75 s (outside), median execution 22.25 s (inside); raw, no meter
    assert (first["response in band"], first["execution in band"]) == ("✗", "✓")
    # how often an exact model meets the targets by luck: response 31+k within 10% of 40.5 for
    # k = 6..13 (8 of 20), median execution 20+k within 5% of 29.5 for k = 9, 10 (2 of 20)
    assert (row.chance_response, row.chance_median_execution) == pytest.approx((0.4, 0.1))
    assert first["chance within both by luck"] == "4%"
    assert "an exact model would meet both targets in all" in targets_text(a.compared, a.targets)
    with ResultsStore.open(results, readonly=True) as old:
        assert old.bands() == {}


def test_the_calibration_line_says_a_governed_workstations_share_is_against_its_ceiling():
    from experiments.report import calibration_text

    cal = {"time": 0, "cpu": [{"error": -0.30, "governed": True}, {"error": -0.26, "governed": True},
                              {"error": 0.01}],
           "links": [{"error": -0.02}]}
    text = calibration_text(cal)
    assert "1 workstations (CPU share): measured vs asked +1.0% to +1.0%." in text
    assert "2 governed workstations (CPU share against the cap reserved as the governor's ceiling" in text
    assert "-30.0% to -26.0%" in text and "1 links (rate): measured vs asked -2.0% to -2.0%." in text


def test_the_cluster_is_shown_relative_to_the_repository_and_other_paths_as_given():
    from pathlib import Path

    from experiments.report import shown_path
    import experiments.report as report_module
    root = Path(report_module.__file__).resolve().parent.parent
    assert shown_path(root / "compose" / "specs" / "now8.toml") == "compose/specs/now8.toml"
    assert shown_path("/elsewhere/now8.toml") == "/elsewhere/now8.toml"
