"""Host-side probes of the benchmarks, run as `python -m benchmarks.probes.<name>`."""
