"""Do owners slow a guest more on a fast, governed workstation than eq. 7 says? (issue 15)

    .venv/bin/python -m experiments.studies.menasce_rao.analyses.owner_class --rounds 6
    .venv/bin/python -m experiments.studies.menasce_rao.analyses.owner_class --arms gov-0.265,raw-0.265,gov-0.1 --rounds 4

Menascé & Rao's Table 3 runs 13-26% slower than eq. 7 on the two faster classes (0.206 and
0.265 reference cores, governed), and within 7% on the slowest (0.1): the README of
experiments/results/menasce-rao names two candidates, the governor re-pacing the quota while
the owners burst, and something that grows with the cap. Each arm here is its own two-workstation
cluster (`gov-S`: speed S, governed; `raw-S`: cpu = S cores, no governor), all running at once.
In each round one workstation of an arm runs a speed meter (an endless guest) and the other a
guest of fixed work beside the table's owners (N = 2, D = 0.2 s, Z = 1 s: the paper's times x0.2);
the roles swap every round, so the geometric mean over rounds cancels any fixed difference
between the two workstations' cores. Reported per arm: the loaded time over the dedicated one
beside it, against eq. 7's 1/(1 - U_ow), and against each span's own measured U_ow (the priority
mechanism alone, without the owners' random cycles).
"""
from __future__ import annotations

import argparse
import csv
import math
import statistics
import sys
import threading
from pathlib import Path

from experiments.analysis_io import console, table, use_bench_home
from testbed import from_dict
from testbed.lifecycle import cluster
from testbed.load import owners
from testbed.load.model import owner_utilization
from testbed.load.validation import ROLES, OwnerSampler, dedicated_seconds, guest_iterations, metered_round
from testbed.spec import OwnerLoad

N, D, Z = 2, 0.2, 1.0  # Table 3's owners, the paper's 1 s and 5 s x0.2
DEDICATED, LOADED = ROLES[0], ROLES[1]


def arm_spec(arm: str) -> dict:
    kind, _, value = arm.partition("-")
    if kind not in ("gov", "raw") or not value:
        raise SystemExit(f"--arms: {arm!r} is not gov-SPEED or raw-CPU")
    s = float(value)
    ws = {"speed": s} if kind == "gov" else {"cpu": s}
    return {"name": f"op-{arm.replace('.', '')}", "defaults": {"governor": kind == "gov", "egress": "100mbit"},
            "workstation": [{"name": "a", **ws}, {"name": "b", **ws}]}


def run_arm(arm: str, rounds: int, guest_s: float, seed: int, out: list[dict], lock: threading.Lock) -> None:
    with cluster(from_dict(arm_spec(arm))) as c:
        hosts = c.workstations
        iterations = guest_iterations(c, guest_s)
        for r in range(rounds):
            loaded, meter = (hosts[r % 2], hosts[1 - r % 2])
            owners.start(c, {loaded: OwnerLoad(n=N, z=Z, d=D)}, seed + r)
            try:
                with OwnerSampler(c, hosts) as sampler:
                    spans, meters = metered_round(c, {loaded: LOADED, meter: DEDICATED}, iterations)
            finally:
                owners.stop(c, [loaded])
            t0, t1 = spans[loaded]
            quota = float(c.cpu_limits(loaded)["cores"])  # governed: the quota at the span's end
            row = {"arm": arm, "round": r, "loaded": loaded, "seconds": t1 - t0,
                   "dedicated": dedicated_seconds(meters[meter], iterations, t0, t1),
                   "owner_u": sampler.cpu_seconds(loaded, t0, t1) / (t1 - t0) / quota,
                   "quota_cores": quota}
            with lock:
                out.append(row)
            console.log(f"{arm} round {r}: {row['seconds']:.1f} s loaded, {row['dedicated']:.1f} s dedicated, "
                        f"U_ow {row['owner_u']:.3f}")


def main() -> int:
    use_bench_home()
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--arms", default="gov-0.265,raw-0.265", help="comma-separated gov-SPEED / raw-CPU")
    parser.add_argument("--rounds", type=int, default=6, help="rounds per arm (even: each workstation loaded alike)")
    parser.add_argument("--guest-seconds", type=float, default=30.0, help="the guest's dedicated time")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--csv", type=Path)
    args = parser.parse_args()
    if args.rounds < 2 or args.guest_seconds <= 0:
        parser.error("--rounds: at least 2; --guest-seconds: above 0")
    rows: list[dict] = []
    lock = threading.Lock()
    threads = [threading.Thread(target=run_arm, args=(a, args.rounds, args.guest_seconds, args.seed, rows, lock))
               for a in args.arms.split(",")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if args.csv:
        with args.csv.open("w", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)
    u_model = owner_utilization(N, Z, D)
    summary = []
    for arm in args.arms.split(","):
        mine = [r for r in rows if r["arm"] == arm]
        if not mine:
            summary.append([arm, "no rounds", "", "", "", ""])
            continue
        ratio = math.exp(statistics.fmean(math.log(r["seconds"] / r["dedicated"]) for r in mine))
        own = math.exp(statistics.fmean(math.log(r["seconds"] * (1 - r["owner_u"]) / r["dedicated"]) for r in mine))
        u = statistics.fmean(r["owner_u"] for r in mine)
        spread = statistics.pstdev(r["seconds"] / r["dedicated"] for r in mine)
        summary.append([arm, f"{len(mine)}", f"{ratio:.3f} (sd {spread:.3f})", f"{1 / (1 - u_model):.3f}",
                        f"{(ratio * (1 - u_model) - 1) * 100:+.1f}%", f"{u:.3f} vs {u_model:.3f}",
                        f"{(own - 1) * 100:+.1f}%"])
    table(f"guest slowdown beside owners N={N}, D={D} s, Z={Z} s",
          ["arm", "rounds", "loaded / dedicated (geo. mean)", "eq. 7: 1/(1-U_ow)", "against eq. 7",
           "U_ow measured vs model", "against its own U_ow"], summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
