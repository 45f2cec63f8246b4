"""Containers that stand in for a lab's real hosts: sshd, python3, numpy, mpi4py and Open MPI, nothing else.

Started with the Docker SDK only to exist; from then on the SSH backend (and whoever checks
it) reaches them over SSH alone, with the machines' own admin key. The three differ as lab
hosts do:
  a  root with cgroup rights and NET_ADMIN: capped and shaped (not a privileged container:
     this machine's root lacks CAP_SYS_RESOURCE, so `--privileged` cannot start; it gets every
     other capability, no seccomp or AppArmor profile, and the host's cgroupfs read-write);
  b  root with NET_ADMIN, no cgroup rights: shaped, reported uncapped;
  c  root with neither: unshaped and uncapped, and still a working MPI host.
Used by the SSH backend's integration test and its monitor benchmark. Nested caps on one
machine say nothing about timing: these check function and the controller's costs.
"""
from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import docker

from testbed.backends.base import BackendError
from testbed.backends.ssh.link import HostAccess, HostLink
from testbed.image import ensure_image
from testbed.sshkeys import KEY_NAME, make_keypair

LABEL = "nowlab.test"
VALUE = "ssh-backend-machines"
ROLES = {  # host name -> (cgroup rights, cap_add)
    "a": (True, ["ALL"]),
    "b": (False, ["NET_ADMIN"]),
    "c": (False, []),
}
CGROUP_RIGHTS = dict(  # what "a" gets besides its capabilities (see the module docstring)
    cap_drop=["SYS_RESOURCE"], security_opt=["seccomp=unconfined", "apparmor=unconfined"])


@dataclass(frozen=True)
class Machines:
    addresses: dict[str, str]  # host name -> IP on the bridge
    admin_key: Path  # the key the machines' root accepts (the entrypoint installs it)

    def access(self, host: str, **changes: object) -> HostAccess:
        base = dict(name=host, address=self.addresses[host], user="root", port=22, identity=str(self.admin_key))
        base.update(changes)
        return HostAccess(**base)  # type: ignore[arg-type]

    def admin(self, host: str, argv: list[str]) -> tuple[int, str, str]:
        """A command on a machine as its administrator: over SSH, never through Docker."""
        link = HostLink(self.access(host))
        try:
            return link.run(argv)
        finally:
            link.close()


def container_name(host: str) -> str:
    return f"nowlab-sshtest-{host}"


def remove(client: docker.DockerClient) -> None:
    for ctr in client.containers.list(all=True, filters={"label": f"{LABEL}={VALUE}"}):
        ctr.remove(force=True)


@contextmanager
def lab_machines(keys: Path, ready_s: float = 60.0) -> Iterator[Machines]:
    """The three machines, each answering an admin login; removed on exit (and any a killed
    run left behind, which would make every create a 409 Conflict, removed first)."""
    client = docker.from_env()
    image = ensure_image(client, log=lambda _m: None)
    admin_key = make_keypair(keys, "lab-admin")
    remove(client)
    try:
        made = []
        for host, (cgroup_rights, caps) in ROLES.items():
            volumes = {str(admin_key): {"bind": f"/run/secrets/{KEY_NAME}", "mode": "ro"},
                       f"{admin_key}.pub": {"bind": f"/run/secrets/{KEY_NAME}.pub", "mode": "ro"}}
            extra: dict = {}
            if cgroup_rights:
                volumes["/sys/fs/cgroup"] = {"bind": "/sys/fs/cgroup", "mode": "rw"}
                extra = CGROUP_RIGHTS
            made.append(client.containers.run(
                image, detach=True, name=container_name(host), hostname=f"lab-{host}", cap_add=caps,
                labels={LABEL: VALUE}, init=True, volumes=volumes, **extra))
        addresses = {}
        for host, ctr in zip(ROLES, made):
            ctr.reload()
            addresses[host] = ctr.attrs["NetworkSettings"]["IPAddress"]
        m = Machines(addresses, admin_key)
        for host in ROLES:  # sshd is up when an admin login works
            deadline = time.monotonic() + ready_s
            while True:
                try:
                    HostLink(m.access(host)).client().close()
                    break
                except BackendError:
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.5)
        yield m
    finally:
        remove(client)
