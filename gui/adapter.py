"""The one module that owns timers, worker threads and the kernel host.

Views never start threads or timers themselves. Work that may take long is a plain function of a
`TaskContext` (kernels.host.process); a runner runs it away from the GUI thread and hands the outcome back
to the GUI thread as an immutable `TaskOutcome` through a queued signal. Two runners, one interface
(`submit(fn, name) -> job id`, `cancel(job_id=None)`, `busy()`, `shutdown()`; signals `started`,
`progress`, `finished`):

- `TaskRunner`: a `QThread` of this process, for pure simulation work (numpy, sim).
- `HostRunner`: the kernel host process (kernels.host.process), for everything that needs torch, Triton or
  Numba, so this process never imports them (their import holds the GIL for seconds). Its jobs are
  module-level functions, or `functools.partial` of one, with picklable arguments.

`Debouncer` coalesces bursts of slider moves; `PlaybackClock` drives the animation (and
`gui.redraw.StagedRedraw` spreads a view's redraw over event-loop turns). Every runner
registers itself in `_LIVE_RUNNERS` so tests can assert none is left running, and so that every
live one is shut down when the application quits or the process exits without closing the window
(an exception, `app.quit()`): Qt aborts the process if a running `QThread` is destroyed.
"""

from __future__ import annotations

import atexit
import pickle
import threading
import time
import weakref
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from PySide6.QtCore import QCoreApplication, QObject, Qt, QThread, QTimer, Signal, Slot

from kernels.host.process import HostProcess, TaskContext, TaskOutcome, run_job

__all__ = ["Debouncer", "HostRunner", "PlaybackClock", "TaskContext", "TaskOutcome", "TaskRunner",
           "live_runners", "shutdown_all_runners", "single_shot"]

_LIVE_RUNNERS: weakref.WeakSet = weakref.WeakSet()
_QUIT_HOOKED: weakref.WeakSet = weakref.WeakSet()  # the applications whose aboutToQuit is connected


def live_runners() -> list:
    """Runners whose thread or host process is still running (tests assert this is empty after each test)."""
    return [r for r in list(_LIVE_RUNNERS) if r.is_running()]


def shutdown_all_runners() -> None:
    """Shut down every runner still running. Connected to aboutToQuit and run at exit."""
    for runner in live_runners():
        try:
            runner.shutdown()
        except RuntimeError:  # its C++ object is already gone, and its thread with it
            pass


def _register(runner) -> None:
    _LIVE_RUNNERS.add(runner)
    app = QCoreApplication.instance()
    if app is not None and app not in _QUIT_HOOKED:
        app.aboutToQuit.connect(shutdown_all_runners)
        _QUIT_HOOKED.add(app)


atexit.register(shutdown_all_runners)  # after PySide's own exit handler is registered: runs first


class _Worker(QObject):
    progressed = Signal(int, int, int, str)
    done = Signal(object)

    @Slot(object)
    def run_job(self, job) -> None:
        job_id, name, fn, cancel = job
        self.done.emit(run_job(job_id, name, fn, cancel, self.progressed.emit))


