"""`check`, `bench`, `trace` and `calibrate`: the kernels layer's sub-commands, headless, for GPU
servers; and `--kernel` / `--kernel-file` for sim's `explain` and `simulate` (the kernel's own
grid, its registers and shared memory from its compiler for the chosen GPU, without that GPU).

Importing this module is cheap (no torch/triton/numba): each handler imports what it needs.
User-caused errors raise sim.inputs.errors.UserError; main.py prints them on one line.
"""

from __future__ import annotations

import argparse
import os
import sys

from sim.inputs.errors import UserError
from sim.inputs.files import check_writable
from sim.inputs.args import arg_count, arg_path, arg_real
from sim.traces.trace import MAX_TRACE_BLOCKS
from sim.inputs.units import parse_count, parse_count_list

from kernels.launching.kernel_args import add_kernel_options

BENCH_SIZES = "2^20,2^24,2^26"


def register(subparsers) -> None:
    for command in ("explain", "simulate"):  # sim's commands, registered before ours
        if command in subparsers.choices:
            add_kernel_options(subparsers.choices[command])
    for add in (_add_check, _add_bench, _add_trace, _add_calibrate):
        add(subparsers)


def _add_check(subparsers) -> None:
    p = subparsers.add_parser(
        "check", help="run every live kernel against its float64 reference (GPU, or CPU fallback)",
        description="Runs every registry kernel's correctness check on whatever is available "
                    "(GPU; else Triton's interpreter and numba-cuda's simulator) and prints a "
                    "table. Exit status 1 if any check fails.")
    p.add_argument("--kernel", default=None, metavar="NAME[,NAME]",
                   help="only these kernels (default: all of them, or those of --kernel-file)")
    _add_file_option(p, "check the kernels of this file (and their torch peers) against the "
                        "reference it declares")
    p.add_argument("--sizes", default=None, metavar="N[,N]",
                   help="element counts (default: the article's 1,128,1024,1048583; the CPU path "
                        "caps each kernel where its simulator would take minutes)")
    p.set_defaults(handler=cmd_check)


def _add_bench(subparsers) -> None:
    p = subparsers.add_parser(
        "bench", help="measure kernel bandwidth over sizes and block sizes (needs a GPU)",
        description="Times kernels with CUDA events, the L2 flushed before every rep, and writes "
                    "median/p20/p80 time and GB/s per point, with the copy ceiling and the "
                    "theoretical peak, to a .json (warpscope-bench/1) or .csv file.")
    p.add_argument("--kernel", default=None, metavar="NAME[,NAME]",
                   help="kernels to time: registry names, a group (add, add_relu, copy, square, "
                        "matmul) or all (required, except with --kernel-file, or with "
                        "--waves-sweep: matmul)")
    _add_file_option(p, "also time the kernels of this file beside their torch peers, each "
                        "checked against the reference it declares")
    p.add_argument("--sizes", default=None, metavar="N[,N]",
                   help=f"element counts, e.g. 2^20,2^24 or 1048576 (default: {BENCH_SIZES})")
    p.add_argument("--block", default=None, metavar="B[,B]",
                   help="block sizes to sweep: threads per block for Numba kernels, BLOCK_SIZE for "
                        "Triton kernels (default: each kernel's own); torch peers ignore it")
    p.add_argument("--warps", type=arg_count("--warps", 1, 64), default=None, metavar="W",
                   help="Triton num_warps (default: each kernel's own)")
    p.add_argument("--reps", type=arg_count("--reps", 1, 100_000), default=50, metavar="R",
                   help="fewest timed repetitions per point (more if they fit in 100 ms); "
                        "the median is reported (default: %(default)s)")
    p.add_argument("--no-flush", action="store_true",
                   help="do NOT evict L2 before each rep: shows the cache trap (inflated GB/s at "
                        "small sizes)")
    p.add_argument("--cpu", action="store_true",
                   help="without a GPU, time the interpreter/simulator anyway "
                        "(labelled: not GPU timings)")
    p.add_argument("--waves-sweep", default=None, metavar="M=..,K=..,N=LO..HI xSTEP",
                   help="the wave-quantization experiment: matmul kernels and cuBLAS at every "
                        "size of one stepped dimension, e.g. M=1024,K=8192,N=256..14080x256 (one "
                        "tile column per step); without a GPU, prints the scheduler's prediction")
    p.add_argument("--gpu", default=None, metavar="NAME",
                   help="with --waves-sweep and no GPU here: the GPU preset to predict for "
                        "(default H200)")
    p.add_argument("--out", default=None, metavar="FILE.json|FILE.csv", type=arg_path("--out file"),
                   help="where to write the results (format by extension, written atomically); "
                        "required whenever something is measured")
    from kernels.measure.occupancy_sweep import add_options  # cheap: numpy and sim only

    add_options(p)
    p.set_defaults(handler=cmd_bench)


