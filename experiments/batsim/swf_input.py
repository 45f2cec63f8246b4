"""An SWF trace as a Batsim workload: each kept job a rigid job with a delay profile of its run time.

The jobs are those `experiments.traces.swf_rigid.read_rigid` keeps (its docstring gives which
and why); each becomes `w0!<job number>` with the trace's submit time, size, and requested time
as walltime (none when the trace has -1). Jobs that ran for the same time share one profile,
`delay<seconds>`, so SIMULATION_BEGINS stays small. nb_res is the header's MaxProcs (else
MaxNodes), else the widest job.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from experiments.batsim.workload import Workload, parse_workload


def read_swf_workload(path: str | Path, *, name: str = "w0") -> Workload:
    from experiments.traces.swf_rigid import read_rigid

    trace = read_rigid(path)
    profiles: dict[str, dict[str, Any]] = {}
    jobs = []
    for job in trace.jobs:
        profile = f"delay{job.run_s:g}"
        profiles.setdefault(profile, {"type": "delay", "delay": job.run_s})
        entry: dict[str, Any] = {"id": job.job, "subtime": job.submit_s, "res": job.size, "profile": profile}
        if job.requested_time_s is not None and job.requested_time_s > 0:
            entry["walltime"] = job.requested_time_s
        jobs.append(entry)
    nb_res = trace.max_procs or max((j.size for j in trace.jobs), default=1)
    return parse_workload({"nb_res": nb_res, "jobs": jobs, "profiles": profiles}, source=str(Path(path).resolve()),
                          name=name)


__all__ = ["read_swf_workload"]
