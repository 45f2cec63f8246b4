"""Live executor: runs an arrival stream on a real cluster under any registered policy.

    from scheduler.live import LiveExecutor, load_classes, read_stream
    result = LiveExecutor(arrivals, "FOLDING", cluster, cluster.workstations,
                          cluster.controller_address).run()
"""
from scheduler.live.executor import LiveExecutor
from scheduler.live.result import LiveResult
from scheduler.live.stream import Arrival, JobClass, classes_from_dict, job_class, load_classes, read_stream

__all__ = ["Arrival", "JobClass", "LiveExecutor", "LiveResult", "classes_from_dict", "job_class", "load_classes",
           "read_stream"]
