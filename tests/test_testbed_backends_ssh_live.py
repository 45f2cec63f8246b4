"""The SSH backend against three machines that run nothing but sshd, python3, numpy, mpi4py
and Open MPI (issue 18, item 3).

The machines are containers of the workstation image, started with the Docker SDK only to
stand in for real hosts; from then on the test reaches them only over SSH: the backend
under test does, and so do the checks (`admin`: a plain paramiko login with the machines'
own key, as a lab's administrator would have). The three differ as lab hosts do:
  a  root with cgroup rights and NET_ADMIN: capped and shaped (not a privileged container:
     this machine's root lacks CAP_SYS_RESOURCE, so `--privileged` cannot start; it gets every
     other capability, no seccomp or AppArmor profile, and the host's cgroupfs read-write);
  b  root with NET_ADMIN, no cgroup rights: shaped, reported uncapped;
  c  root with neither: unshaped and uncapped, and still a working MPI host.
Nested caps on one machine say nothing about timing: this checks function only.

Here: the faults, each one line naming the host and leaving nothing. The working cluster's
test (caps and qdiscs read, an owner daemon, MPI hello across the three hosts, teardown) is in
tests/pending/pending_ssh_cluster_live.py (run only when named): it passed run alone (143 s and 99 s, 24 Nov 2026), but in the test
command its MPI hello hung past 180 s once, and it stays out until that is understood.
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import pytest

from testbed import backends, state
from testbed.backends import BackendError
from testbed.backends.ssh import registry
from testbed.backends.ssh.link import HostAccess, HostLink
from testbed.cluster import Cluster
from testbed.spec import ClusterSpec, SpecError, from_dict
from testbed.sshkeys import KEY_NAME, make_keypair

pytestmark = pytest.mark.integration

TEST_LABEL = "nowlab.test"
TEST_VALUE = "ssh-backend-machines"
NAME = "ssh-live"
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


@pytest.fixture(scope="module")
def machines(docker_engine: None, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Machines]:
    import docker

    from testbed.image import ensure_image

    client = docker.from_env()
    image = ensure_image(client, log=lambda _m: None)
    keys = tmp_path_factory.mktemp("admin-key")
    admin_key = make_keypair(keys, "lab-admin")
    made = []
    try:
        for host, (cgroup_rights, caps) in ROLES.items():
            volumes = {str(admin_key): {"bind": f"/run/secrets/{KEY_NAME}", "mode": "ro"},
                       f"{admin_key}.pub": {"bind": f"/run/secrets/{KEY_NAME}.pub", "mode": "ro"}}
            extra: dict = {}
            if cgroup_rights:
                volumes["/sys/fs/cgroup"] = {"bind": "/sys/fs/cgroup", "mode": "rw"}
                extra = CGROUP_RIGHTS
            made.append(client.containers.run(
                image, detach=True, name=f"nowlab-sshtest-{host}", hostname=f"lab-{host}", cap_add=caps,
                labels={TEST_LABEL: TEST_VALUE}, init=True, volumes=volumes, **extra))
        addresses = {}
        for host, ctr in zip(ROLES, made):
            ctr.reload()
            addresses[host] = ctr.attrs["NetworkSettings"]["IPAddress"]
        m = Machines(addresses, admin_key)
        for host in ROLES:  # sshd is up when an admin login works
            deadline = time.monotonic() + 60
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
        for ctr in client.containers.list(all=True, filters={"label": f"{TEST_LABEL}={TEST_VALUE}"}):
            ctr.remove(force=True)


def admin(m: Machines, host: str, argv: list[str]) -> tuple[int, str, str]:
    """A command on a machine as its administrator: over SSH, never through Docker."""
    link = HostLink(m.access(host))
    try:
        return link.run(argv)
    finally:
        link.close()


def spec_of(m: Machines, name: str = NAME, changes: dict[str, dict[str, object]] | None = None) -> ClusterSpec:
    """Hosts a, b, c on cores 0, 1, 0, logging in with the admin key; `changes` per host name."""
    assert set(changes or {}) <= set(ROLES), changes
    hosts = [{"name": h, "address": m.addresses[h], "identity": str(m.admin_key), "cores": [i % 2],
              **(changes or {}).get(h, {})} for i, h in enumerate(ROLES)]
    return from_dict({
        "name": name, "host": hosts,
        "defaults": {"cpu": 0.2, "egress": "50mbit"},
        "workstation": [{"name": "ws1", "links": {"ws2": "5mbit"}}, {"name": "ws2"}, {"name": "ws3"}],
    })


LEFT_PROBE = """
import glob, json, os
mark = b"NOWLAB_SSH_CLUSTER=" + os.environ["CLUSTER"].encode()
marked = []
for pid in filter(str.isdigit, os.listdir("/proc")):
    try:
        if mark in open(f"/proc/{pid}/environ", "rb").read().split(b"\\0"):
            marked.append(pid)
    except OSError:
        pass
