"""What each program of a tiled matrix product does: tiles, K-iterations, bytes, partial sums.

C = A @ B is cut into BLOCK_M x BLOCK_N tiles of C; a tile is `k_tiles` K-iterations of one
BLOCK_M x BLOCK_K by BLOCK_K x BLOCK_N product. The kernels in kernels/bodies/matmul.py hand the tiles
to their programs in three ways, and `matmul_work` lists, per program, the items it runs in order:

* tiled (tutorial 03): one program per tile;
* persistent (tutorial 09): program p takes tiles p, p + P, p + 2P, ... (P programs), so 133 tiles
  on 132 programs leave program 0 a second tile alone: the tiled kernel's nearly empty second wave;
* stream-K (hybrid): the full waves tile by tile, then the leftover tiles' K-iterations laid end to
  end and cut into P equal ranges; a range touches at most two tiles, each piece ("unit") adds its
  partial sum to an fp32 workspace with atomics, and the piece holding a tile's first K-iteration,
  which finishes last, reads the sum back and stores the tile (the "fix-up").

The tiled rule is the persistent one with P = tiles, so one function serves both. This mirrors the
kernels' own arithmetic (kernels.bodies.matmul.stream_k_split); numpy only, no triton.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

ITEMSIZE = {"float16": 2, "bfloat16": 2, "float32": 4}


def cdiv(a: int, b: int) -> int:
    return -(-int(a) // int(b))


@dataclass(frozen=True, slots=True)
class MatmulProblem:
    """One product's sizes and its tiling (the kernel's block parameters)."""

    M: int
    N: int
    K: int
    block_m: int = 128
    block_n: int = 256
    block_k: int = 64
    group_m: int = 8
    dtype: str = "float16"

    @property
    def itemsize(self) -> int:
        return ITEMSIZE[self.dtype]

    @property
    def tiles_m(self) -> int:
        return cdiv(self.M, self.block_m)

    @property
    def tiles_n(self) -> int:
        return cdiv(self.N, self.block_n)

    @property
    def tiles(self) -> int:
        return self.tiles_m * self.tiles_n

    @property
    def k_tiles(self) -> int:
        return cdiv(self.K, self.block_k)

    @property
    def flops(self) -> int:
        """2 M N K: one multiply and one add per (m, n, k), as the declarations count."""
        return 2 * self.M * self.N * self.K

    @property
    def iteration_flops(self) -> int:
        """One K-iteration of one tile, as the tensor cores run it (padding included)."""
        return 2 * self.block_m * self.block_n * self.block_k

    @property
    def partial_bytes(self) -> int:
        """A tile's fp32 partial sum: what one stream-K unit adds into the workspace."""
        return 4 * self.block_m * self.block_n

    def tile_coords(self, tile: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Tile number -> (tile row, tile column), GROUP_M rows at a time (kernels.bodies.matmul)."""
        tile = np.asarray(tile, dtype=np.int64)
        per_group = self.group_m * self.tiles_n
        first = (tile // per_group) * self.group_m
        rows_in_group = np.minimum(self.tiles_m - first, self.group_m)
        return first + (tile % per_group) % rows_in_group, (tile % per_group) // rows_in_group

    def wave_bytes_per_tile(self, concurrent: int) -> float:
        """DRAM bytes per tile when `concurrent` tiles run together: the tiles of one wave share
        the rows of A and the columns of B they have in common (read once, through L2), each writes
        its own tile of C; nothing is assumed to stay in L2 from one wave to the next."""
        wave = max(1, min(int(concurrent), self.tiles))
        rows, cols = self.tile_coords(np.arange(wave))
        operands = (np.unique(rows).size * self.block_m + np.unique(cols).size * self.block_n) * self.K
        return self.itemsize * (operands + wave * self.block_m * self.block_n) / wave


@dataclass(frozen=True, slots=True)
class ComputeTerms:
    """How fast a kernel runs its items against the compute model: its inputs' dtype (the tensor
    rate), the fitted efficiency its block times are divided by, and stream-K's fitted excess in
    its leftover wave (sim.model.matmul_choice.candidate_terms makes them; defaults: the bare model)."""

    dtype: str = "float16"
    efficiency: float = 1.0
    leftover_us: float = 0.0  # added to each program's leftover-wave units, spread by K-iterations
    fitted: tuple = ()  # (name, sim.rules.physics.Constant) of each fitted term, for the confidence


@dataclass(frozen=True)
class BlockWork:
    """The items each block (program) of a launch runs, in order. Item arrays, one entry each."""

    n_blocks: int
    block: np.ndarray  # which block runs the item
    round: np.ndarray  # its place among that block's items (0 = first)
    tile: np.ndarray  # the tile of C it works on
    k_begin: np.ndarray  # its K-iterations [k_begin, k_end)
    k_end: np.ndarray
    flops: np.ndarray
    dram_bytes: np.ndarray  # its share of the DRAM traffic
    atomic_bytes: np.ndarray  # partial sums it adds into the workspace (stream-K units)
    fixup: np.ndarray  # bool: it reads a split tile's sum back and stores the tile
    terms: ComputeTerms = field(default_factory=ComputeTerms, compare=False)

    @property
    def n_items(self) -> int:
        return int(self.block.size)

    @cached_property
    def active_per_round(self) -> np.ndarray:
        """How many blocks have an item in each round."""
        return np.bincount(self.round, minlength=int(self.round.max(initial=0)) + 1)

    @cached_property
    def items_per_block(self) -> np.ndarray:
        return np.bincount(self.block, minlength=self.n_blocks)

    @cached_property
    def leftover_share(self) -> np.ndarray:
        """Per item: its share of its program's leftover-wave K-iterations (stream-K's units over
        the tiles past the last whole wave of P programs); 0 for whole-wave items."""
        if not self.n_items:
            return np.zeros(0)
        full = (int(self.tile.max()) + 1) // self.n_blocks * self.n_blocks
        iters = np.where(self.tile >= full, self.k_end - self.k_begin, 0).astype(float)
        per_block = np.bincount(self.block, weights=iters, minlength=self.n_blocks)[self.block]
        return np.divide(iters, per_block, out=np.zeros_like(iters), where=per_block > 0)

    @property
    def split(self) -> bool:
        return bool(self.atomic_bytes.any())

    def describe(self) -> str:
        per = self.items_per_block
        units = int((self.atomic_bytes > 0).sum())
        text = f"{self.n_blocks:,} programs, {int(per.min())}-{int(per.max())} items each"
        return text + (f", {units:,} stream-K units" if units else "")


def matmul_work(problem: MatmulProblem, programs: int, stream_k: bool = False,
                concurrent: int | None = None) -> BlockWork:
    """The items of a launch of `programs` programs over `problem`'s tiles (see the module text).
    `concurrent`: tiles running at once (SMs x blocks per SM), for the DRAM bytes per tile."""
    tiles, k_tiles = problem.tiles, problem.k_tiles
    programs = int(programs)
    if programs < 1:
        raise ValueError(f"a launch needs at least one program, got {programs}")
    full = tiles // programs * programs if stream_k else tiles
    tile_bytes = problem.wave_bytes_per_tile(concurrent or min(programs, tiles))
    # whole tiles: program p takes p, p + P, ...
    whole = np.arange(full, dtype=np.int64)
    block, rnd = whole % programs, whole // programs
    tile, k0, k1 = whole, np.zeros(full, np.int64), np.full(full, k_tiles, np.int64)
    if stream_k and tiles > full:
        sk_block, sk_tile, sk0, sk1 = _stream_k_units(tiles - full, k_tiles, programs)
        sk_round = full // programs + _rank_within(sk_block)
        block = np.r_[block, sk_block]
        rnd = np.r_[rnd, sk_round]
        tile, k0, k1 = np.r_[tile, full + sk_tile], np.r_[k0, sk0], np.r_[k1, sk1]
    order = np.lexsort((rnd, block))
    block, rnd, tile, k0, k1 = block[order], rnd[order], tile[order], k0[order], k1[order]
    iters = k1 - k0
    whole_tile = iters == k_tiles
    return BlockWork(
        n_blocks=programs, block=block, round=rnd, tile=tile, k_begin=k0, k_end=k1,
        flops=iters.astype(float) * problem.iteration_flops,
        dram_bytes=tile_bytes * iters / k_tiles,
        atomic_bytes=np.where(whole_tile, 0.0, float(problem.partial_bytes)),
        fixup=~whole_tile & (k0 == 0))


def _stream_k_units(leftover: int, k_tiles: int, programs: int):
    """(program, leftover tile, k_begin, k_end) of every stream-K unit, as the kernel cuts them:
    program p's iterations [p * T // P, (p + 1) * T // P) of T = leftover x k_tiles."""
    total = leftover * k_tiles
    bounds = np.arange(programs + 1, dtype=np.int64) * total // programs
    out = []
    for p in range(programs):
        it, end = int(bounds[p]), int(bounds[p + 1])
        while it < end:
            t, kb = divmod(it, k_tiles)
            ke = min(k_tiles, kb + end - it)
            out.append((p, t, kb, ke))
            it += ke - kb
    arr = np.asarray(out, dtype=np.int64).reshape(-1, 4)
    return arr[:, 0], arr[:, 1], arr[:, 2], arr[:, 3]


def _rank_within(groups: np.ndarray) -> np.ndarray:
    """0, 1, ... within each run of equal values (the array is grouped)."""
    first = np.r_[True, groups[1:] != groups[:-1]]
    starts = np.maximum.accumulate(np.where(first, np.arange(groups.size), 0))
    return np.arange(groups.size) - starts


def uniform_work(n_blocks: int, flops: float, dram_bytes: float) -> BlockWork:
    """Any other kernel: every block does an equal share of the launch's FLOPs and bytes."""
    ids = np.arange(int(n_blocks), dtype=np.int64)
    zeros = np.zeros(ids.size, np.int64)
    return BlockWork(n_blocks=int(n_blocks), block=ids, round=zeros, tile=ids, k_begin=zeros,
                     k_end=zeros + 1, flops=np.full(ids.size, float(flops) / max(1, ids.size)),
                     dram_bytes=np.full(ids.size, float(dram_bytes) / max(1, ids.size)),
                     atomic_bytes=np.zeros(ids.size), fixup=np.zeros(ids.size, bool))
