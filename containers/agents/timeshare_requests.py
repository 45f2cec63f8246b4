"""What a request to the local job manager may say: a table, a local policy (containers/agents/timeshare_manager.py).

A table is refused, the one in force staying, with one line naming the field. Which β and which
widths are valid is workloads/wire/timeshare_table.py's, shared with scheduler/timeshare.
"""
import math

from workloads.wire.timeshare_table import WIDTH_TOLERANCE_S, beta_ok, is_time, widths_fill_round

OWNERS = "@owners"  # the name the owners' processes check in under: sequential work, never in a slot
POLICIES = ("implicit", "dedicated", "proper-share")


class RequestError(ValueError):
    """A request the manager refuses: the message is one line naming the field."""


def parse_table(request, registered, workstation):
    """A table request as (round_s, slots), or RequestError naming the bad field."""
    round_s = request.get("round_s")
    if not (is_time(round_s) and round_s > 0):
        raise RequestError(f"round_s: must be a positive time in s, got {round_s!r}")
    named_ws = request.get("workstation")
    if named_ws is not None and named_ws != workstation:
        raise RequestError(f"workstation: this is {workstation}, given the table of {named_ws!r}")
    raw = request.get("slots")
    if not isinstance(raw, list) or not raw:
        raise RequestError("slots: must be a non-empty list")
    slots, seen = [], set()
    for i, s in enumerate(raw):
        if not isinstance(s, dict):
            raise RequestError(f"slots[{i}]: must be an object with job, parallel_s, sequential_s")
        extra = sorted(set(s) - {"job", "parallel_s", "sequential_s"})
        if extra:
            raise RequestError(f"slots[{i}].{extra[0]}: unknown field (known: job, parallel_s, sequential_s)")
        job = s.get("job")
        widths = []
        for field in ("parallel_s", "sequential_s"):
            w = s.get(field, 0.0)
            if not (is_time(w) and w >= 0):
                raise RequestError(f"slots[{i}].{field}: must be a time >= 0 in s, got {w!r}")
            widths.append(float(w))
        if job is None:
            if widths[0] > 0:
                raise RequestError(f"slots[{i}].parallel_s: a dummy slot (job null) has no parallel part, "
                                   f"got {widths[0]:g}")
        else:
            if not isinstance(job, str) or not job:
                raise RequestError(f"slots[{i}].job: must be a job name or null, got {job!r}")
            beta = widths[0] / round_s
            if not beta_ok(beta, tolerance=WIDTH_TOLERANCE_S):
                raise RequestError(f"slots[{i}].parallel_s: β = parallel_s/round_s = {beta:g} is outside (0, 1]")
            if job == OWNERS:
                raise RequestError(f"slots[{i}].job: {OWNERS} is the owners' name, not a job's")
            if job in seen:
                raise RequestError(f"slots[{i}].job: {job} has more than one slot")
            if job not in registered:
                raise RequestError(f"slots[{i}].job: unknown job {job} "
                                   f"(checked in: {', '.join(sorted(registered)) or 'none'})")
            seen.add(job)
        slots.append((job, widths[0], widths[1]))
    widths_s = [p + q for _, p, q in slots]
    if not widths_fill_round(widths_s, round_s):
        raise RequestError(f"slots: widths add up to {math.fsum(widths_s):g} s, not round_s = {round_s:g} s")
    return float(round_s), tuple(slots)


def parse_policy(request):
    """A table request's (policy, cpu_cores), or RequestError naming the field."""
    policy = request.get("policy", "implicit")
    if policy not in POLICIES:
        raise RequestError(f"policy: unknown {policy!r} (known: {', '.join(POLICIES)})")
    cores = request.get("cpu_cores")
    if cores is None:
        return policy, None
    if not (is_time(cores) and cores > 0):
        raise RequestError(f"cpu_cores: must be the workstation's cap in cores (> 0), got {cores!r}")
    return policy, float(cores)
