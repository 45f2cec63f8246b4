"""Eq. 1 models and their training runs on disk: a model is JSON, training runs are CSV.

A model file names its application; reading it for another application is an error, so a
CG model never predicts a stencil.
"""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from experiments.models.sv_model import SvModel, SvModelError
from experiments.models.sv_regression import TrainingRun
from testbed.config_loader import validate

RUN_COLUMNS = ("problem_size", "procs", "min_avail_cpu", "min_avail_bw_bit_s", "elapsed_s")


def save_model(model: SvModel, path: str | Path) -> Path:
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(model.model_dump_json(indent=2) + "\n")
    return out


def load_model(path: str | Path, application: str) -> SvModel:
    """The stored model of `application`; a model of another application is one line naming it."""
    p = Path(path)
    try:
        raw = json.loads(p.read_text())
    except FileNotFoundError:
        raise SvModelError(f"model file {p}: not found") from None
    except (OSError, json.JSONDecodeError) as exc:
        raise SvModelError(f"model file {p.name}: not readable JSON ({str(exc).splitlines()[0]})") from None
    if not isinstance(raw, dict):
        raise SvModelError(f"model file {p.name}: not a JSON object")
    model = validate(SvModel, raw, SvModelError)
    if model.application != application:
        raise SvModelError(f"model file {p.name}: application is {model.application!r}, not {application!r}")
    return model


def read_runs(path: str | Path) -> list[TrainingRun]:
    """Training runs from a CSV with the columns of `RUN_COLUMNS` (others are ignored)."""
    p = Path(path)
    try:
        table = pd.read_csv(p)
    except FileNotFoundError:
        raise SvModelError(f"runs file {p}: not found") from None
    except (OSError, pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        raise SvModelError(f"runs file {p.name}: not a CSV ({str(exc).splitlines()[0]})") from None
    missing = [c for c in RUN_COLUMNS if c not in table.columns]
    if missing:
        raise SvModelError(f"runs file {p.name}: no column {missing[0]} (needs {', '.join(RUN_COLUMNS)})")
    return [TrainingRun(float(r.problem_size), int(r.procs), float(r.min_avail_cpu), float(r.min_avail_bw_bit_s),
                        float(r.elapsed_s)) for r in table.itertuples()]
