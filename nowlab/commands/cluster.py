"""Cluster commands: up, status, exec, set, down, gc, forget, calibrate, compose, image."""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.table import Table

from nowlab.errors import err, fail, user_errors

console = Console()
image_app = typer.Typer(no_args_is_help=True, help="The workstation image.")


def status_table(c, calibration: dict | None = None) -> Table:
    from testbed import keeper
    from testbed.units import format_rate

    spec = c.spec
    measured = {x["workstation"]: x["measured"] for x in (calibration or {}).get("cpu", [])}
    link_meas = {(x["src"], x["dst"]): x["measured"] for x in (calibration or {}).get("links", [])}
    t = Table(title=f"cluster {c.name}: {len(spec.names)} workstations, network {c.state.subnet}")
    kept = keeper.status(c.name)
    factors = kept["factors"] if kept["alive"] else {}
    for col in ("workstation", "core", "cpu asked", "cpu cgroup", "cpu measured", "speed asked", "speed now",
                "egress", "links", "link measured"):
        t.add_column(col, justify="right" if col.startswith(("cpu", "core", "speed")) else "left")
    caps = c.backend.capabilities  # local: nothing capped, pinned or shaped to show
    for ws in spec.names:
        meas = f"{measured[ws]:.3f}" if ws in measured else "-"
        links = ", ".join(f"{p}:{format_rate(r)}" for p, r in spec.link_rates(ws).items()) or "-"
        lm = ", ".join(f"{d}:{format_rate(v)}" for (s, d), v in link_meas.items() if s == ws) or "-"
        asked = spec.speed(ws)
        if caps.cpu_caps:
            lim = c.cpu_limits(ws)
            f = factors.get(str(c.state.cores[ws]))  # reference-s per CPU-s of its core, from the keeper
            now = f"{lim['cores'] * f:.3f}" if f else ("no meter" if not kept["alive"] else "-")
            core, cpu_asked, cgroup = str(c.state.cores[ws]), f"{spec.cpu(ws):.3f}", f"{lim['cores']:.3f}"
        else:
            now, core, cpu_asked, cgroup = "no meter", "-", "-", "-"
        t.add_row(ws, core, cpu_asked, cgroup, meas,
                  "-" if asked is None else f"{asked:.3f}" + ("" if spec.governed(ws) else " (fixed)"), now,
                  format_rate(spec.egress(ws)) if caps.shapes_links else "-", links, lm)
    return t


def calibration_table(result: dict) -> tuple[Table, Table]:
    from testbed.units import format_rate

    cpu = Table(title="CPU share delivered with every workstation busy")
    for col in ("workstation", "asked (cores)", "measured (cores)", "error"):
        cpu.add_column(col, justify="right")
    for x in result["cpu"]:
        cpu.add_row(x["workstation"], f"{x['requested']:.3f}", f"{x['measured']:.4f}", f"{x['error']:+.2%}")
    net = Table(title="Link bandwidth (frames on the wire; TCP goodput beside)")
    for col in ("link", "asked", "measured", "goodput", "error"):
        net.add_column(col, justify="right")
    for x in result["links"]:
        net.add_row(f"{x['src']} -> {x['dst']}", format_rate(x["requested"]), format_rate(x["measured"]),
                    format_rate(x["goodput"]), f"{x['error']:+.2%}")
    return cpu, net


def up(spec_file: Path = typer.Argument(..., help="cluster spec (TOML)"),
       name: Optional[str] = typer.Option(None, help="cluster name (default: from the spec)"),
       backend: str = typer.Option("docker", help="where: docker (this host), ssh (the spec's hosts), "
                                                  "swarm (the spec's hosts or the Swarm's nodes; run on the manager), "
                                                  "local (this host's own Open MPI: no caps, tc or SSH)")) -> None:
    """Bring a cluster up and wait until every workstation answers SSH."""
    from testbed import backends
    from testbed.lifecycle import up as bring_up
    from testbed.progress import progress_bar
    from testbed.spec import load

    if backend not in backends.KINDS:
        fail(f"--backend: unknown {backend!r} (known: {', '.join(backends.KINDS)})")
    with user_errors():
        spec = load(spec_file)
        if name:
            spec = spec.with_name(name)
        with progress_bar() as update:
            c = bring_up(spec, progress=update, backend=backends.get(backend, spec))
        console.print(status_table(c))


def status(name: Optional[str] = typer.Argument(None)) -> None:
    """Show running clusters and their workstations (asked, enforced and measured)."""
    from testbed import state
    from testbed.cluster import Cluster

    with user_errors():
        names = [name] if name else state.running_names()
        if not names:
            console.print("no cluster is running")
        for n in names:
            c = Cluster.attach(n)
            cal = state.cluster_dir(n) / "calibration.json"
            console.print(status_table(c, json.loads(cal.read_text()) if cal.exists() else None))


def exec_(ws: str = typer.Argument(..., help="workstation"),
          cmd: list[str] = typer.Argument(..., help="command and arguments (after --)"),
          cluster: Optional[str] = typer.Option(None, "--cluster", "-c")) -> None:
    """Run a command on a workstation: nowlab exec ws1 -- tc qdisc show."""
    from testbed.cluster import Cluster

    with user_errors():
        result = Cluster.attach(cluster).exec(ws, cmd)
    sys.stdout.write(result.stdout)
    sys.stderr.write(result.stderr)
    raise typer.Exit(result.exit_code)


