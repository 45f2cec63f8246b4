"""Eq. 1 as a stored model: files, bad input, the monitor's figures and the selection predictor."""
from __future__ import annotations

import json

import pytest

from experiments.models.sv_model import SvModel, SvModelError, predict_on, selection_problem
from experiments.models.sv_store import load_model, read_runs, save_model
from scheduler.selection import select_hosts
from testbed.load.monitor import Availability

MD = SvModel(application="md", problem_size_range=(500, 4000), f_comp="N^2", f_comm="N", f_cpu="x", f_bw="x",
             f_pcomp="P", f_pcomm="P/log P", a_comp_s=2e-5, a_comm_s=3e-3)


def availability() -> Availability:
    cpu = {"ws1": 1.0, "ws2": 0.25, "ws3": 0.9, "ws4": 1.0}
    bw = {(a, b): 9e8 for a in cpu for b in cpu if a != b}
    bw[("ws3", "ws4")] = 5e7  # congested one way
    return Availability(cpu, bw, min(cpu.values()), min(bw.values()))


def test_a_stored_model_reads_back(tmp_path):
    path = save_model(MD, tmp_path / "md.json")
    assert load_model(path, "md") == MD


def test_a_model_of_another_application_is_one_line(tmp_path):
    path = save_model(MD, tmp_path / "md.json")
    with pytest.raises(SvModelError, match=r"^model file md.json: application is 'md', not 'cg'$"):
        load_model(path, "cg")


def test_an_unknown_function_in_a_file_is_one_line_naming_it(tmp_path):
    raw = json.loads(MD.model_dump_json())
    raw["f_pcomm"] = "P^7"
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(raw))
    with pytest.raises(SvModelError) as info:
        load_model(path, "md")
    assert str(info.value).startswith("f_pcomm: ") and "\n" not in str(info.value)


@pytest.mark.parametrize("size", [0, -5])
def test_a_problem_size_not_above_zero_is_one_line(size):
    with pytest.raises(SvModelError, match=r"^problem_size: "):
        MD.predict_s(size, 4, 1.0, 1e9)
    with pytest.raises(SvModelError, match=r"^problem_size: "):
        MD.predictor(size)


def test_missing_availability_for_a_workstation_is_one_line_naming_it():
    with pytest.raises(SvModelError, match=r"^availability: no AvgAvailCPU for workstation ws9$"):
        predict_on(MD, 2000, availability(), ["ws1", "ws9"])


def test_the_slowest_machine_and_link_set_the_prediction():
    t = predict_on(MD, 2000, availability(), ["ws1", "ws3", "ws4"])
    assert t == pytest.approx(MD.predict_s(2000, 3, 0.9, 5e7))


def test_selection_avoids_the_loaded_machine_and_the_congested_link():
    problem = selection_problem(MD, 2000, availability(), ["ws1", "ws2", "ws3", "ws4"])
    best = select_hosts(problem, "BRUTE", budget_s=1.0)
    assert best.workstations in (("ws1", "ws3"), ("ws1", "ws4"))
    assert best.predicted_s == pytest.approx(min(MD.predict_s(2000, 2, c, 9e8) for c in (0.9, 1.0)))


def test_training_runs_without_a_column_are_one_line_naming_it(tmp_path):
    path = tmp_path / "runs.csv"
    path.write_text("problem_size,procs,min_avail_cpu,elapsed_s\n1000,4,1.0,12.5\n")
    with pytest.raises(SvModelError, match=r"^runs file runs.csv: no column min_avail_bw_bit_s"):
        read_runs(path)


def test_training_runs_read_back(tmp_path):
    path = tmp_path / "runs.csv"
    path.write_text("problem_size,procs,min_avail_cpu,min_avail_bw_bit_s,elapsed_s,host\n1000,4,0.5,9e8,12.5,a\n")
    (run,) = read_runs(path)
    assert (run.problem_size, run.procs, run.min_avail_cpu, run.min_avail_bw_bit_s, run.elapsed_s) == (
        1000, 4, 0.5, 9e8, 12.5)
