"""`python -m nowlab` is the `nowlab` command."""
from nowlab.cli import main

main()
