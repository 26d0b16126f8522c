"""Project-level promises: the layers import only downward, the README's commands are CI's, and
the app's requirements leave the live kernels' packages out."""

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

from kernels.launching.backends import CPU_PINS, CUDA_RUNTIME_PIN, TORCH_CPU_INDEX

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
    view.write_text("def run():\n    from kernels.measure.bench import sweep\n")
    assert "kernels" in _imports(view)
    view.write_text("from ..model import X\nfrom . import qt_other\n")
    assert _imports(view) == {"gui"}


def _readme_commands() -> list[str]:
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    return [line.strip() for line in lines[:30] if line.strip().startswith("python3 -m venv")]


def _readme_apt_lines() -> list[set[str]]:
    """The packages of the README's indented `sudo apt-get install -y` lines (the app's, then the
    tests'), as a fresh machine's install reads them."""
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    return [set(line.split()[4:]) for line in lines[:30]
            if line.startswith("    sudo apt-get install -y ")]


def test_each_readme_command_names_its_system_packages():
    """pytest-qt imports QtCore at start-up: without Qt's libraries the test command stops with
    exit 3 before any test. gui/platform_check.py's tables are those the PySide6 wheel needs."""
    from gui.platform_check import QT_LIBRARIES, XCB_LIBRARIES

    app, tests = _readme_apt_lines()
    assert {"python3-venv", *QT_LIBRARIES.values(), *XCB_LIBRARIES.values()} == app
    assert {"python3-venv", "g++", "python3-dev", *QT_LIBRARIES.values()} == tests


def test_requires_python_admits_no_python_the_pinned_numpy_refuses():
    from importlib.metadata import metadata

    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    ours = re.search(r'^requires-python = ">=3\.(\d+)"', pyproject, re.M)
    numpys = re.fullmatch(r">=3\.(\d+)", metadata("numpy")["Requires-Python"])
    assert ours and numpys and int(ours.group(1)) >= int(numpys.group(1))
    assert f"Python >= 3.{ours.group(1)}" in (ROOT / "README.md").read_text(encoding="utf-8")


def _constraints() -> dict[str, str]:
    pins = {}
    for line in (ROOT / "constraints.txt").read_text(encoding="utf-8").splitlines():
        line = line.split("#")[0].strip()
        if line:
            name, version = line.split("==")
            pins[re.sub(r"[-_.]+", "-", name.lower())] = version
    return pins


def test_the_whole_test_environment_is_pinned():
    """Floating transitive packages (cuda-bindings, nvidia-*) once broke the fresh-machine run:
    constraints.txt pins every package of both torch routes, and agrees with the requirements."""
    assert "-c constraints.txt" in (ROOT / "requirements-test.txt").read_text(encoding="utf-8")
    pins = _constraints()
    for name, line in _requirements("requirements-test.txt").items():
        assert line == f"{line.split('==')[0]}=={pins[re.sub(r'[-_.]+', '-', name)]}", line
    from importlib.metadata import distributions

    here = {re.sub(r"[-_.]+", "-", d.metadata["Name"].lower()) for d in distributions()}
    # what this environment has of the test stack is pinned (pip, and a dev's extras, may float)
    stack = {"torch", "triton", "numba", "numba-cuda", "llvmlite", "cuda-bindings", "cuda-core",
             "cuda-pathfinder", "pytest", "pluggy", "execnet", "sympy", "networkx", "jinja2"}
    assert stack & here <= pins.keys()
    assert all(not n.startswith("nvidia-") or n in pins for n in here), sorted(here - pins.keys())


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
        elif line.startswith("-c "):  # constraints install nothing (test below)
            continue
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
    assert tests["nvidia-cuda-runtime-cu12"] == CUDA_RUNTIME_PIN and CUDA_RUNTIME_PIN in readme
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    declared = re.search(r"^dependencies = \[(.*?)\]", pyproject, re.M | re.S).group(1)
    names = {re.split(r"[=<>!~; ]", d, maxsplit=1)[0].lower()
             for d in re.findall(r'"([^"]+)"', declared)}
    assert names == app.keys()  # `pip install .` gets the app's packages, no more


def test_the_cpu_hint_adds_a_cuda_runtime_only_where_none_is(monkeypatch):
    from kernels.launching import backends

    for present in (True, False):
        monkeypatch.setattr(backends, "has_cuda_runtime", lambda present=present: present)
        hint = backends.install_hint(["numba", "numba-cuda"], gpu=False)
        assert hint.endswith("numba==0.68.1 numba-cuda==0.30.4" + ("" if present else
                                                                    f" {CUDA_RUNTIME_PIN}"))


def _tracked() -> list[Path]:
    out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True)
    return [Path(p) for p in out.stdout.decode().split("\0") if p]


@pytest.mark.skipif(not (ROOT / ".git").exists(), reason="not a git checkout")
def test_the_tree_a_device_run_carries_is_small_and_benchmarks_hold_only_what_is_rerun():
    """A GPU run carries the tracked tree (64 MiB at most): it stays under 25 MB, and benchmarks/
    holds the scripts a maintainer re-runs and one RESULTS.md, about 25 files."""
    files = _tracked()
    size = sum((ROOT / p).stat().st_size for p in files if (ROOT / p).is_file())
    assert size < 25 * 10**6, f"{size / 1e6:.1f} MB tracked"
    bench = [p for p in files if p.parts[0] == "benchmarks"]
    assert len(bench) <= 25 and Path("benchmarks/RESULTS.md") in bench, sorted(map(str, bench))
