"""The SSH backend's host agent, containers/agents/hostagent.py, as a module the controller can use.

The agent runs on each lab host (`up` copies the one file there), so it lives with the other
node-side agents, outside every package. The controller needs its names too (MARK, the
Workstation record; the tests its functions): this loads that same file once, so there is
one copy of the agent and the file copied is the file the controller reads.
"""
from __future__ import annotations

import importlib.util
import sys
from types import ModuleType

from testbed.image import CONTAINERS_DIR

SOURCE = CONTAINERS_DIR / "agents" / "hostagent.py"
MODULE = "nowlab_hostagent"  # its name in sys.modules (dataclasses look their module up there)


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location(MODULE, SOURCE)
    if spec is None or spec.loader is None:
        raise ImportError(f"the SSH host agent is not at {SOURCE}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[MODULE] = module
    spec.loader.exec_module(module)
    return module


hostagent = sys.modules.get(MODULE) or _load()
