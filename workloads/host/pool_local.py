"""A resident pool on this machine, with the host's Open MPI: `ws1`..`wsN` are local ranks.

For development, tests and benchmarks without containers, as `LocalLauncher` is for
mpiexec: the same `workloads.pool` ranks, TCP on the loopback interface, slot i
(Open MPI's local rank) standing for workstation ws{i+1} (or the i-th of `names`: the testbed's
local backend names them after its cluster's workstations). Loopback is not private on a
shared host (any local user can connect), so these ranks want a secret too: a fresh one
per pool, in mpiexec's environment (which the local ranks inherit), never on its command line.
"""
from __future__ import annotations

import contextlib
import time
from typing import Iterator, Sequence

from workloads import channel_auth
from workloads.host.launch import LocalLauncher
from workloads.host.pool_client import PoolLauncher, PoolRank, ping
from workloads.wire import pool as pool_wire


@contextlib.contextmanager
def local_pool(n: int, *, port_base: int = 17790, timeout_s: float = 60.0,
               local: LocalLauncher | None = None, names: Sequence[str] | None = None) -> Iterator[PoolLauncher]:
    """Start `n` local pool ranks, yield a launcher on hosts ws1..wsN (or `names`), stop them at the end."""
    if n < 1:
        raise ValueError(f"n: a pool needs at least one rank, got {n}")
    hosts = list(names) if names is not None else [f"ws{i + 1}" for i in range(n)]
    if len(hosts) != n:
        raise ValueError(f"names: {len(hosts)} names for a pool of {n} ranks")
    local = local or LocalLauncher()
    secret = channel_auth.new_secret()
    handle = local.mpirun_popen(hosts, ["python3", "-m", "workloads.pool"],
                                env={pool_wire.PORT_ENV: str(port_base), pool_wire.BIND_ENV: "127.0.0.1",
                                     **channel_auth.secret_env(secret, channel_auth.POOL.secret_env)})
    try:
        ranks: list[PoolRank] = []
        deadline = time.monotonic() + timeout_s
        for i in range(n):
            address = ("127.0.0.1", port_base + i)
            while True:
                try:
                    pong = ping(address, secret, timeout_s=1.0)
                    break
                except OSError:
                    if handle.poll() is not None:
                        res = handle.wait(1)
                        raise RuntimeError(f"local pool exited {res.exit_code}: {res.stderr[-2000:]}") from None
                    if time.monotonic() > deadline:
                        raise TimeoutError(f"local pool rank {i} does not answer after {timeout_s:.0f} s") from None
                    time.sleep(0.1)
            ranks.append(PoolRank(hosts[int(pong["slot"])], 0, int(pong["rank"]), address))
        yield PoolLauncher(ranks, secret=secret, fallback=local)
    finally:
        handle.terminate()
        with contextlib.suppress(TimeoutError):
            handle.wait(10)
