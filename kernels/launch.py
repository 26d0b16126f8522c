"""What a launcher hands back: a ready-to-run launch and, once it has run, the compiled resources.

Every backend's launcher has the same shape, ``bind(inputs, out, block, num_warps) -> Launch``:
it does the one-time work (grid arithmetic, wrapping torch tensors for Numba) so that
``Launch.run()`` is only the launch itself, which is what the timing harness repeats.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable


@dataclass(frozen=True, slots=True)
class Resources:
    """What the compiler gave one kernel; None where the backend cannot say (interpreter, torch)."""

    regs_per_thread: int | None = None
    smem_per_block_bytes: int | None = None
    spills: int | None = None


NO_RESOURCES = Resources()


@dataclass(frozen=True, slots=True)
class Launch:
    run: Callable[[], object]  # launches once; asynchronous on a GPU
    grid_blocks: int | None  # blocks (CUDA) / programs (Triton) in the grid; None for torch ops
    threads_per_block: int | None  # CUDA threads per block (Triton: 32 * num_warps)
    block_size: int | None  # elements one block / program handles
    num_warps: int | None
    resources: Callable[[], Resources] = lambda: NO_RESOURCES  # call after the first run()
    output: Callable[[], object] | None = None  # where the result is, if not in `out` (torch ops)


def cdiv(a: int, b: int) -> int:
    """Ceiling division: blocks needed to cover a elements with b per block."""
    return -(-a // b)


def check_threads(threads_per_block: int) -> None:
    """CUDA's block limit, as a clear error before anything launches."""
    from sim.errors import UserError

    if not 1 <= threads_per_block <= 1024:
        raise UserError(f"threads per block must be 1..1024, got {threads_per_block}")


def check_block(block_size: int, num_warps: int) -> None:
    """Triton's own limits, as a clear error instead of a compiler traceback."""
    from sim.errors import UserError

    if block_size < 1 or block_size & (block_size - 1) or block_size > 1 << 17:
        raise UserError(f"Triton BLOCK_SIZE must be a power of two up to 131072, got {block_size}")
    if num_warps not in (1, 2, 4, 8, 16, 32):
        raise UserError(f"num_warps must be 1, 2, 4, 8, 16 or 32, got {num_warps}")
