"""A job file's whole text, read once, with the one-line errors every job-file reader gives."""
from __future__ import annotations

from pathlib import Path


def utf8_text(path: Path, what: str) -> str:
    """The file decoded whole, so a byte that is not UTF-8 is one line here; `what` names the file
    in the error ("jobs CSV", "stream")."""
    try:
        return path.read_bytes().decode("utf-8")
    except OSError as exc:
        raise ValueError(f"cannot read {what} {path}: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise ValueError(f"{path}: not UTF-8 text") from None
