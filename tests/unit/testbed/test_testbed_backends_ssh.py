"""The SSH backend without hosts: spec checks, fit, the files and commands it writes, its errors.

The host agent runs here for real against a folder laid out like cgroupfs (the files it
writes are the kernel's names; only the root differs) and against this machine's /proc.
The refused-key case logs in to a real paramiko SSH server on loopback that refuses the
key; the unreachable case connects to a closed loopback port. No Docker, no other machine.
The backend against real hosts is tests/integration/test_testbed_backends_ssh_live.py.
"""
from __future__ import annotations

from dataclasses import replace

import json
import shutil
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import paramiko
import pytest

from testbed import backends, shaping
from testbed.backends import Backend, BackendError
from testbed.governor import HEADROOM_LOW
from testbed.backends.ssh import fit, registry, sampling
from testbed.backends.ssh.agent import hostagent
from testbed.backends.ssh.backend import SshBackend, covering_network, route_dev, same_folder, split_machine
from testbed.backends.ssh.control import command_argv
from testbed.backends.ssh.discovery import HostInfo, parse_probe
from testbed.backends.ssh.layout import (HostFolder, Peer, authorized_line, folder_of, ssh_config, ssh_wrapper,
                                         tc_on, translate)
from testbed.backends.ssh.link import HostAccess, HostLink
from testbed.spec import SpecError, from_dict
from testbed.sshkeys import make_keypair

AGENT = Path(hostagent.__file__)


def spec3(**extra):
    raw = {"name": "lab", "host": [{"name": h, "address": f"10.0.0.{i + 1}"} for i, h in enumerate("abc")],
           "workstation": [{"name": f"ws{i}", "cpu": 0.5} for i in (1, 2, 3)]}
    raw.update(extra)
    return from_dict(raw)


def info(name: str, cores=(0, 1), clusters=(), home="/home/u") -> HostInfo:
    return HostInfo(name=name, home=home, uid=1000, cores=list(cores), ssh="/usr/bin/ssh", tc="/sbin/tc",
                    mpiexec="/usr/bin/mpiexec", clusters=list(clusters), factors={c: 2.0 for c in cores})


# -- the spec ---------------------------------------------------------------------------------------
def test_host_login_fields_default_to_root_on_port_22():
    h = spec3().hosts[0]
    assert (h.user, h.port, h.identity) == ("root", 22, None)


@pytest.mark.parametrize("host, message", [
    ({"port": 0}, "host[0].port: Input should be greater than or equal to 1, got 0"),
    ({"port": 70000}, "host[0].port: Input should be less than or equal to 65535, got 70000"),
    ({"user": "bad user"}, "host[0].user: 'bad user' is not a valid login name"),
    ({"identity": "/nonexistent/key"}, "host[0].identity: no key file '/nonexistent/key'"),
    ({"usr": "x"}, "host[0].usr"),
])
def test_bad_host_login_is_one_line_naming_the_field(host, message):
    with pytest.raises(SpecError) as err:
        from_dict({"host": [{"name": "a", "address": "10.0.0.1", **host}], "workstation": [{"name": "ws1"}]})
    assert message in str(err.value) and "\n" not in str(err.value)


def test_identity_that_exists_is_kept(tmp_path):
    key = tmp_path / "id"
    key.write_text("x")
    assert from_dict({"host": [{"name": "a", "address": "h", "identity": str(key)}],
                      "workstation": [{"name": "ws1"}]}).hosts[0].identity == str(key)


# -- which host each workstation is -----------------------------------------------------------------
def test_one_workstation_per_host_pinned_to_its_first_allowed_core():
    s = spec3(host=[{"name": "a", "address": "1.1.1.1"}, {"name": "b", "address": "1.1.1.2", "cores": [3]},
                    {"name": "c", "address": "1.1.1.3"}])
    pinned = fit.check_fit(s, {"a": info("a"), "b": info("b", cores=(0, 1, 2, 3)), "c": info("c", cores=(2, 5))})
    assert pinned == {"a": 0, "b": 3, "c": 2}


