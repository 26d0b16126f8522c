"""Where the animation is: a time in the simulated launch, playing or not, a speed, and the frame.

The model follows the simulation: a new run keeps the same relative position in time (or starts
inside the first waves), and `frame` is the timeline's state at the current time, which the SM
view draws. A clock (gui.adapter.PlaybackClock) calls `advance`; nothing here knows about Qt.
"""

from __future__ import annotations

import math

import numpy as np
from psygnal import Signal

from gui.models.simulation import SimRun, SimulationModel
from sim.schedule.timeline import Frame

SPEEDS = (0.125, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0)
START_FRACTION = 0.4  # where a first simulation is shown: inside a busy wave, not at t = 0


def wave_starts_us(tl) -> np.ndarray:
    """When each wave of the drawn part begins, waves counted as the Geometry panel counts them
    (the grid in waves of `capacity` blocks, sim.rules.geometry.waves_of): a wave begins as its
    first block starts, in the order blocks start."""
    starts = np.sort(np.asarray(tl.start_us, dtype=float))
    cap = max(int(tl.capacity), 1)
    return starts[np.arange((-tl.first_block) % cap, len(starts), cap)]


def wave_number(tl, queued: int) -> int:
    """The wave the grid's blocks are starting in with `queued` still to start (1-based, the
    waves left out before the drawn part counted), never past the last, partial, wave:
    "wave 4 of 3.70", as Geometry counts them."""
    cap = max(int(tl.capacity), 1)
    started = tl.grid_blocks - queued
    return min(max(1, math.ceil(started / cap)), max(1, math.ceil(tl.grid_blocks / cap)))


def telling_time_us(tl, fraction: float = START_FRACTION) -> float:
    """A moment that teaches: the middle of the wave running at `fraction` of the launch (busy
    SMs, not its first instant nor its all-grey end)."""
    t = fraction * tl.makespan_us
    starts = wave_starts_us(tl)
    if len(starts) == 0:
        return t
    i = max(0, int(np.searchsorted(starts, t, side="right")) - 1)
    nxt = starts[i + 1] if i + 1 < len(starts) else tl.makespan_us
    return float((starts[i] + nxt) / 2)


class PlaybackModel:
    """`speed` 1.0 plays the whole launch in `base_seconds` of wall time. Signals:
    `time_changed(t_us)`, `playing_changed(bool)`, `speed_changed(float)`."""

    time_changed = Signal(float)
    playing_changed = Signal(bool)
    speed_changed = Signal(float)

    def __init__(self, simulation: SimulationModel | None = None, base_seconds: float = 8.0) -> None:
        self.base_seconds = base_seconds
        # at the end it stops (the clock with it) and rests on a busy wave, not an all-grey GPU
        # (no animation left running when idle); Simulation ▸ Loop repeats instead
        self.loop = False
        self._rest: float | None = None  # the moment it came to rest at, once played through
        self.play_when_ready = False  # start playing when the first run arrives
        self._time = 0.0
        self._end = 0.0
        self._playing = False
        self._speed = 1.0
        self._run: SimRun | None = None
        self._frame: Frame | None = None
        if simulation is not None:
            simulation.changed.connect(self._on_run_changed)

    # -- reading ------------------------------------------------------------------------------
    @property
    def time_us(self) -> float:
        return self._time

    @property
    def end_us(self) -> float:
        return self._end

    @property
    def playing(self) -> bool:
        return self._playing

    @property
    def speed(self) -> float:
        return self._speed

    @property
    def frame(self) -> Frame | None:
        """The launch at the current time (None without a run)."""
        if self._run is None:
            return None
        if self._frame is None or self._frame.time_us != self._time:
            self._frame = self._run.timeline.frame(self._time)
        return self._frame

    # -- changing -----------------------------------------------------------------------------
    def _on_run_changed(self, run: SimRun | None, _message: str) -> None:
        old, self._run, self._frame, self._rest = self._run, run, None, None
        if run is None:
            self.set_playing(False)
            self.set_end(0.0)
            return
        fraction = self._time / old.makespan_us if old is not None and old.makespan_us else START_FRACTION
        self.set_end(run.makespan_us)
        self.set_time(fraction * run.makespan_us)
        if self.play_when_ready:
            self.play_when_ready = False
            self.set_playing(True)

    def set_end(self, end_us: float) -> None:
        self._end = max(0.0, float(end_us))
        if self._time > self._end:
            self.set_time(self._end)

    def set_time(self, t_us: float) -> None:
        t = min(max(0.0, float(t_us)), self._end)
        if t != self._time:
            self._time = t
            self.time_changed.emit(t)

    def set_playing(self, playing: bool) -> None:
        playing = bool(playing) and self._end > 0
        if playing != self._playing:
            if playing and (self._time >= self._end or self._time == self._rest):
                self.set_time(0.0)  # played through: Play shows it again from the start
            self._playing = playing
            self.playing_changed.emit(playing)

    def toggle(self) -> None:
        self.set_playing(not self._playing)

    def set_speed(self, speed: float) -> None:
        try:
            speed = float(speed)
        except (TypeError, ValueError):
            return
        if not math.isfinite(speed):
            return  # e.g. 'nan' in a damaged settings file: max(0.05, nan) made it 0.05
        speed = min(max(0.05, speed), 64.0)
        if speed != self._speed:
            self._speed = speed
            self.speed_changed.emit(speed)

    def faster(self, direction: int) -> None:
        """One step along SPEEDS (+1 faster, -1 slower)."""
        idx = min(range(len(SPEEDS)), key=lambda i: abs(SPEEDS[i] - self._speed))
        self.set_speed(SPEEDS[max(0, min(len(SPEEDS) - 1, idx + direction))])

    def advance(self, wall_seconds: float) -> None:
        """Move time forward by `wall_seconds` of playback (called by the clock)."""
        if not self._playing or self._end <= 0:
            return
        t = self._time + wall_seconds * self._speed * self._end / self.base_seconds
        if t >= self._end:
            if not self.loop:
                self.set_playing(False)
                self.set_time(telling_time_us(self._run.timeline) if self._run else self._end)
                self._rest = self._time
                return
            t = 0.0 if self._time >= self._end else self._end
        self.set_time(t)

    def step(self, direction: int) -> None:
        """Pause and jump to the next (+1) or previous (-1) wave's first arrival, the tail's
        start or the launch's end: a step that shows something change (the next block event
        is often under 0.01 µs away)."""
        if self._run is None:
            return
        self.set_playing(False)
        tl = self._run.timeline
        events = np.unique(np.r_[0.0, wave_starts_us(tl), tl.tail_start_us, self._end])
        if direction > 0:
            i = int(np.searchsorted(events, self._time, side="right"))
            target = events[i] if i < len(events) else self._end
        else:
            i = int(np.searchsorted(events, self._time, side="left")) - 1
            target = events[i] if i >= 0 else 0.0
        self.set_time(float(target))

    def pick(self, t_us: float) -> None:
        """The user chose a moment (timeline cursor, scrubber): pause there."""
        self.set_playing(False)
        self._rest = None
        self.set_time(t_us)
