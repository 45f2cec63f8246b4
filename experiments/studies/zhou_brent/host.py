"""Time sharing on this host: local managers as host processes, ranks on the host's Open MPI.

The whole path of experiments/studies/zhou_brent/live.py without Docker (tests, development): each
"workstation" is a name; its manager listens on 127.0.0.1 on a free port, and a rank finds it
by its --hosts name (NOWLAB_TIMESHARE=ws1=127.0.0.1:P1,...). All ranks share this host's cores.
Loopback is open to every user of this host, so the managers want a secret here too: one per
backend, standing for the cluster's, in the environment of the managers and of the ranks.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from experiments.studies.zhou_brent.owners import OWNER_AGENT, OwnerSetup
from experiments.studies.zhou_brent.manager_client import ManagerClient
from workloads import channel_auth
from workloads.host.launch import LocalHandle, LocalLauncher

ROOT = Path(__file__).resolve().parents[3]
AGENT = ROOT / "containers" / "agents" / "timeshare_manager.py"
STOP_TIMEOUT_S = 10.0


def manager_argv(workstation: str, nice: int, drift_ppm: float = 0.0) -> list[str]:
    """One manager on 127.0.0.1, any free port (it prints `listening HOST PORT`)."""
    return [sys.executable, str(AGENT), "--name", workstation, "--host", "127.0.0.1", "--port", "0",
            "--nice", str(nice), "--drift-ppm", repr(drift_ppm)]


def manager_env(secret: bytes, environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """A manager's environment on this host: the secret, and this repository first on PYTHONPATH
    (the agent imports workloads.channel_auth, as it does from /opt/nowlab in a workstation)."""
    env = dict(os.environ if environ is None else environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
    return {**env, **channel_auth.secret_env(secret, channel_auth.TIMESHARE.secret_env)}


@dataclass
class HostBackend:
    """Managers as child processes of this one; ranks by LocalLauncher. `drift_ppm` runs a manager's clock off."""

    nice: int = 19
    drift_ppm: Mapping[str, float] = field(default_factory=dict)
    client_timeout_s: float = 1.0
    launcher: LocalLauncher = field(default_factory=LocalLauncher)
    secret: bytes = field(default_factory=channel_auth.new_secret, repr=False)
    _procs: dict[str, subprocess.Popen] = field(default_factory=dict, init=False)
    _ports: dict[str, int] = field(default_factory=dict, init=False)
    _clients: dict[str, ManagerClient] = field(default_factory=dict, init=False)
    _owners: dict[int, tuple[subprocess.Popen, Path]] = field(default_factory=dict, init=False)

    def start_managers(self, workstations: Sequence[str]) -> dict[str, ManagerClient]:
        for w in workstations:
            self._procs[w] = subprocess.Popen(manager_argv(w, self.nice, self.drift_ppm.get(w, 0.0)),
                                              env=manager_env(self.secret), stdout=subprocess.PIPE,
                                              stderr=subprocess.PIPE, text=True)
        for w in workstations:
            line = self._procs[w].stdout.readline()
            if not line.startswith("listening"):
                raise RuntimeError(f"{w}: the manager did not start: {line.strip() or 'no output'}")
            self._ports[w] = int(line.split()[2])
        self._clients = {w: ManagerClient("127.0.0.1", self._ports[w], timeout_s=self.client_timeout_s,
                                          secret=self.secret) for w in workstations}
        return dict(self._clients)

    def stop_managers(self) -> None:
        """SIGTERM each (its handler continues what it held), then wait for it."""
        for client in self._clients.values():
            client.close()
        for p in self._procs.values():
            if p.poll() is None:
                p.terminate()
        for p in self._procs.values():
            try:
                p.wait(timeout=STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait(timeout=STOP_TIMEOUT_S)
            for stream in (p.stdout, p.stderr):
                if stream is not None:
                    stream.close()
        self._procs.clear()

    def rank_env(self) -> dict[str, str]:
        return {"NOWLAB_TIMESHARE": ",".join(f"{w}=127.0.0.1:{port}" for w, port in sorted(self._ports.items())),
                **channel_auth.secret_env(self.secret, channel_auth.TIMESHARE.secret_env)}

    def launch(self, hosts: Sequence[str], argv: Sequence[str], env: Mapping[str, str] | None) -> LocalHandle:
        return self.launcher.mpirun_popen(hosts, argv, env=dict(env) if env else None)

    def start_owner(self, workstation: str, owners: OwnerSetup) -> int:
        """The owner daemon for `workstation`, a child of this process at the managers' niceness; its pid.
        A host "workstation" has no cap: one core."""
        folder = Path(tempfile.mkdtemp(prefix=f"nowlab-owner-{workstation}-"))
        argv = owners.argv(sys.executable, str(ROOT / "containers" / OWNER_AGENT), workstation,
                           str(folder / "owner.log"), str(folder / "owner.pid"), 1.0)
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                preexec_fn=lambda: os.nice(self.nice))
        self._owners[proc.pid] = (proc, folder)
        return proc.pid

    def stop_owner(self, workstation: str, pid: int) -> str:
        proc, folder = self._owners.pop(pid)
        proc.terminate()
        proc.wait(timeout=STOP_TIMEOUT_S)
        log = folder / "owner.log"
        text = log.read_text() if log.is_file() else ""
        shutil.rmtree(folder, ignore_errors=True)
        return text
