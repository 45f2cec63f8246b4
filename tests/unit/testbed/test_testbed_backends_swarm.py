"""The Swarm backend without Docker: hosts and URLs, the overlay's and Open MPI's settings,
cgroup readings, the files copied into a workstation, placement over hosts as slots, the
registry, and the one-line errors for a host that does not answer or cannot fit.

The unreachable host is a closed loopback port (a real refused connection, no engine). The
backend against real engines is tests/integration/test_testbed_backends_swarm_live.py (Docker-in-Docker).
"""
from __future__ import annotations

import io
import ipaddress
import json
import socket
import os
import subprocess
import sys
import tarfile

import pytest

from testbed import backends, lifecycle
from testbed.backends import Backend, BackendError, HostPlacing
from testbed.backends.docker import engine
from testbed.backends.swarm import overlay, readings, registry
from testbed.backends.swarm.backend import SwarmBackend
from testbed.backends.swarm.hosts import (SwarmHost, docker_url, from_nodes, host_name, hosts_of, machine_id,
                                          split_machine, url_address)
from testbed.cluster import Cluster
from testbed.image import CONTAINERS_DIR
from testbed.placement_hosts import HostCores
from testbed.spec import SpecError, from_dict
from testbed.sshkeys import KEY_NAME, make_keypair

SUBNET = ipaddress.ip_network("10.231.4.0/24")


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # closed again when the block ends: connections are refused


def spec3(hosts=("a", "b", "c"), **ws_extra):
    return from_dict({"name": "sw", "host": [{"name": h, "address": f"10.9.0.{i + 1}"} for i, h in enumerate(hosts)],
                      "workstation": [{"name": "ws", "count": 6, "cpu": 0.4, **ws_extra}]})


# -- hosts and URLs ---------------------------------------------------------------------------
def test_the_engine_url_is_the_hosts_docker_field_or_tcp_2375_on_its_address():
    s = from_dict({"host": [{"name": "a", "address": "pc1.lab"},
                            {"name": "b", "address": "10.0.0.2", "docker": "ssh://admin@10.0.0.2"},
                            {"name": "c", "address": "10.0.0.3", "docker": "tcp://10.0.0.3:2376"}],
                   "workstation": [{"name": "w"}]})
    assert [docker_url(h) for h in s.hosts] == ["tcp://pc1.lab:2375", "ssh://admin@10.0.0.2", "tcp://10.0.0.3:2376"]
    assert hosts_of(s) == [SwarmHost("a", "tcp://pc1.lab:2375", "pc1.lab"),
                           SwarmHost("b", "ssh://admin@10.0.0.2", "10.0.0.2"),
                           SwarmHost("c", "tcp://10.0.0.3:2376", "10.0.0.3")]


@pytest.mark.parametrize("url", ["http://a:2375", "tcp://a", "tcp://a:23/x", "ssh://", "unix:///var/run/docker.sock",
                                 "tcp://a b:2375"])
def test_a_bad_docker_url_is_refused_naming_the_field(url):
    with pytest.raises(SpecError) as err:
        from_dict({"host": [{"name": "a", "address": "a", "docker": url}], "workstation": [{"name": "w"}]})
    assert "host[0].docker" in str(err.value) and len(str(err.value).splitlines()) == 1
    with pytest.raises(ValueError, match="docker: .* is not a Docker API URL"):
        url_address(url)


def test_url_address_is_the_urls_host():
    assert url_address("tcp://10.1.2.3:2375") == "10.1.2.3"
    assert url_address("ssh://me@pc4:2222") == "pc4"


def node(hostname, addr, *, state="ready", availability="active", manager=False):
    n = {"ID": hostname + "id" * 8, "Description": {"Hostname": hostname}, "Status": {"State": state, "Addr": addr},
         "Spec": {"Availability": availability}}
    if manager:
        n["ManagerStatus"] = {"Addr": f"{addr}:2377", "Leader": True}
    return n


