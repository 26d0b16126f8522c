"""matmul_auto's choice: which variant (tiled, persistent, stream-K, TMA tiled or TMA persistent)
and which tile, by the model.

No autotuning run: every candidate (a variant and a tile configuration from a small set) is
predicted by the compute-bound launch model (`predict_candidate`, the one place a prediction is
asked for) and the fastest is taken. The choice carries every candidate's tiles, waves and
predicted time, so `explain` and the window can say why.

The variants' declarations come from the caller (kernels/ owns them; sim/ imports no kernels).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import lru_cache

from sim.rules.devices import GpuSpec
from sim.inputs.errors import UserError
from sim.inputs.files import read_json_file
from sim.inputs.places import resource
from sim.model.matmul_work import ITEMSIZE

VARIANTS = ("tiled", "persistent", "stream_k", "tma", "tma_persistent", "tma_stream_k")
# Eighteen candidates are simulated per choice (the window asks at every slider move): bigger
# products than 2^16 tiles (16384 x 32768 in 128 x 256 tiles; 0.2 s a candidate) are refused.
MAX_CHOICE_TILES = 2**16
VARIANT_TITLES = {"tiled": "tiled", "persistent": "persistent", "stream_k": "stream-K",
                  "tma": "TMA-tiled", "tma_persistent": "TMA-persistent",
                  "tma_stream_k": "TMA-stream-K"}  # one word each
# The TMA kernels (kernels/bodies/matmul_tma.py) reach A, B and C through tensor descriptors,
# whose row strides the CUDA driver's cuTensorMapEncodeTiled takes only in multiples of 16 bytes.
TMA_VARIANTS = ("tma", "tma_persistent", "tma_stream_k")
TMA_MIN_CC = (9, 0)  # the Tensor Memory Accelerator came with Hopper (CUDA Programming Guide)
TMA_ROW_ALIGN_BYTES = 16

# (BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M, num_warps, num_stages): tutorial 03's Hopper winner, a
# half-size tile that fills a wave where the big one fills half (N=2048 at M=1024: 64 vs 128
# tiles), and a quarter-size tile two of which fit on an SM.
CANDIDATE_TILES = ((128, 256, 64, 8, 8, 3), (128, 128, 64, 8, 8, 4), (64, 128, 64, 8, 4, 4))


def candidate_tiles(variant: str) -> tuple:
    """The tiles matmul_auto weighs for `variant`: every variant weighs CANDIDATE_TILES (a variant's
    own pipeline stages, TMA tiled 128x256x64 at s4, did not hold across two H200s)."""
    return CANDIDATE_TILES


def tile_params(tile: tuple) -> dict:
    bm, bn, bk, gm, warps, stages = tile
    return dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=gm, num_warps=warps, num_stages=stages)


def tile_label(params: dict) -> str:
    return (f"{params['BLOCK_M']}x{params['BLOCK_N']}x{params['BLOCK_K']} "
            f"w{params['num_warps']} s{params['num_stages']}")


# Stream-K's leftover wave runs slower than its FLOPs, bytes and atomics say where the leftover
# tiles fill 70-97% of a wave (the cause is not modelled): the excess, in tile times, at these
# fills (piecewise linear, resources/fits/<GPU>_matmul.json "stream_k"), fitted on the sawtooth's
# first wave (M=1024, K=8192, N=256..4096) and checked on its second and third (N=4352..14080),
# all with 128x256x64 tiles. It is that tile's: fitted on the 128x128 and 64x128 tiles the knots
# come out at or below zero, and carried to them in tile times it made stream-K 128x128 13-17%
# slow at fills 0.9-0.97, so the other tiles get none (benchmarks/RESULTS.md).


def tma_fits(M: int, N: int, K: int, itemsize: int = 2) -> bool:
    """Whether TMA can address these row-major matrices: every row of A (K long), of B and of C
    (N long) on a 16-byte boundary. M is free: it counts rows, it is no row's length."""
    return (M >= 1 and (int(K) * itemsize) % TMA_ROW_ALIGN_BYTES == 0
            and (int(N) * itemsize) % TMA_ROW_ALIGN_BYTES == 0)


def leftover_fill(tiles: int, concurrent: int) -> float:
    """How full stream-K's leftover wave is: leftover tiles over the tiles that run at once."""
    return (tiles % concurrent) / concurrent if concurrent else 0.0


