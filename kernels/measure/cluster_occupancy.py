"""Ask the CUDA driver how many thread-block clusters fit at once; write the answers as test data.

For cluster sizes 1, 2, 4, 8, 16 (16 with the non-portable opt-in), 128 to 1024 threads per block
and 0 to 200 KiB of dynamic shared memory, record cuOccupancyMaxActiveClusters (the driver API
behind cudaOccupancyMaxActiveClusters) beside cuOccupancyMaxActiveBlocksPerMultiprocessor for
the same function, so a disagreement with sim/rules/clusters.py can be told apart from one with
sim/rules/occupancy.py. Needs a GPU of compute capability 9.0+ and cuda-python (cuda.bindings,
in the lent machines' image), as benchmarks/occupancy_truth.py does:

    python3 -m kernels.measure.cluster_occupancy --out tests/data/cluster_occupancy_h200.json

tests/sim/test_cluster_truth.py compares the model with every file tests/data/cluster_occupancy_*.json.
"""

from __future__ import annotations

import argparse
import sys
import time

CLUSTERS = (1, 2, 4, 8, 16)
THREADS = (128, 256, 512, 1024)
DYN_SMEM = (0, 48 * 1024, 100 * 1024, 200 * 1024)
COLUMNS = ["cluster", "threads_per_block", "dynamic_smem_bytes", "driver_blocks_per_sm",
           "driver_max_active_clusters"]  # -1: the driver refused the query

SOURCE = r"""
extern "C" __global__ void touch(float* out) {
    extern __shared__ float pad[];
    pad[threadIdx.x] = threadIdx.x;
    __syncthreads();
    if (out) out[blockIdx.x * blockDim.x + threadIdx.x] = pad[blockDim.x - 1 - threadIdx.x];
}
"""


def cuda_check(result):
    """The value of a cuda-python driver or NVRTC call; RuntimeError naming its error code."""
    from cuda.bindings import driver as cu
    from cuda.bindings import nvrtc

    err, *rest = result
    if isinstance(err, cu.CUresult) and err != cu.CUresult.CUDA_SUCCESS:
        raise RuntimeError(f"CUDA driver error {err}")
    if isinstance(err, nvrtc.nvrtcResult) and err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
        raise RuntimeError(f"NVRTC error {err}")
    return rest[0] if len(rest) == 1 else rest


def _function(arch: str):
    from cuda.bindings import driver as cu
    from cuda.bindings import nvrtc

    prog = cuda_check(nvrtc.nvrtcCreateProgram(SOURCE.encode(), b"touch.cu", 0, [], []))
    opts = [f"--gpu-architecture={arch}".encode()]
    cuda_check(nvrtc.nvrtcCompileProgram(prog, len(opts), opts))
    cubin = b" " * cuda_check(nvrtc.nvrtcGetCUBINSize(prog))
    cuda_check(nvrtc.nvrtcGetCUBIN(prog, cubin))
    module = cuda_check(cu.cuModuleLoadData(cubin))
    return cuda_check(cu.cuModuleGetFunction(module, b"touch"))


def _clusters(func, cluster: int, threads: int, dyn: int) -> int:
    from cuda.bindings import driver as cu

    config = cu.CUlaunchConfig()
    config.gridDimX, config.gridDimY, config.gridDimZ = cluster * 64, 1, 1
    config.blockDimX, config.blockDimY, config.blockDimZ = threads, 1, 1
    config.sharedMemBytes = dyn
    attr = cu.CUlaunchAttribute()
    attr.id = cu.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION
    attr.value.clusterDim.x, attr.value.clusterDim.y, attr.value.clusterDim.z = cluster, 1, 1
    config.attrs = [attr]
    config.numAttrs = 1
    err, n = cu.cuOccupancyMaxActiveClusters(func, config)
    return int(n) if err == cu.CUresult.CUDA_SUCCESS else -1


def measure() -> dict:
    from cuda.bindings import driver as cu

    cuda_check(cu.cuInit(0))
    dev = cuda_check(cu.cuDeviceGet(0))
    cuda_check(cu.cuCtxSetCurrent(cuda_check(cu.cuDevicePrimaryCtxRetain(dev))))
    A, F = cu.CUdevice_attribute, cu.CUfunction_attribute
    cc = [cuda_check(cu.cuDeviceGetAttribute(a, dev)) for a in
          (A.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, A.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)]
    optin = cuda_check(cu.cuDeviceGetAttribute(A.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, dev))
    func = _function(f"sm_{cc[0]}{cc[1]}")
    cuda_check(cu.cuFuncSetAttribute(func, F.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, optin))
    cuda_check(cu.cuFuncSetAttribute(func, F.CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1))
    cases = []
    for cluster in CLUSTERS:
        for threads in THREADS:
            for dyn in DYN_SMEM:
                err, blocks = cu.cuOccupancyMaxActiveBlocksPerMultiprocessor(func, threads, dyn)
                blocks = int(blocks) if err == cu.CUresult.CUDA_SUCCESS else -1
                cases.append([cluster, threads, dyn, blocks, _clusters(func, cluster, threads, dyn)])
    return {
        "command": "python3 -m kernels.measure.cluster_occupancy " + " ".join(sys.argv[1:]),
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "device": cuda_check(cu.cuDeviceGetName(64, dev)).split(b"\0")[0].decode(),
        "compute_capability": f"{cc[0]}.{cc[1]}",
        "sm_count": cuda_check(cu.cuDeviceGetAttribute(A.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev)),
        "driver_version": cuda_check(cu.cuDriverGetVersion()),
        "num_regs": cuda_check(cu.cuFuncGetAttribute(F.CU_FUNC_ATTRIBUTE_NUM_REGS, func)),
        "static_smem_bytes": cuda_check(cu.cuFuncGetAttribute(F.CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, func)),
        "columns": COLUMNS, "cases": cases,
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True, help="the JSON to write (tests/data/cluster_occupancy_<gpu>.json)")
    args = ap.parse_args(argv)
    result = measure()
    from sim.inputs.files import write_json_atomic

    write_json_atomic(args.out, result, indent=1)
    refused = sum(1 for c in result["cases"] if c[-1] < 0)
    print(f"{result['device']}: {len(result['cases'])} cases ({refused} refused), "
          f"{result['num_regs']} registers per thread -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
