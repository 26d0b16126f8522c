"""The real device as a spec: the GPU that torch (and numba-cuda) see, as a ``sim`` GpuSpec.

Architecture limits come from the compute-capability table in sim/; everything the driver
reports overrides them. Peak DRAM bandwidth = 2 (double data rate) x memory clock x bus width:
on the H200, 2 x 3.201 GHz x 6016 bit / 8 = 4.81 TB/s (the datasheet says 4.8).
"""

from __future__ import annotations

import functools


def peak_dram_gbps(memory_clock_khz: float, bus_width_bits: int) -> float:
    """Theoretical DRAM bandwidth in GB/s from the memory clock (kHz) and bus width (bits)."""
    return 2.0 * memory_clock_khz * 1e3 * bus_width_bits / 8 / 1e9


def _numba_attributes() -> dict:
    """What only numba-cuda's device attributes tell (empty if it cannot say)."""
    try:
        from kernels.launching.compat import numba_cuda

        cuda = numba_cuda()
        import numba

        if numba.config.ENABLE_CUDASIM or not cuda.is_available():
            return {}
        dev = cuda.get_current_device()
        names = ("MAX_BLOCKS_PER_MULTIPROCESSOR", "RESERVED_SHARED_MEMORY_PER_BLOCK",
                 "MEMORY_CLOCK_RATE", "GLOBAL_MEMORY_BUS_WIDTH", "CLOCK_RATE",
                 "MAX_REGISTERS_PER_BLOCK", "MAX_THREADS_PER_BLOCK")
        return {n: int(getattr(dev, n)) for n in names if hasattr(dev, n)}
    except Exception:
        return {}


@functools.lru_cache(maxsize=1)
def detect_device():
    """(GpuSpec of the current CUDA device, "") or (None, why not)."""
    from kernels.launching.backends import gpu_status

    ok, why = gpu_status()
    if not ok:
        return None, why
    import torch

    from sim.rules.devices import spec_from_device

    p = torch.cuda.get_device_properties(torch.cuda.current_device())
    nb = _numba_attributes()
    mem_clock_khz = getattr(p, "memory_clock_rate", 0) or nb.get("MEMORY_CLOCK_RATE", 0)
    bus_bits = getattr(p, "memory_bus_width", 0) or nb.get("GLOBAL_MEMORY_BUS_WIDTH", 0)
    clock_khz = getattr(p, "clock_rate", 0) or nb.get("CLOCK_RATE", 0)
    spec = spec_from_device(
        name=p.name,
        compute_capability=(p.major, p.minor),
        sm_count=p.multi_processor_count,
        l2_bytes=getattr(p, "L2_cache_size", 0),
        memory_bytes=p.total_memory,
        peak_dram_gbps=(peak_dram_gbps(mem_clock_khz, bus_bits)
                        if mem_clock_khz and bus_bits else 0.0),
        clock_mhz=int(clock_khz // 1000),
        warp_size=getattr(p, "warp_size", None),
        max_threads_per_sm=getattr(p, "max_threads_per_multi_processor", None),
        regs_per_sm=getattr(p, "regs_per_multiprocessor", None),
        smem_per_sm_bytes=getattr(p, "shared_memory_per_multiprocessor", None),
        smem_per_block_bytes=getattr(p, "shared_memory_per_block", None),
        smem_per_block_optin_bytes=getattr(p, "shared_memory_per_block_optin", None),
        max_blocks_per_sm=nb.get("MAX_BLOCKS_PER_MULTIPROCESSOR"),
        smem_reserved_per_block_bytes=nb.get("RESERVED_SHARED_MEMORY_PER_BLOCK"),
        regs_per_block=nb.get("MAX_REGISTERS_PER_BLOCK"),
        max_threads_per_block=nb.get("MAX_THREADS_PER_BLOCK"),
    )
    return spec, ""


def device_summary(spec) -> dict:
    """The spec as a JSON-ready dict for result files (GpuSpec.to_dict, with units in names)."""
    if spec is None:
        return {"name": "CPU (no GPU)", "detected": False}
    return spec.to_dict()
