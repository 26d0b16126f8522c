"""Every file WarpScope reads goes through one boundary, sim/inputs/files.py: regular files only (a FIFO or
/dev/zero is refused before it is opened), a size cap, bounded JSON nesting, .npz members checked
before numpy allocates them. This test walks the code and fails on a read anywhere else.

A new reader calls `sim.inputs.files.read_user_bytes / read_user_file / read_json_file / read_npz_file`.
The allow-list below is for writers and for text that is no file (a child's answer on a pipe)."""

from __future__ import annotations

import ast
import functools
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
WALKED = ("sim", "kernels", "gui", "main.py")  # the app; benchmarks/ are scripts run by hand
BOUNDARY = "sim/inputs/files.py"
READS = {"read_text", "read_bytes"}
MODULE_READS = {("json", "load"), ("json", "loads"), ("np", "load"), ("numpy", "load"),
                ("np", "fromfile"), ("np", "loadtxt"), ("np", "genfromtxt")}
ALLOWED = {  # (file, function): why this is no read of a user's file
    ("main.py", "_silence_stdout"): "opens /dev/null for writing",
    ("kernels/offline_compile/toolchain.py", "res_usage"): "writes the cubin into its own temporary folder",
    ("kernels/offline_compile/toolchain.py", "ptx_to_cubin"): "writes the PTX and reads ptxas's output, in its "
                                              "own temporary folder",
    ("kernels/offline_compile/toolchain.py", "main"): "the parent's request on stdin (a pipe, not a file)",
    ("kernels/offline_compile/compile.py", "_finish_child"): "the toolchain child's answer on its stdout",
    ("kernels/host/in_host.py", "_address_space"): "this process's own /proc/self/statm",
    ("kernels/declare/user_code.py", "_cache_key"): "WarpScope's own source files, hashed for a cache key",
}


def _reads(tree: ast.AST):
    """(function name, line, what) for every read call in a module."""
    found = []

    def visit(node, function):
        for child in ast.iter_child_nodes(node):
            is_def = isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef))
            name = child.name if is_def else function
            if isinstance(child, ast.Call):
                f = child.func
                if isinstance(f, ast.Name) and f.id == "open":
                    found.append((function, child.lineno, "open("))
                elif isinstance(f, ast.Attribute) and f.attr in READS:
                    found.append((function, child.lineno, f".{f.attr}("))
                elif (isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name)
                      and (f.value.id, f.attr) in MODULE_READS):
                    found.append((function, child.lineno, f"{f.value.id}.{f.attr}("))
            visit(child, name)

    visit(tree, "<module>")
    return found


@functools.lru_cache(maxsize=1)
def _modules() -> tuple:
    found = []
    for top in WALKED:
        path = ROOT / top
        for file in ([path] if path.is_file() else sorted(path.rglob("*.py"))):
            rel = file.relative_to(ROOT).as_posix()
            if rel != BOUNDARY:
                found.append((rel, ast.parse(file.read_text(encoding="utf-8"), rel)))
    return tuple(found)


def test_every_read_goes_through_the_boundary():
    outside = [f"{rel}:{line} {what} in {function}()"
               for rel, tree in _modules()
               for function, line, what in _reads(tree)
               if (rel, function) not in ALLOWED]
    assert not outside, ("reads outside sim/inputs/files.py (use read_user_file / read_json_file / "
                         "read_npz_file, or allow-list a writer):\n" + "\n".join(outside))


def test_the_allow_list_is_short_and_still_needed():
    """An entry whose function no longer reads anything must go: the list cannot grow stale."""
    used = {(rel, function) for rel, tree in _modules() for function, _, _ in _reads(tree)}
    assert len(ALLOWED) <= 8
    assert set(ALLOWED) <= used, set(ALLOWED) - used


def test_the_walk_finds_every_kind_of_read():
    """The detector itself: each kind of read in a snippet is found (else the test above could
    not fail)."""
    snippet = ("import json, numpy as np\nfrom pathlib import Path\n"
               "def f(p):\n    open(p); Path(p).read_text(); Path(p).read_bytes()\n"
               "    json.load(p); json.loads(p); np.load(p)\n")
    assert [what for _, _, what in _reads(ast.parse(snippet))] == [
        "open(", ".read_text(", ".read_bytes(", "json.load(", "json.loads(", "np.load("]
