#!/usr/bin/env bash
# The demo: sets up everything it needs, then brings an emulated NOW up, calibrates it,
# runs an MPI program across it and takes it down.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/bootstrap.sh"
nowlab_bootstrap
cd "$NOWLAB_ROOT"
exec "$NOWLAB_VENV/bin/nowlab" demo "$@"
