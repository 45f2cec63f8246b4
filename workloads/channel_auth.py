"""Proof that a peer of the control channel belongs to the run: a per-run secret and an HMAC.

Without it, anything that can reach the controller's port while a run is going could send
`done` or `ack` lines and steer the scheduler. The executor makes a fresh secret per run and
gives it to the jobs in the environment (NOWLAB_CONTROL_SECRET, hex), not on a command line,
so `ps` on a workstation does not show it. Before any message:

    server -> client   b"nowlab-auth-1 <nonce, 64 hex digits>\\n"    a fresh nonce per connection
    client -> server   b"<HMAC-SHA256(secret, nonce || context), hex>\\n"
    server -> client   b"ok\\n"   (a wrong or late answer: the server closes instead)

A fresh nonce per connection means a recorded answer is worth nothing on the next one; the
context string keeps an answer for one channel from being good on another that shares the
secret. The server compares with hmac.compare_digest. Runs both in the containers and on the
host: standard library only.

Two more channels use the same handshake with a per-cluster secret (NOWLAB_CLUSTER_SECRET,
made at `up` and kept 0600 in the cluster's folder, testbed/cluster_secret.py), each with its
own context: the resident pool (workloads/pool.py), whose `run` line starts a program on a
workstation, and the time-sharing managers (containers/agents/timeshare_manager.py), which
stop and continue processes. The per-run secret cannot serve them: both outlive runs. A task
graph's tasks (workloads/taskgraph_task.py) take a per-run secret too, on their own context.
"""
from __future__ import annotations

import hashlib
import hmac
import ipaddress
import os
import secrets
import socket
import time
from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence

SECRET_ENV = "NOWLAB_CONTROL_SECRET"
CLUSTER_SECRET_ENV = "NOWLAB_CLUSTER_SECRET"  # the pool's and the time-sharing managers'
SECRET_BYTES = 32
NONCE_BYTES = 32
GREETING = b"nowlab-auth-1"
ACCEPTED = b"ok"
CONTROL_CONTEXT = b"nowlab control channel v1"
# Long enough for a coordinator that its workstation's owner starves (ranks run at SCHED_IDLE);
# a silent peer costs the server a socket for this long, not a thread (workloads/control_gate.py).
HANDSHAKE_TIMEOUT_S = 10.0
MAX_LINE_BYTES = 256  # a greeting or an answer is under 100 bytes

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


@dataclass(frozen=True)
class Channel:
    """One authenticated channel: its name in the logs, its context string, whose secret it takes."""

    name: str
    context: bytes
    secret_env: str
    whose: str  # "this run's", "the cluster's": in the one-line reasons


CONTROL = Channel("control channel", CONTROL_CONTEXT, SECRET_ENV, "this run's")
POOL = Channel("pool", b"nowlab resident pool v1", CLUSTER_SECRET_ENV, "the cluster's")
TIMESHARE = Channel("timeshare manager", b"nowlab timeshare manager v1", CLUSTER_SECRET_ENV, "the cluster's")
# A task graph's messages and the host's go (workloads/taskgraph_task.py): the run's secret,
# under their own context so an answer for the control channel is no good here.
TASKGRAPH = Channel("task graph", b"nowlab task graph v1", SECRET_ENV, "this run's")


class AuthError(ConnectionError):
    """The handshake failed; the message is one line saying why."""


class Refused(AuthError):
    """The server closed (or said no) after our answer: the secret is not the one it holds."""


def new_secret() -> bytes:
    return secrets.token_bytes(SECRET_BYTES)


def secret_env(secret: bytes, name: str = SECRET_ENV) -> dict[str, str]:
    """The environment entry that hands `secret` to a job (or, as CLUSTER_SECRET_ENV, to a pool or manager)."""
    return {name: secret.hex()}


def secret_from_env(environ: Mapping[str, str] | None = None, name: str = SECRET_ENV) -> bytes | None:
    """The secret in variable `name`, None if unset; ValueError naming the variable if malformed."""
    text = (os.environ if environ is None else environ).get(name)
    return parse_secret(text, name) if text else None


def parse_secret(text: str, where: str) -> bytes:
    """A secret written as hex (a variable's value, a file's text); ValueError naming `where`."""
    try:
        secret = bytes.fromhex(text)
    except ValueError:
        raise ValueError(f"{where}: not hex") from None
    if len(secret) < 16:
        raise ValueError(f"{where}: {len(secret)} bytes, want at least 16")
    return secret


def answer(secret: bytes, nonce: bytes, context: bytes = CONTROL_CONTEXT) -> bytes:
    return hmac.new(secret, nonce + context, hashlib.sha256).digest()


def parse_networks(networks: Iterable[str | Network]) -> tuple[Network, ...]:
    """Networks such as '172.30.0.0/24' as ipaddress objects; ValueError naming the bad one."""
    out = []
    for n in networks:
        try:
            out.append(ipaddress.ip_network(n, strict=False))
        except ValueError:
            raise ValueError(f"allowed_networks: {n!r} is not a network such as 172.30.0.0/24") from None
    return tuple(out)


