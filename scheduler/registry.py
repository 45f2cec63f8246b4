"""Policies by name, as configs and the command line spell them (case-insensitive)."""
from __future__ import annotations

from typing import Callable

from scheduler.policies.adaptive import dif_variants, family
from scheduler.policies.dynequi import DynEqui
from scheduler.policies.easy import EASY, ConservativeBackfill
from scheduler.policies.equi import Equipartition, EquipartitionFloor
from scheduler.policies.fcfs import FCFS
from scheduler.policies.folding import Folding
from scheduler.policies.ra import RA
from scheduler import user_policies
from scheduler.policy import Policy


def _factories() -> dict[str, Callable[[], Policy]]:
    table: dict[str, Callable[[], Policy]] = {
        "RA": RA, "EQUI": Equipartition, "EQUI-FLOOR": EquipartitionFloor, "FOLDING": Folding}
    for rule in family():
        table[rule.name] = (lambda name=rule.name: next(r for r in family() if r.name == name))
    table["DYN-EQUI"] = DynEqui
    for rule in dif_variants():  # DIF read otherwise than the default (scheduler/policies/dif.py)
        table[rule.name] = (lambda name=rule.name: next(r for r in dif_variants() if r.name == name))
    # the batch baselines, for rigid jobs and requested walltimes (mixed streams run too)
    table["FCFS"] = FCFS
    table["EASY"] = EASY
    table["EASY-CONSERVATIVE"] = ConservativeBackfill
    return table


_FACTORIES = _factories()


def policy_names() -> list[str]:
    """Registered names, in a stable order (the papers' order)."""
    return list(_FACTORIES)


def get_policy(name: str, *, select: str | None = None, select_budget_s: float | None = None,
               select_seed: int = 0) -> Policy:
    """A fresh policy object for `name`; a ValueError lists the known names.

    Besides the built-in names: `FILE.py:CLASS`, `package.module:CLASS` and the names installed
    packages register as `nowlab.policies` entry points (`scheduler.user_policies`).

    `select` (or a suffix, "RA+BE") names a machine-selection algorithm (SA, GA, DP, BE, BRUTE; SA-FIG1 and GA-FIG2 are Figs. 1 and 2 as printed):
    the policy still decides how many processors and when, the selection which ones, within
    `select_budget_s` per search (`scheduler.selection.placement`).
    """
    text = name.strip()
    if "+" in text and select is None and text.rsplit("+", 1)[1].strip().isalnum():
        text, select = (part.strip() for part in text.rsplit("+", 1))
        select = select.upper()
    make = _FACTORIES.get(text.upper())
    if make is None:  # the user's own: FILE.py:CLASS, module:CLASS, or an installed entry point
        make = user_policies.factory(text) if user_policies.is_code_spec(text) else \
            user_policies.entry_point_factory(text)
    if make is None:
        known = ", ".join(policy_names() + user_policies.entry_point_names())
        raise ValueError(f"unknown policy {name!r}; known: {known} (or FILE.py:CLASS, package.module:CLASS)")
    if select is None:
        if select_budget_s is not None:
            raise ValueError("select_budget_s: given without select (name an algorithm, e.g. select='BE')")
        return make()
    from scheduler.selection.placement import DEFAULT_BUDGET_S, SelectingPolicy  # numpy and DEAP: only when asked

    budget_s = DEFAULT_BUDGET_S if select_budget_s is None else select_budget_s
    return SelectingPolicy(make(), select, budget_s, select_seed)
