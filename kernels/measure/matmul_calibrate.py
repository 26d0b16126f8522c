"""`main.py calibrate --matmul`: the compute-bound (matmul) model's per-GPU numbers, measured on
this GPU, saved as the user's matmul fit.

cuBLAS (torch.matmul) and every candidate matmul_auto weighs (sim.model.matmul_choice: the
variants at the three tiles) are timed on a reduced sawtooth, M=1024, K=8192 and a handful of N
(the two one-wave sizes the compute terms are fitted on first), interleaved in the same rounds,
each with the project's timing harness (kernels.measure.timing.time_gpu: warm-up, L2 flushed,
CUDA events, the median); a launch's time is its median over the rounds. Then, with the fitting
code the shipped fit was made with:

* the compute terms' tensor efficiency and exposed memory fraction from the tiled 128x256 kernel
  at its two one-wave sizes (kernels.fitting.compute_fit, as benchmarks/waves_fit.py);
* every measured candidate's efficiency against that model (kernels.fitting.tiles_fit.fit).

The result is written in the shipped format (resources/fits/H200_matmul.json) to the user's
config folder (sim.model.matmul_choice.user_fit_path), where compute_model and tile_fit read it
over the shipped one: "calibrated on <GPU>, <date>". What is not measured here keeps the shipped
figure, labelled assumed from the GPU it was measured on: stream-K's leftover-wave curve and the
atomic rate and fix-up (both need a recorded stream-K trace), and any candidate that could not be
timed. The file is written after the compute fit and again after the efficiencies, so a run cut
short keeps what it measured. Last, sizes none of this was fitted on are predicted with what was
just saved and measured, matmul_auto's choice and cuBLAS beside it: the held-out check.
"""

from __future__ import annotations

import copy
import datetime
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from statistics import median

from sim.inputs.errors import RunFailure, UserError

DTYPE = "float16"
M, K = 1024, 8192
ROUNDS = 3
CUBLAS = "cuBLAS"
# (M, N, K) fitted on nothing: a square and two N off the sawtooth (no multiple of 256)
HELD_OUT = ((4096, 4096, 4096), (1024, 5504, 8192), (1024, 10880, 8192))
BUDGET_S = 150.0  # compiling the 18 candidates is most of it
CHECK_S = 25.0  # kept back from the budget for the held-out check
PLAUSIBLE = {"tensor_efficiency": (0.3, 1.6), "memory_exposed": (-0.2, 3.0), "efficiency": (0.2, 1.8)}
MAX_REL_ERROR = 0.02  # a candidate further from cuBLAS's product than this is broken: not timed


@dataclass
class MatmulCalibration:
    path: str
    fit: dict  # the written file's contents
    points: list = field(default_factory=list)  # per size: the chooser-run form tiles_fit reads
    held_out: list = field(default_factory=list)  # (size, candidate, predicted, measured, cuBLAS) us
    failed: list = field(default_factory=list)  # (what, why)
    compute_fitted: bool = False


def sawtooth(sm_count: int) -> tuple[dict, ...]:
    """The fitting sizes: the compute terms' two one-wave sizes first, then N past one, two and
    three waves of the 128x256 tile (the H200's 132 SMs: N = 1024, 4096, 6144, 8448, 12288)."""
    from kernels.fitting.compute_fit import one_wave_sizes

    quarter, full = one_wave_sizes(sm_count, M)
    ns = dict.fromkeys((quarter, full, full + 2048, 2 * full + 256, 3 * full))
    return tuple(dict(M=M, N=n, K=K) for n in ns)


def _candidates(dims: dict, gpu) -> list:
    """Every candidate matmul_auto weighs at these sizes (those that cannot run here are left out
    by the chooser itself)."""
    from kernels.declare.registry import matmul_variants
    from sim.model.matmul_choice import choose

    return list(choose(matmul_variants(), dims, gpu, DTYPE).candidates)


