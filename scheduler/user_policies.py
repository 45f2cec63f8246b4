"""Policies from the user's own code: a class in a file or a module, or an installed entry point.

`path/to/file.py:ClassName` and `package.module:ClassName` name a class in the user's code; a
plain name that is not built in is looked up in the `nowlab.policies` entry-point group, so an
installed package registers its own names (`[project.entry-points."nowlab.policies"]`,
`SJF-HALF = "mypkg.sjf:ShortestFirstHalf"`). Each is loaded once per process and every call
makes a fresh object, as the built-in factories do; the same object then runs in the simulator
and live.

Loading runs the user's code (importlib), which is why it lives here and not beside the pure
policies. Whatever goes wrong is one `PolicyLoadError` line naming the file (and line) or the
entry point; the caller prefixes the option that named it (`--policy`, `policies`).

A loaded class runs *checked*: its `decide` answers are checked to be a list of actions, and the
time of its last decision is kept (`decided_at_s`), so a rule the state machine refuses later
(`PolicyError`) can be reported with the policy, the job, the rule and the time (`rule_broken`).
"""
from __future__ import annotations

import hashlib
import importlib
import importlib.metadata
import importlib.util
import inspect
import sys
import traceback
from pathlib import Path
from typing import Callable

from scheduler.actions import Preempt, Resize, Start
from scheduler.policy import Policy
from scheduler.snapshot import Snapshot
from scheduler.state_machine import PolicyError

ENTRY_POINT_GROUP = "nowlab.policies"
_ACTIONS = (Start, Preempt, Resize)

_loaded: dict[tuple[str, str], type[Policy]] = {}  # (file or module, class) -> checked class


class PolicyLoadError(ValueError):
    """The user's policy could not be loaded: one line naming the file, line or entry point."""


def is_code_spec(text: str) -> bool:
    """`file.py:Class` or `module:Class` (a built-in or entry-point name has no colon)."""
    return ":" in text


def is_file_spec(text: str) -> bool:
    """A path (ends in .py or holds a slash) rather than a dotted module name."""
    target = text.rpartition(":")[0].strip()
    return target.endswith(".py") or "/" in target or "\\" in target


def factory(text: str) -> Callable[[], Policy]:
    """A maker of fresh policy objects for a `file.py:Class` or `module:Class` spec."""
    target, _, cls_name = (part.strip() for part in text.strip().rpartition(":"))
    if not target or not cls_name:
        raise PolicyLoadError(f"{text!r}: give FILE.py:CLASS or package.module:CLASS")
    if is_file_spec(text):
        path = Path(target).expanduser().resolve()
        key = (str(path), cls_name)
        if key not in _loaded:
            _loaded[key] = _checked(_class_in(_module_from_file(path), cls_name, str(path)))
    else:
        key = (target, cls_name)
        if key not in _loaded:
            _loaded[key] = _checked(_class_in(_module_named(target), cls_name, target))
    return _loaded[key]


def entry_point_factory(name: str) -> Callable[[], Policy] | None:
    """The `nowlab.policies` entry point of this name (case-insensitive), or None if none has it."""
    for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
        if ep.name.strip().upper() == name.strip().upper():
            key = (f"entry point {ep.name}", ep.value)
            if key not in _loaded:
                where = f"entry point {ep.name} = {ep.value!r}" + (f" (of {ep.dist.name})" if ep.dist else "")
                try:
                    obj = ep.load()
                except Exception as exc:  # the user's package: any error is theirs, reported in one line
                    raise PolicyLoadError(f"{where} failed to load: {_one_line(exc)}") from None
                _loaded[key] = _checked(_policy_class(obj, where))
            return _loaded[key]
    return None


def entry_point_names() -> list[str]:
    """The names installed packages register under `nowlab.policies`."""
    return sorted(ep.name for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP))


def rule_broken(exc: PolicyError, policy: Policy) -> str:
    """A refused action as one line: the policy, the time of its decision, the job and the rule."""
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    name = getattr(policy, "name", type(policy).__name__)
    if text.startswith(f"{name}: "):
        text = text[len(name) + 2:]
    t = getattr(policy, "decided_at_s", None)
    when = f" at t={t:.6g} s" if isinstance(t, (int, float)) and " at t=" not in text else ""
    return text if text.startswith("policy ") else f"policy {name} broke a rule{when}: {text}"