def test_more_workstations_than_hosts_is_refused():
    s = spec3(host=[{"name": "a", "address": "1.1.1.1"}, {"name": "b", "address": "1.1.1.2"}])
    with pytest.raises(SpecError, match=r"^workstations: 3 workstations but 2 hosts"):
        fit.check_fit(s, {"a": info("a"), "b": info("b")})


def test_a_host_another_cluster_holds_is_named():
    with pytest.raises(SpecError, match=r"^host 'b': no free core, nowlab cluster 'other' already runs there"):
        fit.check_fit(spec3(), {"a": info("a"), "b": info("b", clusters=["other"]), "c": info("c")})


def test_a_host_missing_the_cores_asked_is_named():
    s = spec3(host=[{"name": "a", "address": "1.1.1.1"}, {"name": "b", "address": "1.1.1.2", "cores": [7]},
                    {"name": "c", "address": "1.1.1.3"}])
    with pytest.raises(SpecError, match=r"host 'b' has no core\(s\) \[7\]"):
        fit.check_fit(s, {"a": info("a"), "b": info("b"), "c": info("c")})


def test_two_workstations_naming_one_host_are_refused():
    s = spec3(workstation=[{"name": "ws1", "host": "b"}, {"name": "ws2", "host": "b"}])
    with pytest.raises(SpecError, match=r"^host 'b': 2 workstations name it \(ws1, ws2\)"):
        fit.check_fit(s, {"a": info("a"), "b": info("b"), "c": info("c")})


def test_speeds_are_capped_by_the_host_cores_measured_factor():
    """A speed workstation on an SSH host: placement's rule for one workstation alone on its
    core (testbed.placement), from the factor discovery measured there."""
    s = spec3(workstation=[{"name": "ws1", "cpu": 0.2}, {"name": "ws2", "speed": 0.2}, {"name": "ws3", "speed": 0.5}])
    infos = {"a": info("a"), "b": info("b"), "c": info("c")}
    infos["b"] = replace(infos["b"], factors={0: 0.8, 1: 0.9})
    infos["c"] = replace(infos["c"], factors={0: 2.0, 1: 2.0})
    cpu, factor = fit.speed_caps(s, {"ws1": "a", "ws2": "b", "ws3": "c"}, infos, {"a": 0, "b": 0, "c": 1})
    assert set(cpu) == {"ws2", "ws3"} and factor == {"ws2": 0.8, "ws3": 2.0}
    assert cpu["ws2"] == pytest.approx(0.2 / (HEADROOM_LOW * 0.8), abs=1e-4)  # headroom for a slower core
    assert cpu["ws3"] == pytest.approx(0.5 / (HEADROOM_LOW * 2.0), abs=1e-4)
    fixed = spec3(workstation=[{"name": "ws1", "speed": 0.2}], defaults={"governor": False})
    assert fit.speed_caps(fixed, {"ws1": "b"}, infos, {"b": 0})[0] == {"ws1": 0.25}  # speed / factor, held
    with pytest.raises(SpecError, match=r"^workstation\[0\]\.speed: host 'b' core 0 gives 0\.576 reference cores "
                                        r"at most"):
        fit.speed_caps(spec3(workstation=[{"name": "ws1", "speed": 0.7}]), {"ws1": "b"}, infos, {"b": 0})
    with pytest.raises(SpecError, match=r"^defaults\.speed: host 'a' gave no reading of core 1"):
        fit.speed_caps(spec3(workstation=[{"name": "ws1"}], defaults={"speed": 0.2}), {"ws1": "a"},
                       {"a": replace(infos["a"], factors={0: 1.0})}, {"a": 1})


