"""No module builds a shell command line from interpolated values (issue 13, item 8).

A value spliced into `sh -c` text is parsed by the shell: a workstation name, a path or a
pattern with a space, quote or `;` in it changes the command. Values go in argv, or as
positional parameters after a fixed script (`["sh", "-c", SCRIPT, "sh", value]`).
"""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
PACKAGES = ("testbed", "workloads", "experiments", "scheduler", "nowlab", "containers")
SHELLS = {"sh", "bash", "dash", "/bin/sh", "/bin/bash", "/usr/bin/sh"}


def _is_built_text(node: ast.expr) -> bool:
    """Text made at run time: an f-string, `%` or `+` on strings, or `.format(...)`."""
    if isinstance(node, ast.JoinedStr):
        return True
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Mod, ast.Add)):
        return not (isinstance(node.left, ast.Constant) and isinstance(node.right, ast.Constant))
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr == "format")


def _const(node: ast.expr) -> object:
    return node.value if isinstance(node, ast.Constant) else None


def built_shell_commands(source: str, filename: str = "<src>") -> list[int]:
    """Lines where a list or tuple holds a shell, "-c", then text built at run time."""
    found = []
    for node in ast.walk(ast.parse(source, filename)):
        if isinstance(node, (ast.List, ast.Tuple)):
            elts = node.elts
            for i in range(len(elts) - 2):
                if _const(elts[i]) in SHELLS and _const(elts[i + 1]) == "-c" and _is_built_text(elts[i + 2]):
                    found.append(elts[i + 2].lineno)
    return found


def shell_true_calls(source: str, filename: str = "<src>") -> list[int]:
    """Lines that call something with shell=True."""
    return [node.lineno for node in ast.walk(ast.parse(source, filename))
            if isinstance(node, ast.Call)
            and any(k.arg == "shell" and _const(k.value) is True for k in node.keywords)]


def _sources() -> list[Path]:
    return sorted(p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py"))


def test_the_scan_catches_every_way_of_building_the_script():
    bad = [
        'c.exec(ws, ["sh", "-c", f"kill $(cat {pidfile})"])',
        'argv = ("bash", "-c", "ss -ltn | grep %d" % port)',
        'argv = ["timeout", "5", "sh", "-c", "echo " + name]',
        'argv = ["/bin/sh", "-c", "kill {}".format(pid)]',
    ]
    for src in bad:
        assert built_shell_commands(src) == [1], src
    good = [
        'argv = ["sh", "-c", SCRIPT, "sh", pidfile]',
        'argv = ["sh", "-c", "kill \\"$(cat \\"$1\\")\\"", "sh", path]',
        'argv = ["pkill", "-x", "-f", f"iperf3 -s -p {port}"]',
        'argv = ["sh", "-c", "a" + "b"]',
    ]
    for src in good:
        assert built_shell_commands(src) == [], src
    assert shell_true_calls("subprocess.run(cmd, shell=True)") == [1]
    assert shell_true_calls("subprocess.run(argv, shell=False)") == []


def test_no_module_builds_an_sh_c_command_from_interpolated_text():
    sources = _sources()
    assert len(sources) > 50  # the scan reads the tree, not an empty folder
    offenders = [f"{p.relative_to(ROOT)}:{line}" for p in sources
                 for line in built_shell_commands(p.read_text(), str(p))]
    assert offenders == [], "sh -c built from interpolated text: " + ", ".join(offenders)


def test_no_module_calls_with_shell_true():
    offenders = [f"{p.relative_to(ROOT)}:{line}" for p in _sources()
                 for line in shell_true_calls(p.read_text(), str(p))]
    assert offenders == [], "shell=True: " + ", ".join(offenders)
