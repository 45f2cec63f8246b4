"""Swarm commands: form the Swarm a multi-host cluster runs on (docs/multi-host.md).

    nowlab swarm init --advertise-addr 10.0.0.11                      # on the manager
    nowlab swarm join tcp://10.0.0.12:2375 --advertise-addr 10.0.0.12  # from the manager, per host
    nowlab swarm nodes
    nowlab up lab.toml --backend swarm

Each host's dockerd must listen on the hosts' private network (docs/multi-host.md says how);
`join` reaches the new host's engine at its URL, so nothing is typed on it.
"""
from __future__ import annotations

from typing import Optional

import typer
from rich.console import Console
from rich.table import Table

from nowlab.errors import user_errors

console = Console()
swarm_app = typer.Typer(no_args_is_help=True, help="The Swarm that multi-host clusters run on (--backend swarm).")
LOCAL = "unix:///var/run/docker.sock"


def init(advertise_addr: str = typer.Option(..., help="the manager's address on the hosts' network"),
         engine: str = typer.Option(LOCAL, help="the manager's engine URL (default: this machine's)")) -> None:
    """Make an engine the manager of a new Swarm (kept if it manages one already)."""
    from testbed.backends.swarm import membership
    from testbed.backends.swarm.hosts import url_address

    with user_errors():
        if engine != LOCAL:
            url_address(engine)
        node = membership.init(membership.connect(engine), advertise_addr)
    console.print(f"Swarm manager {node[:12]} at {advertise_addr}; add hosts with `nowlab swarm join URL`")


def join(url: str = typer.Argument(..., help="the new host's engine: tcp://HOST:2375 or ssh://USER@HOST"),
         advertise_addr: Optional[str] = typer.Option(None, help="its address on the hosts' network "
                                                               "(default: the URL's host)"),
         manager: str = typer.Option(LOCAL, help="the manager's engine URL (default: this machine's)")) -> None:
    """Join a host to the Swarm as a worker, through its engine's API."""
    from testbed.backends.swarm import membership
    from testbed.backends.swarm.hosts import url_address

    with user_errors():
        addr = advertise_addr or url_address(url)
        worker = membership.connect(url)  # the host named first: its error is the likely one
        node = membership.join(membership.connect(manager, what="the manager"), worker, addr)
    console.print(f"{url} joined as node {node[:12]}")


def nodes(manager: str = typer.Option(LOCAL, help="the manager's engine URL (default: this machine's)")) -> None:
    """The Swarm's hosts that take workstations: what `up --backend swarm` uses when the spec lists no hosts."""
    from testbed.backends.swarm import membership
    from testbed.backends.swarm.hosts import from_nodes

    with user_errors():
        found = from_nodes(membership.nodes(membership.connect(manager, what="the manager")))
    t = Table(title=f"{len(found)} ready, active Swarm nodes")
    for col in ("host", "address", "engine"):
        t.add_column(col)
    for h in found:
        t.add_row(h.name, h.address, h.url)
    console.print(t)


def register(app: typer.Typer) -> None:
    app.add_typer(swarm_app, name="swarm")
    swarm_app.command()(init)
    swarm_app.command()(join)
    swarm_app.command()(nodes)