keys = os.path.expanduser("~/.ssh/authorized_keys")
print(json.dumps({"marked": marked,
                  "folder": os.path.exists(os.path.expanduser("~/.nowlab/ssh/" + os.environ["CLUSTER"])),
                  "cgroups": glob.glob("/sys/fs/cgroup/*/nowlab." + os.environ["CLUSTER"] + ".*")
                             + glob.glob("/sys/fs/cgroup/nowlab." + os.environ["CLUSTER"] + ".*"),
                  "key": "nowlab-" + os.environ["CLUSTER"] in (open(keys).read() if os.path.exists(keys) else ""),
                  "tmp": glob.glob("/tmp/nowlab") + glob.glob("/tmp/nowlab-*") + glob.glob("/tmp/ompi.*")}))
"""


def leftovers(m: Machines, host: str, cluster: str = NAME) -> dict[str, object]:
    code, out, err = admin(m, host, ["env", f"CLUSTER={cluster}", "python3", "-c", LEFT_PROBE])
    assert code == 0, err
    found = json.loads(out)
    _code, qdisc, _err = admin(m, host, ["tc", "qdisc", "show", "dev", "eth0"])
    found["htb"] = "htb" in qdisc
    return found


NOTHING = {"marked": [], "folder": False, "cgroups": [], "key": False, "tmp": [], "htb": False}


def test_faults_are_one_line_naming_the_host_and_leave_nothing(machines: Machines) -> None:
    # unreachable: nothing answers on c's port 2222
    unreachable = spec_of(machines, changes={"c": {"port": 2222}})
    with pytest.raises(BackendError, match=r"^host 'c' \(root@[\d.]+:2222\): unreachable"):
        Cluster.create(unreachable, backend=backends.get("ssh", unreachable))
    # a key the machine does not know
    stranger = make_keypair(Path(str(machines.admin_key) + "-stranger"), "stranger")
    refused = spec_of(machines, changes={"b": {"identity": str(stranger)}})
    with pytest.raises(BackendError, match=r"^host 'b' \(root@[\d.]+:22\): the SSH key was refused for 'root'$"):
        Cluster.create(refused, backend=backends.get("ssh", refused))
    # fewer cores than the spec asks of a host
    no_core = spec_of(machines, changes={"b": {"cores": [7]}})
    with pytest.raises(SpecError, match=r"host 'b' has no core\(s\) \[7\]"):
        Cluster.create(no_core, backend=backends.get("ssh", no_core))
    # a host that fails half way through `up`, after the others were changed: its folder cannot be made
    assert admin(machines, "c", ["sh", "-c", "mkdir -p /root/.nowlab && touch /root/.nowlab/ssh"])[0] == 0
    try:
        broken = spec_of(machines)
        with pytest.raises(BackendError, match=r"^host 'c' \(root@[\d.]+:22\): "):
            Cluster.create(broken, backend=backends.get("ssh", broken))
    finally:
        admin(machines, "c", ["rm", "-f", "/root/.nowlab/ssh"])
    for host in ROLES:
        assert leftovers(machines, host) == NOTHING, host
    assert registry.names() == [] and NAME not in state.running_names()