def test_swarm_nodes_give_the_ready_active_hosts_managers_first():
    found = from_nodes([node("Worker_2", "10.0.0.3"), node("down", "10.0.0.9", state="down"),
                        node("drained", "10.0.0.8", availability="drain"), node("mgr", "10.0.0.1", manager=True),
                        node("worker1", "10.0.0.2")])
    assert found == [SwarmHost("mgr", "tcp://10.0.0.1:2375", "10.0.0.1"),
                     SwarmHost("worker-2", "tcp://10.0.0.3:2375", "10.0.0.3"),
                     SwarmHost("worker1", "tcp://10.0.0.2:2375", "10.0.0.2")]


def test_a_manager_reporting_0000_takes_its_manager_address():
    n = node("m", "0.0.0.0", manager=True)
    n["ManagerStatus"]["Addr"] = "192.168.5.1:2377"
    assert from_nodes([n], port=2376) == [SwarmHost("m", "tcp://192.168.5.1:2376", "192.168.5.1")]


def test_nodes_with_one_hostname_are_refused():
    with pytest.raises(ValueError, match=r"hostnames \['n'\] are not unique"):
        from_nodes([node("n", "10.0.0.1"), node("N", "10.0.0.2")])


def test_host_names_from_hostnames():
    assert host_name("Node.Lab_1") == "node-lab-1"
    with pytest.raises(ValueError):
        host_name("___")


def test_machine_ids_round_trip_and_bad_ones_are_named():
    assert split_machine(machine_id("sw", "b", "abc123")) == ("sw", "b", "abc123")
    for bad in ("abc", "sw/b", "sw//c", "a/b/c/d"):
        with pytest.raises(ValueError, match="not a Swarm workstation id"):
            split_machine(bad)


# -- the overlay and Open MPI ------------------------------------------------------------------
def test_the_overlay_mtu_leaves_vxlans_50_bytes():
    assert overlay.overlay_mtu() == 1450
    assert overlay.overlay_mtu(9000) == 8950
    assert overlay.overlay_options(1450) == {"com.docker.network.driver.mtu": "1450"}
    with pytest.raises(ValueError, match="mtu: an underlay of 1300 bytes leaves 1250"):
        overlay.overlay_mtu(1300)


def test_open_mpi_is_pinned_to_the_overlay_subnet_in_env_and_mca_file():
    assert overlay.mpi_env(SUBNET) == {"OMPI_MCA_btl_tcp_if_include": "10.231.4.0/24",
                                       "OMPI_MCA_oob_tcp_if_include": "10.231.4.0/24",
                                       "OMPI_MCA_pml": "ob1"}  # cm over libfabric ignores the BTL's interface
    image_file = (CONTAINERS_DIR / "openmpi-mca-params.conf").read_text()
    assert "btl_tcp_if_include = eth0" in image_file  # what the image says on one host
    out = overlay.mca_params(image_file, SUBNET)
    params = {k.strip(): v.strip() for k, _, v in (line.partition("=") for line in out.splitlines())
              if not k.startswith("#") and v}
    assert params["btl_tcp_if_include"] == params["oob_tcp_if_include"] == "10.231.4.0/24"
    assert params["pml"] == "ob1" and out.count("pml") == 1
    assert params["btl"] == "tcp,self,vader" and params["mpi_yield_when_idle"] == "1"  # the rest kept
    assert out.count("btl_tcp_if_include") == 1 and "eth0" not in out


def test_the_overlay_pool_is_not_swarms_default_pool_start():
    assert not overlay.OVERLAY_POOL.overlaps(ipaddress.ip_network("10.0.0.0/24"))  # ingress


def test_the_control_network_covers_the_controller_hosts_and_bridges():
    net = overlay.control_network("192.168.1.10", ["192.168.1.11", "192.168.1.12"], [])
    assert net == ipaddress.ip_network("192.168.1.8/29")
    wide = overlay.control_network("192.168.1.10", ["192.168.1.11"], [ipaddress.ip_network("172.18.0.0/16")])
    assert ipaddress.ip_network("172.18.0.0/16").subnet_of(wide) and ipaddress.ip_address("192.168.1.10") in wide
    with pytest.raises(ValueError):
        overlay.covering([])


def test_route_source_is_an_address_of_this_machine():
    assert overlay.route_source("127.0.0.1", 2375) == "127.0.0.1"


