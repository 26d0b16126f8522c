"""A registry kernel's registers and shared memory at one launch, from its compiler.

What the window, ``explain`` and ``simulate`` show for a kernel no GPU has run: the kernel is
compiled (kernels/offline_compile/compile.py) for the selected GPU's compute capability with the block parameters
and the arguments its launcher would pass at that size, and the cubin says what it uses::

    res = launch_resources(get_kernel("add_triton"), 1_000_000, {"BLOCK_SIZE": 4096}, (8, 0))
    res.regs_per_thread, res.smem_per_block, res.spills, res.source   # "triton 3.7.1 for sm_80"

The arguments only need their types, shapes and integer values (Triton specializes ints divisible
by 16, Numba types arrays by layout), so the built-ins' arrays are views of one element that
claim n (no memory is touched, even at 2^31). A kernel file's ``inputs`` make real arrays; above
``COMPILE_BUDGET_BYTES`` of them the compiler is shown a smaller size with the same remainder
mod 16, which ``elements`` records.
"""

from __future__ import annotations

import traceback
from dataclasses import dataclass, field

import numpy as np

from sim.inputs.errors import UserError

from kernels.offline_compile.compile import CompileError, CompileRequest, CompiledResources, resources_many, spec_request
from kernels.declare.spec import KernelSpec, call_with

COMPILE_BUDGET_BYTES = 64 << 20  # host arrays a kernel file may make just to be compiled
UNKNOWN_SIZE_CAP = 1 << 22  # elements, when a file declares no 'bytes' to judge its arrays by


@dataclass(frozen=True, slots=True)
class LaunchResources:
    """What the compiler gave one kernel at one launch: the occupancy rules' inputs."""

    kernel: str
    cc: tuple[int, int]
    params: dict = field(hash=False)  # the block parameters compiled (BLOCK_SIZE, num_warps, ...)
    elements: int  # the problem size the compiler saw (see compile_elements)
    regs_per_thread: int
    smem_per_block: int  # static + dynamic, as the driver counts it (see occupancy_smem)
    stack_bytes: int  # per thread: spills and local arrays
    compiler: str  # "triton 3.7.1"
    ptxas: str

    @property
    def spills(self) -> bool:
        return self.stack_bytes > 0

    @property
    def target(self) -> str:
        return f"sm_{self.cc[0]}{self.cc[1]}"

    @property
    def source(self) -> str:
        """Where the numbers come from, for a label: "triton 3.7.1 for sm_80"."""
        return f"{self.compiler} for {self.target}"


def occupancy_smem(res: CompiledResources) -> int:
    """Shared memory per block as the driver counts it for occupancy: the cubin's static figure
    without the sm_90+ reserve section (CompiledResources.cubin_reserved_smem_bytes; Triton's
    sm_90+ cubins carry only that 1 KiB: the H200's driver reads 0 for every Triton kernel),
    plus what the launcher asks for."""
    return res.smem_per_block_bytes


def compile_elements(spec: KernelSpec, n: int) -> int:
    """The size the compiler is shown for problem size n: n itself, unless a kernel file's
    inputs would be bigger than COMPILE_BUDGET_BYTES; then a smaller size with n's remainder
    mod 16 (what the launcher's specialization of an int looks at)."""
    n = int(n)
    if isinstance(spec.inputs, int):
        return n  # made without memory (_claimed_arrays)

    def too_big(m: int) -> bool:
        try:
            return spec.bytes_moved(m) > COMPILE_BUDGET_BYTES
        except (UserError, TypeError, ValueError, ArithmeticError):
            return m > UNKNOWN_SIZE_CAP

    if not too_big(n):
        return n
    m = n
    while m > 32 and too_big(m):
        m //= 2
    aligned = m - m % 16 + n % 16
    return aligned if aligned >= 1 else m


def _claimed_arrays(count: int, n: int) -> list[np.ndarray]:
    """float32 arrays that say they hold n elements and own one: enough for a signature."""
    one = np.zeros(1, np.float32)
    return [np.lib.stride_tricks.as_strided(one, shape=(n,), strides=(4,), writeable=False)
            for _ in range(count)]


