"""The teaching panels of the window, made and wired in one place: Verdicts (right), Latency
hiding and Two GPUs (bottom, beside the timeline), the Bandwidth panel's Timing methods tab, and
the theme (View ▸ Theme, saved in the settings; exports use their own theme, light by default).

main_window.py calls `install(win)` once; the returned `TeachPanels` holds the models and views.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QActionGroup

from gui import panels, style
from gui.theme import apply_window_theme

THEME_KEY, EXPORT_THEME_KEY = "view/theme", "export/theme"


@dataclass
class TeachPanels:
    """The teaching panels of `win`; those behind a tab are the window's, made after its first
    paint (gui.panels.LaterPanels): reading one here makes it."""

    win: object
    verdicts_view: object
    theme_actions: dict
    export_light: QAction

    @property
    def insight(self):
        return self.win.models.insight

    @property
    def compare(self):
        return self.win.models.compare

    @property
    def timing(self):
        return self.win.models.timing

    @property
    def latency_view(self):
        return self.win.latency_view

    @property
    def compare_view(self):
        return self.win.compare_view

    @property
    def timing_view(self):
        return self.win.timing_view

    def export_items(self) -> list:
        return (self.verdicts_view.export_items() + self.latency_view.export_items()
                + self.compare_view.export_items() + self.timing_view.export_items())

    @property
    def export_theme(self) -> str:
        return "light" if self.export_light.isChecked() else style.current_theme()

    def session(self) -> dict:
        """What session.json says of the verdicts, the latency model and the second GPU."""
        p, whole = self.insight.prediction, self.insight.launch_prediction
        sides = self.compare.sides
        return {
            "verdicts": [{"key": f.key, "impact": round(f.impact, 4), "title": f.title,
                          "detail": f.detail, "action": f.action} for f in self.insight.findings],
            "latency_model": None if p is None else {
                "whole_launch_us": round(whole.whole_launch_us, 4),
                "parts_us": {k: round(v, 4) for k, v in whole.parts().items()},
                "bandwidth_gbps": round(whole.bandwidth_gbps, 1), "steady_gbps": round(p.steady_gbps, 1),
                "bound": p.bound, "cycle_ns": round(p.cycle_ns, 1),
                "loaded_round_trip_ns": round(p.loaded_latency_ns, 1),
                "ceiling_gbps": round(p.ceiling_gbps, 1), "ceiling": self.insight.ceiling[1],
                "traffic": self.insight.basis,
                "confidence": None if whole is None else self.insight.confidence.to_dict(),
                "speed_of_light": None if whole is None else whole.speed_of_light().to_dict()},
            "second_gpu": None if sides is None else {
                "gpu": sides[1].gpu.name,
                "confidence": {s.gpu.name: None if s.confidence is None else s.confidence.to_dict()
                               for s in sides},
                "differences": [d.text for d in self.compare.differences]},
        }


def install(win) -> TeachPanels:
    """Make the teaching models, views, docks and menu entries of `win` (a MainWindow)."""
    verdicts_view = panels.make("verdicts", win.models)
    _ = win.models.compare  # made now, as its view will be: the second GPU follows this start
    right, bottom = Qt.DockWidgetArea.RightDockWidgetArea, Qt.DockWidgetArea.BottomDockWidgetArea
    panels.mount(win, "verdicts", right, verdicts_view)
    win.splitDockWidget(win.docks["occupancy"], win.docks["verdicts"], Qt.Orientation.Vertical)
    for key in ("latency", "compare", "diff"):  # behind the timeline's tab: made later
        panels.mount_later(win, key, bottom, tab_with="bandwidth", scrolled=key != "diff")
    win.docks["timeline"].raise_()

    view_menu = win.view_menu
    for key in ("verdicts", "latency", "compare", "diff"):
        view_menu.insertAction(view_menu.actions()[-2], win.docks[key].toggleViewAction())
    theme_menu = view_menu.addMenu("&Theme")
    group = QActionGroup(win)
    actions = {}
    for name in style.THEME_NAMES:
        act = QAction(name.capitalize(), win, checkable=True)
        act.triggered.connect(lambda _=False, n=name: set_theme(win, n))
        group.addAction(act)
        theme_menu.addAction(act)
        actions[name] = act
    theme_menu.addSeparator()
    export_light = QAction("Exports in the light theme", win, checkable=True)
    export_light.setToolTip("File ▸ Export renders every plot and the summary in the light "
                            "theme (for slides and print), whatever the window's theme.")
    export_light.setChecked(str(win.settings.value(EXPORT_THEME_KEY, "light")) == "light")
    export_light.toggled.connect(
        lambda on: win.settings.setValue(EXPORT_THEME_KEY, "light" if on else "window"))
    theme_menu.addAction(export_light)

    made = TeachPanels(win, verdicts_view, actions, export_light)
    saved = str(win.settings.value(THEME_KEY, style.current_theme()))
    name = saved if saved in style.THEMES else "dark"
    apply_window_theme(win, name)
    actions[name].setChecked(True)
    return made


def add_bandwidth_tabs(win) -> None:
    """The Bandwidth panel's Timing methods and Bandwidth vs occupancy tabs, each made on a turn
    of its own after the panel (gui.panels.LaterPanels.add_part)."""
    def timing() -> None:
        from gui.widgets.qt_bandwidth import _scrolled

        win.timing_view = panels.make("timing", win.models)
        win.bandwidth.tabs.insertTab(1, _scrolled(win.timing_view), "Timing methods")

    def occupancy() -> None:
        from gui.widgets.qt_bandwidth import _scrolled
        from gui.widgets.qt_occupancy_bandwidth import QtOccupancyBandwidth

        win.occupancy_bandwidth = QtOccupancyBandwidth(win.model, win.bench)  # computes when shown
        win.bandwidth.tabs.addTab(_scrolled(win.occupancy_bandwidth), "Bandwidth vs occupancy")

    win.later.add_part("bandwidth", "timing", timing, ("timing_view",))
    win.later.add_part("bandwidth", "occupancy_bandwidth", occupancy, ("occupancy_bandwidth",))


SPLIT_HEIGHT = 760  # a shorter window shows the verdicts as a tab beside the occupancy


def default_sizes(win, height: int) -> None:
    """Occupancy above, verdicts below in the right column; in a short window, tabs."""
    if not all(k in win.docks for k in ("occupancy", "verdicts")):
        return
    occ, verdicts = win.docks["occupancy"], win.docks["verdicts"]
    if height < SPLIT_HEIGHT:
        if verdicts not in win.tabifiedDockWidgets(occ):
            win.tabifyDockWidget(occ, verdicts)
        occ.raise_()
        return
    if verdicts in win.tabifiedDockWidgets(occ):
        win.splitDockWidget(occ, verdicts, Qt.Orientation.Vertical)
    occupancy = max(win.occupancy_view.minimumSizeHint().height() + 40, height * 5 // 8)
    win.resizeDocks([occ, verdicts], [occupancy, max(120, height - occupancy)],
                    Qt.Orientation.Vertical)


def set_theme(win, name: str, save: bool = True) -> None:
    """Switch the window's theme (and remember it)."""
    apply_window_theme(win, name)
    teach = getattr(win, "teach", None)
    actions = teach.theme_actions if teach is not None else {}
    if name in actions:
        actions[name].setChecked(True)
    if save:
        win.settings.setValue(THEME_KEY, name)