def test_overlay_subnets_skip_what_any_host_uses():
    """create_network's choice, with a stand-in engine that has nothing (the hosts' subnets given)."""
    made = {}

    class Networks:
        def create(self, name, **kw):
            made.update(name=name, **kw)
            return type("N", (), {"id": "net1"})()

    class Api:
        def networks(self):
            return []

    class Client:
        api, networks = Api(), Networks()

    used = [ipaddress.ip_network("10.231.0.0/24"), ipaddress.ip_network("10.231.1.0/25")]
    nid, subnet = engine.create_network(Client(), "sw", 6, {"o": "1"}, driver="overlay",  # type: ignore[arg-type]
                                        options=overlay.overlay_options(1450), attachable=True,
                                        pool=overlay.OVERLAY_POOL, also_used=used, dynamic_upper_half=True)
    assert (nid, subnet) == ("net1", ipaddress.ip_network("10.231.2.0/23"))  # twice /24: the engine's own half
    pool = made["ipam"]["Config"][0]
    assert (pool["Subnet"], pool["IPRange"], pool["Gateway"]) == ("10.231.2.0/23", "10.231.3.0/24", "10.231.2.1")
    ips = engine.addresses(spec3(), subnet)
    assert all(ipaddress.ip_address(ip) not in engine.dynamic_range(subnet) for ip in ips.values())
    assert made["driver"] == "overlay" and made["attachable"] is True
    assert made["options"] == {"com.docker.network.driver.mtu": "1450"}
    assert made["labels"] == {engine.LABEL: "sw", "o": "1"}


# -- the workstation's files and config ----------------------------------------------------------
def test_without_binds_the_key_and_workloads_are_copied_to_the_same_paths(tmp_path):
    make_keypair(tmp_path, "nowlab-sw")
    s = spec3()
    ips = engine.addresses(s, SUBNET)
    cfg = engine.container_config(s, "ws2", image="img", ips=ips, core=1, key_dir=tmp_path, bind=False)
    bound = engine.container_config(s, "ws2", image="img", ips=ips, core=1, key_dir=tmp_path)
    assert cfg["binds"] == {} and len(bound["binds"]) == 3
    assert {k: v for k, v in cfg.items() if k != "binds"} == {k: v for k, v in bound.items() if k != "binds"}
    assert cfg["cpuset_cpus"] == "1" and cfg["cpu_quota"] / cfg["cpu_period"] == 0.4 and cfg["cap_add"] == ["NET_ADMIN"]
    files = engine.mounted_files(tmp_path)
    assert files[f"/run/secrets/{KEY_NAME}"] == (tmp_path / KEY_NAME).read_bytes()
    assert f"/run/secrets/{KEY_NAME}.pub" in files
    assert "/opt/nowlab/workloads/pool.py" in files
    assert not any("__pycache__" in p for p in files)
    for target in (t["bind"] for t in bound["binds"].values()):  # every bind mount's path is copied
        assert target in files or any(p.startswith(target + "/") for p in files)


def test_files_tar_holds_the_paths_with_private_keys_0600():
    data = engine.files_tar({f"/run/secrets/{KEY_NAME}": b"k", "/etc/openmpi/x.conf": b"a = b\n"})
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        members = {m.name: m for m in tar.getmembers()}
        assert members[f"run/secrets/{KEY_NAME}"].mode == 0o600
        assert members["etc/openmpi/x.conf"].mode == 0o644
        assert tar.extractfile("etc/openmpi/x.conf").read() == b"a = b\n"  # type: ignore[union-attr]
    for bad in ("relative/x", "/a/../etc/passwd"):
        with pytest.raises(ValueError, match="files: not an absolute path"):
            engine.files_tar({bad: b""})


def test_removal_kinds_are_checked():
    with pytest.raises(ValueError, match=r"kinds: unknown \['pods'\]"):
        engine.remove(None, "x", kinds=("pods",))  # type: ignore[arg-type]


# -- readings from inside a workstation -----------------------------------------------------------
def reading(files, procs=None):
    return json.dumps({"files": files, "procs_ns": procs})


