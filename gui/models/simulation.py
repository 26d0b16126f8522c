"""How the launch is simulated, and the simulation being shown.

`SimulationOptions` holds the cost model, placement, schedule (the GPU's calibrated dispatch model
or the ideal textbook) and what the warps of a uniform block do (ids from sim.schedule.policies).
`SimulationModel` follows the launch and the options: it says when a new run is `wanted`, hands
out the job that makes it (`job()`: a plain function the window runs in a worker thread), and
keeps the newest finished `SimRun`, dropping stale ones. Everything the views draw comes from the
run's `sim.schedule.timeline.Timeline`; the run also holds the other schedule's timeline, so the residency
curve can show both.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from psygnal import Signal

from gui.models.launch import LaunchModel, LaunchState
from sim.rules.devices import GpuSpec
from sim.inputs.errors import UserError
from sim.rules.occupancy import Occupancy
from sim.schedule.dispatch_profile import WAITS, profile_for
from sim.model.launch_model import LaunchPrediction, launch_of, predict_launch
from sim.schedule.policies import (COST_MODELS, PLACEMENTS, SCHEDULES, SIMULATED_PLACEMENTS, WAIT_TITLES,
                          cost_model_id, placement_id, schedule_id, wait_id)
from sim.schedule.achieved import Achieved, of_simulation
from sim.schedule.scheduler import Simulation
from sim.schedule.timeline import Timeline



class SimulationOptions:
    """The cost model, placement, schedule and wait, by sim.schedule.policies id. Emits
    `changed(cost, placement)` when any of them changes (read the rest off the options)."""

    changed = Signal(str, str)

    def __init__(self, cost: str = "memory", placement: str = "sm-order",
                 schedule: str = "calibrated", wait: str = "spin") -> None:
        self._cost, self._placement = cost_model_id(cost), placement_id(placement)
        self._schedule, self._wait = schedule_id(schedule), wait_id(wait)

    @property
    def cost(self) -> str:
        return self._cost

    @property
    def placement(self) -> str:
        return self._placement

    @property
    def schedule(self) -> str:
        return self._schedule

    @property
    def wait(self) -> str:
        return self._wait

    @staticmethod
    def schedules() -> list[tuple[str, str]]:
        return [(p.id, p.title) for p in SCHEDULES.values()]

    @staticmethod
    def waits() -> list[tuple[str, str]]:
        return [(w, WAIT_TITLES[w]) for w in WAITS]

    @staticmethod
    def costs() -> list[tuple[str, str]]:
        """(id, title) of every cost model, for a menu."""
        return [(p.id, p.title) for p in COST_MODELS.values()]

    @staticmethod
    def placements() -> list[tuple[str, str]]:
        return [(pid, PLACEMENTS[pid].title) for pid in SIMULATED_PLACEMENTS]

    def set(self, cost: str | None = None, placement: str | None = None,
            schedule: str | None = None, wait: str | None = None) -> None:
        """Ids or any spelling sim.schedule.policies knows (settings saved as 'memory-bound' still load);
        an unknown name is ignored."""
        new = [self._cost, self._placement, self._schedule, self._wait]
        try:
            if cost is not None:
                new[0] = cost_model_id(cost)
            if placement is not None:
                new[1] = placement_id(placement, SIMULATED_PLACEMENTS)
            if schedule is not None:
                new[2] = schedule_id(schedule)
            if wait is not None:
                new[3] = wait_id(wait)
        except UserError:
            return
        if new != [self._cost, self._placement, self._schedule, self._wait]:
            self._cost, self._placement, self._schedule, self._wait = new
            self.changed.emit(new[0], new[1])

    def follow_kernel(self, kernel) -> None:
        """A newly picked kernel brings its own cost model (sim.model.launch_model.default_mode):
        a tiled matmul is compute-bound, so picking one from the Kernel list must not leave the
        Timeline timing its tiles as streams; going back to a stream kernel leaves the compute
        cost for the memory-bound one. Any other choice (uniform spin blocks) stays the user's."""
        from sim.model.launch_model import default_mode

        mode = default_mode(kernel)
        if mode == "compute" and self._cost != "compute":
            self.set(cost="compute")
        elif mode == "memory" and self._cost == "compute":
            self.set(cost="memory")

    def key(self) -> tuple:
        return (self._cost, self._placement, self._schedule, self._wait)