def tile_time_us(gpu: GpuSpec, params: dict, K: int, dtype: str) -> float:
    """One whole tile's tensor time on one SM (the model's efficiency applied)."""
    from sim.model.throughput import compute_model, tensor_tflops

    per_sm = tensor_tflops(gpu, dtype) * 1e6 * compute_model(gpu).tensor_efficiency / gpu.sm_count
    return 2 * params["BLOCK_M"] * params["BLOCK_N"] * K / per_sm


def stream_k_slowdown(fill: float, knots=None, gpu: GpuSpec | None = None) -> float:
    """Stream-K's leftover wave's excess, in tile times, at `fill` (the GPU's fitted curve)."""
    import numpy as np

    curve = tile_fit(gpu)["stream_k"]
    return float(np.interp(fill, curve["fills"], curve["slowdown"] if knots is None else knots))


# Per GPU, resources/fits/<GPU>_matmul.json: the compute model's fitted terms, stream-K's
# leftover-wave curve and each candidate's sustained efficiency against the compute model
# (smaller tiles stage fewer FLOPs per shared-memory byte; w4 has fewer warps to hide latency).
# `main.py calibrate --matmul` writes the same format into the user's config folder
# (user_fit_path), which wins over the shipped file, as the user's physics file does.
FITS_DIR = resource("fits")
TILE_FIT_PATH = min(FITS_DIR.glob("*_matmul.json"))  # the one GPU fitted: every other assumes it
FIT_FORMAT = "warpscope-tile-fit/3"
MAX_FIT_BYTES = 1 << 20


def user_fit_path(name: str):
    """The user's matmul fit for a GPU (`main.py calibrate --matmul` writes it), named by the key
    the user's physics file is (sim.rules.physics.gpu_key)."""
    from sim.inputs.places import fits_dir
    from sim.rules.physics import gpu_key

    return fits_dir() / f"{gpu_key(name)}_matmul.json"


def fit_path(gpu: GpuSpec | None = None):
    """The user's calibration of this GPU where there is a sound one (a damaged one is named on
    stderr, once, and skipped), else the GPU's own shipped fit, else the fitted GPU's (its terms
    then are assumed)."""
    if gpu is None:
        return TILE_FIT_PATH
    mine = user_fit_path(gpu.name)
    if os.path.lexists(mine):
        try:
            read_fit(mine)
            return mine
        except UserError as exc:
            from sim.schedule.dispatch_profile import _ignored

            _ignored(mine, str(exc))
    return shipped_fit_path(gpu)


def shipped_fit_path(gpu: GpuSpec):
    """The GPU's own shipped fit (resources/fits), else the fitted GPU's."""
    from sim.rules.physics import physics_for, physics_key

    own = FITS_DIR / f"{physics_key(physics_for(gpu).gpu)}_matmul.json"
    return own if own.is_file() else TILE_FIT_PATH


def read_fit(path) -> dict:
    """The fit at `path`, read again when the file changes (calibrate rewrites the user's)."""
    try:
        st = os.stat(path)
    except OSError as exc:
        raise UserError(f"{path}: {exc.strerror or exc}") from None
    return _read_fit(str(path), (st.st_mtime_ns, st.st_size, st.st_ino))


@lru_cache(maxsize=16)
def _read_fit(path: str, _stamp: tuple = ()) -> dict:
    data = read_json_file(path, "matmul fit", MAX_FIT_BYTES)  # damaged: one line
    check_fit(data, path)
    return data


def check_fit(data, path) -> None:
    """UserError (one line) unless `data` has what the model reads from a matmul fit."""
    def bad(why):
        raise UserError(f"{path}: not a usable matmul fit: {why}")

    if not isinstance(data, dict) or data.get("format") != FIT_FORMAT:
        bad(f"format is not {FIT_FORMAT}")
    c = data.get("compute")
    if not isinstance(c, dict):
        bad("no compute terms")
    for k in ("tensor_efficiency", "memory_exposed", "atomic_gbps", "fixup_us"):
        v = c.get(k)
        if not isinstance(v, (int, float)) or isinstance(v, bool) or not 0 <= v < 1e7:
            bad(f"compute {k} is {v!r}")
    if not 0 < c["tensor_efficiency"] <= 2 or not c["atomic_gbps"] > 0:
        bad("compute terms out of range")
    eff = data.get("efficiency")
    if not isinstance(eff, dict) or not all(
            isinstance(v, (int, float)) and not isinstance(v, bool) and 0 < v <= 2
            for v in eff.values()):
        bad("efficiency must map candidates to numbers in (0, 2]")
    sk = data.get("stream_k")
    if not isinstance(sk, dict) or not all(isinstance(sk.get(k), list) for k in ("tile", "fills",
                                                                                "slowdown")) \
            or len(sk["fills"]) != len(sk["slowdown"]) or len(sk["fills"]) < 2:
        bad("no stream-K curve")
    if not isinstance(data.get("gpu"), str):
        bad("no GPU named")


