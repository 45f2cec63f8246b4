"""Integration: the workloads as MPI jobs on the live 4-workstation cluster.

Workstations (tests/conftest.py): ws1 0.4 core, ws2 and ws3 0.25, ws4 0.1; the
ws2-ws3 link is 10 Mbit/s and ws4's egress 20 Mbit/s, so redistribution bytes
cross shaped links.
"""
from __future__ import annotations

import csv
import json
import time
from dataclasses import asdict

import numpy as np
import pytest

from workloads.cgdata import matrix_rows, rhs, serial_cg
from workloads.host import profile as prof
from workloads.host.control_server import ControlServer
from workloads.host.malleable import MalleableJob, parse_result
from workloads.redistribution_plan import plan_moves, rows_over_network

pytestmark = pytest.mark.integration
RTOL = 1e-10


def job_id(tag: str) -> str:
    return f"{tag}-{time.time_ns() % 10**12}"


def rel(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.linalg.norm(a - b) / np.linalg.norm(b))


def run(cluster, hosts, module, *args, timeout=180):
    argv = ["python3", "-m", module, "--job", job_id("t"), "--hosts", ",".join(hosts), *args]
    result = cluster.mpirun(hosts, argv, timeout=timeout)
    assert result.exit_code == 0, result.stderr[-3000:]
    report = parse_result(result.stdout)
    assert report is not None, result.stdout[-3000:]
    return report


def test_cg_across_three_workstations_matches_numpy(live_cluster):
    n = 500
    report = run(live_cluster, ["ws1", "ws2", "ws3"], "workloads.cg", "--n", str(n), "--print-x")
    x = np.array(report["x"])
    a, b = matrix_rows(n, 0, n), rhs(n, 0, n)
    reference, _ = serial_cg(a, b, 250)
    assert report["ranks"] == 3 and report["iterations"] == 250
    assert report["placement"] == ["ws1", "ws2", "ws3"]  # rank i on hosts[i]: checkpoints land on the right disk
    assert rel(x, reference) < RTOL
    assert rel(x, np.linalg.solve(a, b)) < RTOL
    print(f"CG n={n} on 3 workstations: {report['compute_s']:.3f} s for 250 iterations")


def test_cg_to_a_tolerance_stops_early_with_the_right_answer(live_cluster):
    n = 300
    report = run(live_cluster, ["ws1", "ws3"], "workloads.cg", "--n", str(n), "--tol", "1e-11", "--print-x")
    a, b = matrix_rows(n, 0, n), rhs(n, 0, n)
    assert report["iterations"] < 250
    assert report["residual_norm"] <= 1e-11 * report["b_norm"]
    assert rel(np.array(report["x"]), np.linalg.solve(a, b)) < RTOL


def cg_bytes(n: int, old: list[str], new: list[str]) -> int:
    """A, b, x, r and p: n*8 bytes of A plus 4*8 bytes of vectors per row."""
    return rows_over_network(plan_moves(n, old, new)) * (n + 4) * 8


def test_cg_shrunk_then_grown_matches_the_unpreempted_run(live_cluster):
    n, hosts = 500, ["ws1", "ws2", "ws3", "ws4"]
    plain = run(live_cluster, hosts, "workloads.cg", "--n", str(n), "--print-x")
    with ControlServer(live_cluster.controller_address) as server:
        job = MalleableJob(live_cluster.job_launcher(), server, job_id("cg-resize"),
                           ["python3", "-m", "workloads.cg", "--n", str(n), "--print-x"],
                           hosts, live_cluster.controller_address).start()
        time.sleep(0.2)
        shrink = job.resize(["ws1", "ws2"])
        grow = job.resize(["ws1", "ws2", "ws3"])
        record = job.wait()
    assert shrink is not None and grow is not None, "the job finished before it could be preempted"
    for r in (shrink, grow):
        print(json.dumps(asdict(r)))
    assert (shrink.kind, grow.kind) == ("loser", "winner")
    assert 1 <= shrink.iteration <= grow.iteration < 250
    assert shrink.bytes_moved == cg_bytes(n, hosts, ["ws1", "ws2"])
    assert grow.bytes_moved == cg_bytes(n, ["ws1", "ws2"], ["ws1", "ws2", "ws3"])
    for r in (shrink, grow):
        assert r.ack_latency_s > 0 and r.redistribution_s > 0 and r.total_s > r.ack_latency_s
    assert record.hosts_history == [hosts, ["ws1", "ws2"], ["ws1", "ws2", "ws3"]]
    result = record.result
    assert result["iterations"] == 250 and result["ranks"] == 3
    assert result["placement"] == ["ws1", "ws2", "ws3"]
    assert result["iterations_this_run"] == 250 - grow.iteration
    assert rel(np.array(result["x"]), np.array(plain["x"])) < RTOL


