"""Live executor: runs an arrival stream on a real cluster under any registered policy.

    from experiments.traces.live_inputs import load_classes, read_stream
    from scheduler.live import LiveExecutor
    result = LiveExecutor(arrivals, "FOLDING", cluster, cluster.workstations,
                          cluster.controller_address).run()
"""
from scheduler.live.executor import LiveExecutor
from scheduler.live.result import LiveResult
from scheduler.live.stream import Arrival, JobClass

__all__ = ["Arrival", "JobClass", "LiveExecutor", "LiveResult"]
