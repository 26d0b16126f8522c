"""Project-level promises: the layers import only downward, and the README's commands are CI's."""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

FORBIDDEN = {
    "sim": {"PySide6", "pyqtgraph", "torch", "triton", "numba", "cupy", "kernels", "gui"},
    "kernels": {"PySide6", "pyqtgraph", "gui"},
}


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


def test_layers_import_only_downward():
    problems = []
    for layer, forbidden in FORBIDDEN.items():
        files = list((ROOT / layer).rglob("*.py"))
        assert files, f"{layer}/ has no Python files"
        for path in files:
            bad = _imports(path) & forbidden
            if bad:
                problems.append(f"{path.relative_to(ROOT)} imports {sorted(bad)}")
    assert not problems, "\n".join(problems)


def _readme_commands() -> list[str]:
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    return [line.strip() for line in lines[:40] if line.strip().startswith("python3 -m venv")]


def test_readme_opens_with_two_commands_and_ci_runs_the_test_one():
    app, tests = _readme_commands()[:2]
    assert app.endswith("main.py") and "pytest" in tests
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert tests in ci.splitlines()
