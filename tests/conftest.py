"""Shared fixtures. Integration tests need a Docker engine and must run, not skip, in CI."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from testbed.spec import from_dict

ROOT = Path(__file__).resolve().parent.parent

# Four workstations of three speeds; caps sum to 1.0 core, 0.5 per core once pinned.
HETERO4 = {
    "name": "t-hetero4",
    "defaults": {"egress": "100mbit"},
    "classes": {"fast": 0.4, "medium": 0.25, "slow": 0.1},
    "workstation": [
        {"name": "ws1", "class": "fast"},
        {"name": "ws2", "class": "medium", "links": {"ws3": "10mbit"}},
        {"name": "ws3", "class": "medium"},
        {"name": "ws4", "class": "slow", "egress": "20mbit"},
    ],
}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A test on the host's Open MPI is an integration test too: `-m "not integration"` then
    runs with nothing installed but the Python packages.

    A test that removes every cluster (`gc_all`: the fault campaign ends with `nowlab gc --all`)
    runs first, before the session's shared cluster (`live_cluster`) exists, whatever its file
    is called; otherwise it would take that cluster down under the tests after it."""
    for item in items:
        if item.get_closest_marker("host_mpi") is not None:
            item.add_marker(pytest.mark.integration)
    # Then by file name, across tests/unit/ and tests/integration/: the order the suite had when it was
    # one flat folder (the live tests that run niced on the host's cores came before the testbed's
    # clusters and their keepers). Stable: tests keep their order within a file.
    items.sort(key=lambda item: (item.get_closest_marker("gc_all") is None, item.path.name))


@pytest.fixture(scope="session", autouse=True)
def nowlab_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Cluster state of the test run lives in a temporary folder, not the user's."""
    home = tmp_path_factory.mktemp("nowlab-home")
    os.environ["NOWLAB_HOME"] = str(home)
    return home


@pytest.fixture(scope="session")
def docker_engine() -> None:
    """Fail (never skip) when no engine answers: CI must exercise real containers."""
    probe = subprocess.run(["docker", "info"], capture_output=True, text=True, timeout=30)
    if probe.returncode != 0:
        pytest.fail("the Docker engine does not answer; run `bash scripts/bootstrap.sh` (it installs and starts "
                    f"dockerd): {probe.stderr.strip().splitlines()[-1:] }", pytrace=False)
    from testbed.backends.docker import engine
    from testbed.image import ensure_image
    ensure_image(engine.client(), log=lambda _m: None)


@pytest.fixture(scope="session")
def hetero4_spec():
    return from_dict(HETERO4)


@pytest.fixture(scope="session")
def live_cluster(docker_engine, hetero4_spec):
    """A live 4-workstation heterogeneous cluster shared by the integration tests; don't change it."""
    from testbed import cluster
    with cluster(hetero4_spec) as c:
        yield c
