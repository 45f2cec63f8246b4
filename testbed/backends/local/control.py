"""Commands on this host, for a workstation of the local backend (it is this host)."""
from __future__ import annotations

import os
import subprocess
import threading
from typing import Sequence

from testbed.backends.base import Unsupported
from testbed.remote_exec import ExecResult, RemoteProcess
from workloads.host.launch import inherited_env

#: Killers by name: inside a container they reach its own processes; here they would reach every
#: process of this host, other clusters' and other users' included, so they are refused.
BY_NAME = frozenset({"pkill", "killall"})


def _refuse_by_name(argv: Sequence[str]) -> list[str]:
    argv = list(argv)
    if argv and os.path.basename(argv[0]) in BY_NAME:
        raise Unsupported(f"{argv[0]}: a local workstation is this host, where it would reach every process "
                          f"(own_machines)")
    return argv


def _env(env: dict[str, str] | None) -> dict[str, str]:
    """This process's environment (without the run-scoped variables) and `env` on top, as a
    workstation's command gets the variables it is given."""
    return {**inherited_env(), **(env or {})}


class HostControl:
    """Run, start and detach argv on this host (no shell: argv as given; no kill by name)."""

    def run(self, argv: Sequence[str], *, env: dict[str, str] | None = None,
            timeout: float | None = None) -> ExecResult:
        try:
            done = subprocess.run(_refuse_by_name(argv), env=_env(env), text=True, stdin=subprocess.DEVNULL,
                                  capture_output=True, timeout=timeout)
        except subprocess.TimeoutExpired as exc:  # as `timeout` in a workstation answers: 124
            return ExecResult(124, _text(exc.stdout), _text(exc.stderr))
        return ExecResult(done.returncode, done.stdout, done.stderr)

    def start(self, argv: Sequence[str], *, env: dict[str, str] | None = None) -> RemoteProcess:
        popen = subprocess.Popen(_refuse_by_name(argv), env=_env(env), text=True, stdin=subprocess.DEVNULL,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        proc = RemoteProcess(list(argv), pid=popen.pid)

        def pump(stream, sink: list[str]) -> None:
            for line in stream:
                sink.append(line)

        def reap() -> None:
            pumps = [threading.Thread(target=pump, args=(popen.stdout, proc._out), daemon=True),
                     threading.Thread(target=pump, args=(popen.stderr, proc._err), daemon=True)]
            for t in pumps:
                t.start()
            for t in pumps:
                t.join()
            proc.exit_code = popen.wait()
            proc._done.set()

        threading.Thread(target=reap, daemon=True).start()
        return proc

    def detach(self, argv: Sequence[str], *, env: dict[str, str] | None = None) -> None:
        """Start a daemon in its own session and return at once; nothing reads it."""
        subprocess.Popen(_refuse_by_name(argv), env=_env(env), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL, start_new_session=True)


def _text(raw: str | bytes | None) -> str:
    if raw is None:
        return ""
    return raw.decode(errors="replace") if isinstance(raw, bytes) else raw
