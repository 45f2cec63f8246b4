"""Performance benchmarks: what nowlab's parts cost in time and CPU. Run from the repo root as
`python -m benchmarks.<name>`; nothing below this layer imports them."""
