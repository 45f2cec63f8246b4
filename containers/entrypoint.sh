#!/bin/sh
# Workstation entrypoint: installs the cluster's SSH key, applies the link shaping it is
# given in the environment, starts sshd, and then waits. The same script serves the
# Python Docker backend, docker-compose and docker stack deploy.
#
#   NOWLAB_TC    tc commands, one per line, each a plain argument list without "tc"
#                (rendered on the host by testbed/shaping.py; rates are always in bit).
#   /run/secrets/nowlab_ssh_key, /run/secrets/nowlab_ssh_key.pub
#                the per-cluster key pair (bind mount or Compose/Swarm secret).
set -eu

key=/run/secrets/nowlab_ssh_key
if [ -f "$key" ]; then
    install -m 600 "$key" /root/.ssh/id_ed25519
    install -m 644 "$key.pub" /root/.ssh/id_ed25519.pub
    install -m 600 "$key.pub" /root/.ssh/authorized_keys
fi
# One ed25519 host key: RSA key generation takes seconds at a 0.1-core cap.
[ -f /etc/ssh/ssh_host_ed25519_key ] || ssh-keygen -q -t ed25519 -N "" -f /etc/ssh/ssh_host_ed25519_key

if [ -n "${NOWLAB_TC:-}" ]; then
    printf '%s\n' "$NOWLAB_TC" | while IFS= read -r line; do
        [ -n "$line" ] || continue
        # Word splitting is intended: each line is an argument list with no quoting.
        # shellcheck disable=SC2086
        tc $line || { echo "nowlab-entrypoint: tc $line failed" >&2; exit 1; }
    done
fi

/usr/sbin/sshd -D -e &
sshd_pid=$!
echo "nowlab-entrypoint: ready" >&2
trap 'kill "$sshd_pid" 2>/dev/null; exit 0' TERM INT
wait "$sshd_pid"
