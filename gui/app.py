"""Starting the app: the QApplication, the window, screenshots and headless export."""

from __future__ import annotations

import os
import sys
import time
from dataclasses import replace
from functools import partial
from pathlib import Path

from gui.platform_check import require_qt_libraries
from sim.inputs.errors import UserError

_T0 = time.perf_counter()


def ensure_platform(headless: bool) -> None:
    """Headless work (export, screenshots without a display) uses Qt's offscreen platform."""
    if headless and not os.environ.get("QT_QPA_PLATFORM"):
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
    require_qt_libraries()  # one apt-get line instead of Qt's abort on a bare Debian/Ubuntu
    if os.environ.get("QT_QPA_PLATFORM") == "offscreen":
        _quiet_offscreen_notes()
    elif (
        not os.environ.get("QT_QPA_PLATFORM")
        and not os.environ.get("DISPLAY")
        and not os.environ.get("WAYLAND_DISPLAY")
        and sys.platform.startswith("linux")
    ):
        raise UserError(
            "no display to open a window on (DISPLAY is not set); use "
            "`--screenshot FILE.png`, the `export` command, or run under xvfb-run"
        )


_NOISE = ("propagateSizeHints",)  # the offscreen plugin has no window manager to tell


def _quiet_offscreen_notes() -> None:
    """Drop the offscreen plugin's harmless notes; pass every other message on unchanged."""
    from PySide6.QtCore import qInstallMessageHandler

    previous = None

    def handler(mode, context, message):
        if any(n in message for n in _NOISE):
            return
        if previous is not None:
            previous(mode, context, message)
        else:
            sys.stderr.write(message + "\n")

    previous = qInstallMessageHandler(handler)


def make_app():
    from PySide6.QtWidgets import QApplication

    from gui.settings import APP, ORG

    app = QApplication.instance()
    if app is None:
        app = QApplication(sys.argv[:1])
        app.setOrganizationName(ORG)
        app.setApplicationName(APP)
        app.setApplicationDisplayName("WarpScope")
    from gui.style import apply_dark_theme

    apply_dark_theme(app)
    return app


def build_inputs(base, gpu=None, elements=None, block=None, regs=None, smem=None, carveout=None,
                 cluster=None, max_registers=None):
    """Apply command-line values to `base` (a LaunchInputs) and check them; UserError if bad."""
    from gui.models.launch import LaunchInputs, compute_state
    from sim.rules.devices import preset

    base = base or LaunchInputs()
    changes = {}
    if gpu is not None:
        changes["gpu"] = preset(gpu).name  # UserError with the list of names
    if elements is not None:
        changes["elements"] = int(elements)
    if block is not None:  # a thread count, or a 2D/3D block (sim.rules.block_shape.Dims)
        dims = block.tuple if hasattr(block, "tuple") else (int(block), 1, 1)
        changes.update(threads_per_block=dims[0] * dims[1] * dims[2], block_y=dims[1], block_z=dims[2])
        changes["block_size"] = None
    if regs is not None:
        changes["regs_per_thread"] = int(regs)
    if smem is not None:
        changes["smem_per_block"] = int(smem)
    if carveout is not None:
        changes["carveout_percent"] = int(carveout)
    if cluster is not None:
        changes["cluster_size"] = int(cluster)
    if max_registers is not None:
        changes["max_registers"] = int(max_registers)
    if changes.keys() & {"threads_per_block", "regs_per_thread", "smem_per_block"}:
        changes.setdefault("kernel", "custom")
        changes["block_size"] = None
    inputs = replace(base, **changes)
    try:
        spec = preset(inputs.gpu)
    except UserError:
        if gpu is not None:
            raise
        inputs = replace(inputs, gpu=LaunchInputs().gpu)  # a device saved from another machine
        spec = preset(inputs.gpu)
    if block is not None and inputs.threads_per_block > spec.max_threads_per_block:
        # as `explain` says it; the window's threads box could not even show such a size
        raise UserError(f"block size must be 1..{spec.max_threads_per_block} threads on {spec.name}, "
                        f"got {inputs.threads_per_block}")
    state = compute_state(inputs, spec)
    if state.error:
        raise UserError(state.error)
    return inputs


