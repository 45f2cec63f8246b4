"""Docker's engine API for the Docker backend: one bridge network and one pinned, capped
container per workstation, and finding and removing them by label.

This module does I/O and holds no policy: the spec, placement and shaping it is handed
are decided elsewhere. Everything it creates carries the `nowlab.cluster` label, and
removal always goes by that label, never by name matching.
"""
from __future__ import annotations

import io
import ipaddress
import tarfile
from pathlib import Path
from typing import Iterable

import docker
import docker.errors
from docker.types import IPAMConfig, IPAMPool

import workloads
from testbed import shaping
from testbed.backends import ownership
from testbed.backends.ownership import any_alive, owner_tag
from testbed.parallel import parallel
from testbed.spec import ClusterSpec, cfs_quota_us
from testbed.sshkeys import KEY_NAME

LABEL = "nowlab.cluster"
WS_LABEL = "nowlab.workstation"
ROLE_LABEL = "nowlab.role"  # a cluster's container that is not a workstation (Swarm's gateway, probes)
HOME_LABEL = "nowlab.home"  # the state folder of the process that made the cluster
OWNER_LABEL = "nowlab.owner"  # "pid:start-time" of that process, to tell if it still runs
# Subnets for cluster networks come from this block, /24 each, skipping any in use.
# Tasks (processes and threads) a workstation may hold: its sshd, resident ranks, orted and
# owners use a few dozen; the bound is there so a fork bomb in one job stops at its workstation.
PIDS_LIMIT = 1024
SUBNET_POOL = ipaddress.ip_network("172.28.0.0/14")


def client() -> docker.DockerClient:
    try:
        c = docker.from_env(timeout=120)
        c.ping()
    except docker.errors.DockerException as exc:
        raise RuntimeError(f"the Docker engine does not answer ({exc}); run scripts/bootstrap.sh") from None
    return c


def network_name(cluster: str) -> str:
    return f"nowlab-{cluster}"


def container_name(cluster: str, ws: str) -> str:
    return f"nowlab-{cluster}-{ws}"


def used_subnets(c: docker.DockerClient) -> list[ipaddress.IPv4Network]:
    used = []
    for net in c.api.networks():
        for cfg in (net.get("IPAM") or {}).get("Config") or []:
            if cfg.get("Subnet") and ":" not in cfg["Subnet"]:
                used.append(ipaddress.ip_network(cfg["Subnet"]))
    return used


def subnet_prefix(size: int) -> int:
    """The longest prefix whose subnet holds `size` workstations beside the gateway (a /24 up to 250,
    as before, so existing clusters keep their layout)."""
    if size <= 250:
        return 24
    for prefix in range(23, 15, -1):
        if 2 ** (32 - prefix) - 3 >= size:  # network, broadcast and gateway are not workstations
            return prefix
    raise ValueError(f"workstations: {size} do not fit one cluster network (at most {2 ** 16 - 3})")


def create_network(c: docker.DockerClient, cluster: str, size: int,
                   owner: dict[str, str] | None = None, *, driver: str = "bridge",
                   options: dict[str, str] | None = None, attachable: bool = False,
                   pool: ipaddress.IPv4Network = SUBNET_POOL,
                   also_used: Iterable[ipaddress.IPv4Network] = (),
                   dynamic_upper_half: bool = False) -> tuple[str, ipaddress.IPv4Network]:
    """A private network with a subnet of our choosing, so workstation IPs are known before start.

    A bridge on this host by default; the Swarm backend makes an attachable overlay with it
    (`driver`, `options`, `attachable`), avoiding the subnets every one of its hosts uses
    (`also_used`). `dynamic_upper_half`: the subnet is twice as large and the engine hands out
    addresses of its own (an overlay's per-node load balancer endpoints) only from its upper
    half, so they never take a workstation's fixed address (`addresses` uses the lower half)."""
    prefix = subnet_prefix(size) - (1 if dynamic_upper_half else 0)
    tried = 0
    extra = list(also_used)
    for subnet in pool.subnets(new_prefix=prefix):
        if any(subnet.overlaps(u) for u in extra):
            continue
        if any(subnet.overlaps(u) for u in used_subnets(c)):
            continue
        iprange = str(dynamic_range(subnet)) if dynamic_upper_half else None
        ipam = IPAMConfig(pool_configs=[IPAMPool(subnet=str(subnet), gateway=str(subnet[1]), iprange=iprange)])
        try:
            net = c.networks.create(network_name(cluster), driver=driver, ipam=ipam, labels={LABEL: cluster, **(owner or {})},
                                    options=options, attachable=attachable or None, check_duplicate=True)
        except docker.errors.APIError as exc:
            # Another cluster took the subnet between our look and our create: try the next.
            tried += 1
            if "overlap" in str(exc).lower() and tried < 20:
                continue
            raise
        return net.id, subnet
    raise RuntimeError(f"no free /{prefix} left in {pool} for a cluster network")


