"""kernels/measure/cluster_occupancy.py on the CPU: its kernel compiles with the real NVRTC, its
launch configuration is built with the real cuda.bindings types, and only the driver's calls are
stand-ins that echo what reached them. It checks the plumbing and the file the truth test reads
(tests/sim/test_cluster_truth.py), never the numbers: those come from a GPU."""

from __future__ import annotations

import json

import pytest

cu = pytest.importorskip("cuda.bindings.driver")
OK = cu.CUresult.CUDA_SUCCESS


class FakeDriver:
    """The driver calls the script makes, each answering (CUDA_SUCCESS, value)."""

    def __init__(self):
        self.attrs_set = {}

    def install(self, monkeypatch):
        A = cu.CUdevice_attribute
        device = {A.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: 9,
                  A.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: 0,
                  A.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: 232448,
                  A.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: 132}
        calls = {
            "cuInit": lambda flags: (OK,),
            "cuDeviceGet": lambda i: (OK, 0),
            "cuDevicePrimaryCtxRetain": lambda dev: (OK, 1),
            "cuCtxSetCurrent": lambda ctx: (OK,),
            "cuDeviceGetAttribute": lambda a, dev: (OK, device[a]),
            "cuDeviceGetName": lambda n, dev: (OK, b"NVIDIA H200\0"),
            "cuDriverGetVersion": lambda: (OK, 13000),
            "cuModuleLoadData": lambda cubin: (OK, "module"),
            "cuModuleGetFunction": lambda m, name: (OK, "function"),
            "cuFuncSetAttribute": self._set,
            "cuFuncGetAttribute": lambda a, f: (OK, 8 if a == cu.CUfunction_attribute.CU_FUNC_ATTRIBUTE_NUM_REGS else 0),
            "cuOccupancyMaxActiveBlocksPerMultiprocessor": lambda f, t, s: (OK, 7),
            "cuOccupancyMaxActiveClusters": self._clusters,
        }
        for name, fn in calls.items():
            monkeypatch.setattr(cu, name, fn)

    def _set(self, func, attr, value):
        self.attrs_set[attr] = value
        return (OK,)

    @staticmethod
    def _clusters(func, config):
        assert config.numAttrs == 1 and config.gridDimX % config.attrs[0].value.clusterDim.x == 0
        attr = config.attrs[0]
        assert attr.id == cu.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION
        # echo what arrived: the cluster size, the block and the shared memory
        return OK, 1000 * attr.value.clusterDim.x + config.blockDimX // 128 + config.sharedMemBytes // 1024 * 10


def test_writes_every_case_in_the_columns_the_truth_test_reads(tmp_path, monkeypatch):
    from kernels.measure import cluster_occupancy as script

    try:
        from cuda.bindings import nvrtc  # noqa: F401 - the real NVRTC compiles the kernel
    except ImportError:
        pytest.skip("no NVRTC here to compile the kernel")
    fake = FakeDriver()
    fake.install(monkeypatch)
    out = tmp_path / "cluster_occupancy_h200.json"
    try:
        assert script.main(["--out", str(out)]) == 0
    except RuntimeError as exc:
        if "NVRTC" in str(exc):
            pytest.skip(f"NVRTC cannot compile here: {exc}")
        raise
    data = json.loads(out.read_text())
    col = {c: i for i, c in enumerate(data["columns"])}
    assert data["device"] == "NVIDIA H200" and data["sm_count"] == 132 and data["num_regs"] == 8
    cases = data["cases"]
    assert len(cases) == len(script.CLUSTERS) * len(script.THREADS) * len(script.DYN_SMEM)
    for case in cases:
        c, t, s = (case[col[k]] for k in ("cluster", "threads_per_block", "dynamic_smem_bytes"))
        assert case[col["driver_max_active_clusters"]] == 1000 * c + t // 128 + s // 1024 * 10
    F = cu.CUfunction_attribute
    assert fake.attrs_set[F.CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED] == 1  # for 16
    assert fake.attrs_set[F.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES] == 232448  # for 200 KiB
