"""The app without torch, triton and numba (what requirements.txt installs): every command that
needs no live kernel works, and the kernels say which packages are missing and how to add them.

The packages are hidden the way "not installed" looks to Python: the path finder stops finding
them, so ``importlib.util.find_spec`` returns None and ``import torch`` raises
ModuleNotFoundError."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.gui.export_checks import check_exports, rows
from tests.patience import HANG_S

ROOT = Path(__file__).resolve().parents[2]

HIDDEN = ("torch", "triton", "numba", "numba_cuda", "llvmlite", "cupy")

PRELUDE = f"""
import importlib.machinery as machinery, sys
HIDDEN = {HIDDEN!r}

class NotInstalled:
    @classmethod
    def find_spec(cls, name, path=None, target=None):
        if name.split(".")[0] in HIDDEN:
            return None
        return machinery.PathFinder.find_spec(name, path, target)

    @classmethod
    def invalidate_caches(cls):
        machinery.PathFinder.invalidate_caches()

sys.meta_path[sys.meta_path.index(machinery.PathFinder)] = NotInstalled
"""

SCRIPT = PRELUDE + """
import json, os
try:
    import torch
    hidden = False
except ModuleNotFoundError:
    hidden = True
import main, kernels
from kernels.launching.backends import install_hint

out = sys.argv[1]
rcs = [main.main(argv) for argv in (
    ["explain", "--gpu", "L40S", "--elements", "1000000", "--block", "256"],
    ["simulate", "--gpu", "T4", "--elements", "2^16", "--block", "256",
     "--trace", out + "/sim.json"],
    ["compare", "tests/data/trace_h200.json"],
    ["export", "--gpu", "H200", "--elements", "1000000", "--block", "250",
     "--results", sys.argv[2], "--out", out + "/report"],
    ["check", "--kernel", "add_triton,add_numba,add_torch"],
    [],  # the window: WARPSCOPE_STARTUP_PROBE=kernels closes it once kernels have loaded
)]
av = kernels.available()
print("RESULT " + json.dumps({
    "hidden": hidden, "rcs": rcs,
    "hint": install_hint(gpu=False), "gpu_hint": install_hint(gpu=True),
    "availability": {n: [a.ok, a.reason, a.install] for n, a in av.items()},
    "loaded": sorted(m for m in sys.modules if m.split(".")[0] in HIDDEN),
}))
"""


@pytest.mark.slow  # one child process: explain, simulate, compare, export, check, the window
def test_app_runs_without_torch_triton_numba_and_says_how_to_add_them(tmp_path):
    from kernels.measure.results import save_results
    from tests.models.fakes import fake_sweep

    # `main.py bench`'s file from a GPU server: the export draws it as plots too
    bench = tmp_path / "bench.json"
    save_results(fake_sweep()(["add_triton", "add_torch"], [2**20, 2**24], [1024, 4096]), bench)
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "WARPSCOPE_STARTUP_PROBE": "kernels",
           "WARPSCOPE_SETTINGS_DIR": str(tmp_path / "settings")}
    proc = subprocess.run([sys.executable, "-c", SCRIPT, str(tmp_path), str(bench)], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=HANG_S)
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(proc.stdout.split("RESULT ", 1)[1])
    assert result["hidden"] and not result["loaded"]
    # `check` with every kernel skipped checked nothing: a runtime failure (docs/SETUP.md)
    assert result["rcs"] == [0, 0, 0, 0, 1, 0], proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "nothing was checked" in proc.stderr
    assert "WARPSCOPE_KERNELS" in proc.stdout  # the window came up and loaded its kernels panel
    assert (tmp_path / "sim.json").is_file()
    # `main.py export` end to end, in a fresh process: progress before the long part, every
    # view's files, the bench as plots
    assert "export: drawing every view" in proc.stderr and "export:" not in proc.stdout
    report = tmp_path / "report"
    check_exports(report, sorted(report.iterdir()))
    assert len(rows(report / "bandwidth_vs_size.csv")) == 1 + 4  # 2 kernels x 2 sizes, best block
    ET.parse(report / "bandwidth_vs_size.svg")
    session = json.loads((report / "session.json").read_text())
    assert len(session["measurements"]["bench"]["measurements"]) == 8
    assert session["inputs"]["threads_per_block"] == 250
    assert "3 SKIP" in proc.stdout and "not installed" in proc.stdout

    py = sys.executable
    cpu = (f"{py} -m pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu"
           f" && {py} -m pip install triton==3.7.1 numba==0.68.1 numba-cuda==0.30.4")
    assert result["hint"] == cpu
    assert result["gpu_hint"] == f"{py} -m pip install torch triton numba numba-cuda"
    for name, (ok, reason, install) in result["availability"].items():
        assert not ok, name
        assert install and install in reason, (name, reason)
    assert result["availability"]["torch"][1].startswith("torch is not installed")
    assert result["availability"]["numba"][1].startswith("numba and numba-cuda are not installed")
