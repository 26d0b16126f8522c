"""The launch being looked at: what the user sets, and what sim and the kernel's spec say about it.

`LaunchInputs` is plain values (saved, compared, exported). `compute_state` turns them into a
frozen `LaunchState`: the grid comes from the selected kernel's own rule (its spec's
`launch_shape`, the one the launcher uses), occupancy and geometry from sim. `LaunchModel` holds
the current state and says what changed; it never references a view.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any

from psygnal import Signal

from sim.devices import GpuSpec, preset, presets
from sim.errors import UserError
from sim.geometry import LaunchGeometry, launch_geometry
from sim.occupancy import Occupancy, occupancy, sweep_registers, sweep_smem, sweep_threads
from sim.throughput import launch_work
from sim.units import parse_bytes, parse_count

MAX_ELEMENTS = 2**31
MAX_REGS = 512  # the registers box goes past every GPU's 255, to show why such a kernel cannot run
MAX_SMEM = 1 << 20  # likewise shared memory per block (no GPU offers more than 228 KiB)
CUSTOM_KERNEL = "custom"


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
    block_size: int | None = None  # a Triton kernel's BLOCK_SIZE (elements per program)
    dims: str = ""  # a matmul's sizes, "M=1024,N=4352,K=8192"; "" = those of `elements`
    block_extra: str = ""  # the kernel's other block parameters, "BLOCK_N=128,BLOCK_K=32"

    def to_dict(self) -> dict:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @classmethod
    def from_dict(cls, data: dict) -> LaunchInputs:
        """Tolerant: unknown keys and values of the wrong type are ignored."""
        data = dict(data)
        ept = data.pop("elements_per_thread", None)  # saved by earlier versions
        if data.get("block_size") is None and isinstance(ept, int) and ept > 1:
            data["block_size"] = ept * int(data.get("threads_per_block") or 1)
        values: dict[str, Any] = {}
        for f in fields(cls):
            if f.name not in data:
                continue
            v = data[f.name]
            if v is None:
                if f.name in ("carveout_percent", "block_size"):
                    values[f.name] = None
                continue
            kind = str if f.name in ("gpu", "kernel", "dims", "block_extra") else int
            try:
                values[f.name] = kind(v)
            except (TypeError, ValueError):
                continue
        return replace(cls(), **values)


def parse_field(name: str, text: str) -> int:
    """A number typed into a box, read as the command line reads it (sim.units): 1e6, 2^20, 4M for
    counts, 48K or 48KiB for shared memory. UserError (one line) if it is no number."""
    what = {"elements": "element count", "threads_per_block": "threads per block",
            "regs_per_thread": "registers per thread", "smem_per_block": "shared memory per block",
            "block_size": "BLOCK_SIZE"}[name]
    text = str(text).strip()
    value = parse_bytes(text, what) if name == "smem_per_block" else parse_count(text, what)
    if value < 0:
        raise UserError(f"{what} cannot be negative, got {text!r}")
    return value


# -- the kernel's grid: asked of its spec, never worked out here --------------------------------

@dataclass(frozen=True, slots=True)
class GridShape:
    """What the selected kernel launches for this size (kernels.spec.LaunchShape's numbers)."""

    grid_blocks: int
    threads_per_block: int
    elements_per_block: int | None  # a fixed tile per block; None: a grid-stride loop


def block_params(kernel, inputs: LaunchInputs) -> dict:
    """The kernel's block parameters for these inputs: Triton's BLOCK_SIZE and num_warps (the
    threads are 32 x num_warps), Numba's threads per block."""
    if kernel.backend == "triton":
        params = {"num_warps": max(1, inputs.threads_per_block // 32)}
        if kernel.block_param:
            params[kernel.block_param] = inputs.block_size or kernel.default_block
        for part in filter(None, inputs.block_extra.split(",")):  # "BLOCK_N=128,num_stages=4"
            name, _, value = part.partition("=")
            params[name.strip()] = int(value)
        return params
    return {kernel.block_param: inputs.threads_per_block} if kernel.block_param else {}


def kernel_grid(kernel, inputs: LaunchInputs, sm_count: int) -> GridShape:
    """The grid `kernel` launches: its spec's grid rule (the launcher's own)."""
    params = block_params(kernel, inputs)
    dims = launch_dims(inputs)
    shape = kernel.launch_shape(inputs.elements, params, sm_count, **({"dims": dims} if dims else {}))
    return GridShape(shape.grid_blocks, shape.threads_per_block, shape.elements_per_block)


def launch_dims(inputs: LaunchInputs) -> dict | None:
    """The matmul sizes the inputs name (a sawtooth point chose them), else None."""
    from sim.waves import dims_of

    return dims_of(inputs.dims) if inputs.dims else None


# -- the state -----------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class LaunchState:
    """Inputs plus what sim says about them. `error` is set (and occ/geometry None) when the
    inputs are nonsense; `occ.can_launch` is False when they are valid but do not fit an SM."""

    inputs: LaunchInputs
    spec: GpuSpec
    occ: Occupancy | None
    geometry: LaunchGeometry | None
    error: str = ""
    elements_per_block: int | None = None  # what one block covers (None: it loops)
    bytes_moved: int | None = None  # one call's DRAM traffic, as the kernel declares it
    work: Any = None  # what each block computes (sim.matmul_work.BlockWork), for the compute model

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


@dataclass(frozen=True)
class OccupancyCurves:
    """The CUDA Occupancy Calculator's three charts for a launch: active warps per SM as one input
    varies, the others fixed. Each is (x values, warps); the launch itself is the marker."""

    threads: tuple
    registers: tuple
    smem: tuple  # x in bytes


def occupancy_curves(state: LaunchState) -> OccupancyCurves | None:
    """None when the inputs are nonsense (no occupancy to sweep around)."""
    if state.occ is None:
        return None
    spec, i = state.spec, state.inputs
    co = i.carveout_percent
    try:
        return OccupancyCurves(sweep_threads(spec, i.regs_per_thread, i.smem_per_block, co),
                               sweep_registers(spec, i.threads_per_block, i.smem_per_block, co),
                               sweep_smem(spec, i.threads_per_block, i.regs_per_thread, co))
    except ValueError:
        return None


def _check_ranges(inputs: LaunchInputs) -> None:
    if not 1 <= inputs.elements <= MAX_ELEMENTS:
        raise ValueError(f"elements must be between 1 and 2^31 ({MAX_ELEMENTS:,}), got {inputs.elements:,}")
    if inputs.regs_per_thread > MAX_REGS:
        raise ValueError(f"registers per thread must be at most {MAX_REGS} here (no GPU allows more "
                         f"than 255), got {inputs.regs_per_thread:,}")
    if inputs.smem_per_block > MAX_SMEM:
        raise ValueError(f"shared memory per block must be at most {MAX_SMEM:,} B here (no GPU lets "
                         f"a block have more than 227 KiB), got {inputs.smem_per_block:,} B")


def compute_state(inputs: LaunchInputs, spec: GpuSpec, kernel=None) -> LaunchState:
    """Occupancy and geometry for `inputs` on `spec` (the grid from `kernel`'s rule when one is
    selected); never raises for bad input."""
    try:
        _check_ranges(inputs)
        occ = occupancy(spec, inputs.threads_per_block, inputs.regs_per_thread,
                        inputs.smem_per_block, inputs.carveout_percent)
        work = None
        if kernel is None:  # a custom launch: matrix sizes mean nothing to it
            per_block, blocks, nbytes = inputs.threads_per_block, None, None
        else:
            shape = kernel_grid(kernel, inputs, spec.sm_count)
            per_block, blocks = shape.elements_per_block, shape.grid_blocks
            nbytes = _declared_bytes(kernel, inputs.elements, launch_dims(inputs))
            if occ.can_launch:
                work = launch_work(kernel, inputs.elements, block_params(kernel, inputs), spec,
                                   occ.blocks_per_sm, blocks, launch_dims(inputs))
        geo = launch_geometry(spec, inputs.elements, inputs.threads_per_block, occ, blocks=blocks,
                              elements_per_block=per_block)
    except (ValueError, TypeError) as exc:  # UserError is a ValueError
        return LaunchState(inputs, spec, None, None, str(exc).splitlines()[0])
    return LaunchState(inputs, spec, occ, geo, "", per_block, nbytes, work)


def _declared_bytes(kernel, n: int, dims: dict | None = None) -> int | None:
    try:
        return int(kernel.bytes_moved(n, **({"dims": dims} if dims else {})))
    except (UserError, TypeError, ValueError):  # no 'bytes' declared
        return None


class LaunchModel:
    """The launch being looked at. Emits `changed(LaunchState)` after every accepted change and
    `rejected(message)` when a change is refused (the previous inputs stay)."""

    changed = Signal(object)
    rejected = Signal(str)
    specs_changed = Signal()
    kernels_changed = Signal()

    def __init__(self, inputs: LaunchInputs | None = None) -> None:
        self._extra_specs: dict[str, GpuSpec] = {}
        self._kernels: dict[str, Any] = {}  # registry specs shown in the kernel menu
        self._measured: dict[str, tuple[int, int]] = {}  # kernel -> (regs/thread, smem/block)
        self._curves: tuple | None = None
        inputs = inputs or LaunchInputs()
        try:
            spec = self.spec_for(inputs.gpu)
        except ValueError:
            inputs = replace(inputs, gpu=LaunchInputs().gpu)
            spec = self.spec_for(inputs.gpu)
        self._state = compute_state(inputs, spec)

    # -- reading ------------------------------------------------------------------------------
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

    def kernels(self) -> list:
        """The registry kernels the menu offers (after 'custom')."""
        return list(self._kernels.values())

    def kernel(self, name: str | None = None):
        """The selected (or named) kernel's spec; None for a custom launch."""
        return self._kernels.get(self.inputs.kernel if name is None else name)

    def measured_resources(self, name: str) -> tuple[int, int] | None:
        return self._measured.get(name)

    @property
    def curves(self) -> OccupancyCurves | None:
        """The occupancy sweeps around the current launch (worked out once per launch)."""
        if self._curves is None or self._curves[0] is not self._state:
            self._curves = (self._state, occupancy_curves(self._state))
        return self._curves[1]

    # -- changing -----------------------------------------------------------------------------
    def add_detected_spec(self, spec: GpuSpec) -> str:
        label = spec.name if spec.name not in presets() else f"{spec.name} (this machine)"
        self._extra_specs = {label: spec, **self._extra_specs}
        self.specs_changed.emit()
        return label

    def set_kernels(self, kernels) -> None:
        """Registry kernels whose grid WarpScope can show (torch picks its own)."""
        self._kernels = {k.name: k for k in kernels if _shows_grid(k)}
        self.kernels_changed.emit()
        # the selected kernel's grid now comes from its rule (or it is gone: a custom launch)
        if self.inputs.kernel not in self._kernels or not self.update(kernel=self.inputs.kernel):
            self.update(kernel=CUSTOM_KERNEL, block_size=None)

    def update(self, **changes: Any) -> bool:
        """Apply changes to the inputs. Returns False (and emits `rejected`) if they are refused."""
        if not changes:
            return True
        if "elements" in changes and "dims" not in changes:
            changes["dims"] = ""  # a typed size replaces the matrix a sawtooth point chose
        try:
            new_inputs = replace(self._state.inputs, **changes)
            spec = self.spec_for(new_inputs.gpu)
        except (TypeError, ValueError) as exc:
            self.rejected.emit(str(exc).splitlines()[0])
            return False
        state = compute_state(new_inputs, spec, self._kernels.get(new_inputs.kernel))
        if state.error:
            self.rejected.emit(state.error)
            return False
        if state != self._state:
            self._state = state
            self.changed.emit(state)
        return True

    def update_text(self, name: str, text: str) -> bool:
        """A box's text, read like the command line reads it; a message if it is no number."""
        try:
            value = parse_field(name, text)
        except UserError as exc:
            self.rejected.emit(str(exc))
            return False
        return self.update(**{name: value})

    def set_measured_resources(self, resources: dict[str, tuple[int, int]]) -> None:
        """Registers per thread and shared memory per block of compiled kernels (from bench
        results); applied when such a kernel is (or gets) selected."""
        self._measured.update(resources)
        if self.inputs.kernel in resources:
            regs, smem = resources[self.inputs.kernel]
            self.update(regs_per_thread=int(regs), smem_per_block=int(smem))

    def select_kernel(self, name: str) -> bool:
        """Switch kernel; its default block parameters set threads per block (and a Triton
        program's BLOCK_SIZE); registers and shared memory come from its compiled form when
        bench results told us."""
        k = self._kernels.get(name)
        if k is None:
            return self.update(kernel=CUSTOM_KERNEL, block_size=None)
        changes: dict[str, Any] = {"kernel": k.name, "block_size": None, "dims": "", "block_extra": ""}
        if k.name in self._measured:
            regs, smem = self._measured[k.name]
            changes.update(regs_per_thread=int(regs), smem_per_block=int(smem))
        if k.backend == "triton":
            changes.update(threads_per_block=32 * (k.default_num_warps or 4),
                           block_size=k.default_block)
        elif k.default_block:
            changes["threads_per_block"] = int(k.default_block)
        return self.update(**changes)


def _shows_grid(kernel) -> bool:
    """Its grid is ours to know (torch picks its own; the lanes demo and the trace are no launch)."""
    return bool(kernel.launchable)
