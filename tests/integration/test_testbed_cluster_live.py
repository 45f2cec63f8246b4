"""Integration: real containers, real cgroups, real tc, real MPI over ssh."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from testbed import Cluster, cluster, from_dict, lifecycle
from testbed.backends.docker import engine as docker_backend
from testbed.calibrate import measure_link

pytestmark = pytest.mark.integration
NOWLAB = [sys.executable, "-m", "nowlab"]


def small(name: str, n: int = 2, cpu: float = 0.2, **extra) -> dict:
    return {"name": name, "workstation": [{"name": "ws", "count": n, "cpu": cpu, **extra}]}


def test_caps_and_pinning_as_the_host_cgroups_hold_them(live_cluster, hetero4_spec):
    cores = []
    for ws in live_cluster.workstations:
        lim = live_cluster.cpu_limits(ws)
        assert lim["quota_us"] / lim["period_us"] == pytest.approx(hetero4_spec.cpu(ws), abs=1e-3)
        assert lim["period_us"] == hetero4_spec.cfs_period_us(ws)
        assert lim["cpuset"].isdigit()  # exactly one core
        cores.append((int(lim["cpuset"]), hetero4_spec.cpu(ws)))
    per_core: dict[int, float] = {}
    for core, share in cores:
        per_core[core] = per_core.get(core, 0) + share
    assert max(per_core.values()) <= 0.9 + 1e-9
    assert len(per_core) == min(2, os.cpu_count() or 1)


def test_qdiscs_inside_each_container(live_cluster):
    for ws in live_cluster.workstations:
        qdisc = live_cluster.tc_show(ws, "qdisc")
        assert "qdisc htb 1: root" in qdisc
    assert "class htb 1:1 root rate 20Mbit ceil 20Mbit" in live_cluster.tc_show("ws4")
    ws2 = live_cluster.tc_show("ws2")
    assert "ceil 10Mbit" in ws2  # its link to ws3
    assert "ceil 10Mbit" in live_cluster.tc_show("ws3")  # symmetric
    filters = live_cluster.tc_show("ws2", "filter")
    assert filters.count("flowid") == 3


def test_workstations_are_named_and_not_privileged(live_cluster):
    for ws in live_cluster.workstations:
        assert live_cluster.exec(ws, ["hostname"]).stdout.strip() == ws
        info = docker_backend.client().api.inspect_container(live_cluster.container_id(ws))
        assert info["HostConfig"]["Privileged"] is False
        assert info["HostConfig"]["CapAdd"] == ["NET_ADMIN"]
        assert info["Config"]["Labels"]["nowlab.cluster"] == live_cluster.name


def test_ssh_key_is_per_cluster_not_in_the_image(live_cluster):
    from testbed.image import image_ref
    out = subprocess.run(["docker", "run", "--rm", "--entrypoint", "ls", image_ref().image, "-A", "/root/.ssh",
                          "/etc/ssh"], capture_output=True, text=True, check=True).stdout
    assert "id_ed25519" not in out and "ssh_host_" not in out
    keys = {live_cluster.exec(ws, ["cat", "/root/.ssh/authorized_keys"]).stdout for ws in live_cluster.workstations}
    assert len(keys) == 1 and f"nowlab-{live_cluster.name}" in keys.pop()


def test_mpi4py_across_three_workstations_over_ssh(live_cluster):
    program = ("from mpi4py import MPI; import socket; c = MPI.COMM_WORLD; "
               "names = c.gather(socket.gethostname()); total = c.allreduce(c.rank + 1); "
               "print(names, total) if c.rank == 0 else None")
    result = live_cluster.mpirun(["ws2", "ws3", "ws4"], ["python3", "-c", program], timeout=120)
    assert result.ok, result.stderr
    assert result.stdout.strip() == "['ws2', 'ws3', 'ws4'] 6"


def test_mpi_coordinator_is_the_lowest_numbered_workstation(live_cluster):
    with pytest.raises(ValueError, match="lowest-numbered first"):
        live_cluster.mpi_argv(["ws3", "ws1"], ["true"])
    with pytest.raises(ValueError, match="once"):
        live_cluster.mpi_argv(["ws1", "ws1"], ["true"])
    with pytest.raises(KeyError, match="ws9"):
        live_cluster.mpi_argv(["ws1", "ws9"], ["true"])
    argv = live_cluster.mpi_argv(["ws1", "ws4"], ["python3", "x.py"], env={"A": "1"})
    assert argv[argv.index("-H") + 1] == "ws1:1,ws4:1" and argv[-2:] == ["python3", "x.py"]
    assert ["-x", "A=1"] == argv[argv.index("A=1") - 1:argv.index("A=1") + 1]


def test_live_changes_of_cap_and_rates_without_restart(docker_engine):
    with cluster(from_dict(small("t-live", 3, egress="50mbit"))) as c:
        client = docker_backend.client()
        started = {ws: client.api.inspect_container(c.container_id(ws))["State"]["StartedAt"]
                   for ws in c.workstations}
        c.set_cpu("ws1", 0.1)
        assert c.cpu_limits("ws1")["quota_us"] == 1_000 and c.cpu_limits("ws1")["period_us"] == 10_000
        c.set_bandwidth("ws2", "30mbit")
        assert "class htb 1:1 root rate 30Mbit ceil 30Mbit" in c.tc_show("ws2")
        c.set_bandwidth("ws1", "5mbit", to="ws3")
        assert "ceil 5Mbit" in c.tc_show("ws1") and "ceil 5Mbit" in c.tc_show("ws3")
        sample = measure_link(c, "ws3", "ws1", seconds=2)
        assert sample.requested == 5_000_000
        assert sample.measured == pytest.approx(5_000_000, rel=0.1)
        again = Cluster.attach("t-live")  # another process sees the change
        assert again.spec.cpu("ws1") == 0.1 and again.spec.link_rate("ws1", "ws3") == 5_000_000
        for ws in c.workstations:
            assert client.api.inspect_container(c.container_id(ws))["State"]["StartedAt"] == started[ws]


def test_down_leaves_nothing_labelled(docker_engine):
    client = docker_backend.client()
    c = lifecycle.up(from_dict(small("t-down")))
    assert len(docker_backend.labelled(client, "t-down")["containers"]) == 2
    c.down()
    assert docker_backend.labelled(client, "t-down") == {"containers": [], "networks": [], "volumes": []}


def test_failed_up_removes_what_it_started(docker_engine):
    client = docker_backend.client()
    with pytest.raises(TimeoutError):
        lifecycle.up(from_dict(small("t-fail")), ready_timeout=0)
    assert docker_backend.labelled(client, "t-fail") == {"containers": [], "networks": [], "volumes": []}


def test_two_clusters_side_by_side(live_cluster):
    with cluster(from_dict(small("t-second", 2, cpu=0.1))) as other:
        assert other.state.subnet != live_cluster.state.subnet
        assert other.exec("ws1", ["hostname"]).stdout.strip() == "ws1"
    assert live_cluster.exec("ws1", ["hostname"]).ok  # untouched by the other's teardown


def test_killed_controller_is_cleaned_by_gc_which_spares_live_clusters(live_cluster, tmp_path):
    spec = tmp_path / "t-killed.toml"
    spec.write_text('[[workstation]]\nname = "ws"\ncount = 4\ncpu = 0.1\n')
    env = dict(os.environ)
    proc = subprocess.Popen([*NOWLAB, "up", str(spec)], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    client = docker_backend.client()
    deadline = time.monotonic() + 60
    while not docker_backend.labelled(client, "t-killed")["containers"]:
        assert time.monotonic() < deadline and proc.poll() is None
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)  # the controller dies halfway: no finally runs
    proc.wait()
    assert docker_backend.labelled(client, "t-killed")["networks"]
    gc = subprocess.run([*NOWLAB, "gc"], env=env, capture_output=True, text=True, timeout=60)
    assert gc.returncode == 0, gc.stderr
    assert docker_backend.labelled(client, "t-killed") == {"containers": [], "networks": [], "volumes": []}
    assert "t-killed" in gc.stdout
    assert live_cluster.exec("ws1", ["true"]).ok  # a ready cluster is not a leftover


def test_bad_spec_on_the_command_line_is_one_line_and_starts_nothing(docker_engine, tmp_path):
    spec = tmp_path / "t-bad.toml"
    spec.write_text('[[workstation]]\nname = "ws1"\negress = "10mbps"\n')
    out = subprocess.run([*NOWLAB, "up", str(spec)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 2
    assert len(out.stderr.strip().splitlines()) == 1
    assert "workstation[0].egress" in out.stderr and "80mbit" in out.stderr
    assert docker_backend.labelled(docker_backend.client(), "t-bad")["containers"] == []
    spec.write_text('[[workstation]]\nname = "ws"\ncount = 8\ncpu = 0.5\n')
    out = subprocess.run([*NOWLAB, "up", str(spec)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and "4.00 cores" in out.stderr and "available" in out.stderr


def test_compose_file_runs_under_docker_compose(docker_engine, tmp_path):
    from testbed.compose import write_compose
    spec = from_dict({"name": "t-compose", "workstation": [
        {"name": "ws1", "cpu": 0.3, "egress": "40mbit", "links": {"ws2": "7mbit"}}, {"name": "ws2", "cpu": 0.15}]})
    out = tmp_path / "compose"
    path = write_compose(spec, out)[0]
    (tmp_path / "workloads").mkdir()
    compose = ["docker-compose", "-f", str(path), "-p", "t-compose"]
    up = subprocess.run([*compose, "up", "-d"], capture_output=True, text=True, timeout=120)
    try:
        assert up.returncode == 0, up.stderr
        client = docker_backend.client()
        ids = {c.labels["nowlab.workstation"]: c.id for c in client.containers.list(
            filters={"label": "nowlab.cluster=t-compose"})}
        assert set(ids) == {"ws1", "ws2"}
        root = Path("/sys/fs/cgroup")
        for ws, share in (("ws1", 0.3), ("ws2", 0.15)):
            quota = int((root / "cpu" / "docker" / ids[ws] / "cpu.cfs_quota_us").read_text())
            period = int((root / "cpu" / "docker" / ids[ws] / "cpu.cfs_period_us").read_text())
            assert quota / period == pytest.approx(share)
            assert (root / "cpuset" / "docker" / ids[ws] / "cpuset.cpus").read_text().strip().isdigit()
        deadline = time.monotonic() + 30
        while True:
            shown = client.containers.get(ids["ws1"]).exec_run(["tc", "class", "show", "dev", "eth0"]).output.decode()
            if "ceil 7Mbit" in shown or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        assert "root rate 40Mbit" in shown and "ceil 7Mbit" in shown
        ssh = None
        while time.monotonic() < deadline:
            ssh = client.containers.get(ids["ws1"]).exec_run(["ssh", "ws2", "hostname"])
            if ssh.exit_code == 0:
                break
            time.sleep(0.2)
        assert ssh is not None and ssh.output.decode().strip() == "ws2"
    finally:
        subprocess.run([*compose, "down", "-v"], capture_output=True, timeout=120)
