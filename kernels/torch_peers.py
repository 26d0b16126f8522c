"""The torch peers our kernels are measured against, in the same shape as our launchers.

``copy`` is the bandwidth ceiling (a device-to-device copy moves 2 arrays and does nothing else);
``add`` is ``torch.add``; add+ReLU eager is two kernels (add, then clamp_min behind relu) and five
array-sized trips; ``torch.compile`` fuses it into one Triton kernel and three trips.
"""

from __future__ import annotations

import functools

import torch

from .launch import Launch


def _op(fn) -> Launch:
    return Launch(fn, None, None, None, None)


def bind_add(inputs, out, block=None, num_warps=None) -> Launch:
    x, y = inputs
    return _op(lambda: torch.add(x, y, out=out))


def bind_copy(inputs, out, block=None, num_warps=None) -> Launch:
    (x,) = inputs
    return _op(lambda: out.copy_(x))


def bind_square(inputs, out, block=None, num_warps=None) -> Launch:
    (x,) = inputs
    return _op(lambda: torch.mul(x, x, out=out))


def bind_add_relu_eager(inputs, out, block=None, num_warps=None) -> Launch:
    x, y = inputs
    # The article's line, unchanged. It allocates its result (writing into `out` would add a copy
    # kernel), so the launch keeps the fresh tensor and the check reads it from there.
    holder = {}

    def run():
        holder["out"] = (x + y).relu()

    return Launch(run, None, None, None, None, output=lambda: holder["out"])


@functools.lru_cache(maxsize=None)
def compiled_add_relu():
    """torch.compile of the same line: Inductor fuses it into one Triton kernel. Default dynamic
    shapes: a second size recompiles once for any size (dynamic=False would recompile per size
    and, past torch's recompile limit, quietly fall back to eager)."""
    return torch.compile(lambda x, y: (x + y).relu())


def bind_add_relu_compile(inputs, out, block=None, num_warps=None) -> Launch:
    x, y = inputs
    fn = compiled_add_relu()
    holder = {}

    def run():
        holder["out"] = fn(x, y)

    return Launch(run, None, None, None, None, output=lambda: holder["out"])
