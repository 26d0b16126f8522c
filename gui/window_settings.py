"""What the window remembers between runs: the launch, its geometry and dock layout, the
simulation options and the playback speed (QSettings, gui/settings.py says where), restored at
start and saved a moment after each change and on close."""

from __future__ import annotations

import json

from PySide6.QtCore import QByteArray

from gui.settings import settings_notice

SETTINGS_VERSION = 1  # of the saved dock layout: restoreState refuses another


def restore_window(win) -> bool:
    """Restore `win` from its settings; True if a saved dock layout was restored."""
    s, options = win.settings, win.options
    if notice := settings_notice(s):
        win.show_message(f"Settings: {notice}", error=True, timeout_ms=30000)
    geo = s.value("window/geometry")
    if isinstance(geo, QByteArray) and not geo.isEmpty():
        win.restoreGeometry(geo)
    else:
        first_run_size(win)
    state = s.value("window/state")
    restored = (isinstance(state, QByteArray) and not state.isEmpty()
                and bool(win.restoreState(state, SETTINGS_VERSION)))
    # ids, or the spellings of earlier versions ("memory-bound"): the options resolve them
    options.set(str(s.value("sim/cost", options.cost)), str(s.value("sim/placement", options.placement)),
                str(s.value("sim/schedule", options.schedule)), str(s.value("sim/wait", options.wait)))
    win.playback.set_speed(s.value("sim/speed", 1.0))
    return restored


def first_run_size(win) -> None:
    """First start: most of the screen, up to 1600 x 1000, centred."""
    screen = win.screen().availableGeometry() if win.screen() else None
    if screen is None or screen.width() < 200:
        win.resize(1560, 960)
        return
    w, h = min(1600, screen.width() - 20), min(1000, screen.height() - 20)
    win.resize(w, h)
    win.move(screen.x() + (screen.width() - w) // 2, screen.y() + (screen.height() - h) // 2)


def save_window(win) -> None:
    s, options = win.settings, win.options
    s.setValue("launch/inputs", json.dumps(win.model.inputs.to_dict()))
    s.setValue("window/geometry", win.saveGeometry())
    s.setValue("window/state", win.saveState(SETTINGS_VERSION))
    s.setValue("sim/cost", options.cost)
    s.setValue("sim/placement", options.placement)
    s.setValue("sim/schedule", options.schedule)
    s.setValue("sim/wait", options.wait)
    s.setValue("sim/speed", win.playback.speed)
    s.sync()
