"""Per-workstation checkpoints of a job's row blocks on local disk.

A resize ends the MPI job and the scheduler relaunches it (see runtime.py), so
each kept workstation parks its block in <root>/<job>/<host>/ on its own disk
between the two runs; nothing goes through the host or a shared filesystem.
The host name is part of the path so that several logical workstations sharing
one machine (host MPI during development) do not collide.
Runs inside the containers: standard library and numpy only.
"""
from __future__ import annotations

import json
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

DEFAULT_ROOT = Path("/tmp/nowlab")
META = "meta.json"


@dataclass
class LocalState:
    """One rank's share of a job: its row block of every distributed array.

    n_rows holds each array's global row count; scalars are replicated on every
    rank (iteration counter, CG's rho) and must be JSON-serialisable. Python
    floats survive JSON exactly (repr round-trips), which the 1e-10 check needs.
    """

    arrays: dict[str, np.ndarray]
    n_rows: dict[str, int]
    scalars: dict[str, Any] = field(default_factory=dict)

    def nbytes(self) -> int:
        return sum(a.nbytes for a in self.arrays.values())


def host_dir(root: Path, job: str, host: str) -> Path:
    for part in (job, host):
        if not part or "/" in part or part in (".", ".."):
            raise ValueError(f"unsafe path component {part!r}")
    return root / job / host


def save(root: Path, job: str, host: str, state: LocalState, layout_hosts: list[str]) -> Path:
    """Write this host's blocks and the layout they belong to; returns the directory."""
    directory = host_dir(root, job, host)
    directory.mkdir(parents=True, exist_ok=True)
    for name, array in state.arrays.items():
        np.save(directory / f"{name}.npy", array, allow_pickle=False)
    meta = {"job": job, "host": host, "layout_hosts": list(layout_hosts),
            "n_rows": state.n_rows, "scalars": state.scalars, "arrays": sorted(state.arrays)}
    tmp = directory / (META + ".tmp")
    tmp.write_text(json.dumps(meta))
    tmp.replace(directory / META)  # meta last: its presence means the blocks are complete
    return directory


def read_meta(root: Path, job: str, host: str) -> dict[str, Any] | None:
    path = host_dir(root, job, host) / META
    return json.loads(path.read_text()) if path.exists() else None


def load_arrays(root: Path, job: str, host: str, names: list[str]) -> dict[str, np.ndarray]:
    directory = host_dir(root, job, host)
    return {name: np.load(directory / f"{name}.npy", allow_pickle=False) for name in names}


def remove(root: Path, job: str, host: str) -> None:
    shutil.rmtree(host_dir(root, job, host), ignore_errors=True)
