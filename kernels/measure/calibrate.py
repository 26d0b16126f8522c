"""`main.py calibrate`: measure every per-GPU number the launch model reads, on this GPU, and
save them as the user's per-GPU file.

Records a small family of block traces with the trace kernel (kernels/tracing/trace.py: busy-spinning
blocks of 1..16 warps, 5..100 us, half a wave to four and a half; two sleeping ones for the pacing),
fits sim/schedule/dispatch.py's numbers to them with sim/traces/calibrate.py, and writes a "warpscope-dispatch/1"
profile into the user's config folder (dispatch/<GPU>.json there, sim/inputs/places.py), where
`sim.schedule.dispatch_profile.profile_for` finds it: the app and the CLI then say "calibrated on <GPU>,
<date>". Two long adds then tell which SMs of this chip move bytes faster (sim.traces.sm_share); the
same file's "dram_share" holds them, and the memory-bound model reads it (dispatch_profile.
dram_share_for). Then the copy bandwidth, the DRAM and L2 latencies, the L2 bandwidth and the trip
overhead (kernels.measure.physics_probe) join the file's "constants", which win over the
preset's (sim.rules.physics.physics_for). Last, launches none of this was fitted on are measured
and predicted with what was just saved, and both printed: calibrate's own held-out check.
"""

from __future__ import annotations

import datetime
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from sim.inputs.errors import RunFailure, UserError

# (wait, warps per block, block time in us, waves): what the fit needs to see
FAMILY = tuple(("spin", w, us, waves) for w in (1, 2, 4, 8, 16) for us in (5.0, 20.0, 100.0)
               for waves in (0.5, 1.0, 2.2, 4.5)) + (
    ("sleep", 4, 5.0, 3.3), ("sleep", 4, 20.0, 3.3))
RECORD_BUDGET_S = 45.0  # with the fit, the probes and the check: about two minutes in all
FIT_BUDGET_S = 30.0  # the fit starts from the measured profile the app ships: a refinement
# (kernel, elements, BLOCK_SIZE, warps): launches calibrate fits nothing on, measured and predicted
HELD_OUT = (("add_triton", 2**24, 1024, 4), ("add_triton", 2**26, 256, 4),
            ("copy_triton", 2**25, 2048, 8), ("add_numba", 2**24, 256, None))
# (kernel, elements, BLOCK_SIZE, warps): long bandwidth-bound adds, whose blocks per SM tell which
# SMs move bytes faster (sim.traces.sm_share); 2^26 x 1024 and 2^25 x 512 ran 1.27-1.47x on the
# H200's faster SMs
SHARE_TRACES = (("add", 2**26, 1024, 4), ("add", 2**25, 512, 4))


@dataclass(frozen=True)
class CalibrationResult:
    profile: object  # sim.schedule.dispatch_profile.DispatchProfile
    path: str
    traces: dict  # name -> sim.traces.trace.Trace
    failed: list  # (name, error)
    scores: list  # (name, ScheduleScore) of the fitted profile on the recorded traces
    dram_share: object = None  # sim.rules.physics.DramShare read off SHARE_TRACES, or None
    share_note: str = ""  # what the share traces showed, in one line
    constants: dict = field(default_factory=dict)  # name -> sim.rules.physics.Constant measured
    check: list = field(default_factory=list)  # (launch, predicted us, measured us) held out


def trace_name(wait: str, warps: int, us: float, waves: float) -> str:
    return f"{wait}-w{warps}-{us:g}us-{waves:g}w"


def record_family(record: Callable, family=FAMILY, budget_s: float = RECORD_BUDGET_S,
                  say: Callable[[str], None] = print) -> tuple[dict, list]:
    """Record every trace of `family` with `record(grid=None, num_warps=, spin_us=, command=,
    wait=, waves=)` (kernels.tracing.trace.record_trace) until the budget is spent; one failing trace is
    noted and skipped."""
    traces, failed = {}, []
    t0 = time.perf_counter()
    for i, (wait, warps, us, waves) in enumerate(family, 1):
        name = trace_name(wait, warps, us, waves)
        if time.perf_counter() - t0 > budget_s:
            failed.append((name, "the recording budget was spent"))
            continue
        command = (f"warpscope trace --wait {wait} --warps {warps} --spin-us {us:g} "
                   f"--waves {waves:g} --out {name}.json")
        try:
            traces[name] = record(None, warps, us, command, wait=wait, waves=waves)
        except UserError:
            raise
        except Exception as exc:  # noqa: BLE001 - one experiment failing must not end the run
            failed.append((name, f"{type(exc).__name__}: {exc}"))
            say(f"[{i}/{len(family)}] {name}: FAILED {exc}")
            continue
        say(f"[{i}/{len(family)}] {time.perf_counter() - t0:5.1f}s {name}: "
            f"{len(traces[name].block):,} blocks")
    return traces, failed


