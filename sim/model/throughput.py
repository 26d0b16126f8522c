"""What the scheduler predicts a compute-bound kernel's time and TFLOP/s to be: the sawtooth.

A block's time is its FLOPs at its SM's share of the GPU's tensor throughput, plus the part of its
DRAM traffic the tensor work does not hide, plus, for stream-K pieces, the partial sums it adds
into the workspace and the fix-up of a split tile:

    t = flops / (tensor_efficiency * tensor_rate / max(SMs, resident))
        + memory_exposed * dram_bytes / (DRAM peak / resident)
        + atomic_bytes / (atomic rate / resident) + fixup_us

The block scheduler (sim.schedule.scheduler) places the blocks, so the waves, the nearly empty last wave
and its tail come out of the schedule, not out of a formula. Persistent programs run their items
(sim.model.matmul_work) one after another; in each round the residency is that of the programs still
running (they start together and run equal whole tiles, so their rounds line up).

Added, not overlapped: a fully overlapped memory term (max of the two) would keep a tile's time
flat until its DRAM time outgrew its tensor time, which at these sizes never happens; the H200
measured the tile time rising 15% from 16 to 128 concurrent tiles, with the DRAM traffic. The
fraction not hidden (`memory_exposed`) and the tensor efficiency were fitted on two points of the
H200 sawtooth, the stream-K terms on one recorded trace (everything else is held out,
benchmarks/RESULTS.md).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, ClassVar

import numpy as np

from sim.rules.devices import GpuSpec, preset_for_device_name
from sim.inputs.errors import UserError
from sim.model.matmul_work import BlockWork, ComputeTerms, MatmulProblem, matmul_work
from sim.rules.occupancy import occupancy
from sim.schedule.scheduler import Simulation
from sim.schedule.timeline import Timeline

if TYPE_CHECKING:  # the launch model imports this module: only its name here
    from sim.model.launch_model import LaunchPrediction


@dataclass(frozen=True, slots=True)
class ComputeModel:
    tensor_efficiency: float  # of one SM's share of the datasheet dense tensor rate
    memory_exposed: float  # fraction of a block's DRAM time its tensor work does not hide
    atomic_gbps: float  # GPU-wide rate at which fp32 atomic adds of partial sums land in L2
    fixup_us: float  # reading a split tile's sum back, zeroing it, storing the tile
    source: str


def compute_model(gpu: GpuSpec | None = None) -> ComputeModel:
    """The GPU's fitted compute terms (its fit's "compute": the user's `calibrate --matmul` of it,
    else resources/fits/<GPU>_matmul.json; a GPU without either takes the fitted GPU's,
    sim.model.matmul_choice.fit_path). The launch overhead is the GPU's one (resources/physics,
    sim.model.launch_model)."""
    from sim.model.matmul_choice import compute_constant, tile_fit

    fit = tile_fit(gpu)
    c = fit["compute"]
    where = compute_constant(gpu).label if gpu is not None else \
        f"{fit['gpu']}, {c['date']}: {c['command']}"
    return ComputeModel(float(c["tensor_efficiency"]), float(c["memory_exposed"]),
                        float(c["atomic_gbps"]), float(c["fixup_us"]), f"{c['source']} ({where})")


def tensor_tflops(gpu: GpuSpec, dtype: str = "float16") -> float:
    """The datasheet dense tensor rate for `dtype` inputs (FP32 accumulation); a detected device
    takes its preset's figure (no driver reports one)."""
    attr = {"float16": "tensor_tflops_fp16", "bfloat16": "tensor_tflops_bf16"}.get(dtype)
    if attr is None:
        raise UserError(f"no tensor rate for {dtype}; the model knows float16 and bfloat16")
    value = getattr(gpu, attr)
    if value is None and gpu.detected:
        twin = preset_for_device_name(gpu.name, gpu.sm_count)
        value = getattr(twin, attr) if twin is not None and twin.sm_count == gpu.sm_count else None
    if value is None:
        raise UserError(f"{gpu.name} has no {dtype} tensor rate on record "
                        f"({'no BF16 tensor cores' if dtype == 'bfloat16' else 'no sourced figure'})")
    return float(value)