class GpuTimer:
    """The real measurement of one size: A, B random, each candidate bound as matmul_auto binds
    it (kernels.bodies.matmul.bind_candidate), compiled and checked against cuBLAS's product
    once, then every launch timed once per round, the rounds interleaved. `device` "cpu" (Triton's
    interpreter) runs the same path with a host clock: a test of the path, not a timing."""

    def __init__(self, rounds: int = ROUNDS, say: Callable[[str], None] = print,
                 device: str = "cuda"):
        self.rounds, self.say, self.device, self.broken = rounds, say, device, {}

    def __call__(self, dims: dict, candidates: list, deadline: float) -> dict:
        import torch

        a = torch.randn(dims["M"], dims["K"], device=self.device, dtype=torch.float16)
        b = torch.randn(dims["K"], dims["N"], device=self.device, dtype=torch.float16)
        c = torch.empty(dims["M"], dims["N"], device=self.device, dtype=torch.float16)
        ref = torch.matmul(a, b).float()
        runs = {CUBLAS: lambda: torch.matmul(a, b, out=c)}
        for cand in candidates:
            if cand.label not in self.broken:
                run = self._checked(cand, a, b, c, ref, deadline)
                if run is not None:
                    runs[cand.label] = run
        times: dict[str, list] = {k: [] for k in runs}
        for _ in range(self.rounds):
            if time.perf_counter() > deadline and all(times.values()):
                break
            for name, run in list(runs.items()):
                try:
                    times[name].append(self._ms(run))
                except Exception as exc:  # noqa: BLE001 - one launch failing keeps the others
                    self.broken[name] = f"{type(exc).__name__}: {exc}"
                    self.say(f"  {name}: FAILED while timed: {exc}")
                    del runs[name]
        return {k: median(v) * 1e3 for k, v in times.items() if v and k in runs}

    def _sync(self) -> None:
        if self.device == "cuda":
            import torch

            torch.cuda.synchronize()

    def _ms(self, run) -> float:
        from kernels.measure.timing import time_gpu, time_host

        if self.device == "cuda":
            return median(time_gpu(run, reps=10, warmup_ms=5.0, rep_ms=25.0))
        return median(time_host(run, reps=1, warmup=0))

    def _checked(self, cand, a, b, c, ref, deadline: float):
        """The candidate's launch, compiled and within MAX_REL_ERROR of cuBLAS's product, or None
        (why, in self.broken)."""
        from kernels.bodies.matmul import bind_candidate
        from kernels.declare.user_code import UserCodeError, time_limit

        left = min(deadline - time.perf_counter(), 60.0)
        try:
            if left <= 0:
                raise RunFailure("the budget was spent before it compiled")
            # a compile that hangs is cut off (on the main thread: the CLI's)
            with time_limit(left, f"compiling it took over {left:.0f} s"):
                run = bind_candidate(a, b, c, cand)
                c.fill_(float("nan"))
                run()
                self._sync()
            err = float((c.float() - ref).norm() / ref.norm())
            if not err <= MAX_REL_ERROR:
                raise RunFailure(f"relative error {err:.3g} against cuBLAS's product")
            return run
        except (UserCodeError, RunFailure) as exc:
            self.broken[cand.label] = str(exc)
        except UserError:
            raise
        except Exception as exc:  # noqa: BLE001 - one candidate failing keeps the others
            self.broken[cand.label] = f"{type(exc).__name__}: {exc}"
        self.say(f"  {cand.label}: FAILED {self.broken[cand.label]}")
        return None


def measure_sawtooth(gpu, measure: Callable, sizes, deadline: float, say) -> tuple[list, list]:
    """Per size in order until the deadline: ({M, N, K, candidates: [{variant, label,
    measured_ms}], cublas_ms}, the chooser run's form kernels.fitting.tiles_fit reads; failures)."""
    points, failed = [], []
    for i, dims in enumerate(sizes, 1):
        if time.perf_counter() > deadline:
            failed.append((f"N={dims['N']}", "the measuring budget was spent"))
            continue
        t0 = time.perf_counter()
        cands = _candidates(dims, gpu)
        try:
            got = measure(dims, cands, deadline)
        except UserError:
            raise
        except Exception as exc:  # noqa: BLE001 - one size failing keeps the others
            failed.append((f"N={dims['N']}", f"{type(exc).__name__}: {exc}"))
            say(f"[{i}/{len(sizes)}] M={dims['M']} N={dims['N']} K={dims['K']}: FAILED {exc}")
            continue
        timed = [c for c in cands if c.label in got]
        points.append({**dims, "cublas_ms": got.get(CUBLAS, float("nan")) / 1e3,
                       "candidates": [{"variant": c.variant, "label": c.label,
                                       "measured_ms": got[c.label] / 1e3} for c in timed]})
        say(f"[{i}/{len(sizes)}] M={dims['M']} N={dims['N']} K={dims['K']}: {len(timed)} of "
            f"{len(cands)} candidates and cuBLAS ({got.get(CUBLAS, float('nan')):.1f} us) in "
            f"{time.perf_counter() - t0:.1f} s")
    return points, failed