def peer_allowed(host: str, networks: Sequence[Network] | None) -> bool:
    """Is the peer `host` inside one of `networks` (None: no allow-list, every peer may try)?"""
    if networks is None:
        return True
    ip = ipaddress.ip_address(host.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return any(ip in n for n in networks)


def deadline_after(timeout_s: float | None) -> float | None:
    """The time.monotonic() by which a handshake must be done; None: no limit."""
    return None if timeout_s is None else time.monotonic() + timeout_s


def _read_line(sock: socket.socket, deadline: float | None, what: str) -> tuple[bytes, bytes]:
    """One line (without its newline) and whatever came after it, by `deadline` (time.monotonic(); None: no limit)."""
    data = b""
    while b"\n" not in data:
        if deadline is not None:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AuthError(f"no {what} within the handshake timeout")
        sock.settimeout(None if deadline is None else remaining)
        try:
            chunk = sock.recv(MAX_LINE_BYTES)
        except socket.timeout:
            raise AuthError(f"no {what} within the handshake timeout") from None
        if not chunk:
            raise AuthError(f"closed before the {what}")
        data += chunk
        if len(data) > 2 * MAX_LINE_BYTES:
            raise AuthError(f"{what} too long")
    line, _, rest = data.partition(b"\n")
    return line, rest


def challenge() -> tuple[bytes, bytes]:
    """A fresh nonce and the line that carries it to the peer."""
    nonce = secrets.token_bytes(NONCE_BYTES)
    return nonce, GREETING + b" " + nonce.hex().encode() + b"\n"


def check_answer(secret: bytes, nonce: bytes, line: bytes, channel: Channel = CONTROL) -> None:
    """AuthError unless `line` (without its newline) is the answer to `nonce` under `secret` on `channel`."""
    try:
        given = bytes.fromhex(line.decode("ascii").strip())
    except (UnicodeDecodeError, ValueError):
        raise AuthError("answer is not hex") from None
    if not hmac.compare_digest(given, answer(secret, nonce, channel.context)):
        raise AuthError(f"wrong answer (not {channel.whose} secret)")


def server_handshake(sock: socket.socket, secret: bytes, *, channel: Channel = CONTROL,
                     timeout_s: float | None = HANDSHAKE_TIMEOUT_S) -> None:
    """The server's side for a blocking server of one connection at a time: challenge, check
    the answer, say ok. AuthError (one line why) if the peer does not prove the secret; the
    caller closes it. A server of many peers at once uses workloads/control_gate.py instead."""
    deadline = deadline_after(timeout_s)
    before = sock.gettimeout()
    nonce, line = challenge()
    sock.sendall(line)
    reply, _ = _read_line(sock, deadline, "answer")
    check_answer(secret, nonce, reply, channel)
    sock.sendall(ACCEPTED + b"\n")
    sock.settimeout(before)


def answer_challenge(sock: socket.socket, secret: bytes, deadline: float | None, *,
                     channel: Channel = CONTROL) -> None:
    """The client's first half: read the server's challenge and send the answer.

    Apart from await_acceptance so that a client of several servers (a pool job's members)
    can answer them all before it waits for any: the handshakes then take the slowest
    server's time, not the sum."""
    line, _ = _read_line(sock, deadline, "challenge")
    greeting, _, nonce_hex = line.partition(b" ")
    if greeting != GREETING:
        raise AuthError(f"the server does not speak {GREETING.decode()} (got {line[:40]!r})")
    try:
        nonce = bytes.fromhex(nonce_hex.decode("ascii"))
    except (UnicodeDecodeError, ValueError):
        raise AuthError("the server's nonce is not hex") from None
    sock.sendall(answer(secret, nonce, channel.context).hex().encode() + b"\n")


def await_acceptance(sock: socket.socket, deadline: float | None, *, channel: Channel = CONTROL) -> bytes:
    """The client's second half: the server's `ok`; returns what it sent after it. Refused if it closes instead."""
    try:
        reply, rest = _read_line(sock, deadline, "acceptance")
    except AuthError as exc:
        raise Refused(f"the server refused this answer ({exc}): is {channel.secret_env} {channel.whose}?") from None
    if reply != ACCEPTED:
        raise Refused(f"the server answered {reply[:40]!r}, not {ACCEPTED!r}")
    return rest


def client_handshake(sock: socket.socket, secret: bytes, *, channel: Channel = CONTROL,
                     timeout_s: float | None = HANDSHAKE_TIMEOUT_S) -> bytes:
    """Answer the server's challenge; returns what it sent after accepting. AuthError if it fails,
    Refused if the server turns the answer down. `timeout_s` None: wait as long as it takes."""
    deadline = deadline_after(timeout_s)
    before = sock.gettimeout()
    answer_challenge(sock, secret, deadline, channel=channel)
    rest = await_acceptance(sock, deadline, channel=channel)
    sock.settimeout(before)
    return rest
