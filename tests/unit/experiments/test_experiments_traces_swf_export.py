"""A stored timeline's partitions for the SWF export: start, resize and finish rows to
(start, end, processors) stretches, processors counted by the Batsim interval-set reader."""
from __future__ import annotations

import io

import pandas as pd

from experiments.traces.swf_export import partitions

TIMELINE = """\
time,job,event,processors
0.0,0,arrive,
0.5,0,start,0-3 5
2.0,1,arrive,
4.0,0,resize,0-1
6.0,0,finish,0-1
6.5,1,start,2
9.0,1,finish,2
"""


def test_partitions_follow_start_resize_finish() -> None:
    got = partitions(pd.read_csv(io.StringIO(TIMELINE)))
    assert got == {0: [(0.5, 4.0, 5), (4.0, 6.0, 2)], 1: [(6.5, 9.0, 1)]}


def test_single_processor_partitions_read_as_numbers_still_count() -> None:
    """pandas reads a column of lone processors ("2", "7") as numbers: each is one processor."""
    text = "time,job,event,processors\n0.0,3,start,2\n1.0,3,resize,7\n3.0,3,finish,7\n"
    assert partitions(pd.read_csv(io.StringIO(text))) == {3: [(0.0, 1.0, 1), (1.0, 3.0, 1)]}
