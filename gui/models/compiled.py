"""Where the launch's registers and shared memory come from, and what the compiler is asked.

A registry kernel's registers and shared memory are the compiler's to decide. The launch model
asks for them with a `CompileTarget` (the kernel, the selected GPU's compute capability, the block
parameters, the size); gui/jobs.py compiles it in the compiler host (kernels/offline_compile/resources.py) and hands
back a `kernels.offline_compile.resources.LaunchResources` or a `CompileFailed`. `ResourceOrigin` is what the
views say about the numbers: from the compiler, being compiled, from bench results, by hand, or
why the compiler could not say. Plain data: no Qt, no kernels import.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from sim.inputs.errors import UserError
from sim.rules.occupancy import occupancy

HAND, COMPILER, COMPILING, BENCH, FAILED = "hand", "compiler", "compiling", "bench", "failed"
MAX_REGISTERS = "max_registers"  # a target's register cap, kept among its block parameters


@dataclass(frozen=True, slots=True)
class CompileFailed:
    """The compiler's answer when it has none: its first line, its whole output (a plain record:
    it comes back from the compiler host)."""

    text: str
    log: str = ""
    cancelled: bool = False

    def __str__(self) -> str:
        return self.text


def sm_name(cc: tuple[int, int]) -> str:
    return f"sm_{cc[0]}{cc[1]}"


@dataclass(frozen=True, slots=True)
class CompileTarget:
    """One configuration the selected kernel's launch needs compiled."""

    kernel: str
    cc: tuple[int, int]
    params: tuple[tuple[str, Any], ...]  # block parameters, sorted: hashable and comparable
    elements: int
    spec: Any = field(default=None, compare=False, hash=False, repr=False)  # the KernelSpec

    @property
    def block(self) -> dict:
        return dict(self.params)

    def config(self) -> tuple:
        """What decides the code apart from the size (the size only through its alignment)."""
        return self.kernel, self.cc, self.params

    def describe(self) -> str:
        """"BLOCK_SIZE 4096, 8 warps for sm_80"."""
        parts = [f"{v} warps" if k == "num_warps" else f"{k} {v}" for k, v in self.params
                 if k != "num_stages"]
        return f"{', '.join(parts)} for {sm_name(self.cc)}"

    def with_block(self, **changes) -> CompileTarget:
        params = tuple(sorted({**self.block, **changes}.items()))
        return CompileTarget(self.kernel, self.cc, params, self.elements, self.spec)

    def sweep_key(self) -> tuple:
        """Targets that differ only in num_warps share one threads-per-block sweep."""
        return (self.kernel, self.cc, tuple(p for p in self.params if p[0] != "num_warps"),
                self.elements)


def block_params(kernel, inputs) -> dict:
    """The kernel's block parameters for a launch's inputs: Triton's BLOCK_SIZE and num_warps (the
    threads are 32 x num_warps), Numba's threads per block."""
    if kernel.backend == "triton":
        params = {"num_warps": max(1, inputs.threads_per_block // 32)}
        if kernel.block_param and kernel.block_param != "num_warps":
            params[kernel.block_param] = inputs.block_size or kernel.default_block
        for part in filter(None, getattr(inputs, "block_extra", "").split(",")):
            name, _, value = part.partition("=")  # "BLOCK_N=128,num_stages=4"
            params[name.strip()] = int(value)
        return params
    if kernel.block_param == "threads":
        return {"threads": numba_threads(kernel, inputs.threads_per_block)}
    return {kernel.block_param: inputs.threads_per_block} if kernel.block_param else {}


def numba_threads(kernel, threads: int):
    """A thread count as the kernel's block shape: a 2D or 3D block keeps its x extent (a warp's
    row of neighbours) and takes the rest in y."""
    default = kernel.block.get("threads")
    if not isinstance(default, (tuple, list)) or len(default) < 2:
        return threads
    x = min(int(default[0]), threads)
    if threads % x:
        raise UserError(f"{kernel.name} has {len(default)}-D blocks {x} threads wide: threads "
                        f"per block must be a multiple of {x}, got {threads:,}")
    return (x, threads // x) + (1,) * (len(default) - 2)


def block_threads(kernel) -> int:
    """Threads per block of the kernel's default block."""
    default = kernel.block.get("threads", kernel.default_block)
    if isinstance(default, (tuple, list)):
        return math.prod(int(d) for d in default)
    return int(default)


def compile_target(kernel, state) -> CompileTarget | None:
    """What the compiler must be asked for this launch of `kernel` (None: a custom launch, or
    inputs the kernel cannot take)."""
    if kernel is None or state.error or not kernel.launchable:
        return None
    try:
        params = kernel.block_params(block_params(kernel, state.inputs))
    except (UserError, TypeError, ValueError):
        return None
    if getattr(state.inputs, "max_registers", 0):  # compiled with the cap (gui/jobs.py passes it on)
        params[MAX_REGISTERS] = state.inputs.max_registers
    return CompileTarget(kernel.name, tuple(state.spec.compute_capability),
                         tuple(sorted(params.items())), state.inputs.elements, kernel)



@dataclass(frozen=True, slots=True)
class ResourceOrigin:
    """Where the registers and shared memory of the launch came from, for the views."""

    kind: str = HAND  # HAND | COMPILER | COMPILING | BENCH | FAILED
    text: str = "set by hand"  # one line: "triton 3.7.1 for sm_80"
    stack_bytes: int = 0  # per thread, from the compiler: spills and local arrays
    log: str = ""  # a failure's whole compiler output

    @property
    def spills(self) -> bool:
        return self.stack_bytes > 0

    @property
    def compiled(self) -> bool:
        return self.kind == COMPILER


BY_HAND = ResourceOrigin()


def provisional_text(origin: ResourceOrigin) -> str:
    """What the occupancy views say instead of an answer while the registers and shared memory
    are not known ("" once they are): an occupancy worked out from registers the compiler has
    not given yet (zero, or another launch's) would be a confident wrong number."""
    if origin.kind == COMPILING:
        return "registers: compiling…"
    if origin.kind == FAILED:
        return "registers: unknown (the compiler gave none: see Kernel source)"
    return ""


def compiled_origin(res) -> ResourceOrigin:
    """For a kernels.offline_compile.resources.LaunchResources."""
    return ResourceOrigin(COMPILER, res.source, int(res.stack_bytes))


def compiling_origin(target: CompileTarget) -> ResourceOrigin:
    return ResourceOrigin(COMPILING, f"compiling {target.kernel}, {target.describe()}…")


def failed_origin(error) -> ResourceOrigin:
    return ResourceOrigin(FAILED, str(error).strip().splitlines()[0] if str(error).strip()
                          else type(error).__name__, 0, getattr(error, "log", "") or str(error))


def threads_curve(spec, sweep: dict, carveout: int | None) -> tuple[list[int], list[int]]:
    """Active warps per SM against threads per block for a Triton kernel, each point with the
    registers and shared memory the compiler gave that many warps (`sweep`: num_warps ->
    LaunchResources, or an error, which leaves a gap)."""
    xs, ys = [], []
    for warps, res in sorted(sweep.items()):
        threads = 32 * warps
        if not hasattr(res, "regs_per_thread") or threads > spec.max_threads_per_block:
            continue
        occ = occupancy(spec, threads, res.regs_per_thread, res.smem_per_block, carveout)
        xs.append(threads)
        ys.append(occ.active_warps_per_sm if occ.can_launch else 0)
    return xs, ys
