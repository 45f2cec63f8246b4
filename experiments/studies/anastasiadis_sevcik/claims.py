"""The paper's claims, each answered from the measured cells.

Every number in the table is computed from the cells table (the rows of
cells.csv); nothing is typed in. Each claim is the shared
``experiments.reporting.claims.Claim``, judged on its checks by the shared rule;
its ``paper`` is this study's ``claim.Record``, with the paper's sentence and how
its threshold follows from it (``quote``, ``reading``); the thresholds
themselves are in ``claim.Thresholds``, in one place.

DIF can be read three ways (``scheduler.policies.dif``). The main table uses
the default reading (ASP(2), AP1(2), AEP(2)); ``dif_variant_table`` answers the
claims that depend on DIF again under each other reading that was run.
"""
from __future__ import annotations

import pandas as pd

from experiments.studies.anastasiadis_sevcik import claims_adaptive, claims_dif, claims_sdf
from experiments.reporting.claims import Claim, Verdict
from experiments.studies.anastasiadis_sevcik.claim import Record, Thresholds, cell
from scheduler.policies.dif import DifReading, same_as

__all__ = ["Claim", "Record", "Thresholds", "cell", "evaluate", "to_frame", "dif_variant_table", "readings_run",
           "SECTION_64", "SECTION_7"]

#: The claims of §6.4 and of §7's paragraph on DIF and DYN-EQUI, by key: what a DIF reading must reproduce.
SECTION_64 = ("aep2_beats", "dif_negligible_asp_ap1", "dif_only_exec", "dif_helps_aep")
SECTION_7 = ("dif_helps_aep", "dif_negligible_asp_ap1", "dyn_better_below_90", "beat_dyn_very_high_all",
             "aep2_near_dyn", "asp2_far_from_dyn")


def evaluate(cells: pd.DataFrame, th: Thresholds | None = None) -> list[Claim]:
    """Every claim, in the paper's order; claims whose cells were not run say 'no data'."""
    th = th or Thresholds()
    return [f(cells, th) for f in (*claims_sdf.CLAIMS, *claims_adaptive.CLAIMS, *claims_dif.CLAIMS)]


def _name(base: str, reading: DifReading) -> str:
    """The policy whose cells stand for ``base``(2) under ``reading`` (ASP(2)-SHARE's are ASP(2)-FREE's)."""
    return f"{base}(2){same_as(base, reading).suffix}"


def readings_run(cells: pd.DataFrame) -> list[DifReading]:
    """The DIF readings whose ASP(2), AP1(2) and AEP(2) are all in ``cells``."""
    have = set(cells.policy)
    return [r for r in DifReading if all(_name(b, r) in have for b in ("ASP", "AP1", "AEP"))]


def as_reading(cells: pd.DataFrame, reading: DifReading) -> pd.DataFrame:
    """The cells with ``reading``'s (2) policies under the plain names ASP(2), AP1(2), AEP(2)."""
    names = {_name(b, reading): f"{b}(2)" for b in ("ASP", "AP1", "AEP")}
    plain = set(names.values())
    other = {f"{b}(2){r.suffix}" for r in DifReading for b in ("ASP", "AP1", "AEP")} - set(names) - plain
    kept = cells[~cells.policy.isin(plain | other) | cells.policy.isin(set(names))]
    return kept.assign(policy=kept.policy.replace(names))


def dif_variant_table(cells: pd.DataFrame, th: Thresholds | None = None) -> pd.DataFrame:
    """One row per (DIF reading run, DIF-dependent claim): value, verdict and answer."""
    th = th or Thresholds()
    rows = []
    for reading in readings_run(cells):
        view = as_reading(cells, reading)
        for f in claims_dif.DIF_DEPENDENT:
            c = f(view, th)
            rows.append({"reading": reading.value, "key": c.paper.key, "section": c.paper.section,
                         "statement": c.statement, "value": c.paper.value, "verdict": c.verdict.value,
                         "words": c.words, "answer": c.paper.answer})
    return pd.DataFrame(rows, columns=["reading", "key", "section", "statement", "value", "verdict", "words", "answer"])


def holding(table: pd.DataFrame, reading: str, keys: tuple[str, ...]) -> tuple[int, int]:
    """(claims among ``keys`` that hold under ``reading``, how many of them were evaluated)."""
    rows = table[(table.reading == reading) & table.key.isin(keys)]
    return int((rows.verdict == Verdict.HOLDS.value).sum()), len(rows)


def to_frame(claims: list[Claim]) -> pd.DataFrame:
    """The claims as a table (claims.csv)."""
    return pd.DataFrame([{"key": c.paper.key, "section": c.paper.section, "statement": c.statement,
                          "value": c.paper.value, "value_label": c.paper.value_label, "answer": c.paper.answer,
                          "verdict": c.verdict.value, "words": c.words, "not_holding": c.detail,
                          "quote": c.paper.quote,
                          "reading": c.paper.reading}
                         for c in claims])
