"""Launch geometry: the grid a launch makes and how many waves it takes to run it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from sim.rules.block_shape import Dims, fold_summary
from sim.rules.devices import GpuSpec
from sim.rules.occupancy import Occupancy

MAX_GRID_BLOCKS = 2**31 - 1  # gridDim.x limit on every GPU we model
# The article's vector add of float32 (loads x and y, stores out: 3 x 4 B): the traffic assumed
# for a launch whose kernel declares none. The one place this number lives.
BYTES_PER_ELEMENT_ADD = 12.0


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def waves_of(blocks: int, blocks_per_wave: int) -> float:
    """Blocks over the blocks one wave holds: 3,907 / 1,056 = 3.70 (inf: nothing fits). The one
    waves computation; the geometry, the timeline and the matmul prediction read it."""
    return blocks / blocks_per_wave if blocks_per_wave else float("inf")


def wave_fill(blocks: int, blocks_per_wave: int) -> tuple[float, float]:
    """(waves, the last wave's blocks over a full wave's): 3,907 blocks of 1,056 a wave are
    3.70 waves, the last 70% full; a grid of whole waves ends on a full one."""
    waves = waves_of(blocks, blocks_per_wave)
    last = blocks - (ceil_div(blocks, blocks_per_wave) - 1) * blocks_per_wave
    return waves, last / blocks_per_wave


@dataclass(frozen=True, slots=True)
class LaunchGeometry:
    elements: int
    threads_per_block: int
    blocks: int  # the kernel's grid: ceil(elements / elements per block) unless it says otherwise
    warps_per_block: int
    warps_in_grid: int
    threads_in_grid: int
    idle_threads_last_block: int  # threads (elements, for tiles) past the end of the data
    idle_lanes_per_block: int  # lanes of the last warp of every block that no thread fills
    warp_slots_per_sm: int
    warp_slots_on_gpu: int
    waves_at_best: float  # warps in the grid / warp slots on the GPU
    blocks_per_sm: int | None  # from the occupancy, if given
    blocks_per_wave: int | None
    waves_at_occupancy: float | None  # blocks / (SMs x blocks per SM)
    elements_per_block: int | None = None  # the tile one block covers (None: no fixed tile)
    sizes: tuple[tuple[str, int], ...] = ()  # a kernel's named sizes (a matmul's M, N, K), if not just n
    block_dims: tuple[int, int, int] = (0, 1, 1)  # the block's x, y, z (x = threads for a 1D block)
    grid_dims: tuple[int, int, int] | None = None  # the grid's x, y, z where the launch gives them
    cluster_size: int = 1  # blocks per thread-block cluster (1: no clusters)

    @property
    def block_shape(self) -> Dims:
        return Dims(*self.block_dims)

    @property
    def clusters_note(self) -> str:
        return f" in clusters of {self.cluster_size}" if self.cluster_size > 1 else ""

    @property
    def elements_per_thread(self) -> int:
        """Elements each thread of a block covers (1 unless a block's tile is bigger)."""
        tile = self.elements_per_block
        return max(1, tile // self.threads_per_block) if tile else 1

    @property
    def threads_with_data_in_last_block(self) -> int:
        """Threads of the grid's last block that find an element (the rest are masked off)."""
        if not self.elements_per_block:
            return self.threads_per_block
        last = self.elements - (self.blocks - 1) * self.elements_per_block
        return min(self.threads_per_block, ceil_div(max(0, last), self.elements_per_thread))

    @property
    def full_waves(self) -> int | None:
        return None if not self.blocks_per_wave else self.blocks // self.blocks_per_wave

    @property
    def blocks_in_last_wave(self) -> int | None:
        if not self.blocks_per_wave:
            return None
        return self.blocks - (ceil_div(self.blocks, self.blocks_per_wave) - 1) * self.blocks_per_wave


def _check(elements: int, threads_per_block: int) -> None:
    for label, value in (("element count", elements), ("threads per block", threads_per_block)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"{label} must be a whole number, got {value!r}")
    if elements < 1:
        raise ValueError(f"element count must be at least 1, got {elements:,}")
    if threads_per_block < 1:
        raise ValueError(f"threads per block must be at least 1, got {threads_per_block}")


def launch_geometry(gpu: GpuSpec, elements: int, threads_per_block: int,
                    occ: Occupancy | None = None, *, blocks: int | None = None,
                    elements_per_block: int | None = None,
                    sizes: Mapping[str, int] | None = None,
                    block_dims: tuple[int, ...] | None = None,
                    grid_dims: tuple[int, ...] | None = None, cluster_size: int = 1) -> LaunchGeometry:
    """The article's table for a launch: grid, warps, idle threads, waves.

    By default one element per thread (the article's kernels). A kernel's own grid rule
    (kernels/declare/spec.py) passes `blocks` and, where a block covers a fixed tile, `elements_per_block`
    (4 x threads for four elements per thread, BLOCK_SIZE for a Triton program), and `sizes` where
    the problem is not one length (a matmul's M, N and K: the table shows them, not `elements`).
    `block_dims`/`grid_dims`: a 2D or 3D block or grid (x fastest; the block's product is
    `threads_per_block`, the grid's is `blocks`)."""
    _check(elements, threads_per_block)
    shape = _dims3(block_dims or (threads_per_block,))
    if shape.count != threads_per_block:
        raise ValueError(f"block {shape.text('x')} is {shape.count:,} threads, not {threads_per_block:,}")
    if grid_dims is not None:
        grid_shape = _dims3(grid_dims)
        if blocks is not None and grid_shape.count != blocks:
            raise ValueError(f"grid {grid_shape.text('x')} is {grid_shape.count:,} blocks, not {blocks:,}")
        blocks = grid_shape.count
        elements_per_block = threads_per_block if elements_per_block is None else elements_per_block
        if elements > blocks * elements_per_block:
            raise ValueError(f"a {grid_shape.text('x')} grid of {elements_per_block:,}-element blocks covers "
                             f"{blocks * elements_per_block:,} elements, fewer than {elements:,}; "
                             "give a bigger grid or fewer elements")
    tile = elements_per_block if blocks is not None else threads_per_block
    if blocks is None:  # enough blocks for the elements, in whole clusters
        blocks = ceil_div(ceil_div(elements, threads_per_block), cluster_size) * cluster_size
    elif blocks % cluster_size:
        raise ValueError(f"a grid of {blocks:,} blocks is not a whole number of clusters of "
                         f"{cluster_size}; CUDA refuses such a launch")
    if blocks > MAX_GRID_BLOCKS:
        raise ValueError(f"{blocks:,} blocks is over the grid limit of {MAX_GRID_BLOCKS:,}; "
                         "use bigger blocks or a grid-stride loop")
    warps_per_block = ceil_div(threads_per_block, gpu.warp_size)
    warps_in_grid = blocks * warps_per_block
    warp_slots_on_gpu = gpu.max_warps_per_sm * gpu.sm_count
    blocks_per_sm = blocks_per_wave = waves = None
    if occ is not None:
        blocks_per_sm = occ.blocks_per_sm
        blocks_per_wave = occ.blocks_per_sm * gpu.sm_count
        if cluster_size > 1:  # whole clusters, GPC by GPC: fewer where a GPC has a remainder
            from sim.rules.clusters import cluster_occupancy

            blocks_per_wave = cluster_occupancy(gpu, occ.blocks_per_sm, cluster_size).blocks_resident
        waves = waves_of(blocks, blocks_per_wave)
    idle = max(0, blocks * tile - elements) if tile else 0
    return LaunchGeometry(
        elements=elements, threads_per_block=threads_per_block, blocks=blocks,
        warps_per_block=warps_per_block, warps_in_grid=warps_in_grid,
        threads_in_grid=blocks * threads_per_block,
        idle_threads_last_block=idle,
        idle_lanes_per_block=warps_per_block * gpu.warp_size - threads_per_block,
        warp_slots_per_sm=gpu.max_warps_per_sm, warp_slots_on_gpu=warp_slots_on_gpu,
        waves_at_best=warps_in_grid / warp_slots_on_gpu,
        blocks_per_sm=blocks_per_sm, blocks_per_wave=blocks_per_wave, waves_at_occupancy=waves,
        elements_per_block=tile,
        sizes=() if not sizes or set(sizes) == {"n"} else tuple((str(k), int(v)) for k, v in sizes.items()),
        block_dims=shape.tuple, grid_dims=_dims3(grid_dims).tuple if grid_dims is not None else None,
        cluster_size=cluster_size,
    )


def _dims3(dims) -> Dims:
    return Dims(*(int(v) for v in dims))


def warp_lanes(threads_per_block: int, warp_size: int = 32) -> list[int]:
    """Active lanes in each warp of a block: [32, 32, ..., remainder]."""
    _check(1, threads_per_block)
    full, rest = divmod(threads_per_block, warp_size)
    return [warp_size] * full + ([rest] if rest else [])


@dataclass(frozen=True, slots=True)
class Fact:
    """One row of the launch table: the same rows in `explain`, the window and the export."""
    key: str
    label: str
    value: str
    how: str


def _shape_fact(g: LaunchGeometry, warp_size: int) -> Fact:
    """How the block's threads become warps: x fastest, 32 linear ids to a warp."""
    b = g.block_shape
    ids = "x" if b.rank == 1 else f"x + y·{b.x}" if b.rank == 2 else f"x + y·{b.x} + z·{b.x * b.y}"
    return Fact("shape", "Block shape (x × y × z)", b.text(),
                f"thread id = {ids}, warp = id // {warp_size}: {fold_summary(b, warp_size)}")


def _waves_text(waves: float) -> str:
    """One decimal, but a grid far below one wave keeps two significant digits (0.034, not 0.0)."""
    return f"{waves:,.1f}" if waves >= 0.1 or waves == 0 else f"{waves:.2g}"


def problem_fact(geo: LaunchGeometry) -> Fact:
    """The table's first row: the element count, or a kernel's named sizes (M x N x K)."""
    if geo.sizes:
        return Fact("elements", " × ".join(k for k, _ in geo.sizes),
                    "×".join(f"{v:,}" for _, v in geo.sizes), "the kernel's sizes")
    per_thread = f"  ({geo.elements_per_thread} per thread)" if geo.elements_per_thread > 1 else ""
    return Fact("elements", "Elements", f"{geo.elements:,}{per_thread}", "the input")


def problem_text(geo: LaunchGeometry) -> str:
    """The problem in a few words: "1,000,000 elements" or "M × N × K = 1,024 × 1,280 × 8,192"."""
    fact = problem_fact(geo)
    return f"{fact.label} = {fact.value}" if geo.sizes else f"{geo.elements:,} elements"


def launch_text(geo: LaunchGeometry) -> str:
    """The launch in a line, as the verdicts and the export title it."""
    joint = " · " if geo.sizes else " × "
    return f"{problem_text(geo)}{joint}{geo.threads_per_block:,} threads per block"


def geometry_facts(gpu: GpuSpec, geo: LaunchGeometry) -> list[Fact]:
    """The article's launch table for `geo`, each value with how it is worked out."""
    g, ws, tile = geo, gpu.warp_size, geo.elements_per_block
    if tile == g.threads_per_block:
        grid_how = f"ceiling of {g.elements:,} / {g.threads_per_block:,}" + (
            f", rounded up to whole clusters of {g.cluster_size}" if g.cluster_size > 1 else "")
        idle = Fact("idle_last", "Idle threads, last block", f"{g.idle_threads_last_block:,}",
                    f"threads with no element: {g.blocks:,} x {g.threads_per_block:,} - {g.elements:,}")
    elif tile:
        grid_how = f"ceiling of {g.elements:,} / {tile:,} elements per block"
        idle = Fact("idle_last", "Unused tile, last block", f"{g.idle_threads_last_block:,}",
                    f"elements the last block's tile has no data for: {g.blocks:,} x {tile:,} - {g.elements:,}")
    else:
        grid_how = "the grid the kernel declares (its own rule, not elements / block)"
        idle = Fact("idle_last", "Idle threads, last block", "—",
                    "not counted: the kernel declares its grid, so no block has a fixed share of elements")
    facts = [
        problem_fact(g),
        Fact("tpb", "Threads per block", f"{g.threads_per_block:,}", "your choice"),
        _shape_fact(g, ws),
        Fact("blocks", "Blocks in the grid", f"{g.blocks:,}",
             f"the {Dims(*g.grid_dims).text()} grid given" if g.grid_dims else grid_how),
        Fact("wpb", "Warps per block", f"{g.warps_per_block}", f"ceiling of {g.threads_per_block} / {ws}"),
        Fact("warps", "Warps in the grid", f"{g.warps_in_grid:,}", f"{g.blocks:,} x {g.warps_per_block}"),
        idle,
        Fact("idle_lanes", "Idle lanes per block", f"{g.idle_lanes_per_block}",
             f"{g.warps_per_block} x {ws} - {g.threads_per_block}"),
        Fact("slots_sm", "Warp slots per SM", f"{g.warp_slots_per_sm}",
             f"{gpu.max_threads_per_sm:,} threads per SM / {ws}"),
        Fact("slots_gpu", "Warp slots on the GPU", f"{g.warp_slots_on_gpu:,}",
             f"{gpu.sm_count} SMs x {g.warp_slots_per_sm}"),
        Fact("waves_best", "Waves, at best", _waves_text(g.waves_at_best),
             f"{g.warps_in_grid:,} / {g.warp_slots_on_gpu:,}"),
    ]
    if g.blocks_per_sm is not None:
        can = bool(g.blocks_per_wave)
        facts += [
            Fact("bps", "Blocks per SM", f"{g.blocks_per_sm}", "the occupancy: its binding limiter"),
            Fact("bpw", "Blocks per wave", f"{g.blocks_per_wave:,}" if can else "—",
                 f"{gpu.sm_count} SMs x {g.blocks_per_sm} blocks" if g.cluster_size == 1 else
                 f"{g.blocks_per_wave // g.cluster_size:,} clusters x {g.cluster_size} (the cluster limit)"),
            Fact("waves_occ", "Waves at occupancy", f"{g.waves_at_occupancy:,.2f}" if can else "cannot launch",
                 f"{g.blocks:,} / {g.blocks_per_wave:,}" if can else "no block fits on an SM"),
            Fact("last_wave", "Blocks in last wave",
                 f"{g.blocks_in_last_wave:,} of {g.blocks_per_wave:,}" if can else "—",
                 "what the tail runs on"),
        ]
    return facts
