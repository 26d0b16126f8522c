"""Binding a declared kernel to its arrays: one launcher for every Triton, Numba and torch kernel.

The grid comes from the kernel's declaration (``KernelSpec.launch_shape``), the same rule the
window and ``explain`` show, so what is drawn is what is launched. Binding does the one-time work
(resolving the kernel, building its arguments, wrapping tensors for Numba) so that
``LiveLaunch.run()`` is only the launch itself, which is what the timing harness repeats.
"""

from __future__ import annotations


from kernels.launching.launch import NO_RESOURCES, LiveLaunch, Resources
from kernels.declare.spec import KernelSpec, call_with, resolve

TRITON_OPTIONS = ("num_warps", "num_stages")


def kernel_args(spec: KernelSpec, inputs, out, n: int) -> tuple:
    """The kernel's arguments before its constexprs: declared, else the elementwise default."""
    if spec.args is not None:
        return tuple(call_with(spec.args, *inputs, out=out, **spec.size_dims(n)))
    if spec.backend == "triton":
        return (*inputs, out, n)
    return (*inputs, out)


def bind(spec: KernelSpec, inputs, out, n: int, block=None, sm_count: int | None = None,
         dynamic_smem_bytes: int = 0) -> LiveLaunch:
    """A ready-to-run launch of `spec` on these arrays (torch tensors, or numpy in the simulator).
    `block`: a value of the kernel's sweep parameter, or a dict of block parameters.
    `dynamic_smem_bytes` (Numba only) pads each block's shared memory, to force occupancy down."""
    if spec.backend == "torch":
        return _bind_torch(spec, inputs, out)
    shape = spec.launch_shape(n, block, sm_count)
    args = kernel_args(spec, inputs, out, n)
    if spec.backend == "triton":
        return bind_triton(spec, shape, args)
    return bind_numba(spec, shape, args, dynamic_smem_bytes)


def bind_triton(spec, shape, args, kernel=None) -> LiveLaunch:
    """A Triton launch of `args`; `kernel` replaces the declared one (kernels/tracing/instrument.py's
    stamped copy, which takes the same constexprs and grid)."""
    fn = resolve(spec.kernel) if kernel is None else kernel
    params = dict(shape.params)
    options = {k: params.pop(k) for k in TRITON_OPTIONS if k in params}
    constexprs = {**spec.constants, **params}
    grid = shape.grid
    compiled = []  # the CompiledKernel of the first launch (None under the interpreter)

    def run():
        ck = fn[grid](*args, **constexprs, **options)
        if not compiled:
            compiled.append(ck)

    def resources() -> Resources:
        ck = compiled[0] if compiled else None
        if ck is None or not hasattr(ck, "n_regs"):
            return NO_RESOURCES
        return Resources(int(ck.n_regs), int(ck.metadata.shared), int(ck.n_spills))

    return LiveLaunch(run, shape.grid_blocks, shape.threads_per_block, shape.elements_per_block,
                  options.get("num_warps"), resources, grid=grid)


def bind_numba(spec, shape, args, dynamic_smem_bytes: int = 0) -> LiveLaunch:
    from kernels.bodies.numba_kernels import device_arrays, kernel_resources

    fn = resolve(spec.kernel)
    args = device_arrays(args)
    threads = shape.params["threads"]
    grid = shape.grid if len(shape.grid) > 1 else shape.grid[0]
    configured = fn[grid, threads, 0, int(dynamic_smem_bytes)] if dynamic_smem_bytes else fn[grid, threads]

    def run():
        configured(*args)

    return LiveLaunch(run, shape.grid_blocks, shape.threads_per_block, shape.elements_per_block,
                  -(-shape.threads_per_block // 32), lambda: kernel_resources(fn, args),
                  grid=shape.grid)


def _bind_torch(spec, inputs, out) -> LiveLaunch:
    fn = resolve(spec.kernel)
    holder = {}

    def run():
        holder["out"] = fn(*inputs, out=out)

    # A torch op may write into `out` or return a fresh tensor (eager add+ReLU allocates its own).
    return LiveLaunch(run, None, None, None, None,
                  output=lambda: out if holder.get("out") is None else holder["out"])