def share_traces(record_tile: Callable, family=SHARE_TRACES,
                 say: Callable[[str], None] = print) -> tuple[dict, list]:
    """Record SHARE_TRACES with `record_tile(kernel, elements, block_size, num_warps, command)`
    (kernels.tracing.trace.record_tile_trace); one failing trace is noted and skipped."""
    traces, failed = {}, []
    for kernel, elements, block, warps in family:
        name = f"{kernel}-n{elements.bit_length() - 1}-b{block}-w{warps}"
        command = (f"warpscope trace --kernel {kernel} --elements 2^{elements.bit_length() - 1} "
                   f"--block {block} --warps {warps} --out {name}.json")
        try:
            traces[name] = record_tile(kernel, elements, block, warps, command)
        except UserError:
            raise
        except Exception as exc:  # noqa: BLE001 - the dispatch fit does not need these
            failed.append((name, f"{type(exc).__name__}: {exc}"))
            say(f"{name}: FAILED {exc}")
            continue
        say(f"{name}: {len(traces[name].block):,} blocks")
    return traces, failed


def read_share(traces: dict, gpu, command: str, date: str):
    """(the DramShare the traces show, or None; one line saying what they showed)."""
    from sim.rules.physics import DramShare, physics_for
    from sim.traces.sm_share import measured_share

    got = measured_share(traces)
    if got is None:
        return None, ("every SM ran about the same count in the share traces: no faster SMs "
                      "told apart (the preset's list, if any, stays)")
    fast, ratio, read = got
    preset = physics_for(gpu).dram_share
    above = preset.above_bytes if preset else 65536.0
    source = (f"{command}: blocks per SM in {', '.join(read)} recorded on {gpu.name} on {date}; "
              f"the {len(fast)} SMs above the largest gap ran {ratio:.2f}x the blocks of the rest; "
              f"above_bytes_in_flight {'from the preset' if preset else 'assumed from the H200'}")
    share = DramShare(frozenset(fast), round(ratio, 3), above, "measured", source, date, command)
    return share, f"{len(fast)} faster SMs ({ratio:.2f}x the blocks of the rest): {sorted(fast)}"


def check_held_out(gpu, launches=HELD_OUT, say: Callable[[str], None] = print,
                   measure: Callable | None = None) -> list[tuple[str, float, float]]:
    """Measure `launches` (none of them fitted on) and predict each with the GPU's numbers as
    now saved: [(launch, predicted us, measured us)]. `measure(kernel, elements, block, warps)`
    gives a kernels.measure.timing.Measurement (default: the harness on this GPU)."""
    from sim.model.what_if import WhatIf, predict_outcome

    if measure is None:
        from kernels.declare.registry import get_kernel
        from kernels.measure.harness import measure as harness_measure

        def measure(kernel, elements, block, warps):
            return harness_measure(get_kernel(kernel), elements, block, warps, gpu=gpu,
                                   device_name=gpu.name)
    rows = []
    for kernel, elements, block, warps in launches:
        label = f"{kernel} 2^{elements.bit_length() - 1} block {block}" + (f" w{warps}" if warps else "")
        try:
            m = measure(kernel, elements, block, warps)
            per_thread = max(1, round(elements / (m.grid_blocks * m.threads_per_block)))
            launch = WhatIf(m.threads_per_block, m.regs_per_thread or 0, m.smem_per_block_bytes or 0,
                            elements, m.bytes_moved / elements, elements_per_thread=per_thread)
            predicted = predict_outcome(gpu, launch).time_us
        except Exception as exc:  # noqa: BLE001 - a check that cannot run is reported, not fatal
            say(f"held out {label}: could not run ({type(exc).__name__}: {exc})")
            continue
        rows.append((label, predicted, m.median_ms * 1e3))
        say(f"held out {label}: predicted {predicted:,.1f} µs, measured {m.median_ms * 1e3:,.1f} µs "
            f"({predicted / (m.median_ms * 1e3) - 1:+.1%})")
    return rows


