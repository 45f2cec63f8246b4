"""A live experiment on the Swarm backend (issue 18): the same config, scheduler and runner as on
one machine, its cluster on three Docker-in-Docker nodes of this machine, and a node lost
mid-run if asked.

    python -m hardening.swarm_experiment                          # the fault campaign's tiny run
    python -m hardening.swarm_experiment --lose node3 --after 8   # node 3 stopped 8 s into the cell

It starts the nodes (tools/testbeds/dind.py), writes a spec naming them as hosts (four
workstations at 0.15 core: two on node 1, one each on nodes 2 and 3), runs
experiments/configs/faults/tiny.toml on it with `nowlab run --backend swarm` (on_failure
"continue", so a lost node's jobs fail and the run goes on), then `nowlab gc`, and prints the
run's time, every cell's status, the jobs done and failed with their reasons, and what was
left labelled on each node. The nodes share this machine's two cores: the numbers say the
system works across hosts, not how fast (function only).
"""
from __future__ import annotations

import argparse
import contextlib
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import docker
from rich.console import Console
from rich.table import Table

from experiments.config import load as load_config
from experiments.runner import cluster_spec
from experiments.store import ResultsStore
from testbed.backends import BackendError
from testbed.backends.docker import engine
from testbed.backends.swarm import membership
from testbed.backends.swarm import registry as swarm_registry
from tools.testbeds import dind

ROOT = Path(__file__).resolve().parents[1]

CONFIG = ROOT / "experiments" / "configs" / "faults" / "tiny.toml"
NAME = "swarm-exp"
PLACES = ("node1", "node1", "node2", "node3")  # ws1..ws4
NOWLAB = [sys.executable, "-m", "nowlab"]


def spec_text(nodes: list[dind.Node]) -> str:
    hosts = "".join(f'[[host]]\nname = "{n.name}"\naddress = "{n.address}"\ndocker = "{n.url}"\n\n' for n in nodes)
    wss = "".join(f'[[workstation]]\nname = "ws{i + 1}"\ncpu = 0.15\nhost = "{h}"\n\n' for i, h in enumerate(PLACES))
    return f'name = "{NAME}"\n\n[defaults]\negress = "100mbit"\n\n{hosts}{wss}'


def config_text(spec: Path) -> str:
    text = CONFIG.read_text().replace('cluster = "faults4.toml"', f'cluster = "{spec}"')
    return text.replace('on_failure = "stop"', 'on_failure = "continue"')


def lose(node: str, after_s: float, store: Path, log: list[str]) -> None:
    """Stop `node` `after_s` seconds into the first cell (polling the results file for it)."""
    deadline = time.monotonic() + 1800
    while time.monotonic() < deadline:
        if store.exists():
            with sqlite3.connect(f"file:{store}?mode=ro", uri=True) as conn:
                with contextlib.suppress(sqlite3.Error):
                    if conn.execute("SELECT 1 FROM cells WHERE status = 'running'").fetchone():
                        break
        time.sleep(0.5)
    time.sleep(after_s)
    docker.from_env().containers.get(f"nowlab-dind-{node}").stop(timeout=1)
    log.append(f"{node} stopped {after_s:g} s into the first cell")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--lose", choices=dind.NODES[1:], help="stop this node mid-run (its workstations are lost)")
    p.add_argument("--after", type=float, default=8.0, help="seconds into the first cell to stop it")
    p.add_argument("--keep", action="store_true", help="leave the nodes up afterwards")
    a = p.parse_args()
    console = Console()
    nodes = dind.up(log=lambda m: console.log(m))
    events: list[str] = []
    cluster = ""
    try:
        with tempfile.TemporaryDirectory() as tmp:
            spec, config, out = Path(tmp) / "swarm-exp.toml", Path(tmp) / "exp.toml", Path(tmp) / "r.sqlite"
            spec.write_text(spec_text(nodes))
            config.write_text(config_text(spec))
            cluster = cluster_spec(load_config(config)).name  # the runner's name for it
            t0 = time.monotonic()
            if a.lose:
                threading.Thread(target=lose, args=(a.lose, a.after, out, events), daemon=True).start()
            run = subprocess.run([*NOWLAB, "run", str(config), "--backend", "swarm", "--out", str(out)], cwd=ROOT)
            took = time.monotonic() - t0
            gc = subprocess.run([*NOWLAB, "gc"], cwd=ROOT, capture_output=True, text=True)
            if not out.exists():
                console.print(f"nowlab run --backend swarm: exit {run.returncode}, no results file")
                return 1
            with ResultsStore.open(out, readonly=True) as store:
                cells, jobs, backend = store.cells_frame(), store.jobs_frame(), store.backend
        left = {}
        for n in nodes:
            try:
                found = engine.labelled(membership.connect(n.url, what=n.name), cluster)
                left[n.name] = sum(len(v) for v in found.values())
            except BackendError:  # a stopped node: reported, not fatal
                left[n.name] = "unreachable"
    finally:
        if not a.keep:
            dind.down()
            # the nodes are gone for good: a lost node's leftovers, kept recorded for a later gc,
            # can never be reached now (a real host would come back, or be cleaned by hand)
            if cluster:
                swarm_registry.forget(cluster)
    console.print(f"nowlab run --backend swarm: exit {run.returncode}, {took / 60:.1f} min; the store says "
                  f"backend {backend!r}; {'; '.join(events) or 'no node lost'}")
    t = Table(title="cells")
    for col in ("policy", "rate", "replication", "status", "error"):
        t.add_column(col)
    for _, c in cells.iterrows():
        t.add_row(str(c.policy), f"{c.rate:g}", str(c.replication), str(c.status), str(c.error)[:80])
    console.print(t)
    done = int((jobs.status == "done").sum())
    failed = jobs[jobs.status == "failed"]
    console.print(f"jobs: {done} done, {len(failed)} failed")
    for _, j in failed.iterrows():
        console.print(f"  job {j.job_id} (cell {j.cell_id}): {j.error}")
    console.print(f"nowlab gc: {gc.stdout.strip() or gc.stderr.strip()}")
    console.print(f"left labelled {cluster!r} after gc: " + ", ".join(f"{k} {v}" for k, v in left.items())
                  + (" (a stopped node's leftovers stay recorded for a later gc)" if a.lose else ""))
    return 0 if run.returncode == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
