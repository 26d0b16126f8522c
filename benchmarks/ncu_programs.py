"""One launch of a project kernel for Nsight Compute to profile (benchmarks/device_run.sh runs it).

    python benchmarks/ncu_programs.py KERNEL SIZE [BLOCK]

KERNEL is a registered kernel (python main.py check --list), SIZE its elements (a matmul's side),
BLOCK its block parameter (Triton: BLOCK_SIZE; Numba: threads). The kernel is launched once to
compile and warm it, then once more between cudaProfilerStart and cudaProfilerStop, so
`ncu --profile-from-start off` records that launch alone (not the inputs' random fills). Prints
one JSON line: the launch as WarpScope bound it (grid, threads, the compiler's resources), for
the README beside the report. Without a GPU it runs on the CPU paths (TRITON_INTERPRET=1,
NUMBA_ENABLE_CUDASIM=1) with no profiler range: a check that the program itself works.
"""

from __future__ import annotations

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main(argv: list[str]) -> int:
    import torch

    from kernels.declare.registry import get_kernel
    from kernels.launching.launcher import bind
    from kernels.measure.harness import make_arrays

    name, size = argv[0], int(float(argv[1]))
    block = int(argv[2]) if len(argv) > 2 else None
    on_gpu = torch.cuda.is_available()
    spec = get_kernel(name)
    inputs, out = make_arrays(spec, size, on_gpu)
    launch = bind(spec, inputs, out, size, block)

    def once():
        launch.run()
        if on_gpu:
            torch.cuda.synchronize()

    once()  # compiles: outside the profiled range
    if on_gpu:
        torch.cuda.cudart().cudaProfilerStart()
    once()
    if on_gpu:
        torch.cuda.cudart().cudaProfilerStop()
    res = launch.resources()
    print(json.dumps({"kernel": name, "size": size, "block": block, "grid": launch.grid,
                      "grid_blocks": launch.grid_blocks, "threads_per_block": launch.threads_per_block,
                      "regs_per_thread": res.regs_per_thread, "smem_per_block_bytes": res.smem_per_block_bytes,
                      "device": torch.cuda.get_device_name() if on_gpu else "cpu"}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
