"""Which workstations a tightly coupled job should get (Sanjay & Vadhiyar 2009, §4).

Pure: a problem (workstations, link availability, a predictor of run time) goes in, the
subset with the least predicted time that an algorithm found within its budget comes out.
"""
from scheduler.selection.problem import Selection, SelectionProblem, SubsetSummary, Workstation
from scheduler.selection.registry import algorithm_names, select_hosts

__all__ = ["Selection", "SelectionProblem", "SubsetSummary", "Workstation", "algorithm_names", "select_hosts"]
