"""nowlab: workloads."""
