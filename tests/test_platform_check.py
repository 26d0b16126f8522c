"""gui.platform_check: one apt-get line instead of Qt's abort when system libraries are missing."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import main
from gui import platform_check
from gui.platform_check import QT_LIBRARIES, XCB_LIBRARIES, missing_libraries, uses_xcb
from sim.inputs.errors import UserError

ROOT = Path(__file__).resolve().parents[1]
NOT_FOUND = "{}: cannot open shared object file: No such file or directory"


def _absent(*sonames, needs=None):
    """A loader for which `sonames` are not installed; `needs` maps a present library to one
    it fails to load (as the dynamic loader reports it)."""
    def load_error(soname):
        if soname in sonames:
            return NOT_FOUND.format(soname)
        if needs and soname in needs:
            return NOT_FOUND.format(needs[soname])
        return None
    return load_error


@pytest.mark.parametrize("env, xcb", [
    ({"DISPLAY": ":0"}, True),
    ({"QT_QPA_PLATFORM": "xcb"}, True),
    ({"QT_QPA_PLATFORM": "offscreen", "DISPLAY": ":0"}, False),
    ({"QT_QPA_PLATFORM": "wayland;xcb", "DISPLAY": ":0"}, False),
    ({"XDG_SESSION_TYPE": "wayland", "WAYLAND_DISPLAY": "wayland-0", "DISPLAY": ":0"}, False),
    ({}, False),
])
def test_which_platform_qt_will_use(env, xcb):
    assert uses_xcb(env) is xcb


def test_missing_xcb_libraries_give_one_apt_line_and_exit_status_2(monkeypatch, capsys):
    """What a plain Debian 12 lacks: Qt aborted there; now the app prints the fix."""
    monkeypatch.setattr(platform_check, "load_error",
                        _absent("libxcb-cursor.so.0", "libxcb-icccm.so.4", "libxcb-keysyms.so.1"))
    monkeypatch.setattr(sys, "platform", "linux")
    for name in ("QT_QPA_PLATFORM", "WAYLAND_DISPLAY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("DISPLAY", ":99")

    def no_qt(*_a, **_k):
        raise AssertionError("QApplication must not be created when libraries are missing")

    monkeypatch.setattr("gui.app.make_app", no_qt)
    assert main.main([]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert err[0].endswith(
        "on Debian/Ubuntu: sudo apt-get install -y libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1")
    assert "libxcb-icccm.so.4" in err[0]


def test_offscreen_needs_only_the_common_libraries(monkeypatch):
    monkeypatch.setattr(platform_check, "load_error", _absent("libxcb-icccm.so.4", "libGL.so.1"))
    assert missing_libraries(xcb=False) == {"libGL.so.1": "libgl1"}
    assert missing_libraries(xcb=True) == {"libGL.so.1": "libgl1",
                                           "libxcb-icccm.so.4": "libxcb-icccm4"}


def test_a_library_that_cannot_load_its_own_dependency_names_the_dependency(monkeypatch):
    monkeypatch.setattr(platform_check, "load_error", _absent(
        "libxcb-render-util.so.0", needs={"libxcb-cursor.so.0": "libxcb-render-util.so.0"}))
    assert missing_libraries(xcb=True) == {"libxcb-render-util.so.0": "libxcb-render-util0"}


def test_nothing_missing_passes(monkeypatch):
    monkeypatch.setattr(platform_check, "load_error", _absent())
    platform_check.require_qt_libraries({"DISPLAY": ":0"})
    monkeypatch.setattr(platform_check, "load_error", _absent("libEGL.so.1"))
    with pytest.raises(UserError, match=r"sudo apt-get install -y libegl1$"):
        platform_check.require_qt_libraries({"QT_QPA_PLATFORM": "offscreen"})


# Always on a Debian/Ubuntu system (glibc, the C++ runtime, and the Priority: required zlib/zstd)
BASE_SYSTEM = re.compile(r"^(libc|libm|libdl|libpthread|librt|ld-linux.*|libstdc\+\+|libgcc_s"
                         r"|libz|libzstd)\.so")

LOADED_QT = """
import re, sys
import gui.main_window  # everything the window imports (QtSvg, QtOpenGL, ... through pyqtgraph)
print("\\n".join(sorted(set(re.findall(r"(/\\S+\\.so[.\\d]*)", open("/proc/self/maps").read())))))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux") or not shutil.which("objdump"),
                    reason="reads the ELF NEEDED entries of PySide6's Linux wheel with objdump")
@pytest.mark.slow
def test_the_tables_cover_what_the_installed_pyside6_links_against():
    """The table is written out for the wheel pinned in requirements.txt; a new PySide6 that
    links one more system library fails here instead of aborting on a user's machine."""
    import PySide6

    pyside = Path(PySide6.__file__).resolve().parent  # /proc/self/maps names resolved paths
    loaded = subprocess.run([sys.executable, "-c", LOADED_QT], cwd=ROOT, capture_output=True,
                            text=True, check=True,
                            env={"QT_QPA_PLATFORM": "offscreen", "PATH": "/usr/bin:/bin"}).stdout
    qt_files = [Path(p) for p in loaded.split()
                if p.startswith((str(pyside), str(pyside.parent / "shiboken6")))]
    xcb_files = [pyside / "Qt/plugins/platforms/libqxcb.so", pyside / "Qt/lib/libQt6XcbQpa.so.6"]
    assert len(qt_files) > 10 and all(f.is_file() for f in xcb_files)
    bundled = {p.name for d in (pyside, pyside / "Qt/lib", pyside.parent / "shiboken6")
               for p in d.iterdir()}

    def system_needs(files):
        out = subprocess.run(["objdump", "-p", *map(str, files)], capture_output=True, text=True,
                             check=True).stdout
        needed = set(re.findall(r"^\s+NEEDED\s+(\S+)", out, re.M))
        return {n for n in needed - bundled if not BASE_SYSTEM.match(n)}

    common = system_needs(qt_files)
    assert common == set(QT_LIBRARIES)
    assert system_needs(xcb_files) - common <= set(XCB_LIBRARIES)
    assert set(XCB_LIBRARIES) <= system_needs(xcb_files)