def _add_trace(subparsers) -> None:
    p = subparsers.add_parser(
        "trace", help="record which SM ran each block, and when, on the real GPU",
        description="Launches a Triton kernel whose programs read %smid and %globaltimer through "
                    "inline PTX and saves the block placement as a warpscope-trace/1 JSON file "
                    "(sim/traces/trace.py) to compare with `simulate`. --kernel spin: every block stays "
                    "resident --spin-us, waiting as --wait says; --kernel add|copy|square|softmax: a "
                    "real kernel, one tile (softmax: one row) per block, each block stamped at "
                    "entry and after its store, and timed stamped and unstamped (the cost of "
                    "the stamps is in the file). --kernel-file: your own Triton or Numba kernel, "
                    "recompiled with the same stamps. Without a GPU it says so and exits 2.")
    p.add_argument("--kernel", default=None, metavar="spin|add|copy|square|softmax",
                   help="what each block does: stay resident a set time (spin), or one tile of a "
                        "real kernel: add, copy or square BLOCK_SIZE elements, or softmax one row "
                        "of BLOCK_SIZE columns (default: spin)")
    p.add_argument("--kernel-file", default=None, metavar="FILE.py[:NAME]",
                   type=arg_path("--kernel-file"),
                   help="trace your own Triton or Numba kernel (docs/KERNEL_FILES.md; the file "
                        "is run in a child process) at --elements, unchanged: a stamped copy of "
                        "it records every program's SM, start and end, and the file says what "
                        "the stamps cost (--block: its sweep parameter, --warps: a Triton "
                        "kernel's num_warps). Needs a GPU (without one: exit 2)")
    p.add_argument("--wait", default=None, metavar="spin|sleep|memory",
                   help="spin kernel: how the warps wait: busy re-reading the timer (spin), "
                        "sleeping 200 ns between reads (sleep) or chasing pointers through DRAM "
                        "(memory) (default: spin)")
    p.add_argument("--grid", type=arg_count("--grid", 1, MAX_TRACE_BLOCKS), default=None, metavar="N",
                   help="spin kernel: programs (blocks) to launch (default: three full waves at "
                        "the predicted occupancy)")
    p.add_argument("--waves", type=arg_real("--waves", 0, 1000, positive=True), default=None,
                   metavar="W",
                   help="spin kernel: launch W full waves at the predicted occupancy (2.5: two "
                        "and a half) instead of --grid")
    p.add_argument("--warps", type=arg_count("--warps", 1, 32), default=None, metavar="W",
                   help="warps per block, i.e. 32*W threads (default: 4, or the kernel file's)")
    p.add_argument("--spin-us", type=arg_real("--spin-us", 0.1, 1e6), default=None, metavar="T",
                   help="spin kernel: how long each block stays resident, in microseconds "
                        "(default: 100)")
    p.add_argument("--hold-regs", type=arg_count("--hold-regs", 0, 128), default=None, metavar="K",
                   help="spin kernel: hold K more registers per thread (0, 1, 2, 4, ..., 128), "
                        "so that registers, not warps, can limit the blocks per SM (default: 0)")
    p.add_argument("--elements", default=None, metavar="N",
                   help="real kernels: elements, e.g. 2^24 or 16777216 (required; softmax: "
                        "rows of --block columns)")
    p.add_argument("--block", type=arg_count("--block", 1, 1 << 20), default=None, metavar="B",
                   help="real kernels: BLOCK_SIZE, elements per program (default: 1024)")
    p.add_argument("--out", required=True, metavar="FILE.json", type=arg_path("--out file"),
                   help="where to write the trace")
    p.set_defaults(handler=cmd_trace)


