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

A kernel of the user's file answers its rules in the file's process, never on the GUI thread
(gui/models/kernel_rules.py): a launch it has not answered yet is shown as "grid: asking FILE…"
(`LaunchState.asking`, no geometry), asked of a worker (`rules_wanted`; gui/rules_jobs.py) and
settled when the answer comes (`rules_answered`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from psygnal import Signal

from gui.models.compiled import (BENCH, BY_HAND, COMPILER, COMPILING, HAND, CompileTarget,
                                 ResourceOrigin, block_params, block_threads, compile_target,
                                 compiled_origin, compiling_origin, failed_origin)
from gui.models.kernel_rules import (RulesPending, RulesRequest, declared_bytes, kernel_grid,
                                     launch_dims)
from gui.models.launch_inputs import (CUSTOM_KERNEL, MAX_ELEMENTS, MAX_REGS, MAX_SMEM, LaunchInputs,
                                      parse_field)
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
from sim.inputs.defaults import DEFAULT_SIDE

KNOWN_MAX = 512  # compiled configurations remembered (a slider's worth, both ways)


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
    asking: str = ""  # "grid: asking FILE…": the kernel's rules have not answered (no geometry yet)

    @property
    def ok(self) -> bool:
        return not self.error and not self.asking and self.occ is not None and self.occ.can_launch

    @property
    def blocks(self) -> int:
        return self.geometry.blocks if self.geometry is not None else 0

    def launch_text(self) -> str:
        """The problem and the block size in a line (the verdicts' header, the export's title)."""
        if self.geometry is not None:
            return launch_text(self.geometry)
        return f"{self.inputs.elements:,} elements × {self.inputs.threads_per_block} threads per block"

    def message(self) -> str:
        if self.error or self.asking:
            return self.error or self.asking
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
            nbytes = declared_bytes(kernel, inputs.elements, launch_dims(inputs))
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


class LaunchModel:
    """The launch being looked at. Emits `changed(LaunchState)` after every accepted change and
    `rejected(message)` when a change is refused (the previous inputs stay). `compile_wanted(
    CompileTarget)` asks for the selected kernel's resources, `sweep_wanted(CompileTarget)` for
    its threads-per-block sweep; the answers come back through `set_compiled` and `set_sweep`.
    `rules_wanted(RulesRequest)` asks a user's file for the launch's grid off the GUI thread;
    the answer (or its one line) comes back through `rules_answered`."""

    changed = Signal(object)
    rejected = Signal(str)
    specs_changed = Signal()
    kernels_changed = Signal()
    compile_wanted = Signal(object)
    sweep_wanted = Signal(object)
    rules_wanted = Signal(object)  # a RulesRequest: ask a user's file off the GUI thread
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
        self._asking: RulesRequest | None = None  # the launch whose rules a worker asks
        self._answered: tuple | None = None  # the launch shown before it, and its CompileTarget
        self._settling: tuple | None = None  # the RulesRequest key whose answer is being taken
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
        except (TypeError, ValueError) as exc:
            self.rejected.emit(str(exc).splitlines()[0])
            return False
        return self._settle(RulesRequest(new_inputs, spec, kernel, origin))

    def _settle(self, request: RulesRequest) -> bool:
        """Make `request`'s launch the current one, or refuse it; a kernel whose file has not
        answered its rules for it yet is asked off the GUI thread first (`_ask`)."""
        new_inputs, spec, kernel, origin = (request.inputs, request.spec, request.kernel,
                                            request.origin)
        try:
            state = compute_state(new_inputs, spec, kernel)
        except RulesPending:
            return self._ask(request)
        self._asking = None
        if state.error:
            self._back_from_asking()
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

    # -- a user's file asked off the GUI thread (gui/models/kernel_rules.py) ------------------
    def _ask(self, request: RulesRequest) -> bool:
        """Show the new inputs with what needs no rule of the kernel's (its occupancy), the
        grid said to be asked for, and ask a worker (`rules_wanted`) unless it is asking these
        rules already; the answer comes to `rules_answered`."""
        if request.key == self._settling:  # answered, yet not at hand: never asked in a loop
            self._back_from_asking()
            self.rejected.emit(f"{request.file} gave no answer the window can keep")
            return False
        if not self._state.asking:
            self._answered = (self._state, self._target)  # where a failed answer goes back to
        asked, self._asking = self._asking, request
        i, spec = request.inputs, request.spec
        try:
            occ = occupancy(spec, i.threads_per_block, i.regs_per_thread, i.smem_per_block,
                            i.carveout_percent)
        except ValueError:  # bad numbers: said once the rules answer
            occ = None
        state = LaunchState(i, spec, occ, None, asking=request.text)
        target = compile_target(request.kernel, state)
        origin, known = ((request.origin, None) if request.origin
                         else self._resolve_origin(target, None))
        self._state = replace(state, origin=origin)
        self.changed.emit(self._state)
        if asked is None or asked.key != request.key:
            self.rules_wanted.emit(request)
        if target != self._target and known is None and origin.kind == COMPILING:
            self._target = target  # the compiler needs no grid: it works meanwhile
            self.compile_wanted.emit(target)
        return True

    def rules_answered(self, request: RulesRequest, error: str = "") -> None:
        """A worker asked `request`'s rules (their answers are at hand here now), or failed in one
        line (`error`); the answer to a launch replaced since is dropped."""
        asking = self._asking
        if asking is None or asking.key != request.key:
            return
        self._asking = None
        if error:
            self._back_from_asking()
            self.rejected.emit(error)
        else:
            self._settling = request.key
            try:
                self._settle(asking)
            finally:
                self._settling = None

    def _back_from_asking(self) -> None:
        """The rules failed for the launch being asked: the last launch they answered stays."""
        if self._state.asking and self._answered is not None:
            self._state, self._target = self._answered
            self.changed.emit(self._state)

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