class TaskRunner(QObject):
    """One worker thread running one job at a time; the newest pending job replaces older ones
    (with `keep_all`, every job waits its turn: each file the user opens is read).

    Signals (all delivered on the GUI thread):
      started(job_id, name), progress(job_id, done, total, label), finished(TaskOutcome).
    """

    started = Signal(int, str)
    progress = Signal(int, int, int, str)
    finished = Signal(object)
    _submit = Signal(object)

    def __init__(self, name: str, parent: QObject | None = None, keep_all: bool = False) -> None:
        super().__init__(parent)
        self.name, self.keep_all = name, keep_all
        self._thread = QThread()
        self._thread.setObjectName(f"warpscope-{name}")
        self._worker = _Worker()
        self._worker.moveToThread(self._thread)
        self._submit.connect(self._worker.run_job, Qt.ConnectionType.QueuedConnection)
        self._worker.progressed.connect(
            self._on_worker_progress, Qt.ConnectionType.QueuedConnection
        )
        self._worker.done.connect(self._on_worker_done, Qt.ConnectionType.QueuedConnection)
        self._thread.start()
        self._next_id = 0
        self._running: tuple | None = None
        self._pending: deque[tuple] = deque()
        self._closed = False
        _register(self)

    # -- public -----------------------------------------------------------------------------------
    def submit(self, fn: Callable[[TaskContext], Any], name: str = "") -> int:
        """Queue `fn(ctx)`; if a job is running, this one waits (replacing any waiting one)."""
        if self._closed:
            raise RuntimeError(f"runner {self.name} is shut down")
        self._next_id += 1
        job = (self._next_id, name or self.name, fn, threading.Event())
        if self._running is None:
            self._start(job)
        else:
            if not self.keep_all:
                self._pending.clear()
            self._pending.append(job)
        return job[0]

    def cancel(self, job_id: int | None = None) -> None:
        """Ask the running job to stop (it polls ctx.cancelled()) and drop the waiting one; with
        `job_id`, only that job."""
        for job in [j for j in self._pending if job_id in (None, j[0])]:
            self._pending.remove(job)
        if self._running is not None and job_id in (None, self._running[0]):
            self._running[3].set()

    def busy(self) -> bool:
        return self._running is not None

    def is_running(self) -> bool:
        return self._thread.isRunning()

    @property
    def closed(self) -> bool:
        """Shut down: it takes no more jobs."""
        return self._closed

    def shutdown(self, timeout_ms: int = 10000) -> bool:
        """Cancel, stop the thread and wait for it. Safe to call twice."""
        self._closed = True
        self.cancel()
        self._thread.quit()
        ok = self._thread.wait(timeout_ms)
        return bool(ok)

    # -- internals --------------------------------------------------------------------------------
    def _start(self, job: tuple) -> None:
        self._running = job
        self.started.emit(job[0], job[1])
        self._submit.emit(job)

    @Slot(int, int, int, str)
    def _on_worker_progress(self, job_id: int, done: int, total: int, label: str) -> None:
        self.progress.emit(job_id, done, total, label)

    @Slot(object)
    def _on_worker_done(self, outcome: TaskOutcome) -> None:
        self._running = None
        pending = self._pending.popleft() if self._pending else None
        self.finished.emit(outcome)
        if pending is not None and not self._closed:
            self._start(pending)


@dataclass(eq=False)
class _HostJob:
    job_id: int
    name: str
    payload: bytes
    timeout_s: float | None
    t0: float = field(default_factory=time.perf_counter)
    cancelling: bool = False


