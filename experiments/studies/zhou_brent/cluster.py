"""Time sharing in a running cluster's workstations: the Docker-facing part of experiments/studies/zhou_brent/live.py.

Each workstation a table uses gets its local manager, started detached in the container as the
zygotes and the resident pool are (`Control.detach`:
`python3 /opt/nowlab/agents/timeshare_manager.py --name WS --port 7717`); the host speaks to
it at the workstation's address on the cluster network. Every rank speaks to the manager on
its own workstation (NOWLAB_TIMESHARE=127.0.0.1:7717). Managers, host and ranks share the
cluster's secret (`Cluster.secret`, NOWLAB_CLUSTER_SECRET): a manager gets it in its Docker
exec's environment and a rank in its launch's, never on a command line, and a manager serves
no one without it. A manager is stopped by SIGTERM to its
pid inside the container, found as the parent of the guardian it reports in its status (the
agent writes no pid file); its handler continues whatever it held.
"""
from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from experiments.studies.zhou_brent.owners import OWNER_AGENT, OwnerSetup
from testbed.cluster import GUEST_PREFIX, Cluster
from testbed.parallel import parallel
from testbed.remote_exec import RemoteProcess
from experiments.studies.zhou_brent.manager_client import DEFAULT_PORT, ManagerClient, ManagerRefused, ManagerUnreachable
from workloads import channel_auth

AGENT_PATH = "/opt/nowlab/agents/timeshare_manager.py"
START_TIMEOUT_S = 10.0
OWNER_LOG = "/tmp/nowlab-timeshare-owner.log"
OWNER_PIDFILE = "/run/nowlab-timeshare-owner.pid"


def manager_argv(workstation: str, port: int = DEFAULT_PORT, drift_ppm: float = 0.0) -> list[str]:
    """The manager's command; `drift_ppm` runs its clock off (the containers share the host's
    clock, so without it nothing drifts and the skew cannot grow)."""
    return ["python3", AGENT_PATH, "--name", workstation, "--port", str(port)] + (
        ["--drift-ppm", repr(drift_ppm)] if drift_ppm else [])


def parent_pid(stat_text: str) -> int | None:
    """The parent pid in a /proc/PID/stat line (field 4, after the command's closing parenthesis)."""
    fields = stat_text.rsplit(")", 1)[-1].split()
    return int(fields[1]) if len(fields) > 1 and fields[1].isdigit() and int(fields[1]) > 1 else None


@dataclass
class ClusterBackend:
    cluster: Cluster
    port: int = DEFAULT_PORT
    client_timeout_s: float = 2.0
    drift_ppm: Mapping[str, float] = field(default_factory=dict)  # workstation -> its manager's clock rate error
    _clients: dict[str, ManagerClient] = field(default_factory=dict, init=False)

    def start_managers(self, workstations: Sequence[str]) -> dict[str, ManagerClient]:
        ips, secret = self.cluster.ips, self.cluster.secret

        def start(w: str) -> None:
            client = ManagerClient(ips[w], self.port, timeout_s=self.client_timeout_s, secret=secret)
            self._clients[w] = client  # before anything starts: stop_managers finds it
            self._stop_one(w, client)  # one left from an earlier run would hold the port
            self.cluster.control(w).detach(manager_argv(w, self.port, self.drift_ppm.get(w, 0.0)),
                                           env=self._secret_env())
            self.cluster.wait_listening(w, self.port, timeout=START_TIMEOUT_S)

        parallel(start, list(workstations))  # every workstation at once, as stop_managers
        return {w: self._clients[w] for w in workstations}

    def stop_managers(self) -> None:
        def stop(item: tuple[str, ManagerClient]) -> str | None:
            w, client = item
            try:
                self._stop_one(w, client)
            except RuntimeError as exc:
                return str(exc)
            finally:
                client.close()
            return None

        # every one, even after one fails, and all at once: each takes a few execs of most of a
        # second on a small cap, one after another too long for a user's Ctrl-C
        failed = [f for f in parallel(stop, list(self._clients.items())) if f is not None]
        if failed:
            raise RuntimeError(failed[0] + (f" (and {len(failed) - 1} more)" if len(failed) > 1 else ""))

    def _stop_one(self, w: str, client: ManagerClient) -> None:
        try:
            guardian = client.status().guardian_pid
        except ManagerUnreachable:
            return
        stat = self.cluster.exec(w, ["cat", f"/proc/{guardian}/stat"]) if guardian else None
        pid = parent_pid(stat.stdout) if stat is not None and stat.ok else None
        if pid is None:
            raise RuntimeError(f"{w}: cannot find the manager's pid (guardian {guardian}) to stop it")
        self.cluster.exec(w, ["kill", "-TERM", str(pid)])
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            try:
                client.status()
            except ManagerUnreachable:
                return
            except ManagerRefused:  # "the manager is shutting down": it still listens while it lets go
                pass
            time.sleep(0.1)
        raise RuntimeError(f"{w}: the manager (pid {pid}) still answers {START_TIMEOUT_S:g} s after SIGTERM")

    def _secret_env(self) -> dict[str, str]:
        return channel_auth.secret_env(self.cluster.secret, channel_auth.TIMESHARE.secret_env)

    def rank_env(self) -> dict[str, str]:
        """Where a rank's manager is, and the secret it proves itself with (mpiexec forwards it by name)."""
        return {"NOWLAB_TIMESHARE": f"127.0.0.1:{self.port}", **self._secret_env()}

    def launch(self, hosts: Sequence[str], argv: Sequence[str], env: Mapping[str, str] | None) -> RemoteProcess:
        return self.cluster.mpirun_popen(list(hosts), list(argv), env=dict(env) if env else None)

    def start_owner(self, workstation: str, owners: OwnerSetup) -> int:
        """The owner daemon on `workstation`, at the ranks' priority (SCHED_IDLE); its pid there.

        Its demand is scaled by the workstation's cap as it stands at the start (a governor moves
        it later by a few per cent)."""
        self.cluster.exec(workstation, ["rm", "-f", OWNER_LOG, OWNER_PIDFILE])
        cap = float(self.cluster.cpu_limits(workstation)["cores"])
        argv = owners.argv("python3", f"/opt/nowlab/{OWNER_AGENT}", workstation, OWNER_LOG, OWNER_PIDFILE, cap)
        self.cluster.control(workstation).detach([*GUEST_PREFIX, *argv])
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            got = self.cluster.exec(workstation, ["cat", OWNER_PIDFILE])
            if got.ok and got.stdout.strip().isdigit():
                return int(got.stdout)
            time.sleep(0.2)
        raise RuntimeError(f"{workstation}: the owner daemon wrote no pid file in {START_TIMEOUT_S:g} s")

    def stop_owner(self, workstation: str, pid: int) -> str:
        """Stop the owner daemon (SIGTERM ends its processes); its log."""
        self.cluster.exec(workstation, ["kill", "-TERM", str(pid)])
        got = self.cluster.exec(workstation, ["cat", OWNER_LOG])
        self.cluster.exec(workstation, ["rm", "-f", OWNER_LOG])
        return got.stdout if got.ok else ""
