"""The thin rank orted starts: hand this process's place to the zygote, wait, return its code.

    python3 -S -m workloads.zygote_client -m workloads.cg --job ... (the same argv as python3 -m)

Imports only the standard library's socket/json/signal, so it starts in a fraction of
the cold numpy + mpi4py start. Signals orted sends (TERM, INT, HUP, USR1, USR2) are
forwarded to the child. With no zygote listening it execs the cold path
(`python3 -m MODULE ...`), so a launch never fails for want of one.
"""
from __future__ import annotations

import json
import os
import signal
import socket
import sys

SOCKET_PATH = os.environ.get("NOWLAB_ZYGOTE_SOCKET", "/tmp/nowlab-zygote.sock")
FORWARDED = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGUSR1, signal.SIGUSR2)


def cold(argv: list[str]) -> None:
    os.execvp("python3", ["python3", *argv])


def main() -> int:
    argv = sys.argv[1:]
    if len(argv) < 2 or argv[0] != "-m":
        print("zygote_client: argv: expected -m MODULE ARGS...", file=sys.stderr)
        return 2
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(SOCKET_PATH)
    except OSError:
        sock.close()
        cold(argv)
    request = json.dumps({"argv": argv, "env": dict(os.environ), "cwd": os.getcwd()}).encode() + b"\n"
    socket.send_fds(sock, [request], [0, 1, 2])
    reader = sock.makefile("r")
    first = reader.readline().split()
    if len(first) != 2 or first[0] != "pid":
        print(f"zygote_client: the zygote refused: {' '.join(first)}", file=sys.stderr)
        return 1
    pid = int(first[1])
    for sig in FORWARDED:
        signal.signal(sig, lambda s, _f: os.kill(pid, s))
    last = reader.readline().split()
    if len(last) != 2 or last[0] != "exit":
        return 1  # zygote died: its children were killed with it or are orphans it no longer reports
    code = int(last[1])
    return 128 - code if code < 0 else code


if __name__ == "__main__":
    raise SystemExit(main())