def _check_out_path(path: str, suffix: str | None = None) -> Path:
    """Refuse an output path that cannot work (empty, wrong suffix, a file where a folder must
    be, a name too long) before any work is done."""
    from sim.inputs.files import check_folder

    p = Path(path)
    if suffix and (not str(path).strip() or p.suffix.lower() != suffix):
        raise UserError(f"{path!r}: the screenshot must be a {suffix} file")
    check_folder(p.parent if suffix else p, "folder")
    if suffix:
        from sim.inputs.files import check_writable

        if p.parent.is_dir():
            check_writable(p, "screenshot")
    return p


def _make_folder(folder: Path) -> None:
    """Create an output folder once the inputs are known good; an unwritable place is one line."""
    from sim.inputs.files import make_folder

    make_folder(folder)


def run_window(
    gpu=None, elements=None, block=None, regs=None, smem=None, screenshot: str | None = None
) -> int:
    shot = _check_out_path(screenshot, ".png") if screenshot is not None else None
    ensure_platform(headless=False) if shot is None else ensure_platform(
        headless=not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))
    )
    # validate command-line values before any window appears
    from gui.models.launch import LaunchInputs

    build_inputs(LaunchInputs(), gpu, elements, block, regs, smem)
    if shot is not None:
        _make_folder(shot.parent)
    app = make_app()
    from gui.main_window import MainWindow

    if shot is not None:
        inputs = build_inputs(LaunchInputs(), gpu, elements, block, regs, smem)
        win = MainWindow(inputs, restore=False, load_kernels=False)
        try:
            return _take_screenshot(app, win, shot)
        finally:
            win.shutdown()
            win.deleteLater()
    given = any(v is not None for v in (gpu, elements, block, regs, smem))
    # the launch asked for is the one built, simulated and painted first (not the saved one)
    win = MainWindow(None, restore=True, load_kernels=True, autoplay=True,
                     adjust=partial(build_inputs, gpu=gpu, elements=elements, block=block,
                                    regs=regs, smem=smem) if given else None)
    if gpu is not None:
        win.live_kernels.prefer_detected = False
    win.show()
    if os.environ.get("WARPSCOPE_STARTUP_PROBE"):
        _probe_first_paint(app, win)
    _close_on_signals(win)
    return int(app.exec())


def _close_on_signals(win) -> None:
    """Ctrl+C in the terminal or a polite kill closes the window normally (settings saved,
    threads stopped) instead of dying mid-frame."""
    import signal
    import socket

    from PySide6.QtCore import QSocketNotifier, QTimer

    def close(*_):
        QTimer.singleShot(0, win.close)

    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, close)
    # Python runs its signal handlers only between bytecodes, and an idle Qt loop runs none: the
    # C handler writes the signal's number to this socket, whose notifier wakes the loop (no timer
    # polling, so an idle window uses no CPU).
    wake_r, wake_w = socket.socketpair()
    wake_r.setblocking(False)
    wake_w.setblocking(False)
    signal.set_wakeup_fd(wake_w.fileno())
    notifier = QSocketNotifier(wake_r.fileno(), QSocketNotifier.Type.Read, win)
    notifier.activated.connect(lambda *_: wake_r.recv(64))
    win._signal_wakeup = (wake_r, wake_w, notifier)  # alive as long as the window


def _probe_first_paint(app, win) -> None:
    """For start-up timing: print when the window has painted (and, in "kernels" mode,
    when the background import of torch/triton/numba is done, with the longest event-loop stall
    seen meanwhile), then quit."""
    from PySide6.QtCore import QTimer

    mode = os.environ.get("WARPSCOPE_STARTUP_PROBE", "visible")
    state = {"last": time.perf_counter(), "stall": 0.0, "visible": False}

    def check():
        now = time.perf_counter()
        if state["visible"]:
            state["stall"] = max(state["stall"], now - state["last"])
        state["last"] = now
        if not state["visible"] and win.isVisible() and win.sm_view.frames_drawn > 0:
            state["visible"] = True
            listed = win.controls.kernel.count() - 1  # the kernels beside "custom (by hand)"
            heavy = ",".join(m for m in ("torch", "triton", "numba") if m in sys.modules) or "-"
            # cpu: this process's CPU seconds so far, what a quiet machine's wall time would be
            later = ",".join(win.later.at_first_paint or ()) or "-"  # panels made after it
            print(f"WARPSCOPE_VISIBLE {time.time():.6f} kernels={listed} imported={heavy} "
                  f"cpu={time.process_time():.2f} later={later}", flush=True)
            if mode != "kernels":
                QTimer.singleShot(0, win.close)
                return
        if state["visible"] and mode == "kernels" and win.kernels_info is not None:
            print(f"WARPSCOPE_KERNELS {time.time():.6f} {state['stall'] * 1e3:.1f}", flush=True)
            QTimer.singleShot(0, win.close)
            return
        QTimer.singleShot(5, check)

    QTimer.singleShot(0, check)


