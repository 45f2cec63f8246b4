"""A `workload = "stencil"` class in an experiment config: its command line and its work."""
from __future__ import annotations

import pytest

from experiments.config import ClassSpec
from workloads import stencildata


def test_a_stencil_class_runs_the_stencil_module_with_its_demand_in_iterations():
    cls = ClassSpec(workload="stencil", args={"n": 400, "residual_every": 5})
    assert cls.base_demand == stencildata.DEFAULT_ITERATIONS
    assert cls.argv(2.0) == ["python3", "-m", "workloads.stencil", "--n", "400", "--residual-every", "5",
                             "--iterations", str(2 * stencildata.DEFAULT_ITERATIONS)]
    assert cls.work_per_phase_ref_s == pytest.approx(stencildata.work_per_iteration_ref_s(400, 5))
    assert cls.work_ref_s(1.0) == pytest.approx(stencildata.DEFAULT_ITERATIONS * cls.work_per_phase_ref_s)


def test_a_stencil_class_without_arguments_uses_the_workloads_defaults():
    cls = ClassSpec(workload="stencil")
    assert cls.work_per_phase_ref_s == stencildata.work_per_iteration_ref_s(stencildata.DEFAULT_N)
    assert cls.argv() == ["python3", "-m", "workloads.stencil", "--iterations", str(stencildata.DEFAULT_ITERATIONS)]


def test_an_unknown_workload_is_refused_with_the_known_ones():
    with pytest.raises(ValueError, match="'synthetic', 'cg' or 'stencil'"):
        ClassSpec(workload="jacobi")