def fit_compute(points: list, gpu, say) -> dict | None:
    """The compute terms' tensor efficiency and exposed fraction from the tiled 128x256 kernel at
    the two one-wave sizes; None where they were not both measured or the fit is implausible."""
    from kernels.fitting.compute_fit import one_wave_sizes, solve_tile_terms
    from sim.model.matmul_choice import CANDIDATE_TILES, VARIANT_TITLES, tile_label, tile_params
    from sim.model.throughput import compute_model

    params = tile_params(CANDIDATE_TILES[0])  # 128x256x64: the tile compute_fit fits with
    label = f"{VARIANT_TITLES['tiled']} {tile_label(params)}"  # as Candidate.label spells it
    wanted = set(one_wave_sizes(gpu.sm_count, M))
    pts = [(dict(M=p["M"], N=p["N"], K=p["K"]), c["measured_ms"] * 1e3) for p in points
           if p["N"] in wanted for c in p["candidates"] if c["label"] == label]
    if len(pts) < 2:
        say(f"compute terms: {label} was not measured at N = {sorted(wanted)}; they stay assumed")
        return None
    eff, exposed = solve_tile_terms(pts, gpu, DTYPE, compute_model(gpu), block=params)
    for name, value in (("tensor_efficiency", eff), ("memory_exposed", exposed)):
        lo, hi = PLAUSIBLE[name]
        if not lo <= value <= hi:
            say(f"compute terms: {name} came out {value:.3g}, outside {lo:g}..{hi:g}; "
                "they stay assumed")
            return None
    return {"tensor_efficiency": round(eff, 4), "memory_exposed": round(max(exposed, 0.0), 4)}


def base_fit(gpu, shipped: dict, command: str, date: str) -> dict:
    """The user's fit before anything is measured: the shipped one with every part labelled
    assumed from its GPU, this GPU's calibration named."""
    from sim.rules.physics import CALIBRATED

    donor = shipped["gpu"]
    compute = {**shipped["compute"], "assumed_from": donor}
    return {"format": shipped["format"], "gpu": gpu.name, "date": date, "command": command,
            "calibrated": f"{CALIBRATED}{gpu.name}", "assumed_gpu": donor,
            "compute": compute,
            "stream_k": {**shipped["stream_k"], "assumed_from": donor,
                         "note": f"assumed from {donor}: it needs a recorded stream-K trace"},
            "assumed_from": dict(shipped.get("assumed_from", {})),
            "efficiency": dict(shipped["efficiency"]),
            "efficiency_assumed": sorted(shipped["efficiency"]),
            "meaning": "per candidate (kernel, tile): the compute model's time over the measured "
                       "one, each less the launch overhead; the candidate's block times are the "
                       "model's over this. rows: [M, N, K, candidate, measured us, the model's us] "
                       "it was fitted on; held_out: [M, N, K, candidate, predicted us, measured "
                       "us, cuBLAS us] of sizes it was not",
            "rows": [], "held_out": []}


def with_compute(fit: dict, terms: dict, gpu, command: str, date: str) -> dict:
    donor = fit["assumed_gpu"]
    compute = {k: v for k, v in fit["compute"].items() if k != "assumed_from"}
    compute.update(terms, date=date, command=command,
                   note=f"atomic rate and fix-up assumed from {donor}",
                   source=f"{command}: tensor efficiency and exposed memory fraction from the "
                          f"tiled 128x256x64 kernel at M={M}, K={K}, one wave, measured on "
                          f"{gpu.name} on {date}; the atomic rate and the fix-up are {donor}'s "
                          "(they need a recorded stream-K trace)")
    return {**fit, "compute": compute}


