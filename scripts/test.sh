#!/usr/bin/env bash
# The test command: sets up everything it needs (venv, Docker engine, workstation image,
# host Open MPI for the container-less tests),
# then runs every test, the live integration tests with real containers included.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/bootstrap.sh"
nowlab_bootstrap
ensure_host_mpi
cd "$NOWLAB_ROOT"
# Leftovers of an earlier, killed run would skew core placement: clear them first.
"$NOWLAB_VENV/bin/nowlab" gc >/dev/null
exec "$NOWLAB_VENV/bin/pytest" -p no:cacheprovider "$@"
