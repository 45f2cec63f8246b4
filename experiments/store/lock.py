"""One writer per results file: an exclusive flock on `NAME.sqlite.lock`, held while the store is open.

Two runners resuming the same file would both run its unfinished cells and count their jobs
twice (or fail on the UNIQUE constraint halfway). The lock is taken before anything is written
and is released by the kernel when its holder exits however it exits, so a lock file left by a
dead runner blocks nothing: only a live holder does. The holder's PID is written into the file
for the refusal's message. The holder removes the file when it lets go, while still holding it;
a process that locked a file just removed (it opened it a moment before) sees that the path no
longer names its file and tries again, so two processes never hold locks on two different files.
"""
from __future__ import annotations

import fcntl
import os
from pathlib import Path


class StoreLocked(ValueError):
    """The results file is open for writing elsewhere; one line naming the file and the holder."""


def lock_path(store: Path) -> Path:
    return store.with_name(store.name + ".lock")


class WriterLock:
    """The held lock of one results file; `release` (or the process's end) lets the next writer in."""

    def __init__(self, store: Path, fd: int) -> None:
        self.store = store
        self._fd: int | None = fd

    @classmethod
    def acquire(cls, store: str | Path) -> "WriterLock":
        """Take the lock without waiting; a live holder is a StoreLocked naming its PID."""
        store = Path(store)
        path = lock_path(store)
        for _ in range(_ATTEMPTS):
            fd = _locked(store, path)
            if _same_file(fd, path):
                os.ftruncate(fd, 0)
                os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
                return cls(store, fd)
            os.close(fd)  # its holder removed it between our open and our flock: take the new one
        raise StoreLocked(f"results: {store}: the lock file {path.name} keeps changing; another runner is starting")

    @property
    def held(self) -> bool:
        return self._fd is not None

    def release(self) -> None:
        if self._fd is not None:
            fd, self._fd = self._fd, None
            lock_path(self.store).unlink(missing_ok=True)  # still held: nobody can lock it meanwhile
            os.close(fd)  # closing the only descriptor releases the flock


_ATTEMPTS = 20


def _locked(store: Path, path: Path) -> int:
    """A descriptor of `path` holding its exclusive flock; a live holder is StoreLocked."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    except OSError as exc:
        raise StoreLocked(f"results: {store}: cannot create the lock file {path.name} ({exc.strerror})") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = _holder(fd)
        os.close(fd)
        raise StoreLocked(f"results: {store} is in use by another runner ({holder}); "
                          "wait for it to end or stop it, then resume") from None
    except OSError as exc:
        os.close(fd)
        raise StoreLocked(f"results: {store}: cannot lock {path.name} ({exc.strerror})") from None
    return fd


def _same_file(fd: int, path: Path) -> bool:
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return False
    own = os.fstat(fd)
    return (st.st_dev, st.st_ino) == (own.st_dev, own.st_ino)


def _holder(fd: int) -> str:
    """'pid N' from the lock file, or what is known when the holder has not written it yet."""
    text = os.pread(fd, 32, 0).decode("ascii", errors="replace").strip()
    return f"pid {text}" if text.isdigit() else "pid not yet written"
