"""`python -m testbed` is the `nowlab` command."""
from testbed.cli import main

main()
