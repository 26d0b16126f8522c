"""Thread-block clusters (compute capability 9.0 on): how many fit on the GPU at once.

A cluster's blocks are co-scheduled on one GPC (CUDA C++ Programming Guide, "Thread Block
Clusters"), each block of a cluster on its own SM, and an SM holds at most
CLUSTER_BLOCKS_PER_SM blocks of a cluster launch: so a GPC of n SMs, each holding b blocks of the
kernel (the occupancy's blocks per SM, capped so), holds floor(n·b / c) clusters of c blocks where
n >= c, and none where it has fewer SMs than a cluster has blocks (a lone TPC of 2 SMs, for
clusters of 4). The GPU's answer, what cudaOccupancyMaxActiveClusters reports, is the sum over
GPCs. Both rules were read off the driver's 80 answers recorded on an H200
(tests/data/cluster_occupancy_h200.json, 2026-12-07), which the model now equals.
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
# blocks of a cluster launch one SM holds at most, whatever the occupancy allows (the driver's
# answers on an H200: 128-thread blocks, 16 per SM unclustered, count as 8 in every cluster size)
CLUSTER_BLOCKS_PER_SM = 8


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
        return " + ".join(f"{counts[n]} x floor({n}·{b}/{c})" if n >= c else f"{counts[n]} x 0 (under {c} SMs)"
                          for n in sizes) + \
            f" = {self.max_active_clusters:,}"


def cluster_occupancy(gpu: GpuSpec, blocks_per_sm: int, cluster_size: int) -> ClusterOccupancy:
    """Clusters of `cluster_size` blocks resident at once, GPC by GPC (cudaOccupancyMaxActiveClusters)."""
    check_cluster(gpu, cluster_size)
    groups, source = gpc_layout(gpu)
    sizes = tuple(len(g) for g in groups)
    b = min(blocks_per_sm, CLUSTER_BLOCKS_PER_SM)
    per_gpc = tuple(n * b // cluster_size if n >= cluster_size else 0 for n in sizes)
    return ClusterOccupancy(cluster_size, b, sizes, per_gpc, source)


def cluster_rows(cocc: ClusterOccupancy) -> list[tuple[str, str, str]]:
    """`explain`'s cluster table: the limit, the arithmetic, the layout's source."""
    return [("Blocks per cluster", f"{cocc.cluster_size}", "your choice (co-scheduled on one GPC)"),
            ("Max active clusters", f"{cocc.max_active_clusters:,}",
             f"GPCs x floor(SMs·blocks per SM / cluster): {cocc.explain()}"),
            ("Blocks resident", f"{cocc.blocks_resident:,} of {cocc.blocks_without_clusters:,}",
             f"{cocc.lost_blocks:,} block slots no cluster can use"),
            ("GPC layout", f"{len(cocc.gpc_sms)} GPCs", cocc.source)]
