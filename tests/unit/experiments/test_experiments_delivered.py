"""A job's delivered reference speed, from the meter's CSVs as the speed keeper writes them."""
from __future__ import annotations

from experiments.delivered import job_speed, relative
from testbed.meter import QUOTAS_CSV, SAMPLES_CSV, QuotaRow, Sample, append_quotas, append_samples


def write_meter(d, factors: dict[int, float], quotas: dict[str, tuple[int, float]], t0=1000.0, t1=1010.0):
    samples = [Sample(t0 + 0.5 * i, core, "multiply", f) for core, f in factors.items() for i in range(int((t1 - t0) * 2) + 1)]
    append_samples(d / SAMPLES_CSV, samples)
    append_quotas(d / QUOTAS_CSV, [QuotaRow(t0 - 1, ws, core, q, None, None, 1.0, False)
                                   for ws, (core, q) in quotas.items()])


def test_the_job_speed_is_the_mean_of_its_workstations(tmp_path):
    write_meter(tmp_path, {0: 2.0, 1: 1.5}, {"ws1": (0, 0.1), "ws2": (1, 0.1), "ws3": (0, 0.2)})
    got = job_speed(tmp_path, ["ws1", "ws2", "ws3"], 1002.0, 1008.0)
    assert got.status == "metered"
    # ws1 0.1 core x 2.0 reference-s per CPU-s, ws2 0.1 x 1.5, ws3 0.2 x 2.0
    assert abs(got.speed - (0.2 + 0.15 + 0.4) / 3) < 1e-9
    assert abs(job_speed(tmp_path, ["ws3"], 1002.0, 1008.0).speed - 0.4) < 1e-9


def test_no_meter_means_raw_only(tmp_path):
    assert job_speed(None, ["ws1"], 0.0, 1.0).speed is None
    got = job_speed(tmp_path, ["ws1"], 0.0, 1.0)
    assert got.speed is None and got.status == "no meter"
    write_meter(tmp_path, {0: 2.0}, {"ws1": (0, 0.1)})
    late = job_speed(tmp_path, ["ws1"], 5000.0, 5001.0)  # the meter died before this span
    assert late.speed is None and "no meter samples" in late.status


def test_relative_speed():
    assert abs(relative(0.18, 0.2) - 0.9) < 1e-12
    assert relative(None, 0.2) is None
    assert relative(0.2, None) is None


def long_meter(d, hours: float = 2.0, quota_every_s: float | None = 5.0):
    """A keeper's CSVs over `hours`: two cores sampled each second, quotas every tick (or once)."""
    import math

    n = int(hours * 3600)
    append_samples(d / SAMPLES_CSV, [Sample(1000.0 + i + 0.01 * core, core, "multiply",
                                            1.0 + 0.3 * math.sin(i / 97 + core)) for i in range(n) for core in (0, 1)])
    ticks = range(0, n, int(quota_every_s)) if quota_every_s else [0]
    append_quotas(d / QUOTAS_CSV, [QuotaRow(999.5 + i, ws, core, 0.1 + 0.05 * math.cos(i / 300 + core), None, None,
                                            1.0, False) for i in ticks for ws, core in (("ws1", 0), ("ws2", 1))])


def test_a_windowed_read_is_the_whole_read_cut_at_the_window(tmp_path):
    """The reader bisects the file for the window's start; it must give exactly the rows a full read would."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from testbed.meter import READ_MARGIN_S, read_quotas, read_samples

    long_meter(tmp_path, hours=0.5)
    every = read_samples(tmp_path / SAMPLES_CSV)
    quotas = read_quotas(tmp_path / QUOTAS_CSV)

    @settings(max_examples=60, deadline=None)
    @given(st.floats(min_value=0.0, max_value=4000.0))
    def check(since: float) -> None:
        assert read_samples(tmp_path / SAMPLES_CSV, since=since) == [s for s in every if s.t >= since - READ_MARGIN_S]
        assert read_quotas(tmp_path / QUOTAS_CSV, since=since) == [q for q in quotas if q.t >= since - READ_MARGIN_S]

    check()


def test_a_job_late_in_a_long_run_gets_the_speed_a_full_read_gives(tmp_path):
    from testbed.meter import delivered_speed, read_quotas, read_samples

    for quota_every_s, d in ((5.0, tmp_path / "ticks"), (None, tmp_path / "once")):  # once: the fallback read
        d.mkdir()
        long_meter(d, quota_every_s=quota_every_s)
        samples, quotas = read_samples(d / SAMPLES_CSV), read_quotas(d / QUOTAS_CSV)
        t0, t1 = 1000.0 + 6500.0, 1000.0 + 6620.0
        full = sum(delivered_speed(samples, quotas, ws, t0, t1).speed for ws in ("ws1", "ws2")) / 2
        got = job_speed(d, ["ws1", "ws2"], t0, t1)
        assert got.status == "metered" and abs(got.speed - full) < 1e-12
