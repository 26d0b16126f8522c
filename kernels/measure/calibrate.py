"""`main.py calibrate`: measure this GPU's dispatch model and save it as the user's profile.

Records a small family of block traces with the trace kernel (kernels/tracing/trace.py: busy-spinning
blocks of 1..16 warps, 5..100 us, half a wave to four and a half; two sleeping ones for the pacing),
fits sim/schedule/dispatch.py's numbers to them with sim/traces/calibrate.py, and writes a "warpscope-dispatch/1"
profile into the user's config folder (dispatch/<GPU>.json there, sim/inputs/places.py), where
`sim.schedule.dispatch_profile.profile_for` finds it: the app and the CLI then say "calibrated on <GPU>,
<date>". Two long adds then tell which SMs of this chip move bytes faster (sim.traces.sm_share); the
same file's "dram_share" holds them, and the memory-bound model reads it (dispatch_profile.
dram_share_for). Recording takes well under two minutes on an H200; the fit, about as long again.
"""

from __future__ import annotations

import datetime
import time
from collections.abc import Callable
from dataclasses import dataclass

from sim.inputs.errors import RunFailure, UserError

# (wait, warps per block, block time in us, waves): what the fit needs to see
FAMILY = tuple(("spin", w, us, waves) for w in (1, 2, 4, 8, 16) for us in (5.0, 20.0, 100.0)
               for waves in (0.5, 1.0, 2.2, 4.5)) + (
    ("sleep", 4, 5.0, 3.3), ("sleep", 4, 20.0, 3.3))
RECORD_BUDGET_S = 110.0
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


def calibrate(out: str | None = None, *, record: Callable | None = None, gpu=None,
              family=FAMILY, budget_s: float = RECORD_BUDGET_S, fit_s: float = 240.0,
              keep: str | None = None, command: str = "warpscope calibrate",
              say: Callable[[str], None] = print, record_tile: Callable | None = None,
              share_family=SHARE_TRACES) -> CalibrationResult:
    """Record, fit, write. `record`, `record_tile` and `gpu` default to the real GPU
    (kernels.tracing.trace); tests pass fake recorders. `keep`: also save the recorded traces as a
    bundle in that folder."""
    from sim.traces.calibrate import cases_of, fit, held_out
    from sim.schedule.dispatch_profile import DispatchProfile, save_profile, user_profile_path
    from sim.inputs.files import check_writable

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
    say(f"calibrating the dispatch model of {gpu.name}: recording {len(family)} traces")
    traces, failed = record_family(record, family, budget_s, say)
    cases = cases_of(traces, gpu)
    if len([c for c in cases if c.launch.wait == "spin"]) < 8:
        raise RunFailure(f"only {len(cases)} traces could be recorded on {gpu.name}; too few to fit")
    say(f"fitting on {len(cases)} traces (at most {fit_s:.0f} s)")
    t0 = time.perf_counter()
    # fresh worker processes: this one holds a CUDA context a forked child must not inherit
    params = fit(cases, deadline_s=fit_s, pool_start="spawn",
                 progress=lambda msg: say(f"  {time.perf_counter() - t0:5.0f}s {msg}"))
    date = datetime.date.today().isoformat()
    source = (f"{command}: {len(cases)} traces recorded on {gpu.name} on {date} "
              f"(busy spin, 1..16 warps, 5..100 us, 0.5..4.5 waves; sleep for the pacing)"
              + (f"; {len(failed)} failed" if failed else ""))
    profile = DispatchProfile(gpu.name, True, date, source, params)
    say(f"recording {len(share_family)} long adds: which SMs move bytes faster")
    shares, share_failed = share_traces(record_tile, share_family, say)
    dram_share, share_note = read_share(shares, gpu, command, date)
    say(share_note)
    save_profile(path, profile, dram_share)
    traces, failed = {**traces, **shares}, failed + share_failed
    if keep:
        from pathlib import Path

        from sim.traces.trace_bundle import write_bundle

        Path(keep).mkdir(parents=True, exist_ok=True)
        write_bundle(keep, [(n, "calibrate", t, {}) for n, t in traces.items()],
                     [{"name": n, "family": "calibrate", "error": e} for n, e in failed],
                     {"command": command, "gpu": gpu.name, "date": date})
    return CalibrationResult(profile, path, traces, failed, held_out(cases, params), dram_share,
                             share_note)
