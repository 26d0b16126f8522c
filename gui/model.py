"""The app's models: what launch the user describes, and where the animation is in time.

Models hold state and say what changed through signals; they never reference views. Derived
results (`LaunchState`) are frozen records computed from `sim`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

from PySide6.QtCore import QObject, Signal

from sim.devices import GpuSpec, preset, presets
from sim.geometry import LaunchGeometry, launch_geometry
from sim.occupancy import Occupancy, occupancy

MAX_ELEMENTS = 2**31
MAX_REGS = 512  # the registers box goes past every GPU's 255, to show why such a kernel cannot run
MAX_SMEM = 1 << 20  # likewise shared memory per block (no GPU offers more than 228 KiB)
CUSTOM_KERNEL = "custom"


@dataclass(frozen=True, slots=True)
class KernelChoice:
    """What the GUI needs to know about a registry kernel (copied out of kernels.registry)."""

    name: str
    backend: str
    title: str
    description: str
    trips: int
    block_param: str | None  # "threads" | "BLOCK_SIZE" | None
    default_block: int | None
    teaching: bool = False
    default_num_warps: int | None = None

    @classmethod
    def from_spec(cls, k) -> KernelChoice:
        """From a kernels.registry.KernelSpec (duck-typed, so tests can pass fakes)."""
        return cls(
            k.name,
            k.backend,
            k.title,
            getattr(k, "description", ""),
            getattr(k, "trips", 3),
            getattr(k, "block_param", None),
            getattr(k, "default_block", None),
            bool(getattr(k, "teaching", False)),
            getattr(k, "default_num_warps", None),
        )


CUSTOM = KernelChoice(
    CUSTOM_KERNEL,
    "",
    "Custom launch",
    "Set registers and shared memory by hand.",
    3,
    "threads",
    256,
)


@dataclass(frozen=True, slots=True)
class LaunchInputs:
    """Everything the user sets. Plain values, so it can be saved, compared and exported."""

    gpu: str = "H200"
    kernel: str = CUSTOM_KERNEL
    elements: int = 1_000_000
    threads_per_block: int = 256
    regs_per_thread: int = 0
    smem_per_block: int = 0
    carveout_percent: int | None = None
    elements_per_thread: int = 1  # >1 for Triton programs: BLOCK_SIZE elements per block

    def to_dict(self) -> dict:
        return {f: getattr(self, f) for f in self.__slots__}

    @classmethod
    def from_dict(cls, data: dict) -> LaunchInputs:
        base = cls()
        values = {}
        for name in cls.__slots__:
            if name in data and data[name] is not None:
                default = getattr(base, name)
                v = data[name]
                try:
                    values[name] = type(default)(v) if default is not None else int(v)
                except (TypeError, ValueError):
                    continue
            elif name in data and name == "carveout_percent":
                values[name] = None
        return replace(base, **values)


@dataclass(frozen=True, slots=True)
class LaunchState:
    """Inputs plus what sim says about them. `error` is set (and occ/geometry None) when the
    inputs are nonsense; `occ.can_launch` is False when they are valid but do not fit an SM."""

    inputs: LaunchInputs
    spec: GpuSpec
    occ: Occupancy | None
    geometry: LaunchGeometry | None
    error: str = ""

    @property
    def ok(self) -> bool:
        return not self.error and self.occ is not None and self.occ.can_launch

    @property
    def blocks(self) -> int:
        return self.geometry.blocks if self.geometry is not None else 0

    def message(self) -> str:
        if self.error:
            return self.error
        if self.occ is not None and not self.occ.can_launch:
            return f"This launch cannot run on {self.spec.name}: {self.occ.reason}"
        return ""


def thread_elements(inputs: LaunchInputs) -> int:
    """Elements counted in threads: a Triton program handles elements_per_thread per thread."""
    ept = max(1, int(inputs.elements_per_thread))
    return math.ceil(inputs.elements / ept)


def compute_state(inputs: LaunchInputs, spec: GpuSpec) -> LaunchState:
    """Occupancy and geometry for `inputs` on `spec`; never raises for bad input."""
    try:
        if not 1 <= inputs.elements <= MAX_ELEMENTS:
            raise ValueError(
                f"elements must be between 1 and 2^31 ({MAX_ELEMENTS:,}), got {inputs.elements:,}"
            )
        if inputs.regs_per_thread > MAX_REGS:
            raise ValueError(
                f"registers per thread must be at most {MAX_REGS} here (no GPU allows more than "
                f"255), got {inputs.regs_per_thread:,}"
            )
        if inputs.smem_per_block > MAX_SMEM:
            raise ValueError(
                f"shared memory per block must be at most {MAX_SMEM:,} B here (no GPU lets a "
                f"block have more than 227 KiB), got {inputs.smem_per_block:,} B"
            )
        occ = occupancy(
            spec,
            inputs.threads_per_block,
            inputs.regs_per_thread,
            inputs.smem_per_block,
            inputs.carveout_percent,
        )
        geo = launch_geometry(spec, thread_elements(inputs), inputs.threads_per_block, occ)
    except (ValueError, TypeError) as exc:
        return LaunchState(inputs, spec, None, None, str(exc).splitlines()[0])
    return LaunchState(inputs, spec, occ, geo, "")


class LaunchModel(QObject):
    """The launch being looked at. Emits `changed(LaunchState)` after every accepted change and
    `rejected(str)` when a change is refused (the previous inputs stay)."""

    changed = Signal(object)
    rejected = Signal(str)
    specs_changed = Signal()
    kernels_changed = Signal()

    def __init__(self, inputs: LaunchInputs | None = None, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._extra_specs: dict[str, GpuSpec] = {}
        self._kernels: dict[str, KernelChoice] = {CUSTOM_KERNEL: CUSTOM}
        self._measured: dict[str, tuple[int, int]] = {}  # kernel -> (regs/thread, smem/block)
        inputs = inputs or LaunchInputs()
        try:
            spec = self.spec_for(inputs.gpu)
        except ValueError:
            inputs = replace(inputs, gpu=LaunchInputs().gpu)
            spec = self.spec_for(inputs.gpu)
        self._state = compute_state(inputs, spec)

    # -- reading ----------------------------------------------------------------------------------
    @property
    def state(self) -> LaunchState:
        return self._state

    @property
    def inputs(self) -> LaunchInputs:
        return self._state.inputs

    def gpu_names(self) -> list[str]:
        """Detected devices first, then every preset."""
        return list(self._extra_specs) + [p for p in presets() if p not in self._extra_specs]

    def spec_for(self, name: str) -> GpuSpec:
        if name in self._extra_specs:
            return self._extra_specs[name]
        return preset(name)  # raises UserError (a ValueError) with the list of names

    def kernels(self) -> list[KernelChoice]:
        return list(self._kernels.values())

    def kernel(self, name: str) -> KernelChoice:
        return self._kernels.get(name, CUSTOM)

    # -- changing ---------------------------------------------------------------------------------
    def add_detected_spec(self, spec: GpuSpec) -> None:
        label = spec.name if spec.name not in presets() else f"{spec.name} (this machine)"
        self._extra_specs = {label: spec, **self._extra_specs}
        self.specs_changed.emit()

    def set_kernels(self, choices: list[KernelChoice]) -> None:
        self._kernels = {CUSTOM_KERNEL: CUSTOM}
        for k in choices:
            self._kernels[k.name] = k
        self.kernels_changed.emit()

    def update(self, **changes: Any) -> bool:
        """Apply changes to the inputs. Returns False (and emits `rejected`) if they are refused."""
        if not changes:
            return True
        try:
            new_inputs = replace(self._state.inputs, **changes)
        except TypeError as exc:
            self.rejected.emit(str(exc))
            return False
        try:
            spec = self.spec_for(new_inputs.gpu)
        except ValueError as exc:
            self.rejected.emit(str(exc).splitlines()[0])
            return False
        state = compute_state(new_inputs, spec)
        if state.error:
            self.rejected.emit(state.error)
            return False
        if state == self._state:
            return True
        self._state = state
        self.changed.emit(state)
        return True

    def set_measured_resources(self, resources: dict[str, tuple[int, int]]) -> None:
        """Registers per thread and shared memory per block of compiled kernels (from bench
        results); applied when such a kernel is (or gets) selected."""
        self._measured.update(resources)
        if self.inputs.kernel in resources:
            regs, smem = resources[self.inputs.kernel]
            self.update(regs_per_thread=int(regs), smem_per_block=int(smem))

    def measured_resources(self, name: str) -> tuple[int, int] | None:
        return self._measured.get(name)

    def select_kernel(self, name: str) -> bool:
        """Switch kernel; its block parameter sets threads per block (and BLOCK_SIZE packing),
        and registers/shared memory come from its compiled form when bench results told us."""
        k = self.kernel(name)
        changes: dict[str, Any] = {"kernel": k.name}
        if k.name in self._measured:
            regs, smem = self._measured[k.name]
            changes.update(regs_per_thread=int(regs), smem_per_block=int(smem))
        if k.block_param == "BLOCK_SIZE" and k.default_block:
            threads = 32 * (k.default_num_warps or 4)  # a Triton program runs on num_warps warps
            changes.update(
                threads_per_block=threads, elements_per_thread=max(1, k.default_block // threads)
            )
        else:
            changes["elements_per_thread"] = 1
            if k.default_block:
                changes["threads_per_block"] = int(k.default_block)
        return self.update(**changes)


class SimulationModel(QObject):
    """The simulated launch being shown: a SimRecord (from gui.simrun), or none with a reason.

    The main window puts finished simulations here; the SM view, timeline and playback bar
    subscribe to `record_changed(record_or_None, message)`."""

    record_changed = Signal(object, str)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._record = None
        self._message = ""

    @property
    def record(self):
        return self._record

    @property
    def message(self) -> str:
        return self._message

    def set_record(self, record) -> None:
        self._record, self._message = record, ""
        self.record_changed.emit(record, "")

    def clear(self, message: str) -> None:
        """No simulation to show, and why (the launch cannot run, or simulating failed)."""
        self._record, self._message = None, message
        self.record_changed.emit(None, message)


@dataclass(frozen=True, slots=True)
class PlaybackState:
    time_us: float
    playing: bool
    speed: float


class PlaybackModel(QObject):
    """Where the animation is: a time in the simulated launch, playing or not, and a speed.

    `speed` 1.0 plays the whole launch in `base_seconds` of wall time."""

    time_changed = Signal(float)
    playing_changed = Signal(bool)
    speed_changed = Signal(float)

    def __init__(self, base_seconds: float = 8.0, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.base_seconds = base_seconds
        self._time = 0.0
        self._end = 0.0
        self._playing = False
        self._speed = 1.0
        self.loop = True

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
            if playing and self._time >= self._end:
                self.set_time(0.0)
            self._playing = playing
            self.playing_changed.emit(playing)

    def toggle(self) -> None:
        self.set_playing(not self._playing)

    def set_speed(self, speed: float) -> None:
        if not math.isfinite(float(speed)):
            return  # e.g. 'nan' in a damaged settings file: max(0.05, nan) made it 0.05
        speed = min(max(0.05, float(speed)), 64.0)
        if speed != self._speed:
            self._speed = speed
            self.speed_changed.emit(speed)

    def advance(self, wall_seconds: float) -> None:
        """Move time forward by `wall_seconds` of playback (called by the clock)."""
        if not self._playing or self._end <= 0:
            return
        t = self._time + wall_seconds * self._speed * self._end / self.base_seconds
        if t >= self._end:
            if self.loop:
                t = 0.0 if self._time >= self._end else self._end
            else:
                self.set_time(self._end)
                self.set_playing(False)
                return
        self.set_time(t)
