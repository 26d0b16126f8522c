"""The one table of live kernels. The GUI's kernel menu, the CLI and the tests all read it.

Each row names a kernel, its backend, its launcher (``"module:function"``, imported only when a
kernel is bound, so reading the table needs no GPU library), its float64 reference and its trips
(array-sized passes through global memory), from which ``bytes_moved`` is computed.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Callable

from sim.errors import UserError

from . import reference
from .launch import Launch

BLOCK_PARAMS = ("threads", "BLOCK_SIZE", None)
KINDS = ("elementwise", "lanes", "trace")


@dataclass(frozen=True, slots=True)
class KernelSpec:
    name: str
    backend: str  # "numba" | "triton" | "torch"
    title: str
    description: str
    trips: int  # array-sized trips through global memory per call
    block_param: str | None  # "threads" (Numba), "BLOCK_SIZE" (Triton) or None (torch: fixed)
    default_block: int  # threads per block (Numba, torch, trace) or elements per program (Triton)
    teaching: bool  # the article's version, kept for what it teaches rather than for speed
    launcher: str  # "module:function" with bind(inputs, out, block, num_warps) -> Launch
    reference: Callable | None  # float64 numpy function of the inputs (None: see kind)
    arity: int  # input arrays
    group: str  # what it computes: "add", "add_relu", "copy", "square", "lanes", "trace"
    kind: str = "elementwise"  # "elementwise" (benchable), "lanes", "trace"
    default_num_warps: int | None = None  # Triton's num_warps (Numba/torch: None)
    kernels_per_call: int = 1  # GPU kernels one call launches (eager add+ReLU: 2)
    cpu_max_elements: int = 1_048_583  # largest size the interpreter/simulator check runs

    def bytes_moved(self, elements: int, itemsize: int = 4) -> int:
        return reference.bytes_moved(self.trips, elements, itemsize)

    @property
    def benchable(self) -> bool:
        return self.kind == "elementwise"

    @property
    def block_label(self) -> str:
        return {"threads": "threads per block", "BLOCK_SIZE": "BLOCK_SIZE"}.get(
            self.block_param, "fixed by torch")

    def bind(self, inputs, out, block: int | None = None, num_warps: int | None = None) -> Launch:
        """Import the launcher (and with it the backend) and bind it to these tensors."""
        module, function = self.launcher.split(":")
        bind = getattr(importlib.import_module(module), function)
        block = self.default_block if block is None else block
        if self.backend == "triton":
            return bind(inputs, out, block, num_warps or self.default_num_warps)
        return bind(inputs, out, block, num_warps)


def _triton(name, title, description, trips, launcher, ref, arity, group, *, block=1024,
            warps=4, teaching=False) -> KernelSpec:
    return KernelSpec(name, "triton", title, description, trips, "BLOCK_SIZE", block, teaching,
                      f"kernels.triton_kernels:{launcher}", ref, arity, group,
                      default_num_warps=warps)


def _numba(name, title, description, trips, launcher, ref, arity, group, *, teaching=False,
           cpu_max=4_099) -> KernelSpec:
    # The simulator runs ~7,000 threads a second: sizes above cpu_max would take minutes there.
    return KernelSpec(name, "numba", title, description, trips, "threads", 256, teaching,
                      f"kernels.numba_kernels:{launcher}", ref, arity, group,
                      cpu_max_elements=cpu_max)


def _torch(name, title, description, trips, launcher, ref, arity, group, *,
           kernels=1) -> KernelSpec:
    # 128: the threads per block of torch's vectorized elementwise kernels (not settable).
    return KernelSpec(name, "torch", title, description, trips, None, 128, False,
                      f"kernels.torch_peers:{launcher}", ref, arity, group,
                      kernels_per_call=kernels)


KERNELS: list[KernelSpec] = [
    # vector add: 3 trips (read x, read y, write out)
    _numba("add_numba_naive", "Vector add, Numba, one thread per element",
           "The article's kernel: i = blockIdx.x * blockDim.x + threadIdx.x; "
           "if i < n: out[i] = x[i] + y[i].",
           3, "bind_add_naive", reference.add, 2, "add", teaching=True),
    _numba("add_numba", "Vector add, Numba, 4 elements per thread",
           "Fast Numba add: 4 coalesced elements per thread, all loads issued before any store.",
           3, "bind_add", reference.add, 2, "add"),
    _numba("add_numba_gridstride", "Vector add, Numba, grid-stride loop",
           "A fixed grid of 8 blocks per SM loops over the array "
           "(for the notes on the naive kernel).",
           3, "bind_add_gridstride", reference.add, 2, "add", cpu_max=1_048_583),
    _triton("add_triton_tutorial", "Vector add, Triton tutorial",
            "The article's Triton kernel: BLOCK_SIZE 1024, 4 warps, int32 offsets, no cache hints.",
            3, "bind_add_tutorial", reference.add, 2, "add", block=1024, warps=4, teaching=True),
    _triton("add_triton", "Vector add, Triton, fast",
            "The tutorial's tile (1024 elements, 4 warps) with 64-bit offsets: "
            "correct past 2^31 elements.",
            3, "bind_add", reference.add, 2, "add"),
    _torch("add_torch", "Vector add, torch.add", "The peer: torch.add(x, y, out=out).",
           3, "bind_add", reference.add, 2, "add"),
    # add+ReLU: eager = 2 kernels, 5 trips; fused = 1 kernel, 3 trips
    _torch("add_relu_torch_eager", "add+ReLU, torch eager (2 kernels)",
           "(x + y).relu(): the add writes tmp, clamp_min reads it back: 5 array-sized trips.",
           5, "bind_add_relu_eager", reference.add_relu, 2, "add_relu", kernels=2),
    _torch("add_relu_torch_compile", "add+ReLU, torch.compile (1 fused kernel)",
           "torch.compile fuses the line into one Triton kernel: 3 trips.",
           3, "bind_add_relu_compile", reference.add_relu, 2, "add_relu"),
    _triton("add_relu_triton", "add+ReLU, Triton, fused",
            "Hand-written fused kernel: read x, read y, write max(x + y, 0): 3 trips.",
            3, "bind_add_relu", reference.add_relu, 2, "add_relu"),
    _numba("add_relu_numba", "add+ReLU, Numba, fused",
           "Hand-written fused kernel, 4 elements per thread: 3 trips.",
           3, "bind_add_relu", reference.add_relu, 2, "add_relu"),
    # copy: the bandwidth ceiling, 2 trips
    _torch("copy_torch", "Copy, torch (the bandwidth ceiling)",
           "out.copy_(x): a device-to-device copy, 2 trips, nothing else to do.",
           2, "bind_copy", reference.copy, 1, "copy"),
    _triton("copy_triton", "Copy, Triton", "The fast add's tile, one input: 2 trips.",
            2, "bind_copy", reference.copy, 1, "copy"),
    # square: the article's second example, 2 trips
    _numba("square_numba", "Square, Numba, one thread per element",
           "The article's second example: out[i] = in[i] * in[i].",
           2, "bind_square", reference.square, 1, "square", teaching=True),
    _triton("square_triton", "Square, Triton", "out = x * x, fast tile: 2 trips.",
            2, "bind_square", reference.square, 1, "square"),
    _torch("square_torch", "Square, torch", "torch.mul(x, x, out=out): 2 trips.",
           2, "bind_square", reference.square, 1, "square"),
    # not elementwise streams: one block's lanes, and the block-placement trace
    KernelSpec("lanes_numba", "numba", "Hello, warp lanes",
               "One block of N threads writes cuda.laneid: which of each warp's 32 lanes run.",
               1, "threads", 250, True, "kernels.numba_kernels:warp_lanes", None, 0, "lanes",
               kind="lanes"),
    KernelSpec("trace_triton", "triton", "Block-placement trace",
               "Each program spins for a set time and records its SM (%smid), start and end "
               "(%globaltimer) through inline PTX: a real schedule to lay beside the "
               "simulated one.",
               0, None, 128, False, "kernels.trace:record_trace", None, 0, "trace",
               kind="trace", default_num_warps=4),
]

_BY_NAME = {k.name: k for k in KERNELS}
assert len(_BY_NAME) == len(KERNELS), "kernel names must be unique"


def get_kernel(name: str) -> KernelSpec:
    try:
        return _BY_NAME[name]
    except KeyError:
        raise UserError(f"unknown kernel {name!r}; known: {', '.join(_BY_NAME)}") from None


def kernel_names(benchable_only: bool = False) -> list[str]:
    return [k.name for k in KERNELS if k.benchable or not benchable_only]


def parse_kernel_list(text: str) -> list[KernelSpec]:
    """"add_triton,add_torch" or "all" or a group name ("add", "add_relu", ...) -> kernels."""
    out: list[KernelSpec] = []
    for item in (t.strip() for t in text.split(",")):
        if not item:
            continue
        if item == "all":
            group = [k for k in KERNELS if k.benchable]
        else:
            group = [k for k in KERNELS if k.group == item and k.benchable] or [get_kernel(item)]
        out += [k for k in group if k not in out]
    if not out:
        raise UserError("no kernel named; give --kernel NAME[,NAME]")
    return out
