"""The launch being looked at: what the user sets, and what sim and the kernel's spec say about it.

`LaunchInputs` is plain values (saved, compared, exported). `compute_state` turns them into a
frozen `LaunchState`: the grid comes from the selected kernel's own rule (its spec's
`launch_shape`, the one the launcher uses), occupancy and geometry from sim. `LaunchModel` holds
the current state and says what changed; it never references a view.

A registry kernel's registers and shared memory come from its compiler: the model asks for a
`CompileTarget` (`compile_wanted`; gui/jobs.py compiles it off the GUI thread), applies the answer
(`set_compiled`) and says where the numbers came from (`LaunchState.origin`, gui/models/compiled.py).
A Triton kernel's threads-per-block sweep is recompiled at every num_warps (`sweep_wanted`,
`set_sweep`).
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any

from psygnal import Signal

from gui.models.compiled import (BENCH, BY_HAND, COMPILER, HAND, CompileTarget, ResourceOrigin,
                                 block_params, block_threads, compile_target, compiled_origin,
                                 compiling_origin, failed_origin)
from gui.models.launch_shape import launch_shape
from gui.models.matmul_auto import launched
from gui.models.occupancy_curves import OccupancyCurves, occupancy_curves
from sim.rules.devices import GpuSpec, preset, presets
from sim.inputs.errors import UserError
from sim.rules.geometry import LaunchGeometry, launch_geometry, launch_text
from sim.rules.occupancy import Occupancy, occupancy
from sim.model.throughput import launch_work
from sim.model.chain import resolved_chain
from sim.model.matmul_choice import runs_on
from sim.model.latency import DEFAULT_LOADS
from sim.inputs.defaults import DEFAULT_ELEMENTS, DEFAULT_SIDE
from sim.inputs.units import parse_bytes, parse_count

MAX_ELEMENTS = 2**31
MAX_REGS = 512  # the registers box goes past every GPU's 255, to show why such a kernel cannot run
MAX_SMEM = 1 << 20  # likewise shared memory per block (no GPU offers more than 228 KiB)
CUSTOM_KERNEL = "custom"
KNOWN_MAX = 512  # compiled configurations remembered (a slider's worth, both ways)
# A kernel with `dims` (a matmul) picked from the menu starts at DEFAULT_SIDE, and a stream kernel
# picked after it starts back at DEFAULT_ELEMENTS (sim/inputs/defaults.py, as on the command line)


@dataclass(frozen=True, slots=True)
class LaunchInputs:
    """Everything the user sets. Plain values, so it can be saved, compared and exported."""

    gpu: str = "H200"
    kernel: str = CUSTOM_KERNEL
    elements: int = DEFAULT_ELEMENTS
    threads_per_block: int = 256
    regs_per_thread: int = 0
    smem_per_block: int = 0
    carveout_percent: int | None = None
    block_size: int | None = None  # a Triton kernel's BLOCK_SIZE (elements per program)
    dims: str = ""  # a matmul's sizes, "M=1024,N=4352,K=8192"; "" = those of `elements`
    block_extra: str = ""  # the kernel's other block parameters, "BLOCK_N=128,BLOCK_K=32"
    block_y: int = 1  # a 2D/3D block's y and z; its x is threads_per_block / (y × z)
    block_z: int = 1
    cluster_size: int = 1  # blocks per thread-block cluster (compute capability 9.0+)
    max_registers: int = 0  # a cap on registers per thread (maxrregcount; 0: none)

    def __post_init__(self) -> None:
        # under a cap the compiler keeps a thread within it (spilling the rest): typed registers too
        if self.max_registers and self.regs_per_thread > self.max_registers:
            object.__setattr__(self, "regs_per_thread", self.max_registers)

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
    """A number typed into a box, read as the command line reads it (sim.inputs.units): 1e6, 2^20, 4M for
    counts, 48K or 48KiB for shared memory. UserError (one line) if it is no number."""
    what = {"elements": "element count", "threads_per_block": "threads per block",
            "regs_per_thread": "registers per thread", "smem_per_block": "shared memory per block",
            "block_size": "BLOCK_SIZE", "block_x": "block x", "block_y": "block y",
            "block_z": "block z", "cluster_size": "cluster size",
            "max_registers": "max registers"}[name]
    text = str(text).strip()
    value = parse_bytes(text, what) if name == "smem_per_block" else parse_count(text, what)
    if value < 0:
        raise UserError(f"{what} cannot be negative, got {text!r}")
    return value


# -- the kernel's grid: asked of its spec, never worked out here --------------------------------

@dataclass(frozen=True, slots=True)
class GridShape:
    """What the selected kernel launches for this size (kernels.declare.spec.LaunchShape's numbers)."""

    grid_blocks: int
    threads_per_block: int
    elements_per_block: int | None  # a fixed tile per block; None: a grid-stride loop


def kernel_grid(kernel, inputs: LaunchInputs, sm_count: int) -> GridShape:
    """The grid `kernel` launches: its spec's grid rule (the launcher's own)."""
    params = block_params(kernel, inputs)
    dims = launch_dims(inputs)
    shape = kernel.launch_shape(inputs.elements, params, sm_count, **({"dims": dims} if dims else {}))
    return GridShape(shape.grid_blocks, shape.threads_per_block, shape.elements_per_block)


def launch_dims(inputs: LaunchInputs) -> dict | None:
    """The matmul sizes the inputs name (a sawtooth point chose them), else None."""
    from sim.traces.waves import dims_of

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
    work: Any = None  # what each block computes (sim.model.matmul_work.BlockWork), for the compute model
    origin: ResourceOrigin = BY_HAND  # where registers and shared memory came from
    loads: int = DEFAULT_LOADS  # input arrays each thread loads (the kernel's declared inputs)
    chain: dict | None = None  # the kernel's declared chain, its tile's steps resolved (sim.model.chain)

    @property
    def ok(self) -> bool:
        return not self.error and self.occ is not None and self.occ.can_launch

    @property
    def blocks(self) -> int:
        return self.geometry.blocks if self.geometry is not None else 0

    def launch_text(self) -> str:
        """The problem and the block size in a line (the verdicts' header, the export's title)."""
        if self.geometry is not None:
            return launch_text(self.geometry)
        return f"{self.inputs.elements:,} elements × {self.inputs.threads_per_block} threads per block"

    def message(self) -> str:
        if self.error:
            return self.error
        if self.occ is not None and not self.occ.can_launch:
            return f"This launch cannot run on {self.spec.name}: {self.occ.reason}"
        return ""


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
        work, chain = None, None
        loads = getattr(kernel, "arity", None) or DEFAULT_LOADS
        if kernel is None:  # a custom launch: matrix sizes mean nothing to it
            per_block, blocks, nbytes, sizes = inputs.threads_per_block, None, None, None
        else:
            if runs_on(kernel, spec):  # a TMA matmul before Hopper: said, as explain says it
                raise UserError(f"{kernel.name} cannot run on {spec.name}: {runs_on(kernel, spec)}")
            sizes = kernel.size_dims(inputs.elements, launch_dims(inputs))
            shape = kernel_grid(kernel, inputs, spec.sm_count)
            per_block, blocks = shape.elements_per_block, shape.grid_blocks
            nbytes = _declared_bytes(kernel, inputs.elements, launch_dims(inputs))
            if getattr(kernel, "chain", None):  # as explain and compare resolve it
                chain = resolved_chain(kernel.chain, block_params(kernel, inputs), per_block or 0)
            if occ.can_launch:
                work = launch_work(kernel, inputs.elements, block_params(kernel, inputs), spec,
                                   occ.blocks_per_sm, blocks, launch_dims(inputs))
        block, cluster = launch_shape(inputs, spec, kernel)
        geo = launch_geometry(spec, inputs.elements, inputs.threads_per_block, occ, blocks=blocks,
                              elements_per_block=per_block, sizes=sizes, block_dims=block.tuple,
                              cluster_size=cluster)
    except (ValueError, TypeError) as exc:  # UserError is a ValueError
        return LaunchState(inputs, spec, None, None, str(exc).splitlines()[0])
    return LaunchState(inputs, spec, occ, geo, "", per_block, nbytes, work, loads=loads, chain=chain)


def _declared_bytes(kernel, n: int, dims: dict | None = None) -> int | None:
    try:
        return int(kernel.bytes_moved(n, **({"dims": dims} if dims else {})))
    except (UserError, TypeError, ValueError):  # no 'bytes' declared
        return None


class LaunchModel:
    """The launch being looked at. Emits `changed(LaunchState)` after every accepted change and
    `rejected(message)` when a change is refused (the previous inputs stay). `compile_wanted(
    CompileTarget)` asks for the selected kernel's resources, `sweep_wanted(CompileTarget)` for
    its threads-per-block sweep; the answers come back through `set_compiled` and `set_sweep`."""

    changed = Signal(object)
    rejected = Signal(str)
    specs_changed = Signal()
    kernels_changed = Signal()
    compile_wanted = Signal(object)
    sweep_wanted = Signal(object)
    curves_changed = Signal()  # the occupancy sweeps changed for the same launch

    def __init__(self, inputs: LaunchInputs | None = None) -> None:
        self._extra_specs: dict[str, GpuSpec] = {}
        self._kernels: dict[str, Any] = {}  # registry specs shown in the kernel menu
        self._opened: dict[str, Any] = {}  # ... of them, from the user's kernel files
        self._measured: dict[str, tuple[int, int]] = {}  # kernel -> (regs/thread, smem/block)
        self._curves: tuple | None = None
        self._target: CompileTarget | None = None  # what the current resources answer
        self._known: dict[CompileTarget, Any] = {}  # compiled answers, newest last
        self._sweeps: dict[tuple, dict] = {}  # sweep_key -> {num_warps: resources or error}
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
        """The registry kernels the menu offers (after 'custom'): built-ins, then opened ones."""
        return list(self._kernels.values()) + [k for n, k in self._opened.items()
                                               if n not in self._kernels]

    def kernel(self, name: str | None = None):
        """The selected (or named) kernel's spec; None for a custom launch."""
        name = self.inputs.kernel if name is None else name
        return self._kernels.get(name) or self._opened.get(name)

    def launched_kernel(self):
        """The declaration the launch runs: the selected kernel, or the candidate matmul_auto
        chose for these sizes (gui/models/matmul_auto.py); None for a custom launch."""
        try:
            return launched(self.kernel(), self.inputs, self.state.spec)[0]
        except ValueError:  # no candidate suits these sizes here: the launch shows why
            return self.kernel()

    def measured_resources(self, name: str) -> tuple[int, int] | None:
        return self._measured.get(name)

    @property
    def target(self) -> CompileTarget | None:
        """What the compiler is (or was) asked for the current launch; None for a custom one."""
        return self._target

    @property
    def curves(self) -> OccupancyCurves | None:
        """The occupancy sweeps around the current launch (worked out once per launch and
        sweep answer)."""
        sweep, note = self._threads_sweep()
        if self._curves is None or self._curves[0] is not self._state or self._curves[1] is not sweep:
            self._curves = (self._state, sweep, occupancy_curves(self._state, sweep, note))
        return self._curves[2]

    def _threads_sweep(self) -> tuple[dict | None, str]:
        t = self._target
        if (t is None or t.spec is None or t.spec.backend != "triton"
                or not self._state.origin.compiled):
            return None, ""
        sweep = self._sweeps.get(t.sweep_key())
        if sweep is None:
            return None, "registers recompiled at each warp count: compiling…"
        if not sweep:  # cancelled: the curve keeps this launch's registers
            return None, ""
        return sweep, f"registers recompiled at each warp count ({self._state.origin.text})"

    # -- changing -----------------------------------------------------------------------------
    def add_detected_spec(self, spec: GpuSpec) -> str:
        label = spec.name if spec.name not in presets() else f"{spec.name} (this machine)"
        self._extra_specs = {label: spec, **self._extra_specs}
        self.specs_changed.emit()
        return label

    def set_kernels(self, kernels) -> None:
        """Registry kernels whose grid WarpScope can show (torch picks its own)."""
        self._kernels = {k.name: k for k in kernels if _shows_grid(k)}
        self._after_kernels_changed()

    def add_opened_kernels(self, kernels) -> None:
        """Kernels from a user's file join the menu (a file opened again replaces its own)."""
        for k in kernels:
            if _shows_grid(k):
                self._opened[k.name] = k
                self._forget(k.name)  # an edited file compiles to new numbers
        self._after_kernels_changed()

    def _forget(self, name: str) -> None:
        self._known = {t: r for t, r in self._known.items() if t.kernel != name}
        self._sweeps = {k: v for k, v in self._sweeps.items() if k[0] != name}
        if self._target is not None and self._target.kernel == name:
            self._target = None

    def _after_kernels_changed(self) -> None:
        self.kernels_changed.emit()
        # the selected kernel's grid now comes from its rule (or it is gone: a custom launch)
        if self.kernel() is None or not self.update(kernel=self.inputs.kernel):
            self.update(kernel=CUSTOM_KERNEL, block_size=None)

    def update(self, **changes: Any) -> bool:
        """Apply changes to the inputs. Returns False (and emits `rejected`) if they are refused.
        Registers or shared memory typed in for a compiled kernel are then 'set by hand'."""
        by_hand = bool(changes.keys() & {"regs_per_thread", "smem_per_block"})
        return self._apply(changes, BY_HAND if by_hand else None)

    def _apply(self, changes: dict, origin: ResourceOrigin | None) -> bool:
        if not changes:
            return True
        if "elements" in changes and "dims" not in changes:
            changes["dims"] = ""  # a typed size replaces the matrix a sawtooth point chose
        if "threads_per_block" in changes and not changes.keys() & {"block_y", "block_z"}:
            changes.update(block_y=1, block_z=1)  # a thread count alone is a 1D block
        try:
            new_inputs = replace(self._state.inputs, **changes)
            spec = self.spec_for(new_inputs.gpu)
            kernel, new_inputs = launched(self.kernel(new_inputs.kernel), new_inputs, spec)
            state = compute_state(new_inputs, spec, kernel)
        except (TypeError, ValueError) as exc:
            self.rejected.emit(str(exc).splitlines()[0])
            return False
        if state.error:
            self.rejected.emit(state.error)
            return False
        target = compile_target(kernel, state)
        known = None
        if origin is None or origin.kind == BENCH:
            origin, known = self._resolve_origin(target, origin)
        if known is not None:  # compiled before: no job, no flicker
            state = compute_state(replace(new_inputs, regs_per_thread=known.regs_per_thread,
                                          smem_per_block=known.smem_per_block), spec, kernel)
        state = replace(state, origin=origin)
        if state != self._state:
            self._state = state
            self.changed.emit(state)
        if target != self._target:
            self._target = target
            if target is not None and known is None and origin.kind != HAND:
                self.compile_wanted.emit(target)
            elif known is not None:
                self._want_sweep()
        return True

    def _resolve_origin(self, target: CompileTarget | None, fallback: ResourceOrigin | None
                        ) -> tuple[ResourceOrigin, Any]:
        """(where the numbers stand, a remembered answer or None) when the launch changes."""
        now = self._state.origin
        if target is None:
            return BY_HAND, None
        same = self._target is not None and target.config() == self._target.config()
        if same and now.kind == HAND:
            return now, None  # typed in: they stay until the kernel or its block changes
        known = self._known.get(target)
        if known is not None:
            return compiled_origin(known), known
        if fallback is not None:
            return fallback, None
        if same:
            return now, None  # only the size moved: the numbers stand until the answer comes
        return compiling_origin(target), None

    def request_compile(self) -> None:
        """Ask the compiler again for the current launch (after a failure or a cancel)."""
        if self._target is not None:
            self._sweeps.pop(self._target.sweep_key(), None)
            self._state = replace(self._state, origin=compiling_origin(self._target))
            self.changed.emit(self._state)
            self.compile_wanted.emit(self._target)

    def set_compiled(self, target: CompileTarget, result) -> None:
        """The compiler's answer for `target`: a LaunchResources, or an error (its first line is
        shown, its `.log` kept). An answer for an older launch is only remembered."""
        ok = hasattr(result, "regs_per_thread")
        if ok:
            self._known[target] = result
            while len(self._known) > KNOWN_MAX:
                del self._known[next(iter(self._known))]
        if target != self._target:
            return
        if not ok:
            self._state = replace(self._state, origin=failed_origin(result))
            self.changed.emit(self._state)
            return
        self._apply({"regs_per_thread": int(result.regs_per_thread),
                     "smem_per_block": int(result.smem_per_block)}, compiled_origin(result))
        self._want_sweep()

    def _want_sweep(self) -> None:
        t = self._target
        if t is not None and t.spec is not None and t.spec.backend == "triton" \
                and t.sweep_key() not in self._sweeps:
            self.sweep_wanted.emit(t)

    def set_sweep(self, target: CompileTarget, results: dict) -> None:
        """num_warps -> compiled resources (or an error) for `target`'s threads sweep."""
        self._sweeps[target.sweep_key()] = dict(results)
        for warps, res in results.items():
            if hasattr(res, "regs_per_thread"):
                self._known.setdefault(target.with_block(num_warps=warps), res)
        if self._target is not None and target.sweep_key() == self._target.sweep_key():
            self.curves_changed.emit()

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
        results); applied when such a kernel is (or gets) selected, until the compiler answers
        for the launch on screen."""
        self._measured.update(resources)
        if self.inputs.kernel in resources and self._state.origin.kind != COMPILER:
            regs, smem = resources[self.inputs.kernel]
            self._apply({"regs_per_thread": int(regs), "smem_per_block": int(smem)}, _bench())

    def select_kernel(self, name: str) -> bool:
        """Switch kernel; its default block parameters set threads per block (and a Triton
        program's BLOCK_SIZE); registers and shared memory come from its compiler (from bench
        results while it compiles)."""
        k = self.kernel(name)
        if k is None:  # a matmul's size n (4,096) is no custom launch's element count
            sized = {"elements": LaunchInputs().elements, "dims": ""} \
                if getattr(self.kernel(), "is_matrix_product", False) else {}
            return self.update(kernel=CUSTOM_KERNEL, block_size=None, **sized)
        changes: dict[str, Any] = {"kernel": k.name, "block_size": None, "dims": "",
                                   "block_extra": ""}
        sided, was_sided = (getattr(x, "is_matrix_product", False) for x in (k, self.kernel()))
        if sided != was_sided:
            changes["elements"] = DEFAULT_SIDE if sided else LaunchInputs().elements
        origin = None
        if k.name in self._measured:
            regs, smem = self._measured[k.name]
            changes.update(regs_per_thread=int(regs), smem_per_block=int(smem))
            origin = _bench()
        if k.backend == "triton":
            changes.update(threads_per_block=32 * (k.default_num_warps or 4))
            if k.block_param != "num_warps":
                changes["block_size"] = k.default_block
        elif k.default_block:
            changes["threads_per_block"] = block_threads(k)
        self._target = None  # a new selection always asks (or reuses) the compiler's answer
        return self._apply(changes, origin)


def _bench() -> ResourceOrigin:
    return ResourceOrigin(BENCH, "from bench results (measured on a GPU)")


def _shows_grid(kernel) -> bool:
    """Its grid is ours to know (torch picks its own; the lanes demo and the trace are no launch)."""
    return bool(kernel.launchable)