def test_assign_follows_slots_and_honours_named_hosts():
    s = spec3()
    assert fit.assign(s, {"ws1": 0, "ws2": 1, "ws3": 2}) == {"ws1": "a", "ws2": "b", "ws3": "c"}
    named = spec3(workstation=[{"name": "ws1"}, {"name": "ws2", "host": "a"}, {"name": "ws3"}])
    assert fit.assign(named, {"ws1": 0, "ws2": 1, "ws3": 2}) == {"ws1": "b", "ws2": "a", "ws3": "c"}


def test_the_folder_must_be_one_path_on_every_host():
    s = spec3()
    assert same_folder(s, {h: info(h) for h in "abc"}) == "/home/u/.nowlab/ssh/lab"
    with pytest.raises(SpecError, match=r"^host 'c': its nowlab folder would be /home/v/.nowlab/ssh/lab"):
        same_folder(s, {"a": info("a"), "b": info("b"), "c": info("c", home="/home/v")})


# -- what goes on a host, and the commands run there ------------------------------------------------
FOLDER = HostFolder("/home/u/.nowlab/ssh/lab")


def test_image_paths_and_the_tc_device_are_mapped_onto_the_host():
    argv = ["python3", "/opt/nowlab/agents/owner.py", "--pidfile", "/run/nowlab-owner.pid"]
    assert translate(argv, FOLDER, "enp3s0") == [
        "python3", "/home/u/.nowlab/ssh/lab/agents/owner.py", "--pidfile", "/home/u/.nowlab/ssh/lab/run/nowlab-owner.pid"]
    assert translate(["tc", "-s", "class", "show", "dev", "eth0"], FOLDER, "enp3s0")[-1] == "enp3s0"
    assert translate(["echo", "dev", "eth0"], FOLDER, "enp3s0") == ["echo", "dev", "eth0"]  # only tc's argv


def test_shaping_commands_move_to_the_hosts_interface_unchanged_otherwise():
    s = spec3(workstation=[{"name": "ws1", "egress": "10mbit", "links": {"ws2": "2mbit"}}, {"name": "ws2"}])
    ips = {"ws1": "10.0.0.1", "ws2": "10.0.0.2"}
    cmds = shaping.setup_commands(s, "ws1", ips)
    moved = [tc_on(c, "enp3s0") for c in cmds]
    assert moved == shaping.setup_commands(s, "ws1", ips, dev="enp3s0")
    assert ["qdisc", "replace", "dev", "enp3s0", "root", "handle", "1:", "htb", "default", "2"] == moved[0]
    assert any("2000000bit" in c for c in moved)


def test_every_command_joins_the_workstation_with_its_timeout_and_env():
    argv = command_argv(["mpiexec", "-n", "2", "x"], FOLDER, "eth0", env={"K": "v"}, timeout=5)
    assert argv == ["python3", FOLDER.agent, "join", "--", "timeout", "--kill-after=5", "5",
                    "env", "K=v", "mpiexec", "-n", "2", "x"]
    daemon = command_argv(["python3", "-m", "workloads.zygote"], FOLDER, "eth0", detach=True)
    assert daemon[:4] == ["python3", FOLDER.agent, "detach", "--"]


def test_ssh_config_names_the_workstations_and_uses_the_cluster_key():
    text = ssh_config([Peer("ws1", "10.0.0.1", "root", 22), Peer("ws2", "10.0.0.2", "lab", 2222)], FOLDER.key)
    assert "Host ws2\n    HostName 10.0.0.2\n    User lab\n    Port 2222\n" in text
    assert f"IdentityFile {FOLDER.key}" in text and "BatchMode yes" in text
    assert ssh_wrapper("/usr/bin/ssh", FOLDER.ssh_config) == \
        f'#!/bin/sh\nexec /usr/bin/ssh -F {FOLDER.ssh_config} "$@"\n'
    assert folder_of("/home/u/", "lab") == FOLDER.path