def test_synthetic_runs_its_phases_and_reports_per_phase_times(live_cluster):
    report = run(live_cluster, ["ws1", "ws2", "ws3"], "workloads.synthetic",
                 "--phases", "15", "--mults", "660000", "--msg-bytes", "32")
    phases = report["phase_times"]
    assert [p["phase"] for p in phases] == list(range(1, 16))
    for p in phases:
        assert p["compute_s"] > 0 and p["broadcast_s"] >= 0 and p["collect_s"] >= 0 and p["barrier_s"] >= 0
    assert report["data_intact"] and report["redist_bytes"] == 512 * 1024
    mean = {k: np.mean([p[k] for p in phases]) * 1e3 for k in ("broadcast_s", "compute_s", "collect_s", "barrier_s")}
    print("synthetic, 3 workstations, mean ms per phase: " + ", ".join(f"{k}={v:.2f}" for k, v in mean.items()))


def test_synthetic_shrinks_and_moves_its_data(live_cluster):
    hosts, kept = ["ws1", "ws2", "ws3"], ["ws1", "ws3"]
    redist = 512 * 1024
    with ControlServer(live_cluster.controller_address) as server:
        job = MalleableJob(live_cluster.job_launcher(), server, job_id("syn-resize"),
                           ["python3", "-m", "workloads.synthetic", "--phases", "40", "--mults", "20000000",
                            "--redist-bytes", str(redist)],
                           hosts, live_cluster.controller_address).start()
        time.sleep(0.2)
        shrink = job.resize(kept)
        same = job.resize(list(reversed(kept)))  # same set: acknowledged, nothing moves, no relaunch
        record = job.wait()
    assert shrink is not None and same is not None, "the job finished before it could be preempted"
    assert same.kind == "same" and same.bytes_moved == 0 and same.to_hosts == tuple(kept)
    assert same.iteration >= shrink.iteration and same.ack_latency_s > 0
    print(json.dumps(asdict(shrink)))
    assert shrink.bytes_moved == rows_over_network(plan_moves(redist // 8, hosts, kept)) * 8
    assert record.result["phases_done"] == 40 and record.result["data_intact"]
    assert record.result["phases_this_run"] == 40 - shrink.iteration


def test_profile_fits_sevcik_to_dedicated_runs(live_cluster, tmp_path):
    spec = prof.ProfileSpec("cg", (1, 2, 4), reps=1, args=("--n", "300", "--iterations", "100"))
    profile = prof.run(live_cluster, live_cluster.workstations, spec)
    paths = prof.write(profile, tmp_path)
    assert len(profile.samples) == 3 and all(s.time_s > 0 for s in profile.samples)
    model = profile.fit()
    # the fit against the points it was made from (printed: this cluster is heterogeneous, so
    # T(p) need not fall with p): the curve.csv rows are the model's, and in relative error
    # (what sevcik.fit minimises) the fit is no worse than a few other non-negative models
    means = profile.mean_times()
    print(means, model)
    rows = {int(r["p"]): r for r in csv.DictReader(paths["curve.csv"].open())}
    for p, t in means.items():
        assert float(rows[p]["fit_time_s"]) == pytest.approx(model.predict(p))
        assert float(rows[p]["mean_time_s"]) == pytest.approx(t)
    samples = [(s.p, s.time_s) for s in profile.samples]
    rel = sum(((model.predict(p) - t) / t) ** 2 for p, t in samples)
    t1, tmin = means[1], min(means.values())
    for w, a, b in ((t1, 0.0, 0.0), (0.0, tmin, 0.0), (t1 / 2, t1 / 2, 0.0), (0.0, 0.0, tmin / 4)):
        assert rel <= sum(((w / p + a + b * p - t) / t) ** 2 for p, t in samples) + 1e-9, (w, a, b)
    print(paths["curve.csv"].read_text())
