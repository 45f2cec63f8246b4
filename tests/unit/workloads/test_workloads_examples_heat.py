"""The pure half of docs/your-workload.md's worked example (workloads/examples/heat_math.py): a rod
stepped in blocks with halos, as the MPI program steps it, is the serial rod bit for bit in any
partition, and the scheme does what heat does (tends to the straight line between the ends)."""
from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from workloads.examples import heat_math as hm
from workloads.partition import block_bounds


def blockwise(n: int, parts: int, steps: int, r: float) -> np.ndarray:
    """The rod in `parts` blocks, each step's halo cells copied from the neighbours as heat.py sends them."""
    blocks = block_bounds(n, parts)
    rods = [hm.padded(hm.initial_rows(b.lo, b.hi), first=i == 0, last=i == parts - 1) for i, b in enumerate(blocks)]
    for _ in range(steps):
        for i in range(parts):
            if i > 0:
                rods[i][0] = rods[i - 1][-2]
            if i < parts - 1:
                rods[i][-1] = rods[i + 1][1]
        new = [rod.copy() for rod in rods]
        for old, nxt in zip(rods, new):
            hm.step(old, nxt, r)
        rods = new
    return np.concatenate([rod[1:-1] for rod in rods])


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 60), data=st.data())
def test_any_partition_steps_the_serial_rod_bit_for_bit(n, data):
    parts = data.draw(st.integers(1, n))
    steps = data.draw(st.integers(0, 30))
    r = data.draw(st.sampled_from([0.1, 0.25, 0.4, 0.5]))
    assert np.array_equal(blockwise(n, parts, steps, r), hm.serial(n, steps, r))


def test_the_starting_rod_is_the_same_in_any_split():
    whole = hm.initial_rows(0, 100)
    assert np.array_equal(np.concatenate([hm.initial_rows(b.lo, b.hi) for b in block_bounds(100, 7)]), whole)
    assert whole.min() == 0.0 and whole.max() == 12 / 13


def test_heat_flows_to_the_straight_line_between_the_ends():
    n = 20
    start = np.abs(hm.initial_rows(0, n) - hm.steady(n)).max()
    late = np.abs(hm.serial(n, 3000, 0.5) - hm.steady(n)).max()
    assert start > 0.5 and late < 1e-6
    one = hm.serial(n, 1, 0.25)  # one step by hand at cell 0: u + r ((LEFT + u1) - 2 u)
    u = hm.initial_rows(0, n)
    assert one[0] == u[0] + 0.25 * ((hm.LEFT + u[1]) - 2.0 * u[0])


def test_the_guides_class_for_nowlab_execute_loads():
    import re
    import tomllib
    from pathlib import Path

    from experiments.traces.live_inputs import job_class

    guide = (Path(__file__).resolve().parents[3] / "docs" / "your-workload.md").read_text()
    block = next(b for b in re.findall(r"```toml\n(.*?)```", guide, flags=re.S) if "[class.heat]" in b)
    cls = job_class("heat", tomllib.loads(block)["class"]["heat"])
    assert cls.argv[:3] == ("python3", "-m", "workloads.examples.heat") and cls.model.T(1) > cls.model.T(4)
