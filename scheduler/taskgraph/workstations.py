"""The workstations a task graph may run on: a name, a speed, and the owner's interactive load.

Speed is in reference cores (`workloads/reference.py`): a task of w reference-seconds takes
w / speed seconds on the dedicated workstation. Owners are Menascé & Rao's closed
interactive workload (§2): N processes, mean think time Z, mean CPU demand D (seconds on
that workstation); none means a dedicated workstation.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field, model_validator


class Owners(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    n: int = Field(ge=0)          # owner processes
    z_s: float = Field(gt=0)      # mean think time
    d_s: float = Field(gt=0)      # mean CPU demand of one command, seconds on this workstation


class Workstation(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    name: str = Field(min_length=1)
    speed_ref_cores: float = Field(gt=0, alias="speed")
    kind: str = ""                # a class name (LX, SPARC5, ...); "" when classes do not matter
    owners: Owners | None = None


class WorkstationSet(BaseModel):
    """The file's workstations, in the order given (PVM's host list)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    description: str = ""
    workstations: tuple[Workstation, ...] = Field(alias="workstation", min_length=1)

    @model_validator(mode="after")
    def _unique(self) -> WorkstationSet:
        dup = [n for n, k in Counter(w.name for w in self.workstations).items() if k > 1]
        if dup:
            raise ValueError(f"workstation {dup[0]!r}: duplicate workstation name")
        return self


def select(workstations: Sequence[Workstation], count: int | None = None, kind: str | None = None,
           owners: Owners | None = None) -> tuple[Workstation, ...]:
    """The first `count` workstations (of one `kind` if given), in list order; `owners` replaces theirs.

    Asking for more than there are is an error rather than a smaller run, so a table row
    never silently measures fewer workstations than its label says.
    """
    pool = [w for w in workstations if kind is None or w.kind == kind]
    if kind is not None and not pool:
        kinds = sorted({w.kind for w in workstations if w.kind})
        raise ValueError(f"kind: no workstation of kind {kind!r} (known: {', '.join(kinds) or 'none'})")
    if count is None:
        count = len(pool)
    if count < 1:
        raise ValueError(f"count: at least 1 workstation, got {count}")
    if count > len(pool):
        where = f" of kind {kind!r}" if kind is not None else ""
        raise ValueError(f"count: asked for {count} workstations{where}, the cluster has {len(pool)}")
    chosen = pool[:count]
    if owners is not None:
        chosen = [w.model_copy(update={"owners": owners}) for w in chosen]
    return tuple(chosen)
