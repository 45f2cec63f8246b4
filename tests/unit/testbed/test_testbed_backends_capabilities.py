"""Backends declare what they do beyond `Backend` (testbed/backends/base.py `Capabilities`), and
callers ask the declaration instead of probing with hasattr: each flag must promise exactly the
methods of its protocol, so a backend that gains or loses one and not the other fails here."""
from __future__ import annotations

import pytest

from testbed.backends import (Backend, Capabilities, Gateway, HostMpi, HostPlacing, OwnLogin, RemoteMetering,
                              SelfSampling)
from testbed.backends.base import LIMITS
from testbed.backends.docker import DockerBackend
from testbed.backends.local import LocalBackend
from testbed.backends.ssh import SshBackend
from testbed.backends.swarm import SwarmBackend

PROMISES = {"places_on_hosts": HostPlacing, "meters_remotely": RemoteMetering, "samples_itself": SelfSampling,
            "own_login": OwnLogin, "gateway": Gateway, "host_mpi": HostMpi}
BACKENDS = [DockerBackend, SshBackend, SwarmBackend, LocalBackend]


def methods(protocol: type) -> list[str]:
    return [m for m in vars(protocol) if not m.startswith("_")]


@pytest.mark.parametrize("backend", BACKENDS, ids=lambda b: b.kind)
def test_each_backend_declares_exactly_the_extras_it_has(backend):
    caps = backend.capabilities
    assert isinstance(caps, Capabilities)
    for flag, protocol in PROMISES.items():
        assert methods(protocol), protocol
        for method in methods(protocol):
            assert callable(getattr(backend, method, None)) == getattr(caps, flag), (backend.kind, flag, method)


def test_every_promise_is_a_flag_and_the_backends_say_where_the_controller_is():
    flags = {f for f in Capabilities.__dataclass_fields__ if f != "controller_on_network"}
    assert flags == set(PROMISES) | set(LIMITS)  # a flag promises a protocol, or its absence limits `Backend`
    assert all(getattr(Capabilities(), f) for f in LIMITS)  # a backend lacks a part of `Backend` only by saying so
    assert "capabilities" in Backend.__annotations__
    assert DockerBackend.capabilities.controller_on_network and SshBackend.capabilities.controller_on_network
    assert not SwarmBackend.capabilities.controller_on_network  # its overlay: readiness from inside, the gateway
    assert SwarmBackend.capabilities.gateway and not DockerBackend.capabilities.gateway
    with pytest.raises(AttributeError):
        DockerBackend.capabilities.gateway = True  # frozen: a backend's word does not change under it


def test_only_the_local_backend_lacks_any_part_of_backend_and_it_says_which():
    """Every machine backend has caps, tc, SSH and machines apart; the local one (this host's own
    Open MPI) has none of them, and says so rather than pretending."""
    for backend in (DockerBackend, SshBackend, SwarmBackend):
        assert all(getattr(backend.capabilities, f) for f in LIMITS), backend.kind
    local = LocalBackend.capabilities
    assert not (local.cpu_caps or local.shapes_links or local.ssh_login or local.own_machines or local.places_on_hosts)
    assert local.host_mpi and local.controller_on_network
