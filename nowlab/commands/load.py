"""Load and measurement commands: owner, traffic, monitor, capmode, validate."""
from __future__ import annotations

import time
from pathlib import Path
from typing import Optional

import typer
from rich.table import Table

from nowlab.commands.cluster import console
from nowlab.errors import fail, user_errors

owner_app = typer.Typer(no_args_is_help=True, help="Owner load in process mode (Menascé & Rao's daemon).")
traffic_app = typer.Typer(no_args_is_help=True, help="Background traffic between workstations.")
validate_app = typer.Typer(no_args_is_help=True, help="Measure the testbed against the models.")


def _owner_spec(n: int, z: float, d: float):
    from testbed.spec import OwnerLoad, SpecError

    for field, value, ok in (("n", n, n >= 0), ("z", z, z > 0), ("d", d, d > 0)):
        if not ok:
            raise SpecError(f"{field}: must be {'>= 0' if field == 'n' else '> 0'}, got {value}")
    return OwnerLoad(n=n, z=z, d=d)


def monitor_table(c, cpu_rows: list[dict], link_rows: list[dict]) -> Table:
    from testbed.units import format_rate

    t = Table(title=f"cluster {c.name}: what guests can get (last sample)")
    for col in ("workstation", "cap (cores)", "owners (cores)", "AvailCPU", "links out: available / ceil"):
        t.add_column(col, justify="right" if col != "links out: available / ceil" else "left")
    last_t = cpu_rows[-1]["t"] if cpu_rows else None
    cpu = {r["workstation"]: r for r in cpu_rows if r["t"] == last_t}
    links: dict[str, list[str]] = {}
    for r in link_rows:
        if r["t"] == last_t:
            links.setdefault(r["src"], []).append(
                f"{r['dst']} {format_rate(int(r['avail_bps']))}/{format_rate(int(r['ceil_bps']))}")
    for ws in c.workstations:
        r = cpu.get(ws)
        if r is None:
            t.add_row(ws, "-", "-", "-", "-")
            continue
        t.add_row(ws, f"{r['cap_cores']:.3f}", f"{r['owner_cores']:.3f}", f"{r['avail_cpu']:.1%}",
                  ", ".join(links.get(ws, [])) or "-")
    return t


def owner_start(workstations: list[str] = typer.Argument(None, help="default: all"),
                n: int = typer.Option(..., help="owner processes"),
                z: float = typer.Option(..., help="mean think time, s"),
                d: float = typer.Option(..., help="mean CPU demand, s at the workstation's speed"),
                seed: int = typer.Option(0), cluster: Optional[str] = typer.Option(None, "--cluster", "-c")) -> None:
    """Start owner processes (normal priority) on workstations."""
    from testbed.load import owners
    from testbed.cluster import Cluster

    with user_errors():
        c = Cluster.attach(cluster)
        names = workstations or c.workstations
        for ws in names:
            c.spec.workstation(ws)
        owners.start(c, {ws: _owner_spec(n, z, d) for ws in names}, seed)
    console.print(f"owners running on {', '.join(names)}: N={n}, Z={z} s, D={d} s")


def owner_stop(workstations: list[str] = typer.Argument(None, help="default: all"),
               cluster: Optional[str] = typer.Option(None, "--cluster", "-c")) -> None:
    """Stop owner processes."""
    from testbed.load import owners
    from testbed.cluster import Cluster

    with user_errors():
        owners.stop(Cluster.attach(cluster), workstations or None)


def traffic_start(src: str, dst: str, rate: str = typer.Option(..., help="e.g. 5mbit (on the wire)"),
                  cluster: Optional[str] = typer.Option(None, "--cluster", "-c")) -> None:
    """Start a background flow src -> dst at a rate."""
    from testbed.load import traffic
    from testbed.cluster import Cluster

    with user_errors():
        traffic.start(Cluster.attach(cluster), src, dst, rate)
    console.print(f"traffic {src} -> {dst} at {rate}")


def traffic_stop(src: Optional[str] = typer.Argument(None), dst: Optional[str] = typer.Argument(None),
                 cluster: Optional[str] = typer.Option(None, "--cluster", "-c")) -> None:
    """Stop one flow, or all."""
    from testbed.load import traffic
    from testbed.cluster import Cluster

    with user_errors():
        n = traffic.stop(Cluster.attach(cluster), src, dst)
    console.print(f"stopped {n} traffic processes")