def _add_calibrate(subparsers) -> None:
    p = subparsers.add_parser(
        "calibrate", help="measure every per-GPU number the model reads, on this GPU, and save them",
        description="Records a small family of block traces on the GPU and fits the dispatch "
                    "model to them, reads which SMs move bytes faster, measures the copy "
                    "bandwidth, DRAM and L2 latency, L2 bandwidth and trip overhead, and writes "
                    "them to the user's config folder ($XDG_CONFIG_HOME/warpscope/dispatch/"
                    "<GPU>.json), where the app and every command find them and say 'calibrated "
                    "on <GPU>'. It ends by predicting launches it fitted nothing on and printing "
                    "predicted beside measured. About two minutes. With --matmul: the "
                    "compute-bound (matmul) model's numbers instead (kernels/measure/"
                    "matmul_calibrate.py), into fits/<GPU>_matmul.json there.")
    p.add_argument("--matmul", action="store_true",
                   help="calibrate the matmul model instead: time cuBLAS and matmul_auto's "
                        "candidates, fit the compute terms and each candidate's efficiency, check "
                        "sizes it did not fit on (about two minutes)")
    p.add_argument("--out", default=None, metavar="FILE.json", type=arg_path("--out file"),
                   help="write the profile here instead of the config folder")
    p.add_argument("--keep-traces", default=None, metavar="DIR", type=arg_path("--keep-traces"),
                   help="also save the recorded traces there (a trace bundle: python3 -m "
                        "sim.traces.trace_bundle DIR lists them)")
    p.add_argument("--fit-seconds", type=arg_real("--fit-seconds", 0, 86400, positive=True),
                   default=30.0, metavar="S",
                   help="stop the fit after S seconds, keeping the best so far (default: %(default)s)")
    p.set_defaults(handler=cmd_calibrate)


def _add_file_option(parser, what: str) -> None:
    parser.add_argument("--kernel-file", action="append", default=None, metavar="FILE.py[:NAME]",
                        type=arg_path("--kernel-file"), help=f"a kernel file (docs/KERNEL_FILES.md; it is run): {what}. "
                             "Repeat it for several files")


def cmd_check(args) -> int:
    from kernels.measure.check import format_table, run_checks
    from kernels.declare.registry import parse_kernel_list

    names = None
    if args.kernel:
        names = [k.name for k in parse_kernel_list(args.kernel)] if args.kernel != "all" else None
    sizes = parse_count_list(args.sizes, "sizes") if args.sizes else None
    say = lambda line: print(line, file=sys.stderr, flush=True)  # noqa: E731
    if args.kernel_file:  # the user's code runs in a kernel host, never here (kernels/host/in_host.py)
        from kernels.host.in_host import check_in_host

        results = check_in_host(_checked_files(args.kernel_file), names or [], sizes,
                                on_progress=lambda _d, _t, label: say(label))
    else:
        results = run_checks(names, sizes, on_result=lambda r: say(
            f"  {r.status:4} {r.kernel} n={r.elements:,} ({r.where})"))
    print(format_table(results))
    failed = sum(r.status == "FAIL" for r in results)
    skipped = sum(r.status == "SKIP" for r in results)
    print(f"\n{len(results) - failed - skipped} OK, {failed} FAIL, {skipped} SKIP")
    if not failed and skipped == len(results):  # a check that checked nothing is no pass
        print("warpscope: error: nothing was checked: every kernel was skipped (see SKIP above)",
              file=sys.stderr)
    return 1 if failed or skipped == len(results) else 0


def _checked_files(paths) -> list[str]:
    """Each --kernel-file as an absolute path (with its ":NAME", which picks one declaration),
    after the checks that need no process (it exists, is a regular file, is not too big: one
    line, status 2)."""
    from kernels.declare.kernel_file import file_digest, split_path

    out = []
    for given in paths:
        path, name = split_path(given)
        path = os.path.abspath(path)
        file_digest(path)
        out.append(f"{path}:{name}" if name else path)
    return out


