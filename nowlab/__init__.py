"""The `nowlab` command line: the top layer. Nothing in testbed, workloads, scheduler or
experiments imports it (docs/architecture.md; checked by import-linter)."""