def tile_fit(gpu: GpuSpec | None = None) -> dict:
    """The stored fit of `gpu` (fit_path)."""
    return read_fit(fit_path(gpu))


def loop_suffix(loop: dict | None) -> str:
    """A kernel's loop flags as labels carry them: " [flatten=False]"; "" for none."""
    return f" [{' '.join(f'{k}={v}' for k, v in sorted(loop.items()))}]" if loop else ""


def candidate_key(spec, params: dict) -> str:
    return f"{spec.name} {tile_label(params)}"  # the declared loop flags: none are fitted


def efficiency_key(spec, params: dict, gpu: GpuSpec | None = None) -> str:
    """The fit's entry this kernel and tile take their efficiency from: their own, else (a kernel
    not measured yet) that of the kernel the fit says it is assumed like ("assumed_from"), at
    the same tile; "" where neither was fitted."""
    fit = tile_fit(gpu)
    fitted = fit.get("efficiency", {})
    key = candidate_key(spec, params)
    if key in fitted:
        return key
    donor = fit.get("assumed_from", {}).get(spec.name)
    donor_key = f"{donor} {tile_label(params)}" if donor else ""
    return donor_key if donor_key in fitted else ""


def candidate_efficiency(spec, params: dict, gpu: GpuSpec | None = None) -> float:
    """The fitted model-over-measured time of this kernel and tile (or of the kernel it is
    assumed like, efficiency_key); 1 where none was fitted."""
    key = efficiency_key(spec, params, gpu)
    return float(tile_fit(gpu)["efficiency"][key]) if key else 1.0


def efficiency_assumed(spec, params: dict, gpu: GpuSpec | None = None) -> bool:
    """True where the efficiency is another kernel's (no measurement of this one yet)."""
    key = efficiency_key(spec, params, gpu)
    return bool(key) and key != candidate_key(spec, params)


def matmul_dtype(gpu: GpuSpec) -> str:
    """The inputs' dtype a matmul launch is predicted with where none is given: bf16 where the GPU
    has a bf16 tensor rate (a detected device: its preset's), else fp16. matmul_auto's table and
    every surface's launch (sim.model.throughput) share it."""
    return "bfloat16" if gpu.tensor_tflops_bf16 or gpu.detected else "float16"


def _fitted_constant(value: float, unit: str, gpu: GpuSpec, date: str, command: str,
                     source: str, like: str = "", donor: str = "", note: str = ""):
    """A fitted term as the confidence reads it (sim.rules.physics.Constant): "calibrated on
    <GPU>" where the user's calibration of `gpu` measured it, measured where `gpu` is the shipped
    fit's GPU, else assumed from the GPU it was measured on (`donor`: the fit says the term is
    another GPU's; `like`: it is another kernel's; `note`: said beside "calibrated on <GPU>")."""
    from sim.rules.physics import Constant, physics_for

    fit = tile_fit(gpu)
    mine = fit.get("calibrated", "")  # the user's calibration: "calibrated on <GPU>"
    if not like and not donor and (mine or physics_for(gpu).gpu == fit["gpu"]):
        return Constant(value, unit, "measured", mine + (f" ({note})" if note else "") if mine
                        else source, date, command)
    origin = f"{like}, " if like else ""
    return Constant(value, unit, "assumed", source, assumed_from=donor or fit["gpu"],
                    origin=f"{origin}measured {date}: {command} there")


def compute_constant(gpu: GpuSpec):
    """The compute model's fitted terms (compute_model) as the confidence reads them, by their
    tensor efficiency: where they came from ("calibrated on <GPU>, <date>", "assumed from H200")."""
    c = tile_fit(gpu)["compute"]
    return _fitted_constant(float(c["tensor_efficiency"]), "", gpu, c.get("date", ""),
                            c.get("command", ""), c.get("source", ""),
                            donor=c.get("assumed_from", ""), note=c.get("note", ""))


