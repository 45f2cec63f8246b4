"""What each workload accepts on its command line, checked when a config is loaded.

A class's `args` become `--key value` options of its workload (`ClassSpec.argv`). The workloads'
own argparse would refuse a misspelled option or a word where a number goes, but only inside a
container, after the results file exists and the cluster is up; and it accepts values that make
no job (`--phases -3`). These models say the same options, with the ranges a job needs, so a
config is refused at load time, in one line naming the option.

The option names and types are the workloads' (workloads/synthetic.py, cg.py, stencil.py,
synthetic_demand.py, runtime.add_job_arguments); tests/unit/experiments/test_experiments_workload_args.py
reads their argparse calls and fails when the two disagree. The workloads themselves are not
imported: they load MPI.
"""
from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from testbed.config_loader import one_line
from workloads import stencildata

# Options of every malleable workload that the runner sets itself (runtime.add_job_arguments).
RUNNER_SET = ("job", "hosts", "control", "resume")


class _Args(BaseModel):
    """The options every malleable workload takes besides those the runner sets."""

    # strict: the value is written as text on the command line, so 5.0 or true where the
    # workload parses an int would fail there ("--phases 5.0")
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False, strict=True)

    ckpt_root: str | None = Field(None, min_length=1, description="checkpoint directory inside a workstation")
    wait: Literal["polite", "spin"] | None = Field(None, description="how MPI waits (workloads/polite.py)")


class SyntheticArgs(_Args):
    phases: int = Field(50, ge=1, description="number of phases")
    mults: int | None = Field(None, ge=0, description="multiplies per phase, all ranks")
    work: float | None = Field(None, gt=0, description="reference-seconds per phase, all ranks")
    msg_bytes: int = Field(32, ge=0, description="broadcast and collect message size")
    redist_bytes: int = Field(512 * 1024, ge=0, description="distributed data moved on preemption")


class CgArgs(_Args):
    n: int = Field(500, ge=1, description="matrix order")
    iterations: int = Field(250, ge=1, description="iteration count (the cap, with tol)")
    tol: float | None = Field(None, gt=0, description="relative residual to stop at")


class StencilArgs(_Args):
    n: int = Field(stencildata.DEFAULT_N, ge=1, description="interior grid points per side")
    iterations: int = Field(stencildata.DEFAULT_ITERATIONS, ge=1, description="Jacobi sweeps (the cap, with tol)")
    residual_every: int = Field(stencildata.DEFAULT_RESIDUAL_EVERY, ge=1, description="sweeps between residual evaluations")
    tol: float | None = Field(None, gt=0, description="relative residual to stop at")


MODELS: dict[str, type[_Args]] = {"synthetic": SyntheticArgs, "cg": CgArgs, "stencil": StencilArgs}


def check(workload: str, args: dict[str, Any]) -> _Args:
    """The args as the workload would take them; a bad one is a ValueError `args.KEY: ...` (one line)."""
    model = MODELS[workload]
    try:
        return model.model_validate(args)
    except ValidationError as exc:
        raise ValueError(f"args.{one_line(exc, model, unknown_word='option')}") from None