class HostRunner(QObject):
    """Runs jobs in the kernel host process (kernels.host.process), one at a time, in the order given.

    Same calls and signals as TaskRunner, plus `host_changed(state)`: "starting", "ready" or
    "stopped: <why>". The host starts with the first job. Cancel asks the job to stop; a job that
    has not stopped `cancel_grace_s` later, or runs past the `timeout_s` it was submitted with, has
    its host killed. A host that dies fails its running job with one line saying why, and the next
    job starts a fresh one: never a frozen window.
    """

    started = Signal(int, str)
    progress = Signal(int, int, int, str)
    finished = Signal(object)
    host_changed = Signal(str)
    _inbox = Signal(object)

    def __init__(self, name: str = "kernels", parent: QObject | None = None,
                 cancel_grace_s: float = 5.0) -> None:
        super().__init__(parent)
        self.name, self.cancel_grace_s = name, cancel_grace_s
        self._inbox.connect(self._on_inbox, Qt.ConnectionType.QueuedConnection)
        self._host: HostProcess | None = None
        self._generation = 0  # messages of a host we already let go are ignored
        self._queue: deque[_HostJob] = deque()
        self._running: _HostJob | None = None
        self._watchdog = QTimer(self)
        self._watchdog.setSingleShot(True)
        self._watchdog.timeout.connect(self._on_watchdog)
        self._watch_reason = ""
        self._next_id = 0
        self._closed = False
        _register(self)

    # -- public -----------------------------------------------------------------------------------
    def submit(self, fn: Callable[[TaskContext], Any], name: str = "",
               timeout_s: float | None = None) -> int:
        """Queue `fn(ctx)` to run in the host. TypeError at once if `fn` cannot be sent there."""
        if self._closed:
            raise RuntimeError(f"runner {self.name} is shut down")
        name = name or self.name
        try:
            payload = pickle.dumps(fn, protocol=pickle.HIGHEST_PROTOCOL)
        except (pickle.PicklingError, TypeError, AttributeError) as exc:
            raise TypeError(f"{name}: the kernel host runs module-level functions (or "
                            f"functools.partial of one) with picklable arguments ({exc})") from None
        self._next_id += 1
        self._queue.append(_HostJob(self._next_id, name, payload, timeout_s))
        QTimer.singleShot(0, self, self._pump)  # the caller learns the job id before any signal about it
        return self._next_id

    def cancel(self, job_id: int | None = None) -> None:
        """Drop waiting jobs and ask the running one to stop (all of them, or only `job_id`)."""
        for job in [j for j in self._queue if job_id in (None, j.job_id)]:
            self._queue.remove(job)
            self.finished.emit(TaskOutcome(job.job_id, job.name, False, True, None,
                                           "cancelled before it started", 0.0))
        run = self._running
        if run is not None and job_id in (None, run.job_id) and not run.cancelling:
            run.cancelling = True
            if self._host is not None:
                self._host.send("cancel", run.job_id)
            self._arm(self.cancel_grace_s, f"{run.name} did not stop within "
                                           f"{self.cancel_grace_s:g} s of Cancel")

    def busy(self) -> bool:
        return self._running is not None or bool(self._queue)

    def is_running(self) -> bool:
        host = self._host
        return host is not None and (host.alive() or host.threads_alive())

    @property
    def host_pid(self) -> int | None:
        return self._host.pid if self._host is not None else None

    @property
    def closed(self) -> bool:
        """Shut down: it takes no more jobs."""
        return self._closed

    def shutdown(self, timeout_ms: int = 1000) -> bool:
        """Drop waiting jobs, stop the host (politely for `timeout_ms`, then by force). Safe to call
        twice."""
        self._closed = True
        self._queue.clear()
        self._watchdog.stop()
        host, self._host = self._host, None
        if host is not None:
            host.stop(timeout_ms / 1000)
        return True

    # -- internals --------------------------------------------------------------------------------
    def _pump(self) -> None:
        if self._running is not None or not self._queue or self._closed:
            return
        job = self._queue.popleft()
        self._running = job
        if self._host is None:
            self._generation += 1
            gen = self._generation
            try:
                self._host = HostProcess(lambda msg: self._inbox.emit((gen, msg)),
                                         lambda why: self._inbox.emit((gen, ("exit", why))),
                                         label=f"{self.name} host")
            except OSError as exc:
                self.host_changed.emit(f"stopped: {exc}")
                self._fail_running(f"the kernel host could not start: {exc}")
                return
            self.host_changed.emit("starting")
        job.t0 = time.perf_counter()
        self.started.emit(job.job_id, job.name)
        self._host.send("run", job.job_id, job.name, job.payload)  # a dead host reports its exit
        if job.timeout_s:
            self._arm(job.timeout_s, f"{job.name} did not finish within {job.timeout_s:g} s")

    def _arm(self, seconds: float, reason: str) -> None:
        self._watch_reason = reason
        self._watchdog.start(int(seconds * 1000))

    def _finish(self, outcome: TaskOutcome) -> None:
        self._watchdog.stop()
        self._running = None
        self.finished.emit(outcome)
        self._pump()

    def _fail_running(self, error: str) -> None:
        run = self._running
        if run is not None:
            self._finish(TaskOutcome(run.job_id, run.name, False, run.cancelling, None, error,
                                     time.perf_counter() - run.t0))

    @Slot(object)
    def _on_inbox(self, item: tuple) -> None:
        gen, msg = item
        if gen != self._generation or self._host is None:
            return
        run, kind = self._running, msg[0]
        if kind == "ready":
            self.host_changed.emit("ready")
        elif kind == "progress" and run is not None and msg[1] == run.job_id:
            self.progress.emit(*msg[1:])
        elif kind == "done" and run is not None and msg[1].job_id == run.job_id:
            self._finish(msg[1])
        elif kind == "undecodable":  # the host lives on; its late answer for this job is ignored
            self._fail_running(msg[1])
        elif kind == "exit":
            host, self._host = self._host, None
            host.kill(wait_s=0)  # whatever it started dies with it; its readers end on their own
            self.host_changed.emit(f"stopped: {msg[1]}")
            what = f" during {run.name}" if run is not None else ""
            self._fail_running(f"the kernel host stopped ({msg[1]}){what}; the next job starts it again")

    @Slot()
    def _on_watchdog(self) -> None:
        host, self._host = self._host, None
        if host is not None:
            host.kill(wait_s=0)
        self.host_changed.emit(f"stopped: {self._watch_reason}")
        self._fail_running(f"{self._watch_reason}; the kernel host was stopped "
                           "(the next job starts a fresh one)")


