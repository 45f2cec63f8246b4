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
# Two passes, each given this script's arguments: the tests without containers on both cores
# (pytest-xdist), then the integration tests one at a time, since they pin workstations to
# the cores and time them. Both passes run; the first failure's status is the exit status.
pytest_pass() {
  local rc=0
  "$NOWLAB_VENV/bin/pytest" -p no:cacheprovider "$@" || rc=$?
  [ "$rc" -ne 5 ] || rc=0  # 5: none of the tests asked for is of this pass's kind
  return "$rc"
}
status=0
pytest_pass -m "not integration" -n 2 "$@" || status=$?
pytest_pass -m integration "$@" || { rc=$?; [ "$status" -ne 0 ] || status=$rc; }
exit "$status"
