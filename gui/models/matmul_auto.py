"""matmul_auto in the window: it has no kernel of its own, so the launch the window shows (its
occupancy from the candidate's compiled registers and shared memory, its grid, its compute-bound
timeline) is the candidate it chose for these sizes on this GPU, as `explain` resolves it
(kernels/launching/kernel_args.py; the choice: kernels.declare.registry.matmul_choice). No Qt."""

from __future__ import annotations

from dataclasses import replace

AUTO = "matmul_auto"


def launched(kernel, inputs, spec):
    """(the declaration launched, the inputs as it launches): matmul_auto's chosen candidate with
    the threads and block parameters of its tile; any other kernel, unchanged. UserError (a
    ValueError) where no candidate suits these sizes on this GPU."""
    if kernel is None or kernel.name != AUTO:
        return kernel, inputs
    from gui.models.launch import launch_dims
    from kernels.declare.registry import matmul_choice, matmul_variants

    chosen = matmul_choice(kernel.size_dims(inputs.elements, launch_dims(inputs)), spec).chosen
    candidate = matmul_variants()[chosen.variant]
    params = dict(chosen.params)
    threads = 32 * int(params.pop("num_warps"))
    block = params.pop(candidate.block_param, None) if candidate.block_param else None
    extra = ",".join(f"{k}={v}" for k, v in sorted(params.items()))
    return candidate, replace(inputs, threads_per_block=threads, block_size=block, block_extra=extra)