@dataclass(frozen=True)
class SimRun:
    """One finished simulation of a launch, as the views draw it."""

    key: tuple  # what it was made for: (inputs, spec, cost, placement, schedule, wait)
    spec: GpuSpec
    occ: Occupancy
    cost: str  # sim.schedule.policies id
    placement: str
    prediction: LaunchPrediction = field(repr=False)  # sim.model.launch_model's answer for this launch
    elapsed_s: float = 0.0
    schedule: str = "calibrated"  # sim.schedule.policies SCHEDULES id
    wait: str = "spin"
    profile_label: str = ""  # the dispatch profile the calibrated schedule used
    other: Simulation | None = field(default=None, repr=False)  # the other schedule, same launch
    block_dims: tuple = ()  # the block's x, y, z (how its threads fold into the warps drawn)
    achieved: Achieved | None = None  # achieved beside theoretical occupancy (sim.schedule.achieved)

    @property
    def simulation(self) -> Simulation:
        return self.prediction.simulation

    @property
    def timeline(self) -> Timeline:
        return self.simulation.timeline

    @property
    def other_schedule(self) -> str:
        return "ideal" if self.schedule == "calibrated" else "calibrated"

    @property
    def schedule_label(self) -> str:
        """'calibrated on NVIDIA H200, <date>' or 'ideal (textbook)'."""
        return self.profile_label if self.schedule == "calibrated" else SCHEDULES["ideal"].title

    @property
    def makespan_us(self) -> float:
        return self.timeline.makespan_us

    @property
    def wave_starts_us(self):
        return self.timeline.wave_starts_us

    @property
    def full_warps(self) -> int:
        """Warps resident when every block slot of every SM is busy."""
        return self.timeline.capacity * self.occ.warps_per_block

    def summary(self) -> dict:
        tl = self.timeline
        return {
            "cost_model": self.cost, "placement": self.placement, "schedule": self.schedule,
            "dispatch_profile": self.profile_label if self.schedule == "calibrated" else None,
            "wait": self.wait if self.cost == "uniform" else None,
            "blocks_in_grid": tl.grid_blocks, "blocks_simulated": tl.n_blocks,
            "identical_full_waves_not_simulated": tl.skipped_waves,
            "makespan_us_simulated_part": round(tl.makespan_us, 4),
            "waves": tl.waves + tl.skipped_waves,
            "steady_resident_blocks": tl.steady_blocks,
            "tail_fraction": round(tl.tail_fraction, 4),
            "tail_start_us": round(tl.tail_start_us, 4),
            "slots_per_sm": tl.lanes,
            "whole_launch_us": round(self.prediction.whole_launch_us, 4),
            "parts_us": {k: round(v, 4) for k, v in self.prediction.parts().items()},
            "achieved": self.achieved.to_dict() if self.achieved is not None else None,
        }


def run_simulation(state: LaunchState, cost: str, placement: str, key: tuple = (),
                   schedule: str = "calibrated", wait: str = "spin", other: bool = True) -> SimRun:
    """The launch model's answer for the launch (a worker thread may call this), its timeline
    worked out there, so the GUI thread only draws. `other`: also the other schedule (for the
    residency curve)."""
    t0 = time.perf_counter()
    if not state.ok:
        raise UserError(state.message() or "this launch cannot run")
    work = state.work.build() if cost_model_id(cost) == "compute" and state.work is not None \
        else None
    launch = launch_of(state.occ, state.geometry, bytes_moved=state.bytes_moved, wait=wait,
                       loads=state.loads, chain=state.chain,
                       work=work, flops=float(work.flops.sum()) if work is not None else 0.0)
    profile = profile_for(state.spec.name)

    def run(mode):
        return predict_launch(state.spec, launch, cost_model_id(cost), placement=placement,
                              schedule=mode)

    prediction = run(schedule)
    prediction.timeline.prepare()
    alt = None
    if other:
        alt = run("ideal" if schedule == "calibrated" else "calibrated").simulation
        alt.timeline.residency  # noqa: B018 - worked out here, drawn on the GUI thread
    achieved = of_simulation(prediction.simulation, state.occ)
    return SimRun(key, state.spec, state.occ, cost, placement, prediction,
                  time.perf_counter() - t0, schedule, wait, profile.label, alt,
                  state.geometry.block_dims, achieved)


class SimulationModel:
    """The simulated launch being shown. Signals:

    - `changed(run_or_None, message)`: a new run to draw, or none and why not;
    - `wanted()`: the launch or the options changed, so a new run should be made (`job()`).
    """

    changed = Signal(object, str)
    wanted = Signal()

    def __init__(self, launch: LaunchModel, options: SimulationOptions) -> None:
        self.launch, self.options = launch, options
        self._run: SimRun | None = None
        self._message = launch.state.message() or "Simulating…"
        launch.changed.connect(self._on_launch_changed)
        options.changed.connect(self._on_options_changed)

    @property
    def run(self) -> SimRun | None:
        return self._run

    @property
    def message(self) -> str:
        return self._message

    def key(self) -> tuple:
        st = self.launch.state
        return (st.inputs, st.spec, *self.options.key())

    def is_current(self) -> bool:
        return self._run is not None and self._run.key == self.key()

    def job(self) -> Callable | None:
        """A function `(ctx) -> SimRun` for the current launch and options, or None when the run
        shown is current or the launch cannot run."""
        state = self.launch.state
        if not state.ok or self.is_current():
            return None
        key, o = self.key(), self.options
        cost, placement, schedule, wait = o.cost, o.placement, o.schedule, o.wait
        return lambda ctx=None: run_simulation(state, cost, placement, key, schedule=schedule,
                                               wait=wait)

    def run_now(self) -> SimRun | None:
        """Simulate on this thread (headless export, screenshots, tests)."""
        job = self.job()
        if job is not None:
            self.accept(job())
        return self._run if self.is_current() else None

    def accept(self, run: SimRun) -> bool:
        """A finished run; dropped (False) if the launch or options changed since it started,
        or if the run shown is already one of this launch (made here while the worker ran)."""
        if run.key != self.key() or self.is_current():
            return False
        self._run, self._message = run, ""
        self.changed.emit(run, "")
        return True

    def fail(self, message: str) -> None:
        """No simulation to show, and why (the launch cannot run, or simulating failed)."""
        self._run, self._message = None, message
        self.changed.emit(None, message)

    def _on_launch_changed(self, state: LaunchState) -> None:
        msg = state.message()
        if msg:
            self.fail(msg)
        else:
            self.wanted.emit()

    def _on_options_changed(self, _cost: str, _placement: str) -> None:
        self.wanted.emit()
