"""The Swarm backend: workstations are standalone containers on several Docker hosts, joined
by one attachable overlay network that Swarm carries.

Why standalone containers made through each host's engine API, and not a stack of services
with placement constraints (issue 18 asked to choose; docs/multi-host.md has the table):

- Kept here, lost with services: a pinned core (a stack file has no `cpuset`, moby#33858),
  a fixed address chosen before start (services get none, moby#24170: MPI host lists, tc
  filters by destination and `extra_hosts` all need the addresses first), live cap changes
  (swarmkit may put a task's container back to its service's spec after `docker update`,
  docker/cli#4570; a standalone container is left alone), and the one-machine code: the
  Docker backend's engine.py makes and finds the containers here too, per host client.
- Lost here, kept with services: Swarm restarts nothing (a lost host's workstations stay
  lost; nowlab fails their jobs), and there is no one command that lists the cluster: the
  controller asks every host, and records which (registry.py) so `gc` can ask them again.
- What Swarm still does: the overlay (VXLAN between the hosts, its subnet ours), the
  membership (`nowlab swarm init/join`; a spec without hosts uses its ready nodes), and
  name-free reachability of a container on another host by its fixed address.

Per host, the same container as on one machine: its core and CFS quota, NET_ADMIN for tc
in its own namespace, the key pair and workloads copied in (no bind mounts across hosts),
and Open MPI pinned to the overlay's subnet with the overlay's MTU leaving VXLAN's 50 bytes
(overlay.py). Caps, counters, tc and commands go through its host's API (`docker update`,
`docker exec`); readings.py says what that costs against cgroup files.

Refusals, one line naming the host, before anything starts on any host: an engine that
does not answer, one outside the Swarm, cores placement cannot fit (placement_hosts). A
failure later in `up` is undone on every host by the caller's `remove`.

The controller is not on the overlay: it reaches workstations through their hosts' APIs,
and TCP connections to their addresses (the resident MPI pool's) through one SSH gateway
container per cluster on the overlay (gateway.py, `connector`); workstations reach it
through docker_gwbridge. Readiness is checked from inside each workstation. Speeds in
reference cores are placed and governed from a probe on each host (metering.py).
"""
from __future__ import annotations

import contextlib
import ipaddress
import threading
import time
import warnings
from dataclasses import asdict
from pathlib import Path
from typing import Iterator, Sequence

import docker
import docker.errors
import requests

from testbed import state
from testbed.backends.base import BackendError, Capabilities, CpuCap, CpuLimits, Progress, Provisioned
from testbed.backends.docker import engine
from testbed.backends.docker.control import DockerControl
from testbed.backends.meter_stream import MeterStream
from testbed.backends.ownership import owner_tag
from testbed.backends.swarm import gateway, host_kernel, membership, metering, overlay, readings, registry, sampling
from testbed.backends.swarm.hosts import SwarmHost, from_nodes, hosts_of, machine_id, split_machine
from testbed.image import CONTAINERS_DIR, ensure_image
from testbed.parallel import parallel
from testbed.placement import Placement
from testbed.placement_hosts import HostCores, place_hosts
from testbed.remote_exec import ExecResult
from testbed.spec import ClusterSpec, SpecError
from testbed.sshkeys import KEY_NAME
from workloads.host.pool_client import Connect

LOCAL_ENGINE = "unix:///var/run/docker.sock"


# What a call to a host's engine raises: the engine's errors, and the connection's when the host is gone.
ENGINE_ERRORS = (docker.errors.DockerException, requests.RequestException)


@contextlib.contextmanager
def _engine_errors(what: str) -> Iterator[None]:
    try:
        yield
    except ENGINE_ERRORS as exc:
        raise BackendError(f"{what}: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}") from exc