def with_efficiency(fit: dict, points: list, gpu, say) -> dict:
    """Every measured candidate's efficiency against the compute model now saved (the user's
    file is read for it), by kernels.fitting.tiles_fit's fit; the rest stay the shipped ones."""
    from kernels.fitting.tiles_fit import fit as fit_efficiency
    from kernels.fitting.tiles_fit import model_rows

    rows = model_rows(points, gpu=gpu, dtype=DTYPE)
    eff = fit_efficiency(rows, prefix="matmul_", gpu=gpu)
    lo, hi = PLAUSIBLE["efficiency"]
    for key in [k for k, v in eff.items() if not lo <= v <= hi]:
        say(f"efficiency of {key} came out {eff.pop(key):.3g}, outside {lo:g}..{hi:g}; "
            "it stays assumed")
    if not eff:
        say("efficiencies: no candidate gave a plausible one; they stay assumed")
        return fit
    merged = {**fit["efficiency"], **eff}
    return {**fit, "efficiency": dict(sorted(merged.items())),
            "efficiency_assumed": sorted(k for k in merged if k not in eff),
            "fitted_on": f"M={M}, K={K}, N = {', '.join(str(p['N']) for p in points)} "
                         f"({DTYPE}, {ROUNDS} interleaved rounds, cuBLAS beside)",
            "rows": [[p["M"], p["N"], p["K"], k, round(m, 3), round(t, 3)]
                     for p, size in zip(points, rows) for k, m, t in size],
            "cublas": [[p["M"], p["N"], p["K"], round(p["cublas_ms"] * 1e3, 3)] for p in points]}


def check_held_out(gpu, measure: Callable, sizes, deadline: float, say) -> tuple[list, list]:
    """matmul_auto's choice at each size, predicted with the fit now saved, measured with cuBLAS
    beside it: [(M, N, K, candidate, predicted us, measured us, cuBLAS us)], failures."""
    from kernels.declare.registry import matmul_variants
    from sim.model.matmul_choice import choose

    rows, failed = [], []
    for m, n, k in sizes:
        dims = dict(M=m, N=n, K=k)
        try:
            chosen = choose(matmul_variants(), dims, gpu, DTYPE).chosen
            got = measure(dims, [chosen], deadline + CHECK_S)
            measured = got[chosen.label]
        except UserError:
            raise
        except Exception as exc:  # noqa: BLE001 - a check that cannot run is reported, not fatal
            failed.append((f"held out {m}x{n}x{k}", f"{type(exc).__name__}: {exc}"))
            say(f"held out {m}x{n}x{k}: could not run ({type(exc).__name__}: {exc})")
            continue
        row = [m, n, k, chosen.label, round(chosen.time_us, 2), round(measured, 2),
               round(got.get(CUBLAS, float("nan")), 2)]
        rows.append(row)
        say(f"held out {m}x{n}x{k}: {chosen.label} predicted {row[4]:,.1f} us, measured "
            f"{row[5]:,.1f} us ({row[4] / row[5] - 1:+.1%}); cuBLAS {row[6]:,.1f} us")
    return rows, failed


def require_gpu():
    """This GPU as a sim GpuSpec; NeedsGpu (one line, exit 2) without a GPU or without Triton on
    it (the interpreter, TRITON_INTERPRET=1, times nothing)."""
    from kernels.launching.backends import available, gpu_status
    from kernels.launching.device import detect_device
    from sim.inputs.errors import NeedsGpu

    has_gpu, why = gpu_status()
    if not has_gpu:
        raise NeedsGpu(f"calibrate --matmul needs a GPU: {why}")
    status = available()["triton"]
    if not status.is_gpu:
        raise NeedsGpu(f"calibrate --matmul needs Triton on the GPU: {status.reason}")
    return detect_device()[0]