def test_authorized_line_carries_the_cluster_comment_and_is_stripped_by_it(tmp_path):
    line = authorized_line("ssh-ed25519 AAAAC3 nowlab-lab-made-by-keygen\n", "nowlab-lab")
    assert line == "ssh-ed25519 AAAAC3 nowlab-lab\n"
    keys = tmp_path / ".ssh" / "authorized_keys"
    keys.parent.mkdir()
    keys.write_text("ssh-rsa AAAAB3 me@desk")  # no final newline: the added line must not join it
    assert hostagent.authorize(keys, line) and not hostagent.authorize(keys, line)
    assert keys.read_text() == "ssh-rsa AAAAB3 me@desk\nssh-ed25519 AAAAC3 nowlab-lab\n"
    assert oct(keys.stat().st_mode & 0o777) == "0o600"
    assert hostagent.strip_key(keys.read_text(), "nowlab-lab") == "ssh-rsa AAAAB3 me@desk\n"
    with pytest.raises(ValueError, match="^public_key:"):
        authorized_line("garbage", "nowlab-lab")


def test_route_dev_and_covering_network():
    assert route_dev("10.0.0.2 dev enp3s0 src 10.0.0.1 uid 0 \\    cache") == "enp3s0"
    assert route_dev("RTNETLINK answers: Network is unreachable") is None
    assert str(covering_network(["10.0.0.1", "10.0.0.3", "10.0.0.2"])) == "10.0.0.0/30"
    assert str(covering_network(["172.17.0.5"])) == "172.17.0.5/32"


def test_machine_ids_name_cluster_and_host():
    assert split_machine("lab/b") == ("lab", "b")
    with pytest.raises(BackendError, match="not an SSH workstation id"):
        split_machine("abc123")


def test_probe_output_parses_or_names_the_host():
    facts, scratch = parse_probe("a", 'warning\n{"home": "/root", "scratch": "/tmp/x"}\n')
    assert facts["home"] == "/root" and scratch == "/tmp/x"
    with pytest.raises(BackendError, match=r"^host 'a': its python3 gave no facts"):
        parse_probe("a", "bash: python3: command not found")


# -- the host agent against a cgroupfs-shaped folder ------------------------------------------------
def v2_root(tmp_path: Path) -> Path:
    root = tmp_path / "cg2"
    root.mkdir()
    (root / "cgroup.controllers").write_text("cpuset cpu io memory pids\n")
    (root / "cgroup.subtree_control").write_text("")
    return root


def ws(**kw) -> hostagent.Workstation:
    base = dict(cluster="lab", name="ws1", core=1, period_us=10_000, quota_us=2_500, memory=1 << 30)
    base.update(kw)
    return hostagent.Workstation(**base)


def test_v2_writes_cpu_max_cpuset_and_memory(tmp_path):
    root = v2_root(tmp_path)
    # the kernel makes these files in a new cgroup; a plain folder needs them made
    cg = root / "nowlab.lab.ws1"
    cg.mkdir()
    for f in ("cpu.max", "cpuset.cpus", "memory.max", "cgroup.freeze", "cgroup.procs"):
        (cg / f).write_text("")
    w = hostagent.setup(ws(), root)
    assert w.mode == "v2" and w.cgroups == {"unified": str(cg)}
    assert (cg / "cpu.max").read_text() == "2500 10000"
    assert (cg / "cpuset.cpus").read_text() == "1"
    assert (cg / "memory.max").read_text() == str(1 << 30)
    assert hostagent.limits(w) == {"quota_us": 2500, "period_us": 10000, "cpuset": "1"}
    hostagent.write_cap(w, 5_000, 20_000)
    assert (cg / "cpu.max").read_text() == "5000 20000"
    (cg / "cpu.stat").write_text("usage_usec 1234\nuser_usec 1000\n")
    assert hostagent.usage_ns(w) == 1_234_000
    hostagent.hold(w, True)
    assert (cg / "cgroup.freeze").read_text() == "1"
    hostagent.hold(w, False)
    assert (cg / "cgroup.freeze").read_text() == "0"


