"""Time-sharing managers in a cluster's workstations (experiments/studies/zhou_brent/cluster.py): started
detached, they answer the host with the cluster's secret; stopped, they go, and nothing of
them is left. A manager answers 'shutting down' while it lets go of its processes: the stop
waits through that (the first run in containers failed on it)."""
from __future__ import annotations

import pytest

from experiments.studies.zhou_brent.cluster import ClusterBackend
from experiments.studies.zhou_brent.manager_client import ManagerUnreachable

pytestmark = pytest.mark.integration


def test_managers_start_in_the_workstations_answer_and_stop_leaving_nothing(live_cluster):
    backend = ClusterBackend(live_cluster)
    clients = backend.start_managers(["ws1", "ws2"])
    try:
        for ws, client in clients.items():
            status = client.status()
            assert status.guardian_pid and status.guardian_pid > 1, (ws, status)
    finally:
        backend.stop_managers()
    for ws, client in clients.items():
        with pytest.raises(ManagerUnreachable):
            client.status()
        left = live_cluster.exec(ws, ["pgrep", "-f", "timeshare_manager.py"])
        assert left.exit_code == 1 and left.stdout.strip() == "", (ws, left.stdout)
