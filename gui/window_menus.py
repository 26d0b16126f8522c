"""The window's menu bar: File, Simulation, View and Help, each entry a window-wide shortcut.

`build_menus(win)` is called once by main_window.py; the actions tests and other parts trigger
are kept on the window (`win.act_play`, `win.act_open_trace`, `win.view_menu`, …)."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence

from gui import help as help_texts


# the dialogs' modules are imported when an entry is first chosen, not before the first paint
def ncu_dialog(win) -> None:
    from gui.ncu_view import ncu_dialog as dialog

    dialog(win)


def perfetto_dialog(win) -> None:
    from gui.perfetto_export import perfetto_dialog as dialog

    dialog(win)


def export_dialog(win) -> None:
    from gui.window_export import export_dialog as dialog

    dialog(win)


def screenshot_dialog(win) -> None:
    from gui.window_export import screenshot_dialog as dialog

    dialog(win)


def add_action(win, menu, text, shortcut, slot) -> QAction:
    """An entry of `menu` whose shortcut works wherever the focus is in `win`."""
    act = QAction(text, win)
    if shortcut is not None:
        act.setShortcut(QKeySequence(shortcut))
        act.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
    act.triggered.connect(slot)
    menu.addAction(act)
    win.addAction(act)
    return act


def build_menus(win) -> None:
    pb = win.playback
    m = win.menuBar().addMenu("&File")
    win.act_open = add_action(win, m, "&Open bench results…", "Ctrl+O", lambda: open_results(win))
    win.user_kernels.add_file_actions(m)
    win.act_open_trace = add_action(win, m, "Open &trace…", "Ctrl+T",
                                    lambda: win.timeline.open_trace_dialog())
    win.act_open_ncu = add_action(win, m, "Open &Nsight Compute report…", None, lambda: ncu_dialog(win))
    sub = m.addMenu("&Export")
    win.act_export = add_action(win, sub, "&Everything…", "Ctrl+E", lambda: export_dialog(win))
    win.act_export_perfetto = add_action(win, sub, "&Perfetto timeline…", None,
                                         lambda: perfetto_dialog(win))
    win.act_shot = add_action(win, m, "Save &screenshot…", "Ctrl+Shift+S",
                              lambda: screenshot_dialog(win))
    m.addSeparator()
    add_action(win, m, "&Quit", QKeySequence.StandardKey.Quit, win.close)
    m = win.menuBar().addMenu("&Simulation")
    win.act_play = add_action(win, m, "&Play / pause", "Space", pb.toggle)
    win.act_step = add_action(win, m, "Step &forward", ".", lambda: pb.step(+1))
    win.act_back = add_action(win, m, "Step &back", ",", lambda: pb.step(-1))
    win.act_start = add_action(win, m, "Go to &start", "Home", lambda: pb.pick(0.0))
    win.act_end = add_action(win, m, "Go to &end", "End", lambda: pb.pick(pb.end_us))
    win.act_loop = add_action(win, m, "&Loop the animation", "L",
                              lambda on: setattr(pb, "loop", bool(on)))
    win.act_loop.setCheckable(True)
    win.act_loop.setChecked(pb.loop)
    m.addSeparator()
    add_action(win, m, "F&aster", "]", lambda: pb.faster(+1))
    add_action(win, m, "S&lower", "[", lambda: pb.faster(-1))
    m = win.view_menu = win.menuBar().addMenu("&View")
    for dock in win.docks.values():
        m.addAction(dock.toggleViewAction())
    m.addSeparator()
    add_action(win, m, "&Reset layout", None, win.reset_layout)
    m = win.menuBar().addMenu("&Help")
    sub = m.addMenu("&What am I looking at?")
    for key, (title, _) in help_texts.PANELS.items():
        sub.addAction(title, lambda k=key: win.show_help(k))
    add_action(win, m, "&About WarpScope", None, lambda: about(win))


def open_results(win) -> None:
    """File ▸ Open bench results…: the Bandwidth panel's own Open, with the panel in front."""
    win.docks["bandwidth"].show()
    win.docks["bandwidth"].raise_()
    win.bandwidth.sweep.open_results_dialog()


def about(win) -> None:
    from PySide6.QtWidgets import QMessageBox

    QMessageBox.about(win, "About WarpScope", help_texts.ABOUT)
