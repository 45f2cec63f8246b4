"""The rigid programs' start line (how the host measures a launch), and the C kernel's rate kept equal
to the one workloads/reference.py states."""
from __future__ import annotations

import math
import re
from pathlib import Path

from hypothesis import given, strategies as st

from workloads.reference import C_MULTIPLY_PER_REF_S
from workloads.wire.rigid import started_at, started_line

RING_C = Path(__file__).resolve().parents[3] / "containers" / "kernels" / "ring.c"


@given(st.floats(min_value=0, max_value=4e9, allow_nan=False))
def test_a_start_line_reads_back_to_the_microsecond(epoch):
    out = f"some output\n{started_line(epoch)}\n{{\"kernel\": \"ring\"}}\n"
    assert abs(started_at(out) - epoch) <= 1e-6 * max(1.0, 1e-3 * epoch)


def test_no_start_line_is_unknown_never_a_guess():
    assert math.isnan(started_at(""))
    assert math.isnan(started_at("nowlab-started soon\nnowlab-started nan\nhello 1.0\n"))


def test_the_c_kernel_counts_work_at_the_stated_reference_rate():
    text = RING_C.read_text()
    rate = float(re.search(r"#define C_MULTIPLY_PER_REF_S ([0-9.e+]+)", text).group(1))
    assert rate == C_MULTIPLY_PER_REF_S
    assert '"nowlab-started %.6f\\n"' in text  # the line started_at reads
