"""CPU used by the window in the 10 s after its animation (autoplay, as the app) has had time to end."""
import sys, time, resource
sys.path.insert(0, "benchmarks")
from shot_window import open_window, pump
from gui.models.launch import LaunchInputs
loop = sys.argv[1] == "loop"
win = open_window(LaunchInputs(gpu="H200", elements=2**24, threads_per_block=256), (1366, 768))
win.playback.loop = loop
win.playback.set_time(0); win.playback.set_playing(True)
pump(win.playback.base_seconds + 1.0)  # one whole playback
cpu = lambda: sum(resource.getrusage(resource.RUSAGE_SELF)[:2])
c0, t0 = cpu(), time.perf_counter()
from PySide6.QtCore import QTimer
from gui.app import make_app
app = make_app(); QTimer.singleShot(10000, app.quit); app.exec()
print(f"loop={loop}: playing={win.playback.playing} clock={win.clock.is_active()} "
      f"CPU {100 * (cpu() - c0) / (time.perf_counter() - t0):.1f}% of a core")
win.shutdown()
