"""What the SSH backend puts on a host, and how the image's fixed names map onto it: pure.

A workstation's files live in one folder in the login's home, `~/.nowlab/ssh/<cluster>/`:
the agent (hostagent.py), the workloads and owner agents (the image has them at
/opt/nowlab), the cluster's key and ssh_config, an `ssh` wrapper that uses them, and run/
for pid files the image keeps in /run. Removing the folder removes everything the backend
wrote there. Every host of a cluster must resolve the folder to the same absolute path
(the same login and home layout, as lab accounts are): mpiexec passes PYTHONPATH on, and
Open MPI starts its remote daemons by one command line for all hosts.

The layers above were written against the image, so commands name /opt/nowlab/..., pid
files in /run/nowlab-..., and tc on eth0. `translate` maps those names onto the host,
one table, rather than teaching every caller where a host keeps them.
"""
from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import Sequence

from testbed import shaping

IMAGE_ROOT = "/opt/nowlab"  # where the image keeps workloads/ and agents/ (containers/Dockerfile)
IMAGE_RUN = "/run/nowlab-"  # the image's pid files (testbed/load/owners.py)
KEY_FILE = "id_ed25519"


def folder_of(home: str, cluster: str) -> str:
    return f"{home.rstrip('/')}/.nowlab/ssh/{cluster}"


@dataclass(frozen=True)
class HostFolder:
    """Paths inside one workstation's folder on its host."""

    path: str

    @property
    def agent(self) -> str:
        return f"{self.path}/hostagent.py"

    @property
    def key(self) -> str:
        return f"{self.path}/{KEY_FILE}"

    @property
    def ssh_config(self) -> str:
        return f"{self.path}/ssh_config"

    @property
    def ssh_wrapper(self) -> str:
        return f"{self.path}/bin/ssh"

    def agent_argv(self, op: str, *args: str) -> list[str]:
        return ["python3", self.agent, op, *args]

    def join_argv(self, argv: Sequence[str], *, detach: bool = False) -> list[str]:
        """argv run as one of the workstation's processes (hostagent.join)."""
        return self.agent_argv("detach" if detach else "join", "--", *argv)


@dataclass(frozen=True)
class Peer:
    """Another workstation as ssh reaches it from a host (an entry of the cluster's ssh_config)."""

    name: str
    address: str
    user: str
    port: int


def ssh_config(peers: Sequence[Peer], key: str) -> str:
    """The cluster's ssh_config: workstation names as aliases, the cluster key, no host-key prompts
    (the hosts trust each other for the cluster's life, as the containers' ssh_config does)."""
    lines = []
    for p in peers:
        lines += [f"Host {p.name}", f"    HostName {p.address}", f"    User {p.user}", f"    Port {p.port}"]
    lines += ["Host *", f"    IdentityFile {key}", "    IdentitiesOnly yes", "    StrictHostKeyChecking no",
              "    UserKnownHostsFile /dev/null", "    LogLevel ERROR", "    BatchMode yes", "    ConnectTimeout 10"]
    return "\n".join(lines) + "\n"


def ssh_wrapper(real_ssh: str, config: str) -> str:
    """`ssh` on the folder's bin/, first on a workstation process's PATH: mpiexec's launcher
    and the warm masters (testbed/warm.py) then resolve workstation names through the config."""
    return f"#!/bin/sh\nexec {shlex.quote(real_ssh)} -F {shlex.quote(config)} \"$@\"\n"


def translate(argv: Sequence[str], folder: HostFolder, dev: str) -> list[str]:
    """The image's fixed names in argv mapped onto the host: /opt/nowlab -> the folder,
    /run/nowlab-* -> the folder's run/, and `tc ... dev eth0` -> the host's interface."""
    out = []
    for arg in argv:
        if arg == IMAGE_ROOT or arg.startswith(IMAGE_ROOT + "/"):
            arg = folder.path + arg[len(IMAGE_ROOT):]
        elif arg.startswith(IMAGE_RUN):
            arg = f"{folder.path}/run/nowlab-{arg[len(IMAGE_RUN):]}"
        out.append(arg)
    if out[:1] == ["tc"]:
        out = ["tc", *tc_on(out[1:], dev)]
    return out


def tc_on(cmd: Sequence[str], dev: str) -> list[str]:
    """A tc command (no leading "tc") rendered for shaping.DEV, moved to `dev`."""
    return [dev if i > 0 and cmd[i - 1] == "dev" and a == shaping.DEV else a for i, a in enumerate(cmd)]


def authorized_line(public_key: str, comment: str) -> str:
    """The cluster key's authorized_keys line, its comment the cluster's (teardown strips by it)."""
    parts = public_key.split()
    if len(parts) < 2:
        raise ValueError(f"public_key: not an OpenSSH public key: {public_key[:40]!r}")
    return f"{parts[0]} {parts[1]} {comment}\n"
