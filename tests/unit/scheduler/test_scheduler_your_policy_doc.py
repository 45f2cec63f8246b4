"""docs/your-policy.md's policy: the guide's code block is docs/examples/sjf_half.py, and that code,
loaded from a file as a user's policy is, runs in the simulator to a hand-worked schedule."""
from __future__ import annotations

import re
from pathlib import Path

from scheduler.engine import simulate
from scheduler.model import Job, SevcikModel
from scheduler.registry import get_policy

ROOT = Path(__file__).resolve().parents[3]


def _code_block() -> str:
    guide = (ROOT / "docs" / "your-policy.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", guide, flags=re.S)
    assert len(blocks) == 1, "the guide has one Python block: the policy"
    return blocks[0]


def test_the_guides_code_is_the_example_file():
    assert _code_block() == (ROOT / "docs" / "examples" / "sjf_half.py").read_text()


def test_the_guides_policy_runs_shortest_first_on_at_most_half(tmp_path):
    path = tmp_path / "guide_policy.py"
    path.write_text(_code_block())
    policy = get_policy(f"{path}:ShortestFirstHalf")
    assert policy.name == "SJF-HALF"

    def job(i, arrival, W):
        return Job(i, arrival, SevcikModel(W=W, alpha=0.0, beta=0.0, pmax=4), 1)

    # P = 4: jobs 1 and 2 take half each (the cap, though their pmax is 4) from 0 to 8/2 = 4; job 3
    # (long, t=1) and job 4 (short, t=2) wait; at 4 the short one starts first (2 / 2 = 1 s), the
    # long one on the other half (20 / 2 = 10 s). FIFO would have started job 3 first.
    result = simulate([job(1, 0.0, 8.0), job(2, 0.0, 8.0), job(3, 1.0, 20.0), job(4, 2.0, 2.0)], policy, 4)
    by_id = {r.id: r for r in result.jobs}
    assert {i: (r.start, r.finish) for i, r in by_id.items()} == {
        1: (0.0, 4.0), 2: (0.0, 4.0), 3: (4.0, 14.0), 4: (4.0, 5.0)}
    assert all(len(a) == 2 for r in result.jobs for a in r.allocations)
    starts = [e.job for e in result.timeline if e.event.value == "start"]
    assert starts.index(4) < starts.index(3)  # shortest first
