"""Files WarpScope writes: whole or not at all, PNG and SVG included; a full disk (a file-size
limit, no root needed) or kill -9 leaves the earlier files intact, and the temporaries of a killed
run are removed by the next one; a re-export never mixes old and new files."""

from __future__ import annotations

import contextlib
import os
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from PySide6.QtGui import QImage

from gui.export import export_to_folder
from gui.export_folder import MANIFEST
from sim.inputs.errors import UserError
from sim.inputs.files import (
    TEMP_PREFIX,
    atomic_file,
    check_writable,
    write_bytes_atomic,
    write_text_atomic,
)

from tests.hostile.helpers import snapshot

ROOT = Path(__file__).resolve().parents[2]


@contextlib.contextmanager
def disk_full_after(nbytes: int):
    """Writes past `nbytes` in any one file fail with EFBIG, as on a full disk (Python ignores
    SIGXFSZ, so the write raises instead of killing the process). No bytecode is written meanwhile,
    here or in a child: a .pyc cut short at the limit is a whole file to the next import ("marshal
    data too short" in every later process of the run, which shares one bytecode folder)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    was_env, was_sys = os.environ.get("PYTHONDONTWRITEBYTECODE"), sys.dont_write_bytecode
    os.environ["PYTHONDONTWRITEBYTECODE"], sys.dont_write_bytecode = "1", True
    resource.setrlimit(resource.RLIMIT_FSIZE, (nbytes, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
        sys.dont_write_bytecode = was_sys
        if was_env is None:
            os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
        else:
            os.environ["PYTHONDONTWRITEBYTECODE"] = was_env


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def _temporaries(folder: Path) -> list[str]:
    return [p.name for p in folder.iterdir() if p.name.startswith(TEMP_PREFIX)]


def test_failed_write_keeps_the_earlier_file_and_no_temporary(tmp_path):
    target = tmp_path / "r.png"
    target.write_bytes(b"earlier")
    with disk_full_after(1000), pytest.raises(UserError, match="cannot write .*File too large"):
        write_bytes_atomic(target, b"x" * 5000)
    with pytest.raises(RuntimeError), atomic_file(target) as tmp:  # an error while writing
        Path(tmp).write_bytes(b"half")
        raise RuntimeError("renderer crashed")
    assert target.read_bytes() == b"earlier" and os.listdir(tmp_path) == ["r.png"]


def test_only_regular_files_are_replaced(tmp_path):
    (tmp_path / "d").mkdir()
    for path, words in (
        (tmp_path / "d", "is a folder"),
        ("/dev/null", "not a regular file"),
        ("", "empty"),
        (tmp_path / ("n" * 300), "file name is 300 bytes"),
    ):
        with pytest.raises(UserError, match=words):
            write_text_atomic(path, "x")
    real = tmp_path / "real.json"
    real.write_text("old")
    (tmp_path / "link.json").symlink_to(real)
    write_text_atomic(tmp_path / "link.json", "new")  # written through the link, link kept
    assert real.read_text() == "new" and (tmp_path / "link.json").is_symlink()
    check_writable(tmp_path / "fresh.json")


def test_temporaries_of_a_killed_run_are_removed_by_the_next_write(tmp_path):
    dead, alive = _dead_pid(), os.getppid()
    stale_file = tmp_path / f"{TEMP_PREFIX}{dead}-abc.png"
    stale_dir = tmp_path / f"{TEMP_PREFIX}{dead}-export-xyz"
    busy = tmp_path / f"{TEMP_PREFIX}{alive}-def.png"  # another live process is writing it
    stale_file.write_bytes(b"half")
    stale_dir.mkdir()
    (stale_dir / "sm_view.png").write_bytes(b"half")
    busy.write_bytes(b"half")
    write_text_atomic(tmp_path / "out.csv", "a,b\n")
    assert sorted(_temporaries(tmp_path)) == [busy.name]


def test_kill_during_a_write_leaves_the_earlier_file(tmp_path):
    """kill -9 while the bytes go out: the target is the earlier file; the next run cleans up."""
    target = tmp_path / "shot.png"
    target.write_bytes(b"earlier")
    code = (
        "import sys, time; sys.path.insert(0, sys.argv[2]); from sim.inputs.files import atomic_file\n"
        "with atomic_file(sys.argv[1]) as tmp, open(tmp, 'wb') as fh:\n"
        "    fh.write(b'x' * 100000); fh.flush(); print('writing', flush=True); time.sleep(60)\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", code, str(target), str(ROOT)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout.readline().strip() == "writing"
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert target.read_bytes() == b"earlier" and len(_temporaries(tmp_path)) == 1
    write_text_atomic(tmp_path / "next.csv", "x")
    assert _temporaries(tmp_path) == [] and target.read_bytes() == b"earlier"


# -- whole exports ------------------------------------------------------------------------------------


def _fake_export(names, content="new"):
    """A render function for export_to_folder that writes `names` (fast: no window)."""

    def render(folder: Path) -> list[Path]:
        for name in names:
            write_text_atomic(folder / name, content)
        return [folder / n for n in names]

    return render


def test_reexport_replaces_the_earlier_export_and_nothing_else(tmp_path):
    """Re-exporting into a folder mixed old and new files and left stale ones. (A folder holding
    the user's own files is refused or exported beside them: tests/hostile/test_exports.py.)"""
    out = tmp_path / "out"
    export_to_folder(
        out, _fake_export(["sm_view.png", "bandwidth_vs_size.png", "session.json"], "old")
    )
    (tmp_path / "notes.txt").write_text("mine")  # the user's own file, beside the folder
    export_to_folder(out, _fake_export(["sm_view.png", "session.json"]))
    assert sorted(p.name for p in out.iterdir()) == ["session.json", "sm_view.png", MANIFEST]
    assert (out / "sm_view.png").read_text() == "new" and (tmp_path / "notes.txt").read_text() == "mine"

    def crash(folder):
        _fake_export(["sm_view.png"], "newer")(folder)
        raise UserError("cannot write summary.png: No space left on device")

    before = snapshot(tmp_path)
    with pytest.raises(UserError):
        export_to_folder(out, crash)
    assert snapshot(tmp_path) == before  # the earlier export whole, no staging folder left


def _png_export(names, content="earlier"):
    """_fake_export, with summary.png a valid PNG (written by the export, so in its manifest)."""
    def render(folder: Path) -> list[Path]:
        files = _fake_export(names, content)(folder)
        image = QImage(64, 48, QImage.Format.Format_RGB32)
        image.fill(0x336699)
        assert image.save(str(folder / "summary.png"))
        return files + [folder / "summary.png"]

    return render


@pytest.mark.slow
def test_full_disk_during_a_real_export_and_screenshot(qapp, tmp_path):
    """On a full disk, export left a truncated PNG; `--screenshot` over a valid PNG exited 2 but
    left an invalid file. Now both leave every earlier file as it was, and nothing else. (The
    earlier export is written by `_fake_export` under the real names, summary.png a valid PNG:
    what is checked is that the real export and screenshot that fail leave it alone.)"""
    from gui.app import run_export, run_window

    out = tmp_path / "out"
    export_to_folder(out, _png_export(["sm_view.png", "sm_view.svg", "timeline.csv",
                                       "session.json", "summary.html"]))
    shot = out / "summary.png"
    before = snapshot(out)
    with disk_full_after(20_000):
        with pytest.raises(UserError, match="File too large"):
            run_export("T4", 100_000, 128, None, None, str(out))
        with pytest.raises(UserError, match="File too large"):
            run_window(gpu="T4", elements=100_000, block=128, screenshot=str(shot))
    assert snapshot(out) == before
    assert not QImage(str(shot)).isNull()


@pytest.mark.slow
def test_kill_during_export_keeps_the_earlier_export(tmp_path):
    """kill -9 during `export` left a truncated or empty PNG/SVG in 7 of 22 trials."""
    out = tmp_path / "out"
    earlier = ["sm_view.png", "sm_view.svg", "timeline.csv", "session.json"]
    export_to_folder(out, _fake_export(earlier, "earlier"))
    before = snapshot(out)
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    proc = subprocess.Popen(
        [
            sys.executable,
            "main.py",
            "export",
            "--gpu",
            "T4",
            "--elements",
            "1e5",
            "--out",
            str(out),
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:  # kill it in the middle of writing files: once its staging folder holds a few
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and proc.poll() is None:
            staging = [p for p in tmp_path.iterdir() if p.name.startswith(TEMP_PREFIX)]
            if staging and len(list(staging[0].iterdir())) >= 4:
                break
            time.sleep(0.005)
        assert proc.poll() is None, "the export finished before it could be killed"
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert snapshot(out) == before
    export_to_folder(out, _fake_export(["x.csv"]))
    assert _temporaries(tmp_path) == []  # the next export removed the killed run's staging folder
    assert sorted(p.name for p in out.iterdir()) == [MANIFEST, "x.csv"]


def test_stdout_on_a_full_disk_is_one_line_and_exit_1():  # a runtime failure, not usage
    with open("/dev/full", "w") as full:
        r = subprocess.run(
            [sys.executable, "main.py", "explain"],
            cwd=ROOT,
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            timeout=60,
        )
    assert r.returncode == 1 and r.stderr.count("\n") == 1 and "No space left" in r.stderr, r.stderr
