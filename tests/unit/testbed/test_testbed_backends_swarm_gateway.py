"""The Swarm backend's SSH gateway (testbed/backends/swarm/gateway.py), without Docker.

Its container parameters are plain data. Its controller end, `Tunnel`, is checked against a
real SSH server (paramiko's) on loopback that forwards `direct-tcpip` channels as sshd does:
a pool-style connection through it reaches a TCP server, an address nothing listens on is
an OSError as `socket.create_connection` gives, and a gateway showing another host key is
refused. The gateway container itself is checked live in tests/integration/test_testbed_backends_swarm_live.py.
"""
from __future__ import annotations

import contextlib
import logging
import socket
import threading
from pathlib import Path
from typing import Iterator

import paramiko
import pytest

from testbed.backends.docker import engine
from testbed.backends.swarm import gateway
from testbed.spec import HOSTNAME
from testbed.sshkeys import KEY_NAME, make_keypair
from workloads import channel_auth
from workloads.host.pool_client import ping
from workloads.wire import pool as pool_wire


def test_the_gateway_is_labelled_with_its_cluster_but_is_no_workstation():
    cfg = gateway.gateway_config("lab", "nowlab/workstation:abc", "192.168.1.10")
    assert cfg["labels"] == {engine.LABEL: "lab", gateway.ROLE_LABEL: "gateway"}  # remove/gc take it
    assert engine.WS_LABEL not in cfg["labels"]
    assert cfg["port_bindings"] == {22: ("192.168.1.10", None)} and cfg["ports"] == [22]
    name = gateway.container_name("lab")
    assert name == "nowlab-lab_gateway"  # a workstation's is nowlab-lab-WS, WS a host name (no '_')
    assert not name.startswith(engine.container_name("lab", "")) and not HOSTNAME.match("lab_gateway")


def test_the_gateway_gets_the_public_key_only(tmp_path):
    make_keypair(tmp_path, "nowlab-lab")
    files = gateway.gateway_files(tmp_path)
    assert files == {"/root/.ssh/authorized_keys": (tmp_path / f"{KEY_NAME}.pub").read_bytes()}
    assert b"PRIVATE" not in b"".join(files.values())


def test_the_published_port_is_read_from_inspect():
    inspect = {"NetworkSettings": {"Ports": {"22/tcp": [{"HostIp": "192.168.1.10", "HostPort": "49153"}]}}}
    assert gateway.published_port(inspect) == 49153
    with pytest.raises(KeyError, match="port 22 is not published"):
        gateway.published_port({"NetworkSettings": {"Ports": {"22/tcp": None}}})


# -- the controller's end, against a real SSH server on loopback --------------------------------------
class _Forwarding(paramiko.ServerInterface):
    """Accepts one public key and opens direct-tcpip channels to their destination, as sshd."""

    def __init__(self, key: paramiko.PKey) -> None:
        self.key = key
        self.targets: dict[int, socket.socket] = {}

    def get_allowed_auths(self, username: str) -> str:
        return "publickey"

    def check_auth_publickey(self, username: str, key: paramiko.PKey) -> int:
        return paramiko.AUTH_SUCCESSFUL if username == "root" and key == self.key else paramiko.AUTH_FAILED

    def check_channel_direct_tcpip_request(self, chanid: int, origin: tuple, destination: tuple) -> int:
        try:
            self.targets[chanid] = socket.create_connection(destination, timeout=2)
        except OSError:
            return paramiko.OPEN_FAILED_CONNECT_FAILED
        return paramiko.OPEN_SUCCEEDED


def _pump(a, b) -> None:
    try:
        while data := a.recv(65536):
            b.sendall(data)
    except (OSError, EOFError, paramiko.SSHException):
        pass
    finally:
        with contextlib.suppress(OSError, EOFError, paramiko.SSHException):  # its transport may be gone
            b.close()


