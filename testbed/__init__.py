"""nowlab testbed: emulated workstations (Docker containers) with CPU caps and shaped links.

The names below load on first use (PEP 562), so that importing a light submodule
(testbed.units, testbed.progress) does not pay for Docker. `testbed.cluster` is the
`cluster()` context manager of testbed.lifecycle, as it was when these were imported
eagerly: loading the submodule of the same name must not replace it. (`testbed.load` is
the load package; a spec file is read with `testbed.spec.load`.)
"""
from __future__ import annotations

import importlib
import sys
import types

_EXPORTS = {"Cluster": "testbed.cluster", "cluster": "testbed.lifecycle", "up": "testbed.lifecycle",
            "ClusterSpec": "testbed.spec",
            "SpecError": "testbed.spec", "from_dict": "testbed.spec"}

__all__ = list(_EXPORTS)


def __getattr__(name: str) -> object:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'testbed' has no attribute {name!r}")
    value = getattr(importlib.import_module(_EXPORTS[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))


class _Package(types.ModuleType):
    """Keeps the exported functions when a submodule of the same name is first imported."""

    def __setattr__(self, name: str, value: object) -> None:
        if name in _EXPORTS and isinstance(value, types.ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
