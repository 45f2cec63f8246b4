"""Tables 2 and 3 joined from runs by class: the verdict over the joined rows, and a row measured twice refused."""
from __future__ import annotations

import csv

import pytest

from experiments.studies.menasce_rao.pieces import markdown, read, verdicts, write_csv
from experiments.studies.menasce_rao.report import COLUMNS


def _csv(path, rows):
    with path.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=COLUMNS)
        w.writeheader()
        for table, kind, n, err in rows:
            w.writerow({"table": table, "class": kind, "n": n, "reps": 8, "measured_median_s": 10, "measured_min_s": 9,
                        "measured_max_s": 11, "tgs_s": 10 * (1 + err), "error": err, "metered_error": err / 2,
                        "profiled_error": "", "paper_error_pct": "4.6"})
    return path


def test_joined_rows_are_judged_as_one_table(tmp_path):
    a = _csv(tmp_path / "a.csv", [(3, "LX", 1, 0.02), (3, "LX", 2, -0.04)])
    b = _csv(tmp_path / "b.csv", [(3, "SPARC5", 1, 0.12)])
    pieces = read([a, b])
    # |errors| 0.02, 0.04, 0.12: median 4% (within 5%), largest 12% (over 11%)
    spec, metered = verdicts(pieces)[3]
    assert spec == ("the spec's speeds", pytest.approx(0.04), pytest.approx(0.12), False)
    assert metered == ("the metered kernel speeds", pytest.approx(0.02), pytest.approx(0.06), True)
    assert len(verdicts(pieces)[3]) == 2  # the profiled column is empty in a row: not judged
    text = markdown(pieces, "cmd")
    assert "median 4.0%, largest 12.0%: NOT met" in text and f"`{b}`" in text
    write_csv(pieces, tmp_path / "joined.csv")
    with (tmp_path / "joined.csv").open() as f:
        got = list(csv.DictReader(f))
    assert [(r["class"], r["source"]) for r in got] == [("LX", str(a)), ("LX", str(a)), ("SPARC5", str(b))]


def test_a_row_in_two_runs_is_refused_naming_both(tmp_path):
    a = _csv(tmp_path / "a.csv", [(2, "LX", 3, 0.01)])
    b = _csv(tmp_path / "b.csv", [(2, "LX", 3, 0.05)])
    with pytest.raises(ValueError, match=f"^Table 2, 3 LX: in both {a} and {b}$"):
        read([a, b])


def test_a_csv_of_another_kind_is_refused_naming_the_column(tmp_path):
    p = tmp_path / "x.csv"
    p.write_text("table,class,n\n3,LX,1\n")
    with pytest.raises(ValueError, match="no column 'error'"):
        read([p])
