"""Reading a live run's inputs: job classes from a TOML file (or a dict) and an arrival stream CSV.

The types are the scheduler's (`scheduler/live/stream.py`: `JobClass`, `Arrival`); the files
are read here, above it, since the scheduler does no file I/O. A class is a workload command
line plus its model: W, alpha, beta (and pmax) given, or read from a profile's fit.json
(`nowlab profile`), or only T(1) (`t1`), or only `pmax`:

    [class.cg]
    argv = ["python3", "-m", "workloads.cg", "--n", "500"]
    profile = "profiles/cg500/fit.json"   # W, alpha, beta from a dedicated-run fit

The stream is a CSV with columns `class, arrival` and optionally `id` (default: the row
number from 0); arrivals are seconds after the start, non-negative and non-decreasing.
Every problem is one ValueError naming the file and line, so the CLI prints it as is.

A rigid class runs its argv as given on exactly the processors its arrival asks for (any
command: an mpi4py module, a C binary, a delay), with `runtime` the seconds a batch policy
plans with when the job asks for no walltime:

    [class.ring]
    rigid = true
    argv = ["nowlab-ring", "2.0", "20"]   # the image's C kernel: 2 reference-seconds, 20 steps
    runtime = 1.5

Its rows in the stream give `size` (required) and `walltime` (optional, seconds: it is killed
at start + walltime); a malleable class's rows leave both empty.
"""
from __future__ import annotations

import csv
import io
import json
import math
import tomllib
from pathlib import Path
from typing import Any, Mapping

from experiments.traces.text import utf8_text
from scheduler.live.stream import Arrival, JobClass, PmaxOnlyModel
from scheduler.model import DemandModel, Model, RuntimeModel, SevcikModel

_CLASS_KEYS = {"argv", "W", "alpha", "beta", "pmax", "t1", "profile", "rigid", "runtime"}
_RIGID_KEYS = {"argv", "rigid", "runtime"}


def _number(raw: Mapping[str, Any], key: str, where: str, *, integer: bool = False) -> float | int | None:
    if key not in raw:
        return None
    value = raw[key]
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError(f"{where}: {key} must be a finite number, got {value!r}")
    if value < 0:
        raise ValueError(f"{where}: {key} must be >= 0, got {value}")
    if integer and value != int(value):
        raise ValueError(f"{where}: {key} must be a whole number, got {value}")
    return int(value) if integer else float(value)


def job_class(name: str, raw: Mapping[str, Any], *, base: Path = Path(".")) -> JobClass:
    """One class from its TOML table (or a dict); `base` resolves a relative profile path."""
    where = f"class {name!r}"
    unknown = sorted(set(raw) - _CLASS_KEYS)
    if unknown:
        raise ValueError(f"{where}: unknown key(s) {', '.join(unknown)}; known: {', '.join(sorted(_CLASS_KEYS))}")
    argv = raw.get("argv")
    if not isinstance(argv, list) or not argv or not all(isinstance(a, str) and a for a in argv):
        raise ValueError(f"{where}: argv must be a non-empty list of strings (the workload command line)")
    if any(a in ("--job", "--hosts", "--control", "--resume") for a in argv):
        raise ValueError(f"{where}: argv must not set --job, --hosts, --control or --resume (the executor does)")
    rigid = raw.get("rigid", False)
    if not isinstance(rigid, bool):
        raise ValueError(f"{where}: rigid must be true or false, got {rigid!r}")
    if rigid:
        other = sorted(set(raw) - _RIGID_KEYS)
        if other:
            raise ValueError(f"{where}: a rigid class takes argv and runtime only, not {', '.join(other)} "
                             "(its size and walltime are each arrival's)")
        runtime = _number(raw, "runtime", where)
        if runtime is None:
            raise ValueError(f"{where}: runtime: a rigid class needs the seconds a policy plans with")
        return JobClass(name, tuple(argv), RuntimeModel(runtime), rigid=True)
    if "runtime" in raw:
        raise ValueError(f"{where}: runtime is a rigid class's (set rigid = true, or give a model)")
    pmax = _number(raw, "pmax", where, integer=True)
    if pmax is not None and pmax < 1:
        raise ValueError(f"{where}: pmax must be >= 1, got {pmax}")
    W, alpha, beta = (_number(raw, k, where) for k in ("W", "alpha", "beta"))
    t1 = _number(raw, "t1", where)
    if "profile" in raw:
        if W is not None or t1 is not None:
            raise ValueError(f"{where}: give either profile or W/alpha/beta or t1, not several")
        path = Path(str(raw["profile"]))
        path = path if path.is_absolute() else base / path
        try:
            fit = json.loads(path.read_text())
            W, alpha, beta = float(fit["work_s"]), float(fit["alpha_s"]), float(fit["beta_s"])
        except OSError as exc:
            raise ValueError(f"{where}: cannot read profile {path}: {exc.strerror}") from None
        except (ValueError, KeyError, TypeError):
            raise ValueError(f"{where}: profile {path} is not a fit.json with work_s, alpha_s, beta_s") from None
    try:
        if W is not None:
            model: Model = SevcikModel(W, alpha or 0.0, beta or 0.0, pmax)
        elif alpha is not None or beta is not None:
            raise ValueError("alpha and beta need W")
        elif t1 is not None:
            model = DemandModel(t1, pmax)
        elif pmax is not None:
            model = PmaxOnlyModel(pmax)
        else:
            raise ValueError("needs a model: W (with alpha, beta), a profile, t1, or at least pmax")
    except ValueError as exc:
        msg = str(exc)
        raise ValueError(msg if msg.startswith(where) else f"{where}: {msg}") from None
    return JobClass(name, tuple(argv), model)


