"""The SSH backend: every workstation a real host, reached over SSH, with no Docker on it.

`cores` logs in to every host the spec lists and reads its facts and speed
(discovery.py), and refuses a spec the hosts cannot take (fit.py) before anything starts.
`up` records the hosts locally (registry.py), then on each host: copies the agent, the
workloads and the cluster's ssh files into the workstation's folder (layout.py), adds the
cluster key to the login's authorized_keys, caps the workstation with the cgroups the
account may use (hostagent.py; uncapped if none), and shapes its links when the login is
root. Any failure on any host removes what was done on all of them before it is raised.
Later calls name a workstation by its machine id, `<cluster>/<host>`, and reach it
through the record, so a backend made without a spec (`Cluster.attach`, the keeper)
finds it. What is kept and lost against containers: docs/ssh-backend.md.
"""
from __future__ import annotations

import ipaddress
import json
import shlex
import socket
import threading
from pathlib import Path
from typing import Iterator, Sequence

import paramiko

import workloads
from testbed import shaping, state
from testbed.backends.base import BackendError, Capabilities, CpuCap, CpuLimits, Progress, Provisioned
from testbed.backends.ownership import owner_tag, tag_alive
from testbed.backends.meter_stream import MeterStream
from testbed.backends.ssh import fit, registry, sampling
from testbed.backends.ssh.agent import SOURCE as AGENT_SOURCE
from testbed.backends.ssh.agent import hostagent
from testbed.backends.ssh.control import SshHostControl
from testbed.backends.ssh.discovery import HostInfo, discover
from testbed.backends.ssh.layout import (HostFolder, Peer, authorized_line, folder_of, ssh_config, ssh_wrapper,
                                         tc_on, translate)
from testbed.backends.ssh.link import HostAccess, HostLink
from testbed.image import CONTAINERS_DIR
from testbed.parallel import parallel
from testbed.placement import Placement
from testbed.remote_exec import ExecResult
from testbed.spec import ClusterSpec, SpecError, cfs_quota_us
from testbed.sshkeys import KEY_NAME

OWNER_AGENTS = CONTAINERS_DIR / "agents"  # the image's /opt/nowlab/agents
NETWORK = "ssh"  # Provisioned.network: the hosts' own network, nothing made
NO_ROUTE_PROBE = "192.0.2.1"  # TEST-NET-1: `ip route get` of it names the default route's interface


def accesses(spec: ClusterSpec) -> list[HostAccess]:
    return [HostAccess(h.name, h.address, h.user, h.port, h.identity) for h in spec.hosts]


def machine_id(cluster: str, host: str) -> str:
    return f"{cluster}/{host}"


def split_machine(machine: str) -> tuple[str, str]:
    cluster, sep, host = machine.partition("/")
    if not sep or not cluster or not host:
        raise BackendError(f"machine: not an SSH workstation id (<cluster>/<host>): {machine!r}")
    return cluster, host


def resolve_ipv4(access: HostAccess) -> str:
    """The host's IPv4 address as the controller resolves it (tc filters and ssh_config need one)."""
    try:
        return str(ipaddress.IPv4Address(access.address))
    except ValueError:
        pass
    try:
        return socket.getaddrinfo(access.address, access.port, socket.AF_INET)[0][4][0]
    except OSError as exc:
        raise BackendError(f"{access.where()}: its address does not resolve ({exc})") from exc


def covering_network(addresses: Sequence[str]) -> ipaddress.IPv4Network:
    """The smallest IPv4 network holding every address: the control channel accepts peers in it."""
    ips = [ipaddress.IPv4Address(a) for a in addresses]
    for prefix in range(32, -1, -1):
        net = ipaddress.IPv4Network(f"{ips[0]}/{prefix}", strict=False)
        if all(ip in net for ip in ips):
            return net
    raise AssertionError("0.0.0.0/0 holds every address")


def _mode(setup_output: str) -> str:
    """How the host agent capped the workstation (hostagent.Workstation.mode), from its answer."""
    try:
        return str(json.loads(setup_output.strip().splitlines()[-1])["mode"])
    except (ValueError, IndexError, KeyError, TypeError):
        return ""


def route_dev(ip_route_output: str) -> str | None:
    """The interface in `ip -o route get ADDR` output ("... dev eth0 src ...")."""
    words = ip_route_output.split()
    return words[words.index("dev") + 1] if "dev" in words[:-1] else None


