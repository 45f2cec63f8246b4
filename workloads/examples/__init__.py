"""Worked examples of malleable programs written on the runtime (docs/your-workload.md)."""