def classes_from_dict(raw: Mapping[str, Any], *, base: Path = Path("."), where: str = "classes") -> dict[str, JobClass]:
    table = raw.get("class")
    if not isinstance(table, dict) or not table:
        raise ValueError(f"{where}: no [class.NAME] tables")
    extra = sorted(set(raw) - {"class"})
    if extra:
        raise ValueError(f"{where}: unknown top-level key(s) {', '.join(extra)}; only [class.NAME] tables")
    out = {}
    for name, body in table.items():
        if not isinstance(body, dict):
            raise ValueError(f"{where}: class.{name} must be a table")
        try:
            out[name] = job_class(name, body, base=base)
        except ValueError as exc:
            raise ValueError(f"{where}: {exc}") from None
    return out


def load_classes(path: str | Path) -> dict[str, JobClass]:
    path = Path(path)
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ValueError(f"cannot read classes file {path}: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise ValueError(f"{path}: not UTF-8 text") from None
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"{path}: not valid TOML: {exc}") from None
    return classes_from_dict(raw, base=path.parent, where=str(path))


def _optional(row: Mapping[str, str | None], key: str, path: Path, line: int, *,
              integer: bool = False) -> int | float | None:
    """An optional stream column's value: None when absent or empty."""
    text = (row.get(key) or "").strip()
    if not text:
        return None
    try:
        return int(text) if integer else float(text)
    except ValueError:
        what = "a whole number" if integer else "a number"
        raise ValueError(f"{path}: line {line}: {key} is not {what}: {text!r}") from None


def read_stream(path: str | Path, classes: Mapping[str, JobClass]) -> list[Arrival]:
    """Arrivals in file order; each problem is a ValueError naming the line."""
    path = Path(path)
    text = utf8_text(path, "stream")
    with io.StringIO(text, newline="") as handle:
        reader = csv.DictReader(handle)
        header = [c.strip() for c in (reader.fieldnames or [])]
        reader.fieldnames = header
        missing = [c for c in ("class", "arrival") if c not in header]
        if missing:
            raise ValueError(f"{path}: line 1: missing column(s) {', '.join(missing)}; need class, arrival "
                             "and optionally id, size, walltime")
        out: list[Arrival] = []
        seen: set = set()
        last = 0.0
        for row in reader:
            line = reader.line_num
            name = (row.get("class") or "").strip()
            if name not in classes:
                raise ValueError(f"{path}: line {line}: unknown job class {name!r}; known: {', '.join(classes)}")
            text = (row.get("arrival") or "").strip()
            try:
                arrival = float(text)
            except ValueError:
                raise ValueError(f"{path}: line {line}: arrival is not a number: {text!r}") from None
            if not math.isfinite(arrival) or arrival < 0:
                raise ValueError(f"{path}: line {line}: arrival must be a finite time >= 0, got {text}")
            if arrival < last:
                raise ValueError(f"{path}: line {line}: arrivals not sorted ({arrival:g} after {last:g})")
            last = arrival
            jid_text = (row.get("id") or "").strip() if "id" in header else ""
            # isdecimal() alone takes '²' or '٣', which int() refuses: ASCII digits only
            jid: int | str = (int(jid_text) if jid_text.isascii() and jid_text.isdecimal() else jid_text) \
                if jid_text else len(out)
            if jid in seen:
                raise ValueError(f"{path}: line {line}: duplicate job id {jid!r}")
            seen.add(jid)
            size = _optional(row, "size", path, line, integer=True)
            walltime = _optional(row, "walltime", path, line)
            try:
                out.append(Arrival(jid, classes[name], arrival, size=size, walltime_s=walltime))
            except ValueError as exc:
                raise ValueError(f"{path}: line {line}: {exc}") from None
    if not out:
        raise ValueError(f"{path}: no arrivals")
    return out
