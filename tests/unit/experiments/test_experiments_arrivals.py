"""Open arrival streams: the statistics they promise, common random numbers, and input checks."""
from __future__ import annotations

from collections import Counter
from itertools import pairwise

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from experiments.arrivals import StreamSpec, demand_stats, interarrival_stats, stream

N = 20_000


def test_interarrival_mean_and_cov_match_an_exponential_stream() -> None:
    rate = 0.5
    mean, cov = interarrival_stats(stream({"cg": 1.0}, rate, N, seed=7))
    print(f"mean gap {mean:.4f} s (want {1 / rate}), CoV {cov:.4f} (want 1)")
    assert mean == pytest.approx(1 / rate, rel=0.03)
    assert cov == pytest.approx(1.0, rel=0.05)


def test_exponential_demand_has_mean_1_and_cov_1() -> None:
    mean, cov = demand_stats(stream({"cg": 1.0}, 1.0, N, demand="exponential", seed=7))
    print(f"demand mean {mean:.4f}, CoV {cov:.4f}")
    assert mean == pytest.approx(1.0, rel=0.03)
    assert cov == pytest.approx(1.0, rel=0.05)
    assert all(j.demand > 0 for j in stream({"cg": 1.0}, 1.0, 1000, demand="exponential", seed=1))


def test_constant_demand_is_exactly_one() -> None:
    jobs = stream({"a": 1.0, "b": 3.0}, 2.0, 500, seed=3)
    assert {j.demand for j in jobs} == {1.0}


def test_class_fractions_of_a_20_80_mix() -> None:
    counts = Counter(j.cls for j in stream({"cg300": 0.2, "cg500": 0.8}, 1.0, N, seed=11))
    frac = counts["cg300"] / N
    print(f"cg300 fraction {frac:.4f} (want 0.2)")
    assert abs(frac - 0.2) <= 0.02
    assert set(counts) == {"cg300", "cg500"}


def test_weights_are_normalised() -> None:
    a = stream({"x": 2, "y": 8}, 1.0, 300, seed=5)
    b = stream({"x": 0.2, "y": 0.8}, 1.0, 300, seed=5)
    assert a == b
    assert StreamSpec({"x": 1, "y": 3}, 1.0, 1).probabilities == {"x": 0.25, "y": 0.75}


def test_common_random_numbers_across_rates() -> None:
    slow = stream({"cg300": 0.5, "cg500": 0.5}, 0.25, 2000, demand="exponential", seed=2, replication=4)
    fast = stream({"cg300": 0.5, "cg500": 0.5}, 0.5, 2000, demand="exponential", seed=2, replication=4)
    assert [f.arrival_s for f in fast] == [s.arrival_s / 2 for s in slow]  # exactly half
    assert [f.cls for f in fast] == [s.cls for s in slow]
    assert [f.demand for f in fast] == [s.demand for s in slow]


@settings(max_examples=50, deadline=None)
@given(seed=st.integers(0, 2**32), rep=st.integers(0, 50),
       r1=st.floats(1e-3, 1e3), r2=st.floats(1e-3, 1e3))
def test_same_replication_same_draws_at_any_rate(seed: int, rep: int, r1: float, r2: float) -> None:
    a = stream({"a": 1.0, "b": 1.0}, r1, 50, demand="exponential", seed=seed, replication=rep)
    b = stream({"a": 1.0, "b": 1.0}, r2, 50, demand="exponential", seed=seed, replication=rep)
    assert [j.cls for j in a] == [j.cls for j in b]
    assert [j.demand for j in a] == [j.demand for j in b]
    np.testing.assert_allclose([j.arrival_s * r1 for j in a], [j.arrival_s * r2 for j in b], rtol=1e-12)


def test_gaps_and_demands_do_not_depend_on_the_mix() -> None:
    a = stream({"a": 0.5, "b": 0.5}, 1.0, 200, demand="exponential", seed=9)
    b = stream({"a": 0.2, "b": 0.8}, 1.0, 200, demand="exponential", seed=9)
    assert [j.arrival_s for j in a] == [j.arrival_s for j in b]
    assert [j.demand for j in a] == [j.demand for j in b]


def test_replications_and_seeds_differ_and_each_reproduces() -> None:
    base = stream({"a": 1.0}, 1.0, 100, seed=1, replication=0)
    assert base == stream({"a": 1.0}, 1.0, 100, seed=1, replication=0)
    other_rep = stream({"a": 1.0}, 1.0, 100, seed=1, replication=1)
    other_seed = stream({"a": 1.0}, 1.0, 100, seed=2, replication=0)
    assert all(a.arrival_s != b.arrival_s for a, b in zip(base, other_rep))
    assert all(a.arrival_s != b.arrival_s for a, b in zip(base, other_seed))


def test_first_arrival_is_one_draw_after_zero_and_ids_are_positions() -> None:
    jobs = stream({"a": 1.0}, 1.0, 10, seed=4)
    assert jobs[0].arrival_s > 0
    assert [j.id for j in jobs] == list(range(10))
    assert all(b.arrival_s >= a.arrival_s for a, b in pairwise(jobs))
    assert all(j.requested_procs is None for j in jobs)


def test_a_longer_stream_extends_a_shorter_one() -> None:
    short = stream({"a": 1.0, "b": 1.0}, 1.0, 20, demand="exponential", seed=6)
    long = stream({"a": 1.0, "b": 1.0}, 1.0, 40, demand="exponential", seed=6)
    assert long[:20] == short


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"rate": -1}, "rate: must be a finite number > 0 jobs/s, got -1"),
    ({"rate": 0.0}, "rate: must be"),
    ({"rate": float("inf")}, "rate: must be"),
    ({"n": 0}, "n: must be an integer >= 1, got 0"),
    ({"n": 2.5}, "n: must be an integer"),
    ({"demand": "foo"}, "demand: unknown kind 'foo' (constant, exponential)"),
    ({"mix": {}}, "mix: must map at least one class"),
    ({"mix": {"a": 0.0}}, "mix: weight of 'a' must be a finite number > 0, got 0.0"),
    ({"mix": {"a": -1}}, "mix: weight of 'a'"),
    ({"seed": -3}, "seed: must be an integer >= 0, got -3"),
    ({"replication": 1.5}, "replication: must be an integer >= 0"),
])
def test_bad_input_names_the_field(kwargs: dict, message: str) -> None:
    args = {"mix": {"a": 1.0}, "rate": 1.0, "n": 10, "seed": 0, **kwargs}
    with pytest.raises(ValueError) as err:
        stream(args.pop("mix"), args.pop("rate"), args.pop("n"), **args)
    assert message in str(err.value)
    assert "\n" not in str(err.value)


def test_stats_need_two_jobs() -> None:
    with pytest.raises(ValueError, match="interarrival_stats: need at least 2"):
        interarrival_stats(stream({"a": 1.0}, 1.0, 1, seed=0))
