"""What a launcher hands back: a ready-to-run launch and, once it has run, the compiled resources.

``kernels.launching.launcher.bind`` builds one for any declared kernel: it does the one-time work (the grid
from the declaration, wrapping torch tensors for Numba) so that ``LiveLaunch.run()`` is only the
launch itself, which is what the timing harness repeats.
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
class LiveLaunch:
    run: Callable[[], object]  # launches once; asynchronous on a GPU
    grid_blocks: int | None  # blocks (CUDA) / programs (Triton) in the grid; None for torch ops
    threads_per_block: int | None  # CUDA threads per block (Triton: 32 * num_warps)
    block_size: int | None  # elements one block / program handles
    num_warps: int | None
    resources: Callable[[], Resources] = lambda: NO_RESOURCES  # call after the first run()
    output: Callable[[], object] | None = None  # where the result is, if not in `out` (torch ops)
    grid: tuple[int, ...] | None = None  # the grid as launched (None for torch ops)
