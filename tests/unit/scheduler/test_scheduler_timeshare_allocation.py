"""Zhou & Brent's allocation rule: S_d(p) >= γ/β (eq. 6), short jobs sustained, large jobs what is left."""
from __future__ import annotations

import pytest

from scheduler.model import SevcikModel
from scheduler.timeshare.allocation import (AllocationRule, Demand, allocate, dedicated_speedup,
                                            processors_for)
from scheduler.timeshare.slots import SlotError

# T(p) = 100/p + 5: S_d(3) = 105/38.3 = 2.74, S_d(4) = 105/30 = 3.5, S_d(5) = 105/25 = 4.2.
PAPER = SevcikModel(W=100.0, alpha=5.0)


def test_the_papers_example_gamma_2():
    # γ = 2, β = 0.5: S_d(p) >= 4, so 5 processors; β = 1: S_d(p) >= 2, so 3 (§2).
    assert processors_for(PAPER, 2.0, 0.5, 16) == 5
    assert processors_for(PAPER, 2.0, 1.0, 16) == 3
    assert processors_for(PAPER, 2.0, 0.5, 4) is None
    assert dedicated_speedup(PAPER, 5) == pytest.approx(4.2)


def test_short_jobs_sustained_large_jobs_share_what_is_left():
    ws = [f"ws{i}" for i in range(1, 7)]
    rule = AllocationRule(gamma=2.0, short_beta=0.5, short_t1_s=200.0, sequential_share=0.1)
    large = SevcikModel(W=1000.0, alpha=0.0, beta=1.0)   # pmax = ceil(sqrt(1000)) = 32: all six
    out = allocate([Demand("S", PAPER), Demand("L1", large), Demand("L2", large)], ws, rule)
    s, l1, l2 = out
    assert s.short and s.share.beta == 0.5 and s.share.workstations == ("ws1", "ws2", "ws3", "ws4", "ws5")
    assert s.effective_speedup == pytest.approx(0.5 * 4.2) and s.meets_target
    # On ws1-5: 1 - 0.1 (owners) - 0.5 (S) = 0.4 for two large jobs: 0.2 each.
    assert not l1.short and l1.share.workstations == tuple(ws) and l1.share.beta == pytest.approx(0.2)
    assert l2.share.beta == pytest.approx(0.2)
    for w in ws:
        assert sum(a.share.beta for a in out if w in a.share.workstations) <= 0.9 + 1e-9


def test_a_short_job_that_cannot_reach_its_target_is_marked():
    out = allocate([Demand("S", PAPER)], ["ws1", "ws2"], AllocationRule(gamma=2.0, short_beta=0.5, short_t1_s=1e3))
    assert out[0].share.workstations == ("ws1", "ws2") and not out[0].meets_target


def test_a_full_machine_is_an_error_naming_the_job():
    rule = AllocationRule(gamma=0.5, short_beta=1.0, short_t1_s=200.0)
    with pytest.raises(SlotError, match="job L: its workstations have no share left"):
        allocate([Demand("S", PAPER), Demand("L", SevcikModel(W=1e4, alpha=0.0, beta=0.0, pmax=1))], ["ws1"], rule)
    with pytest.raises(SlotError, match="short_beta: must be in"):
        AllocationRule(short_beta=0.0)
