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
