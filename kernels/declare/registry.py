"""The built-in kernels, declared the way a user's kernel file declares its own
(docs/KERNEL_FILES.md). The GUI's kernel menu, the CLI and the tests all read this table.

A kernel is named as "module:function" so that reading the table imports no GPU library; the
kernel's grid rule (`tile` or `grid`) lives here, beside its other facts, and nowhere else.
"""

from __future__ import annotations

from sim.inputs.errors import UserError

from kernels.bodies import reference
from kernels.declare.matmul_problem import AUTO_VARIANTS, MATMUL
from kernels.declare.spec import KernelSpec, cdiv, declare

TRITON = "kernels.bodies.triton_kernels"
NUMBA = "kernels.bodies.numba_kernels"
TORCH = "kernels.bodies.torch_peers"
FOUR = 4  # elements per thread of the fast Numba kernels (numba_kernels.ELEMENTS_PER_THREAD)
TORCH_CPU_MAX = 1_048_583
NUMBA_CPU_MAX = 4_099  # the simulator runs ~7,000 threads a second


def _triton(name, kernel, title, description, group, ref, *, inputs=2, teaching=False, **more):
    return declare(dict(name=name, kernel=f"{TRITON}:{kernel}", backend="triton", title=title,
                        description=description, group=group, reference=ref, inputs=inputs,
                        block=dict(BLOCK_SIZE=1024, num_warps=4), teaching=teaching, **more))


def _numba(name, kernel, title, description, group, ref, *, inputs=2, teaching=False,
           cpu_max=NUMBA_CPU_MAX, **more):
    return declare(dict(name=name, kernel=f"{NUMBA}:{kernel}", backend="numba", title=title,
                        description=description, group=group, reference=ref, inputs=inputs,
                        block=dict(threads=256), teaching=teaching, cpu_max_elements=cpu_max,
                        **more))


def _torch(name, kernel, title, description, group, ref, *, inputs=2, **more):
    return declare(dict(name=name, kernel=f"{TORCH}:{kernel}", backend="torch", title=title,
                        description=description, group=group, reference=ref, inputs=inputs,
                        cpu_max_elements=TORCH_CPU_MAX, **more))


def _gridstride_grid(n, threads, sm_count):
    """A fixed grid of 8 blocks per SM (fewer if the array is smaller)."""
    return min(8 * sm_count, cdiv(n, threads))


KERNELS: list[KernelSpec] = [
    # vector add: 3 trips (read x, read y, write out)
    _numba("add_numba_naive", "add_naive_kernel", "Vector add, Numba, one thread per element",
           "The article's kernel: i = blockIdx.x * blockDim.x + threadIdx.x; "
           "if i < n: out[i] = x[i] + y[i].", "add", reference.add, teaching=True),
    _numba("add_numba", "add_kernel", "Vector add, Numba, 4 elements per thread",
           "Fast Numba add: 4 coalesced elements per thread, all loads issued before any store.",
           "add", reference.add, tile=lambda threads: FOUR * threads),
    _numba("add_numba_gridstride", "add_gridstride_kernel", "Vector add, Numba, grid-stride loop",
           "A fixed grid of 8 blocks per SM loops over the array (for the notes on the naive "
           "kernel).", "add", reference.add, grid=_gridstride_grid, cpu_max=1_048_583),
    _triton("add_triton_tutorial", "add_kernel", "Vector add, Triton tutorial",
            "The article's Triton kernel: BLOCK_SIZE 1024, 4 warps, int32 offsets, no cache hints.",
            "add", reference.add, teaching=True),
    _triton("add_triton", "add_fast_kernel", "Vector add, Triton, fast",
            "The tutorial's tile (1024 elements, 4 warps) with 64-bit offsets: correct past 2^31 "
            "elements.", "add", reference.add),
    _torch("add_torch", "add", "Vector add, torch.add", "The peer: torch.add(x, y, out=out).",
           "add", reference.add),
    # add+ReLU: eager = 2 kernels, 5 trips; fused = 1 kernel, 3 trips
    _torch("add_relu_torch_eager", "add_relu_eager", "add+ReLU, torch eager (2 kernels)",
           "(x + y).relu(): the add writes tmp, clamp_min reads it back: 5 array-sized trips.",
           "add_relu", reference.add_relu, bytes=lambda n: 5 * 4 * n, kernels_per_call=2),
    _torch("add_relu_torch_compile", "add_relu_compile", "add+ReLU, torch.compile (1 fused kernel)",
           "torch.compile fuses the line into one Triton kernel: 3 trips.", "add_relu",
           reference.add_relu),
    _triton("add_relu_triton", "add_relu_kernel", "add+ReLU, Triton, fused",
            "Hand-written fused kernel: read x, read y, write max(x + y, 0): 3 trips.", "add_relu",
            reference.add_relu),
    _numba("add_relu_numba", "add_relu_kernel", "add+ReLU, Numba, fused",
           "Hand-written fused kernel, 4 elements per thread: 3 trips.", "add_relu",
           reference.add_relu, tile=lambda threads: FOUR * threads),
    # copy: the bandwidth ceiling, 2 trips
    _torch("copy_torch", "copy", "Copy, torch (the bandwidth ceiling)",
           "out.copy_(x): a device-to-device copy, 2 trips, nothing else to do.", "copy",
           reference.copy, inputs=1),
    _triton("copy_triton", "copy_kernel", "Copy, Triton", "The fast add's tile, one input: 2 trips.",
            "copy", reference.copy, inputs=1),
    # square: the article's second example, 2 trips
    _numba("square_numba", "square_kernel", "Square, Numba, one thread per element",
           "The article's second example: out[i] = in[i] * in[i].", "square", reference.square,
           inputs=1, teaching=True),
    _triton("square_triton", "square_kernel", "Square, Triton", "out = x * x, fast tile: 2 trips.",
            "square", reference.square, inputs=1),
    _torch("square_torch", "square", "Square, torch", "torch.mul(x, x, out=out): 2 trips.",
           "square", reference.square, inputs=1),
    # matrix products: one output tile per program, where wave quantization costs the most
    *(declare(d) for d in MATMUL),
    # not streams: one block's lanes, and the block-placement trace
    declare(dict(name="lanes_numba", kernel=f"{NUMBA}:lanes_kernel", backend="numba",
                 title="Hello, warp lanes", kind="lanes", group="lanes", teaching=True,
                 description="One block of N threads writes cuda.laneid: which of each warp's 32 "
                             "lanes run.", block=dict(threads=250))),
    declare(dict(name="trace_triton", kernel="kernels.bodies.trace_kernels:placement_kernel", backend="triton",
                 title="Block-placement trace", kind="trace", group="trace",
                 description="Each program spins for a set time and records its SM (%smid), start "
                             "and end (%globaltimer) through inline PTX: a real schedule to lay "
                             "beside the simulated one.", block=dict(num_warps=4))),
]

