"""A job's delivered reference speed, from the meter's CSVs as the speed keeper writes them."""
from __future__ import annotations

from experiments.delivered import job_speed, relative
from testbed.meter import QUOTAS_CSV, SAMPLES_CSV, QuotaRow, Sample, append_quotas, append_samples


def write_meter(d, factors: dict[int, float], quotas: dict[str, tuple[int, float]], t0=1000.0, t1=1010.0):
    samples = [Sample(t0 + 0.5 * i, core, "multiply", f) for core, f in factors.items() for i in range(int((t1 - t0) * 2) + 1)]
    append_samples(d / SAMPLES_CSV, samples)
    append_quotas(d / QUOTAS_CSV, [QuotaRow(t0 - 1, ws, core, q, None, None, 1.0, False)
                                   for ws, (core, q) in quotas.items()])


def test_the_slowest_workstation_sets_the_job_speed(tmp_path):
    write_meter(tmp_path, {0: 2.0, 1: 1.5}, {"ws1": (0, 0.1), "ws2": (1, 0.1), "ws3": (0, 0.2)})
    got = job_speed(tmp_path, ["ws1", "ws2", "ws3"], 1002.0, 1008.0)
    assert got.status == "metered"
    assert abs(got.speed - 0.15) < 1e-9  # ws2: 0.1 core x 1.5 reference-s per CPU-s
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
