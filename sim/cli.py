"""`explain` and `simulate`: the scheduling model from the command line."""

from __future__ import annotations

import json
from dataclasses import asdict, replace

import numpy as np

from sim.devices import GpuSpec, preset, presets
from sim.errors import UserError
from sim.files import check_writable
from sim.inputs import arg_bytes, arg_count, arg_path, arg_real
from sim.geometry import launch_geometry
from sim.occupancy import LIMITERS, occupancy
from sim.predict import H200_FIT
from sim.scheduler import PLACEMENTS, MemoryBoundCost, UniformCost, simulate
from sim.trace import MIN_BLOCK_US, check_trace_size, save_trace
from sim.units import fmt_bytes

MAX_US = 1e9  # any time option: 1000 s per block is far past every kernel
MAX_JITTER_BLOCKS = 2**17  # ~12 s on 2 cores: the engine takes one step per distinct end time


def add_launch_arguments(parser, *, gpu_default: str | None = "H200") -> None:
    """The launch options shared by every command that describes one launch."""
    parser.add_argument("--gpu", default=gpu_default, metavar="NAME",
                        help=f"GPU preset, case-insensitive: {', '.join(presets())}")
    parser.add_argument("--elements", type=arg_count("element count"), default=1_000_000,
                        metavar="N", help="elements to process, one per thread (1000000, 1e6, 2^20, 4M)")
    parser.add_argument("--block", type=arg_count("block size"), default=256,
                        metavar="THREADS", help="threads per block, 1..1024 (multiples of 32 avoid idle lanes)")
    parser.add_argument("--regs", type=arg_count("registers"), default=0, metavar="N",
                        help="registers per thread the compiled kernel uses (0: not limiting)")
    parser.add_argument("--smem", type=arg_bytes("shared memory"), default=0,
                        metavar="BYTES", help="shared memory per block, static + dynamic (49152, 48K)")
    parser.add_argument("--carveout", type=arg_count("carveout", 0, 100), default=None, metavar="PERCENT",
                        help="preferred shared-memory carveout, 0..100 %% of the SM's maximum "
                             "(default: the driver's choice)")


def register(subparsers) -> None:
    p = subparsers.add_parser("explain", help="device, grid geometry and occupancy of one launch",
                              description="Print the device table, the launch geometry (blocks, warps, "
                                          "idle threads, warp slots, waves) and the occupancy with its limiter.")
    add_launch_arguments(p)
    p.add_argument("--json", action="store_true", help="print one JSON object instead of tables")
    p.set_defaults(handler=cmd_explain)

    p = subparsers.add_parser("simulate", help="run the block scheduler for one launch",
                              description="Place the grid's blocks onto SMs, retire and refill them, and "
                                          "print waves, makespan and the tail.")
    add_launch_arguments(p)
    p.add_argument("--cost", choices=["uniform", "memory"], default="memory",
                   help="block durations: 'uniform' (every block --duration-us) or 'memory' (default: "
                        "bytes at the block's share of DRAM bandwidth, at least --latency-us, plus "
                        "--overhead-us; SMs start a block per --sm-dispatch-us)")
    p.add_argument("--duration-us", type=arg_real("--duration-us", MIN_BLOCK_US, MAX_US), default=10.0,
                   help="block duration for --cost uniform")
    p.add_argument("--jitter", type=arg_real("--jitter", 0, 0.9), default=0.0,
                   help="uniform cost: +-fraction of random, seeded variation per block (e.g. 0.2)")
    p.add_argument("--bytes-per-element", type=arg_real("--bytes-per-element", 0, 1e6), default=12.0,
                   help="memory cost: bytes each element moves (vector add fp32: 12)")
    p.add_argument("--overhead-us", type=arg_real("--overhead-us", 0, MAX_US), default=0.0,
                   help="memory cost: fixed time per block")
    p.add_argument("--latency-us", type=arg_real("--latency-us", 0, MAX_US), default=H200_FIT.latency_us,
                   help="memory cost: no block finishes sooner than this DRAM round trip "
                        "(default %(default)s: fitted on the H200, sim/predict.py)")
    p.add_argument("--sm-dispatch-us", type=arg_real("--sm-dispatch-us", 0, MAX_US),
                   default=H200_FIT.sm_dispatch_interval_us,
                   help="memory cost: an SM starts at most one block this often "
                        "(default %(default)s: fitted on the H200)")
    p.add_argument("--placement", choices=["sm", "tpc"], default="tpc",
                   help="'sm': SM 0,1,2,...; 'tpc': TPC pairs spread over GPCs, as recorded on an H200")
    p.add_argument("--trace", metavar="FILE.json", type=arg_path("--trace file"),
                   help="write every block's SM, slot, start and end")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(handler=cmd_simulate)

    p = subparsers.add_parser("compare", help="lay a recorded block trace beside its simulation",
                              description="Simulate the grid of a trace recorded on a real GPU (python main.py "
                                          "trace) with the same block duration, and compare residency, makespan "
                                          "and SM placement.")
    p.add_argument("trace_file", metavar="TRACE.json", help="a warpscope-trace/1 file")
    p.add_argument("--gpu", metavar="NAME", help="GPU preset (default: the one the trace names)")
    p.add_argument("--blocks-per-sm", type=arg_count("--blocks-per-sm"), metavar="N",
                   help="block slots per SM (default: the occupancy predicted when recording)")
    p.add_argument("--placement", choices=["recorded", "sm", "tpc"], default="recorded",
                   help="simulated placement: the SM order the hardware used (default), SM order, or TPC spread")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(handler=cmd_compare)


