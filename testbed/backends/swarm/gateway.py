"""How the controller reaches workstations on the overlay: one SSH gateway per cluster.

The controller is not on the overlay (a host process cannot join an attachable overlay),
so it cannot open a TCP connection to a workstation's address. The resident MPI pool
(testbed/pool.py) needs exactly that: it connects to a rank on every workstation per job.
The gateway is one more container of the workstation image on the first host, on the
overlay, running nothing but the image's sshd, with port 22 published on that host's
address. The controller keeps one SSH connection to it (paramiko, already a dependency)
and opens each pool connection as a `direct-tcpip` channel of it: ssh's own port
forwarding, so nothing is hand-written between the two ends. The pool's own handshake
(the cluster secret) still runs end to end inside the channel.

Access: only the cluster's public key is authorised (no private key is copied in), and the
gateway's host key is read through the engine at `up` and pinned, so the controller never
accepts a key on first use. It is not pinned to a core and has no CPU cap: it forwards the
pool's short control lines and the jobs' output, not MPI traffic, and its cost belongs to
the controller, not to a workstation's speed.

`gateway_config` is plain data (tested without Docker); `Tunnel` is the controller's end.
"""
from __future__ import annotations

import base64
import logging
import socket
import threading
from dataclasses import dataclass
from pathlib import Path

import paramiko

from testbed.backends.docker import engine
from testbed.sshkeys import KEY_NAME

SSH_PORT = 22
ROLE_LABEL = engine.ROLE_LABEL
ROLE = "gateway"
USER = "root"
CONNECT_TIMEOUT_S = 10.0
KEEPALIVE_S = 15


class _RefusedChannels(logging.Filter):
    """paramiko logs every refused channel at ERROR ("Secsh channel N open FAILED"): the pool's
    discovery tries each rank every 0.2 s while its world starts, and a refusal there is the
    answer it expects (it becomes the OSError the pool skips). Other messages pass."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.name == "paramiko.transport" and "open FAILED" in record.getMessage())


logging.getLogger("paramiko.transport").addFilter(_RefusedChannels())


def container_name(cluster: str) -> str:
    """Not a workstation's name: host names cannot hold '_'."""
    return f"nowlab-{cluster}_gateway"


def gateway_config(cluster: str, image: str, bind_address: str) -> dict:
    """The gateway container's parameters: the cluster's label (so `remove` and `gc` take it
    with the workstations), no workstation label, sshd's port published on `bind_address`."""
    return {
        "image": image,
        "name": container_name(cluster),
        "hostname": "gateway",
        "labels": {engine.LABEL: cluster, ROLE_LABEL: ROLE},
        "environment": {"NOWLAB_CLUSTER": cluster},
        "ports": [SSH_PORT],
        "port_bindings": {SSH_PORT: (bind_address, None)},  # a free port, chosen by the engine
        "security_opt": ["no-new-privileges"],
    }


def gateway_files(key_dir: Path) -> dict[str, bytes]:
    """Only the public key, as root's authorized_keys (the entrypoint installs nothing else)."""
    return {"/root/.ssh/authorized_keys": (key_dir / f"{KEY_NAME}.pub").read_bytes()}


def published_port(inspect: dict) -> int:
    """The host port the engine chose for sshd, from `docker inspect` of the started container."""
    bindings = inspect["NetworkSettings"]["Ports"].get(f"{SSH_PORT}/tcp") or []
    if not bindings:
        raise KeyError(f"gateway: port {SSH_PORT} is not published")
    return int(bindings[0]["HostPort"])


@dataclass(frozen=True)
class GatewayAddress:
    """Where the controller finds the gateway's sshd, and the host key it must show."""

    host: str  # the host's name in the record
    address: str  # an IPv4 address of that host
    port: int
    host_key: str  # "ssh-ed25519 AAAA..." as the container's /etc/ssh/ssh_host_ed25519_key.pub

    def known_host(self) -> tuple[str, str, paramiko.PKey]:
        """(the known_hosts name, key type, key) for paramiko's HostKeys."""
        kind, b64 = self.host_key.split()[:2]
        if kind != "ssh-ed25519":
            raise ValueError(f"host_key: {kind} (the image makes ssh-ed25519 host keys)")
        name = self.address if self.port == SSH_PORT else f"[{self.address}]:{self.port}"
        return name, kind, paramiko.Ed25519Key(data=base64.b64decode(b64))


class Tunnel:
    """The controller's one SSH connection to the gateway; each `connect` is a channel of it.

    `connect(address, timeout_s)` has `socket.create_connection`'s meaning for a workstation's
    address on the overlay, and raises OSError (ConnectionRefusedError) when the gateway cannot
    reach it, as the pool expects. The connection is made on first use and again if it dropped."""

    def __init__(self, gateway: GatewayAddress, key_path: Path) -> None:
        self.gateway = gateway
        self.key_path = key_path
        self._lock = threading.Lock()
        self._client: paramiko.SSHClient | None = None

    def _transport(self) -> paramiko.Transport:
        with self._lock:
            t = self._client.get_transport() if self._client is not None else None
            if t is not None and t.is_active():
                return t
            if self._client is not None:
                self._client.close()
            client = paramiko.SSHClient()
            client.get_host_keys().add(*self.gateway.known_host())
            client.set_missing_host_key_policy(paramiko.RejectPolicy())
            try:
                client.connect(self.gateway.address, port=self.gateway.port, username=USER,
                               pkey=paramiko.Ed25519Key.from_private_key_file(str(self.key_path)),
                               allow_agent=False, look_for_keys=False, timeout=CONNECT_TIMEOUT_S)
            except (paramiko.SSHException, EOFError) as exc:
                client.close()
                raise ConnectionRefusedError(f"gateway {self.gateway.address}:{self.gateway.port}: {exc}") from exc
            t = client.get_transport()
            assert t is not None  # connect() succeeded
            t.set_keepalive(KEEPALIVE_S)
            self._client = client
            return t

    def connect(self, address: tuple[str, int], timeout_s: float) -> paramiko.Channel:
        transport = self._transport()
        try:
            channel = transport.open_channel("direct-tcpip", address, ("127.0.0.1", 0), timeout=timeout_s)
        except (paramiko.SSHException, EOFError) as exc:
            raise ConnectionRefusedError(f"{address[0]}:{address[1]} through the gateway: {exc}") from exc
        channel.settimeout(timeout_s)
        return channel

    def close(self) -> None:
        with self._lock:
            if self._client is not None:
                self._client.close()
                self._client = None


def resolve_ipv4(address: str) -> str:
    """An IPv4 address for a host's address or name (the port is published on it)."""
    return socket.gethostbyname(address)