def calibrate_matmul(*, gpu=None, measure: Callable | None = None, sizes=None,
                     held_out=HELD_OUT, budget_s: float = BUDGET_S,
                     command: str = "warpscope calibrate --matmul",
                     say: Callable[[str], None] = print) -> MatmulCalibration:
    """Measure, fit, write, check. `measure(dims, candidates, deadline) -> {label or "cuBLAS":
    us}` and `gpu` default to this GPU (GpuTimer, require_gpu); tests pass fakes."""
    from sim.inputs.files import check_writable, write_json_atomic
    from sim.model.matmul_choice import read_fit, shipped_fit_path, user_fit_path

    if measure is None:
        gpu = require_gpu()
        measure = GpuTimer(say=say)
    path = user_fit_path(gpu.name)
    path.parent.mkdir(parents=True, exist_ok=True)
    check_writable(str(path))
    date = datetime.date.today().isoformat()
    shipped = shipped_fit_path(gpu)
    fit = base_fit(gpu, copy.deepcopy(read_fit(shipped)), command, date)
    sizes = sawtooth(gpu.sm_count) if sizes is None else sizes
    t0 = time.perf_counter()
    deadline = t0 + budget_s - CHECK_S
    say(f"calibrating the matmul model on {gpu.name}: {len(sizes)} sizes x (matmul_auto's "
        f"candidates + cuBLAS), {ROUNDS} rounds, at most {budget_s:.0f} s")
    points, failed = measure_sawtooth(gpu, measure, sizes, deadline, say)
    failed += sorted(getattr(measure, "broken", {}).items())
    result = MatmulCalibration(str(path), fit, points, [], failed)
    if not points:
        raise RunFailure(f"no matmul size could be measured on {gpu.name}: "
                         + "; ".join(f"{n}: {e}" for n, e in failed[:3]))
    try:
        terms = fit_compute(points, gpu, say)
    except Exception as exc:  # noqa: BLE001 - the shipped terms stay, labelled assumed
        result.failed.append(("compute terms", f"{type(exc).__name__}: {exc}"))
        say(f"compute terms: FAILED {exc}; they stay assumed")
        terms = None
    if terms is not None:
        result.fit = fit = with_compute(fit, terms, gpu, command, date)
        result.compute_fitted = True
        said = read_fit(shipped)
        say(f"compute terms: tensor efficiency {terms['tensor_efficiency']:.4f}, memory exposed "
            f"{terms['memory_exposed']:.4f} (shipped, {said['gpu']}'s: "
            f"{said['compute']['tensor_efficiency']}, {said['compute']['memory_exposed']})")
    write_json_atomic(str(path), fit)  # the efficiencies are fitted against the terms saved
    try:
        result.fit = fit = with_efficiency(fit, points, gpu, say)
    except Exception as exc:  # noqa: BLE001 - the compute terms are saved already
        result.failed.append(("efficiencies", f"{type(exc).__name__}: {exc}"))
        say(f"efficiencies: FAILED {exc}; the shipped ones stay")
    write_json_atomic(str(path), fit)
    say(f"wrote {path} (over the shipped {shipped.name})")
    rows, check_failed = check_held_out(gpu, measure, held_out, deadline, say)
    result.held_out, result.failed = rows, result.failed + check_failed
    result.fit = fit = {**fit, "held_out": rows}
    write_json_atomic(str(path), fit)
    return result


def report(result: MatmulCalibration) -> list[str]:
    """What `calibrate --matmul` prints last: where each part came from and the held-out table."""
    fit = result.fit
    c = fit["compute"]
    lines = [f"compute terms: tensor efficiency {c['tensor_efficiency']}, memory exposed "
             f"{c['memory_exposed']} ("
             + (f"{fit['calibrated']}, {c['date']}; {c['note']})" if result.compute_fitted
                else f"assumed from {fit['assumed_gpu']})"),
             f"stream-K leftover curve: assumed from {fit['stream_k']['assumed_from']}",
             f"efficiencies: {len(fit['efficiency']) - len(fit['efficiency_assumed'])} of "
             f"{len(fit['efficiency'])} candidates measured here"
             + (f"; assumed from {fit['assumed_gpu']}: {_names(fit['efficiency_assumed'])}"
                if fit["efficiency_assumed"] else "")]
    if result.held_out:
        lines.append("held out (fitted on none of these): size, matmul_auto's choice, predicted, "
                     "measured, error, cuBLAS")
        for m, n, k, label, pred, meas, cub in result.held_out:
            lines.append(f"  {m}x{n}x{k}  {label:<32} {pred:>9,.1f} us {meas:>9,.1f} us "
                         f"{pred / meas - 1:+7.1%} {cub:>9,.1f} us")
        near = sum(abs(r[4] / r[5] - 1) <= 0.10 for r in result.held_out)
        lines.append(f"held-out check: {near} of {len(result.held_out)} predicted within 10%")
    if result.failed:
        lines.append(f"{len(result.failed)} steps failed: "
                     + "; ".join(f"{n}: {e}" for n, e in result.failed))
    lines.append(f"wrote {result.path}")
    return lines


def _names(keys: list, most: int = 6) -> str:
    return ", ".join(keys) if len(keys) <= most else \
        f"{len(keys)} (the file's efficiency_assumed names them)"