class Debouncer(QObject):
    """Calls `fn` once, `delay_ms` after the last `poke()`."""

    def __init__(self, fn: Callable[[], None], delay_ms: int = 40, parent: QObject | None = None):
        super().__init__(parent)
        self._fn = fn
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(delay_ms)
        self._timer.timeout.connect(self._on_timeout)

    def poke(self) -> None:
        self._timer.start()

    def flush(self) -> None:
        """Run now if a call is waiting."""
        if self._timer.isActive():
            self._timer.stop()
            self._fn()

    def pending(self) -> bool:
        return self._timer.isActive()

    def cancel(self) -> None:
        """Drop a waiting call."""
        self._timer.stop()

    @Slot()
    def _on_timeout(self) -> None:
        self._fn()


class PlaybackClock(QObject):
    """Wall-clock driven animation time: emits `tick(dt_seconds)` about 60 times a second."""

    tick = Signal(float)

    def __init__(self, interval_ms: int = 16, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._timer = QTimer(self)
        self._timer.setTimerType(Qt.TimerType.PreciseTimer)
        self._timer.setInterval(interval_ms)
        self._timer.timeout.connect(self._on_timeout)
        self._last = 0.0

    def start(self) -> None:
        self._last = time.perf_counter()
        self._timer.start()

    def stop(self) -> None:
        self._timer.stop()

    def is_active(self) -> bool:
        return self._timer.isActive()

    def set_interval(self, ms: int) -> None:
        self._timer.setInterval(ms)

    @Slot()
    def _on_timeout(self) -> None:
        now = time.perf_counter()
        dt, self._last = now - self._last, now
        self.tick.emit(min(dt, 0.25))


def single_shot(ms: int, fn: Callable[[], None], parent: QObject) -> QTimer:
    """A one-off call on the GUI thread after `ms` (kept by `parent` so it dies with it)."""
    t = QTimer(parent)
    t.setSingleShot(True)
    t.timeout.connect(fn)
    t.start(ms)
    return t


class SimulationJobs(QObject):
    """The SimulationModel's runs, off the GUI thread: a burst of `wanted` (a slider dragged)
    becomes one job on `runner`, `delay_ms` after the last, the newest winning; the run, or its
    one line, goes back to the model. `on_submitted()` and `on_failed(line)` tell the window
    (its status bar)."""

    def __init__(self, simulation, runner, delay_ms: int, parent: QObject | None = None,
                 on_submitted: Callable[[], None] | None = None,
                 on_failed: Callable[[str], None] | None = None) -> None:
        super().__init__(parent)
        self.simulation, self.runner = simulation, runner
        self._submitted = on_submitted or (lambda: None)
        self._failed = on_failed or (lambda _line: None)
        self.debounce = Debouncer(self.request, delay_ms, self)
        simulation.wanted.connect(self.debounce.poke)
        runner.finished.connect(self._on_finished)

    def request(self) -> None:
        """Simulate the current launch in the worker (latest request wins)."""
        job = self.simulation.job()
        if job is not None:
            self.runner.submit(job, "simulate")
            self._submitted()

    def run_now(self):
        """The run made on this thread (headless export, screenshots, tests); the debounced job
        for the same launch is not made as well."""
        self.debounce.cancel()
        return self.simulation.run_now()

    def _on_finished(self, outcome: TaskOutcome) -> None:
        if outcome.ok:
            self.simulation.accept(outcome.result)
            return
        line = f"Simulation failed: {outcome.error}"
        self._failed(line)
        self.simulation.fail(line)
