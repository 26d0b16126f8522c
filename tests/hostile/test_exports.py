"""Exports never touch a stranger's file, and a kill at any instant of the switch leaves the old
export or the new one, never a mix (the issue: a user's summary.html overwritten, a crafted
manifest entry deleting a user's file, 3 of 3 kills inside the move phase leaving a mix)."""

from __future__ import annotations

import hashlib
import json
import os
import random
import signal
import time
from pathlib import Path

import pytest

from gui import export_folder
from gui.export_folder import MANIFEST, SUBFOLDER, export_target, foreign_files, replace_folder
from sim.inputs.errors import UserError
from sim.inputs.files import TEMP_PREFIX, write_text_atomic

SETS = (["sm_view.png", "session.json", "summary.html"], ["sm_view.png", "timeline.csv"])


def _render(generation: int):
    """An export of generation g: its own set of files, each saying which generation it is."""
    names = SETS[generation % 2]

    def render(folder: Path) -> list[Path]:
        for name in names:
            write_text_atomic(folder / name, f"generation {generation}")
        return [folder / n for n in names]

    return render


def _export(out: Path, generation: int, force: bool = False) -> list[Path]:
    return replace_folder(export_target(out, force), _render(generation))


def _state(out: Path) -> dict:
    return {p.name: p.read_bytes() for p in sorted(out.iterdir())} if out.exists() else {}


def _generation(out: Path) -> int | None:
    """Which whole export `out` holds (None: empty); fails on a mix."""
    files = {k: v for k, v in _state(out).items() if k != MANIFEST}
    if not files:
        return None
    gens = {v.decode() for v in files.values()}
    assert len(gens) == 1, f"a mix: {files}"
    g = int(gens.pop().split()[1])
    assert sorted(files) == sorted(SETS[g % 2]), f"generation {g} with the wrong files: {sorted(files)}"
    assert not foreign_files(out)  # its manifest vouches for every file
    return g


def _snapshot(folder: Path) -> dict:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file()}


def test_an_export_replaces_the_earlier_one_whole(tmp_path):
    out = tmp_path / "out"
    _export(out, 0)
    mask = os.umask(0o022)
    os.umask(mask)
    assert out.stat().st_mode & 0o777 == 0o777 & ~mask  # not mkdtemp's private 0700
    out.chmod(0o750)
    _export(out, 1)
    assert _generation(out) == 1 and out.stat().st_mode & 0o777 == 0o750  # the earlier mode
    manifest = json.loads((out / MANIFEST).read_text())
    assert manifest["files"]["timeline.csv"] == hashlib.sha256(b"generation 1").hexdigest()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(TEMP_PREFIX)]


def test_a_folder_with_a_strangers_file_is_refused_in_one_line_or_exported_beside_it(tmp_path):
    out = tmp_path / "slides"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    with pytest.raises(UserError) as caught:
        _export(out, 0)
    assert "\n" not in str(caught.value)
    assert str(caught.value).startswith(f"{out} holds files WarpScope did not write (notes.txt); ")
    assert "--force" in str(caught.value) and _state(out) == {"notes.txt": b"mine"}
    files = _export(out, 0, force=True)  # into its subfolder, the user's file untouched
    assert {f.parent for f in files} == {out / SUBFOLDER}
    assert sorted(p.name for p in out.iterdir()) == ["notes.txt", SUBFOLDER]
    _export(out, 1, force=True)
    assert _generation(out / SUBFOLDER) == 1 and (out / "notes.txt").read_text() == "mine"


def test_a_users_own_summary_html_is_never_overwritten(tmp_path):
    """An export folder whose summary.html the user edited is no longer WarpScope's."""
    out = tmp_path / "out"
    _export(out, 0)
    (out / "summary.html").write_text("<p>my own notes</p>")
    before = _snapshot(out)
    with pytest.raises(UserError, match=r"holds files WarpScope did not write \(summary.html\)"):
        _export(out, 1)
    assert _snapshot(out) == before
    _export(out, 1, force=True)
    assert (out / "summary.html").read_text() == "<p>my own notes</p>"
    assert {k: v for k, v in _snapshot(out).items() if not k.startswith(f"{SUBFOLDER}/")} == before


CRAFTED = {
    "a wrong hash": {"format": "warpscope-export/2", "files": {"report.png": "0" * 64}},
    "a path out of the folder": {"format": "warpscope-export/2",
                                 "files": {"../keep.png": hashlib.sha256(b"precious").hexdigest()}},
    "the old format, no hashes": {"format": "warpscope-export/1", "files": ["report.png"]},
    "a list, not a dict": {"format": "warpscope-export/2", "files": ["report.png"]},
    "not an export name": {"format": "warpscope-export/2",
                           "files": {"report.PNG": hashlib.sha256(b"precious").hexdigest()}},
}


