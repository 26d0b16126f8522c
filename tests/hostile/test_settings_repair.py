"""Damaged saved settings: the window starts with defaults and says so; the damaged file is set
aside so the next start is clean; an unusable settings folder gives in-memory settings."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from PySide6.QtCore import QByteArray, QSettings

from gui.models.launch import LaunchInputs
from gui.settings import MemorySettings, open_settings, saved_inputs, settings_notice, settings_path

from tests.hostile.helpers import fuzz, json_values, mutations, time_limit

VALID_INPUTS = LaunchInputs(
    gpu="A100 80GB", elements=777_777, threads_per_block=160, regs_per_thread=48
).to_dict()


def _write_valid(folder: Path, **override) -> Path:
    os.environ["WARPSCOPE_SETTINGS_DIR"] = str(folder)
    folder.mkdir(parents=True, exist_ok=True)
    s = QSettings(settings_path(), QSettings.Format.IniFormat)
    values = {
        "launch/inputs": json.dumps(VALID_INPUTS),
        "sim/cost": "memory-bound",
        "sim/placement": "tpc-spread",
        "sim/speed": 4.0,
        "window/geometry": QByteArray(b"\x01\x02"),
    }
    for key, value in {**values, **override}.items():
        s.setValue(key, value)
    s.sync()
    del s
    return Path(settings_path())


def _open_and_check(folder: Path, capsys=None):
    """Open the settings as the window does; whatever was in the file, this must hold."""
    with time_limit(5):
        s = open_settings()
    notice = settings_notice(s)
    inputs = saved_inputs(s)
    assert inputs is None or isinstance(inputs, LaunchInputs)
    if notice:
        assert "\n" not in notice
        assert any(p.name.startswith("warpscope.ini.damaged-") for p in folder.iterdir()), notice
        assert settings_notice(open_settings()) == ""  # the next start is clean
    return s, notice, inputs


def test_valid_settings_open_without_a_notice(tmp_path):
    _write_valid(tmp_path / "s")
    s, notice, inputs = _open_and_check(tmp_path / "s")
    assert notice == "" and inputs == LaunchInputs.from_dict(VALID_INPUTS)


@fuzz(60)
@given(case=mutations(VALID_INPUTS))
def test_damaged_saved_launch(tmp_path_factory, case):
    text, _ = case
    folder = tmp_path_factory.mktemp("s")
    _write_valid(folder, **{"launch/inputs": text})
    _open_and_check(folder)


@fuzz(40)
@given(
    key=st.sampled_from(
        [
            "sim/cost",
            "sim/placement",
            "sim/speed",
            "window/geometry",
            "window/state",
            "launch/inputs",
        ]
    ),
    value=json_values,
)
def test_damaged_other_values(tmp_path_factory, key, value):
    folder = tmp_path_factory.mktemp("s")
    _write_valid(
        folder, **{key: value if isinstance(value, str) else json.dumps(value)}
    )  # an INI holds text
    _open_and_check(folder)


@fuzz(30)
@given(garbage=st.binary(max_size=300), cut=st.integers(0, 400))
def test_damaged_file_bytes(tmp_path_factory, garbage, cut):
    folder = tmp_path_factory.mktemp("s")
    path = _write_valid(folder)
    data = path.read_bytes()
    path.write_bytes(data[:cut] + garbage + data[cut:])
    _open_and_check(folder)


@pytest.mark.parametrize(
    "make",
    [
        lambda p: os.mkfifo(p),  # QSettings would block on it forever
        lambda p: p.mkdir(),
        lambda p: open(p, "wb").truncate(2**30),  # 1 GB (sparse)
        lambda p: p.write_text("[launch]\ninputs=" + "[" * 100_000 + "\n"),
    ],
)
def test_settings_file_that_is_no_file(tmp_path, make):
    folder = tmp_path / "s"
    folder.mkdir()
    os.environ["WARPSCOPE_SETTINGS_DIR"] = str(folder)
    make(Path(settings_path()))
    s, notice, _ = _open_and_check(folder)
    assert notice


def test_settings_folder_that_is_a_file_gives_memory_settings(tmp_path):
    (tmp_path / "s").write_text("not a folder")
    os.environ["WARPSCOPE_SETTINGS_DIR"] = str(tmp_path / "s")
    s = open_settings()  # was a traceback
    assert isinstance(s, MemorySettings) and "is a file" in settings_notice(s)
    s.setValue("sim/speed", 2.0)
    assert s.value("sim/speed") == 2.0 and s.value("absent", 7) == 7


def test_read_only_settings_folder_gives_memory_settings(tmp_path, monkeypatch):
    folder = tmp_path / "s"
    folder.mkdir(mode=0o500)
    os.environ["WARPSCOPE_SETTINGS_DIR"] = str(folder)
    if os.geteuid() == 0:  # root writes anywhere: let the check see what a user would
        import gui.settings

        real = os.access
        monkeypatch.setattr(
            gui.settings.os, "access", lambda p, m: False if str(p) == str(folder) else real(p, m)
        )
    s = open_settings()
    assert isinstance(s, MemorySettings) and "not writable" in settings_notice(s)


@pytest.mark.parametrize(
    "damage",
    [
        {"launch/inputs": '{"elements": Infinity}'},  # crashed every start from then on
        {"launch/inputs": "[" * 100_000 + "]" * 100_000},  # likewise (RecursionError)
    ],
)
@pytest.mark.slow
def test_window_starts_with_defaults_and_says_so(qtbot, tmp_path, capfd, damage):
    from gui.main_window import MainWindow

    folder = tmp_path / "s"
    _write_valid(folder, **damage)
    win = MainWindow(None, restore=True, load_kernels=False)
    qtbot.addWidget(win)
    try:
        assert win.model.inputs == LaunchInputs()
        assert "damaged" in win.statusBar().currentMessage()
    finally:
        win.shutdown()
    err = capfd.readouterr().err
    assert err.count("warpscope: note: saved settings were damaged") == 1
    assert settings_notice(open_settings()) == ""


@pytest.mark.slow
def test_window_with_an_unusable_settings_folder(qtbot, tmp_path):
    from gui.main_window import MainWindow

    (tmp_path / "s").write_text("not a folder")
    os.environ["WARPSCOPE_SETTINGS_DIR"] = str(tmp_path / "s")
    win = MainWindow(None, restore=True, load_kernels=False)
    qtbot.addWidget(win)
    try:
        assert "kept in memory" in win.statusBar().currentMessage()
        win.save_settings()
        assert win._saved_inputs() == win.model.inputs
    finally:
        win.shutdown()
