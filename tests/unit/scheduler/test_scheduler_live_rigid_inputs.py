"""A rigid job's live inputs: the arrival's size and walltime, each bad one a one-line error, and the
executor's refusal of a stream it could not run (before anything starts)."""
from __future__ import annotations

import pytest

from scheduler.live import Arrival, LiveExecutor
from scheduler.live.stream import JobClass, PmaxOnlyModel
from scheduler.model import RuntimeModel
from workloads.host.launch import LocalLauncher

RIGID = JobClass("delay", ("python3", "-m", "workloads.rigid", "--sleep", "1"), RuntimeModel(1.0), rigid=True)
MALLEABLE = JobClass("syn", ("python3", "-m", "workloads.synthetic"), PmaxOnlyModel(4))


def test_a_rigid_arrival_is_the_state_machines_rigid_job():
    job = Arrival(7, RIGID, 2.5, size=3, walltime_s=10.0).job()
    assert (job.id, job.arrival, job.size, job.walltime) == (7, 2.5, 3, 10.0)
    assert Arrival(8, MALLEABLE, 0.0).job().size is None


@pytest.mark.parametrize("make, words", [
    (lambda: Arrival(0, RIGID, 0.0), "size: class delay is rigid"),
    (lambda: Arrival(0, MALLEABLE, 0.0, size=2), "size: class syn is malleable"),
    (lambda: Arrival(0, MALLEABLE, 0.0, walltime_s=5.0), "walltime_s: a live run kills only rigid jobs"),
    (lambda: Arrival(0, RIGID, 0.0, size=0), "size must be an integer >= 1"),
    (lambda: Arrival(0, RIGID, 0.0, size=2, walltime_s=0.0), "walltime must be a finite time > 0"),
])
def test_each_bad_field_is_one_line_naming_it(make, words):
    with pytest.raises(ValueError, match=words) as info:
        make()
    assert "\n" not in str(info.value)


def test_a_rigid_job_wider_than_the_cluster_is_refused_before_anything_starts():
    with pytest.raises(ValueError, match="asks for exactly 5 processors; the machine has P=4"):
        LiveExecutor([Arrival(0, RIGID, 0.0, size=5)], "EASY", LocalLauncher(), ["a", "b", "c", "d"], "127.0.0.1")


def test_a_rigid_class_and_its_rows_read_from_files(tmp_path):
    from experiments.traces.live_inputs import load_classes, read_stream

    (tmp_path / "classes.toml").write_text(
        '[class.ring]\nrigid = true\nargv = ["nowlab-ring", "2.0", "20"]\nruntime = 1.5\n'
        '[class.syn]\nargv = ["python3", "-m", "workloads.synthetic"]\npmax = 4\n')
    (tmp_path / "stream.csv").write_text("class,arrival,size,walltime\nring,0,2,3.0\nsyn,0.5,,\nring,1,4,\n")
    classes = load_classes(tmp_path / "classes.toml")
    assert classes["ring"].rigid and classes["ring"].model.T(2) == 1.5 and not classes["syn"].rigid
    got = read_stream(tmp_path / "stream.csv", classes)
    assert [(a.id, a.size, a.walltime_s) for a in got] == [(0, 2, 3.0), (1, None, None), (2, 4, None)]


@pytest.mark.parametrize("classes, stream, words", [
    ('[class.r]\nrigid = true\nargv = ["x"]\n', "class,arrival,size\nr,0,1\n", "runtime: a rigid class needs"),
    ('[class.r]\nrigid = true\nargv = ["x"]\nruntime = 1\npmax = 2\n', "class,arrival,size\nr,0,1\n",
     "takes argv and runtime only, not pmax"),
    ('[class.r]\nargv = ["x"]\nruntime = 1\n', "class,arrival\nr,0\n", "runtime is a rigid class's"),
    ('[class.r]\nrigid = true\nargv = ["x"]\nruntime = 1\n', "class,arrival,size\nr,0,\n", "line 2: job 0: size:"),
    ('[class.r]\nrigid = true\nargv = ["x"]\nruntime = 1\n', "class,arrival,size\nr,0,two\n",
     "line 2: size is not a whole number: 'two'"),
])
def test_each_bad_rigid_input_is_one_line_naming_the_field(tmp_path, classes, stream, words):
    from experiments.traces.live_inputs import load_classes, read_stream

    (tmp_path / "c.toml").write_text(classes)
    (tmp_path / "s.csv").write_text(stream)
    with pytest.raises(ValueError, match=words) as info:
        read_stream(tmp_path / "s.csv", load_classes(tmp_path / "c.toml"))
    assert "\n" not in str(info.value)
