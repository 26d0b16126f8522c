"""The one module that owns timers and worker threads.

Views never start threads or timers themselves. Work that may take long (a simulation of a big
grid, a bandwidth sweep, loading torch) is a plain function; a `TaskRunner` runs it on its own
`QThread` and hands the result back to the GUI thread as an immutable record through a queued
signal. `Debouncer` coalesces bursts of slider moves; `PlaybackClock` drives the animation.

Every runner registers itself in `_LIVE_RUNNERS` so tests can assert none is left running.
"""

from __future__ import annotations

import threading
import time
import traceback
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QObject, Qt, QThread, QTimer, Signal, Slot

from sim.errors import UserError  # a message for the user, shown without its class name

_LIVE_RUNNERS: weakref.WeakSet[TaskRunner] = weakref.WeakSet()


def live_runners() -> list[TaskRunner]:
    """Runners whose thread is still running (tests assert this is empty after each test)."""
    return [r for r in list(_LIVE_RUNNERS) if r.is_running()]


@dataclass(frozen=True, slots=True)
class TaskContext:
    """What a task function gets: report progress, ask whether it should stop."""

    job_id: int
    _cancel: threading.Event
    _progress: Callable[[int, int, int, str], None]

    def progress(self, done: int, total: int, label: str = "") -> None:
        self._progress(self.job_id, int(done), int(total), str(label))

    def cancelled(self) -> bool:
        return self._cancel.is_set()


@dataclass(frozen=True, slots=True)
class TaskOutcome:
    """Immutable record a runner emits when a job ends."""

    job_id: int
    name: str
    ok: bool
    cancelled: bool
    result: Any
    error: str
    elapsed_s: float
    traceback: str = ""


class _Worker(QObject):
    progressed = Signal(int, int, int, str)
    done = Signal(object)

    @Slot(object)
    def run_job(self, job) -> None:
        job_id, name, fn, cancel = job
        t0 = time.perf_counter()
        ctx = TaskContext(job_id, cancel, self.progressed.emit)
        try:
            result = fn(ctx)
            outcome = TaskOutcome(
                job_id, name, True, cancel.is_set(), result, "", time.perf_counter() - t0
            )
        except Exception as exc:  # reported to the GUI, never raised into Qt's event loop
            msg = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            outcome = TaskOutcome(
                job_id,
                name,
                False,
                cancel.is_set(),
                None,
                msg if isinstance(exc, UserError) else f"{type(exc).__name__}: {msg}",
                time.perf_counter() - t0,
                traceback.format_exc(),
            )
        self.done.emit(outcome)


class TaskRunner(QObject):
    """One worker thread running one job at a time; the newest pending job replaces older ones.

    Signals (all delivered on the GUI thread):
      started(job_id, name), progress(job_id, done, total, label), finished(TaskOutcome).
    """

    started = Signal(int, str)
    progress = Signal(int, int, int, str)
    finished = Signal(object)
    _submit = Signal(object)

    def __init__(self, name: str, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.name = name
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
        self._pending: tuple | None = None
        self._closed = False
        _LIVE_RUNNERS.add(self)

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
            self._pending = job
        return job[0]

    def cancel(self) -> None:
        """Ask the running job to stop (it polls ctx.cancelled()) and drop the waiting one."""
        self._pending = None
        if self._running is not None:
            self._running[3].set()

    def busy(self) -> bool:
        return self._running is not None

    def is_running(self) -> bool:
        return self._thread.isRunning()

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
        pending, self._pending = self._pending, None
        self.finished.emit(outcome)
        if pending is not None and not self._closed:
            self._start(pending)


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
