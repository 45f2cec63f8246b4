"""One loader for every TOML-plus-pydantic file: the cluster spec, the experiment config, the study spec.

Each caller keeps its own error class; this module only decides what the one line says, so a
misspelled key reads the same everywhere. Rules, in order: a misspelled (unknown) key first,
with a did-you-mean when one is close, because a typo also shows up as a missing key further
down and that one would mislead; then the first invalid value, as `field.sub[0].field: message`.
Pydantic's own messages get `, got X`; a validator's message is kept as written (it says what
it got when it wants to). Imports nothing of nowlab: testbed and experiments both use it.
"""
from __future__ import annotations

import difflib
import tomllib
import types
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Annotated, Any, TypeVar, Union, get_args, get_origin

from pydantic import BaseModel, ValidationError

M = TypeVar("M", bound=BaseModel)
E = TypeVar("E", bound=ValueError)

_PREFIXES = ("Value error, ", "Assertion failed, ")
_GOT_MAX = 60  # characters of a bad value shown; a whole table would make the line unreadable


def field_path(loc: tuple[int | str, ...]) -> str:
    """('workstation', 0, 'links', 'ws2') -> 'workstation[0].links.ws2'."""
    parts: list[str] = []
    for part in loc:
        if isinstance(part, int):
            parts[-1:] = [f"{parts[-1]}[{part}]"] if parts else [f"[{part}]"]
        else:
            parts.append(str(part))
    return ".".join(parts)


def _models_in(tp: Any) -> list[type[BaseModel]]:
    """The pydantic models a (possibly Optional or Annotated) type stands for."""
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        return [tp]
    origin = get_origin(tp)
    if origin is Annotated:
        return _models_in(get_args(tp)[0])
    if origin in (Union, types.UnionType):
        return [m for arg in get_args(tp) for m in _models_in(arg)]
    return []


def _step(tp: Any, part: int | str) -> Any:
    """The type found one step down `part` of a location, or None where it can't be followed."""
    for model in _models_in(tp):
        for name, info in model.model_fields.items():
            if part in (name, info.alias):
                return info.annotation
    origin, args = get_origin(tp), get_args(tp)
    if origin is Annotated:
        return _step(args[0], part)
    if origin in (Union, types.UnionType):
        found = [s for s in (_step(a, part) for a in args if a is not type(None)) if s is not None]
        return found[0] if found else None
    if origin in (list, set, frozenset) and isinstance(part, int):
        return args[0] if args else None
    if origin is tuple and isinstance(part, int) and args:
        return args[0] if args[-1] is Ellipsis else (args[part] if part < len(args) else None)
    if origin is dict and isinstance(part, str) and len(args) == 2:
        return args[1]
    return None


def _is_union(tp: Any) -> bool:
    if get_origin(tp) is Annotated:
        return _is_union(get_args(tp)[0])
    members = [a for a in get_args(tp) if a is not type(None)]
    return get_origin(tp) in (Union, types.UnionType) and len(members) > 1


def _without_union_tags(model: type[BaseModel], loc: tuple[int | str, ...]) -> tuple[int | str, ...]:
    """`loc` without the member name pydantic puts after a union ('classes.str' -> 'classes').

    Pydantic names the member it tried right after a union of two or more types, always.
    """
    out: list[int | str] = []
    tp: Any = model
    for i, part in enumerate(loc):
        if tp is not None and _is_union(tp) and isinstance(part, str):
            return (*out, *loc[i + 1:])  # which member it tried is unknown, so stop following types
        out.append(part)
        tp = None if tp is None else _step(tp, part)
    return tuple(out)


def known_keys(model: type[BaseModel], loc: tuple[int | str, ...]) -> list[str]:
    """The keys a table at `loc` of `model` accepts (aliases and names), [] when unknown."""
    tp: Any = model
    for part in loc:
        tp = _step(tp, part)
        if tp is None:
            return []
    keys = {key for m in _models_in(tp) for name, info in m.model_fields.items()
            for key in (info.alias or name, name)}
    return sorted(keys)


def _unknown(model: type[BaseModel], loc: tuple[int | str, ...], word: str) -> str:
    key, known = str(loc[-1]), known_keys(model, loc[:-1])
    close = difflib.get_close_matches(key, known, n=1, cutoff=0.6)
    if close:
        return f"unknown {word} (did you mean {close[0]!r}?)"
    return f"unknown {word} (known: {', '.join(known)})" if known else f"unknown {word}"


def _shown(value: Any) -> str:
    text = " ".join(repr(value).split())
    return text if len(text) <= _GOT_MAX else text[:_GOT_MAX - 3] + "..."


def one_line(exc: ValidationError, model: type[BaseModel], *, unknown_word: str = "key") -> str:
    """The one line for a validation failure: an unknown key if there is one, else the first error."""
    errors = exc.errors()
    err = next((e for e in errors if e["type"] == "extra_forbidden"), errors[0])
    loc = tuple(err["loc"])
    if err["type"] == "extra_forbidden":
        msg = _unknown(model, loc, unknown_word)
    elif err["type"] == "missing":
        msg = "required"
    else:
        msg = str(err["msg"])
        custom = msg.startswith(_PREFIXES)
        for prefix in _PREFIXES:
            msg = msg.removeprefix(prefix)
        if not custom and "input" in err:
            msg = f"{msg}, got {_shown(err['input'])}"
    where = field_path(_without_union_tags(model, loc))
    return " ".join((f"{where}: {msg}" if where else msg).split())


def validate(model: type[M], raw: Mapping[str, Any], error: type[E], *, unknown_word: str = "key") -> M:
    """`model` from a mapping; a failure is `error` with one line naming the key."""
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        raise error(one_line(exc, model, unknown_word=unknown_word)) from None


def read_toml(path: Path, error: type[E], *, kind: str = "file") -> dict[str, Any]:
    """A TOML file as a dict; a missing, unreadable or non-TOML file is one `error` line.

    A missing file names the whole path (where it was looked for); a bad one only its name.
    """
    try:
        with path.open("rb") as f:
            return tomllib.load(f)
    except FileNotFoundError:
        raise error(f"{path}: no such {kind}") from None
    except UnicodeDecodeError:
        raise error(f"{path.name}: not valid TOML (not UTF-8 text)") from None
    except tomllib.TOMLDecodeError as exc:
        raise error(" ".join(f"{path.name}: not valid TOML ({exc})".split())) from None
    except OSError as exc:
        raise error(f"{path}: cannot read ({exc.strerror})") from None


def load_toml(path: str | Path, model: type[M], error: type[E], *, unknown_word: str = "key",
              kind: str = "file", prepare: Callable[[dict[str, Any]], dict[str, Any]] | None = None) -> M:
    """Read, `prepare` (defaults, expansions; may raise `error`) and validate a TOML file.

    Every line raised names the file, so a user with several files open knows which one.
    """
    path = Path(path)
    raw = read_toml(path, error, kind=kind)
    try:
        return validate(model, prepare(raw) if prepare else raw, error, unknown_word=unknown_word)
    except error as exc:
        raise error(f"{path.name}: {exc}") from None