def test_cgroup_v1_readings():
    got = readings.parse("noise\n" + reading({"cpu/cpu.cfs_quota_us": "25000\n", "cpu/cpu.cfs_period_us": "100000\n",
                                              "cpuset/cpuset.cpus": "3\n", "cpuacct/cpuacct.usage": "123456789\n",
                                              "memory/memory.oom_control": "oom_kill_disable 0\nunder_oom 0\noom_kill 2\n"},
                                             procs=77))
    assert readings.limits(got).as_dict() == {"quota_us": 25000, "period_us": 100000, "cores": 0.25, "cpuset": "3"}
    assert readings.usage_ns(got) == 123456789 and readings.oom_kills(got) == 2 and readings.procs_ns(got) == 77


def test_cgroup_v2_readings():
    got = readings.parse(reading({"cpu.max": "max 100000\n", "cpuset.cpus.effective": "0\n",
                                  "cpu.stat": "usage_usec 42\nuser_usec 40\n", "memory.events": "oom 1\noom_kill 1\n"}))
    lim = readings.limits(got)
    assert (lim.quota_us, lim.period_us, lim.cpuset) == (-1, 100000, "0")
    assert readings.usage_ns(got) == 42000 and readings.oom_kills(got) == 1
    with pytest.raises(ValueError, match="no process CPU time asked for"):
        readings.procs_ns(got)


def test_readings_that_are_missing_or_garbled_say_so():
    with pytest.raises(ValueError, match="none of cpu.max"):
        readings.limits(readings.parse(reading({})))
    with pytest.raises(ValueError, match="no JSON answer"):
        readings.parse("Traceback ...")


def test_the_reader_program_runs_here_and_its_answer_parses():
    """The program the backend execs in a workstation, run on this machine (whatever its cgroups)."""
    out = subprocess.run([sys.executable, *readings.reader_argv("pytest")[1:]], capture_output=True, text=True,
                         timeout=30, check=True).stdout
    got = readings.parse(out)
    assert set(got["files"]) >= {"cpu.max", "cpu/cpu.cfs_quota_us"} and got["procs_ns"] >= 0
    # a mark nothing else carries: the reader and the `timeout` it runs under (as through an
    # exec with a deadline) hold it in their own command lines and must not count themselves
    mark = f"nowlab-no-such-process-{os.getpid()}"
    out = subprocess.run(["timeout", "30", sys.executable, *readings.reader_argv(mark)[1:]], capture_output=True,
                         text=True, timeout=60, check=True).stdout
    assert readings.parse(out)["procs_ns"] == 0


# -- placement over hosts, as slots ------------------------------------------------------------------
def fed(spec, found) -> SwarmBackend:
    """A backend whose hosts' facts are given, as `find` would have read them."""
    be = SwarmBackend(spec)
    be._found = found
    return be


def test_placement_spreads_over_hosts_as_numbered_slots():
    s = spec3()
    be = fed(s, {h: HostCores([0, 1]) for h in "abc"})
    assert isinstance(be, Backend) and isinstance(be, HostPlacing)
    p = be.place(s)
    assert be.slots() == [("a", 0), ("a", 1), ("b", 0), ("b", 1), ("c", 0), ("c", 1)]
    assert be.cores() == list(range(6))
    assert sorted(p.cores.values()) == list(range(6))  # one 0.4 cap per core, every core used once


def test_a_workstation_naming_its_host_gets_that_hosts_slot_and_taken_cores_count():
    s = from_dict({"name": "sw", "host": [{"name": "a", "address": "10.9.0.1"}, {"name": "b", "address": "10.9.0.2"}],
                   "workstation": [{"name": "w1", "cpu": 0.5, "host": "b"}, {"name": "w2", "cpu": 0.5}]})
    be = fed(s, {"a": HostCores([0], taken={0: 0.8}), "b": HostCores([0, 1])})
    p = be.place(s)
    slots = be.slots()
    assert slots[p.cores["w1"]][0] == "b"
    assert slots[p.cores["w2"]] == ("b", 1)  # a's only core carries 0.8 already
    assert be.pinned_load() == {0: 0.8}


