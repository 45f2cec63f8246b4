"""Benchmark: one synthetic arrival stream run live under several policies.

    .venv/bin/python -m benchmarks.bench_live_executor --policies RA EQUI FOLDING --repeats 1
    .venv/bin/python -m benchmarks.bench_live_executor --local 4 --phases 8 --mults 3000000

Brings up its own 4-workstation cluster (t-bench-live4: 0.2, 0.15, 0.15 and
0.1 core, one 20 Mbit/s link) unless --cluster NAME or --local P is given,
runs the stream once per policy and repeat (interleaved), and prints per
policy: mean response, preemptions, resizes that changed the set, policy
decision time (median, max over all calls), reconfiguration time (partition
sent -> running again; median, max), bytes moved, and the time a first launch
takes to say hello (mpiexec start-up), and the compute time of each job's last run. Every run is audited
(scheduler/live/audit.py); a failed job or audit problem is printed, not hidden.
With --out DIR each run's CSVs are written there.
"""
from __future__ import annotations

import argparse
import contextlib
import statistics
from pathlib import Path

from benchmarks._common import console, table

import testbed
from scheduler.live import Arrival, LiveExecutor
from experiments.traces.live_inputs import job_class
from experiments.traces.live_results import write_live_result
from scheduler.live.audit import audit

LIVE4 = {
    "name": "t-bench-live4",
    "defaults": {"egress": "100mbit"},
    "classes": {"fast": 0.2, "medium": 0.15, "slow": 0.1},
    "workstation": [
        {"name": "ws1", "class": "fast"},
        {"name": "ws2", "class": "medium", "links": {"ws3": "20mbit"}},
        {"name": "ws3", "class": "medium"},
        {"name": "ws4", "class": "slow"},
    ],
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--policies", nargs="+", default=["RA", "EQUI", "FOLDING"])
    ap.add_argument("--arrivals", nargs="+", type=float, default=[0, 1, 2, 4, 5, 7])
    ap.add_argument("--phases", type=int, default=6)
    ap.add_argument("--mults", type=int, default=13_000_000)
    ap.add_argument("--redist-bytes", type=int, default=256 * 1024)
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--cluster", help="a running cluster instead of bringing one up")
    ap.add_argument("--local", type=int, help="P logical workstations on the host's Open MPI (the local backend)")
    ap.add_argument("--out", type=Path, help="write each run's CSVs under this folder")
    args = ap.parse_args()
    console.width = max(console.width, 220)  # one row per policy, 14 columns

    cls = job_class("synthetic", {
        "argv": ["python3", "-m", "workloads.synthetic", "--phases", str(args.phases), "--mults", str(args.mults),
                 "--redist-bytes", str(args.redist_bytes)],
        "W": 4.0, "alpha": 1.0, "beta": 0.2, "pmax": 4})
    with contextlib.ExitStack() as stack:
        if args.local:  # the local backend: its pool of this host's ranks stands for the cluster's
            from testbed.backends.local import LocalBackend, local_spec
            running = stack.enter_context(testbed.cluster(local_spec(args.local), backend=LocalBackend()))
        elif args.cluster:
            running = testbed.Cluster.attach(args.cluster)
        else:
            console.print("bringing up t-bench-live4 ...")
            running = stack.enter_context(testbed.cluster(testbed.from_dict(LIVE4)))
        launcher = running.job_launcher()
        hosts, controller = running.workstations, running.controller_address
        per: dict[str, list] = {p: [] for p in args.policies}
        for rep in range(args.repeats):
            for policy in args.policies:
                arrivals = [Arrival(i, cls, t) for i, t in enumerate(args.arrivals)]
                result = LiveExecutor(arrivals, policy, launcher, hosts, controller, run_timeout_s=900).run()
                problems = audit(result, arrivals)
                for p in problems:
                    console.print(f"[red]{policy} rep {rep}: {p}[/]")
                per[policy].append(result)
                if args.out:
                    out = args.out / f"{policy}-{rep}"
                    out.mkdir(parents=True, exist_ok=True)
                    write_live_result(result, out / "timeline.csv", out / "jobs.csv", out)
                s = result.summary()
                console.print(f"{policy} rep {rep}: mean response {s['mean_response']:.2f} s, "
                              f"failed {s['failed']}, audit {'ok' if not problems else len(problems)}")
    rows = []
    for policy, results in per.items():
        decide = [d.seconds * 1e6 for r in results for d in r.decisions]
        reconf = [x.reconfig_s for r in results for x in r.resizes if x.kind in ("loser", "winner")
                  and x.reconfig_s is not None]
        moved = [x.bytes_moved for r in results for x in r.resizes if x.kind in ("loser", "winner")]
        hello = [x.sent_at - x.requested_at for r in results for x in r.resizes if x.sent_at is not None]
        compute = [st.report.get("compute_s") for r in results for st in r.states if st.report.get("compute_s")]
        s = [r.summary() for r in results]
        rows.append([policy, str(sum(x["jobs"] for x in s)), str(sum(x["failed"] for x in s)),
                     f"{statistics.median(x['mean_response'] for x in s):.2f}",
                     f"{statistics.median(x['makespan'] for x in s):.2f}",
                     f"{sum(x['preemptions'] for x in s)}", f"{sum(x['resizes_changed'] for x in s)}",
                     f"{statistics.median(decide):.1f}" if decide else "-", f"{max(decide):.1f}" if decide else "-",
                     f"{statistics.median(reconf):.2f}" if reconf else "-", f"{max(reconf):.2f}" if reconf else "-",
                     f"{statistics.median(moved) / 1024:.0f}" if moved else "-",
                     f"{statistics.median(hello):.2f}" if hello else "-",
                     f"{statistics.median(compute):.2f}" if compute else "-"])
    cost_rows = []
    for policy, results in per.items():
        changed = [x for r in results for x in r.resizes if x.kind in ("loser", "winner") and x.running_at is not None]
        asked = [x for r in results for x in r.resizes if x.ack_at is not None]

        def med(values: list) -> str:
            values = [v for v in values if v is not None]
            return f"{statistics.median(values):.3f}" if values else "-"

        cost_rows.append([policy, str(len(asked)), str(len(changed)), med([x.ack_latency_s for x in asked]),
                          med([x.held_s for x in asked]), med([x.exited_at - x.partition_at for x in changed]),
                          med([x.relaunched_at - x.exited_at for x in changed]),
                          med([x.running_at - x.relaunched_at for x in changed]),
                          med([x.redistribution_s for x in changed]), med([x.reconfig_s for x in changed])])
    table("preemption costs, medians in s (ack: preempt sent -> ack; held: ack -> partition; release: partition "
          "-> old mpiexec exited; wait: -> relaunched; relaunch: -> restored)",
          ["policy", "acked", "set changed", "ack", "held", "release", "wait", "relaunch", "redistribution",
           "partition -> running"], cost_rows)
    table(f"live executor, {len(args.arrivals)} jobs x {args.repeats} repeat(s) on {len(hosts)} workstations "
          f"(synthetic {args.phases} phases x {args.mults:g} mults)",
          ["policy", "jobs", "failed", "mean resp s (med)", "makespan s (med)", "preempts", "resizes",
           "decide med µs", "decide max µs", "reconf med s", "reconf max s", "moved KiB med",
           "request->sent s med", "last run compute s med"], rows)


if __name__ == "__main__":
    main()
