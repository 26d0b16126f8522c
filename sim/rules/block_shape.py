"""2D and 3D blocks and grids: how a block's threads fold into warps.

CUDA numbers a block's threads x fastest: thread (x, y, z) of a Dx × Dy × Dz block has linear id
x + y·Dx + z·Dx·Dy, and warp w holds ids 32w .. 32w+31 (CUDA C++ Programming Guide, "Thread
Hierarchy" and "SIMT Architecture"). So a block's warps, and its idle lanes, depend only on its
thread count; what the shape changes is which rows a warp spans: in a 24 × 24 block, warp 0 is
row 0 and the first 8 threads of row 1.
"""

from __future__ import annotations

from dataclasses import dataclass

# The CUDA limits on block and grid dimensions (Programming Guide, "Technical Specifications per
# Compute Capability"): the same on every GPU we model, compute capability 5.0 on.
MAX_BLOCK_DIMS = (1024, 1024, 64)
MAX_GRID_DIMS = (2**31 - 1, 65535, 65535)
AXES = "xyz"


@dataclass(frozen=True, slots=True)
class Dims:
    """A block's or a grid's extent along x, y and z (1 where unused)."""
    x: int
    y: int = 1
    z: int = 1

    @property
    def tuple(self) -> tuple[int, int, int]:
        return (self.x, self.y, self.z)

    @property
    def count(self) -> int:
        return self.x * self.y * self.z

    @property
    def rank(self) -> int:
        """1, 2 or 3: the dimensions a user gave (trailing 1s dropped)."""
        return 3 if self.z > 1 else 2 if self.y > 1 else 1

    def text(self, sep: str = "×") -> str:
        return sep.join(str(v) for v in self.tuple[:self.rank])


def check_dims(dims: tuple[int, ...], what: str, limits: tuple[int, int, int],
               max_count: int | None = None) -> Dims:
    """`dims` (1 to 3 positive whole numbers) as Dims, or ValueError in one line naming the rule."""
    if not 1 <= len(dims) <= 3:
        raise ValueError(f"{what} has 1 to 3 dimensions (x, y, z), got {len(dims)}")
    for axis, value, top in zip(AXES, dims, limits):
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"{what}: {axis} must be a whole number, got {value!r}")
        if value < 1:
            raise ValueError(f"{what}: {axis} must be at least 1, got {value}")
        if value > top:
            raise ValueError(f"{what}: {axis} is at most {top:,}, got {value:,}")
    out = Dims(*dims)
    if max_count is not None and out.count > max_count:
        raise ValueError(f"{what} {out.text('x')} is {out.count:,} threads, over the limit of {max_count:,}")
    return out


def block_dims(dims: tuple[int, ...], max_threads: int = 1024) -> Dims:
    return check_dims(dims, "block", MAX_BLOCK_DIMS, max_threads)


def block_of(threads: int, y: int = 1, z: int = 1) -> Dims:
    """The block of `threads` threads that is `y` high and `z` deep (x = threads / (y·z))."""
    if y < 1 or z < 1 or threads % (y * z):
        raise ValueError(f"{threads:,} threads do not make a block {y} high and {z} deep "
                         f"(threads must be a multiple of y × z = {y * z:,})")
    return block_dims((threads // (y * z), y, z))


def grid_dims(dims: tuple[int, ...]) -> Dims:
    return check_dims(dims, "grid", MAX_GRID_DIMS)


def thread_coords(block: Dims, linear_id: int) -> tuple[int, int, int]:
    """(x, y, z) of the thread with this linear id (x fastest)."""
    x, rest = linear_id % block.x, linear_id // block.x
    return x, rest % block.y, rest // block.y


@dataclass(frozen=True, slots=True)
class WarpFold:
    """One warp of a block: the threads it holds and the rows (y, z) they come from."""
    warp: int
    first: tuple[int, int, int]  # (x, y, z) of its lane 0
    last: tuple[int, int, int]  # (x, y, z) of its last active lane
    active: int  # lanes with a thread
    idle: int  # lanes without one (only the last warp of a block has any)
    rows: int  # distinct (y, z) rows it spans

    def line(self) -> str:
        span = f"({', '.join(map(str, self.first))}) … ({', '.join(map(str, self.last))})"
        idle = f", {self.idle} idle lanes" if self.idle else ""
        return f"warp {self.warp}: threads {span}, {self.rows} row{'s' if self.rows != 1 else ''}{idle}"


def warp_folds(block: Dims, warp_size: int = 32) -> list[WarpFold]:
    """Every warp of the block, in order: which threads it holds (x fastest)."""
    out = []
    for w, start in enumerate(range(0, block.count, warp_size)):
        end = min(start + warp_size, block.count) - 1
        first, last = thread_coords(block, start), thread_coords(block, end)
        row_first, row_last = start // block.x, end // block.x
        active = end - start + 1
        out.append(WarpFold(w, first, last, active, warp_size - active, row_last - row_first + 1))
    return out


def lane_rows(block: Dims, warp_size: int = 32) -> list[list[int]]:
    """For each warp, each active lane's row index (y + z·Dy): what the lanes picture shades by."""
    rows = []
    for start in range(0, block.count, warp_size):
        ids = range(start, min(start + warp_size, block.count))
        rows.append([i // block.x for i in ids])
    return rows


def fold_summary(block: Dims, warp_size: int = 32) -> str:
    """A sentence on how the block becomes warps: '24×20 = 480 threads = 15 warps; a row is 24
    threads, so warps straddle rows'."""
    n = block.count
    warps = -(-n // warp_size)
    idle = warps * warp_size - n
    head = (f"{n:,} threads" if block.rank == 1 else f"{block.text()} = {n:,} threads") + \
        f" = {warps} warp{'s' if warps != 1 else ''}"
    waste = (f", {idle} idle lanes in the last" if idle else ", no idle lane")
    if block.rank == 1:
        return head + waste
    if block.x % warp_size == 0:
        per = block.x // warp_size
        how = f"each row of {block.x} is {per} whole warp{'s' if per != 1 else ''}"
    elif warp_size % block.x == 0:
        how = f"each warp holds {warp_size // block.x} whole rows of {block.x}"
    else:
        how = f"rows of {block.x} do not divide {warp_size}, so warps straddle rows"
    return f"{head}{waste}; x runs fastest: {how}"
