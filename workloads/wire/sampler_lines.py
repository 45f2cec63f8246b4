"""The monitor's sampler lines: one JSON object per line, each line every workstation of one host.

A sampler runs beside the workstations it reads, outside their caps, and writes a line per
interval; the controller follows its output and keeps the newest reading of each workstation
(testbed/backends/sample_lines.py). Two samplers write them:
- containers/agents/host_sampler.py, one container per Swarm host;
- containers/agents/hostagent.py `sample`, one process per SSH host.
Both are copied to their host as plain files and run without workloads/ beside them (a
sampler container has no workloads mount; the SSH agent is one file), so they write the
line with `json.dumps` themselves; the controller reads every line through `parse` here,
and the tests run each writer's output through it.

    {"t": wall clock when written, "ws": {NAME: READING, ...}, "error": why no readings (optional)}

A READING has "t" (wall clock when its reads began), "procs_ns" (CPU ns of the owner
processes), "tc" (stamp, newline, `tc -s class show` output; "" if not read) and the cap,
either raw ("files": cgroup file name -> text, host_sampler: the controller parses them, so
the sampler has no cgroup-version logic) or parsed ("limits": {"quota_us", "period_us",
"cpuset"}, hostagent). A workstation with no process at the moment is left out of "ws".
Standard library only.
"""
from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")

# What a reading that is half there raises in its maker (the workstation was stopping
# while its files were read): that workstation is left out of the line, the others kept.
PARTIAL = (ValueError, KeyError, TypeError)


def parse(line: str, reading: Callable[[dict[str, Any]], T]) -> dict[str, T]:
    """One line -> `reading(raw)` for each workstation in it; {} for a line that is not one
    (a log line, a torn write, a line whose "ws" is not a mapping)."""
    try:
        per_ws = json.loads(line)["ws"]
    except PARTIAL:
        return {}
    out: dict[str, T] = {}
    for ws, raw in per_ws.items() if isinstance(per_ws, dict) else ():
        try:
            out[ws] = reading(raw)
        except PARTIAL:
            continue
    return out