def test_a_host_with_too_few_free_cores_is_named():
    s = from_dict({"name": "sw", "host": [{"name": "a", "address": "10.9.0.1"}, {"name": "b", "address": "10.9.0.2"}],
                   "workstation": [{"name": "w", "count": 3, "cpu": 0.5, "host": "b"}]})
    with pytest.raises(SpecError) as err:
        fed(s, {"a": HostCores([0, 1]), "b": HostCores([0], taken={0: 0.3})}).place(s)
    assert str(err.value).startswith("host 'b':") and len(str(err.value).splitlines()) == 1


def test_speeds_are_placed_by_each_hosts_measured_factors():
    """A speed workstation gets the cores its speed needs at its host core's factor (read by the
    host's probe at placement: metering.read_factors), recorded for the keeper's governor."""
    s = from_dict({"name": "sw", "host": [{"name": "a", "address": "10.9.0.1"}, {"name": "b", "address": "10.9.0.2"}],
                   "workstation": [{"name": "w1", "speed": 0.3, "host": "a"}, {"name": "w2", "speed": 0.3, "host": "b"},
                                   {"name": "w3", "cpu": 0.2, "host": "b"}]})
    p = fed(s, {"a": HostCores([0], factors={0: 1.5}), "b": HostCores([0, 1], factors={0: 0.75, 1: 0.75})}).place(s)
    assert p.factor == {"w1": 1.5, "w2": 0.75}
    resolved = p.resolve(s)  # nominal: 0.3 reference cores / factor; reserved: room for the governor
    assert (resolved.nominal_cpu("w1"), resolved.nominal_cpu("w2")) == (pytest.approx(0.2), pytest.approx(0.4))
    assert p.cpu == {"w1": pytest.approx(0.2 / 0.6, abs=1e-3), "w2": pytest.approx(0.4 / 0.6, abs=1e-3)}  # to 0.6x


# -- hosts that do not answer -----------------------------------------------------------------------
def test_an_unreachable_host_is_one_line_naming_it_and_nothing_is_recorded(monkeypatch, tmp_path):
    monkeypatch.setenv("NOWLAB_HOME", str(tmp_path))
    port = closed_port()
    s = from_dict({"name": "sw", "host": [{"name": "far", "address": "127.0.0.1", "docker": f"tcp://127.0.0.1:{port}"}],
                   "workstation": [{"name": "w", "cpu": 0.2}]})
    be = backends.get("swarm", s)
    with pytest.raises(BackendError) as err:
        be.cores()
    msg = str(err.value)
    assert msg.startswith(f"host 'far' (tcp://127.0.0.1:{port}): its Docker engine does not answer")
    assert len(msg.splitlines()) == 1
    with pytest.raises(BackendError, match="host 'far'"):
        lifecycle.start(s, backend=backends.get("swarm", s))
    assert registry.names() == [] and not (tmp_path / "clusters" / "sw").exists()