def launch_arrays(spec: KernelSpec, n: int):
    """(inputs, out) as the launcher would get them at size n (types and shapes are what
    matter). A kernel file's own `inputs` and `output` are called: its code runs here."""
    if isinstance(spec.inputs, int):
        arrays = _claimed_arrays(spec.inputs + 1, n)
        return arrays[:-1], arrays[-1]
    dims = spec.size_dims(n)
    try:
        inputs = [np.asarray(a) for a in call_with(spec.inputs, **dims)]
        out = (call_with(spec.output, *inputs, **dims) if spec.output is not None
               else np.empty_like(inputs[0]))
    except Exception as exc:  # noqa: BLE001 - the user's code: one line, the trace in the log
        raise CompileError(f"{spec.name}: its 'inputs' at n={n:,} raised {_first_line(exc)}",
                           traceback.format_exc()) from None
    return inputs, np.asarray(out)


def _first_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {lines[0]}" if lines else type(exc).__name__


def launch_request(spec: KernelSpec, n: int, block=None, cc=(9, 0),
                   max_registers: int | None = None) -> tuple[CompileRequest, int]:
    """The compile request for `spec` launched at size n with `block` (a sweep value or a dict
    of block parameters) on compute capability `cc`, and the size the compiler is shown."""
    if not spec.launchable:
        raise UserError(f"{spec.name}: torch compiles its own kernels; WarpScope cannot say "
                        "their registers")
    if spec.name == "matmul_auto":  # no kernel of its own: what it launches depends on the sizes
        raise UserError("matmul_auto launches the candidate it chose (the Verdicts list them); "
                        "`explain --kernel matmul_auto --dims ...` compiles that one")
    spec.check_block(block)
    shown = compile_elements(spec, n)
    arrays = launch_arrays(spec, shown)
    try:
        return spec_request(spec, shown, block, cc, arrays=arrays, max_registers=max_registers), shown
    except UserError:
        raise
    except Exception as exc:  # noqa: BLE001 - 'args' is the user's code too
        raise CompileError(f"{spec.name}: its 'args' raised {_first_line(exc)}",
                           traceback.format_exc()) from None


def launch_resources_many(spec: KernelSpec, n: int, blocks, cc, *, cache=None,
                          should_cancel=None, max_registers: int | None = None
                          ) -> list[LaunchResources | CompileError]:
    """launch_resources for several block settings, compiled side by side in one batch; a
    setting that does not compile gives its CompileError in its place."""
    cc = (int(cc[0]), int(cc[1]))
    out: list = [None] * len(blocks)
    pending = []
    for i, block in enumerate(blocks):
        try:
            request, shown = launch_request(spec, n, block, cc, max_registers)
        except UserError as exc:
            out[i] = exc if isinstance(exc, CompileError) else CompileError(str(exc))
            continue
        pending.append((i, request, shown, spec.block_params(block)))
    compiled = resources_many([p[1] for p in pending], cache, should_cancel=should_cancel)
    for (i, _, shown, params), res in zip(pending, compiled):
        if isinstance(res, CompileError):
            out[i] = res
            continue
        out[i] = LaunchResources(spec.name, cc, params, shown, res.regs_per_thread,
                                 occupancy_smem(res), res.stack_bytes, res.compiler, res.ptxas)
    return out


def launch_resources(spec: KernelSpec, n: int, block=None, cc=(9, 0), *, cache=None,
                     should_cancel=None, max_registers: int | None = None) -> LaunchResources:
    """The compiled resources of one launch; CompileError (one line, `.log`) if it does not
    compile, CompileCancelled if `should_cancel()` said stop."""
    [res] = launch_resources_many(spec, n, [block], cc, cache=cache, should_cancel=should_cancel,
                                  max_registers=max_registers)
    if isinstance(res, CompileError):
        raise res
    return res


def kernel_by_ref(name: str, file: str | None = None, digest: str | None = None) -> KernelSpec:
    """A registry kernel by name; or one of a kernel file's, opened in this process for the
    compiler (real compilers, no interpreter: see kernel_file.open_once)."""
    from kernels.declare.registry import get_kernel

    if file is None:
        return get_kernel(name)
    from kernels.declare.kernel_file import open_once

    for spec in open_once(file, digest, cpu_fallback=False):
        if spec.name == name:
            return spec
    raise UserError(f"{file} no longer declares a kernel named {name!r}")