class ProgressBar:
    """A one-line progress bar on stderr: `[#####.....] 5/10 label`."""

    def __init__(self, stream=None, width: int = 30):
        self.stream = stream or sys.stderr
        self.width = width
        self.tty = self.stream.isatty()

    def __call__(self, done: int, total: int, label: str) -> None:
        filled = self.width * done // max(total, 1)
        line = f"[{'#' * filled}{'.' * (self.width - filled)}] {done}/{total} {label}"
        if self.tty:
            self.stream.write("\r" + line[:120].ljust(120))
            if done == total:
                self.stream.write("\n")
        else:
            self.stream.write(line + "\n")
        self.stream.flush()


def cmd_bench(args) -> int:
    from kernels.measure.bench import sweep
    from kernels.declare.registry import parse_kernel_list
    from kernels.measure.results import _kind, save_results

    from kernels.measure.occupancy_sweep import _reject_stray, cmd_occupancy_sweep

    _reject_stray(args)
    if args.occupancy_sweep:
        if args.waves_sweep:
            raise UserError("give --occupancy-sweep or --waves-sweep, not both")
        return cmd_occupancy_sweep(args)
    if args.waves_sweep:
        return cmd_waves(args)
    if args.gpu:
        raise UserError("--gpu is for --waves-sweep (a prediction); `bench` measures this machine's GPU")
    if not args.kernel and not args.kernel_file:
        raise UserError("give --kernel NAME[,NAME] or --kernel-file FILE.py (or --waves-sweep "
                        "for the matmul experiment)")
    if not args.out:
        raise UserError("give --out FILE.json or FILE.csv for the results")
    _kind(args.out)  # reject a bad extension or folder before measuring anything
    check_writable(args.out)
    kernels = parse_kernel_list(args.kernel) if args.kernel else []
    sizes = parse_count_list(args.sizes or BENCH_SIZES, "sizes")
    blocks = parse_count_list(args.block, "block sizes", upper=1 << 20) if args.block else None
    if args.reps < 1:
        raise UserError("--reps must be at least 1")
    options = dict(flush_l2=not args.no_flush, reps=args.reps, num_warps=args.warps,
                   allow_cpu=args.cpu, command="warpscope " + " ".join(sys.argv[1:]))
    if args.kernel_file:  # the user's code runs in a kernel host, never here (kernels/host/in_host.py)
        from kernels.host.in_host import bench_in_host

        result = bench_in_host(_checked_files(args.kernel_file), [k.name for k in kernels],
                               sizes, blocks, options, on_progress=ProgressBar())
    else:
        result = sweep(kernels, sizes, blocks, on_progress=ProgressBar(), **options)
    save_results(result, args.out)
    print(format_measurements(result))
    print(f"wrote {len(result.measurements)} measurements to {args.out}")
    return 0


def cmd_waves(args) -> int:
    """`bench --waves-sweep`: measure on a GPU (and predict beside it), else predict only."""
    from sim.rules.devices import preset
    from sim.model.throughput import sweep_dims
    from sim.traces.waves import format_sweep, from_measurements, parse_sweep

    from kernels.launching.backends import gpu_status
    from kernels.declare.registry import parse_kernel_list

    dims_list = parse_sweep(args.waves_sweep)
    # the group's tiled variants; matmul_auto picks among them per size (explain shows its choice)
    kernels = parse_kernel_list(args.kernel) if args.kernel else \
        [k for k in parse_kernel_list("matmul") if k.name != "matmul_auto"]
    if args.reps < 1:
        raise UserError("--reps must be at least 1")
    for flag, value in (("--block", args.block), ("--warps", args.warps), ("--no-flush", args.no_flush)):
        if value:
            raise UserError(f"{flag} does not apply to --waves-sweep (each kernel keeps its tile)")
    has_gpu, why = gpu_status()
    if not has_gpu and not args.cpu:
        gpu = preset(args.gpu or "H200")
        if not args.kernel:  # the group: only the variants this GPU runs (TMA needs Hopper)
            from sim.model.matmul_choice import runs_on

            for k in (k for k in kernels if runs_on(k, gpu)):
                print(f"(not predicted: {runs_on(k, gpu)})")
            kernels = [k for k in kernels if not runs_on(k, gpu)]
        predicted = sweep_dims(dims_list, kernels, gpu)
        conc = next(iter(predicted.values()))[0].concurrent_tiles
        print(f"Predicted on {gpu.name} by the block scheduler (compute-bound model, sim/model/throughput.py):")
        print(format_sweep(dims_list, predicted, concurrent_tiles=conc))
        notes = {p.note for ps in predicted.values() for p in ps if p.note}
        for note in sorted(notes):
            print(note)
        print(f"no GPU here ({why}): prediction only, nothing measured"
              + ("; --out not written" if args.out else ""))
        return 0
    if not args.out:
        raise UserError("give --out FILE.json or FILE.csv for the measurements")
    from kernels.measure.bench import waves_sweep
    from kernels.measure.results import _kind, save_results

    _kind(args.out)
    check_writable(args.out)
    result = waves_sweep(dims_list, kernels, reps=args.reps, on_progress=ProgressBar(),
                         allow_cpu=args.cpu, command="warpscope " + " ".join(sys.argv[1:]))
    save_results(result, args.out)
    measured = from_measurements(result.measurements, args.out, result.device.get("name", "?"))
    gpu = _result_gpu(result) or preset(args.gpu or "H200")
    done = [d for d in dims_list if any(p.dims == d for p in next(iter(measured.points.values())))]
    predicted = sweep_dims(done, kernels, gpu, resources=measured.resources)
    conc = next(iter(predicted.values()))[0].concurrent_tiles
    print(format_sweep(done, predicted, measured, concurrent_tiles=conc))
    if not any(m.is_gpu_timing for m in result.measurements):
        print("measured on the CPU path (--cpu): NOT GPU timings")
    print(f"wrote {len(result.measurements)} measurements to {args.out}")
    return 0