def test_up_on_the_command_line_names_the_unreachable_host(monkeypatch, tmp_path):
    port = closed_port()
    spec = tmp_path / "sw.toml"
    spec.write_text(f'name = "swcli"\n[[host]]\nname = "far"\naddress = "127.0.0.1"\ndocker = "tcp://127.0.0.1:{port}"\n'
                    '[[workstation]]\nname = "w"\ncpu = 0.2\n')
    env = {**__import__("os").environ, "NOWLAB_HOME": str(tmp_path / "home")}
    out = subprocess.run([sys.executable, "-m", "nowlab", "up", str(spec), "--backend", "swarm"], env=env,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 2, out.stderr
    assert len(out.stderr.strip().splitlines()) == 1 and "host 'far'" in out.stderr
    bad = subprocess.run([sys.executable, "-m", "nowlab", "up", str(spec), "--backend", "k8s"], env=env,
                         capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "--backend: unknown 'k8s'" in bad.stderr


def test_remove_of_an_unreachable_host_keeps_it_recorded_for_gc(monkeypatch, tmp_path):
    monkeypatch.setenv("NOWLAB_HOME", str(tmp_path))
    far = SwarmHost("far", f"tcp://127.0.0.1:{closed_port()}", "127.0.0.1")
    registry.save(registry.Record(cluster="gone", owner="1:0", home=str(tmp_path), manager=far.url, hosts=[far]))
    be = SwarmBackend(manager=far.url)  # the manager is down too: no engine is asked anything
    assert be.cluster_names() == ["gone"] and be.orphaned("gone")
    assert "gone" in be.leftovers()
    removed = be.remove("gone")
    assert removed["unreachable"] >= 1 and removed["containers"] == 0
    assert registry.load("gone") is not None and registry.load("gone").hosts == [far]  # type: ignore[union-attr]


def test_a_cluster_down_with_a_host_that_did_not_answer_names_it_and_forget_frees_the_name(monkeypatch, tmp_path):
    monkeypatch.setenv("NOWLAB_HOME", str(tmp_path))
    far = SwarmHost("far", f"tcp://127.0.0.1:{closed_port()}", "127.0.0.1")
    registry.save(registry.Record(cluster="gone", owner="1:0", home=str(tmp_path), manager=far.url, hosts=[far]))
    be = SwarmBackend(manager=far.url)
    (tmp_path / "clusters" / "gone").mkdir(parents=True)  # still up as far as this controller knows
    assert be.stranded("gone") == [] and be.forget("gone") == []
    spec = from_dict({"name": "gone", "host": [{"name": "far", "address": "127.0.0.1", "docker": far.url}],
                      "workstation": [{"name": "w", "cpu": 0.2}]})
    with pytest.raises(SpecError, match="is already running"):
        lifecycle.start(spec, backend=be)

    (tmp_path / "clusters" / "gone").rmdir()  # taken down: `down` removed the state folder, kept the record
    be.remove("gone")
    assert be.stranded("gone") == ["far"]
    with pytest.raises(SpecError) as err:
        lifecycle.start(spec, backend=be)
    assert str(err.value) == ("name: cluster 'gone' was taken down but far did not answer, so it is still recorded: "
                              "`nowlab gc` removes it once they answer, `nowlab forget gone` drops the record now")

    env = {**os.environ, "NOWLAB_HOME": str(tmp_path)}
    out = subprocess.run([sys.executable, "-m", "nowlab", "forget", "gone"], env=env, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert "forgot swarm cluster gone" in out.stdout and "far" in out.stdout
    assert registry.names() == [] and be.stranded("gone") == []
    again = subprocess.run([sys.executable, "-m", "nowlab", "forget", "gone"], env=env, capture_output=True,
                           text=True, timeout=120)
    assert again.returncode == 2 and len(again.stderr.strip().splitlines()) == 1
    assert "no cluster 'gone' is recorded as left on hosts that did not answer" in again.stderr


def test_registry_round_trip_and_known_hosts(monkeypatch, tmp_path):
    monkeypatch.setenv("NOWLAB_HOME", str(tmp_path))
    a, b = SwarmHost("a", "tcp://10.0.0.1:2375", "10.0.0.1"), SwarmHost("b", "tcp://10.0.0.2:2375", "10.0.0.2")
    registry.save(registry.Record("x", "1:0", str(tmp_path), a.url, [a, b], {"w": "a"}, [["a", 0], ["b", 1]]))
    registry.save(registry.Record("y", "1:0", str(tmp_path), a.url, [a]))
    assert registry.load("x").slots == [["a", 0], ["b", 1]]  # type: ignore[union-attr]
    assert registry.known_hosts() == [a, b]
    registry.forget("x")
    assert registry.names() == ["y"]


def test_swarm_is_a_known_kind():
    assert "swarm" in backends.KINDS and backends.get("swarm").kind == "swarm"
    assert backends.get("docker").capabilities.controller_on_network
    assert backends.get("swarm").capabilities.controller_on_network is False


# -- the Docker-in-Docker test bed's node image, as data ------------------------------------------
def test_the_node_image_is_the_base_plus_debians_docker_and_its_tag_follows_its_content():
    from tools.testbeds import dind

    assert dind.node_tag("nowlab/base:aaa") == dind.node_tag("nowlab/base:aaa")
    assert dind.node_tag("nowlab/base:aaa") != dind.node_tag("nowlab/base:bbb")
    assert dind.node_tag("nowlab/base:aaa").startswith("nowlab/swarm-node:")
    with tarfile.open(fileobj=dind.context_tar()) as tar:
        dockerfile = tar.extractfile("Dockerfile").read().decode()  # type: ignore[union-attr]
        entry = tar.getmember("node-entrypoint")
        script = tar.extractfile(entry).read().decode()  # type: ignore[union-attr]
    assert "FROM ${BASE}" in dockerfile and "docker.io" in dockerfile and "VOLUME /var/lib/docker" in dockerfile
    assert entry.mode == 0o755
    assert "--host=tcp://0.0.0.0:2375" in script and '--cgroup-parent="nowlab-dind-$(hostname)"' in script
    assert dind.LABEL != engine.LABEL  # `gc` never takes the test bed for a cluster
    assert dind.Node("node1", "172.30.0.2").url == "tcp://172.30.0.2:2375"


def test_swarm_commands_name_the_engine_that_does_not_answer(tmp_path):
    env = {**__import__("os").environ, "NOWLAB_HOME": str(tmp_path)}
    url = f"tcp://127.0.0.1:{closed_port()}"
    for argv, named in ((["join", url], url), (["nodes", "--manager", url], "the manager"),
                        (["join", "http://x:1"], "docker: 'http://x:1' is not a Docker API URL")):
        out = subprocess.run([sys.executable, "-m", "nowlab", "swarm", *argv], env=env, capture_output=True,
                             text=True, timeout=120)
        assert out.returncode == 2, out.stderr
        assert len(out.stderr.strip().splitlines()) == 1 and named in out.stderr


def test_a_swarm_workstation_is_the_one_machine_container_plus_open_mpis_overlay(tmp_path):
    from testbed.backends.swarm.backend import workstation_config, workstation_files

    make_keypair(tmp_path, "nowlab-sw")
    s = spec3()
    ips = engine.addresses(s, SUBNET)
    cfg = workstation_config(s, "ws4", image="img", ips=ips, core=0, key_dir=tmp_path, subnet=SUBNET)
    one = engine.container_config(s, "ws4", image="img", ips=ips, core=0, key_dir=tmp_path)
    assert cfg["environment"] == {**one["environment"], **overlay.mpi_env(SUBNET)}
    assert cfg["environment"]["NOWLAB_TC"] == one["environment"]["NOWLAB_TC"]  # tc in its own namespace, as here
    assert {k: v for k, v in cfg.items() if k not in ("binds", "environment")} == \
        {k: v for k, v in one.items() if k not in ("binds", "environment")}
    assert cfg["ip"] == ips["ws4"] and cfg["extra_hosts"] == ips  # fixed addresses, every name resolvable
    files = workstation_files(tmp_path, SUBNET)
    assert f"btl_tcp_if_include = {SUBNET}" in files[overlay.MCA_FILE].decode()
    assert f"/run/secrets/{KEY_NAME}" in files


def test_mpi_argv_names_the_hosts_and_the_overlay_comes_from_the_workstation():
    """mpiexec's command line is the one-machine one: the interface choice is in the
    workstation's MCA file and environment, so nothing host-specific is on the line."""
    from testbed import state

    s = spec3()
    st = state.ClusterState(spec=s.model_dump(by_alias=True), network="n", subnet="10.9.0.0/29", gateway="10.9.0.9",
                            image="img", ips=engine.addresses(s, SUBNET), cores={n: i for i, n in enumerate(s.names)},
                            containers={n: machine_id("sw", "a", f"c{n}") for n in s.names}, backend="swarm")
    argv = Cluster(st, SwarmBackend()).mpi_argv(["ws1", "ws3", "ws5"], ["python3", "-m", "workloads.hello"],
                                                fast=False)
    assert argv[:6] == ["mpiexec", "--allow-run-as-root", "-H", "ws1:1,ws3:1,ws5:1", "-n", "3"]
    assert not any("if_include" in a for a in argv)
