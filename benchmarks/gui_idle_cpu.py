"""CPU used by the window in the 10 s after its animation (autoplay, as the app) has had time to
end: `python benchmarks/gui_idle_cpu.py once|loop` (QT_QPA_PLATFORM=offscreen without a display).

Everything runs inside the event loop, as in the app: a loop of processEvents() calls delivers no
DeferredDelete and so left the layout's animations to the first second of the measurement (0.2 to
0.5 s of CPU that the app spends while it plays). Each second's CPU is printed too: an idle window
spends none, whatever its total says."""
import resource
import sys
import time

sys.path.insert(0, "benchmarks")
from shot_window import open_window  # noqa: E402

from PySide6.QtCore import QTimer  # noqa: E402

from gui.app import make_app  # noqa: E402
from gui.models.launch import LaunchInputs  # noqa: E402

loop = sys.argv[1] == "loop"
app = make_app()
win = open_window(LaunchInputs(gpu="H200", elements=2**24, threads_per_block=256), (1366, 768),
                  settle=False)
cpu = lambda: sum(resource.getrusage(resource.RUSAGE_SELF)[:2])  # noqa: E731
marks: list = []
state: dict = {}


def play() -> None:
    win.apply_default_dock_sizes()
    win.playback.loop = loop
    win.playback.set_time(0)
    win.playback.set_playing(True)
    QTimer.singleShot(int((win.playback.base_seconds + 1.0) * 1000), measure)


def measure() -> None:
    marks.append((cpu(), time.perf_counter()))
    if len(marks) <= 10:
        QTimer.singleShot(1000, measure)
    else:  # the state while measured (quitting hides the window, which stops its clock)
        state.update(playing=win.playback.playing, clock=win.clock.is_active())
        app.quit()


QTimer.singleShot(500, play)  # laid out and painted first, as open_window's settle did
app.exec()
(c0, t0), (c1, t1) = marks[0], marks[-1]
per_s = " ".join(f"{(b[0] - a[0]) * 1e3:.0f}" for a, b in zip(marks, marks[1:]))
print(f"loop={loop}: playing={state['playing']} clock={state['clock']} "
      f"CPU {100 * (c1 - c0) / (t1 - t0):.1f}% of a core (ms per second: {per_s})")
win.shutdown()