def _result_gpu(result):
    from sim.rules.devices import GpuSpec

    try:
        return GpuSpec.from_dict(result.device)
    except (KeyError, TypeError, ValueError):
        return None


def format_measurements(result) -> str:
    rows = [("kernel", "elements", "block", "median ms", "GB/s", "p20-p80 GB/s", "% copy",
             "% peak", "regs", "occ", "GPU?")]
    for m in result.measurements:
        pct = lambda v: "" if v is None else f"{v:.0f}"  # noqa: E731
        rows.append((m.kernel, f"{m.elements:,}", str(m.block_size or "-"), f"{m.median_ms:.4f}",
                     f"{m.bandwidth_gbps:,.0f}",
                     f"{m.bandwidth_p20_gbps:,.0f}-{m.bandwidth_p80_gbps:,.0f}",
                     pct(m.percent_of_copy), pct(m.percent_of_peak),
                     "" if m.regs_per_thread is None else str(m.regs_per_thread),
                     "" if m.occupancy is None else f"{m.occupancy:.0%}",
                     "yes" if m.is_gpu_timing else "NO"))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths)))
             for r in rows]
    head = []
    if result.copy_ceiling_gbps:
        head.append(f"copy ceiling {result.copy_ceiling_gbps:,.0f} GB/s (torch copy, same run)")
    if result.peak_dram_gbps:
        head.append(f"theoretical peak {result.peak_dram_gbps:,.0f} GB/s")
    if result.measurements:
        head.append(result.measurements[0].method)
    notes = [f"note: {n}" for n in result.notes]  # e.g. the block sizes a kernel could not take
    return "\n".join(head + lines + notes)


