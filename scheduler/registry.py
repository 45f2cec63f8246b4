"""Policies by name, as configs and the command line spell them (case-insensitive)."""
from __future__ import annotations

from typing import Callable

from scheduler.policies.adaptive import dif_variants, family
from scheduler.policies.dynequi import DynEqui
from scheduler.policies.equi import Equipartition, EquipartitionFloor
from scheduler.policies.folding import Folding
from scheduler.policies.ra import RA
from scheduler.policy import Policy


def _factories() -> dict[str, Callable[[], Policy]]:
    table: dict[str, Callable[[], Policy]] = {
        "RA": RA, "EQUI": Equipartition, "EQUI-FLOOR": EquipartitionFloor, "FOLDING": Folding}
    for rule in family():
        table[rule.name] = (lambda name=rule.name: next(r for r in family() if r.name == name))
    table["DYN-EQUI"] = DynEqui
    for rule in dif_variants():  # DIF read otherwise than the default (scheduler/policies/dif.py)
        table[rule.name] = (lambda name=rule.name: next(r for r in dif_variants() if r.name == name))
    return table


_FACTORIES = _factories()


def policy_names() -> list[str]:
    """Registered names, in a stable order (the papers' order)."""
    return list(_FACTORIES)


def get_policy(name: str) -> Policy:
    """A fresh policy object for `name`; a ValueError lists the known names."""
    key = name.strip().upper()
    if key not in _FACTORIES:
        raise ValueError(f"unknown policy {name!r}; known: {', '.join(policy_names())}")
    return _FACTORIES[key]()