def test_v1_writes_period_before_quota_and_a_cpuset_with_mems(tmp_path):
    root = tmp_path / "cg1"
    for ctrl in ("cpu", "cpuacct", "cpuset", "freezer"):
        (root / ctrl).mkdir(parents=True)
    (root / "cpu" / "cpu.cfs_quota_us").write_text("-1")
    (root / "cpuset" / "cpuset.mems").write_text("0\n")
    assert hostagent.v1_cap_writes(root / "cpu", 2500, 10000) == [
        (root / "cpu" / "cpu.cfs_period_us", "10000"), (root / "cpu" / "cpu.cfs_quota_us", "2500")]
    w = hostagent.setup(ws(), root)
    assert w.mode == "v1" and set(w.cgroups) == {"cpu", "cpuacct", "cpuset", "freezer"}
    assert (root / "cpuset" / "nowlab.lab.ws1" / "cpuset.mems").read_text() == "0"
    assert hostagent.limits(w) == {"quota_us": 2500, "period_us": 10000, "cpuset": "1"}
    (root / "cpuacct" / "nowlab.lab.ws1" / "cpuacct.usage").write_text("777\n")
    assert hostagent.usage_ns(w) == 777
    (root / "freezer" / "nowlab.lab.ws1" / "freezer.state").write_text("THAWED")
    hostagent.hold(w, True)
    assert (root / "freezer" / "nowlab.lab.ws1" / "freezer.state").read_text() == "FROZEN"


def test_without_cgroup_rights_the_workstation_is_uncapped_not_refused(tmp_path, monkeypatch):
    root = tmp_path / "ro"
    root.mkdir()  # neither v2 nor v1 files: as in a container without cgroup rights
    monkeypatch.setenv("PATH", str(tmp_path))  # no systemctl either
    w = hostagent.setup(ws(), root)
    assert w.mode == "none" and w.cgroups == {}
    assert hostagent.limits(w) == {"quota_us": hostagent.UNCAPPED_QUOTA, "period_us": 10000, "cpuset": "1"}
    caps = backends.CpuLimits(quota_us=-1, period_us=10000, cpuset="1")
    assert caps.quota_us == -1  # what the backend reports: the kernel's "no limit"


def test_systemd_mode_sets_the_slice_properties():
    assert hostagent.systemd_properties(2500, 10000, 1, 1 << 30) == [
        "CPUQuota=25%", "CPUQuotaPeriodSec=10000us", "AllowedCPUs=1", f"MemoryMax={1 << 30}"]
    assert hostagent.slice_name("my-lab", "ws-1") == "nowlab_my_lab_ws_1.slice"
    assert hostagent.systemd_scope_argv("s.slice", ["sleep", "1"])[-3:] == ["--", "sleep", "1"]


def workstation_folder(tmp_path: Path, cluster: str = "lab") -> Path:
    """A host folder as `up` leaves it, uncapped, pinned to a core this process may use.
    Tests that may run at once (pytest-xdist) give their own `cluster`: the processes each
    marks, and the teardown kills, are found by that name on the whole machine."""
    folder = tmp_path / cluster
    folder.mkdir()
    (folder / "hostagent.py").write_bytes(AGENT.read_bytes())
    core = sorted(os.sched_getaffinity(0))[-1]
    hostagent.save(ws(cluster=cluster, core=core, key_comment="nowlab-lab"), folder)
    return folder


