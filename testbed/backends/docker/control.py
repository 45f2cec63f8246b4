"""Commands inside a container: `docker exec` for control, nsenter for cheap network reads."""
from __future__ import annotations

import threading
import time
from typing import Sequence

import docker

from testbed.remote_exec import ExecResult, RemoteProcess, with_timeout


def netns_argv(pid: int, argv: Sequence[str]) -> list[str]:
    """`argv` run on the host inside the network namespace of the container whose init is `pid`.

    Not `docker exec`: one exec per workstation per second cost the host 0.57 of its 2
    cores on now8 (dockerd, containerd-shim and runc), which slowed the workstations it
    was watching. nsenter + tc costs a few ms, and starts quickly enough to stamp the read
    on the host (a docker exec took from a few ms to over 0.5 s to start).
    """
    return ["nsenter", f"--net=/proc/{pid}/ns/net", *argv]


class DockerControl:
    """docker exec into one container."""

    def __init__(self, client: docker.DockerClient, container_id: str):
        self.api = client.api
        self.container_id = container_id

    def run(self, argv: Sequence[str], *, env: dict[str, str] | None = None,
            timeout: float | None = None) -> ExecResult:
        exec_id = self.api.exec_create(self.container_id, with_timeout(argv, timeout), environment=env)["Id"]
        out, err = self.api.exec_start(exec_id, demux=True)
        code = self.api.exec_inspect(exec_id)["ExitCode"]
        return ExecResult(code if code is not None else -1, (out or b"").decode(errors="replace"),
                          (err or b"").decode(errors="replace"))

    def detach(self, argv: Sequence[str], *, env: dict[str, str] | None = None) -> None:
        """Start a daemon and return at once: no streams attached, nothing waits for it."""
        exec_id = self.api.exec_create(self.container_id, list(argv), environment=env,
                                       stdout=False, stderr=False)["Id"]
        self.api.exec_start(exec_id, detach=True)

    def start(self, argv: Sequence[str], *, env: dict[str, str] | None = None) -> RemoteProcess:
        proc = RemoteProcess(list(argv))
        exec_id = self.api.exec_create(self.container_id, list(argv), environment=env)["Id"]
        stream = self.api.exec_start(exec_id, stream=True, demux=True)

        def pump() -> None:
            try:
                for out, err in stream:
                    if out:
                        proc._out.append(out.decode(errors="replace"))
                    if err:
                        proc._err.append(err.decode(errors="replace"))
            finally:
                for _ in range(50):  # the exit code lands a moment after the stream ends
                    info = self.api.exec_inspect(exec_id)
                    if not info["Running"]:
                        break
                    time.sleep(0.02)
                proc.exit_code = info["ExitCode"] if info["ExitCode"] is not None else -1
                proc._done.set()

        threading.Thread(target=pump, daemon=True).start()
        for _ in range(100):
            info = self.api.exec_inspect(exec_id)
            if info.get("Pid") or not info["Running"]:
                proc.pid = info.get("Pid") or None
                break
            time.sleep(0.01)
        return proc
