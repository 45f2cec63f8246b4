"""A job's environment reaches mpiexec on a cluster without being on its command line; so does the cluster's secret.

The control channel's secret travels in the environment; `ps` in a workstation shows the
mpiexec command line, so Cluster.mpirun_popen gives the values to the exec's environment
and only the names to `mpiexec -x`. Checked on a backend that records what it is asked (the
machines are not under test; tests/integration/test_workloads_live.py runs the real thing on Docker).
"""
from __future__ import annotations

import stat

import pytest

from experiments.studies.zhou_brent.cluster import ClusterBackend
from testbed import cluster_secret, pool, state
from testbed.backends import Capabilities
from testbed.cluster import Cluster
from testbed.spec import from_dict
from workloads import channel_auth


class _RecordingControl:
    def __init__(self, calls: list) -> None:
        self.calls = calls

    def start(self, argv, *, env=None):
        self.calls.append((list(argv), dict(env or {})))
        return None

    def run(self, argv, *, env=None, timeout=None):
        self.calls.append((list(argv), dict(env or {})))
        return None

    def detach(self, argv, *, env=None):
        self.calls.append((list(argv), dict(env or {})))


class _RecordingBackend:
    """Stands in for the machines: Cluster's command lines are under test, nothing else."""

    kind = "recording"
    capabilities = Capabilities()  # a one-host machine backend: nothing beyond `Backend`, nothing lacking

    def __init__(self) -> None:
        self.calls: list[tuple[list[str], dict[str, str]]] = []

    def control(self, machine: str) -> _RecordingControl:
        return _RecordingControl(self.calls)


def _cluster(tmp_path, monkeypatch) -> tuple[Cluster, _RecordingBackend]:
    monkeypatch.setenv("NOWLAB_HOME", str(tmp_path))
    spec = from_dict({"name": "env-rec", "workstation": [{"name": "ws1", "cpu": 0.3}, {"name": "ws2", "cpu": 0.2}]})
    st = state.ClusterState(spec=spec.model_dump(by_alias=True), network="n", subnet="10.9.0.0/24",
                            gateway="10.9.0.1", image="img", ips={"ws1": "10.9.0.2", "ws2": "10.9.0.3"},
                            cores={"ws1": 0, "ws2": 0}, containers={"ws1": "m1", "ws2": "m2"}, backend="recording")
    be = _RecordingBackend()
    return Cluster(st, be), be


def test_the_secret_goes_to_the_environment_and_only_its_name_to_mpiexec(tmp_path, monkeypatch):
    c, be = _cluster(tmp_path, monkeypatch)
    env = channel_auth.secret_env(channel_auth.new_secret())
    c.mpirun_popen(["ws1", "ws2"], ["python3", "-m", "workloads.synthetic"], env=env)
    c.mpirun(["ws1"], ["true"], env=env)
    for argv, given in be.calls:
        assert given == env
        assert not any(env[channel_auth.SECRET_ENV] in a for a in argv)
        i = argv.index(channel_auth.SECRET_ENV)
        assert argv[i - 1] == "-x"


def test_the_control_channel_allows_the_clusters_own_network(tmp_path, monkeypatch):
    c, _ = _cluster(tmp_path, monkeypatch)
    assert (c.controller_address, c.control_network) == ("10.9.0.1", "10.9.0.0/24")
    networks = channel_auth.parse_networks([c.control_network])
    assert channel_auth.peer_allowed("10.9.0.3", networks) and not channel_auth.peer_allowed("10.9.1.3", networks)


def test_the_pool_gets_the_clusters_secret_in_its_environment_and_only_the_name_on_its_command_line(tmp_path,
                                                                                                   monkeypatch):
    c, be = _cluster(tmp_path, monkeypatch)
    pool.start(c)
    (argv, env), = be.calls
    secret = c.secret
    assert env == {channel_auth.CLUSTER_SECRET_ENV: secret.hex()}
    assert not any(secret.hex() in a for a in argv)
    assert argv[argv.index(channel_auth.CLUSTER_SECRET_ENV) - 1] == "-x"  # mpiexec hands it on to every rank


def test_the_clusters_secret_is_one_private_file_in_its_folder_and_goes_with_it(tmp_path, monkeypatch):
    c, _ = _cluster(tmp_path, monkeypatch)
    folder = state.cluster_dir(c.name)
    secret = c.secret  # a cluster from before secrets gets one on first use
    path = cluster_secret.path(folder)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and len(secret) == channel_auth.SECRET_BYTES
    assert c.secret == secret == cluster_secret.load(folder)  # the same one every time
    path.chmod(0o644)
    assert c.secret == secret and stat.S_IMODE(path.stat().st_mode) == 0o600  # private again
    made = cluster_secret.make(folder)  # `up` makes a fresh one
    assert made != secret and c.secret == made
    state.forget(c.name)  # what `down` does
    assert not path.exists()


def test_a_damaged_secret_file_is_one_line_naming_it(tmp_path):
    cluster_secret.path(tmp_path).write_text("not hex\n")
    with pytest.raises(ValueError) as err:
        cluster_secret.load(tmp_path)
    assert str(err.value) == f"{cluster_secret.path(tmp_path)}: not hex"


def test_time_sharing_on_a_cluster_hands_its_ranks_the_clusters_secret(tmp_path, monkeypatch):
    c, _ = _cluster(tmp_path, monkeypatch)
    env = ClusterBackend(c).rank_env()
    assert env == {"NOWLAB_TIMESHARE": "127.0.0.1:7717", channel_auth.CLUSTER_SECRET_ENV: c.secret.hex()}