def test_join_marks_pins_and_sets_the_paths(tmp_path):
    folder = workstation_folder(tmp_path)
    script = ("import os, json; print(json.dumps([os.environ['NOWLAB_SSH_CLUSTER'], os.environ['PYTHONPATH'], "
              "os.environ['PATH'].split(':')[0], os.environ['OMPI_MCA_orte_launch_agent'], "
              "sorted(os.sched_getaffinity(0))]))")
    out = subprocess.run([sys.executable, str(folder / "hostagent.py"), "join", "--", sys.executable, "-c", script],
                         capture_output=True, text=True, check=True, env={**os.environ, "PYTHONPATH": "/x"}).stdout
    mark, path, first, agent, cores = json.loads(out)
    assert mark == "lab" and path == f"{folder}:/x" and first == f"{folder}/bin"
    assert agent == f"python3 {folder}/hostagent.py join -- orted"
    assert cores == [hostagent.load(folder).core]


def test_the_sampling_agent_writes_a_line_per_interval_and_ends_with_its_workstation(tmp_path):
    """The monitor's three reads as one long-lived process (hostagent sample), parsed by the
    controller's side; it ends by itself once the workstation's record is gone."""
    folder = workstation_folder(tmp_path, "lab-sample")
    core = hostagent.load(folder).core
    tc = [sys.executable, "-c", "print('class htb 1:1 root rate 5Mbit ceil 5Mbit')"]  # stands in for tc's output
    agent = subprocess.Popen([sys.executable, str(folder / "hostagent.py"), "sample", "0.1", "owner.py", "--", *tc],
                             stdout=subprocess.PIPE, text=True)
    try:
        lines = [agent.stdout.readline() for _ in range(3)]
        (folder / hostagent.STATE).unlink()
        assert agent.wait(timeout=10) == 0
    finally:
        agent.kill()
    got = [sampling.parse_line(line)["ws1"] for line in lines]
    assert [g.limits.quota_us for g in got] == [hostagent.UNCAPPED_QUOTA] * 3  # uncapped: the kernel's "no limit"
    assert all(g.limits.cpuset == str(core) for g in got)
    assert all(g.procs_ns == 0 for g in got) and got[0].t < got[1].t < got[2].t
    stamp, _, text = got[0].tc.partition("\n")
    assert float(stamp) >= got[0].t and "rate 5Mbit" in text
    assert sampling.parse_line("Traceback (most recent call last):") == {}
    assert sampling.parse_line('{"t": 1, "ws": {}, "error": "OSError: gone"}') == {}
    argv = sampling.sampler_argv(HostFolder("/srv/nl"), "lab", "ens3", interval_s=1.0, mark="agents/owner.py",
                                 tc_argv=["tc", "-s", "class", "show", "dev", "eth0"])
    assert argv[:2] == ["env", "NOWLAB_SSH_CLUSTER=lab"] and argv[-7:] == [
        "--", "tc", "-s", "class", "show", "dev", "ens3"]
    with pytest.raises(ValueError, match="interval_s"):
        sampling.sampler_argv(HostFolder("/srv/nl"), "lab", "ens3", interval_s=0, mark="m", tc_argv=[])