def candidate_terms(spec, params: dict, gpu: GpuSpec, problem, concurrent: int, dtype: str):
    """THE fitted terms of one kernel and tile on an M x N x K `problem` (sim.model.matmul_work.
    ComputeTerms, which the compute-bound cost applies): its efficiency (candidate_efficiency) and,
    for stream-K with the tile it was measured with, the leftover wave's excess at its fill, in
    tile times; with them, where the compute model's terms came from (compute_constant). A GPU
    without its own fit takes the fitted GPU's, labelled assumed."""
    from sim.model.matmul_work import ComputeTerms

    fitted = [("compute_terms", compute_constant(gpu))]
    key, fit = efficiency_key(spec, params, gpu), tile_fit(gpu)
    efficiency = candidate_efficiency(spec, params, gpu)
    if key:
        date = fit.get("tma", {}).get("date", fit.get("date", "")) if "_tma" in key \
            else fit.get("date", "")
        like = f"as {key}" if efficiency_assumed(spec, params, gpu) else ""
        donor = fit.get("assumed_gpu", "") if key in fit.get("efficiency_assumed", ()) else ""
        fitted.append(("tile_efficiency", _fitted_constant(
            efficiency, "", gpu, date, fit.get("command", ""), f"{fit_path(gpu).name}: {key}",
            like, donor)))
    leftover = 0.0
    tile = tuple(params[k] for k in ("BLOCK_M", "BLOCK_N", "BLOCK_K"))
    curve = fit["stream_k"]
    if getattr(spec, "constants", {}).get("STREAM_K") and tile == tuple(curve["tile"]):
        leftover = (stream_k_slowdown(leftover_fill(problem.tiles, concurrent), gpu=gpu)
                    * tile_time_us(gpu, params, problem.K, dtype))
        fitted.append(("stream_k_leftover_us", _fitted_constant(
            leftover, "us", gpu, curve["date"], curve["command"], curve["source"],
            donor=curve.get("assumed_from", ""))))
    return ComputeTerms(dtype, efficiency, leftover, tuple(fitted))


def predict_candidate(spec, dims: dict, gpu: GpuSpec, params: dict, dtype: str):
    """THE prediction of one candidate: (prediction, its whole-launch time in us), the launch
    model's (sim.model.throughput.predict_matmul, candidate_terms applied), what every surface
    shows for that launch."""
    from sim.model.throughput import predict_matmul

    p = predict_matmul(spec, dims, gpu, params, dtype=dtype)
    return p, p.time_us


@dataclass(frozen=True, slots=True)
class Candidate:
    variant: str
    params: dict
    tiles: int
    programs: int
    blocks_per_sm: int
    concurrent_tiles: int  # SMs x blocks per SM
    waves: float  # tiles over the tiles that run at once
    time_us: float
    tflops: float
    efficiency: float = 1.0  # the fitted one its time was divided by (candidate_efficiency)
    assumed: bool = False  # that efficiency is another kernel's (efficiency_assumed)

    @property
    def label(self) -> str:
        return f"{VARIANT_TITLES[self.variant]} {tile_label(self.params)}"


@dataclass(frozen=True, slots=True)
class MatmulChoice:
    gpu: str
    dims: dict
    dtype: str
    candidates: tuple[Candidate, ...]  # fastest first
    skipped: tuple[str, ...] = ()  # candidates that cannot run on this GPU, with why

    @property
    def chosen(self) -> Candidate:
        return self.candidates[0]

    def why(self) -> str:
        c = self.chosen
        runner = next((o for o in self.candidates[1:] if o.variant != c.variant), None)
        text = (f"{c.label}: {c.tiles:,} tiles, {c.waves:.2f} waves of "
                f"{c.concurrent_tiles:,} ({c.blocks_per_sm}/SM), "
                f"predicted {c.time_us:,.1f} us ({c.tflops:,.0f} TFLOP/s)")
        if runner is not None:
            text += (f"; the best other variant, {runner.label}, is predicted "
                     f"{runner.time_us / c.time_us - 1:+.0%}")
        return text

    def rows(self) -> list[tuple[str, str, str, str, str]]:
        """(candidate, tiles, waves, predicted us, TFLOP/s) per candidate, fastest first."""
        return [(("-> " if i == 0 else "   ") + c.label + (" (assumed)" if c.assumed else ""),
                 f"{c.tiles:,}", f"{c.waves:.2f}",
                 f"{c.time_us:,.1f}", f"{c.tflops:,.0f}") for i, c in enumerate(self.candidates)]

    def to_dict(self) -> dict:
        return {"gpu": self.gpu, "dims": dict(self.dims), "dtype": self.dtype,
                "chosen": {"variant": self.chosen.variant, **self.chosen.params},
                "candidates": [{"variant": c.variant, "params": dict(c.params),
                                "tiles": c.tiles,
                                "programs": c.programs, "blocks_per_sm": c.blocks_per_sm,
                                "concurrent_tiles": c.concurrent_tiles,
                                "waves": c.waves, "time_us": c.time_us, "tflops": c.tflops,
                                "efficiency": c.efficiency, "efficiency_assumed": c.assumed}
                               for c in self.candidates],
                "skipped": list(self.skipped)}


