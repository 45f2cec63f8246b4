"""The local backend (testbed/backends/local/): this host's own Open MPI behind the same `Backend`
and `Cluster` as the machine backends. Its command line is read without running it; its cluster is
brought up for real (a state record, nothing else), its jobs run on the host's real mpiexec, and
what it cannot do is refused in one line naming the capability."""
from __future__ import annotations

import random
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from testbed import backends, lifecycle, state
from testbed.backends import Unsupported
from testbed.backends.local import LocalBackend, local_spec
from testbed.backends.local.backend import OWNER_FILE, free_port_base, refuse_unsupported
from testbed.backends.ownership import owner_tag
from testbed.cluster import Cluster
from testbed.placement import UNPINNED
from testbed.spec import SpecError, from_dict
from workloads.host.launch import host_mpi_argv
from workloads.host.pool_client import PoolLauncher


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("NOWLAB_HOME", str(tmp_path))
    return tmp_path


@pytest.fixture
def here(home):
    """A local cluster of three workstations whose jobs are an mpiexec each (no pool to start)."""
    with lifecycle.cluster(local_spec(3, name="here"), backend=LocalBackend(pool=False)) as c:
        yield c


def test_the_one_host_command_line_keeps_every_rank_on_loopback_in_its_own_session_folder(tmp_path):
    argv = host_mpi_argv(3, ["/usr/bin/python3", "-m", "workloads.hello"], tmp_path / "s")
    assert argv[:6] == ["mpiexec", "--allow-run-as-root", "--oversubscribe", "-n", "3", "--mca"]
    mca = [tuple(argv[i + 1:i + 3]) for i, a in enumerate(argv) if a == "--mca"]
    assert mca == [("btl", "tcp,self"), ("btl_tcp_if_include", "lo"), ("oob_tcp_if_include", "lo"),
                   ("orte_tmpdir_base", str(tmp_path / "s"))]
    assert argv[-3:] == ["/usr/bin/python3", "-m", "workloads.hello"]
    assert "-H" not in argv  # no host list: one host
    with pytest.raises(ValueError, match="^hosts: an MPI job needs at least one rank, got 0$"):
        host_mpi_argv(0, ["true"], tmp_path)


def test_a_local_cluster_is_recorded_like_any_other_and_found_again(here, home):
    st = state.ClusterState.load("here")
    assert (st.backend, st.subnet, st.gateway) == ("local", "127.0.0.0/8", "127.0.0.1")
    assert st.ips == {ws: "127.0.0.1" for ws in ("ws1", "ws2", "ws3")} and st.ready
    assert st.cores == {ws: UNPINNED for ws in ("ws1", "ws2", "ws3")}  # nothing pinned: no caps
    assert not (home / "clusters" / "here" / "ssh").exists()  # no sshd, no key pair
    again = Cluster.attach("here")
    assert isinstance(again.backend, LocalBackend) and again.workstations == ["ws1", "ws2", "ws3"]
    assert again.meter_dir is None and again.is_running("ws2") and not again.is_paused("ws2")
    assert again.oom_kills("ws1") == 0  # no memory limit of its own to pass
    assert LocalBackend().cluster_names() == ["here"] and not LocalBackend().orphaned("here")


def test_down_forgets_the_cluster(home):
    c = lifecycle.up(local_spec(1, name="gone"), backend=LocalBackend(pool=False))
    assert c.down() == {"containers": 0, "networks": 0, "volumes": 0, "pools": 0}
    assert state.running_names() == [] and LocalBackend().cluster_names() == []


@pytest.mark.parametrize("call, message", [
    (lambda c: c.set_cpu("ws1", 0.5), "cpu: ws1's cap: the local backend has no CPU caps (cpu_caps)"),
    (lambda c: c.write_cpu_cap("ws1", 0.5, 10_000), "ws1: a CPU cap: the local backend has no CPU caps (cpu_caps)"),
    (lambda c: c.hold("ws2", True), "ws2: holding its processes: the local backend has no CPU caps (cpu_caps)"),
    (lambda c: c.cpu_limits("ws1"), "ws1: its CPU limits: the local backend has no CPU caps (cpu_caps)"),
    (lambda c: c.set_bandwidth("ws1", "10mbit"), "bw: ws1's link: the local backend has no tc shaping (shapes_links)"),
    (lambda c: c.tc_show("ws3"), "ws3: its tc classes: the local backend has no tc shaping (shapes_links)"),
    (lambda c: c.read_net("ws3", ["tc", "-s", "class", "show"]), "(shapes_links)"),
    (lambda c: c.ssh("ws1"), "ws1: an SSH login: the local backend has no SSH to its workstations (ssh_login)"),
    (lambda c: c.cpu_usage_ns("ws1"), "(own_machines)"),
    (lambda c: c.mpi_argv(["ws1"], ["true"]), "(host_mpi): run the job with mpirun_popen"),
])
def test_what_the_local_backend_cannot_do_is_one_line_naming_the_capability(here, call, message):
    with pytest.raises(Unsupported) as caught:
        call(here)
    assert message in str(caught.value) and "\n" not in str(caught.value)