def test_teardown_kills_marked_processes_strips_the_key_and_removes_the_folder(tmp_path, monkeypatch):
    folder = workstation_folder(tmp_path, "lab-teardown")
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "authorized_keys").write_text("ssh-rsa AAAA me\nssh-ed25519 BBBB nowlab-lab\n")
    monkeypatch.setenv("HOME", str(home))
    subprocess.run([sys.executable, str(folder / "hostagent.py"), "detach", "--", "sleep", "300"], check=True)
    w = hostagent.load(folder)
    deadline = time.monotonic() + 5
    while not hostagent.marked_pids(w) and time.monotonic() < deadline:
        time.sleep(0.02)
    pids = hostagent.marked_pids(w)
    assert len(pids) == 1 and b"sleep" in Path(f"/proc/{pids[0]}/cmdline").read_bytes()
    def proc_state() -> str:
        return Path(f"/proc/{pids[0]}/stat").read_text().rsplit(")", 1)[1].split()[0]

    def settles_to(states: tuple[str, ...]) -> bool:
        deadline = time.monotonic() + 5
        while proc_state() not in states and time.monotonic() < deadline:
            time.sleep(0.01)
        return proc_state() in states

    try:
        hostagent.hold(w, True)  # uncapped: no freezer, the marked processes are stopped by signal
        assert settles_to(("T",))
        hostagent.hold(w, False)
        assert settles_to(("S", "R"))
    except AssertionError:
        hostagent.teardown(w, folder, tmp_path)  # leave no sleeper behind
        raise
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    zygote = socket.socket(socket.AF_UNIX)
    zygote.bind(str(tmp / "nowlab-zygote.sock"))  # what testbed/warm.py leaves in /tmp
    (tmp / "nowlab-mux-0123abcd").write_text("")
    (tmp / "nowlab-pool-output" / "1").mkdir(parents=True)  # testbed/pool.py's rank output
    (tmp / "nowlab-other").write_text("")  # not a name the layers above use: kept
    assert hostagent.teardown(w, folder, tmp)["processes"] >= 1
    zygote.close()
    assert not folder.exists()
    assert sorted(p.name for p in tmp.iterdir()) == ["nowlab-other"]
    assert (home / ".ssh" / "authorized_keys").read_text() == "ssh-rsa AAAA me\n"
    time.sleep(0.1)
    state = Path(f"/proc/{pids[0]}/stat")
    assert not state.exists() or state.read_text().rsplit(")", 1)[1].split()[0] == "Z"


# -- logging in: real errors from a real SSH stack --------------------------------------------------
def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_an_unreachable_host_is_one_line_naming_it():
    access = HostAccess("b", "127.0.0.1", port=closed_port())
    with pytest.raises(BackendError) as err:
        HostLink(access).client()
    assert str(err.value).startswith(f"host 'b' (root@127.0.0.1:{access.port}): unreachable")
    assert "\n" not in str(err.value)


class _RefuseAll(paramiko.ServerInterface):
    def get_allowed_auths(self, username: str) -> str:
        return "publickey"

    def check_auth_publickey(self, username: str, key: paramiko.PKey) -> int:
        return paramiko.AUTH_FAILED


@pytest.fixture
def refusing_server():
    """A real SSH server (paramiko's) on loopback that refuses every key."""
    host_key = paramiko.RSAKey.generate(2048)
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    stop = threading.Event()

    def serve() -> None:
        listener.settimeout(10)
        try:
            conn, _ = listener.accept()
        except OSError:
            return
        t = paramiko.Transport(conn)
        t.add_server_key(host_key)
        t.start_server(server=_RefuseAll())
        stop.wait(10)
        t.close()

    th = threading.Thread(target=serve, daemon=True)
    th.start()
    yield listener.getsockname()[1]
    stop.set()
    listener.close()


def test_a_refused_key_is_one_line_naming_the_host(refusing_server, tmp_path):
    key = make_keypair(tmp_path, "t")  # an ed25519 key, as the cluster's
    access = HostAccess("c", "127.0.0.1", user="lab", port=refusing_server, identity=str(key))
    with pytest.raises(BackendError) as err:
        HostLink(access).client()
    assert str(err.value) == f"host 'c' (lab@127.0.0.1:{refusing_server}): the SSH key was refused for 'lab'"


def test_a_failed_host_at_discovery_leaves_nothing_recorded(monkeypatch, tmp_path):
    monkeypatch.setenv("NOWLAB_HOME", str(tmp_path))
    s = from_dict({"name": "lab", "host": [{"name": "a", "address": "127.0.0.1", "port": closed_port()}],
                   "workstation": [{"name": "ws1"}]})
    be = backends.get("ssh", s)
    assert isinstance(be, Backend) and isinstance(be, SshBackend) and be.kind == "ssh"
    with pytest.raises(BackendError, match=r"^host 'a' \(root@127\.0\.0\.1:\d+\): unreachable"):
        be.cores()
    assert be.cluster_names() == [] and registry.names() == []
    assert be.remove("lab")["containers"] == 0  # nothing recorded: nothing to do