@pytest.mark.parametrize("case", sorted(CRAFTED))
def test_a_crafted_manifest_never_deletes_a_users_file(case, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (tmp_path / "keep.png").write_bytes(b"precious")  # beside the folder
    (out / "report.png").write_bytes(b"precious")
    (out / "report.PNG").write_bytes(b"precious")
    (out / MANIFEST).write_text(json.dumps(CRAFTED[case]))
    before = _snapshot(tmp_path)
    with pytest.raises(UserError, match="holds files WarpScope did not write"):
        _export(out, 0)
    assert _snapshot(tmp_path) == before
    _export(out, 0, force=True)
    _export(out, 1, force=True)
    assert {k: v for k, v in _snapshot(tmp_path).items()
            if not k.startswith(f"out/{SUBFOLDER}/")} == before


def _killed_at(out: Path, generation: int, step: str, nth: int = 1, exchange: bool = True) -> int:
    """Run an export in a forked child that dies (os._exit, no cleanup) at the nth `step`."""
    pid = os.fork()
    if pid == 0:  # the child: no pytest, no Qt, nothing but the export
        seen = [0]

        def hook(name):
            if name == step:
                seen[0] += 1
                if seen[0] == nth:
                    os._exit(9)

        export_folder.STEP_HOOK = hook
        if not exchange:
            export_folder._exchange = lambda a, b: False
        try:
            _export(out, generation)
        except BaseException:  # noqa: BLE001
            os._exit(3)
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


STEPS = [("rendered", 1), ("staged", 1), ("exchanged", 1), ("removing old", 1),
         ("removing old", 2), ("done", 1)]


FORK_OK = pytest.mark.filterwarnings("ignore:This process .* is multi-threaded")  # the child only renames


@FORK_OK
@pytest.mark.parametrize("step, nth", STEPS)
def test_a_kill_at_any_step_of_the_switch_leaves_old_or_new(step, nth, tmp_path):
    out = tmp_path / "out"
    (tmp_path / "neighbour.txt").write_text("a user's file beside the folder")
    _export(out, 0)
    assert _killed_at(out, 1, step, nth) == 9
    assert _generation(out) in (0, 1)
    assert _generation(out) == (0 if step in ("rendered", "staged") else 1)
    _export(out, 2)  # the next export removes what the killed one left behind
    assert _generation(out) == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["neighbour.txt", "out"]
    assert (tmp_path / "neighbour.txt").read_text() == "a user's file beside the folder"


@FORK_OK
@pytest.mark.parametrize("step", ["staged", "moved aside", "removing old"])
def test_without_an_atomic_exchange_a_kill_never_mixes_either(step, tmp_path):
    """The fallback (no renameat2): between its two renames the folder is missing, the old export
    whole beside it; never a mix."""
    out = tmp_path / "out"
    _export(out, 0)
    assert _killed_at(out, 1, step, exchange=False) == 9
    if step == "moved aside":
        assert not out.exists()
        [aside] = [p for p in tmp_path.iterdir() if p.name.startswith(TEMP_PREFIX) and "-old-" in p.name]
        [staged] = [p for p in tmp_path.iterdir() if "-export-" in p.name]
        assert _generation(aside) == 0 and _generation(staged) == 1
    else:
        assert _generation(out) == (0 if step == "staged" else 1)
    _export(out, 2)
    assert _generation(out) == 2 and sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def _exporting_back_to_back(out: Path) -> int:
    """A forked child exporting generation 1, 2, 3, ... into `out` until it is killed; returns
    once it has started (a fresh interpreter per kill cost ~1.5 CPU-s of imports, 8 times)."""
    ready, told = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: no pytest, no Qt, nothing but exports, until the SIGKILL
        try:
            os.close(ready)
            os.write(told, b"r")
            g = 1
            while True:
                _export(out, g)
                g += 1
        finally:
            os._exit(3)
    os.close(told)
    try:
        assert os.read(ready, 1) == b"r"
    finally:
        os.close(ready)
    return pid


@FORK_OK
def test_random_kill_9s_during_back_to_back_exports_never_leave_a_mix(tmp_path):
    out = tmp_path / "out"
    _export(out, 0)
    rng = random.Random(17)
    for _ in range(8):
        pid = _exporting_back_to_back(out)
        try:
            time.sleep(rng.uniform(0.0, 0.05))
        finally:
            os.kill(pid, signal.SIGKILL)
            _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == -signal.SIGKILL  # killed while exporting
        assert _generation(out) is not None
    _export(out, 0)
    assert _generation(out) == 0 and sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_the_window_asks_before_exporting_into_a_folder_with_others_files(qapp, tmp_path,
                                                                           monkeypatch):
    from PySide6.QtWidgets import QFileDialog, QMessageBox

    from gui.main_window import MainWindow
    from gui.models.launch import LaunchInputs

    monkeypatch.setenv("WARPSCOPE_SETTINGS_DIR", str(tmp_path / "settings"))
    out = tmp_path / "slides"
    out.mkdir()
    (out / "summary.html").write_text("mine")
    win = MainWindow(LaunchInputs(gpu="T4"), restore=False, load_kernels=False)
    try:
        monkeypatch.setattr(win, "export_all", _render(0))
        monkeypatch.setattr(QFileDialog, "getExistingDirectory", lambda *a, **k: str(out))
        asked = []

        def answer(reply):
            def question(parent, title, text, *a, **k):
                asked.append(text)
                return reply
            return question

        monkeypatch.setattr(QMessageBox, "question", answer(QMessageBox.StandardButton.No))
        win._on_export()
        assert "summary.html" in asked[0] and _state(out) == {"summary.html": b"mine"}
        monkeypatch.setattr(QMessageBox, "question", answer(QMessageBox.StandardButton.Yes))
        win._on_export()
        assert _generation(out / SUBFOLDER) == 0 and (out / "summary.html").read_text() == "mine"
        assert str(out / SUBFOLDER) in win.statusBar().currentMessage()
    finally:
        win.shutdown()
        win.deleteLater()
