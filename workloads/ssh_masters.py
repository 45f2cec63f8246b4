"""Open, or check, a workstation's OpenSSH master connections to other workstations.

    python3 -m workloads.ssh_masters open  --path PATH HOST...   # one master to each, in turn
    python3 -m workloads.ssh_masters check --path PATH HOST...   # exit 0 iff every master answers

Runs on a workstation, started by testbed/warm.py. One process per workstation does what
took one engine call per pair (n(n-1)/2: 120 at 16 workstations, ~100 s of `up`,
docs/scale.md): the controller now asks each workstation once. A master that fails to open
is left out (ssh then connects afresh); `check` says which are missing. Standard library only.
"""
from __future__ import annotations

import argparse
import subprocess
import sys


def open_argv(path: str, host: str) -> list[str]:
    return ["ssh", "-M", "-N", "-f", "-o", "ControlPersist=yes", "-o", f"ControlPath={path}", host]


def check_argv(path: str, host: str) -> list[str]:
    return ["ssh", "-o", f"ControlPath={path}", "-O", "check", host]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("action", choices=("open", "check"))
    ap.add_argument("--path", required=True, help="ssh's ControlPath (with its %%C tokens)")
    ap.add_argument("hosts", nargs="*")
    a = ap.parse_intermixed_args(argv)  # hosts come after --path
    make = open_argv if a.action == "open" else check_argv
    missing = []
    for host in a.hosts:  # in turn: this workstation's sshd handshakes at its small cap
        done = subprocess.run(make(a.path, host), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, timeout=60, check=False)
        if done.returncode != 0:
            missing.append(host)
            if a.action == "check":
                break  # one missing is enough to say not yet
    if missing:
        print(f"ssh masters missing to: {' '.join(missing)}", file=sys.stderr)
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
