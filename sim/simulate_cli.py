"""`simulate`: run the block scheduler for one launch from the command line (its options are
`explain`'s launch options, sim/cli.py, plus the block cost, placement and schedule)."""

from __future__ import annotations

import json

import numpy as np

from sim.cli import (SEED, _loads, _policy_type, _print_table, add_launch_arguments,
                     add_schedule_arguments, kernel_work, prediction_rows, resolve_launch)
from sim.inputs.args import arg_path, arg_real
from sim.inputs.errors import UserError
from sim.inputs.files import check_writable
from sim.model.confidence import prediction_confidence
from sim.model.launch_model import (MAX_WAVES, BYTES_PER_ELEMENT_ADD, TripCost, default_mode, launch_of,
                                    predict_launch)
from sim.schedule.achieved import of_simulation
from sim.schedule.dispatch_profile import WAITS, profile_for
from sim.schedule.policies import (COST_MODELS, PLACEMENTS, SIMULATED_PLACEMENTS, WAIT_TITLES,
                                   cost_model_id, placement_id)
from sim.traces.perfetto import add_perfetto_argument, written_line
from sim.traces.trace import MIN_BLOCK_US, check_trace_size, save_trace

MAX_US = 1e9  # any time option: 1000 s per block is far past every kernel
MAX_JITTER_BLOCKS = 2**17  # ~12 s on 2 cores: the engine takes one step per distinct end time


def add_simulate_parser(subparsers) -> None:
    p = subparsers.add_parser("simulate", help="run the block scheduler for one launch",
                              description="Place the grid's blocks onto SMs, retire and refill them, and "
                                          "print waves, makespan and the tail.")
    add_launch_arguments(p)
    p.add_argument("--cost", type=_policy_type(cost_model_id), choices=list(COST_MODELS),
                   default=None,
                   help="block durations: 'memory' (the launch model's memory-bound blocks, "
                        "sim/model/launch_model.py; the default), 'compute' (the default for a tiled "
                        "matmul --kernel) or 'uniform' (every block --duration-us)")
    p.add_argument("--duration-us", type=arg_real("--duration-us", MIN_BLOCK_US, MAX_US), default=10.0,
                   help="block duration for --cost uniform")
    p.add_argument("--jitter", type=arg_real("--jitter", 0, 0.9), default=0.0,
                   help="uniform cost: +-fraction of random, seeded variation per block (e.g. 0.2)")
    p.add_argument("--bytes-per-element", type=arg_real("--bytes-per-element", 0, 1e6),
                   default=BYTES_PER_ELEMENT_ADD,
                   help="memory cost: bytes each element moves (vector add fp32: 12)")
    p.add_argument("--overhead-us", type=arg_real("--overhead-us", 0, MAX_US), default=0.0,
                   help="memory cost: a fixed time per block on top of the model's (default 0)")
    p.add_argument("--latency-us", type=arg_real("--latency-us", 0, MAX_US), default=0.0,
                   help="memory cost: no block finishes sooner than this (default 0: the model's "
                        "own DRAM round trip, resources/physics)")
    p.add_argument("--sm-dispatch-us", type=arg_real("--sm-dispatch-us", 0, MAX_US), default=None,
                   help="uniform cost: an SM starts at most one block this often (default: the "
                        "GPU's dispatch profile when calibrated, none in the ideal schedule)")
    p.add_argument("--placement", type=_policy_type(placement_id), choices=list(SIMULATED_PLACEMENTS),
                   default="tpc-spread",
                   help="'sm-order' (or 'sm'): SM 0,1,2,...; 'tpc-spread' (default, or 'tpc'): TPC "
                        "pairs spread over GPCs, as recorded on an H200")
    add_schedule_arguments(p)
    p.add_argument("--wait", choices=list(WAITS), default="spin",
                   help="uniform cost: what the warps do while resident: 'spin' (default: busy, "
                        "like the trace kernel; on the H200 this holds new blocks back), 'sleep' "
                        "or 'memory' (waiting warps: blocks arrive as in the textbook)")
    p.add_argument("--seed", type=SEED, default=0,
                   help="the calibrated schedule's random draws (and --jitter's)")
    p.add_argument("--trace", metavar="FILE.json", type=arg_path("--trace file"),
                   help="write every block's SM, slot, start and end")
    add_perfetto_argument(p)
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(handler=cmd_simulate)


