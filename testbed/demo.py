"""`nowlab demo`: an emulated NOW comes up, is measured, runs MPI, and goes away.

Until the experiment pipeline lands this is the project's main job: it shows that each
workstation gets the speed and bandwidth it was asked for, and that real MPI programs
run across them over the shaped network.
"""
from __future__ import annotations

import json
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from testbed.calibrate import calibrate
from testbed.cli_cluster import calibration_table, progress_bar, status_table
from testbed.cluster import Cluster
from testbed.spec import load

DEMO_SPEC = Path(__file__).resolve().parent.parent / "compose" / "specs" / "demo4.toml"


def _last_json(text: str) -> dict | None:
    # Workloads print their result as one JSON object, after a short prefix.
    for line in reversed(text.strip().splitlines()):
        try:
            value = json.loads(line[line.find("{"):])
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    return None


def run_cg(c: Cluster, hosts: list[str], n: int, iterations: int) -> dict:
    argv = ["python3", "-m", "workloads.cg", "--job", f"demo-{len(hosts)}", "--hosts", ",".join(hosts),
            "--n", str(n), "--iterations", str(iterations)]
    t0 = time.monotonic()
    result = c.mpirun(hosts, argv, timeout=600).check(f"CG on {','.join(hosts)}")
    wall = time.monotonic() - t0
    return {"hosts": hosts, "wall_s": wall, **(_last_json(result.stdout) or {"output": result.stdout[-200:]})}


def demo(console: Console, spec_path: Path = DEMO_SPEC, n: int = 500, iterations: int = 100) -> None:
    spec = load(spec_path).with_name("demo")
    console.rule(f"[bold]nowlab demo[/]: {len(spec.names)} workstations from {spec_path.name}")
    t0 = time.monotonic()
    with progress_bar() as update:
        c = Cluster.up(spec, progress=update)
    up_s = time.monotonic() - t0
    try:
        console.print(f"up and ssh-ready in {up_s:.1f} s")
        console.print(status_table(c))
        console.rule("calibration: asked against delivered")
        with progress_bar() as update:
            cal = calibrate(c, cpu_seconds=4, link_seconds=2, progress=update)
        for table in calibration_table(cal):
            console.print(table)
        console.print(status_table(c, cal))
        console.rule(f"MPI: distributed conjugate gradient, N = {n}, {iterations} iterations")
        runs = [run_cg(c, hosts, n, iterations) for hosts in ([spec.names[0]], spec.names[:2], spec.names)]
        t = Table(title="CG across the emulated workstations (rank 0 = coordinator on the first)")
        for col in ("workstations", "wall (s)", "compute (s)", "iterations", "residual ||r||"):
            t.add_column(col, justify="right")
        for r in runs:
            t.add_row(",".join(r["hosts"]), f"{r['wall_s']:.2f}", f"{r.get('compute_s', float('nan')):.2f}",
                      str(r.get("iterations", "?")), f"{r.get('residual_norm', float('nan')):.3e}")
        console.print(t)
    finally:
        t1 = time.monotonic()
        removed = c.down()
        console.print(f"down in {time.monotonic() - t1:.1f} s: removed {removed['containers']} containers and "
                      f"{removed['networks']} network")