@pytest.fixture
def ssh_gateway(tmp_path: Path) -> Iterator[tuple[gateway.GatewayAddress, Path]]:
    """A forwarding SSH server on loopback; yields its address (with its host key) and the client key."""
    make_keypair(tmp_path, "nowlab-lab")
    client_key = paramiko.Ed25519Key.from_private_key_file(str(tmp_path / KEY_NAME))
    host_key_file = tmp_path / "host" / KEY_NAME
    make_keypair(host_key_file.parent, "host")
    host_key = paramiko.Ed25519Key.from_private_key_file(str(host_key_file))
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(4)
    transports: list[paramiko.Transport] = []

    def serve() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            t = paramiko.Transport(conn)
            t.add_server_key(host_key)
            server = _Forwarding(client_key)
            transports.append(t)
            try:
                t.start_server(server=server)
            except (paramiko.SSHException, EOFError, OSError):  # a client that gave up (wrong host key)
                continue

            def channels(t: paramiko.Transport = t, server: _Forwarding = server) -> None:
                while t.is_active():
                    ch = t.accept(1.0)
                    if ch is None:
                        continue
                    target = server.targets.pop(ch.get_id())
                    threading.Thread(target=_pump, args=(ch, target), daemon=True).start()
                    threading.Thread(target=_pump, args=(target, ch), daemon=True).start()

            threading.Thread(target=channels, daemon=True).start()

    threading.Thread(target=serve, daemon=True).start()
    address = gateway.GatewayAddress("node1", "127.0.0.1", listener.getsockname()[1],
                                     (host_key_file.parent / f"{KEY_NAME}.pub").read_text())
    yield address, tmp_path / KEY_NAME
    listener.close()
    for t in transports:
        t.close()


def _echo_server() -> tuple[socket.socket, int]:
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(8)

    def serve() -> None:
        while True:
            try:
                conn, _ = srv.accept()
            except OSError:
                return
            threading.Thread(target=_pump, args=(conn, conn), daemon=True).start()

    threading.Thread(target=serve, daemon=True).start()
    return srv, srv.getsockname()[1]


def _closed_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def test_a_channel_through_the_tunnel_is_a_connection_to_the_workstation(ssh_gateway, caplog):
    address, key = ssh_gateway
    caplog.set_level(logging.DEBUG, logger="paramiko.transport")
    srv, port = _echo_server()
    tunnel = gateway.Tunnel(address, key)
    try:
        socks = [tunnel.connect(("127.0.0.1", port), 2.0) for _ in range(3)]  # one SSH connection, three channels
        for i, s in enumerate(socks):
            s.sendall(f"line {i}\n".encode())
        assert [s.recv(100) for s in socks] == [b"line 0\n", b"line 1\n", b"line 2\n"]
        for s in socks:
            s.close()
        with pytest.raises(OSError, match="through the gateway"):  # as create_connection: the pool skips it
            tunnel.connect(("127.0.0.1", _closed_port()), 2.0)
        # ... and quietly: the pool's discovery meets many while its world starts
        assert not [r for r in caplog.records if "open FAILED" in r.getMessage()]
        with tunnel.connect(("127.0.0.1", port), 2.0) as s:  # still usable after a refused channel
            s.sendall(b"again")
            assert s.recv(10) == b"again"
    finally:
        tunnel.close()
        srv.close()


def test_a_pool_handshake_runs_end_to_end_through_the_tunnel(ssh_gateway):
    """The pool's own authentication (the cluster secret) crosses the channel unchanged."""
    address, key = ssh_gateway
    secret = b"s" * 32
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)

    def rank() -> None:  # a pool rank's side of `ping`
        conn, _ = srv.accept()
        with conn:
            channel_auth.server_handshake(conn, secret, channel=channel_auth.POOL, timeout_s=5)
            assert pool_wire.Lines(conn).read() == {"type": "ping"}
            conn.sendall(pool_wire.encode({"type": "pong", "rank": 3, "size": 4}))

    threading.Thread(target=rank, daemon=True).start()
    tunnel = gateway.Tunnel(address, key)
    try:
        pong = ping(srv.getsockname(), secret, timeout_s=5.0, connect=tunnel.connect)
    finally:
        tunnel.close()
        srv.close()
    assert pong["rank"] == 3 and pong["size"] == 4


def test_a_gateway_showing_another_host_key_is_refused(ssh_gateway, tmp_path):
    address, key = ssh_gateway
    make_keypair(tmp_path / "other", "other")
    wrong = gateway.GatewayAddress(address.host, address.address, address.port,
                                   (tmp_path / "other" / f"{KEY_NAME}.pub").read_text())
    tunnel = gateway.Tunnel(wrong, key)
    with pytest.raises(ConnectionRefusedError, match=f"gateway 127.0.0.1:{address.port}"):
        tunnel.connect(("127.0.0.1", 1), 2.0)
    tunnel.close()
