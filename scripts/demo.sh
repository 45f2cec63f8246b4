#!/usr/bin/env bash
# The demo: sets up everything it needs, then runs a short live scheduling experiment on
# 8 emulated workstations and prints the report (measured beside predicted).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/bootstrap.sh"
nowlab_bootstrap
cd "$NOWLAB_ROOT"
exec "$NOWLAB_VENV/bin/nowlab" demo "$@"