def _fit_dispatch(gpu, record, family, budget_s, fit_s, command, say):
    """(profile, traces, failed, cases): the dispatch family recorded and the profile fitted."""
    from sim.schedule.dispatch_profile import DispatchProfile
    from sim.traces.calibrate import cases_of, fit

    say(f"calibrating {gpu.name}: recording {len(family)} dispatch traces (at most {budget_s:.0f} s)")
    traces, failed = record_family(record, family, budget_s, say)
    cases = cases_of(traces, gpu)
    if len([c for c in cases if c.launch.wait == "spin"]) < 8:
        raise RunFailure(f"only {len(cases)} traces could be recorded on {gpu.name}; too few to fit")
    say(f"fitting on {len(cases)} traces (at most {fit_s:.0f} s)")
    t0 = time.perf_counter()
    # fresh worker processes: this one holds a CUDA context a forked child must not inherit
    params = fit(cases, deadline_s=fit_s, pool_start="spawn", rounds=1,
                 progress=lambda msg: say(f"  {time.perf_counter() - t0:5.0f}s {msg}"))
    date = datetime.date.today().isoformat()
    source = (f"{command}: {len(cases)} traces recorded on {gpu.name} on {date} "
              f"(busy spin, 1..16 warps, 5..100 us, 0.5..4.5 waves; sleep for the pacing)"
              + (f"; {len(failed)} failed" if failed else ""))
    return DispatchProfile(gpu.name, True, date, source, params), traces, failed, cases


def calibrate(out: str | None = None, *, record: Callable | None = None, gpu=None,
              family=FAMILY, budget_s: float = RECORD_BUDGET_S, fit_s: float = FIT_BUDGET_S,
              keep: str | None = None, command: str = "warpscope calibrate",
              say: Callable[[str], None] = print, record_tile: Callable | None = None,
              share_family=SHARE_TRACES, probes: dict | None = None,
              check_measure: Callable | None = None, held_out=HELD_OUT) -> CalibrationResult:
    """Record, fit, measure, write, check. `record`, `record_tile`, `probes`, `check_measure` and
    `gpu` default to the real GPU (kernels.tracing.trace, kernels.measure.physics_probe); tests
    pass fakes. `keep`: also save the recorded traces as a bundle in that folder."""
    from kernels.measure.physics_probe import measure_constants
    from sim.inputs.files import check_writable
    from sim.schedule.dispatch_profile import save_profile, user_profile_path
    from sim.traces.calibrate import held_out as score_held_out

    if record is None:
        from kernels.tracing.trace import record_trace, require_gpu

        gpu = require_gpu()
        record = record_trace
    if record_tile is None:
        from kernels.tracing.trace import record_tile_trace as record_tile
    path = str(out or user_profile_path(gpu.name))
    if out is None:
        user_profile_path(gpu.name).parent.mkdir(parents=True, exist_ok=True)
    check_writable(path)
    profile, traces, failed, cases = _fit_dispatch(gpu, record, family, budget_s, fit_s, command, say)
    say(f"recording {len(share_family)} long adds: which SMs move bytes faster")
    shares, share_failed = share_traces(record_tile, share_family, say)
    dram_share, share_note = read_share(shares, gpu, command, profile.date)
    say(share_note)
    say("measuring the copy bandwidth, DRAM and L2 latency, L2 bandwidth and trip overhead")
    if probes is None:  # the real GPU's: the trip overhead needs the dispatcher's start just fitted
        from kernels.measure.physics_probe import MEASURE, trip_overhead_ns

        dispatch_ns = profile.params.sm_interval_us * 1e3
        probes = {**MEASURE, "trip_overhead_ns": lambda g: trip_overhead_ns(g, dispatch_ns)}
    constants, probe_failed = measure_constants(gpu, command, say, probes, profile.date)
    save_profile(path, profile, dram_share, constants)
    traces, failed = {**traces, **shares}, failed + share_failed + probe_failed
    if keep:
        _keep(keep, traces, failed, command, gpu, profile.date)
    check = check_held_out(gpu, held_out, say, check_measure) if out is None else []
    return CalibrationResult(profile, path, traces, failed, score_held_out(cases, profile.params),
                             dram_share, share_note, constants, check)


def _keep(folder: str, traces: dict, failed: list, command: str, gpu, date: str) -> None:
    from pathlib import Path

    from sim.traces.trace_bundle import write_bundle

    Path(folder).mkdir(parents=True, exist_ok=True)
    write_bundle(folder, [(n, "calibrate", t, {}) for n, t in traces.items()],
                 [{"name": n, "family": "calibrate", "error": e} for n, e in failed],
                 {"command": command, "gpu": gpu.name, "date": date})
