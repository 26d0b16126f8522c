"""What each per-GPU number of the launch model buys: every constant of a GPU's data file
(resources/physics/<GPU>.json: its `constants`, its `dispatch` params and its `dram_share`)
set in turn to its neutral value (the value that switches its mechanism off, NEUTRAL), and every
recorded trace and kernel time scored again with everything else as shipped. No GPU needed:

    # the H200's recorded memory-trace bundles as they were at a commit, into DIR (not committed):
    git archive 8be3ded $(printf 'tests/data/%s ' blind_m_h200 blind_q_h200 blind_r_h200 \
        blind_s_h200 blind_t_h200 blind_w_h200 blind_x_h200 blind_z_h200 blind_z2_h200 \
        kernel_files_h200 real_h200) | tar -x -C DIR
    python3 -m kernels.fitting.ablation --bundles DIR/tests/data [--only NAME,...] [--json FILE]
    python3 -m kernels.fitting.ablation --subset   # tests/data's held-out memory sets instead
    # the dispatch params on the spin sets they were fitted and held out on (tests/data):
    python3 -m kernels.fitting.ablation --held-out h200_spin_heldout,... --fitting h200_spin_fit,... \
        --only dispatch.tick_us,... --no-times

A trace is within the bar when its makespan is within 10%, its median SM's peak within 1 block
and its residency error at most 0.15 (sim.traces.schedule_metrics); a kernel time when the
prediction is within 10% (kernels.fitting.launch_fit). A prediction is scored again only where
it read the constant (the reads are recorded while scoring the model as shipped), so a variant
costs the traces that use it.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import time
from dataclasses import replace
from pathlib import Path

from kernels.fitting import DATA
from sim.inputs.files import read_json_file

import sim.rules.physics as physics  # noqa: E402
from sim.schedule.dispatch_profile import DispatchParams  # noqa: E402

GPU = "H200"
# the bundles of the H200 memory-trace ablation (benchmarks/RESULTS.md), as named in tests/data
# at the commit they were all still in git: held out, recorded after the constants they test were
# chosen; fitting, the FIT adds, the first blind set (used since to decide) and the kernel files
SNAPSHOT = "8be3ded"
HELD_OUT = ("blind_q_h200", "blind_r_h200", "blind_s_h200", "blind_t_h200", "blind_w_h200",
            "blind_x_h200", "blind_z_h200", "blind_z2_h200")
FITTING = ("real_h200", "blind_m_h200", "kernel_files_h200")
# the same kinds of recording kept in tests/data today (a smaller run: --subset)
SUBSET_HELD_OUT = ("h200_memory_kernels_heldout", "h200_uneven_sms_heldout", "h200_small_blocks_heldout")
SUBSET_FITTING = ("h200_memory_kernels_fit",)

OFF = 1e12  # a rate so high that the time it adds vanishes
# constant -> (its neutral value, why that value switches its mechanism off)
NEUTRAL = {
    "launch_overhead_us": (0.0, "an added time"),
    "dram_latency_ns": (0.0, "an added time"),
    "copy_fraction": (1.0, "a multiplier: the rated peak"),
    "trip_overhead_ns": (0.0, "an added time"),
    "trip_load_ns": (0.0, "an added time"),
    "block_time_spread": (0.0, "no spread"),
    "slot_hold_fraction": (0.0, "no hold past the end stamp"),
    "first_wave_block_ns": (0.0, "an added time: no ramp"),
    "launch_gap_us": (None, "launch_overhead_us: each queued launch pays a whole overhead"),
    "l2_latency_ns": (0.0, "an added time"),
    "l2_gbps": (OFF, "an unbounded L2: its bytes add no time"),
    "reduction_step_ns": (0.0, "an added time"),
    "load_base_regs": (0.0, "every register holds a loaded value"),
    "serialized_load_rounds": (1.0, "one round: loads never serialize"),
    "barrier_hold_share": (1.0, "a multiplier: a reduction's block holds like any other"),
    "dispatch.sm_interval_us": (0.0, "an added time"),
    "dispatch.burst_warps": (64.0, "the most the format allows (and the trickle's cap with it): "
                                   "busy warps hold nothing back"),
    "dispatch.trickle_cap_warps": (None, "burst_warps: no trickle past the burst"),
    "dispatch.trickle": ({1: (0.0, 1.0)}, "no trickle comes"),
    "dispatch.trickle_spread": (0.0, "every trickle waits its median"),
    "dispatch.tick_us": (1e4, "the most the format allows: no visits"),
    "dispatch.tick_first_us": (0.0, "an added time"),
    "dispatch.tick_first_spread_us": (0.0, "an added time"),
    "dispatch.tick_single_p": (0.0, "a busy SM takes nothing at a visit"),
    "dispatch.tick_single_cap_warps": (0.0, "a busy SM takes nothing at a visit"),
    "dispatch.handout_window_us": (0.0, "no rounds: hand-outs in time order"),
    "dispatch.fill_warp_us": (0.0, "an added time"),
    "dispatch.regfile_fraction": (2.0, "above 1: the register rule never applies"),
    "dispatch.regfile_full_cap_warps": (64.0, "the most the format allows"),
    "dispatch.regfile_gap_warp_us": (0.0, "an added time"),
    "dispatch.regfile_gap_warps": (64.0, "the most the format allows: the least growth"),
    "dram_share.share": (1.0, "a multiplier: every SM's share even"),
    "dram_share.above_bytes_in_flight": (0.0, "no threshold: the shares differ at any load"),
}


def neutral_value(name: str, ph) -> object:
    """The value `name` takes out of the model (NEUTRAL; None: another constant's value)."""
    value = NEUTRAL[name][0]
    if name == "launch_gap_us":
        return ph.value("launch_overhead_us")
    if name == "dispatch.trickle_cap_warps":
        return float(ph.dispatch["params"]["burst_warps"])
    return value


def without(ph, name: str, value):
    """`ph` (sim.rules.physics.GpuPhysics) with one constant, dispatch param or DRAM-share field
    at `value`; every other number as it is."""
    section, _, key = name.rpartition(".")
    if section == "dispatch":
        params = {**ph.dispatch["params"], key: {str(k): list(v) for k, v in value.items()}
                  if key == "trickle" else value}
        if key == "burst_warps":  # the format keeps the trickle's cap at least the burst's
            params["trickle_cap_warps"] = max(params["trickle_cap_warps"], value)
        return replace(ph, dispatch={**ph.dispatch, "params": params})
    if section == "dram_share":
        field = {"share": "share", "above_bytes_in_flight": "above_bytes"}[key]
        return replace(ph, dram_share=replace(ph.dram_share, **{field: float(value)}))
    return replace(ph, constants={**ph.constants, name: replace(ph.constants[name], value=float(value))})


@contextlib.contextmanager
def patched(make):
    """The model reading `make(the GPU's physics as shipped)` for GPU (one place: every reader,
    the block cost, the dispatch profile and the DRAM share, asks sim.rules.physics for it)."""
    real = physics._physics_of_preset

    def of_preset(name):
        return make(real(name)) if name == GPU else real(name)
    physics._physics_of_preset = of_preset
    try:
        yield
    finally:
        physics._physics_of_preset = real


class Reads:
    """The names a prediction reads: constants (GpuPhysics.constant), dispatch params
    (DispatchParams' fields) and the DRAM share (any read of GpuPhysics.dram_share)."""

    def __init__(self):
        self.names: set = set()

    @contextlib.contextmanager
    def recording(self):
        reads = self.names
        constant = physics.GpuPhysics.constant
        own = DispatchParams.__dict__.get("__getattribute__", MISSING)
        getattribute = DispatchParams.__getattribute__
        share = physics.GpuPhysics.__dict__.get("dram_share", MISSING)

        def read_constant(ph, name):
            reads.add(name)
            return constant(ph, name)

        def read_param(p, name):
            if not name.startswith("_"):
                reads.add("dispatch." + ("trickle" if name == "trickle_for" else name))
            return getattribute(p, name)

        def read_share(ph):
            reads.update({"dram_share.share", "dram_share.above_bytes_in_flight"})
            return ph.__dict__.get("dram_share")

        physics.GpuPhysics.constant = read_constant
        DispatchParams.__getattribute__ = read_param
        physics.GpuPhysics.dram_share = property(  # a frozen dataclass sets it in __init__
            read_share, lambda ph, v: ph.__dict__.__setitem__("dram_share", v))
        try:
            yield self
        finally:
            physics.GpuPhysics.constant = constant
            _restore(DispatchParams, "__getattribute__", own)
            _restore(physics.GpuPhysics, "dram_share", share)


MISSING = object()


def _restore(cls, name: str, value) -> None:
    if value is MISSING:
        delattr(cls, name)
    else:
        setattr(cls, name, value)


def trace_items(folder: Path, names) -> list[tuple[str, str, object]]:
    """(set, name, trace) of every trace of the named bundles under `folder`."""
    from kernels.declare.kernel_file import with_declared_chain
    from sim.traces.trace_bundle import load_bundle

    return [(b, f"{b}/{n}", with_declared_chain(t)) for b in names
            for n, t in load_bundle(folder / b).items()]


def score_trace(trace) -> bool:
    """The trace within all three bars (makespan, median peak, residency)."""
    from sim.traces.compare import compare_trace

    return bool(compare_trace(trace).score.within())


def score_time(point) -> bool:
    """The kernel time predicted within 10% (kernels.fitting.launch_fit's bar)."""
    from kernels.fitting.launch_fit import BAR, kernel_scores
    from sim.rules.devices import preset

    return abs(kernel_scores([dict(point)], preset(GPU))[0]["error"]) <= BAR


def time_items() -> list[tuple[str, str, dict]]:
    """(set, name, point) of every kernel time: h200_kernel_times_fit's FIT kernels and the copy
    pairs (fitting), its other kernels and the second H200's sweep (held out)."""
    from kernels.fitting.launch_fit import is_fit_kernel, kernel_points, pair_points

    def named(run, points, fit):
        return [("fitting" if fit(p) else "held_out", f"{run}/{p['kernel']}@{p['elements']}", p)
                for p in points]
    return (named("h200_kernel_times_fit", kernel_points(), is_fit_kernel)
            + named("h200_copy_pairs", pair_points(), lambda p: True)
            + named("h200_kernel_times_heldout", kernel_points(DATA / "h200_kernel_times_heldout"),
                    lambda p: False))


def baseline(items, scorer) -> dict:
    """name -> (set, within, the names its prediction read) with the model as shipped."""
    out = {}
    for label, name, item in items:
        with Reads().recording() as reads:
            ok = scorer(item)
        out[name] = (label, ok, frozenset(reads.names))
    return out


def variant(items, scorer, base: dict, name: str) -> dict:
    """name -> within with `name` out (only the predictions that read it scored again)."""
    ph = physics.physics_for(GPU)
    value = neutral_value(name, ph)
    made = {}

    def make(real):
        return made.setdefault("ph", without(real, name, value))
    got = {}
    with patched(make):
        for _, key, item in items:
            got[key] = scorer(item) if name in base[key][2] else base[key][1]
    return got


def counts(base: dict, got: dict | None = None) -> dict:
    """Set -> [within, of]."""
    out: dict = {}
    for key, (label, ok, _) in base.items():
        row = out.setdefault(label, [0, 0])
        row[0] += got[key] if got is not None else ok
        row[1] += 1
    return out


# a trace's makespan runs from its first stamp to its last, so the time outside the blocks
# reaches no trace score (these are scored on kernel times only)
TRACE_BLIND = ("launch_overhead_us", "launch_gap_us")


def baselines(tables, path: Path | None) -> dict:
    """kind -> baseline, read from `path` where a run with the same items wrote it, else scored
    (and written there): variants run in several processes share one baseline."""
    keys = {kind: sorted(n for _, n, _ in its) for kind, its, _ in tables}
    if path is not None and path.is_file():
        saved = read_json_file(path, "ablation baseline", 64 << 20)
        if saved.get("keys") == keys:
            return {kind: {n: (r[0], r[1], frozenset(r[2])) for n, r in rows.items()}
                    for kind, rows in saved["bases"].items()}
    bases = {kind: baseline(its, scorer) for kind, its, scorer in tables}
    if path is not None:
        path.write_text(json.dumps({"keys": keys, "bases": {
            kind: {n: [r[0], r[1], sorted(r[2])] for n, r in rows.items()} for kind, rows in bases.items()}}))
    return bases


def run(folder: Path, held_out, fitting, names, times: bool, log=print,
        saved: Path | None = None) -> dict:
    """The ablation table: the model as shipped, then each of `names` out."""
    sets = {b: "held_out" for b in held_out} | {b: "fitting" for b in fitting}
    items = [(sets[b], n, t) for b, n, t in trace_items(folder, list(held_out) + list(fitting))]
    t0 = time.time()
    tables = [("traces", items, score_trace)] + ([("times", time_items(), score_time)] if times else [])
    bases = baselines(tables, saved)
    rows = [{"name": "nothing", **{f"{kind}_{label}": n for kind in bases
                                   for label, n in counts(bases[kind]).items()}}]
    log(f"as shipped: {rows[0]} ({time.time() - t0:.0f} s)")
    for name in names:
        t0, row = time.time(), {"name": name, "neutral": NEUTRAL[name][1]}
        for kind, its, scorer in tables:
            base = bases[kind]
            if kind == "traces" and name in TRACE_BLIND:
                base = {k: (label, ok, frozenset()) for k, (label, ok, _) in base.items()}
            row[f"{kind}_read_it"] = sum(name in r[2] for r in base.values())
            got = variant(its, scorer, base, name)
            row.update({f"{kind}_{label}": n for label, n in counts(base, got).items()})
        rows.append(row)
        log(f"{name} out: {row} ({time.time() - t0:.0f} s)")
    return {"gpu": GPU, "held_out": list(held_out), "fitting": list(fitting), "rows": rows}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--bundles", type=Path, default=None, metavar="DIR",
                   help=f"tests/data as it was at {SNAPSHOT} (git archive {SNAPSHOT} tests/data)")
    p.add_argument("--subset", action="store_true",
                   help="score tests/data's held-out memory sets and the FIT set instead")
    p.add_argument("--held-out", default="", metavar="NAMES",
                   help="comma-separated bundles under the folder, scored as held out (with --fitting: "
                        "instead of the default sets; the folder is tests/data without --bundles)")
    p.add_argument("--fitting", default="", metavar="NAMES", help="... and those scored as fitting")
    p.add_argument("--only", default="", help="comma-separated names (default: every one)")
    p.add_argument("--no-times", action="store_true", help="score the traces only")
    p.add_argument("--json", default=None, metavar="FILE", help="write the table here")
    p.add_argument("--baseline", type=Path, default=None, metavar="FILE",
                   help="the model-as-shipped scores: read here if a run of the same sets wrote "
                        "them, else written (variants split over processes share it)")
    args = p.parse_args(argv)
    names = [n for n in args.only.split(",") if n] or list(NEUTRAL)
    unknown = [n for n in names if n not in NEUTRAL]
    if unknown:
        print(f"error: no constant {unknown[0]!r}; the names: {', '.join(NEUTRAL)}", file=sys.stderr)
        return 2
    named = (tuple(n for n in args.held_out.split(",") if n), tuple(n for n in args.fitting.split(",") if n))
    if sum((args.subset, args.bundles is not None and not any(named), any(named))) != 1:
        print("error: give --bundles DIR, --subset, or --held-out and --fitting", file=sys.stderr)
        return 2
    folder, held_out, fitting = ((DATA, SUBSET_HELD_OUT, SUBSET_FITTING) if args.subset
                                 else (args.bundles or DATA, *named) if any(named)
                                 else (args.bundles, HELD_OUT, FITTING))
    table = run(folder, held_out, fitting, names, not args.no_times,
                log=lambda line: print(line, flush=True), saved=args.baseline)
    if args.json:
        Path(args.json).write_text(json.dumps(table, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