@pytest.mark.parametrize("raw, message", [
    ({"workstation": [{"name": "ws1", "cpu": 0.5}]}, "workstation ws1: cpu: the local backend has no CPU caps (cpu_caps)"),
    ({"workstation": [{"name": "ws1", "speed": 0.5}]}, "workstation ws1: speed: the local backend has no CPU caps"),
    ({"defaults": {"cpu": 0.1}, "workstation": [{"name": "ws1"}]}, "defaults.cpu: the local backend has no CPU caps"),
    ({"workstation": [{"name": "ws1", "links": {"ws2": "1mbit"}}, {"name": "ws2"}]},
     "workstation ws1: links: the local backend has no tc shaping (shapes_links)"),
    ({"defaults": {"egress": "10mbit"}, "workstation": [{"name": "ws1"}]}, "defaults.egress: the local backend has no tc"),
    ({"workstation": [{"name": "ws1", "owner": {"n": 1, "z": 1, "d": 1}}]},
     "workstation ws1: owner: the local backend has no workstations apart from this host (own_machines)"),
    ({"workstation": [{"name": "ws1", "memory": "512MiB"}]}, "workstation ws1: memory: the local backend has no"),
    ({"host": [{"name": "h1", "address": "10.0.0.1"}], "workstation": [{"name": "ws1"}]},
     "host: the local backend has no hosts but this one (places_on_hosts)"),
])
def test_a_spec_asking_what_runs_only_on_machines_is_refused_before_anything_starts(home, raw, message):
    spec = from_dict({"name": "asks", **raw})
    with pytest.raises(SpecError, match="^" + message.replace("(", r"\(").replace(")", r"\)")):
        refuse_unsupported(spec)
    with pytest.raises(SpecError):
        lifecycle.up(spec, backend=backends.get("local"))
    assert state.running_names() == []  # nothing left behind


def test_a_spec_with_names_only_is_taken_whatever_they_are(home):
    refuse_unsupported(local_spec(4))
    refuse_unsupported(from_dict({"name": "n", "defaults": {"governor": False},
                                  "workstation": [{"name": "alpha"}, {"name": "beta", "egress": None}]}))
    with pytest.raises(SpecError, match="^workstations: a local cluster needs at least one, got 0$"):
        local_spec(0)
    assert local_spec(2).names == ["ws1", "ws2"] and local_spec(1).name != local_spec(1).name


def test_jobs_run_on_the_hosts_own_mpiexec_and_only_on_the_clusters_workstations(here):
    hello = ["python3", "-m", "workloads.hello"]
    res = here.mpirun(["ws1", "ws3"], hello, timeout=60)
    assert res.ok and res.stdout.strip() == "hello from 2 ranks", res.stderr
    assert here.job_launcher() is here.backend.launcher  # pool=False: an mpiexec per job
    with pytest.raises(KeyError, match="no workstation 'ws9' in cluster 'here'"):
        here.mpirun_popen(["ws1", "ws9"], hello)
    assert here.exec("ws2", ["echo", "on", "this", "host"]).stdout == "on this host\n"


def test_the_resident_pool_serves_jobs_and_goes_with_the_cluster(home):
    with lifecycle.cluster(from_dict({"name": "pooled", "workstation": [{"name": "a"}, {"name": "b"}]}),
                           backend=LocalBackend()) as c:
        pool = c.job_launcher()
        assert isinstance(pool, PoolLauncher) and sorted(pool.ranks) == ["a", "b"]  # named as the cluster's
        assert c.job_launcher() is pool and Cluster.attach("pooled").job_launcher() is pool  # one per process
        done = pool.mpirun_popen(["a", "b"], ["python3", "-m", "workloads.hello"]).wait(60)
        assert done.exit_code == 0 and "hello from 2 ranks" in done.stdout
        port = pool.ranks["a"][0].address
    with pytest.raises(OSError):  # its ranks stopped with `down`
        socket.create_connection(port, timeout=1).close()


def test_free_ports_skip_one_that_is_taken():
    first = random.Random(7).randrange(20000, 30000 - 3)
    with socket.socket() as held:
        held.bind(("127.0.0.1", first + 1))
        held.listen()
        base = free_port_base(3, random.Random(7))
    assert base != first and 20000 <= base < 30000 - 3


def test_a_cluster_whose_process_is_gone_is_orphaned_and_left_over_until_ready(home):
    c = lifecycle.up(local_spec(1, name="left"), backend=LocalBackend(pool=False))
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    (home / "clusters" / "left" / OWNER_FILE).write_text(owner_tag(int(dead.stdout)))
    be = LocalBackend()
    assert be.orphaned("left") and be.leftovers() == []  # ready: someone may use it from another process
    c.state.ready = False
    c.state.save()
    assert be.leftovers() == ["left"]
    c.down()


def test_calibration_traffic_and_kills_by_name_are_refused_on_this_host(here):
    """A local workstation is this host: a burner's or iperf's pkill there would reach every process
    on it, other clusters' included, so what needs a machine apart is refused before it starts."""
    from testbed import calibrate
    from testbed.load import traffic

    with pytest.raises(Unsupported, match=r"^calibration: the CPU each workstation gets: .* \(cpu_caps\)$"):
        calibrate.measure_cpu(here, 0.1)
    with pytest.raises(Unsupported, match=r"^calibration: the link ws1->ws2: .* \(shapes_links\)$"):
        calibrate.measure_link(here, "ws1", "ws2")
    with pytest.raises(Unsupported, match=r"^traffic: the flow ws1->ws2: .* \(shapes_links\)$"):
        traffic.start(here, "ws1", "ws2", "1mbit")
    with pytest.raises(Unsupported, match=r"^traffic: stopping flows: .* \(shapes_links\)$"):
        traffic.stop(here)
    for argv in (["pkill", "-f", "x"], ["/usr/bin/killall", "x"]):
        with pytest.raises(Unsupported, match=r"would reach every process \(own_machines\)$"):
            here.exec("ws1", argv)
        with pytest.raises(Unsupported):
            here.detach("ws1", argv)