def runs_on(spec, gpu: GpuSpec) -> str:
    """Why `spec` (a declaration) cannot run on `gpu`'s compute capability ("" where it can):
    the TMA matmuls need Hopper's tensor descriptors (9.0)."""
    need, have = tuple(getattr(spec, "min_cc", (0, 0))), tuple(gpu.compute_capability)
    if have >= need:
        return ""
    unit = " (no TMA unit)" if need == TMA_MIN_CC else ""
    return (f"{gpu.name} has compute capability {have[0]}.{have[1]}{unit}; "
            f"{getattr(spec, 'name', 'it')} needs {need[0]}.{need[1]} or later")


def choose(specs: dict, dims: dict, gpu: GpuSpec, dtype: str | None = None,
           tiles=None) -> MatmulChoice:
    """The fastest predicted candidate for an M x N x K product. `specs`: variant -> its
    declaration (kernels.declare.registry.matmul_variants); a variant not given is not weighed.
    `tiles`: the tiles weighed for every variant; None: each variant's candidate_tiles.
    Equal times keep VARIANTS' order, so a TMA kernel whose efficiency is only assumed like its
    pointer twin's is never chosen over it. `dtype` None: matmul_dtype(gpu)."""
    dtype = dtype or matmul_dtype(gpu)
    try:
        sizes = {k: int(dims[k]) for k in ("M", "N", "K")}
    except (KeyError, TypeError, ValueError):
        raise UserError(f"a matrix product needs M, N and K, got {dims!r}") from None
    if min(sizes.values()) < 1:
        raise UserError(f"M, N and K must be at least 1, got {sizes}")
    found, skipped = [], []
    for variant in (v for v in VARIANTS if v in specs):
        too_old = runs_on(specs[variant], gpu)
        if too_old:
            skipped.append(f"{VARIANT_TITLES[variant]}: {too_old}")
            continue
        if variant in TMA_VARIANTS and not tma_fits(**sizes, itemsize=ITEMSIZE[dtype]):
            skipped.append(f"{VARIANT_TITLES[variant]}: TMA needs K and N multiples of "
                           f"{TMA_ROW_ALIGN_BYTES // ITEMSIZE[dtype]} (16-byte rows)")
            continue
        for tile in candidate_tiles(variant) if tiles is None else tiles:
            params = tile_params(tile)
            n_tiles = -(-sizes["M"] // params["BLOCK_M"]) * -(-sizes["N"] // params["BLOCK_N"])
            if n_tiles > MAX_CHOICE_TILES:
                skipped.append(f"{VARIANT_TITLES[variant]} {tile_label(params)}: {n_tiles:,} tiles, "
                               f"more than matmul_auto weighs ({MAX_CHOICE_TILES:,})")
                continue
            try:
                p, time_us = predict_candidate(specs[variant], sizes, gpu, params, dtype)
            except UserError as exc:
                skipped.append(f"{VARIANT_TITLES[variant]} {tile_label(params)}: {exc}")
                continue
            if p.note:  # the model substituted a smaller tile: not this candidate
                skipped.append(f"{VARIANT_TITLES[variant]} {tile_label(params)}: {p.note}")
                continue
            found.append(Candidate(variant, params, p.tiles, p.programs, p.blocks_per_sm,
                                   p.concurrent_tiles, p.waves, time_us,
                                   2 * sizes["M"] * sizes["N"] * sizes["K"] / time_us / 1e6,
                                   candidate_efficiency(specs[variant], p.params, gpu),
                                   efficiency_assumed(specs[variant], p.params, gpu)))
    if not found:
        raise UserError(f"no matmul candidate for M={sizes['M']:,} N={sizes['N']:,} "
                        f"K={sizes['K']:,} on {gpu.name}: {skipped[0] if skipped else ''}")
    found.sort(key=lambda c: c.time_us)
    return MatmulChoice(gpu.name, sizes, dtype, tuple(found), tuple(skipped))
