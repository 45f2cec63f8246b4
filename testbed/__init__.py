"""nowlab testbed: emulated workstations (Docker containers) with CPU caps and shaped links."""
from testbed.cluster import Cluster, cluster
from testbed.spec import ClusterSpec, SpecError, from_dict, load

__all__ = ["Cluster", "ClusterSpec", "SpecError", "cluster", "from_dict", "load"]