def resolve_launch(args):
    """(gpu, occupancy, geometry) for parsed launch arguments; UserError on nonsense."""
    gpu = preset(args.gpu)
    if args.block < 1 or args.block > gpu.max_threads_per_block:
        raise UserError(f"block size must be 1..{gpu.max_threads_per_block} threads on {gpu.name}, "
                        f"got {args.block}")
    if args.elements < 1:
        raise UserError(f"element count must be at least 1, got {args.elements:,}")
    try:
        occ = occupancy(gpu, args.block, args.regs, args.smem, args.carveout)
        geo = launch_geometry(gpu, args.elements, args.block, occ)
    except ValueError as exc:
        raise UserError(str(exc)) from None
    return gpu, occ, geo


def device_rows(gpu: GpuSpec) -> list[tuple[str, str]]:
    return [
        ("GPU", f"{gpu.name}{' (detected)' if gpu.detected else ''}"),
        ("Compute capability", gpu.cc_string),
        ("Streaming multiprocessors", f"{gpu.sm_count}"),
        ("Warp size", f"{gpu.warp_size} threads"),
        ("Max threads per SM", f"{gpu.max_threads_per_sm:,}"),
        ("Warp slots per SM", f"{gpu.max_warps_per_sm}"),
        ("Max blocks per SM", f"{gpu.max_blocks_per_sm}"),
        ("Registers per SM", f"{gpu.regs_per_sm:,}"),
        ("Shared memory per SM", f"{fmt_bytes(gpu.smem_per_sm_bytes)} (per block {fmt_bytes(gpu.smem_per_block_bytes)}, "
                                 f"opt-in {fmt_bytes(gpu.smem_per_block_optin_bytes)})"),
        ("Global memory", fmt_bytes(gpu.memory_bytes)),
        ("L2 cache", fmt_bytes(gpu.l2_bytes)),
        ("Peak DRAM bandwidth", f"{gpu.peak_dram_gbps:,.0f} GB/s"),
    ]