def dynamic_range(subnet: ipaddress.IPv4Network) -> ipaddress.IPv4Network:
    """The upper half of `subnet`: where the engine's own allocations go (create_network)."""
    return list(subnet.subnets(prefixlen_diff=1))[1]


def addresses(spec: ClusterSpec, subnet: ipaddress.IPv4Network) -> dict[str, str]:
    hosts = list(subnet.hosts())
    return {name: str(hosts[i + 1]) for i, name in enumerate(spec.names)}  # hosts[0] is the gateway


def mounts(key_dir: Path) -> dict[str, dict[str, str]]:
    """The controller's files a workstation sees: the cluster key pair and the workloads (live).

    Bind mounts need the engine on the controller's machine; an engine elsewhere (the Swarm
    backend's hosts) gets the same paths copied in before start instead (`files_tar`)."""
    return {str(key_dir / KEY_NAME): {"bind": f"/run/secrets/{KEY_NAME}", "mode": "ro"},
            str(key_dir / f"{KEY_NAME}.pub"): {"bind": f"/run/secrets/{KEY_NAME}.pub", "mode": "ro"},
            str(workloads.SOURCE_DIR): {"bind": "/opt/nowlab/workloads", "mode": "ro"}}


def files_tar(files: dict[str, bytes]) -> bytes:
    """A tar of absolute paths -> contents, for `put_archive(container, "/", ...)`. Parent
    folders are made by Docker; modes are 0644 except private keys (0600)."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for path, data in sorted(files.items()):
            if not path.startswith("/") or ".." in path.split("/"):
                raise ValueError(f"files: not an absolute path without '..': {path!r}")
            info = tarfile.TarInfo(path.lstrip("/"))
            info.size = len(data)
            info.mode = 0o600 if path.endswith(KEY_NAME) else 0o644
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def _tree(src: Path, target: str) -> dict[str, bytes]:
    """Every file under `src` (no __pycache__) at `target`/its relative path."""
    return {f"{target}/{f.relative_to(src)}": f.read_bytes() for f in sorted(src.rglob("*"))
            if f.is_file() and "__pycache__" not in f.parts}


def workloads_files() -> dict[str, bytes]:
    """The workloads folder alone as files to copy, where `mounts` binds it (a host's probe)."""
    source = str(workloads.SOURCE_DIR)
    return _tree(Path(source), mounts(Path())[source]["bind"])


def mounted_files(key_dir: Path) -> dict[str, bytes]:
    """What `mounts` shows a workstation, as files to copy: path in the container -> bytes."""
    out: dict[str, bytes] = {}
    for source, target in mounts(key_dir).items():
        src = Path(source)
        out.update(_tree(src, target["bind"]) if src.is_dir() else {target["bind"]: src.read_bytes()})
    return out


def copy_in(c: docker.DockerClient, container_id: str, files: dict[str, bytes]) -> None:
    """Put files into a created (not yet started) container, through its engine's API."""
    if not c.api.put_archive(container_id, "/", files_tar(files)):
        raise RuntimeError(f"copying {len(files)} files into {container_id[:12]} failed")


def container_config(spec: ClusterSpec, ws: str, *, image: str, ips: dict[str, str], core: int,
                     key_dir: Path, bind: bool = True) -> dict:
    """The Docker parameters of one workstation, as plain data (tested without Docker).

    `bind`: the controller's key and workloads are bind-mounted (the engine is on this
    machine); without, `binds` is empty and the caller copies `mounted_files` in."""
    share = spec.cpu(ws)
    period = spec.cfs_period_us(ws)
    return {
        "image": image,
        "name": container_name(spec.name, ws),
        "hostname": ws,
        "labels": {LABEL: spec.name, WS_LABEL: ws},
        "environment": {"NOWLAB_TC": shaping.as_script(shaping.setup_commands(spec, ws, ips)),
                        "NOWLAB_WORKSTATION": ws, "NOWLAB_CLUSTER": spec.name},
        "ip": ips[ws],
        "cpu_period": period,
        "cpu_quota": cfs_quota_us(share, period),
        "cpuset_cpus": str(core),
        "cap_add": ["NET_ADMIN"],  # tc inside; the only capability added
        "mem_limit": spec.memory(ws),
        "memswap_limit": spec.memory(ws),  # the same: no swap, so a runaway job is killed, not paged
        "pids_limit": PIDS_LIMIT,
        "security_opt": ["no-new-privileges"],
        "binds": mounts(key_dir) if bind else {},
        "extra_hosts": {n: ip for n, ip in ips.items()},
        "sysctls": {"net.ipv4.tcp_congestion_control": spec.defaults.tcp},
    }


def create_container(c: docker.DockerClient, network: str, cfg: dict, owner: dict[str, str] | None = None) -> str:
    api = c.api
    host_config = api.create_host_config(
        cpu_period=cfg["cpu_period"], cpu_quota=cfg["cpu_quota"], cpuset_cpus=cfg["cpuset_cpus"],
        cap_add=cfg["cap_add"], privileged=False, binds=cfg["binds"], network_mode=network,
        mem_limit=cfg["mem_limit"], memswap_limit=cfg["memswap_limit"], pids_limit=cfg["pids_limit"],
        security_opt=cfg["security_opt"],
        extra_hosts=cfg["extra_hosts"], sysctls=cfg["sysctls"], init=True)
    networking = api.create_networking_config({network: api.create_endpoint_config(ipv4_address=cfg["ip"])})
    created = api.create_container(cfg["image"], name=cfg["name"], hostname=cfg["hostname"],
                                   labels={**cfg["labels"], **(owner or {})},
                                   environment=cfg["environment"], host_config=host_config,
                                   networking_config=networking, detach=True)
    return created["Id"]


def start(c: docker.DockerClient, container_id: str) -> None:
    c.api.start(container_id)


def update_cpu(c: docker.DockerClient, container_id: str, share: float, period_us: int) -> None:
    c.api.update_container(container_id, cpu_period=period_us, cpu_quota=cfs_quota_us(share, period_us))


def labelled(c: docker.DockerClient, cluster: str | None = None) -> dict[str, list[str]]:
    """Ids of everything carrying the nowlab label (of one cluster, or of all)."""
    flt = {"label": f"{LABEL}={cluster}" if cluster else LABEL}
    return {
        "containers": [x["Id"] for x in c.api.containers(all=True, filters=flt)],
        "networks": [x["Id"] for x in c.api.networks(filters=flt)],
        "volumes": [v["Name"] for v in (c.api.volumes(filters=flt).get("Volumes") or [])],
    }


KINDS = ("containers", "networks", "volumes")


def remove(c: docker.DockerClient, cluster: str | None = None, kinds: tuple[str, ...] = KINDS) -> dict[str, int]:
    """Remove every labelled container, network and volume (of one cluster, or all). Idempotent.

    `kinds` narrows it: the Swarm backend removes containers on every host before the
    overlay network, which only its manager may remove."""
    unknown = set(kinds) - set(KINDS)
    if unknown:
        raise ValueError(f"kinds: unknown {sorted(unknown)} (known: {', '.join(KINDS)})")
    found = {k: (v if k in kinds else []) for k, v in labelled(c, cluster).items()}

    def rm_container(cid: str) -> None:
        try:
            c.api.remove_container(cid, force=True, v=True)
        except docker.errors.NotFound:
            pass

    parallel(rm_container, found["containers"])
    for nid in found["networks"]:
        try:
            c.api.remove_network(nid)
        except docker.errors.NotFound:
            pass
    for vol in found["volumes"]:
        try:
            c.api.remove_volume(vol, force=True)
        except docker.errors.NotFound:
            pass
    return {k: len(v) for k, v in found.items()}


def owner_labels(home: Path) -> dict[str, str]:
    """Labels naming the process that makes a cluster, and its state folder."""
    return {HOME_LABEL: str(home), OWNER_LABEL: owner_tag()}


def orphaned(c: docker.DockerClient, cluster: str) -> bool:
    """True if `cluster` exists and the process that brought it up is dead (a killed run left it)."""
    flt = {"label": [OWNER_LABEL, f"{LABEL}={cluster}"]}
    found = c.api.containers(all=True, filters=flt) + c.api.networks(filters=flt)
    return abandoned([x["Labels"] for x in found])


def abandoned(labels: list[dict[str, str]]) -> bool:
    """Some resources of a cluster exist (their labels), and no process that made them runs."""
    return bool(labels) and not any_alive(x.get(OWNER_LABEL, "") for x in labels)


def leftovers(c: docker.DockerClient) -> list[str]:
    """Clusters nobody looks after: not marked ready in their state folder, and their `up` is dead."""
    flt = {"label": OWNER_LABEL}
    return unattended([x["Labels"] for x in c.api.networks(filters=flt) + c.api.containers(all=True, filters=flt)])


def unattended(labels: Iterable[dict[str, str]]) -> list[str]:
    """The clusters among these resources' labels that no process looks after (`leftovers`).

    A cluster is looked after while its `up` runs, and after `up` marked it ready in its
    state folder. Clusters without an owner label (started by docker-compose) are not ours.
    """
    found: dict[str, dict[str, str]] = {}
    for x in labels:
        if OWNER_LABEL in x and LABEL in x:
            found.setdefault(x[LABEL], x)
    out = []
    for name, lab in sorted(found.items()):
        if ownership.unattended(name, lab.get(HOME_LABEL, "/nonexistent"), lab.get(OWNER_LABEL, "")):
            out.append(name)
    return out


def cluster_names(c: docker.DockerClient) -> list[str]:
    names: set[str] = set()
    for x in c.api.containers(all=True, filters={"label": LABEL}):
        names.add(x["Labels"][LABEL])
    for x in c.api.networks(filters={"label": LABEL}):
        names.add(x["Labels"][LABEL])
    return sorted(names)


def pinned_load(c: docker.DockerClient, exclude: str | None = None) -> dict[int, float]:
    """Caps already pinned to each core by running nowlab containers (of other clusters).

    Read from Docker, not from state folders, so clusters of other users and processes
    (tests, other state homes) count too.
    """
    load: dict[int, float] = {}
    for x in c.api.containers(filters={"label": LABEL, "status": "running"}):
        if x["Labels"].get(LABEL) == exclude:
            continue
        hc = c.api.inspect_container(x["Id"])["HostConfig"]
        cpus, quota, period = hc.get("CpusetCpus") or "", hc.get("CpuQuota") or 0, hc.get("CpuPeriod") or 0
        if cpus.isdigit() and quota > 0 and period > 0:
            load[int(cpus)] = load.get(int(cpus), 0.0) + quota / period
    return load


def host_cores(c: docker.DockerClient) -> list[int]:
    return list(range(int(c.info()["NCPU"])))
