"""A fresh SSH key pair per cluster, made at `up` and never baked into the image."""
from __future__ import annotations

import os
from pathlib import Path

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

KEY_NAME = "nowlab_ssh_key"


def make_keypair(directory: Path, comment: str) -> Path:
    """Write KEY_NAME and KEY_NAME.pub (OpenSSH formats) into `directory`; return the private key path."""
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    directory.chmod(0o700)  # the cluster's folder is the key's only place on the host
    key = Ed25519PrivateKey.generate()
    private = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.OpenSSH,
                                serialization.NoEncryption())
    public = key.public_key().public_bytes(serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH)
    path = directory / KEY_NAME
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as fh:
        os.fchmod(fh.fileno(), 0o600)  # an existing file keeps its mode through O_CREAT: set it
        fh.write(private)
    (directory / f"{KEY_NAME}.pub").write_bytes(public + f" {comment}\n".encode())
    return path