def monitor(cluster: Optional[str] = typer.Argument(None),
            interval: float = typer.Option(1.0, help="seconds between samples"),
            duration: Optional[float] = typer.Option(None, help="stop after this many seconds"),
            out: Optional[Path] = typer.Option(None, help="folder for the time series (CSV)")) -> None:
    """Live table of available CPU and bandwidth; the time series is saved on exit."""
    from rich.live import Live

    from testbed import state
    from testbed.cluster import Cluster
    from testbed.load.monitor import Monitor, summarize
    from testbed.units import format_rate
    with user_errors():
        c = Cluster.attach(cluster)
        m = Monitor(c, interval=interval).start()
        t0 = time.monotonic()
        try:
            with Live(monitor_table(c, [], []), console=console, refresh_per_second=2) as live:
                while duration is None or time.monotonic() - t0 < duration:
                    time.sleep(interval)
                    live.update(monitor_table(c, m.cpu_rows, m.link_rows))
        except KeyboardInterrupt:
            pass
        finally:
            m.stop()
        folder = out or state.cluster_dir(c.name) / "monitor"
        paths = m.save(folder)
        cpu, links = m.frames()
        if len(cpu):
            s = summarize(cpu, links, c.workstations)
            console.print(f"minAvgAvailCPU {s.min_avg_avail_cpu:.1%}, "
                          f"minAvgAvailBW {format_rate(int(s.min_avg_avail_bw))} over {len(c.workstations)} "
                          f"workstations; saved {paths[0]} and {paths[1]}")


def capmode(cluster: Optional[str] = typer.Argument(None),
            duration: float = typer.Option(..., help="seconds to run"),
            trace: Optional[Path] = typer.Option(None, help="CSV time,workstation,available"),
            trace_end: str = typer.Option("hold", help="a trace shorter than the run: hold or repeat"),
            n: int = typer.Option(2), z: float = typer.Option(5.0), d: float = typer.Option(1.0),
            seed: int = typer.Option(0)) -> None:
    """Emulate owners by changing CPU caps over time (ON/OFF process, or a trace)."""
    from testbed import state
    from testbed.load.caps import CapController, extend, onoff_schedule, read_trace
    from testbed.cluster import Cluster
    from testbed.progress import progress_bar
    from testbed.spec import SpecError
    if trace_end not in ("hold", "repeat"):
        fail(f"trace-end: must be hold or repeat, got {trace_end!r}")
    with user_errors():
        c = Cluster.attach(cluster)
        if trace is not None:
            raw = read_trace(trace)
            for ws in raw:
                if ws not in c.workstations:
                    raise SpecError(f"{trace.name}: workstation: unknown {ws!r}")
            schedules = {ws: extend(s, duration, trace_end) for ws, s in raw.items()}  # type: ignore[arg-type]
            mode = f"trace:{trace.name}:{trace_end}"
        else:
            spec = _owner_spec(n, z, d)
            schedules = {ws: onoff_schedule(spec, duration, seed * 7919 + i) for i, ws in enumerate(c.workstations)}
            mode = f"onoff:N={n},Z={z},D={d},seed={seed}"
        ctl = CapController(c, schedules, mode=mode).start()
        try:
            with progress_bar() as update:
                t0 = time.monotonic()
                while (elapsed := time.monotonic() - t0) < duration:
                    update(f"cap mode ({mode})", int(elapsed), int(duration))
                    time.sleep(0.5)
        except KeyboardInterrupt:
            pass
        finally:
            ctl.stop()
            path = state.cluster_dir(c.name) / "capmode.json"
            ctl.save(path)
    console.print(f"{len(ctl.applied)} cap changes; metadata in {path}")


def validate_owner(seconds: float = typer.Option(600.0, help="length of the utilisation measurement"),
                   guest_seconds: float = typer.Option(30.0, help="dedicated length of the guest task"),
                   seed: int = typer.Option(1), out: Path = typer.Option(Path("results/validate"))) -> None:
    """Owner utilisation, guest slowdown and available bandwidth, measured against the models."""
    from testbed.lifecycle import cluster
    from testbed.progress import progress_bar
    from testbed.load.validation import validate, validation_spec
    with user_errors():
        with progress_bar() as update, cluster(validation_spec(), progress=update) as c:
            rows = validate(c, seconds=seconds, guest_seconds=guest_seconds, seed=seed, progress=update, out=out)
    t = Table(title="measured against predicted")
    for col in ("quantity", "measured", "predicted", "error", "target"):
        t.add_column(col, justify="right")
    for r in rows:
        t.add_row(r.what, r.show(r.measured), r.show(r.predicted), r.show_error(), r.target)
    console.print(t)
    console.print(f"saved {out / 'validate_owner.json'}")


def register(app: typer.Typer) -> None:
    app.add_typer(owner_app, name="owner")
    app.add_typer(traffic_app, name="traffic")
    app.add_typer(validate_app, name="validate")
    owner_app.command("start")(owner_start)
    owner_app.command("stop")(owner_stop)
    traffic_app.command("start")(traffic_start)
    traffic_app.command("stop")(traffic_stop)
    app.command()(monitor)
    app.command()(capmode)
    validate_app.command("owner")(validate_owner)