def same_folder(spec: ClusterSpec, infos: dict[str, HostInfo]) -> str:
    """The workstation folder, which must be one path on every host (layout.py says why)."""
    first = spec.hosts[0].name
    want = folder_of(infos[first].home, spec.name)
    for h in spec.hosts[1:]:
        got = folder_of(infos[h.name].home, spec.name)
        if got != want:
            raise SpecError(f"host {h.name!r}: its nowlab folder would be {got}, not {want} as on host {first!r} "
                            f"(MPI needs one path on every host: use the same login and home)")
    return want


class SshBackend:
    """Real hosts over SSH. Made with the spec to bring a cluster up; without one, it serves
    clusters already up (their hosts are in the registry)."""

    kind = "ssh"
    capabilities = Capabilities(places_on_hosts=True, meters_remotely=True, samples_itself=True, own_login=True)

    def __init__(self, spec: ClusterSpec | None = None, *, meter_seconds: float = 1.0):
        self.spec = spec
        self.meter_seconds = meter_seconds
        self._infos: dict[str, HostInfo] = {}
        self._pinned: dict[str, int] = {}  # host -> its workstation's core
        self._links: dict[HostAccess, HostLink] = {}
        self._records: dict[str, registry.Record] = {}
        self._lock = threading.Lock()

    # -- reaching hosts ----------------------------------------------------------------------
    def link(self, access: HostAccess) -> HostLink:
        with self._lock:
            if access not in self._links:
                self._links[access] = HostLink(access)
            return self._links[access]

    def _record(self, cluster: str) -> registry.Record:
        if cluster not in self._records:
            self._records[cluster] = registry.RECORDS.require(cluster)
        return self._records[cluster]

    def _where(self, machine: str) -> tuple[registry.Record, HostAccess, HostLink, HostFolder]:
        cluster, host = split_machine(machine)
        rec = self._record(cluster)
        access = rec.host(host)
        return rec, access, self.link(access), HostFolder(rec.folder)

    def _agent(self, machine: str, op: str, *args: str) -> object:
        _rec, access, link, folder = self._where(machine)
        code, out, err = link.run(folder.agent_argv(op, *args))
        if code != 0:
            tail = " | ".join((err or out).strip().splitlines()[-2:])
            raise BackendError(f"{access.where()}: agent {op} failed ({code}): {tail}")
        try:
            return json.loads(out.strip().splitlines()[-1])
        except (ValueError, IndexError):
            raise BackendError(f"{access.where()}: agent {op} gave no answer ({out.strip()[:80]!r})") from None

    def _need_spec(self) -> ClusterSpec:
        if self.spec is None:
            raise BackendError("the SSH backend finds hosts from a spec: make it with testbed.backends.get('ssh', spec)")
        return self.spec

    # -- capacity ----------------------------------------------------------------------------
    def discover(self) -> dict[str, HostInfo]:
        """Every host's facts and speed, in parallel; the first host that fails is named."""
        spec = self._need_spec()
        infos = parallel(lambda a: discover(self.link(a), meter_seconds=self.meter_seconds, kernel=spec.kernel),
                         accesses(spec))
        self._infos = {i.name: i for i in infos}
        return self._infos

    def cores(self) -> list[int]:
        """One slot per host (fit.py): the spec's i-th host is slot i."""
        spec = self._need_spec()
        infos = self.discover()
        self._pinned = fit.check_fit(spec, infos)
        return list(range(len(spec.hosts)))

    def place(self, spec: ClusterSpec, factors: dict[int, float] | None = None) -> Placement:
        """Each workstation on its host's slot (fit.assign), a speed workstation capped by its host
        core's measured factor (fit.speed_caps): the slots are hosts, so `Cluster.provision` asks
        here rather than metering this machine's cores."""
        self.spec = spec
        slots = self.cores()
        host_of = fit.assign(spec, {ws: i for i, ws in enumerate(spec.names)})
        index = {h.name: i for i, h in enumerate(spec.hosts)}
        cpu, factor = fit.speed_caps(spec, host_of, self._infos, self._pinned)
        cores = {ws: index[h] for ws, h in host_of.items()}
        load = {slot: 0.0 for slot in slots}
        for ws, slot in cores.items():
            load[slot] += cpu.get(ws, spec.cpu(ws))
        return Placement(cores=cores, load=load, cpu=cpu or None, factor=factor or None)

    def meter_stream(self, cluster: str) -> MeterStream:
        """A speed probe on each host that holds a governed workstation, pinned to its core,
        outside the workstation's cgroup, its stdout followed over an ssh channel (the keeper's
        samples, keyed by slot). It ends when the channel closes (its next line fails), and
        carries the cluster's mark, so `down` stops it too."""
        rec = self._record(cluster)
        spec = self.spec or state.ClusterState.load(cluster).cluster_spec
        slot = {h.name: i for i, h in enumerate(rec.hosts)}
        hosts = sorted({h for ws, h in rec.machines.items() if spec.governed(ws)}, key=slot.__getitem__)
        folder = HostFolder(rec.folder)

        def follow(host: str, _since: float) -> Iterator[bytes]:
            access = rec.host(host)
            argv = ["env", f"PYTHONPATH={folder.path}", "PYTHONDONTWRITEBYTECODE=1", f"{hostagent.MARK}={cluster}",
                    "python3", "-m", "workloads.speed_probe", "--cores", str(rec.cores[host])]
            chan = self.link(access).client().get_transport().open_session()
            try:
                chan.exec_command(shlex.join(argv))
                while chunk := chan.recv(4096):
                    yield chunk
            finally:
                chan.close()

        slot_of = {(h, rec.cores[h]): slot[h] for h in hosts}
        return MeterStream(hosts, follow, slot_of, (paramiko.SSHException, OSError, EOFError, BackendError))

    def metered_slots(self, cluster: str) -> list[int]:
        """The slots (hosts) whose probes the keeper follows: those with a governed workstation."""
        rec = self._record(cluster)
        spec = self.spec or state.ClusterState.load(cluster).cluster_spec
        slot = {h.name: i for i, h in enumerate(rec.hosts)}
        return sorted({slot[h] for ws, h in rec.machines.items() if spec.governed(ws)})

    def pinned_load(self, exclude: str | None = None) -> dict[int, float]:
        """Nothing: a host that carries another cluster is refused by `cores`, not shared."""
        return {}

    # -- clusters ------------------------------------------------------------------------------
    def up(self, spec: ClusterSpec, *, cores: dict[str, int], key_dir: Path, progress: Progress) -> Provisioned:
        self.spec = spec
        if not self._pinned:
            self.cores()
        infos = self._infos
        host_of = fit.assign(spec, cores)
        folder = same_folder(spec, infos)
        all_access = accesses(spec)
        by_name = {a.name: a for a in all_access}
        ips = {ws: resolve_ipv4(by_name[h]) for ws, h in host_of.items()}
        public = (key_dir / f"{KEY_NAME}.pub").read_text()
        private = (key_dir / KEY_NAME).read_bytes()
        rec = registry.Record(cluster=spec.name, owner=owner_tag(), home=str(state.home()), hosts=all_access,
                              folder=folder, machines=dict(host_of),
                              cores={h: self._pinned[h] for h in host_of.values()})
        registry.save(rec)  # before any host changes: `remove` then finds them all
        self._records[spec.name] = rec
        peers = [Peer(ws, ips[ws], by_name[h].user, by_name[h].port) for ws, h in host_of.items()]
        done = 0

        def prepare(ws: str) -> tuple[str, tuple[str, bool]]:
            nonlocal done
            access = by_name[host_of[ws]]
            made = self._prepare_host(spec, ws, access, infos[access.name], HostFolder(folder), ips, peers,
                                      public, private)
            done += 1
            progress("preparing hosts", done, len(host_of))
            return ws, made

        try:
            devs = dict(parallel(prepare, spec.names))
        except BaseException:
            self.remove(spec.name)
            raise
        rec.devs = {host_of[ws]: d for ws, (d, _shaped) in devs.items() if d}
        rec.shaped = sorted(host_of[ws] for ws, (_d, shaped) in devs.items() if shaped)
        registry.save(rec)
        controller = next((infos[h].controller for h in host_of.values() if infos[h].controller), "")
        net = covering_network([*ips.values(), *([controller] if controller else [])])
        return Provisioned(network=NETWORK, subnet=str(net), gateway=controller, image="ssh:" + folder, ips=ips,
                           machines={ws: machine_id(spec.name, h) for ws, h in host_of.items()})

    def _prepare_host(self, spec: ClusterSpec, ws: str, access: HostAccess, info: HostInfo, folder: HostFolder,
                      ips: dict[str, str], peers: list[Peer], public: str, private: bytes) -> tuple[str, bool]:
        """One host made into workstation `ws`: the interface its links leave by ("" if unknown),
        and whether it was shaped (a root login with tc and CAP_NET_ADMIN)."""
        link = self.link(access)
        if not info.ssh:
            raise BackendError(f"{access.where()}: no ssh client (Open MPI launches over it)")
        link.put_file(AGENT_SOURCE.read_bytes(), folder.agent)
        link.put_tree(Path(workloads.SOURCE_DIR), f"{folder.path}/workloads")
        link.put_tree(OWNER_AGENTS, f"{folder.path}/agents")
        link.put_file(private, folder.key, mode=0o600)
        link.put_file(ssh_config(peers, folder.key).encode(), folder.ssh_config, mode=0o600)
        link.put_file(ssh_wrapper(info.ssh, folder.ssh_config).encode(), folder.ssh_wrapper, mode=0o755)
        link.check(["mkdir", "-p", f"{folder.path}/run"], "making the run folder")
        link.check(folder.agent_argv("authorize", authorized_line(public, f"nowlab-{spec.name}")), "adding the cluster key")
        period = spec.cfs_period_us(ws)
        made = link.check(folder.agent_argv("setup", spec.name, ws, str(self._pinned[access.name]),
                                            str(cfs_quota_us(spec.cpu(ws), period)), str(period),
                                            str(spec.memory(ws))), "setting the workstation up")
        if spec.governed(ws) and _mode(made) == "none":
            raise BackendError(f"{access.where()}: {ws} asks a speed in reference cores, which needs a CPU cap, "
                               f"and this login may not use cgroups here; give cpu in cores")
        others = [ip for w, ip in ips.items() if w != ws]
        code, out, _err = link.run(["ip", "-o", "route", "get", others[0] if others else NO_ROUTE_PROBE])
        dev = (route_dev(out) if code == 0 else None) or ""
        if dev:  # MPI's transports are told it: a lab host has others (docker0, a second NIC, Wi-Fi)
            link.check(folder.agent_argv("net-dev", dev), "recording the cluster's interface")
        if not (dev and info.root and info.tc):
            return dev, False
        cmds = shaping.setup_commands(spec, ws, ips, dev=dev)
        code, out, err = link.run(["tc", *cmds[0]])  # the root qdisc: refused without CAP_NET_ADMIN
        if code != 0 and "not permitted" in (err + out).lower():
            return dev, False  # root, but not allowed to shape (a container without NET_ADMIN)
        ExecResult(code, out, err).check(f"{access.where()}: tc {' '.join(cmds[0][:2])} on {dev}")
        link.check(folder.agent_argv("shaped", dev), "recording the shaped interface")  # teardown removes it
        for cmd in cmds[1:]:
            link.check(["tc", *cmd], f"tc {' '.join(cmd[:2])} on {dev}")
        return dev, True

    def remove(self, cluster: str) -> dict[str, int]:
        """Tear the workstation down on every recorded host that answers; the record goes once
        all have been cleaned (an unreachable one stays recorded, for `gc` to try again)."""
        rec = registry.load(cluster) or self._records.get(cluster)
        if rec is None:
            return {"containers": 0, "networks": 0, "volumes": 0, "processes": 0}
        folder = HostFolder(rec.folder) if rec.folder else None

        def clean(access: HostAccess) -> tuple[str, dict[str, int] | None]:
            if folder is None:
                return access.name, {}
            link = self.link(access)
            try:
                code, out, _err = link.run(["test", "-f", folder.agent])
                if code != 0:
                    link.run(["rm", "-rf", "--", folder.path])
                    return access.name, {}
                code, out, _err = link.run(folder.agent_argv("teardown"))
                return access.name, json.loads(out.strip().splitlines()[-1]) if code == 0 and out.strip() else {}
            except (BackendError, ValueError):
                return access.name, None

        results = parallel(clean, rec.hosts)
        # Again, now that every host has killed its processes: an Open MPI daemon that one host's
        # mpiexec started on another while the teardowns ran recreates its session directory
        # under the folder (`orte_tmpdir_base`), and with it the folder (seen once in eight runs).
        parallel(clean, [a for a, (_h, r) in zip(rec.hosts, results) if r is not None])
        missed = [h for h, r in results if r is None]
        if missed:
            rec.hosts = [h for h in rec.hosts if h.name in missed]
            registry.save(rec)
        else:
            registry.forget(cluster)
            self._records.pop(cluster, None)
        done = [r for _h, r in results if r]
        return {"containers": sum(1 for r in done if r.get("cgroups") is not None), "networks": 0, "volumes": 0,
                "processes": sum(r.get("processes", 0) for r in done),
                "qdiscs": sum(r.get("qdiscs", 0) for r in done), "unreachable": len(missed)}

    def cluster_names(self) -> list[str]:
        return registry.names()

    def orphaned(self, cluster: str) -> bool:
        rec = registry.load(cluster)
        return rec is not None and not tag_alive(rec.owner)

    def leftovers(self) -> list[str]:
        return [n for n in registry.names() if (rec := registry.load(n)) is not None and rec.abandoned()]

    def stranded(self, cluster: str) -> list[str]:
        return registry.RECORDS.stranded(cluster)

    def forget(self, cluster: str) -> list[str]:
        self._records.pop(cluster, None)
        return registry.RECORDS.forget_stranded(cluster)

    # -- one workstation -----------------------------------------------------------------------
    def login(self, machine: str) -> tuple[str, int]:
        """(user, port) the workstation's host is reached with: Cluster.ssh logs in so."""
        _rec, access, _link, _folder = self._where(machine)
        return access.user, access.port

    def is_running(self, machine: str) -> bool:
        try:
            _rec, _a, link, folder = self._where(machine)
            return link.run(["test", "-f", f"{folder.path}/ws.json"])[0] == 0
        except (BackendError, KeyError):
            return False

    def is_paused(self, machine: str) -> bool:
        return False  # no engine to pause a host behind nowlab's back

    def logs(self, machine: str, tail: int = 5) -> str:
        try:
            _rec, _a, link, folder = self._where(machine)
            return link.run(["tail", "-n", str(tail), f"{folder.path}/daemons.log"])[1].strip()
        except (BackendError, KeyError) as exc:
            return str(exc)

    def set_cpu_cap(self, machine: str, cap: CpuCap) -> None:
        self._agent(machine, "cap", str(cap.quota_us), str(cap.period_us))

    def write_cpu_cap(self, machine: str, cap: CpuCap) -> None:
        """One ssh round trip and a file write: no engine record to spare."""
        self.set_cpu_cap(machine, cap)

    def hold(self, machine: str, held: bool) -> None:
        self._agent(machine, "hold", "1" if held else "0")

    def cpu_limits(self, machine: str) -> CpuLimits:
        """quota_us -1 (the kernel's "no limit") when the login may not cap the workstation."""
        got = self._agent(machine, "limits")
        assert isinstance(got, dict)
        return CpuLimits(quota_us=int(got["quota_us"]), period_us=int(got["period_us"]), cpuset=str(got["cpuset"]))

    def cpu_usage_ns(self, machine: str) -> int:
        return int(self._agent(machine, "usage"))  # type: ignore[call-overload]

    def oom_kills(self, machine: str) -> int:
        return int(self._agent(machine, "oom"))  # type: ignore[call-overload]

    def processes_cpu_ns(self, machine: str, command_contains: str) -> int:
        return int(self._agent(machine, "procs-cpu", command_contains))  # type: ignore[call-overload]

    def control(self, machine: str) -> SshHostControl:
        rec, access, link, folder = self._where(machine)
        return SshHostControl(link, folder, rec.devs.get(access.name, shaping.DEV))

    def read_net(self, machine: str, argv: Sequence[str], timeout: float = 10.0) -> ExecResult:
        rec, access, link, folder = self._where(machine)
        code, out, err = link.run(translate(argv, folder, rec.devs.get(access.name, shaping.DEV)), timeout=timeout)
        return ExecResult(code, out, err)

    def sample_stream(self, machines: dict[str, str], *, mark: str, tc_argv: Sequence[str],
                      interval_s: float) -> sampling.SshSampleStream:
        """The monitor's readings of `machines` (workstation -> machine id) from one agent per
        host on one ssh channel each (sampling.py), instead of three ssh commands per
        workstation per sample."""
        def starter(machine: str) -> tuple[paramiko.SSHClient, list[str]]:
            rec, access, link, folder = self._where(machine)
            argv = sampling.sampler_argv(folder, split_machine(machine)[0], rec.devs.get(access.name, shaping.DEV),
                                         interval_s=interval_s, mark=mark, tc_argv=tc_argv)
            return link.client(), argv

        return sampling.SshSampleStream(list(machines.values()), starter, stale_s=max(3.0, 3 * interval_s))

    def shape(self, machine: str, commands: Sequence[Sequence[str]]) -> None:
        rec, access, link, _folder = self._where(machine)
        dev = rec.devs.get(access.name)
        if dev is None or access.name not in rec.shaped:
            raise BackendError(f"{access.where()}: its links are not shaped (tc needs root with CAP_NET_ADMIN)")
        for cmd in commands:
            code, out, err = link.run(["tc", *tc_on(cmd, dev)])
            ExecResult(code, out, err).check(f"tc on {access.name}")
