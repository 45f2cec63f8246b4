"""The neighbour table a large cluster may fill on a Swarm host (issue 18, scale: the network).

The estimate and the warning are pure; the read goes through this machine's engine for real,
in a one-shot container of the host's network namespace, where the limit lives."""
from __future__ import annotations

from pathlib import Path

import pytest

from testbed.backends.swarm import host_kernel, overlay


def test_each_workstation_may_resolve_every_other_and_the_overlay_one_per_remote_one():
    assert overlay.neighbour_entries(0, 10) == 10  # a host with none: the overlay's static entries only
    assert overlay.neighbour_entries(10, 10) == 90  # all here: each resolves the other 9
    assert overlay.neighbour_entries(64, 1024) == 64 * 1023 + 960  # 1,024 over 16 hosts: 66,432, far past 1,024
    with pytest.raises(ValueError, match="^on_host: "):
        overlay.neighbour_entries(11, 10)


def test_a_host_below_its_need_is_named_with_the_fix_and_an_unread_limit_is_said_so():
    need = {"n1": 3000, "n2": 900, "n3": 1500}
    lines = overlay.neighbour_warnings(need, {"n1": 1024, "n2": 1024, "n3": None})
    assert lines == [
        f"host n1: may need 3000 neighbour entries, above its limit of 1024 ({overlay.NEIGH_SYSCTL}); "
        f"raise it there: sysctl -w {overlay.NEIGH_SYSCTL}=6000",
        f"host n3: may need 1500 neighbour entries and its limit ({overlay.NEIGH_SYSCTL}) could not be read; "
        f"the default is 1024"]
    assert overlay.neighbour_warnings({"n1": 500}, {"n1": None}) == []  # under the default: nothing to say


def test_a_sysctl_name_is_a_path_under_proc_sys_and_nothing_else():
    assert host_kernel.sysctl_path(overlay.NEIGH_SYSCTL) == "/proc/sys/net/ipv4/neigh/default/gc_thresh3"
    for bad in ("", "../../etc/shadow", "net.ipv4/../x", "a b"):
        with pytest.raises(ValueError, match="^name: "):
            host_kernel.sysctl_path(bad)


@pytest.mark.integration
def test_the_limit_is_read_in_the_hosts_network_namespace(docker_engine):
    import docker

    from testbed.image import ensure_image

    c = docker.from_env()
    image = ensure_image(c, log=lambda _m: None)
    want = int(Path(host_kernel.sysctl_path(overlay.NEIGH_SYSCTL)).read_text())
    assert host_kernel.read_sysctl(c, image, overlay.NEIGH_SYSCTL) == want
    assert host_kernel.read_sysctl(c, image, "net.ipv4.neigh.default.no_such_setting") is None


def test_up_asks_no_host_for_a_small_cluster_and_warns_for_a_large_one(monkeypatch):
    from types import SimpleNamespace

    from testbed.backends.swarm.backend import SwarmBackend

    asked: list[str] = []

    def read(c, image, name):
        asked.append(c)
        return 1024

    monkeypatch.setattr(host_kernel, "read_sysctl", read)
    small = SimpleNamespace(names=[f"ws{i}" for i in range(6)])
    SwarmBackend._check_neighbours(small, {ws: "n1" if i < 3 else "n2" for i, ws in enumerate(small.names)},
                                   {"n1": "c1", "n2": "c2"}, "img")
    assert asked == []
    big = SimpleNamespace(names=[f"ws{i}" for i in range(64)])  # 32 a host: 32 * 63 + 32 = 2,048 entries each
    with pytest.warns(UserWarning) as got:
        SwarmBackend._check_neighbours(big, {ws: "n1" if i < 32 else "n2" for i, ws in enumerate(big.names)},
                                       {"n1": "c1", "n2": "c2"}, "img")
    assert [str(w.message).split(";")[0] for w in got] == [
        f"host {h}: may need 2048 neighbour entries, above its limit of 1024 ({overlay.NEIGH_SYSCTL})" for h in ("n1", "n2")]
    assert sorted(asked) == ["c1", "c2"]
