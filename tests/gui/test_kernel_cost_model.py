"""A kernel picked from the Kernel list brings its cost model: a tiled matmul is timed tile by tile
(compute-bound), never as a stream of bytes (the Timeline said "memory-bound, whole launch 33 us"
for a 4096^3 bf16 matmul that takes ~200 us on the H200); a stream kernel picked after it goes back
to the memory-bound cost; a cost the user chose for stream kernels (uniform spin blocks) stays."""

from __future__ import annotations

from gui.models.simulation import SimulationOptions
from kernels.declare.registry import KERNELS


def _kernel(name):
    return next(k for k in KERNELS if k.name == name)


def test_options_follow_the_kernels_own_mode():
    o = SimulationOptions("memory")
    o.follow_kernel(_kernel("matmul_tiled"))
    assert o.cost == "compute"
    o.follow_kernel(_kernel("add_triton"))
    assert o.cost == "memory"
    o.set(cost="uniform")
    o.follow_kernel(_kernel("add_triton"))
    assert o.cost == "uniform"
    o.follow_kernel(None)  # the custom launch: no kernel, a stream
    assert o.cost == "uniform"


def test_the_window_times_a_picked_matmul_compute_bound(win):
    w = win("H200", 4096, 256)
    w.model.set_kernels([k for k in KERNELS if k.group in ("matmul", "add")])
    assert w.model.select_kernel("matmul_tiled")
    assert w.options.cost == "compute"
    assert w.model.select_kernel("add_triton")
    assert w.options.cost == "memory"
