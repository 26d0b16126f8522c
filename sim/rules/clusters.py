"""Thread-block clusters (compute capability 9.0 on): how many fit on the GPU at once.

A cluster's blocks are co-scheduled on one GPC (CUDA C++ Programming Guide, "Thread Block
Clusters"), so what limits clusters is each GPC's room, not the GPU's: a GPC of n SMs, each
holding b blocks of the kernel (the occupancy's blocks per SM), holds floor(n·b / c) clusters of
c blocks. The GPU's answer, what cudaOccupancyMaxActiveClusters reports, is the sum over GPCs, and
every SM of a GPC too small for one cluster (a lone TPC of 2 SMs, for clusters of 4) sits idle.
tests/sim/test_cluster_truth.py checks this against the driver's answers recorded on a GPU
(kernels/measure/cluster_occupancy.py).

GPC layouts: a preset's `gpcs` (resources/gpus.json, with its source), else the SMs split
evenly over `gpc_count` GPCs by whole TPCs, labelled assumed.
"""

from __future__ import annotations

from dataclasses import dataclass

from sim.rules.devices import GpuSpec

MIN_CC = (9, 0)
MAX_PORTABLE = 8  # any cluster-capable GPU runs clusters this big
MAX_NON_PORTABLE = 16  # H100/H200 with cudaFuncAttributeNonPortableClusterSizeAllowed


def check_cluster(gpu: GpuSpec, size: int) -> None:
    """ValueError in one line if `size` blocks per cluster cannot launch on `gpu`."""
    if isinstance(size, bool) or not isinstance(size, int) or size < 1:
        raise ValueError(f"cluster size must be a whole number of blocks, at least 1, got {size!r}")
    if size > 1 and gpu.compute_capability < MIN_CC:
        raise ValueError(f"thread-block clusters need compute capability 9.0 or later; {gpu.name} is "
                         f"{gpu.cc_string}")
    if size > MAX_NON_PORTABLE:
        raise ValueError(f"a cluster is at most {MAX_PORTABLE} blocks (portable) or {MAX_NON_PORTABLE} "
                         f"(non-portable, opted in), got {size}")


def gpc_layout(gpu: GpuSpec) -> tuple[tuple[tuple[int, ...], ...], str]:
    """(the SM ids of each GPC, where the layout comes from)."""
    if gpu.gpcs is not None and sum(len(g) for g in gpu.gpcs) == gpu.sm_count:
        return gpu.gpcs, gpu.gpcs_source or "the preset's data"
    tpcs = gpu.sm_count // gpu.sms_per_tpc
    n = max(1, min(gpu.gpc_count, tpcs))
    groups, start = [], 0
    for i in range(n):
        size = (tpcs // n + (1 if i < tpcs % n else 0)) * gpu.sms_per_tpc
        if i == n - 1:
            size = gpu.sm_count - start  # an odd SM left over goes to the last GPC
        groups.append(tuple(range(start, start + size)))
        start += size
    return tuple(groups), (f"assumed: {gpu.sm_count} SMs split evenly over {n} GPCs by TPC "
                           f"(no measured layout for the {gpu.name})")


@dataclass(frozen=True, slots=True)
class ClusterOccupancy:
    cluster_size: int
    blocks_per_sm: int
    gpc_sms: tuple[int, ...]  # SMs of each GPC
    clusters_per_gpc: tuple[int, ...]
    source: str  # where the GPC layout comes from

    @property
    def max_active_clusters(self) -> int:
        return sum(self.clusters_per_gpc)

    @property
    def blocks_resident(self) -> int:
        return self.max_active_clusters * self.cluster_size

    @property
    def blocks_without_clusters(self) -> int:
        return sum(self.gpc_sms) * self.blocks_per_sm

    @property
    def lost_blocks(self) -> int:
        """Block slots clusters cannot fill: a GPC's remainder, or a GPC too small for one."""
        return self.blocks_without_clusters - self.blocks_resident

    def explain(self) -> str:
        c, b = self.cluster_size, self.blocks_per_sm
        sizes = sorted(set(self.gpc_sms), reverse=True)
        counts = {n: self.gpc_sms.count(n) for n in sizes}
        return " + ".join(f"{counts[n]} x floor({n}·{b}/{c})" for n in sizes) + \
            f" = {self.max_active_clusters:,}"


def cluster_occupancy(gpu: GpuSpec, blocks_per_sm: int, cluster_size: int) -> ClusterOccupancy:
    """Clusters of `cluster_size` blocks resident at once, GPC by GPC (cudaOccupancyMaxActiveClusters)."""
    check_cluster(gpu, cluster_size)
    groups, source = gpc_layout(gpu)
    sizes = tuple(len(g) for g in groups)
    per_gpc = tuple(n * blocks_per_sm // cluster_size for n in sizes)
    return ClusterOccupancy(cluster_size, blocks_per_sm, sizes, per_gpc, source)


def cluster_rows(cocc: ClusterOccupancy) -> list[tuple[str, str, str]]:
    """`explain`'s cluster table: the limit, the arithmetic, the layout's source."""
    return [("Blocks per cluster", f"{cocc.cluster_size}", "your choice (co-scheduled on one GPC)"),
            ("Max active clusters", f"{cocc.max_active_clusters:,}",
             f"GPCs x floor(SMs·blocks per SM / cluster): {cocc.explain()}"),
            ("Blocks resident", f"{cocc.blocks_resident:,} of {cocc.blocks_without_clusters:,}",
             f"{cocc.lost_blocks:,} block slots no cluster can use"),
            ("GPC layout", f"{len(cocc.gpc_sms)} GPCs", cocc.source)]