SPIN_ONLY = ("wait", "grid", "waves", "spin_us", "hold_regs")
ADD_ONLY = ("elements", "block")


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def cmd_trace(args) -> int:
    from kernels.tracing.trace import (KERNELS, check_grid, check_spin_args, check_tile_args, record_tile_trace,
                        record_trace, save, say_trace)

    if args.kernel_file:
        from kernels.tracing.trace_file import cmd_trace_file

        return cmd_trace_file(args, SPIN_ONLY)
    args.kernel = args.kernel or "spin"
    args.warps = 4 if args.warps is None else args.warps
    if args.kernel not in KERNELS:
        raise UserError(f"--kernel must be one of {', '.join(KERNELS)}, got {args.kernel!r}")
    mine, others = (SPIN_ONLY, ADD_ONLY) if args.kernel == "spin" else (ADD_ONLY, SPIN_ONLY)
    stray = [_flag(a) for a in others if getattr(args, a) is not None]
    if stray:
        other = ", ".join(k for k in KERNELS if k != "spin") if args.kernel == "spin" else "spin"
        raise UserError(f"{', '.join(stray)}: only with --kernel {other}, not {args.kernel}")
    if not str(args.out).lower().endswith(".json"):
        raise UserError(f"trace file must end in .json, got {args.out!r}")
    command = "warpscope " + " ".join(sys.argv[1:])
    # every value is checked before the GPU is looked for, so a typo costs no launch
    if args.kernel == "spin":
        wait, spin_us = args.wait or "spin", 100.0 if args.spin_us is None else args.spin_us
        hold = args.hold_regs or 0
        check_spin_args(wait, args.warps, spin_us, hold)
        check_grid(args.grid, args.waves)
        check_writable(args.out)
        trace = record_trace(args.grid, args.warps, spin_us, command, wait=wait, hold_regs=hold,
                             waves=args.waves)
    else:
        if args.elements is None:
            raise UserError(f"--kernel {args.kernel} needs --elements N (e.g. 2^24)")
        elements = parse_count(args.elements, "--elements")
        block = 1024 if args.block is None else args.block
        check_tile_args(args.kernel, elements, block, args.warps)
        check_writable(args.out)
        trace = record_tile_trace(args.kernel, elements, block, args.warps, command)
    save(trace, args.out)
    say_trace(trace, args.out)
    return 0


def cmd_calibrate(args) -> int:
    from kernels.measure.calibrate import calibrate

    if args.matmul:
        return cmd_calibrate_matmul(args)
    if args.out is not None:
        if not str(args.out).lower().endswith(".json"):
            raise UserError(f"profile file must end in .json, got {args.out!r}")
        check_writable(args.out)
    if args.keep_traces is not None:
        os.makedirs(args.keep_traces, exist_ok=True)
    result = calibrate(args.out, fit_s=args.fit_seconds, keep=args.keep_traces,
                       command="warpscope " + " ".join(sys.argv[1:]),
                       say=lambda msg: print(msg, file=sys.stderr, flush=True))  # progress
    good = sum(s.within() for _, s in result.scores)
    print(f"{result.profile.label}: the fitted model meets the bar (makespan 10%, median peak "
          f"1 block, residency error 0.15) on {good} of {len(result.scores)} recorded traces")
    print(f"faster SMs: {result.share_note}")
    for name, c in result.constants.items():
        print(f"{name}: {c.value:g} {c.unit} ({c.label})")
    if result.check:
        near = sum(abs(p / m - 1) <= 0.10 for _, p, m in result.check)
        print(f"held-out check: {near} of {len(result.check)} launches predicted within 10%: "
              + "; ".join(f"{n} {p / m - 1:+.1%}" for n, p, m in result.check))
    if result.failed:
        print(f"{len(result.failed)} steps failed: " + "; ".join(f"{n}: {e}" for n, e in result.failed))
    print(f"wrote {result.path}")
    return 0


def cmd_calibrate_matmul(args) -> int:
    from kernels.measure.matmul_calibrate import calibrate_matmul, report

    if args.out is not None or args.keep_traces is not None:
        raise UserError("calibrate --matmul writes the user's config folder, which the model reads "
                        "(set XDG_CONFIG_HOME to put it elsewhere); --out and --keep-traces are "
                        "the dispatch calibration's")
    result = calibrate_matmul(command="warpscope " + " ".join(sys.argv[1:]),
                              say=lambda msg: print(msg, file=sys.stderr, flush=True))
    print("\n".join(report(result)))
    return 0


def main(argv=None) -> int:
    """`python -m kernels.cli check|bench|trace|calibrate`: the same commands without main.py (GPU servers
    that lack the GUI's dependencies)."""
    parser = argparse.ArgumentParser(prog="python -m kernels.cli")
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    try:
        return args.handler(args)
    except UserError as exc:  # usage errors exit 2, runtime failures (RunFailure) 1
        print(f"warpscope: error: {exc}", file=sys.stderr)
        return exc.exit_status
    except ModuleNotFoundError as exc:
        from kernels.launching.backends import missing_module_error

        if (failure := missing_module_error(exc)) is None:
            raise
        print(f"warpscope: error: {failure}", file=sys.stderr)
        return failure.exit_status


if __name__ == "__main__":
    sys.exit(main())