def workstation_config(spec: ClusterSpec, ws: str, *, image: str, ips: dict[str, str], core: int, key_dir: Path,
                       subnet: ipaddress.IPv4Network) -> dict:
    """One machine's container parameters (engine.container_config), without bind mounts (the
    files are copied in) and with Open MPI told the overlay in its environment."""
    cfg = engine.container_config(spec, ws, image=image, ips=ips, core=core, key_dir=key_dir, bind=False)
    cfg["environment"] = {**cfg["environment"], **overlay.mpi_env(subnet)}
    return cfg


def workstation_files(key_dir: Path, subnet: ipaddress.IPv4Network) -> dict[str, bytes]:
    """What each workstation gets copied in before start: the key pair, workloads/, and the
    image's Open MPI parameter file pinned to the overlay."""
    files = engine.mounted_files(key_dir)
    files[overlay.MCA_FILE] = overlay.mca_params((CONTAINERS_DIR / "openmpi-mca-params.conf").read_text(),
                                                 subnet).encode()
    return files


class SwarmControl(DockerControl):
    """docker exec through the workstation's host; a failed engine call is a BackendError."""

    def __init__(self, client: docker.DockerClient, container_id: str, where: str):
        super().__init__(client, container_id)
        self.where = where

    def run(self, argv: Sequence[str], *, env: dict[str, str] | None = None,
            timeout: float | None = None) -> ExecResult:
        with _engine_errors(f"{self.where}: exec in {self.container_id[:12]}"):
            return super().run(argv, env=env, timeout=timeout)


READ_ATTEMPTS = 3  # a cgroup read whose exec came back empty is asked again, up to this many times


