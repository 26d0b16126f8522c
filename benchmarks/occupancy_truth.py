"""Ask the CUDA driver for blocks per SM over a sweep of launches; write the cases as test data.

Runs on a machine with an NVIDIA GPU and cuda-python (cuda.bindings). Kernels are compiled with
NVRTC at several --maxrregcount caps (a register-hungry body, so ptxas uses what the cap allows)
and with static shared memory; for each we record the register count the driver reports
(CU_FUNC_ATTRIBUTE_NUM_REGS) and cuOccupancyMaxActiveBlocksPerMultiprocessor for many block sizes,
dynamic shared-memory sizes and carveouts.

    python3 benchmarks/occupancy_truth.py --out tests/data/occupancy_h200.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from cuda.bindings import driver as cu
from cuda.bindings import nvrtc

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from kernels.measure.cluster_occupancy import cuda_check  # noqa: E402

SOURCE = r"""
extern "C" __global__ void pressure(const float* __restrict__ in, float* __restrict__ out, int n)
{
#if STATIC_SMEM > 0
    __shared__ float tile[STATIC_SMEM / 4];
    tile[threadIdx.x % (STATIC_SMEM / 4)] = in[threadIdx.x % n];
    __syncthreads();
#endif
    float v[NV];
#pragma unroll
    for (int k = 0; k < NV; ++k) v[k] = in[(blockIdx.x * 7 + threadIdx.x + k * 131) % n];
    float acc = 0.f;
#pragma unroll
    for (int k = 0; k < NV; ++k) acc = fmaf(acc, v[k], v[NV - 1 - k]);
#if STATIC_SMEM > 0
    acc += tile[(threadIdx.x + 1) % (STATIC_SMEM / 4)];
#endif
    out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}
