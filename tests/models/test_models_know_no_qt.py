"""napari's rule: models know nothing of Qt. gui/models imports no Qt (nor pyqtgraph), checked
both in its source and by importing every model in a fresh interpreter."""

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
QT = {"PySide6", "PyQt5", "PyQt6", "shiboken6", "pyqtgraph", "superqt", "qtpy"}


def test_model_sources_import_no_qt():
    files = sorted((ROOT / "gui" / "models").glob("*.py"))
    assert len(files) >= 5
    for path in files:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            for name in names:
                assert name.split(".")[0] not in QT, f"{path.name} imports {name}"
                assert not name.startswith("gui.") or name.startswith("gui.models"), \
                    f"{path.name} imports {name}: models may use only other models"


def test_importing_every_model_loads_no_qt():
    code = ("import sys, gui.models.launch, gui.models.simulation, gui.models.playback, "
            "gui.models.bench; print(sorted(m for m in sys.modules if m.split('.')[0] in "
            f"{sorted(QT)!r}))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "[]"