def representative_time(rec, fraction: float) -> float:
    """A moment to show in still images (gui.models.playback.telling_time_us): the middle of the
    wave running at `fraction` of the launch; `rec` a SimRun or its Timeline."""
    from gui.models.playback import telling_time_us

    return telling_time_us(getattr(rec, "timeline", rec), fraction)


def _show_launch(app, win, time_fraction: float = 0.42) -> None:
    """Lay the window out at 1600x1000, simulate, and stop the clock inside a busy wave."""
    win.later.make_all()  # every panel, as an export draws them all
    win.resize(1600, 1000)
    win.show()
    for _ in range(5):
        app.processEvents()
    win.apply_default_dock_sizes()
    for _ in range(5):
        app.processEvents()
    rec = win.simulate_now()
    if rec is not None:
        win.playback.set_time(representative_time(rec, time_fraction))
    for _ in range(5):
        app.processEvents()


def _take_screenshot(app, win, path: Path, time_fraction: float = 0.42) -> int:
    from gui.export import save_png

    from gui.redraw import flush_redraws

    _show_launch(app, win, time_fraction)
    flush_redraws(win)  # views redraw in steps (gui.redraw.StagedRedraw): the picture is whole
    save_png(path, win.grab())  # whole or not at all: an earlier file survives a full disk
    print(f"wrote {path}")
    return 0


def run_export(gpu, elements, block, regs, smem, out: str, results: str | None = None,
               carveout: int | None = None, theme: str = "light", force: bool = False,
               cluster: int | None = None, max_registers: int | None = None) -> int:
    out_dir = _check_out_path(out)
    from gui.export_folder import export_target

    target = export_target(out_dir, force)  # a folder with others' files: one line, before any work
    ensure_platform(headless=True)
    from gui.models.launch import LaunchInputs

    inputs = build_inputs(LaunchInputs(), gpu, elements, block, regs, smem, carveout, cluster,
                          max_registers)
    bench = None
    if results is not None:
        from kernels.measure.results import load_results  # no torch/triton/numba: plain files

        bench = load_results(results)  # UserError if unreadable
    _make_folder(target.parent)
    # progress on stderr (the file list is the output): the views take tens of seconds to draw
    print(f"export: drawing every view for {inputs.gpu} ...", file=sys.stderr, flush=True)
    app = make_app()
    from gui.main_window import MainWindow

    win = MainWindow(inputs, restore=False, load_kernels=False)
    try:
        _show_launch(app, win)
        if bench is not None:
            win.bench.set_result(bench)
        app.processEvents()
        from gui.export import export_to_folder

        print(f"export: writing the files to {out_dir} ...", file=sys.stderr, flush=True)
        try:
            files = export_to_folder(out_dir, lambda folder: win.export_all(folder, theme), force)
        except OSError as exc:
            raise UserError(f"export to {out_dir} failed: {exc.strerror or exc}") from None
        note = win.model.state.message()
    finally:
        win.shutdown()
        win.hide()
        win.deleteLater()
    where = target if target == Path(os.path.realpath(out_dir)) else f"{target} ({out_dir} holds others' files)"
    lines = ([f"note: {note}"] if note else []) + [f"wrote {len(files)} files to {where}"]
    lines += [f"  {f.name}" for f in files]
    print("\n".join(lines))  # a closed pipe or full disk here is main.py's to report
    return 0
