"""Project-level promises: the layers import only downward, the README's commands are CI's, and
the app's requirements leave the live kernels' packages out."""

import ast
import re
import sys
from pathlib import Path

import pytest

from kernels.backends import CPU_PINS, TORCH_CPU_INDEX

ROOT = Path(__file__).resolve().parents[1]
QT = {"PySide6", "shiboken6", "pyqtgraph", "superqt", "qtpy"}

# folder -> top-level packages its files may not import (anywhere in the file, lazily included)
FORBIDDEN = {
    "sim": QT | {"torch", "triton", "numba", "cupy", "kernels", "gui"},
    "kernels": QT | {"gui"},
    "gui/widgets": {"kernels", "torch", "triton", "numba"},  # views get results, not kernels
    "gui/models": QT,  # state and logic without Qt: testable with no QApplication
}
OPTIONAL_LAYERS = {"gui/models"}  # being written; checked as soon as it has files


def _imports(path: Path) -> set[str]:
    """Top-level packages `path` imports, with relative imports resolved against its package."""
    package = path.relative_to(ROOT).parent.parts
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0:
                names.add(node.module.split(".")[0])
                continue
            base = package[: len(package) - (node.level - 1)]
            dotted = [*base, *(node.module or "").split(".")]
            names.add(dotted[0] if base else (node.module or "").split(".")[0])
    return names


@pytest.mark.parametrize("layer", sorted(FORBIDDEN))
def test_layers_import_only_downward(layer):
    files = list((ROOT / layer).rglob("*.py"))
    if layer in OPTIONAL_LAYERS and not files:
        pytest.skip(f"{layer}/ has no Python files yet")
    assert files, f"{layer}/ has no Python files"
    problems = [f"{p.relative_to(ROOT)} imports {sorted(bad)}"
                for p in files if (bad := _imports(p) & FORBIDDEN[layer])]
    assert not problems, "\n".join(problems)


def test_the_import_walk_sees_lazy_and_relative_imports(tmp_path, monkeypatch):
    """The boundary check itself can fail: an import inside a function, and `from ..` ."""
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    view = tmp_path / "gui" / "widgets" / "qt_view.py"
    view.parent.mkdir(parents=True)
    view.write_text("def run():\n    from kernels.bench import sweep\n")
    assert "kernels" in _imports(view)
    view.write_text("from ..model import X\nfrom . import qt_other\n")
    assert _imports(view) == {"gui"}


def _readme_commands() -> list[str]:
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    return [line.strip() for line in lines[:30] if line.strip().startswith("python3 -m venv")]


def test_readme_opens_with_two_commands_and_ci_runs_the_test_one():
    app, tests = _readme_commands()[:2]
    assert app.endswith("main.py") and "-r requirements.txt" in app
    assert "pytest" in tests and "-r requirements-test.txt" in tests
    assert " -q" not in app and " -q" not in tests.split("pytest")[0]  # pip shows its progress
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert tests in ci.splitlines()


def _requirements(name: str) -> dict[str, str]:
    """{package: pinned line} of a requirements file, following `-r other.txt`."""
    pins = {}
    for line in (ROOT / name).read_text(encoding="utf-8").splitlines():
        line = line.split("#")[0].strip()
        if line.startswith("-r "):
            pins.update(_requirements(line[3:].strip()))
        elif line:
            pins[re.split(r"[=<>!~;\[ ]", line, maxsplit=1)[0].lower()] = line
    return pins


def test_the_app_installs_no_live_kernel_package_and_tests_pin_the_ones_backends_suggests():
    app, tests = _requirements("requirements.txt"), _requirements("requirements-test.txt")
    assert not app.keys() & {"torch", "triton", "numba", "numba-cuda", "llvmlite", "cupy"}
    assert app.items() <= tests.items()
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for pin in CPU_PINS.values():  # the pip line the app prints is the set CI tested
        assert tests[pin.split("==")[0]] == pin
        assert pin in readme, f"README's CPU-only line lacks {pin}"
    assert f"{CPU_PINS['torch']} --index-url {TORCH_CPU_INDEX}" in readme
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    declared = re.search(r"^dependencies = \[(.*?)\]", pyproject, re.M | re.S).group(1)
    names = {re.split(r"[=<>!~; ]", d, maxsplit=1)[0].lower()
             for d in re.findall(r'"([^"]+)"', declared)}
    assert names == app.keys()  # `pip install .` gets the app's packages, no more