def set_(ws: str = typer.Argument(..., help="workstation"),
         cpu: Optional[float] = typer.Option(None, help="CPU share in cores, e.g. 0.1"),
         bw: Optional[str] = typer.Option(None, help="rate, e.g. 10mbit"),
         to: Optional[str] = typer.Option(None, help="apply --bw to the link to this peer only"),
         cluster: Optional[str] = typer.Option(None, "--cluster", "-c")) -> None:
    """Change a running workstation's CPU cap or bandwidth, without a restart."""
    from testbed.cluster import Cluster

    if cpu is None and bw is None:
        fail("give --cpu and/or --bw")
    if to is not None and bw is None:
        fail("--to needs --bw")
    with user_errors():
        c = Cluster.attach(cluster)
        if cpu is not None:
            c.set_cpu(ws, cpu)
        if bw is not None:
            c.set_bandwidth(ws, bw, to=to)
        console.print(status_table(c))


def down(name: Optional[str] = typer.Argument(None)) -> None:
    """Take a cluster down and remove everything it created."""
    from testbed.cluster import Cluster

    with user_errors():
        removed = Cluster.attach(name).down()
    console.print(f"removed {removed['containers']} containers, {removed['networks']} networks, "
                  f"{removed['volumes']} volumes")


def gc(all_: bool = typer.Option(False, "--all", help="also remove clusters that are up and looked after")) -> None:
    """Remove leftovers: labelled clusters whose `up` died before they were ready (or all, with --all)."""
    from testbed import backends, state

    names: list[str] = []
    totals = {"containers": 0, "networks": 0, "volumes": 0}
    with user_errors():
        for kind in backends.KINDS:  # every kind: a killed run may have left any of them
            backend = backends.get(kind)
            try:
                found = backend.cluster_names() if all_ else backend.leftovers()
            except (backends.BackendError, RuntimeError) as exc:
                err.print(f"gc: {kind}: {exc}")
                continue
            for n in found:
                for k, v in backend.remove(n).items():
                    totals[k] = totals.get(k, 0) + v
                state.forget(n)
            names += found
    console.print(f"removed {len(names)} clusters ({', '.join(names) or 'none'}): {totals['containers']} "
                  f"containers, {totals['networks']} networks, {totals['volumes']} volumes")


def forget(name: str = typer.Argument(..., help="a cluster taken down while some of its hosts did not answer")) -> None:
    """Drop the record a `down` kept of hosts it could not reach, freeing the cluster's name."""
    from testbed import backends

    with user_errors():
        dropped = {kind: hosts for kind in backends.KINDS if (hosts := backends.get(kind).forget(name))}
        if not dropped:
            raise ValueError(f"name: no cluster {name!r} is recorded as left on hosts that did not answer "
                             f"(a running one is taken down with `nowlab down {name}`)")
    for kind, hosts in dropped.items():
        console.print(f"forgot {kind} cluster {name}: what it left on {', '.join(hosts)} stays there until "
                      f"`nowlab gc` reaches them")


def calibrate(name: Optional[str] = typer.Argument(None),
              cpu_seconds: float = typer.Option(5.0, help="busy-loop window"),
              link_seconds: float = typer.Option(3.0, help="iperf3 window per link")) -> None:
    """Measure the CPU share and link bandwidth each workstation really gets; save as JSON."""
    from testbed.calibrate import calibrate as run_calibration
    from testbed.cluster import Cluster
    from testbed.progress import progress_bar
    with user_errors():
        c = Cluster.attach(name)
        with progress_bar() as update:
            result = run_calibration(c, cpu_seconds=cpu_seconds, link_seconds=link_seconds, progress=update)
    for table in calibration_table(result):
        console.print(table)
    console.print(f"saved {result['path']}")


def compose(spec_file: Path = typer.Argument(..., help="cluster spec (TOML)"),
            out: Path = typer.Option(Path("compose"), help="folder to write into"),
            cores: Optional[int] = typer.Option(None, help="cores of the target host (default: this one)")) -> None:
    """Render a docker-compose / docker stack file from a spec."""
    from testbed.compose import write_compose
    from testbed.spec import load
    with user_errors():
        paths = write_compose(load(spec_file), out, cores=cores)
    console.print("wrote " + ", ".join(map(str, paths)))


def image_build() -> None:
    """Rebuild the workstation image (base and all), even if one with this hash exists."""
    from testbed.backends.docker import engine as backend
    from testbed.image import ensure_image
    with user_errors():
        console.print(ensure_image(backend.client(), force=True, log=lambda m: err.print(m)))


def image_ensure() -> None:
    """Build the workstation image only if none matches the current containers/."""
    from testbed.backends.docker import engine as backend
    from testbed.image import ensure_image
    with user_errors():
        console.print(ensure_image(backend.client(), log=lambda m: err.print(m)))


def register(app: typer.Typer) -> None:
    app.add_typer(image_app, name="image")
    app.command()(up)
    app.command()(status)
    app.command("exec", context_settings={"allow_extra_args": True, "ignore_unknown_options": True})(exec_)
    app.command("set")(set_)
    app.command()(down)
    app.command()(gc)
    app.command()(forget)
    app.command()(calibrate)
    app.command()(compose)
    image_app.command("build")(image_build)
    image_app.command("ensure")(image_ensure)
