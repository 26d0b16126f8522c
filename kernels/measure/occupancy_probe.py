"""Force a Numba kernel's occupancy down: pad each block with dynamic shared memory it never
touches, so that exactly N blocks fit on an SM.

The padding comes from ``sim.rules.occupancy`` (the driver's own rules), not from a formula of our own:
of all paddings that give exactly N blocks per SM we take the middle one, so an allocation rule a
few bytes off cannot tip it to N - 1 or N + 1. On a GPU the launch also asks the driver
(cuOccupancyMaxActiveBlocksPerMultiprocessor) and records its answer beside ours.

Above 48 KiB a kernel must opt in to dynamic shared memory
(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES). numba-cuda 0.30 has no public call for it, so
:func:`_allow_dynamic_smem` sets it on the compiled function the way numba-cuda's own
``set_shared_memory_carveout`` sets the carveout. The attribute only permits; launches without
padding are unchanged by it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

from sim.rules.devices import GpuSpec
from sim.inputs.errors import UserError
from sim.rules.occupancy import Occupancy, occupancy



# --------------------------------------------------------------------------------------------
# The padding (pure: sim.rules.occupancy only)
# --------------------------------------------------------------------------------------------
def natural_occupancy(gpu: GpuSpec, threads_per_block: int, regs_per_thread: int = 0,
                      static_smem_bytes: int = 0) -> Occupancy:
    """Occupancy of the launch as compiled, with no padding."""
    return occupancy(gpu, threads_per_block, regs_per_thread, static_smem_bytes)


def _blocks_with(gpu: GpuSpec, threads: int, regs: int, static: int, padding: int) -> int:
    return occupancy(gpu, threads, regs, static + padding).blocks_per_sm


def check_threads(threads_per_block: int) -> None:
    if not 1 <= threads_per_block <= 1024:
        raise UserError(f"threads per block must be 1..1024, got {threads_per_block}")


def dynamic_smem_for(gpu: GpuSpec, threads_per_block: int, target_blocks_per_sm: int,
                     regs_per_thread: int = 0, static_smem_bytes: int = 0) -> int:
    """Bytes of dynamic shared memory per block that leave exactly `target_blocks_per_sm`
    blocks resident per SM: the middle of the range of such paddings (in allocation units).
    UserError if no padding gives that many (more than fit unpadded, or fewer than one)."""
    check_threads(threads_per_block)
    natural = natural_occupancy(gpu, threads_per_block, regs_per_thread, static_smem_bytes)
    if not natural.can_launch:
        raise UserError(f"a block of {threads_per_block} threads cannot launch: {natural.reason}")
    target = int(target_blocks_per_sm)
    if not 1 <= target <= natural.blocks_per_sm:
        raise UserError(
            f"{target} blocks of {threads_per_block} threads per SM cannot be forced: padding "
            f"only lowers occupancy, and unpadded {natural.blocks_per_sm} fit "
            f"(limited by {' and '.join(natural.limited_by)})")
    unit = gpu.smem_alloc_unit_bytes
    top = gpu.smem_per_block_optin_bytes // unit  # paddings are k * unit, k = 0..top

    def blocks(k: int) -> int:
        return _blocks_with(gpu, threads_per_block, regs_per_thread, static_smem_bytes, k * unit)

    # blocks(k) never rises with k: bisect for the first k below target + 1 and below target.
    first = _first_k(blocks, top, lambda b: b <= target)
    past = _first_k(blocks, top, lambda b: b < target)
    if first is None or blocks(first) != target:
        raise UserError(f"no shared-memory padding gives exactly {target} blocks of "
                        f"{threads_per_block} threads per SM on {gpu.name}")
    last = (top if past is None else past - 1)
    return (first + last) // 2 * unit


def _first_k(blocks: Callable[[int], int], top: int, ok: Callable[[int], bool]) -> int | None:
    """Smallest k in 0..top with ok(blocks(k)), given blocks non-increasing; None if none."""
    if not ok(blocks(top)):
        return None
    lo, hi = 0, top
    while lo < hi:
        mid = (lo + hi) // 2
        if ok(blocks(mid)):
            hi = mid
        else:
            lo = mid + 1
    return lo


def padding_plan(gpu: GpuSpec, threads_per_block: int, targets, regs_per_thread: int = 0,
                 static_smem_bytes: int = 0) -> list[tuple[int, int, Occupancy]]:
    """(target, dynamic smem bytes, predicted Occupancy) for each target that can be forced;
    targets above what fits unpadded are left out (so a fixed list serves every block size)."""
    natural = natural_occupancy(gpu, threads_per_block, regs_per_thread, static_smem_bytes)
    plan = []
    for target in sorted(set(int(t) for t in targets)):
        if 1 <= target <= natural.blocks_per_sm:
            pad = dynamic_smem_for(gpu, threads_per_block, target, regs_per_thread,
                                   static_smem_bytes)
            plan.append((target, pad, occupancy(gpu, threads_per_block, regs_per_thread,
                                                static_smem_bytes + pad)))
    return plan


def loads_before_first_store(ptx: str) -> int:
    """Global loads in a kernel's PTX before its first global store, in program order: for a
    one-trip streaming kernel, the loads each thread has in flight at once (the naive add: 2;
    the four-per-thread add: 8)."""
    count = 0
    for op in re.findall(r"\b(ld|st)\.global\b", ptx):
        if op == "st":
            break
        count += 1
    return count


# --------------------------------------------------------------------------------------------
# The launch (Numba; on a GPU or in numba-cuda's simulator)
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class PaddedLaunch:
    run: Callable[[], object]  # one launch; asynchronous on a GPU
    grid_blocks: int
    threads_per_block: int
    dynamic_smem_bytes: int  # the padding (0: unpadded)
    target_blocks_per_sm: int | None  # None: unpadded, whatever fits
    predicted: Occupancy  # sim.rules.occupancy with the compiled resources and the padding
    regs_per_thread: int | None  # as compiled (None in the simulator)
    static_smem_bytes: int | None
    driver_blocks_per_sm: int | None  # the driver's occupancy API; None where it cannot say
    driver_note: str = ""  # why the driver gave no answer


def padded_launch(kernel, args, grid_blocks: int, threads_per_block: int, gpu: GpuSpec,
                  target_blocks_per_sm: int | None = None) -> PaddedLaunch:
    """Bind a ``@cuda.jit`` kernel to device arrays `args` (``kernels.bodies.numba_kernels.
    device_arrays``) so that exactly `target_blocks_per_sm` blocks fit per SM (None: unpadded).

    Compiles first (without launching) to read the registers the padding must account for."""
    from kernels.bodies.numba_kernels import SIMULATED

    check_threads(threads_per_block)
    if grid_blocks < 1:
        raise UserError(f"a launch needs at least one block, got {grid_blocks}")
    overload = None if SIMULATED else _compile(kernel, args)
    regs = int(overload.regs_per_thread) if overload is not None else None
    static = int(overload.shared_mem_per_block) if overload is not None else None
    if target_blocks_per_sm is None:
        pad = 0
    else:
        pad = dynamic_smem_for(gpu, threads_per_block, target_blocks_per_sm, regs or 0,
                               static or 0)
    predicted = occupancy(gpu, threads_per_block, regs or 0, (static or 0) + pad)
    driver, note = (None, "numba-cuda's simulator has no occupancy API")
    if overload is not None:
        cufunc = _allow_dynamic_smem(overload, pad)
        driver, note = _driver_blocks_per_sm(cufunc, threads_per_block, pad)
    configured = kernel[grid_blocks, threads_per_block, 0, pad]

    def run():
        configured(*args)

    return PaddedLaunch(run, int(grid_blocks), int(threads_per_block), pad, target_blocks_per_sm,
                        predicted, regs, static, driver, note)


def _compile(kernel, args):
    import numba

    sig = tuple(numba.typeof(a) for a in args)
    overload = kernel.overloads.get(sig)
    return overload if overload is not None else kernel.compile(sig)


def _allow_dynamic_smem(overload, nbytes: int):
    """Opt the compiled kernel in to `nbytes` of dynamic shared memory (needed above 48 KiB).
    The limit is only ever raised, so an earlier launch with more padding still runs."""
    from numba.cuda.cudadrv.driver import binding, driver

    overload.bind()  # loads the module into the current context
    cufunc = overload._codelibrary.get_cufunc()  # numba-cuda exposes no public handle
    attr = binding.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
    device = cufunc.device.id
    if nbytes > int(driver.cuKernelGetAttribute(attr, cufunc.handle, device)):
        driver.cuKernelSetAttribute(attr, int(nbytes), cufunc.handle, device)
    return cufunc


def _driver_blocks_per_sm(cufunc, threads: int, smem: int) -> tuple[int | None, str]:
    """The driver's answer, through cuda.core if it has the call, else numba-cuda's context."""
    errors = []
    try:
        return int(cufunc.kernel.occupancy.max_active_blocks_per_multiprocessor(threads, smem)), ""
    except Exception as exc:  # older cuda.core: no occupancy property
        errors.append(f"cuda.core: {type(exc).__name__}: {exc}")
    try:
        from kernels.launching.compat import numba_cuda

        ctx = numba_cuda().current_context()
        return int(ctx.get_active_blocks_per_multiprocessor(cufunc, threads, smem)), ""
    except Exception as exc:
        errors.append(f"numba-cuda: {type(exc).__name__}: {exc}")
    return None, "; ".join(errors)[:300]