class SwarmBackend:
    """Standalone containers on a Swarm's hosts. Made with a spec to bring a cluster up;
    without one it serves clusters already up (their hosts are in the registry)."""

    kind = "swarm"
    # the controller is not on the overlay: Cluster checks readiness from inside the workstations
    # and connects through the gateway
    capabilities = Capabilities(places_on_hosts=True, meters_remotely=True, samples_itself=True, gateway=True,
                                controller_on_network=False)

    def __init__(self, spec: ClusterSpec | None = None, *, manager: str | None = None):
        self.spec = spec
        self.manager_url = manager  # None: found by `manager()`
        self._clients: dict[str, docker.DockerClient] = {}
        self._lock = threading.Lock()
        self._hosts: list[SwarmHost] = []
        self._found: dict[str, HostCores] = {}
        self._slots: list[tuple[str, int]] = []  # slot id -> (host, core): Cluster places on slots
        self._held: set[str] = set()
        self._records: dict[str, registry.Record] = {}
        self._tunnels: dict[str, gateway.Tunnel] = {}

    # -- reaching engines ----------------------------------------------------------------------
    def client(self, host: SwarmHost) -> docker.DockerClient:
        with self._lock:
            c = self._clients.get(host.url)
        if c is None:
            c = membership.connect(host.url, what=host.where())
            with self._lock:
                self._clients[host.url] = c
        return c

    def manager(self) -> docker.DockerClient:
        """The engine that makes and removes the overlay: the one named, else this machine's if it
        manages a Swarm, else the first of the spec's hosts that does."""
        if self.manager_url is None:
            candidates = [LOCAL_ENGINE]
            if self.spec is not None and self.spec.hosts:
                candidates += [h.url for h in hosts_of(self.spec)]
            for url in candidates:
                try:
                    c = self.client(SwarmHost("manager", url, ""))
                    if membership.swarm_state(c) == ("active", True):
                        self.manager_url = url
                        return c
                except (BackendError, *ENGINE_ERRORS):
                    continue
            raise BackendError("no Swarm manager: neither this machine's engine nor any of the spec's hosts manages "
                               "a Swarm (nowlab swarm init)")
        c = self.client(SwarmHost("manager", self.manager_url, ""))
        if membership.swarm_state(c) != ("active", True):
            raise BackendError(f"the engine at {self.manager_url} is not a Swarm manager (nowlab swarm init there)")
        return c

    def hosts(self) -> list[SwarmHost]:
        """The spec's hosts, else the Swarm's ready, active nodes."""
        if not self._hosts:
            if self.spec is not None and self.spec.hosts:
                self._hosts = hosts_of(self.spec)
            else:
                with _engine_errors("listing the Swarm's nodes"):
                    self._hosts = from_nodes(membership.nodes(self.manager()))
                if not self._hosts:
                    raise BackendError("the Swarm has no ready, active node")
        return self._hosts

    def _need_spec(self) -> ClusterSpec:
        if self.spec is None:
            raise BackendError("the Swarm backend places from a spec: make it with testbed.backends.get('swarm', spec)")
        return self.spec

    # -- capacity ------------------------------------------------------------------------------
    def find(self) -> dict[str, HostCores]:
        """Every host's cores and what other clusters pinned there, in parallel; a host whose
        engine does not answer, or is outside the Swarm, is named in a one-line error."""
        name = self.spec.name if self.spec is not None else None

        def one(h: SwarmHost) -> tuple[str, HostCores]:
            c = self.client(h)
            with _engine_errors(h.where()):
                if membership.swarm_state(c)[0] != "active":
                    raise BackendError(f"{h.where()}: not in a Swarm (nowlab swarm join)")
                if name is not None and any(engine.labelled(c, name).values()):  # before `up` may remove by it
                    raise SpecError(f"name: {h.where()} already holds a cluster named {name!r} (nowlab down {name})")
                return h.name, HostCores(engine.host_cores(c), engine.pinned_load(c))

        self._found = dict(parallel(one, self.hosts()))
        return self._found

    def place(self, spec: ClusterSpec, factors: dict[int, float] | None = None) -> Placement:
        """Placement across the hosts (placement_hosts.place_hosts, workstations that name a host
        honoured), as one list of slots: slot i is (host, core) `slots()[i]`."""
        self.spec = spec
        found = self._found or self.find()
        if any(spec.speed(n) is not None for n in spec.names) and any(h.factors is None for h in found.values()):
            found = self._with_factors(spec, found)
        p = place_hosts(spec, found)
        self._slots = [(h.name, c) for h in self.hosts() for c in sorted(found[h.name].cores)]
        slot = {hc: i for i, hc in enumerate(self._slots)}
        return Placement(cores={ws: slot[(p.host[ws], p.core[ws])] for ws in spec.names},
                         load={i: p.load[h][c] for i, (h, c) in enumerate(self._slots) if c in p.load[h]},
                         cpu=p.cpu or None, factor=p.factor or None)

    def _with_factors(self, spec: ClusterSpec, found: dict[str, HostCores]) -> dict[str, HostCores]:
        """Every host's cores read by a probe that stops by itself (speeds are placed by them).
        The image goes to the hosts first: the probe is a container of it."""
        local = engine.client()
        image = ensure_image(local)
        by_name = {h.name: h for h in self.hosts() if h.name in found}
        clients = {h: self.client(h) for h in by_name.values()}
        membership.distribute(local, clients, image, log=lambda _m: None)
        files = engine.workloads_files()
        owner = engine.owner_labels(state.home())

        def one(h: SwarmHost) -> tuple[str, HostCores]:
            with _engine_errors(f"{h.where()}: reading its cores' speed"):
                got = metering.read_factors(clients[h], spec.name, h.name, image, found[h.name].cores, files, owner,
                                             spec.kernel)
            return h.name, HostCores(found[h.name].cores, found[h.name].taken, got)

        self._found = dict(parallel(one, list(by_name.values())))
        return self._found

    def slots(self) -> list[tuple[str, int]]:
        if not self._slots:
            found = self._found or self.find()
            self._slots = [(h.name, c) for h in self.hosts() for c in sorted(found[h.name].cores)]
        return list(self._slots)

    def cores(self) -> list[int]:
        return list(range(len(self.slots())))

    def pinned_load(self, exclude: str | None = None) -> dict[int, float]:
        """Caps other clusters pinned, by slot. With `exclude` (`nowlab set` on a running
        cluster), by that cluster's own slots as recorded at its `up`, read afresh."""
        rec = registry.load(exclude) if exclude is not None else None
        if rec is None:
            found = self._found or self.find()
            return {i: found[h].taken[c] for i, (h, c) in enumerate(self.slots()) if found[h].taken.get(c)}
        load: dict[int, float] = {}
        for h in rec.hosts:
            with _engine_errors(h.where()):
                got = engine.pinned_load(self.client(h), exclude=exclude)
            for i, (host, core) in enumerate(rec.slots):
                if host == h.name and got.get(core):
                    load[i] = got[core]
        return load

    # -- clusters ------------------------------------------------------------------------------
    def up(self, spec: ClusterSpec, *, cores: dict[str, int], key_dir: Path, progress: Progress) -> Provisioned:
        self.spec = spec
        slots = self.slots()
        by_name = {h.name: h for h in self.hosts()}
        host_of = {ws: slots[cores[ws]][0] for ws in spec.names}
        used = sorted({host_of[ws] for ws in spec.names}, key=list(by_name).index)
        manager = self.manager()
        rec = registry.Record(cluster=spec.name, owner=owner_tag(), home=str(state.home()),
                              manager=str(self.manager_url),
                              hosts=[by_name[h] for h in used], machines=host_of, slots=[list(x) for x in slots])
        registry.save(rec)  # before any host changes: `remove` then finds them all
        self._records[spec.name] = rec
        clients = {by_name[h]: self.client(by_name[h]) for h in used}

        local = engine.client()  # the image is built here (mmdebstrap needs this machine's apt)
        image = ensure_image(local, log=lambda msg: progress(msg, 0, 1))
        membership.distribute(local, clients, image, log=lambda msg: progress(msg, 0, 1))
        self._check_neighbours(spec, host_of, {h.name: c for h, c in clients.items()}, image)

        owned_by = engine.owner_labels(state.home())
        mtu = overlay.overlay_mtu(min(self._underlay_mtu(c) for c in clients.values()))
        taken = [s for c in [manager, *clients.values()] for s in engine.used_subnets(c)]
        with _engine_errors("making the overlay network"):
            net_id, subnet = engine.create_network(
                manager, spec.name, len(spec.names), owned_by, driver="overlay",
                options=overlay.overlay_options(mtu), attachable=True, pool=overlay.OVERLAY_POOL, also_used=taken,
                dynamic_upper_half=True)
        ips = engine.addresses(spec, subnet)
        files = workstation_files(key_dir, subnet)
        done = 0

        def create_and_start(ws: str) -> tuple[str, str]:
            nonlocal done
            host = by_name[host_of[ws]]
            c = clients[host]
            cfg = workstation_config(spec, ws, image=image, ips=ips, core=slots[cores[ws]][1], key_dir=key_dir,
                                     subnet=subnet)
            with _engine_errors(f"{host.where()}: starting {ws}"):
                cid = engine.create_container(c, engine.network_name(spec.name), cfg, owned_by)
                engine.copy_in(c, cid, files)
                engine.start(c, cid)
            done += 1
            progress("starting workstations", done, len(spec.names))
            return ws, machine_id(spec.name, host.name, cid)

        machines = dict(parallel(create_and_start, spec.names))
        first = by_name[used[0]]
        progress("starting the gateway", 0, 1)
        rec.gateway = asdict(self._start_gateway(clients[first], first, spec.name, image, key_dir, owned_by))
        registry.save(rec)
        progress("starting the speed meters", 0, 1)
        rec.meters = self._start_meters(spec, clients, by_name, host_of, slots, cores, image, files, owned_by)
        registry.save(rec)
        port = int(first.url.rpartition(":")[2]) if first.url.startswith("tcp://") else 22
        controller = overlay.route_source(first.address, port)
        bridges = [s for c in clients.values() for s in self._gwbridge(c)]
        control = overlay.control_network(controller, [h.address for h in clients], bridges)
        return Provisioned(network=net_id, subnet=str(control), gateway=controller, image=image, ips=ips,
                           machines=machines)

    @staticmethod
    def _start_gateway(c: docker.DockerClient, host: SwarmHost, cluster: str, image: str, key_dir: Path,
                       owned_by: dict[str, str], timeout_s: float = 60.0) -> gateway.GatewayAddress:
        """The cluster's SSH gateway on `host` (gateway.py): started, its port and host key read."""
        address = gateway.resolve_ipv4(host.address)
        cfg = gateway.gateway_config(cluster, image, address)
        api = c.api
        with _engine_errors(f"{host.where()}: starting the gateway"):
            hc = api.create_host_config(port_bindings=cfg["port_bindings"], network_mode=engine.network_name(cluster),
                                        security_opt=cfg["security_opt"], init=True)
            cid = api.create_container(image, name=cfg["name"], hostname=cfg["hostname"],
                                       labels={**cfg["labels"], **owned_by}, environment=cfg["environment"],
                                       ports=cfg["ports"], host_config=hc, detach=True)["Id"]
            engine.copy_in(c, cid, gateway.gateway_files(key_dir))
            engine.start(c, cid)
            port = gateway.published_port(api.inspect_container(cid))
            ctl = DockerControl(c, cid)
            deadline = time.monotonic() + timeout_s
            while not (res := ctl.run(["cat", "/etc/ssh/ssh_host_ed25519_key.pub"])).ok:
                if time.monotonic() > deadline:
                    raise BackendError(f"{host.where()}: the gateway has no host key after {timeout_s:g} s")
                time.sleep(0.2)
        return gateway.GatewayAddress(host.name, address, port, res.stdout.strip())

    @staticmethod
    def _start_meters(spec: ClusterSpec, clients: dict[SwarmHost, docker.DockerClient],
                      by_name: dict[str, SwarmHost], host_of: dict[str, str], slots: list[tuple[str, int]],
                      cores: dict[str, int], image: str, files: dict[str, bytes],
                      owned_by: dict[str, str]) -> dict[str, str]:
        """One speed probe per host, on the cores the cluster's workstations use there."""
        used: dict[str, set[int]] = {}
        for ws in spec.names:
            used.setdefault(host_of[ws], set()).add(slots[cores[ws]][1])

        def one(h: str) -> tuple[str, str]:
            host = by_name[h]
            with _engine_errors(f"{host.where()}: starting its speed meter"):
                cfg = metering.probe_config(spec.name, h, image, sorted(used[h]))
                return h, metering.create(clients[host], cfg, files, owned_by)

        return dict(parallel(one, sorted(used)))

    def meter_stream(self, cluster: str) -> MeterStream:
        """The cluster's probes as one stream of Samples keyed by slot (testbed/keeper.py reads it)."""
        rec = self._record(cluster)
        if not rec.meters:
            raise BackendError(f"cluster {cluster!r}: no speed meters recorded (made by an older nowlab); "
                               f"bring it down and up again")
        hosts = {h.name: h for h in rec.hosts}

        def follow(host: str, since: float) -> Iterator[bytes]:  # since= is whole seconds: the stream drops repeats
            return self.client(hosts[host]).api.logs(rec.meters[host], stream=True, follow=True, stdout=True,
                                                     stderr=False, since=int(since))

        slot_of = {(h, c): i for i, (h, c) in enumerate(tuple(x) for x in rec.slots)}
        return MeterStream(rec.meters, follow, slot_of, (docker.errors.DockerException, OSError))

    def metered_slots(self, cluster: str) -> list[int]:
        """The slots the cluster's probes meter (the keeper's `cores`)."""
        rec = self._record(cluster)
        return [i for i, (h, _c) in enumerate(rec.slots) if h in rec.meters]  # meters: the used hosts only

    def sample_stream(self, machines: dict[str, str], *, mark: str, tc_argv: Sequence[str],
                      interval_s: float) -> sampling.SampleStream:
        """The monitor's readings of `machines` (workstation -> machine id) from one sampler per
        host (sampling.py), each started at the stream's first read if it is not running."""
        by_host: dict[str, dict[str, str]] = {}
        cluster = ""
        for ws, machine in machines.items():
            try:
                cluster, host, cid = split_machine(machine)
            except ValueError as exc:
                raise BackendError(str(exc)) from None
            by_host.setdefault(host, {})[ws] = cid
        rec = self._record(cluster)
        owned_by = engine.owner_labels(state.home())

        def starter(host_name: str) -> tuple[docker.DockerClient, str]:
            host = rec.host(host_name)
            c, ids = self.client(host), by_host[host_name]
            with _engine_errors(f"{host.where()}: starting its sampler"):
                image = c.api.inspect_container(next(iter(ids.values())))["Config"]["Image"]
                cfg = sampling.sampler_config(cluster, host_name, image, ids, mark=mark, tc_argv=tc_argv,
                                              interval_s=interval_s)
                return c, sampling.ensure(c, cfg, owned_by)

        return sampling.SampleStream({h: (lambda h=h: starter(h)) for h in by_host},
                                     stale_s=max(3.0, 3 * interval_s))

    def connector(self, cluster: str) -> Connect:
        """How the controller opens a TCP connection to a workstation's address: a channel
        through the cluster's gateway (socket.create_connection's meaning)."""
        rec = self._record(cluster)
        if not rec.gateway:
            raise BackendError(f"cluster {cluster!r}: no gateway recorded (made by an older nowlab); "
                               f"bring it down and up again")
        with self._lock:
            if cluster not in self._tunnels:
                key = state.cluster_dir(cluster) / "ssh" / KEY_NAME
                self._tunnels[cluster] = gateway.Tunnel(gateway.GatewayAddress(**rec.gateway), key)
            return self._tunnels[cluster].connect

    @staticmethod
    def _check_neighbours(spec: ClusterSpec, host_of: dict[str, str], clients: dict[str, docker.DockerClient],
                          image: str) -> None:
        """Warn, naming the host, where the cluster may fill the kernel's neighbour table
        (overlay.neighbour_entries); hosts are asked only when some host may need more than
        half the kernel's default, so small clusters pay nothing."""
        on = {h: sum(1 for ws in spec.names if host_of[ws] == h) for h in clients}
        need = {h: overlay.neighbour_entries(k, len(spec.names)) for h, k in on.items()}
        if max(need.values(), default=0) <= overlay.NEIGH_CHECK_ABOVE:
            return
        hosts = sorted(need)
        limits = dict(zip(hosts, parallel(lambda h: host_kernel.read_sysctl(clients[h], image, overlay.NEIGH_SYSCTL),
                                          hosts)))
        for line in overlay.neighbour_warnings(need, limits):
            warnings.warn(line, stacklevel=2)

    @staticmethod
    def _underlay_mtu(c: docker.DockerClient) -> int:
        """The MTU the host's engine gives its bridges (its default-MTU; 1500 unless set)."""
        with contextlib.suppress(docker.errors.DockerException, KeyError, ValueError):
            opts = c.api.inspect_network("bridge")["Options"]
            return int(opts.get("com.docker.network.driver.mtu", overlay.UNDERLAY_MTU))
        return overlay.UNDERLAY_MTU

    @staticmethod
    def _gwbridge(c: docker.DockerClient) -> list[ipaddress.IPv4Network]:
        """docker_gwbridge's subnet on a host (made when its first overlay container starts)."""
        with contextlib.suppress(docker.errors.DockerException):
            cfg = c.api.inspect_network("docker_gwbridge").get("IPAM", {}).get("Config") or []
            return [ipaddress.ip_network(x["Subnet"]) for x in cfg if ":" not in x.get("Subnet", ":")]
        return []

    def _record(self, cluster: str) -> registry.Record:
        if cluster not in self._records:
            self._records[cluster] = registry.RECORDS.require(cluster)
        return self._records[cluster]

    def remove(self, cluster: str) -> dict[str, int]:
        """Containers on every recorded host that answers, then the overlay on the manager. The
        record goes once every host was cleaned; one that could not be reached stays in it."""
        rec = registry.load(cluster) or self._records.get(cluster)
        with self._lock:
            tunnel = self._tunnels.pop(cluster, None)
        if tunnel is not None:
            tunnel.close()
        hosts = list(rec.hosts) if rec else []
        if self.spec is not None and self.spec.name == cluster:
            hosts += [h for h in hosts_of(self.spec) if h.url not in {x.url for x in hosts}]

        def clean(h: SwarmHost) -> tuple[SwarmHost, dict[str, int] | None]:
            try:
                c = self.client(h)
                for cid in engine.labelled(c, cluster)["containers"]:
                    with contextlib.suppress(*ENGINE_ERRORS):  # a paused one cannot be killed
                        if c.api.inspect_container(cid)["State"]["Paused"]:
                            c.api.unpause(cid)
                return h, engine.remove(c, cluster, kinds=("containers", "volumes"))
            except (BackendError, *ENGINE_ERRORS):
                return h, None

        results = parallel(clean, hosts) if hosts else []
        networks = 0
        missed = [h for h, r in results if r is None]
        try:
            manager = self.client(SwarmHost("manager", rec.manager, "")) if rec else self.manager()
            networks = engine.remove(manager, cluster, kinds=("networks",))["networks"]
        except (BackendError, *ENGINE_ERRORS):
            if rec is not None:
                missed.append(SwarmHost("manager", rec.manager, ""))
        for h, r in results:  # a worker keeps a stale copy of the overlay until its last container goes
            if r is not None:
                with contextlib.suppress(BackendError, *ENGINE_ERRORS):
                    engine.remove(self.client(h), cluster, kinds=("networks",))
        if rec is not None:
            if missed:
                rec.hosts = [h for h in rec.hosts if h.url in {m.url for m in missed}] or rec.hosts
                registry.save(rec)
            else:
                registry.forget(cluster)
                self._records.pop(cluster, None)
        done = [r for _h, r in results if r]
        return {"containers": sum(r["containers"] for r in done), "networks": networks,
                "volumes": sum(r["volumes"] for r in done), "unreachable": len(missed)}

    def cluster_names(self) -> list[str]:
        return registry.names()

    def orphaned(self, cluster: str) -> bool:
        rec = registry.load(cluster)
        return rec is not None and rec.abandoned()

    def stranded(self, cluster: str) -> list[str]:
        return registry.RECORDS.stranded(cluster)

    def forget(self, cluster: str) -> list[str]:
        self._records.pop(cluster, None)
        return registry.RECORDS.forget_stranded(cluster)

    def leftovers(self) -> list[str]:
        """Recorded clusters nobody looks after, and labelled ones on any reachable host
        (spec's, recorded, or the Swarm's) whose `up` is gone."""
        found = {n for n in registry.names() if (rec := registry.load(n)) is not None and rec.abandoned()}
        candidates = {h.url: h for h in registry.known_hosts()}
        with contextlib.suppress(BackendError):
            candidates.update({h.url: h for h in self.hosts()})
        for h in candidates.values():
            with contextlib.suppress(BackendError, *ENGINE_ERRORS):
                found.update(engine.leftovers(self.client(h)))
        return sorted(found)

    # -- one workstation -----------------------------------------------------------------------
    def _where(self, machine: str) -> tuple[docker.DockerClient, str, SwarmHost]:
        try:
            cluster, host_name, cid = split_machine(machine)
            host = self._record(cluster).host(host_name)
        except (ValueError, KeyError) as exc:
            raise BackendError(str(exc)) from None
        return self.client(host), cid, host

    def is_running(self, machine: str) -> bool:
        try:
            c, cid, _h = self._where(machine)
            return bool(c.api.inspect_container(cid)["State"]["Running"])
        except (BackendError, *ENGINE_ERRORS, KeyError):
            return False

    def is_paused(self, machine: str) -> bool:
        """Paused through the engine by someone else: this backend's own holds pause too, and
        are told apart only within this process (docs/multi-host.md)."""
        try:
            c, cid, _h = self._where(machine)
            return bool(c.api.inspect_container(cid)["State"]["Paused"]) and machine not in self._held
        except (BackendError, *ENGINE_ERRORS, KeyError):
            return False

    def logs(self, machine: str, tail: int = 5) -> str:
        c, cid, h = self._where(machine)
        with _engine_errors(f"{h.where()}: logs of {cid[:12]}"):
            return c.api.logs(cid, tail=tail).decode(errors="replace").strip()

    def set_cpu_cap(self, machine: str, cap: CpuCap) -> None:
        c, cid, h = self._where(machine)
        with _engine_errors(f"{h.where()}: cpu cap of {cid[:12]}"):
            engine.update_cpu(c, cid, cap.cores, cap.period_us)

    def write_cpu_cap(self, machine: str, cap: CpuCap) -> None:
        """Through the engine too: the host's cgroup files are not the controller's to write."""
        self.set_cpu_cap(machine, cap)

    def hold(self, machine: str, held: bool) -> None:
        """The engine's pause (the cgroup freezer, on the workstation's host)."""
        c, cid, h = self._where(machine)
        with _engine_errors(f"{h.where()}: {'pausing' if held else 'unpausing'} {cid[:12]}"):
            paused = bool(c.api.inspect_container(cid)["State"]["Paused"])
            if held and not paused:
                self._held.add(machine)
                c.api.pause(cid)
            elif not held and paused:
                c.api.unpause(cid)
        if not held:
            self._held.discard(machine)

    def _read(self, machine: str, command_contains: str | None = None) -> dict:
        # An exec that exits 0 with no output at all lost its output in the engine (seen once in
        # CI with the host loaded, 28 Nov 2026): the read changes nothing, so it is asked again.
        for attempt in range(READ_ATTEMPTS):
            res = self.control(machine).run(readings.reader_argv(command_contains), timeout=30)
            if not res.ok:
                raise BackendError(f"{machine}: reading its cgroup failed ({res.exit_code}): "
                                   f"{res.stderr.strip()[-200:]}")
            if res.stdout.strip() or attempt == READ_ATTEMPTS - 1:
                break
        try:
            return readings.parse(res.stdout)
        except ValueError as exc:
            raise BackendError(f"{machine}: {exc}") from None

    def cpu_limits(self, machine: str) -> CpuLimits:
        return readings.limits(self._read(machine))

    def cpu_usage_ns(self, machine: str) -> int:
        return readings.usage_ns(self._read(machine))

    def oom_kills(self, machine: str) -> int:
        return readings.oom_kills(self._read(machine))

    def processes_cpu_ns(self, machine: str, command_contains: str) -> int:
        return readings.procs_ns(self._read(machine, command_contains))

    def control(self, machine: str) -> SwarmControl:
        c, cid, h = self._where(machine)
        return SwarmControl(c, cid, h.where())

    def read_net(self, machine: str, argv: Sequence[str], timeout: float = 10.0) -> ExecResult:
        """One docker exec on the workstation's host (no nsenter across hosts)."""
        with _engine_errors(f"{machine}: network read"):
            return self.control(machine).run(argv, timeout=timeout)

    def shape(self, machine: str, commands: Sequence[Sequence[str]]) -> None:
        """tc inside the container, through its host's API: NET_ADMIN in its own namespace only."""
        for cmd in commands:
            self.control(machine).run(["tc", *cmd]).check(f"tc on {machine}")