"""

THREADS = [1, 2, 8, 31, 32, 33, 48, 63, 64, 65, 96, 100, 127, 128, 129, 160, 192, 200, 224, 250,
           255, 256, 257, 288, 320, 352, 384, 416, 448, 480, 511, 512, 513, 544, 576, 608, 640,
           672, 704, 736, 768, 800, 832, 864, 896, 928, 960, 992, 1000, 1023, 1024, 1025]
DYN_SMEM = [0, 1, 100, 1024, 3000, 4096, 8192, 12000, 16384, 24576, 32768, 40000, 49152, 49153,
            65536, 81920, 100000, 101376, 114688, 131072, 163840, 166912, 196608, 200000, 220000,
            232448, 232449]
CARVEOUTS = [0, 10, 25, 33, 50, 67, 75, 90, 100]
REG_CAPS = [16, 24, 25, 32, 33, 37, 40, 41, 48, 56, 57, 64, 65, 72, 80, 96, 97, 112, 128, 129, 144, 160, 168,
            170, 192, 200, 224, 232, 250, 255]
STATIC = [0, 4096, 40960]


def compile_cubin(arch: str, reg_cap: int, static_smem: int, nv: int) -> bytes:
    prog = cuda_check(nvrtc.nvrtcCreateProgram(SOURCE.encode(), b"pressure.cu", 0, [], []))
    opts = [f"--gpu-architecture={arch}".encode(), f"--maxrregcount={reg_cap}".encode(),
            f"-DNV={nv}".encode(), f"-DSTATIC_SMEM={static_smem}".encode()]
    err, = nvrtc.nvrtcCompileProgram(prog, len(opts), opts)
    if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
        size = cuda_check(nvrtc.nvrtcGetProgramLogSize(prog))
        log = b" " * size
        nvrtc.nvrtcGetProgramLog(prog, log)
        raise RuntimeError(log.decode(errors="replace"))
    size = cuda_check(nvrtc.nvrtcGetCUBINSize(prog))
    cubin = b" " * size
    cuda_check(nvrtc.nvrtcGetCUBIN(prog, cubin))
    return cubin


def load(cubin: bytes):
    module = cuda_check(cu.cuModuleLoadData(cubin))
    return cuda_check(cu.cuModuleGetFunction(module, b"pressure"))


def attr(func, which) -> int:
    return cuda_check(cu.cuFuncGetAttribute(which, func))


def blocks_per_sm(func, threads: int, dyn: int) -> int:
    err, blocks = cu.cuOccupancyMaxActiveBlocksPerMultiprocessor(func, threads, dyn)
    return blocks if err == cu.CUresult.CUDA_SUCCESS else -1  # -1: the driver refused the query


def device_attributes(dev) -> dict:
    A = cu.CUdevice_attribute
    names = {
        "sm_count": A.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
        "warp_size": A.CU_DEVICE_ATTRIBUTE_WARP_SIZE,
        "max_threads_per_sm": A.CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR,
        "max_blocks_per_sm": A.CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR,
        "max_threads_per_block": A.CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
        "regs_per_sm": A.CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR,
        "regs_per_block": A.CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK,
        "smem_per_sm_bytes": A.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR,
        "smem_per_block_bytes": A.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK,
        "smem_per_block_optin_bytes": A.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
        "smem_reserved_per_block_bytes": A.CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK,
        "l2_bytes": A.CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE,
        "memory_clock_khz": A.CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE,
        "memory_bus_width_bits": A.CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH,
        "clock_khz": A.CU_DEVICE_ATTRIBUTE_CLOCK_RATE,
        "cc_major": A.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
        "cc_minor": A.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
    }
    return {k: cuda_check(cu.cuDeviceGetAttribute(v, dev)) for k, v in names.items()}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--nv", type=int, default=160, help="live values per thread in the kernel body")
    args = ap.parse_args()
    t0 = time.time()
    cuda_check(cu.cuInit(0))
    dev = cuda_check(cu.cuDeviceGet(0))
    ctx = cuda_check(cu.cuDevicePrimaryCtxRetain(dev))
    cuda_check(cu.cuCtxSetCurrent(ctx))
    name = cuda_check(cu.cuDeviceGetName(64, dev)).split(b"\0")[0].decode()
    props = device_attributes(dev)
    arch = f"sm_{props['cc_major']}{props['cc_minor']}"
    drv = cuda_check(cu.cuDriverGetVersion())
    F = cu.CUfunction_attribute
    optin = props["smem_per_block_optin_bytes"]
    cases = []  # [threads, num_regs, static_smem, dynamic_smem, carveout (-1 default), blocks]
    functions = []
    for static in STATIC:
        for cap in (REG_CAPS if static == 0 else REG_CAPS[::4]):
            cubin = compile_cubin(arch, cap, static, args.nv)
            func = load(cubin)
            regs = attr(func, F.CU_FUNC_ATTRIBUTE_NUM_REGS)
            static_bytes = attr(func, F.CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES)
            cuda_check(cu.cuFuncSetAttribute(func, F.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                        optin - static_bytes))
            functions.append({"reg_cap": cap, "num_regs": regs, "static_smem": static_bytes})
            for threads in THREADS:
                for dyn in DYN_SMEM:
                    if dyn > optin - static_bytes + 1:
                        continue
                    cases.append([threads, regs, static_bytes, dyn, -1, blocks_per_sm(func, threads, dyn)])
            # Carveout preference: a fresh copy of the function per setting.
            if cap in (32, 64, 128) and static == 0:
                for pct in CARVEOUTS:
                    f2 = load(cubin)
                    cuda_check(cu.cuFuncSetAttribute(f2, F.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                                optin - static_bytes))
                    cuda_check(cu.cuFuncSetAttribute(f2, F.CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, pct))
                    for threads in THREADS[::3]:
                        for dyn in DYN_SMEM[::2]:
                            cases.append([threads, regs, static_bytes, dyn, pct, blocks_per_sm(f2, threads, dyn)])
            print(f"cap {cap:3d} static {static:6d}: {regs} registers, {len(cases)} cases so far", flush=True)
    result = {
        "command": "python3 benchmarks/occupancy_truth.py " + " ".join(sys.argv[1:]),
        "device": name, "driver_version": drv, "device_attributes": props, "functions": functions,
        "columns": ["threads_per_block", "num_regs", "static_smem_bytes", "dynamic_smem_bytes",
                    "carveout_percent", "driver_blocks_per_sm"],
        "cases": cases,
    }
    with open(args.out, "w") as fh:
        json.dump(result, fh, separators=(",", ":"))
    print(f"{len(cases)} cases, {len({c[1] for c in cases})} register counts, {time.time() - t0:.1f} s")
    print(json.dumps(props))
    return 0


if __name__ == "__main__":
    sys.exit(main())