_BY_NAME = {k.name: k for k in KERNELS}
assert len(_BY_NAME) == len(KERNELS), "kernel names must be unique"
_OPENED: dict[str, KernelSpec] = {}  # kernels from users' files, added when opened


def add_kernels(specs) -> None:
    """Kernels from a user's file (and their torch peers) join the table for this session."""
    for spec in specs:
        if spec.name in _BY_NAME:
            raise UserError(f"{spec.origin}: {spec.name!r} is the name of a built-in kernel; "
                            "give the declaration another 'name'")
        _OPENED[spec.name] = spec


def all_kernels() -> list[KernelSpec]:
    return KERNELS + list(_OPENED.values())


def get_kernel(name: str) -> KernelSpec:
    spec = _BY_NAME.get(name) or _OPENED.get(name)
    if spec is None:
        known = ", ".join(k.name for k in all_kernels())
        raise UserError(f"unknown kernel {name!r}; known: {known}")
    return spec


def kernel_names(benchable_only: bool = False) -> list[str]:
    return [k.name for k in all_kernels() if k.benchable or not benchable_only]


def parse_kernel_list(text: str) -> list[KernelSpec]:
    """"add_triton,add_torch" or "all" or a group name ("add", "add_relu", ...) -> kernels."""
    out: list[KernelSpec] = []
    for item in (t.strip() for t in text.split(",")):
        if not item:
            continue
        if item == "all":
            group = [k for k in all_kernels() if k.benchable]
        else:
            group = [k for k in all_kernels() if k.group == item and k.benchable] or [get_kernel(item)]
        out += [k for k in group if k not in out]
    if not out:
        raise UserError("no kernel named; give --kernel NAME[,NAME]")
    return out


def matmul_variants() -> dict[str, KernelSpec]:
    """matmul_auto's candidates' declarations, by variant (sim.model.matmul_choice.VARIANTS)."""
    return {variant: _BY_NAME[name] for variant, name in AUTO_VARIANTS.items()}


_CHOICES: dict = {}  # (sizes, GPU, dtype) -> choice: the grid rule asks at every slider move


def matmul_choice(dims: dict, gpu, dtype: str | None = None):
    """matmul_auto's choice for an M x N x K product on `gpu` (sim.model.matmul_choice.choose);
    `dtype` default: bf16 where the GPU has a bf16 tensor rate, else fp16."""
    from sim.model.matmul_choice import choose

    dtype = dtype or ("bfloat16" if gpu.tensor_tflops_bf16 or gpu.detected else "float16")
    key = (tuple(int(dims[k]) for k in ("M", "N", "K")), gpu, dtype)
    if key not in _CHOICES:
        if len(_CHOICES) > 256:
            _CHOICES.clear()
        _CHOICES[key] = choose(matmul_variants(), dims, gpu, dtype)
    return _CHOICES[key]


def auto_gpu(sm_count: int | None):
    """The GPU matmul_auto predicts for when only an SM count is known (a grid rule, a launch on a
    device): the preset with that many SMs and a tensor rate, else the H200's figures on that
    many SMs (the simulator's 4)."""
    from dataclasses import replace

    from sim.rules.devices import preset, presets

    h200 = preset("H200")
    if not sm_count or sm_count == h200.sm_count:
        return h200
    for name in presets():
        gpu = preset(name)
        if gpu.sm_count == sm_count and gpu.tensor_tflops_fp16:
            return gpu
    return replace(h200, sm_count=int(sm_count))