@dataclass(frozen=True)
class ComputeBoundCost:
    """sim.schedule.scheduler.CostModel: each block's items timed by the formula in the module text,
    plus the kernel's fitted terms (the work's ComputeTerms): stream-K's leftover-wave excess on
    its leftover units, and every item's time over the kernel's fitted efficiency."""

    id: ClassVar[str] = "compute"
    work: BlockWork = field(repr=False)
    sm_count: int
    tensor_flops_per_us: float  # the whole GPU's, efficiency applied
    dram_bytes_per_us: float
    atomic_bytes_per_us: float
    memory_exposed: float
    fixup_us: float
    first_block: int = 0  # block id 0 of the simulation is this block of the grid
    efficiency: float = 1.0  # the kernel's fitted one (sim.model.matmul_choice.candidate_terms)
    leftover_us: float = 0.0  # stream-K's fitted leftover-wave excess per program

    @classmethod
    def for_gpu(cls, gpu: GpuSpec, work: BlockWork, dtype: str | None = None,
                model: ComputeModel | None = None, first_block: int = 0) -> "ComputeBoundCost":
        """`dtype` None: the work's own (its ComputeTerms, as the launch was predicted for);
        `model` None: the GPU's (compute_model)."""
        t, model = work.terms, model or compute_model(gpu)
        return cls(work, gpu.sm_count,
                   tensor_tflops(gpu, dtype or t.dtype) * 1e6 * model.tensor_efficiency,
                   gpu.peak_dram_gbps * 1e3, model.atomic_gbps * 1e3, model.memory_exposed,
                   model.fixup_us, first_block, t.efficiency, t.leftover_us)

    def item_times(self, resident: np.ndarray, items=slice(None)) -> np.ndarray:
        """The time of each of `items` (an index or mask of the work's items; default all) with
        `resident` blocks on the GPU during it."""
        w = self.work
        r = np.maximum(resident, 1)
        bare = (w.flops[items] * np.maximum(self.sm_count, r) / self.tensor_flops_per_us
                + self.memory_exposed * w.dram_bytes[items] * r / self.dram_bytes_per_us
                + w.atomic_bytes[items] * r / self.atomic_bytes_per_us
                + w.fixup[items] * self.fixup_us)
        if self.leftover_us:
            bare = bare + self.leftover_us * w.leftover_share[items]
        return bare / self.efficiency

    def round_residency(self, resident_at_start: np.ndarray | int) -> np.ndarray:
        """Per item: the blocks resident during its round (fewer as programs run out of items)."""
        active = self.work.active_per_round[self.work.round]
        return np.minimum(resident_at_start, active)

    def durations(self, block_ids: np.ndarray, resident_blocks: int,
                  sms: np.ndarray | None = None) -> np.ndarray:
        ids = np.asarray(block_ids) + self.first_block
        w = self.work
        mine = np.isin(w.block, ids)
        times = self.item_times(self.round_residency(resident_blocks)[mine], mine)
        per_block = np.bincount(w.block[mine], weights=times, minlength=w.n_blocks)
        return per_block[ids]


# ---- the prediction of one launch ----------------------------------------------------------------

# Tutorial 03's smaller tiles, largest first: where a kernel's own tile does not fit a GPU's shared
# memory (a T4 has 64 KiB), its prediction uses the first of these that launches, and says so.
SMALLER_TILES = ((64, 256, 32, 4, 4), (128, 128, 32, 4, 4), (128, 64, 32, 4, 4),
                 (64, 64, 32, 4, 4), (32, 64, 32, 5, 2))


def is_tiled_matmul(kernel) -> bool:
    """A declaration whose blocks are BLOCK_M x BLOCK_N tiles of an M x N x K product."""
    try:
        dims = kernel.size_dims(1)
    except Exception:  # noqa: BLE001 - a declaration's own lambda failed: not ours to model
        return False
    return ({"M", "N", "K"} <= set(dims)
            and {"BLOCK_M", "BLOCK_N", "BLOCK_K"} <= set(getattr(kernel, "block", {})))


