import json
import tracemalloc

from experiments.census import ENV, Census, pymalloc_stats


class Kept:  # a type of its own, so its count is this test's alone
    pass


def test_a_census_counts_what_was_kept_between_two_cells(tmp_path, monkeypatch):
    monkeypatch.setenv(ENV, str(tmp_path / "c"))
    census = Census.from_env()
    kept = []
    tracemalloc.start()
    try:
        census.take("first")
        kept.extend(Kept() for _ in range(500))
        census.take("second")
    finally:
        tracemalloc.stop()
    first, second = (json.loads(line) for line in (tmp_path / "c" / "census.jsonl").read_text().splitlines())
    assert first["label"] == "first" and second["rss_mib"] > 0 and second["rss_after_trim_mib"] > 0
    assert second["grown"]["Kept"] == [500, 500]
    assert "by_line" in second and "by_line" not in first  # growth by line needs a previous snapshot
    assert any("test_experiments_census.py" in where for where, _kib, _n in second["by_line"])


def test_no_census_without_the_variable(monkeypatch):
    monkeypatch.delenv(ENV, raising=False)
    assert Census.from_env() is None


def test_pymalloc_arenas_are_counted_when_pymalloc_is_the_allocator():
    stats = pymalloc_stats()  # under tracemalloc's hooks CPython prints none: then it is {}
    assert tracemalloc.is_tracing() or (stats["arenas"] >= 1 and stats["allocated_bytes"] > 0)


def test_the_cells_table_gives_each_row_and_its_change_from_the_one_above(tmp_path):
    import json

    from experiments.census import table

    lines = [{"label": "prepared", "rss_mib": 200.0, "rss_after_trim_mib": 199.0, "objects": 1000,
              "pymalloc": {"arenas": 70, "allocated_bytes": 70 << 20}},
             {"label": "EQUI 0.1 rep 0", "rss_mib": 203.5, "rss_after_trim_mib": 200.0, "objects": 990,
              "pymalloc": {"arenas": 72, "allocated_bytes": 71 << 20}},
             {"label": "traced", "rss_mib": 210.0, "rss_after_trim_mib": 209.0, "objects": 995, "pymalloc": {}}]
    f = tmp_path / "census.jsonl"
    f.write_text("".join(json.dumps(x) + "\n" for x in lines))
    rows = table(f).splitlines()
    assert rows[2] == "| prepared | 200.0 | 199.0 | 1,000 | 70 | 70.0 |"
    assert rows[3] == "| EQUI 0.1 rep 0 | 203.5 (+3.5) | 200.0 (+1.0) | 990 (-10) | 72 (+2) | 71.0 (+1.0) |"
    assert rows[4] == "| traced | 210.0 (+6.5) | 209.0 (+9.0) | 995 (+5) | - | - |"  # no pymalloc counts under tracemalloc
