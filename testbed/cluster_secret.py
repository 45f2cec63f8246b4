"""The cluster's secret: what the host proves before a workstation's pool rank or time-sharing
manager takes a message from it (workloads/channel_auth.py, channels POOL and TIMESHARE).

Per cluster, not per run: the resident pool and the managers outlive runs. Made at `up`
beside the SSH key pair, in the cluster's own folder, in a file only its owner may read
(0600), and gone with the folder at `down` (state.forget). It reaches a workstation only in
the environment of the processes that need it (the Docker exec's environment, then
`mpiexec -x NOWLAB_CLUSTER_SECRET`), never on a command line or in the image.
"""
from __future__ import annotations

import os
from pathlib import Path

from workloads import channel_auth

FILE_NAME = "cluster_secret"  # hex, one line


def path(directory: Path) -> Path:
    return directory / FILE_NAME


def make(directory: Path) -> bytes:
    """A fresh secret in `directory` (made 0700 if new), replacing any older one."""
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    secret = channel_auth.new_secret()
    tmp = directory / f"{FILE_NAME}.tmp"
    _write_private(tmp, secret, exclusive=False)
    tmp.replace(path(directory))
    return secret


def load_or_make(directory: Path) -> bytes:
    """The secret kept in `directory`; a new one if there is none (a cluster from before secrets).

    Two processes that get here at once end up with the same secret: the file is created
    exclusively, and the one that loses reads the winner's.
    """
    p = path(directory)
    if not p.exists():
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        try:
            secret = channel_auth.new_secret()
            _write_private(p, secret, exclusive=True)
            return secret
        except FileExistsError:
            pass
    return load(directory)


def load(directory: Path) -> bytes:
    """The secret kept in `directory`; LookupError if there is none, ValueError naming the file if it is bad."""
    p = path(directory)
    try:
        text = p.read_text().strip()
    except FileNotFoundError:
        raise LookupError(f"{p}: no cluster secret (is the cluster up?)") from None
    if os.stat(p).st_mode & 0o077:
        p.chmod(0o600)  # readable by others (copied by hand?): private again
    return channel_auth.parse_secret(text, str(p))


def _write_private(p: Path, secret: bytes, *, exclusive: bool) -> None:
    flags = os.O_WRONLY | os.O_CREAT | (os.O_EXCL if exclusive else os.O_TRUNC)
    fd = os.open(p, flags, 0o600)
    with os.fdopen(fd, "w") as fh:
        os.fchmod(fh.fileno(), 0o600)  # an existing file keeps its mode through O_CREAT: set it
        fh.write(secret.hex() + "\n")
