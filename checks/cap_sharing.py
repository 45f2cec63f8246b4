"""Benchmark: do k processes sharing one capped workstation get k times less each, or less than that?

    .venv/bin/python -m checks.cap_sharing --cpu 0.1 --reps 4

Menascé & Rao's model (issue 15) shares a workstation among its guest tasks by processor
sharing (MVA): k tasks at once each take k times their time alone. Table 2's one-workstation
rows came out slower live than that model (docs: experiments/results/menasce-rao/README.md),
and one candidate was the CFS quota itself delivering less to several processes than to one.
This measures it with nothing else in the way: one workstation at a raw cap, a python3 that
has already imported numpy forks k children, each doing the same multiplies
(workloads.compute.multiply); the wall time to the last one, over k, is each task's share.
k = 1, 2, 3 are interleaved, so the host's drift hits each alike. Processor sharing says the
three medians are equal.
"""
from __future__ import annotations

import argparse
import json
import statistics

from benchmarks._common import table
from testbed import cluster, from_dict

PROGRAM = r"""
import json, os, sys, time
from workloads.compute import multiply
n, ks, reps = int(sys.argv[1]), [int(k) for k in sys.argv[2].split(",")], int(sys.argv[3])
def run(k):
    t0 = time.time()
    pids = []
    for _ in range(k):
        pid = os.fork()
        if pid == 0:
            multiply(n)
            os._exit(0)
        pids.append(pid)
    for p in pids:
        os.waitpid(p, 0)
    return time.time() - t0
multiply(1000)
for rep in range(reps):
    for k in ks:
        print(json.dumps({"rep": rep, "k": k, "wall_s": run(k)}), flush=True)
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cpu", type=float, default=0.1, help="the workstation's cap, cores")
    parser.add_argument("--mults", type=float, default=3e7, help="multiplies per task (3e7: 0.1 reference-s)")
    parser.add_argument("--k", default="1,2,3", help="processes at once")
    parser.add_argument("--reps", type=int, default=4)
    parser.add_argument("--name", default="bench-share")
    args = parser.parse_args()
    spec = from_dict({"name": args.name, "workstation": [{"name": "ws", "count": 1, "cpu": args.cpu}]})
    with cluster(spec) as c:
        res = c.exec("ws1", ["python3", "-c", PROGRAM, str(int(args.mults)), args.k, str(args.reps)],
                     timeout=3600).check("the sharing program")
    rows = [json.loads(line) for line in res.stdout.splitlines() if line.startswith("{")]
    for r in rows:
        print(json.dumps({"bench": "cap_sharing", **r}))
    ks = [int(k) for k in args.k.split(",")]
    share = {k: sorted(r["wall_s"] / k for r in rows if r["k"] == k) for k in ks}
    base = statistics.median(share[ks[0]])
    table(f"{args.mults:.3g} multiplies per task on one workstation capped at {args.cpu:g} core",
          ["processes at once", "runs", "each task's share, median s", "range s", f"against k = {ks[0]}"],
          [[str(k), str(len(v)), f"{statistics.median(v):.3f}", f"{v[0]:.3f}-{v[-1]:.3f}",
            f"{statistics.median(v) / base - 1:+.1%}"] for k, v in share.items()])


if __name__ == "__main__":
    main()