def geometry_rows(gpu: GpuSpec, geo) -> list[tuple[str, str, str]]:
    rows = [
        ("Elements", f"{geo.elements:,}", "the input"),
        ("Threads per block", f"{geo.threads_per_block:,}", "our choice"),
        ("Blocks in the grid", f"{geo.blocks:,}", f"ceiling of {geo.elements:,} / {geo.threads_per_block:,}"),
        ("Warps per block", f"{geo.warps_per_block}", f"ceiling of {geo.threads_per_block} / {gpu.warp_size}"),
        ("Warps in the grid", f"{geo.warps_in_grid:,}", f"{geo.blocks:,} x {geo.warps_per_block}"),
        ("Threads in the last block with no element", f"{geo.idle_threads_last_block:,}",
         f"{geo.blocks:,} x {geo.threads_per_block:,} - {geo.elements:,}"),
        ("Idle lanes in every block", f"{geo.idle_lanes_per_block}",
         f"{geo.warps_per_block} x {gpu.warp_size} - {geo.threads_per_block}"),
        ("Warp slots on the GPU", f"{geo.warp_slots_on_gpu:,}", f"{gpu.sm_count} SMs x {gpu.max_warps_per_sm}"),
        ("Waves, at best", f"{geo.waves_at_best:.1f}", f"{geo.warps_in_grid:,} / {geo.warp_slots_on_gpu:,}"),
    ]
    if geo.blocks_per_wave:
        rows.append(("Waves at this occupancy", f"{geo.waves_at_occupancy:.1f}",
                     f"{geo.blocks:,} / ({gpu.sm_count} SMs x {geo.blocks_per_sm} blocks)"))
    return rows


def occupancy_rows(occ) -> list[tuple[str, str, str]]:
    rows = []
    for name in LIMITERS:
        limit = occ.limits[name]
        shown = "no limit" if limit is None else f"{limit} blocks/SM"
        rows.append((name, shown, "<- binds" if name in occ.limited_by else ""))
    return rows


def explain_payload(gpu, occ, geo) -> dict:
    return {"device": gpu.to_dict(), "geometry": asdict(geo), "occupancy": asdict(occ)}


def cmd_explain(args) -> int:
    gpu, occ, geo = resolve_launch(args)
    if args.json:
        print(json.dumps(explain_payload(gpu, occ, geo), indent=2))
        return 0
    _print_table("Device", [(k, v, "") for k, v in device_rows(gpu)], align="<")
    launch = (f"Launch: {geo.elements:,} elements at {geo.threads_per_block} threads per block, "
              f"{occ.regs_per_thread} registers/thread, {occ.smem_per_block_bytes:,} B shared memory/block")
    _print_table(launch, geometry_rows(gpu, geo))
    _print_table("Occupancy (blocks per SM each limiter allows)", occupancy_rows(occ))
    print(f"  => {occ.explain()}")
    return 0


