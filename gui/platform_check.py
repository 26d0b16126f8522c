"""Before Qt starts: name the Debian/Ubuntu packages of the system libraries Qt needs.

PySide6's wheels bundle Qt but not the X11/OpenGL libraries it links against. When one is missing,
`import PySide6.QtWidgets` fails on a missing ``.so``, or Qt's xcb plugin prints a screenful and
aborts the process ("Aborted", no Python traceback). A plain Debian 12 image lacks, for example,
libxcb-cursor0, libxcb-icccm4 and libxcb-keysyms1. :func:`require_qt_libraries` checks first and
raises one `UserError` with the single ``apt-get`` line that fixes it (exit status 2 in the CLI).

The sonames are those the PySide6 6.10 wheel's own files need (``objdump -p``: NEEDED entries of
libQt6Core/Gui/Widgets/DBus, the offscreen and xcb platform plugins and libQt6XcbQpa);
tests/test_platform_check.py compares this table with the installed wheel.
"""

from __future__ import annotations

import ctypes
import os
import sys

from sim.inputs.errors import UserError

# soname -> Debian/Ubuntu package, for every platform (QtCore, QtGui, QtWidgets, offscreen)
QT_LIBRARIES = {
    "libglib-2.0.so.0": "libglib2.0-0",
    "libgthread-2.0.so.0": "libglib2.0-0",
    "libdbus-1.so.3": "libdbus-1-3",
    "libEGL.so.1": "libegl1",
    "libGL.so.1": "libgl1",
    "libfontconfig.so.1": "libfontconfig1",
    "libfreetype.so.6": "libfreetype6",
    "libX11.so.6": "libx11-6",
    "libxkbcommon.so.0": "libxkbcommon0",
}

# and for a window on X11 (Qt's xcb platform plugin and libQt6XcbQpa)
XCB_LIBRARIES = {
    "libX11-xcb.so.1": "libx11-xcb1",
    "libxcb.so.1": "libxcb1",
    "libxcb-cursor.so.0": "libxcb-cursor0",
    "libxcb-icccm.so.4": "libxcb-icccm4",
    "libxcb-image.so.0": "libxcb-image0",
    "libxcb-keysyms.so.1": "libxcb-keysyms1",
    "libxcb-randr.so.0": "libxcb-randr0",
    "libxcb-render.so.0": "libxcb-render0",
    "libxcb-render-util.so.0": "libxcb-render-util0",
    "libxcb-shape.so.0": "libxcb-shape0",
    "libxcb-shm.so.0": "libxcb-shm0",
    "libxcb-sync.so.1": "libxcb-sync1",
    "libxcb-util.so.1": "libxcb-util1",
    "libxcb-xfixes.so.0": "libxcb-xfixes0",
    "libxcb-xkb.so.1": "libxcb-xkb1",
    "libxkbcommon-x11.so.0": "libxkbcommon-x11-0",
}


def load_error(soname: str) -> str | None:
    """None if the dynamic loader finds `soname` (and what it needs); else the loader's message."""
    try:
        ctypes.CDLL(soname)
    except OSError as exc:
        return str(exc)
    return None


def uses_xcb(env=os.environ) -> bool:
    """Will Qt open its window through the xcb (X11) plugin? With QT_QPA_PLATFORM unset, Qt 6
    takes Wayland in a Wayland session and X11 wherever DISPLAY is set."""
    platform = env.get("QT_QPA_PLATFORM", "").split(";")[0].split(":")[0].strip()
    if platform:
        return platform == "xcb"
    if env.get("XDG_SESSION_TYPE") == "wayland" and env.get("WAYLAND_DISPLAY"):
        return False
    return bool(env.get("DISPLAY"))


def missing_libraries(xcb: bool) -> dict[str, str]:
    """{soname: Debian package} of the libraries that do not load. A library that is present but
    cannot load what *it* needs counts the library named in the loader's message instead."""
    table = {**QT_LIBRARIES, **(XCB_LIBRARIES if xcb else {})}
    missing = {}
    for soname, package in table.items():
        error = load_error(soname)
        if error is None:
            continue
        culprit = error.split(":")[0].strip()
        if culprit in table:
            missing[culprit] = table[culprit]
        else:
            missing[soname] = package
    return missing


def require_qt_libraries(env=os.environ) -> None:
    """Raise one UserError naming the apt packages if Qt would fail to load or abort here."""
    if not sys.platform.startswith("linux"):
        return  # the macOS and Windows wheels carry everything they need
    missing = missing_libraries(uses_xcb(env))
    if missing:
        names = sorted(missing)
        shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
        packages = " ".join(sorted(set(missing.values())))
        raise UserError(f"Qt needs system libraries that are missing ({shown}); "
                        f"on Debian/Ubuntu: sudo apt-get install -y {packages}")
