"""The speed probe (workloads/speed_probe.py): the lines it prints, its options, and a short
real run on this machine's core 0 (a few tens of ms of CPU)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from testbed import meter
from workloads import speed_probe

ROOT = Path(__file__).resolve().parents[3]


def test_a_sample_line_reads_back_and_anything_else_is_none():
    line = speed_probe.sample_line(1795590702.08791, 3, "matvec", 1.234567, 0.0071234)
    assert speed_probe.parse_line(line) == (1795590702.088, 3, "matvec", 1.23457, 0.007123)
    assert meter.parse_sample(line) == meter.Sample(1795590702.088, 3, "matvec", 1.23457, 0.007123)
    for junk in ("", "hello", "{}", '{"t": 1, "core": "x"}', "[1, 2]"):
        assert speed_probe.parse_line(junk) is None


def test_a_short_run_meters_each_core_with_both_kernels():
    out = subprocess.run([sys.executable, "-m", "workloads.speed_probe", "--cores", "0", "--seconds", "1.2",
                          "--tick", "0.2"], capture_output=True, text=True, cwd=ROOT, timeout=60, check=True).stdout
    samples = [s for line in out.splitlines() if (s := meter.parse_sample(line)) is not None]
    assert len(samples) >= 4 and {s.core for s in samples} == {0}
    assert {s.kernel for s in samples} == {"multiply", "matvec"}
    assert all(0.05 < s.factor < 20 and 0 < s.cpu_s < 0.2 for s in samples)  # sized to a few ms of CPU
    assert set(meter.factors_of(samples)) == {0}


@pytest.mark.parametrize("argv, message", [
    (["--cores", "a,b"], "--cores: not a list of core numbers: 'a,b'"),
    (["--cores", ","], "--cores: none given"),
    (["--cores", "0", "--tick", "0"], "--tick: must be > 0 s, got 0.0"),
])
def test_bad_options_are_one_line_naming_the_option(argv, message, capsys):
    with pytest.raises(SystemExit) as exc:
        speed_probe.main(argv)
    assert exc.value.code == 2 and message in capsys.readouterr().err


def test_placement_factors_are_each_kernels_median_then_their_mean():
    s = [meter.Sample(0, 1, "multiply", f) for f in (1.0, 3.0, 2.0)] + [meter.Sample(0, 1, "matvec", 4.0),
                                                                       meter.Sample(0, 2, "matvec", 0.5)]
    assert meter.factors_of(s) == {1: 3.0, 2: 0.5}  # (2 + 4) / 2; a core with one kernel: that one
