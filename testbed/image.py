"""The workstation image: an mmdebstrap base from the host's apt sources, finished by a Dockerfile.

Nothing is pulled from a registry. The image tag is a hash of `containers/`, so the image
is rebuilt exactly when what goes into it changes. Docker is imported by the functions that
build, not with the module: the experiments key profiles by `image_ref` and need no engine.
"""
from __future__ import annotations

import hashlib
import io
import subprocess
import tarfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import docker

CONTAINERS_DIR = Path(__file__).resolve().parent.parent / "containers"
REPOSITORY = "nowlab/workstation"
LATEST = f"{REPOSITORY}:latest"  # what hand-run Compose files use; moved to each new build
BASE_REPOSITORY = "nowlab/base"
SUITE = "bookworm"


@dataclass(frozen=True)
class ImageRef:
    base: str
    image: str


def _digest(paths: list[Path], root: Path) -> str:
    h = hashlib.sha256()
    for path in sorted(paths):
        h.update(str(path.relative_to(root)).encode())
        h.update(b"\0")
        h.update(path.read_bytes())
        h.update(b"\0")
    return h.hexdigest()[:12]


def packages(containers_dir: Path = CONTAINERS_DIR) -> list[str]:
    lines = (containers_dir / "packages.txt").read_text().splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


def image_ref(containers_dir: Path = CONTAINERS_DIR) -> ImageRef:
    files = [p for p in containers_dir.rglob("*") if p.is_file() and "__pycache__" not in p.parts]
    base = _digest([containers_dir / "packages.txt"], containers_dir)
    return ImageRef(base=f"{BASE_REPOSITORY}:{base}", image=f"{REPOSITORY}:{_digest(files, containers_dir)}")


def _exists(client: docker.DockerClient, tag: str) -> bool:
    import docker.errors

    try:
        client.images.get(tag)
    except docker.errors.ImageNotFound:
        return False
    return True


def build_base(tag: str, pkgs: list[str], log) -> None:
    """mmdebstrap | docker import: the apt sources and mirror are the host's own."""
    repo, _, version = tag.partition(":")
    log(f"building base {tag} with mmdebstrap ({len(pkgs)} packages, about a minute)")
    debootstrap = subprocess.Popen(
        ["mmdebstrap", "--variant=apt", "--quiet", f"--include={','.join(pkgs)}",
         "--dpkgopt=path-exclude=/usr/share/doc/*", "--dpkgopt=path-exclude=/usr/share/man/*",
         "--dpkgopt=path-exclude=/usr/share/locale/*", SUITE, "-"],
        stdout=subprocess.PIPE)
    importer = subprocess.run(["docker", "import", "-", f"{repo}:{version}"], stdin=debootstrap.stdout,
                              capture_output=True, text=True)
    assert debootstrap.stdout is not None
    debootstrap.stdout.close()
    if debootstrap.wait() != 0:
        raise RuntimeError(f"mmdebstrap failed with exit code {debootstrap.returncode}")
    if importer.returncode != 0:
        raise RuntimeError(f"docker import failed: {importer.stderr.strip()}")


def _context_tar(containers_dir: Path) -> io.BytesIO:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for path in sorted(containers_dir.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                tar.add(path, arcname=str(path.relative_to(containers_dir)))
    buf.seek(0)
    return buf


def ensure_image(client: docker.DockerClient, *, force: bool = False, log=print,
                 containers_dir: Path = CONTAINERS_DIR) -> str:
    """Return the workstation image tag, building whatever is missing (or all, if forced)."""
    import docker.errors

    ref = image_ref(containers_dir)
    if not force and _exists(client, ref.image):
        client.images.get(ref.image).tag(LATEST)
        return ref.image
    if force or not _exists(client, ref.base):
        build_base(ref.base, packages(containers_dir), log)
    log(f"building {ref.image} from {ref.base}")
    try:
        client.images.build(fileobj=_context_tar(containers_dir), custom_context=True, tag=ref.image,
                            buildargs={"BASE": ref.base}, rm=True, forcerm=True, pull=False,
                            labels={"nowlab.image": "workstation"})
    except docker.errors.BuildError as exc:
        tail = "".join(str(chunk.get("stream", chunk.get("error", ""))) for chunk in exc.build_log)[-2000:]
        raise RuntimeError(f"docker build failed: {exc.msg}\n{tail}") from exc
    client.images.get(ref.image).tag(LATEST)
    return ref.image