# -- loading ----------------------------------------------------------------------
def _module_from_file(path: Path):
    if not path.is_file():
        raise PolicyLoadError(f"no such file {path}")
    digest = hashlib.sha1(str(path).encode()).hexdigest()[:8]
    name = f"nowlab_user_policy_{path.stem}_{digest}"  # one module per file, whatever its stem
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise PolicyLoadError(f"{path}: not a Python source file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses and pickling look their module up here
    try:
        spec.loader.exec_module(module)
    except Exception as exc:  # the user's code: any error is theirs, reported in one line with its line
        del sys.modules[name]
        raise PolicyLoadError(_where_failed(exc, str(path))) from None
    return module


def _module_named(name: str):
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name is not None and (name == exc.name or name.startswith(exc.name + ".")):
            raise PolicyLoadError(f"no module named {exc.name!r} (is it installed, or on PYTHONPATH?)") from None
        raise PolicyLoadError(_where_failed(exc, None)) from None
    except Exception as exc:  # the user's code: any error is theirs, reported in one line with its line
        raise PolicyLoadError(_where_failed(exc, None)) from None


def _where_failed(exc: BaseException, path: str | None) -> str:
    """`file:line: Error: message` for an exception raised while running the user's module:
    the line in `path` (the user's file) if it is on the stack, else the deepest frame of theirs."""
    what = _one_line(exc)
    if isinstance(exc, SyntaxError) and exc.filename:
        return f"{exc.filename}:{exc.lineno}: SyntaxError: {exc.msg}"
    frames = [f for f in traceback.extract_tb(exc.__traceback__)
              if not f.filename.startswith("<frozen") and f.filename != __file__]
    mine = [f for f in frames if path is not None and f.filename == path]
    frame = (mine or frames or [None])[-1]
    if frame is None:
        return f"{path or 'import'}: {what}"
    return f"{frame.filename}:{frame.lineno}: {what}"


def _class_in(module, cls_name: str, where: str) -> type[Policy]:
    obj = getattr(module, cls_name, None)
    if obj is None:
        found = sorted(n for n, v in vars(module).items()
                       if inspect.isclass(v) and issubclass(v, Policy) and v is not Policy
                       and not inspect.isabstract(v))
        hint = f" (its Policy classes: {', '.join(found)})" if found else " (it defines no Policy class)"
        raise PolicyLoadError(f"no class {cls_name!r} in {where}{hint}")
    return _policy_class(obj, f"{cls_name} in {where}")


def _policy_class(obj: object, where: str) -> type[Policy]:
    """`obj` checked to be a concrete Policy subclass that takes no arguments."""
    if not (inspect.isclass(obj) and issubclass(obj, Policy)):
        got = (f"a class deriving from {', '.join(b.__name__ for b in obj.__bases__)}" if inspect.isclass(obj)
               else f"a {type(obj).__name__}")
        raise PolicyLoadError(f"{where} is not a scheduler.policy.Policy subclass (it is {got})")
    if inspect.isabstract(obj):
        missing = ", ".join(sorted(obj.__abstractmethods__))
        raise PolicyLoadError(f"{where} does not implement {missing}")
    if not isinstance(getattr(obj, "name", None), str) or not obj.name.strip():
        raise PolicyLoadError(f"{where} has no `name` (a class attribute: the label its results carry)")
    try:
        obj()
    except Exception as exc:  # the user's constructor
        raise PolicyLoadError(f"{where}() failed (a policy is made with no arguments): {_one_line(exc)}") from None
    return obj


def _checked(cls: type[Policy]) -> type[Policy]:
    """A subclass of the user's class whose decide keeps its time and checks its answer's type
    (the state machine checks what each action asks for)."""
    def decide(self, snap: Snapshot):
        self.decided_at_s = snap.time
        try:
            actions = cls.decide(self, snap)
        except PolicyError:
            raise
        except Exception as exc:  # the user's code failed: one line with its file and line, as a rule broken
            raise PolicyError(f"policy {self.name} failed at t={snap.time:.6g} s: "
                              f"{_where_failed(exc, inspect.getsourcefile(cls))}") from exc
        check_actions(actions, self.name, snap.time)
        return actions

    return type(cls.__name__, (cls,), {"decide": decide, "decided_at_s": None, "__module__": cls.__module__,
                                       "__qualname__": cls.__qualname__, "__doc__": cls.__doc__})


def check_actions(actions: object, name: str, t: float) -> None:
    """`actions` must be a list (or tuple) of Start, Preempt and Resize."""
    head = f"policy {name} broke a rule at t={t:.6g} s: decide must return a list of Start, Preempt or Resize"
    if type(actions) not in (list, tuple):
        raise PolicyError(f"{head}, got {_shown(actions)}" + (" (return [] to do nothing)" if actions is None else ""))
    for i, action in enumerate(actions):
        if type(action) not in _ACTIONS:
            job = getattr(action, "job", None)
            about = f" (about job {job!r})" if job is not None else ""
            raise PolicyError(f"{head}; item {i} is {_shown(action)}{about}")


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _one_line(exc: BaseException) -> str:
    text = str(exc).splitlines()[0] if str(exc) else ""
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
