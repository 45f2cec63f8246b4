#!/usr/bin/env bash
# Brings a fresh Debian 12 machine (root, only the Docker client) to the point where
# nowlab runs: the virtualenv and its packages, a Docker engine that answers, and the
# workstation image. Every step is skipped when it is already done, so it is cheap to
# run before each command. Sourced by demo.sh and test.sh; safe to run on its own.
set -euo pipefail

NOWLAB_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
NOWLAB_VENV="${NOWLAB_VENV:-$NOWLAB_ROOT/.venv}"
NOWLAB_LOG_DIR="${NOWLAB_LOG_DIR:-/var/log/nowlab}"
export NOWLAB_ROOT NOWLAB_VENV

say() { printf '\033[1;34m[nowlab]\033[0m %s\n' "$*" >&2; }
die() { printf '\033[1;31m[nowlab] error:\033[0m %s\n' "$*" >&2; exit 1; }

apt_install() {
  # apt-get update is needed once on a fresh machine before anything can be installed.
  if [ ! -f /var/lib/apt/periodic/nowlab-updated ] || [ -z "$(ls -A /var/lib/apt/lists 2>/dev/null | grep -v lock)" ]; then
    say "apt-get update"
    apt-get update -q >/dev/null || die "apt-get update failed"
    mkdir -p /var/lib/apt/periodic && touch /var/lib/apt/periodic/nowlab-updated
  fi
  say "installing Debian packages: $*"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$@" >/dev/null \
    || die "apt-get install $* failed"
}

ensure_host_packages() {
  local missing=()
  command -v dockerd >/dev/null || missing+=(docker.io)
  command -v mmdebstrap >/dev/null || missing+=(mmdebstrap)
  command -v docker-compose >/dev/null || missing+=(docker-compose)
  command -v iptables >/dev/null || missing+=(iptables)
  [ ${#missing[@]} -eq 0 ] || apt_install "${missing[@]}"
}

ensure_host_mpi() {
  # Some tests run malleable jobs with the host's own Open MPI (no containers), using the
  # same Debian packages as the workstation image.
  local missing=()
  command -v mpiexec >/dev/null || missing+=(openmpi-bin)
  /usr/bin/python3 -c "import mpi4py" 2>/dev/null || missing+=(python3-mpi4py)
  /usr/bin/python3 -c "import numpy" 2>/dev/null || missing+=(python3-numpy)
  [ ${#missing[@]} -eq 0 ] || apt_install "${missing[@]}"
}

ensure_venv() {
  local stamp="$NOWLAB_VENV/.nowlab-installed"
  if [ ! -x "$NOWLAB_VENV/bin/python" ]; then
    say "creating the virtualenv at $NOWLAB_VENV"
    python3 -m venv "$NOWLAB_VENV" || die "python3 -m venv failed (is python3-venv installed?)"
  fi
  # Reinstall only when pyproject.toml changed since the last install.
  if [ ! -f "$stamp" ] || [ "$NOWLAB_ROOT/pyproject.toml" -nt "$stamp" ]; then
    say "installing Python packages into the virtualenv"
    "$NOWLAB_VENV/bin/pip" install -q -e "$NOWLAB_ROOT[test]" 2> >(grep -v "is ignored: it is neither" >&2) \
      || die "pip install failed"
    # Batsim's Python schedulers, for the protocol tests: its own pins (pyzmq<23) do not build here.
    "$NOWLAB_VENV/bin/pip" install -q --no-deps "pybatsim==3.2.1" 2> >(grep -v "is ignored: it is neither" >&2) \
      || die "pip install pybatsim failed"
    touch "$stamp"
  fi
}

docker_answers() { timeout 5 docker info >/dev/null 2>&1; }

ensure_dockerd() {
  if docker_answers; then return 0; fi
  mkdir -p "$NOWLAB_LOG_DIR"
  say "starting dockerd (log: $NOWLAB_LOG_DIR/dockerd.log)"
  # setsid detaches it from this shell, so it outlives the command that started it.
  setsid dockerd >>"$NOWLAB_LOG_DIR/dockerd.log" 2>&1 < /dev/null &
  local i
  for i in $(seq 1 60); do
    if docker_answers; then say "dockerd is up"; return 0; fi
    sleep 1
  done
  tail -n 20 "$NOWLAB_LOG_DIR/dockerd.log" >&2 || true
  die "the Docker engine did not answer within 60 s; see $NOWLAB_LOG_DIR/dockerd.log"
}

ensure_image() {
  "$NOWLAB_VENV/bin/nowlab" image ensure || die "building the workstation image failed"
}

nowlab_bootstrap() {
  [ "$(id -u)" -eq 0 ] || die "nowlab needs root (it installs packages and runs dockerd)"
  ensure_host_packages
  ensure_venv
  ensure_dockerd
  ensure_image
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  nowlab_bootstrap
fi