def pipeline_smem_bytes(params: dict, itemsize: int = 2) -> int:
    """Triton's software pipeline keeps num_stages A and B slices in shared memory; this is what
    it reported for every tutorial-03 tile on sm_90."""
    return (int(params.get("num_stages", 3)) * (params["BLOCK_M"] + params["BLOCK_N"])
            * params["BLOCK_K"] * itemsize)


def estimated_registers(params: dict) -> int:
    """The fp32 accumulator per thread plus ~96 for addresses and operand fragments: within a few
    registers of ptxas for the tutorial-03 tiles, capped at 255."""
    threads = 32 * int(params.get("num_warps", 4))
    return min(255, params["BLOCK_M"] * params["BLOCK_N"] // threads + 96)


@dataclass(frozen=True)
class MatmulPrediction:
    kernel: str
    gpu: str
    dims: dict
    params: dict  # the block parameters predicted for
    problem: MatmulProblem
    programs: int
    blocks_per_sm: int
    launch: "LaunchPrediction" = field(repr=False)  # sim.model.launch_model's answer, compute mode
    cost: ComputeBoundCost = field(repr=False)
    note: str = ""  # why these block parameters (a smaller tile where the kernel's does not fit)

    @property
    def time_us(self) -> float:
        """What device events would report: the launch model's whole-launch time."""
        return self.launch.whole_launch_us

    @property
    def tflops(self) -> float:
        return self.problem.flops / self.time_us / 1e6

    @property
    def simulation(self) -> Simulation:
        return self.launch.simulation

    @property
    def tiles(self) -> int:
        return self.problem.tiles

    @property
    def concurrent_tiles(self) -> int:
        return self.blocks_per_sm * self.simulation.gpu.sm_count

    @property
    def waves(self) -> float:
        """Tiles over the tiles that run at once: 133 / 132 = 1.008 (two waves for the tiled kernel)."""
        from sim.rules.geometry import waves_of

        return waves_of(self.tiles, self.concurrent_tiles)

    @property
    def work(self) -> BlockWork:
        return self.cost.work

    def item_timeline(self) -> Timeline:
        return item_timeline(self.simulation, self.cost)


def predict_matmul(kernel, dims: dict, gpu: GpuSpec, block: dict | None = None, *,
                   dtype: str | None = None, resources: tuple[int, int] | None = None,
                   model: ComputeModel | None = None,
                   placement="tpc-spread", fitted: bool = True) -> MatmulPrediction:
    """Time and TFLOP/s of `kernel` (a declaration: kernels.declare.spec.KernelSpec) on an M x N x K
    product, by the block scheduler with the compute-bound cost. `resources` = (registers per
    thread, shared memory per block) of the compiled kernel; default: estimated from the tile.
    `dtype` None: the one matmul launches are predicted with (sim.model.matmul_choice.matmul_dtype).
    `fitted` False: the bare model, without the kernel's fitted terms (what they are fitted
    against)."""
    from sim.model.matmul_choice import matmul_dtype

    dtype = dtype or matmul_dtype(gpu)
    if not is_tiled_matmul(kernel):
        raise UserError(f"{kernel.name} is not a tiled matrix product (no M, N, K and BLOCK_M/N/K)")
    from sim.model.matmul_choice import runs_on

    if runs_on(kernel, gpu):
        raise UserError(f"{kernel.name} cannot run on {gpu.name}: {runs_on(kernel, gpu)}")
    params = kernel.block_params(block)
    itemsize = MatmulProblem(1, 1, 1, dtype=dtype).itemsize
    note, occ = "", _occupancy(gpu, params, resources, itemsize)
    if not occ.can_launch and resources is None:
        for bm, bn, bk, stages, warps in SMALLER_TILES:
            smaller = {**params, "BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "num_stages": stages,
                       "num_warps": warps}
            occ = _occupancy(gpu, smaller, None, itemsize)
            if occ.can_launch:
                note = (f"{params['BLOCK_M']}x{params['BLOCK_N']}x{params['BLOCK_K']} tiles do not "
                        f"fit {gpu.name}; predicted with {bm}x{bn}x{bk}")
                params = smaller
                break
    if not occ.can_launch:
        raise UserError(f"{kernel.name} cannot run on {gpu.name}: {occ.reason}")
    problem, work = _matmul_launch(kernel, dims, params, gpu, occ.blocks_per_sm, dtype, fitted)
    from sim.model.launch_model import Launch, predict_launch

    cost = ComputeBoundCost.for_gpu(gpu, work, model=model)
    launch = Launch(work.n_blocks, 32 * int(params.get("num_warps", 4)), occ.blocks_per_sm,
                    float(work.dram_bytes.sum()), flops=float(problem.flops), work=work)
    lp = predict_launch(gpu, launch, "compute", placement=placement, max_waves=None, cost=cost)
    return MatmulPrediction(kernel.name, gpu.name, dict(M=problem.M, N=problem.N, K=problem.K),
                            params, problem, work.n_blocks, occ.blocks_per_sm, lp, cost, note)


def _matmul_launch(kernel, dims: dict, params: dict, gpu: GpuSpec, blocks_per_sm: int,
                   dtype: str | None = None, fitted: bool = True) -> tuple[MatmulProblem, BlockWork]:
    """The product and what each program of `kernel`'s grid (its own rule) does, with the kernel's
    fitted terms (sim.model.matmul_choice.candidate_terms): the one place a matmul launch's work
    is made, so every surface times it alike."""
    from sim.model.matmul_choice import candidate_terms, matmul_dtype

    dtype = dtype or matmul_dtype(gpu)
    M, N, K = (int(dims[k]) for k in ("M", "N", "K"))
    problem = MatmulProblem(M, N, K, params["BLOCK_M"], params["BLOCK_N"], params["BLOCK_K"],
                            int(params.get("GROUP_M", 8)), dtype)
    shape = kernel.launch_shape(max(M, N, K), params, gpu.sm_count, dims=dims)
    stream_k = bool(getattr(kernel, "constants", {}).get("STREAM_K", False))
    concurrent = blocks_per_sm * gpu.sm_count
    work = matmul_work(problem, shape.grid_blocks, stream_k, concurrent=concurrent)
    terms = candidate_terms(kernel, params, gpu, problem, concurrent, dtype) if fitted \
        else ComputeTerms(dtype)
    return problem, replace(work, terms=terms)


@dataclass(frozen=True)
class LaunchWork:
    """What the compute-bound model needs to work out a launch's blocks: cheap to make and to
    compare (the window makes one per change of the launch); `build()` does the work, in the
    simulation's worker thread."""

    kernel: object = field(repr=False)  # the declaration (kernels.declare.spec.KernelSpec)
    n: int
    params: tuple  # the block parameters, as sorted (name, value) pairs
    gpu: GpuSpec = field(repr=False)
    blocks_per_sm: int
    grid_blocks: int
    dims: tuple | None = None  # ((name, size), ...) when they are not those of n

    def build(self) -> BlockWork:
        """A tiled matmul's programs item by item; any other kernel that declares its FLOPs, an
        equal share of them per block. UserError when the kernel declares no FLOPs."""
        from sim.model.matmul_work import uniform_work
        from sim.schedule.scheduler import MAX_SIMULATED_BLOCKS

        kernel, dims = self.kernel, dict(self.dims or ()) or None
        if is_tiled_matmul(kernel):
            params = kernel.block_params(dict(self.params))  # the declaration's defaults filled in
            sizes = kernel.size_dims(self.n, dims)
            tiles = (-(-sizes["M"] // params["BLOCK_M"])) * (-(-sizes["N"] // params["BLOCK_N"]))
            if tiles > MAX_SIMULATED_BLOCKS:
                raise UserError(f"{tiles:,} tiles is more than the simulator keeps "
                                f"({MAX_SIMULATED_BLOCKS:,}); use a smaller matrix")
            return _matmul_launch(kernel, sizes, params, self.gpu, self.blocks_per_sm)[1]
        flops = kernel.flops_of(self.n, dims) if getattr(kernel, "flops", None) is not None else None
        if not flops:
            raise UserError(f"{kernel.name} declares no FLOPs, so the compute-bound model has "
                            "nothing to time; use the memory-bound or uniform model")
        nbytes = kernel.bytes_moved(self.n, dims=dims) if getattr(kernel, "bytes", None) else 0
        return uniform_work(self.grid_blocks, flops, nbytes)


def launch_work(kernel, n: int, params: dict, gpu: GpuSpec, blocks_per_sm: int,
                grid_blocks: int, dims: dict | None = None) -> LaunchWork:
    return LaunchWork(kernel, int(n), tuple(sorted(params.items())), gpu, int(blocks_per_sm),
                      int(grid_blocks), tuple(sorted(dims.items())) if dims else None)


def _occupancy(gpu: GpuSpec, params: dict, resources, itemsize: int):
    regs, smem = resources or (estimated_registers(params), pipeline_smem_bytes(params, itemsize))
    return occupancy(gpu, 32 * int(params.get("num_warps", 4)), int(regs), int(smem))


def item_timeline(sim: Simulation, cost: ComputeBoundCost) -> Timeline:
    """The schedule item by item (tiles and stream-K units, as the kernels stamp them): each
    block's items one after another from its start, timed as the cost model timed them."""
    w = cost.work
    resident = np.zeros(w.n_items)
    starts = sim.block_start_us[w.block - cost.first_block]
    # the residency each block saw when it started, rebuilt from the schedule
    at_start = np.searchsorted(np.sort(sim.block_start_us), sim.block_start_us, side="right") \
        - np.searchsorted(np.sort(sim.block_end_us), sim.block_start_us, side="right")
    resident[:] = at_start[w.block - cost.first_block]
    times = cost.item_times(cost.round_residency(resident))
    # a block's items are contiguous and in order: each ends at the running sum within its block
    csum = np.cumsum(times)
    first = np.r_[True, w.block[1:] != w.block[:-1]]
    head = np.maximum.accumulate(np.where(first, np.arange(w.n_items), 0))
    ends_within = csum - csum[head] + times[head]
    start = starts + ends_within - times
    end = starts + ends_within
    sm = sim.block_sm[w.block - cost.first_block]
    lane = sim.block_slot[w.block - cost.first_block]
    order = np.lexsort((w.round, w.tile))  # tile order, as a recorded trace lists them
    return Timeline(sim.gpu.sm_count, sim.blocks_per_sm, sm[order], lane[order], start[order],
                    end[order], capacity=sim.n_slots)


# ---- sweeps and their drops --------------------------------------------------------------------

def sweep_dims(dims_list, kernels, gpu: GpuSpec, resources: dict | None = None,
               **kw) -> dict[str, list[MatmulPrediction]]:
    """Predictions for every kernel at every M x N x K (`resources`: kernel name -> (registers,
    shared memory) of its compiled form, where known)."""
    res = resources or {}
    return {k.name: [predict_matmul(k, d, gpu, resources=res.get(k.name), **kw) for d in dims_list]
            for k in kernels}


def drops(tflops, min_drop: float = 0.10) -> list[int]:
    """Indices i where TFLOP/s falls by more than `min_drop` (a fraction) from point i - 1: where
    one more step of size starts a new, nearly empty wave."""
    y = np.asarray(tflops, dtype=float)
    return [i for i in range(1, y.size) if y[i] < (1.0 - min_drop) * y[i - 1]]


def wave_multiples(concurrent_tiles: int, max_tiles: int) -> list[int]:
    """SMs x tiles per SM, and its multiples up to max_tiles: the sizes past which a wave starts."""
    return list(range(concurrent_tiles, int(max_tiles) + 1, max(1, concurrent_tiles)))


def relative_error(predicted: float, measured: float) -> float:
    return predicted / measured - 1.0 if measured else math.nan