def cmd_simulate(args) -> int:
    gpu, occ, geo, kernel = resolve_launch(args)
    if not occ.can_launch:
        raise UserError(f"this launch cannot run on {gpu.name}: {occ.reason}")
    if args.trace:
        check_writable(args.trace)
        check_trace_size(geo.blocks)
    if args.perfetto:
        check_writable(args.perfetto, "--perfetto file")
    launch, cost = _simulated_launch(args, gpu, occ, geo, kernel)
    with np.errstate(over="ignore", invalid="ignore"):  # huge durations: reported below
        prediction = predict_launch(gpu, launch, args.cost, placement=args.placement,
                                    schedule=args.schedule, seed=args.seed, cost=cost,
                                    sm_interval_us=args.sm_dispatch_us,
                                    max_waves=None if args.trace else MAX_WAVES)
    result = prediction.simulation
    if not result.makespan_us < float("inf"):
        raise UserError("block durations this long overflow the simulation's clock; use smaller values")
    shortest = float(np.min(result.block_end_us - result.block_start_us))
    if not shortest >= MIN_BLOCK_US:  # zero-length blocks would all 'run' at once: nonsense waves
        raise UserError(f"blocks would take {shortest:.3g} us; a block must take at least {MIN_BLOCK_US} us "
                        "(raise --duration-us, or --bytes-per-element/--latency-us/--overhead-us)")
    profile = profile_for(gpu.name)
    achieved = of_simulation(result, occ)
    summary = _simulation_summary(args, gpu, prediction, achieved, profile)
    if args.trace:
        save_trace(args.trace, source="simulated", gpu=gpu.name, records=result.trace_records(),
                   meta={"elements": geo.elements, "threads_per_block": geo.threads_per_block,
                         "kernel": kernel.name if kernel else "custom",
                         "regs_per_thread": occ.regs_per_thread, "smem_per_block_bytes": occ.smem_per_block_bytes,
                         **summary})
    wrote = args.perfetto and written_line(args.perfetto, {"predicted": result.timeline}, {"gpu": gpu.name})
    if args.json:
        print(json.dumps(summary, indent=2))
        return 0
    _print_simulation(args, gpu, occ, geo, prediction, achieved, profile)
    if args.trace:
        print(f"  trace written to {args.trace}")
    if wrote:
        print(wrote)
    return 0


def _simulated_launch(args, gpu, occ, geo, kernel):
    """(the launch `simulate` runs, the block cost it gives it or None for the mode's own); the
    mode defaults to the kernel's (default_mode)."""
    work = kernel_work(gpu, occ, geo, kernel)
    if args.cost is None:
        args.cost = default_mode(getattr(work, "kernel", None))
    if args.cost == "uniform" and args.jitter and geo.blocks > MAX_JITTER_BLOCKS:
        raise UserError(f"with --jitter every block ends at its own time and is simulated one by one: "
                        f"at most {MAX_JITTER_BLOCKS:,} blocks, got {geo.blocks:,}")
    bytes_moved = (kernel.bytes_moved if kernel is not None and kernel.bytes_moved
                   else geo.elements * args.bytes_per_element)
    if args.cost == "memory" and not bytes_moved > 0:
        raise UserError("memory-bound blocks that move no bytes take no time: give "
                        "--bytes-per-element above 0 (a block must take at least 0.001 us)")
    extra = {}
    if args.cost == "compute":
        if work is None:
            raise UserError("the compute-bound model needs a kernel that says what each block "
                            "computes (a matmul kernel); use the memory-bound or uniform model")
        built = work.build()
        extra = dict(work=built, flops=float(np.sum(built.flops)))
    launch = launch_of(occ, geo, bytes_moved=bytes_moved, duration_us=args.duration_us,
                       wait=args.wait, **_loads(kernel), **extra)
    cost = None
    if args.cost == "memory":
        cost = TripCost.for_gpu(gpu, launch, extra_us=args.overhead_us, min_us=args.latency_us)
    elif args.cost == "uniform" and args.jitter:
        from sim.schedule.scheduler import UniformCost
        cost = UniformCost(args.duration_us, args.jitter, args.seed)
    return launch, cost


def _simulation_summary(args, gpu, prediction, achieved, profile) -> dict:
    """What `simulate --json` prints and a written trace keeps in its meta."""
    summary = {**prediction.simulation.summary(), **prediction.summary(),
               "confidence": prediction_confidence(gpu, prediction).to_dict()}
    summary["makespan_us"] = round(prediction.makespan_us, 4)
    summary.update(achieved.to_dict())
    summary["schedule"] = args.schedule
    summary["dispatch_profile"] = profile.label if args.schedule == "calibrated" else None
    if args.cost == "uniform":
        summary["wait"] = args.wait
    return summary


def _print_simulation(args, gpu, occ, geo, prediction, achieved, profile) -> None:
    result, timeline = prediction.simulation, prediction.simulation.timeline
    what = (f"{COST_MODELS[args.cost].title} ({WAIT_TITLES[args.wait]} warps)"
            if args.cost == "uniform" else COST_MODELS[args.cost].title)
    how = (f"calibrated schedule, {profile.label}" if args.schedule == "calibrated"
           else "ideal (textbook) schedule")
    _print_table(f"Simulated {gpu.name}: {geo.blocks:,} blocks, {occ.blocks_per_sm} per SM "
                 f"({result.n_slots:,} block slots{geo.clusters_note}), {what}, {PLACEMENTS[args.placement].title}, "
                 f"{how}", [
        ("Waves", f"{result.waves}", f"{result.waves_fractional:.2f} grids' worth of block slots"),
        ("Makespan", f"{prediction.makespan_us:,.2f} us", "first block start to last block end"),
        ("Steady residency", f"{timeline.steady_blocks:,} blocks",
         "resident while blocks were still waiting (median)" if timeline.waves > 1
         else "no block waited for a slot: the GPU's block slots"),
        ("Tail", f"{timeline.tail_fraction:.1%}",
         f"from {timeline.tail_start_us:,.2f} us: below the steady residency, the grid used up"),
        ("Occupancy", achieved.text(), f"{achieved.waves_per_sm:,.2f} waves per SM (Nsight Compute's terms)"),
    ])
    _print_table("Predicted (sim/model/launch_model.py)", prediction_rows(prediction, gpu))