def test_a_backend_without_spec_serves_recorded_clusters_only(monkeypatch, tmp_path):
    monkeypatch.setenv("NOWLAB_HOME", str(tmp_path))
    be = backends.get("ssh")
    with pytest.raises(BackendError, match="finds hosts from a spec"):
        be.cores()
    with pytest.raises(BackendError, match=r"^cluster 'lab': no SSH hosts recorded"):
        be.cpu_limits("lab/a")
    assert be.is_running("lab/a") is False
    registry.save(registry.Record("lab", owner="1:never", home=str(tmp_path), hosts=[HostAccess("a", "10.9.9.9")],
                                  folder="/root/.nowlab/ssh/lab", machines={"ws1": "a"}))
    assert be.cluster_names() == ["lab"] and be.orphaned("lab") and be.leftovers() == ["lab"]
    assert registry.load("lab").host("a").address == "10.9.9.9"


def test_a_cluster_whose_down_missed_a_host_is_stranded_until_forgotten(monkeypatch, tmp_path):
    monkeypatch.setenv("NOWLAB_HOME", str(tmp_path))
    registry.save(registry.Record("lab", owner="1:never", home=str(tmp_path),
                                  hosts=[HostAccess("a", "127.0.0.1", port=closed_port()), HostAccess("b", "10.9.9.9")],
                                  folder="/root/.nowlab/ssh/lab", machines={"ws1": "a", "ws2": "b"}))
    be = backends.get("ssh")
    (tmp_path / "clusters" / "lab").mkdir(parents=True)
    assert be.stranded("lab") == [] and be.forget("lab") == []  # up, as far as this controller knows
    (tmp_path / "clusters" / "lab").rmdir()  # `down` went, and kept the record of hosts it missed
    assert be.stranded("lab") == ["a", "b"]
    assert be.forget("lab") == ["a", "b"] and be.cluster_names() == [] and be.stranded("lab") == []


def test_the_cluster_logs_in_with_the_hosts_own_user_and_port(monkeypatch, tmp_path):
    """Cluster.ssh (readiness) asks the backend how to reach a workstation: not root on 22."""
    monkeypatch.setenv("NOWLAB_HOME", str(tmp_path))
    registry.save(registry.Record("lab", owner="1:never", home=str(tmp_path),
                                  hosts=[HostAccess("a", "10.9.9.9", user="lab", port=2222)],
                                  folder="/home/lab/.nowlab/ssh/lab", machines={"ws1": "a"}))
    be = backends.get("ssh")
    assert be.login("lab/a") == ("lab", 2222)
    with pytest.raises(BackendError, match=r"^cluster 'nope': no SSH hosts recorded"):
        be.login("nope/a")


def test_mpi_is_pinned_to_the_interface_its_peers_are_reached_by(tmp_path, capsys):
    """A lab host has other interfaces (docker0, a second NIC): Open MPI's BTL and OOB are told
    the cluster's, under ob1 (libfabric's `net` provider, cm's, reads no interface setting)."""
    env = hostagent.join_env(tmp_path, {"PATH": "/usr/bin"}, "enp3s0")
    assert env["OMPI_MCA_btl_tcp_if_include"] == env["OMPI_MCA_oob_tcp_if_include"] == "enp3s0"
    assert env["OMPI_MCA_pml"] == "ob1"
    bare = hostagent.join_env(tmp_path, {"PATH": "/usr/bin"})  # interface unknown: Open MPI chooses
    assert not any(k.endswith("if_include") or k.endswith("_pml") for k in bare)
    hostagent.save(ws(), tmp_path)
    shutil.copy(AGENT, tmp_path / "hostagent.py")
    assert subprocess.run([sys.executable, str(tmp_path / "hostagent.py"), "net-dev", "enp3s0"],
                          capture_output=True, text=True, check=True).stdout.strip() == "null"
    assert hostagent.load(tmp_path).net_dev == "enp3s0"
