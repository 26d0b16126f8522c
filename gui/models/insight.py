"""What the latency model and the verdicts say about the launch being looked at.

`InsightModel` follows the LaunchModel: the launch model's whole-launch prediction
(sim.model.launch_model, at the GPU's achievable bandwidth from resources/physics: the same call
`explain` makes), the steady state of its memory-bound block cost (sim.model.latency.predict_loaded),
the curves of the latency-hiding view, one SM's warps over time (sim.schedule.warps) and the ranked verdicts
(sim.model.advice.launch_findings). The measured forced-occupancy sweep of a latency run (the H200's
is checked in) is laid beside the prediction when it was measured on this GPU. Views only draw
what this says. No Qt here.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
from psygnal import Signal

from gui.models.launch import LaunchModel, LaunchState
from sim.model.advice import Finding, launch_findings
from sim.rules.devices import GpuSpec
from sim.model.confidence import Confidence, prediction_confidence
from sim.inputs.errors import UserError
from sim.model.latency import BlockTrip, LoadedPrediction, bandwidth_at_occupancy, predict_loaded
from sim.model.launch_model import (Launch, LaunchPrediction, achievable_gbps, block_trip_of,
                                    default_mode, predict_geometry, predict_launch)
from sim.model.speed_of_light import SpeedOfLight
from sim.rules.physics import physics_for, same_gpu
from sim.traces.latency_data import CHECKED_IN, LatencyRun, load_latency_run
from sim.schedule.policies import COST_MODELS
from sim.inputs.units import fmt_us
from sim.schedule.warps import WarpActivity, sm_activity

WINDOWS_NS = (2000.0, 5000.0, 10000.0)


@dataclass(frozen=True)
class Curve:
    """A line of the latency plots: GB/s against blocks per SM (and KiB in flight per SM)."""

    label: str
    blocks_per_sm: np.ndarray
    kib_in_flight: np.ndarray
    gbps: np.ndarray
    kind: str  # "loaded" (the model), "little" (unloaded Little's law), "measured"
    gbps_p20: np.ndarray | None = None
    gbps_p80: np.ndarray | None = None


class InsightModel:
    """Signals: `changed()` after the launch, the ceiling or the measured data changed;
    `sm_changed()` when the SM or the window of the warp view changed."""

    changed = Signal()
    sm_changed = Signal()

    def __init__(self, launch: LaunchModel, measured: str | Path | None = CHECKED_IN):
        self.launch = launch
        self._measured: LatencyRun | None = None
        self.measured_error = ""
        if measured is not None:
            try:
                self._measured = load_latency_run(measured)
            except UserError as exc:
                self.measured_error = str(exc)
        self._sm = 0
        self._window_ns = WINDOWS_NS[0]
        self._activity: tuple | None = None
        self._curves: list | None = None  # of this launch and run (the latency view redraws often)
        self._measured_of: tuple | None = None  # (GPU, run, curves): they follow no slider
        self._of: LaunchState | None = None  # the launch state the fields below were derived for
        launch.changed.connect(self._on_launch_changed)

    # -- reading ---------------------------------------------------------------------------------
    @property
    def state(self) -> LaunchState:
        return self.launch.state

    @property
    def gpu(self) -> GpuSpec:
        return self.state.spec

    @property
    def prediction(self) -> LoadedPrediction | None:
        """The steady state at the launch's blocks per SM (the latency view's point)."""
        return self._derived()._prediction

    @property
    def launch_prediction(self) -> LaunchPrediction | None:
        """The launch model's answer for the whole launch, memory-bound: what every surface shows."""
        return self._derived()._launch

    @property
    def confidence(self) -> Confidence | None:
        """How far to trust the whole-launch prediction (sim.model.confidence), None without one."""
        launch = self.launch_prediction
        return None if launch is None else prediction_confidence(self.gpu, launch)

    @property
    def trip(self) -> BlockTrip | None:
        return self._derived()._trip

    @property
    def basis(self) -> str:
        return self._derived()._basis

    @property
    def findings(self) -> list[Finding]:
        return self._derived()._findings

    @property
    def ceiling(self) -> tuple[float, str]:
        """(GB/s, where it comes from) of the bandwidth a full GPU reaches."""
        return self._derived()._ceiling

    @property
    def measured(self) -> LatencyRun | None:
        return self._measured

    @property
    def measured_here(self) -> bool:
        """The latency run was measured on the launch's GPU (same name and SM count)."""
        run = self._measured
        return run is not None and same_gpu(run.device_name, self.gpu)

    @property
    def sm(self) -> int:
        return self._derived()._sm

    @property
    def window_ns(self) -> float:
        return self._window_ns

    def blocks_on_sm(self, sm: int | None = None) -> int:
        """Resident blocks on SM `sm` in the steady state (0: the grid leaves it empty)."""
        p = self.prediction
        if p is None:
            return 0
        sm = self.sm if sm is None else sm
        return p.blocks_per_sm if sm < p.active_sms else 0

    def activity(self) -> WarpActivity | None:
        """The selected SM's warps over the window (None: no blocks there or no prediction)."""
        p, trip = self.prediction, self.trip
        blocks = self.blocks_on_sm()
        if p is None or trip is None or blocks == 0:
            return None
        key = (id(p), blocks, self._window_ns)
        if self._activity is None or self._activity[0] != key:
            on_sm = p if blocks == p.blocks_per_sm else predict_loaded(
                self.gpu, blocks, trip, ceiling_gbps=p.ceiling_gbps)
            self._activity = (key, sm_activity(self.gpu, on_sm, trip, window_ns=self._window_ns))
        return self._activity[1]

    def curves(self) -> list[Curve]:
        """Model curves for this launch's trip over every blocks-per-SM count the SM allows,
        plain Little's law beside them, and the measured sweep when it is this GPU's."""
        if self._curves is None or self._of is not self.state:  # a new launch or run
            self._curves = self._make_curves()
        return self._curves

    def _make_curves(self) -> list[Curve]:
        p, trip = self.prediction, self.trip
        if p is None or trip is None:
            return []
        occ = self.state.occ
        most = max(occ.blocks_per_sm, self.gpu.max_warps_per_sm // occ.warps_per_block, 1)
        blocks = np.arange(1, min(most, self.gpu.max_blocks_per_sm) + 1)
        per_block_kib = occ.warps_per_block * self.gpu.warp_size * \
            trip.load_bytes_in_flight_per_thread / 1024
        ceiling = p.ceiling_gbps
        loaded = np.array([predict_loaded(self.gpu, int(b), trip, ceiling_gbps=ceiling).steady_gbps
                           for b in blocks])
        little = np.array([bandwidth_at_occupancy(self.gpu, int(b), occ.warps_per_block,
                                   trip.load_bytes_in_flight_per_thread / 4, 4,
                                   ceiling_gbps=ceiling,
                                   bytes_moved_per_byte_loaded=trip.bytes_moved_per_byte_loaded
                                   ).bandwidth_gbps for b in blocks])
        out = [Curve("model, this launch", blocks, blocks * per_block_kib, loaded, "loaded"),
               Curve("Little's law, unloaded", blocks, blocks * per_block_kib, little,
                     "little")]
        return out + (self._measured_curves() if self.measured_here else [])

    def _measured_curves(self) -> list[Curve]:
        """The measured sweep's curves, made once per GPU and run (each point is a prediction)."""
        run, gpu = self._measured, self.gpu
        if self._measured_of is None or self._measured_of[1] is not run or self._measured_of[0] != gpu:
            self._measured_of = (gpu, run, self._make_measured_curves())
        return self._measured_of[2]

    def _make_measured_curves(self) -> list[Curve]:
        """The run's sweep at 256 threads and its largest size: naive and fast add, each with
        the loaded model for the same kernel beside it."""
        run = self._measured
        rows = [r for r in run.occupancy if r.round == 1]
        if not rows:
            return []
        size = max(r.elements for r in rows)
        out = []
        for kernel in ("add_numba_naive", "add_numba"):
            mine = sorted((r for r in rows if r.kernel == kernel and r.elements == size
                           and r.threads == 256), key=lambda r: r.blocks_per_sm)
            if not mine:
                continue
            per_thread = mine[0].elements_per_thread
            trip = BlockTrip(256, per_thread)
            b = np.array([r.blocks_per_sm for r in mine])
            kib = b * 8 * 32 * trip.load_bytes_in_flight_per_thread / 1024
            name = "naive add" if per_thread == 1 else f"add, {per_thread}/thread"
            grid = -(-size // (256 * per_thread))
            # the launch model at each forced occupancy: what a timing of the whole launch says
            model = np.array([predict_launch(self.gpu, Launch(grid, 256, int(x),
                                                              size * trip.bytes_per_element, size),
                                             ceiling_gbps=run.copy_ceiling_gbps).bandwidth_gbps
                              for x in b])
            out.append(Curve(f"{name}, measured ({_short(run.device_name)}, 2^{size.bit_length() - 1})", b, kib,
                             np.array([r.gbps for r in mine]), "measured",
                             np.array([r.gbps_p20 for r in mine]),
                             np.array([r.gbps_p80 for r in mine])))
            out.append(Curve(f"{name}, model", b, kib, model, "loaded-measured"))
        return out

    @property
    def speed_of_light(self) -> SpeedOfLight | None:
        """The launch's speed-of-light card (sim.model.speed_of_light): what `explain` prints."""
        p = self.launch_prediction
        return None if p is None else p.speed_of_light()

    def headline(self) -> tuple[str, str] | None:
        """(time, rate) of the whole launch: the one time every surface gives this launch, and
        its rate as an event timing reports it (bytes, or FLOPs, over that time)."""
        p = self.launch_prediction
        if p is None:
            return None
        rate = f"{p.tflops:,.0f} TFLOP/s" if p.mode == "compute" else f"{p.bandwidth_gbps:,.0f} GB/s"
        return fmt_us(p.whole_launch_us), rate

    def phases_text(self) -> str:
        """The whole launch's phases in the model's schedule (they add up to it)."""
        p = self.launch_prediction
        return "" if p is None else (f"{_parts_text(p)} ({p.bound}-bound; the blocks' span "
                                     f"{fmt_us(p.makespan_us)} of it)")

    def sol_lines(self, measured_us: float | None = None, measured_by: str = "bench results") -> list[str]:
        """The speed of light, the launch's share of it, what the gap is made of and, given a
        measured time of this launch (a bench result, or the slider's live launch), its share too."""
        card = self.speed_of_light
        if card is None:
            return []
        gap = card.time_us - card.bound_us
        lines = [f"Speed of light {fmt_us(card.bound_us)}: {card.bound} ({card.floor_text()}); "
                 f"this launch is at {card.percent:.0f}% of it",
                 f"The gap, {fmt_us(gap)}: {card.parts_text(fmt_us)}"]
        if measured_us:
            card = card.with_measured(measured_us)
            lines.append(f"Measured: {fmt_us(measured_us)} ({measured_by}), "
                         f"{card.measured_percent:.0f}% of the speed of light")
        return lines

    def rate_lines(self) -> list[str]:
        """Every rate besides the headline's, each labelled with what it is, on one line."""
        rates = self.other_rates()
        return ["Other rates: " + "; ".join(rates)] if rates else []

    def other_rates(self) -> list[str]:
        """Every rate besides the headline's, each labelled: steady state, ceiling, peak."""
        p = self.launch_prediction
        if p is None:
            return []
        rates = []
        loaded = self.prediction
        if p.mode == "memory" and loaded is not None:
            rates.append(f"steady state {loaded.steady_gbps:,.0f} GB/s (full GPU, between fill and tail)")
        if p.mode == "compute":
            rates.append(f"peak {p.tensor_tflops:,.0f} TFLOP/s (datasheet dense tensor rate)")
        rates.append(f"ceiling {p.ceiling_gbps:,.0f} GB/s (achievable copy bandwidth, "
                     f"{p.ceiling_gbps / self.gpu.peak_dram_gbps:.0%} of peak)")
        rates.append(f"peak {self.gpu.peak_dram_gbps:,.0f} GB/s (rated DRAM)")
        return rates

    def time_lines(self, run=None) -> list[str]:
        """The whole launch's predicted time with its parts (sim.model.launch_model), and what the
        animation's schedule says (the waves it leaves out counted), then the speed of light and
        every other rate, labelled."""
        lines = []
        p = self.launch_prediction
        if p is not None:
            lines.append(f"Whole launch, predicted: {fmt_us(p.whole_launch_us)} at "
                         f"{p.bandwidth_gbps:,.0f} GB/s = {self.phases_text()}")
            lines.append(self.confidence.label)
        if run is not None:
            tl = run.timeline
            line = (f"Animation's schedule ({COST_MODELS[run.cost].title} cost): the whole launch "
                    f"takes {fmt_us(run.prediction.whole_launch_us)} over {tl.waves_told}")
            if tl.skipped_waves:
                line += (f"; the last {tl.waves:,} are drawn ({fmt_us(tl.makespan_us)}), the "
                         f"{tl.skipped_waves:,} identical ones before them are not")
            if run.cost == "uniform":  # the user's what-if block time, not this kernel's
                line += " (uniform blocks: a what-if, not this kernel's time)"
            lines.append(line)
        return lines + self.sol_lines() + self.rate_lines()

    # -- changing --------------------------------------------------------------------------------
    def set_sm(self, sm: int) -> None:
        sm = max(0, min(int(sm), self.gpu.sm_count - 1))
        if sm != self.sm:
            self._sm = sm
            self.sm_changed.emit()

    def set_window(self, window_ns: float) -> None:
        if window_ns > 0 and window_ns != self._window_ns:
            self._window_ns = float(window_ns)
            self.sm_changed.emit()

    def open_measured(self, path: str | Path) -> None:
        """Another latency run's results (UserError, one line, if it is not one)."""
        self.set_measured(load_latency_run(path))

    def set_measured(self, run: LatencyRun) -> None:
        """A latency run already read (the window reads it off the GUI thread)."""
        self._measured = run
        self.measured_error = ""
        self._curves = None
        self.changed.emit()

    # -- internals -------------------------------------------------------------------------------
    def _on_launch_changed(self, *_args) -> None:
        self.changed.emit()  # worked out when a view asks (_derived): a hidden tab costs nothing

    def _derived(self) -> InsightModel:
        """This model, its launch fields worked out for the launch state now held (once per
        state: the LaunchModel makes a new state object only when the launch changed)."""
        if self._of is not self.state:
            self._recompute()
        return self

    def _recompute(self) -> None:
        st = self._of = self.state
        self._ceiling = self._find_ceiling()
        self._prediction = self._trip = self._launch = None
        self._basis = ""
        self._findings = []
        self._activity = None
        self._curves = None
        if st.occ is None or st.geometry is None:
            return
        ceiling = self._ceiling[0]
        work_kernel = getattr(st.work, "kernel", None)
        self._findings = launch_findings(st.spec, st.occ, st.geometry, bytes_moved=st.bytes_moved,
                                         loads=st.loads, ceiling_gbps=ceiling,
                                         # the mode predict_geometry takes for this launch
                                         memory_bound=default_mode(work_kernel) == "memory")
        if not st.occ.can_launch:
            return
        self._trip, self._basis = block_trip_of(st.geometry, st.bytes_moved, st.loads)
        self._prediction = predict_loaded(st.spec, st.occ.blocks_per_sm, self._trip,
                                          ceiling_gbps=ceiling, grid_blocks=st.geometry.blocks)
        try:  # a matmul kernel is compute-bound (sim.model.launch_model.default_mode)
            self._launch = predict_geometry(st.spec, st.occ, st.geometry, bytes_moved=st.bytes_moved,
                                            ceiling_gbps=ceiling, work=st.work, loads=st.loads,
                                            chain=st.chain)
        except UserError:  # e.g. more tiles than the simulator keeps: no whole-launch line
            self._launch = None
        self._sm = min(self._sm, st.spec.sm_count - 1)

    def _find_ceiling(self) -> tuple[float, str]:
        return self.ceiling_for(self.gpu)

    def ceiling_for(self, gpu: GpuSpec) -> tuple[float, str]:
        """(GB/s, where it comes from): the GPU's achievable bandwidth from its per-GPU data
        (resources/physics), what `explain`, `simulate` and the animation use, so the window
        shows one whole-launch time. (The Bandwidth panel's dashed curves predict a results
        file's points with that run's own measured copy ceiling: sim.model.launch_model, bench.)"""
        fraction = physics_for(gpu).constant("copy_fraction")
        return achievable_gbps(gpu), (f"{fraction.value:.0%} of the {gpu.peak_dram_gbps:,.0f} GB/s "
                                      f"peak, copy fraction {fraction.short_label}")


def _short(device_name: str) -> str:
    return device_name.removeprefix("NVIDIA ")


def _parts_text(p: LaunchPrediction) -> str:
    names = {"launch_overhead_us": "launch overhead", "fill_us": "fill",
             "full_waves_us": "full waves", "tail_us": "tail"}
    return " + ".join(f"{names[k]} {fmt_us(v)}" for k, v in p.parts().items())