def cmd_simulate(args) -> int:
    gpu, occ, geo = resolve_launch(args)
    if not occ.can_launch:
        raise UserError(f"this launch cannot run on {gpu.name}: {occ.reason}")
    if args.trace:
        check_writable(args.trace)
        check_trace_size(geo.blocks)
    if args.cost == "uniform":
        if args.jitter and geo.blocks > MAX_JITTER_BLOCKS:
            raise UserError(f"with --jitter every block ends at its own time and is simulated one by one: "
                            f"at most {MAX_JITTER_BLOCKS:,} blocks, got {geo.blocks:,}")
        cost = UniformCost(args.duration_us, args.jitter)
        shortest = args.duration_us * (1 - args.jitter)
    else:
        cost = replace(MemoryBoundCost.for_launch(gpu, geo.elements, geo.threads_per_block,
                                                  args.bytes_per_element, args.overhead_us),
                       latency_us=args.latency_us)
        shortest = float(cost.durations(np.array([0, geo.blocks - 1]), 1).min())
    if not shortest >= MIN_BLOCK_US:  # zero-length blocks would all 'run' at once: nonsense waves
        raise UserError(f"blocks would take {shortest:.3g} us; a block must take at least {MIN_BLOCK_US} us "
                        "(raise --duration-us, or --bytes-per-element/--latency-us/--overhead-us)")
    placement = PLACEMENTS["SM order" if args.placement == "sm" else "TPC/GPC spread"]
    dispatch = args.sm_dispatch_us if args.cost == "memory" else 0.0
    with np.errstate(over="ignore", invalid="ignore"):  # huge durations: reported just below
        result = simulate(gpu, geo.blocks, occ, cost, placement, sm_dispatch_interval_us=dispatch)
    if not result.makespan_us < float("inf"):
        raise UserError("block durations this long overflow the simulation's clock; use smaller values")
    summary = result.summary()
    if args.cost == "memory" and args.bytes_per_element > 0:
        bytes_moved = geo.elements * args.bytes_per_element
        summary["predicted_gbps"] = round(H200_FIT.kernel_gbps(bytes_moved, result.makespan_us), 1)
    if args.trace:
        save_trace(args.trace, source="simulated", gpu=gpu.name, records=result.trace_records(),
                   meta={"elements": geo.elements, "threads_per_block": geo.threads_per_block,
                         "regs_per_thread": occ.regs_per_thread, "smem_per_block_bytes": occ.smem_per_block_bytes,
                         **summary})
    if args.json:
        print(json.dumps(summary, indent=2))
        return 0
    _print_table(f"Simulated {gpu.name}: {geo.blocks:,} blocks, {occ.blocks_per_sm} per SM "
                 f"({result.n_slots:,} block slots), {summary['cost']}, {summary['placement']}", [
        ("Waves", f"{result.waves}", f"{result.waves_fractional:.2f} grids' worth of block slots"),
        ("Makespan", f"{result.makespan_us:,.2f} us", "first block start to last block end"),
        ("Tail", f"{result.tail_fraction:.1%}", "share of the run below full residency"),
        *([("Predicted bandwidth", f"{summary['predicted_gbps']:,.0f} GB/s",
            f"bytes / (makespan + {H200_FIT.launch_overhead_us} us launch); model fitted on the H200")]
          if "predicted_gbps" in summary else []),
    ])
    if args.trace:
        print(f"  trace written to {args.trace}")
    return 0


def cmd_compare(args) -> int:
    from sim.compare import compare_trace, placement_from_trace
    from sim.devices import preset_for_device_name
    from sim.trace import load_trace

    trace = load_trace(args.trace_file)
    gpu = preset(args.gpu) if args.gpu else preset_for_device_name(trace.gpu)
    if gpu is None:
        raise UserError(f"the trace names {trace.gpu!r}, which is no preset; pass --gpu")
    if args.blocks_per_sm is not None and not 1 <= args.blocks_per_sm <= gpu.max_blocks_per_sm:
        raise UserError(f"--blocks-per-sm must be 1..{gpu.max_blocks_per_sm} on {gpu.name}, "
                        f"got {args.blocks_per_sm}")
    predicted = trace.meta.get("predicted")
    per_sm = args.blocks_per_sm or (predicted.get("blocks_per_sm") if isinstance(predicted, dict) else None)
    if not isinstance(per_sm, int) or not 1 <= per_sm <= gpu.max_blocks_per_sm:
        raise UserError("the trace does not say how many blocks fit on an SM; pass --blocks-per-sm")
    placement = {"recorded": placement_from_trace(trace), "sm": PLACEMENTS["SM order"],
                 "tpc": PLACEMENTS["TPC/GPC spread"]}[args.placement]
    comparison, _ = compare_trace(trace, gpu, int(per_sm), placement)
    if args.json:
        print(json.dumps(asdict(comparison), indent=2))
        return 0
    print(f"{args.trace_file}: recorded on {trace.gpu}, simulated on {gpu.name} ({placement.name})")
    for line in comparison.lines():
        print(f"  {line}")
    return 0


def _print_table(title: str, rows, align: str = ">") -> None:
    print(title)
    width = max(len(r[0]) for r in rows)
    vwidth = max(len(r[1]) for r in rows)
    for name, value, note in rows:
        print(f"  {name:<{width}}  {value:{align}{vwidth}}  {note}".rstrip())
    print()
