"""`explain` and `compare`: the scheduling model from the command line (`simulate`:
sim/simulate_cli.py, which shares this module's launch options)."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, replace

from sim.model.advice import launch_findings
from sim.rules.devices import GpuSpec, preset, presets
from sim.inputs.errors import UserError
from sim.model.confidence import prediction_confidence
from sim.inputs.files import check_writable
from sim.inputs.defaults import DEFAULT_ELEMENTS, DEFAULT_GPU, DEFAULT_SIDE, DEFAULT_THREADS, launch_elements
from sim.rules.geometry import geometry_facts, launch_geometry, problem_text
from sim.inputs.args import (BlockAction, add_shape_arguments, arg_block, arg_bytes, arg_count, capped_regs,
                             launch_dims)
from sim.rules.clusters import cluster_occupancy, cluster_rows
from sim.rules.occupancy import occupancy
from sim.rules.occupancy_working import working
from sim.schedule.achieved import ncu_rows, of_simulation
from sim.schedule.policies import COST_MODELS, PLACEMENTS, SCHEDULES, placement_id, schedule_id
from sim.model.launch_model import default_mode, predict_geometry
from sim.traces.ncu_compare import add_ncu_argument, cmd_ncu
from sim.traces.perfetto import add_perfetto_argument, written_line
from sim.inputs.units import fmt_bytes

SEED = arg_count("--seed", 0, 2**32 - 1)  # numpy seeds are non-negative; 2^32 draws apart is plenty


def add_launch_arguments(parser, *, gpu_default: str | None = DEFAULT_GPU) -> None:
    """The launch options shared by every command that describes one launch."""
    parser.add_argument("--gpu", default=gpu_default, metavar="NAME",
                        help=f"GPU preset, case-insensitive: {', '.join(presets())}")
    parser.add_argument("--elements", type=arg_count("element count"), default=None,
                        metavar="N", help="elements to process, one per thread (1000000, 1e6, 2^20, "
                        f"4M; default {DEFAULT_ELEMENTS:,}, or a matmul --kernel's side {DEFAULT_SIDE})")
    parser.add_argument("--block", type=arg_block, action=BlockAction, default=None,
                        metavar="THREADS", help="threads per block, 1..1024 (multiples of 32 avoid idle "
                        "lanes; default 256), or a 2D/3D block: 16x16, 32x8x2 (x fastest); with "
                        "--kernel, its block parameter (Triton: BLOCK_SIZE)")
    add_shape_arguments(parser)  # --grid, --cluster, --max-registers
    parser.add_argument("--regs", type=arg_count("registers"), default=None, metavar="N",
                        help="registers per thread the compiled kernel uses (default 0: not limiting)")
    parser.add_argument("--smem", type=arg_bytes("shared memory"), default=None,
                        metavar="BYTES", help="shared memory per block, static + dynamic (49152, 48K)")
    parser.add_argument("--carveout", type=arg_count("carveout", 0, 100), default=None, metavar="PERCENT",
                        help="preferred shared-memory carveout, 0..100 %% of the SM's maximum "
                             "(default: the driver's choice)")


def register(subparsers) -> None:
    from sim.model import run_diff

    run_diff.register(subparsers)  # `diff A B`: two runs as one story
    p = subparsers.add_parser("explain", help="device, grid geometry and occupancy of one launch",
                              description="Print the device table, the launch geometry (blocks, warps, "
                                          "idle threads, warp slots, waves) and the occupancy with its limiter.")
    add_launch_arguments(p)
    p.add_argument("--json", action="store_true", help="print one JSON object instead of tables")
    p.set_defaults(handler=cmd_explain)

    from sim.simulate_cli import add_simulate_parser

    add_simulate_parser(subparsers)

    p = subparsers.add_parser("compare", help="lay a recorded block trace beside its simulation",
                              description="Predict the launch a trace recorded on a real GPU (python main.py "
                                          "trace, benchmarks/matmul_run.py, or Triton Proton's per-program "
                                          "timeline) from its launch alone, with the model its meta calls for "
                                          "(equal blocks, memory-bound, compute-bound), and score the prediction: "
                                          "makespan, peak blocks per SM, residency error.")
    p.add_argument("trace_file", metavar="TRACE.json", nargs="?",
                   help="a warpscope-trace/1 file, a Triton Proton timeline (NAME.chrome_trace), "
                        "or a trace bundle's folder (e.g. tests/data/h200_memory_kernels_fit)")
    p.add_argument("trace_name", metavar="NAME", nargs="?",
                   help="the bundle's trace to compare (without it, the bundle's traces are listed)")
    add_ncu_argument(p)
    p.add_argument("--gpu", metavar="NAME", help="GPU preset (default: the one the trace names)")
    p.add_argument("--blocks-per-sm", type=arg_count("--blocks-per-sm"), metavar="N",
                   help="block slots per SM (default: the occupancy predicted when recording)")
    p.add_argument("--placement", type=_policy_type(placement_id), choices=list(PLACEMENTS),
                   default="tpc-spread",
                   help="simulated placement: 'tpc-spread' (default, or 'tpc'), 'sm-order' (or "
                        "'sm'), or 'recorded': the SM order the hardware used (read off the trace, "
                        "so no longer a prediction)")
    add_schedule_arguments(p, flag="--mode")
    p.add_argument("--seed", type=SEED, default=0, help="the calibrated schedule's random draws")
    add_perfetto_argument(p)
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(handler=cmd_compare)


def add_schedule_arguments(parser, flag: str = "--schedule") -> None:
    parser.add_argument(flag, dest="schedule", type=_policy_type(schedule_id),
                        choices=list(SCHEDULES), default="calibrated",
                        help="'calibrated' (default): the GPU's dispatch model, measured on the GPU "
                             "(main.py calibrate) or assumed from the H200; 'ideal': the textbook, "
                             "a block starts the moment a slot frees")


def _policy_type(resolve):
    """An argparse `type` that turns an old spelling ('sm', 'memory-bound') into the policy's id;
    an unknown name stays as typed so argparse lists the choices."""
    def parse(text):
        try:
            return resolve(text)
        except UserError:
            return text
    return parse


@dataclass(frozen=True, slots=True)
class CompiledFacts:
    """What the kernel's compiler said about it for the chosen GPU (kernels/offline_compile/resources.py)."""
    compiler: str  # "triton 3.7.1"
    ptxas: str
    target: str  # "sm_80"
    regs_per_thread: int
    smem_per_block: int  # static + dynamic, as the driver counts it
    stack_bytes: int  # per thread: spills and local arrays
    elements: int  # the size it was compiled for


@dataclass(frozen=True, slots=True)
class KernelLaunch:
    """A named kernel's launch, as the kernels layer resolves `--kernel` for these commands
    (sim cannot import kernels: the hook `args.kernel_launch(args, gpu)` fills this in)."""
    name: str
    blocks: int  # from the kernel's own grid rule
    threads_per_block: int
    elements_per_block: int | None
    bytes_moved: int | None  # one call's DRAM traffic
    regs_per_thread: int | None  # from the compiler, when it could say
    smem_per_block: int | None
    note: str  # where the numbers come from, for the printout
    compiled: CompiledFacts | None = None
    sizes: dict | None = None  # the kernel's named sizes (a matmul's M, N, K)
    declaration: object = None  # the kernel's declaration (kernels.declare.spec.KernelSpec), for its work
    block_params: dict | None = None  # the block parameters launched (BLOCK_SIZE, num_warps, ...)
    choice: object | None = None  # matmul_auto: sim.model.matmul_choice.MatmulChoice, what and why
    chain: dict | None = None  # its declared chain: passes, reductions, tile, loads (sim.model.chain)

    @property
    def loads(self) -> int:
        """Input arrays each thread loads: the declaration's count of inputs, else the add's."""
        from sim.model.latency import DEFAULT_LOADS

        return getattr(self.declaration, "arity", None) or DEFAULT_LOADS


def resolve_launch(args):
    """(gpu, occupancy, geometry, kernel launch or None) for parsed launch arguments; UserError
    on nonsense."""
    gpu = preset(args.gpu)
    args.elements = launch_elements(args)
    if args.elements < 1:
        raise UserError(f"element count must be at least 1, got {args.elements:,}")
    hook = getattr(args, "kernel_launch", None)
    kernel = hook(args, gpu) if hook is not None else None
    threads = kernel.threads_per_block if kernel else (DEFAULT_THREADS if args.block is None else args.block)
    if threads < 1 or threads > gpu.max_threads_per_block:
        raise UserError(f"block size must be 1..{gpu.max_threads_per_block} threads on {gpu.name}, "
                        f"got {threads}")
    regs = capped_regs(args, args.regs if args.regs is not None else
                       (kernel.regs_per_thread if kernel else 0) or 0, kernel)
    smem = args.smem if args.smem is not None else (kernel.smem_per_block if kernel else 0) or 0
    try:
        dims, grid, cluster = launch_dims(args, kernel, threads, gpu)
        occ = occupancy(gpu, threads, regs, smem, args.carveout)
        geo = launch_geometry(gpu, args.elements, threads, occ,
                              blocks=kernel.blocks if kernel else None,
                              elements_per_block=kernel.elements_per_block if kernel else None,
                              sizes=kernel.sizes if kernel else None, block_dims=dims.tuple,
                              grid_dims=grid.tuple if grid else None, cluster_size=cluster)
    except ValueError as exc:
        raise UserError(str(exc)) from None
    return gpu, occ, geo, kernel


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
    return [(f.label, f.value, f.how) for f in geometry_facts(gpu, geo)]


def compiled_rows(c: CompiledFacts, occ) -> list[tuple[str, str, str]]:
    used = ("used below" if (occ.regs_per_thread, occ.smem_per_block_bytes)
            == (c.regs_per_thread, c.smem_per_block) else "--regs/--smem given: not used below")
    spills = ("", "none") if not c.stack_bytes else (
        "WARNING: local memory, slower than the registers suggest", f"{c.stack_bytes:,} B/thread")
    return [("Registers per thread", f"{c.regs_per_thread}", used),
            ("Shared memory per block", fmt_bytes(c.smem_per_block), "static + dynamic"),
            ("Spills (stack)", spills[1], spills[0]),
            ("Compiler", c.compiler, f"ptxas {c.ptxas}")]


def explain_payload(gpu, occ, geo, kernel=None) -> dict:
    payload = {"device": gpu.to_dict(), "geometry": asdict(geo), "occupancy": asdict(occ),
               "occupancy_working": working(gpu, occ).to_dict(), "achieved": None,
               "findings": [asdict(f) for f in _findings(gpu, occ, geo, kernel)],
               "next_steps": [{"lever": st.lever, "setting": st.setting, "change": st.change,
                               "gains": st.gains, "time_us": st.before.time_us,
                               "after_time_us": st.after.time_us,
                               "measurable": st.measurable}
                              for st in _next_steps(gpu, occ, geo, kernel)]}
    if geo.cluster_size > 1 and occ.can_launch:
        cocc = cluster_occupancy(gpu, occ.blocks_per_sm, geo.cluster_size)
        payload["clusters"] = {**asdict(cocc), "max_active_clusters": cocc.max_active_clusters}
    prediction = launch_prediction(gpu, occ, geo, kernel)
    if prediction is not None:
        payload.update(prediction.summary())
        payload["achieved"] = of_simulation(prediction.simulation, occ).to_dict()
        payload["confidence"] = prediction_confidence(gpu, prediction).to_dict()
    if kernel is not None:
        payload["kernel"] = asdict(replace(kernel, declaration=None))
        del payload["kernel"]["declaration"]
    return payload


def cmd_explain(args) -> int:
    gpu, occ, geo, kernel = resolve_launch(args)
    if args.json:
        print(json.dumps(explain_payload(gpu, occ, geo, kernel), indent=2))
        return 0
    _print_table("Device", [(k, v, "") for k, v in device_rows(gpu)], align="<")
    who = f"{kernel.name}: " if kernel else ""
    launch = (f"Launch: {who}{problem_text(geo)} at {geo.threads_per_block} threads per block, "
              f"{occ.regs_per_thread} registers/thread, {occ.smem_per_block_bytes:,} B shared memory/block")
    if kernel is not None and kernel.note:
        launch += f"\n  ({kernel.note})"
    if kernel is not None and kernel.compiled is not None:
        _print_table(f"Compiled for {gpu.name} ({kernel.compiled.target}), without the GPU",
                     compiled_rows(kernel.compiled, occ), align="<")
    if kernel is not None and kernel.choice is not None:
        print_choice(kernel.choice)
    _print_table(launch, geometry_rows(gpu, geo))
    work = working(gpu, occ)
    print("Occupancy, worked: the blocks per SM each limiter allows (Nsight Compute's names)")
    print("\n".join(f"  {line}" for line in work.lines()))
    print(f"  => {occ.explain()} (theoretical: what the limits allow)\n")
    if geo.cluster_size > 1 and occ.can_launch:
        _print_table("Clusters (each one's blocks on one GPC)",
                     cluster_rows(cluster_occupancy(gpu, occ.blocks_per_sm, geo.cluster_size)), align="<")
    prediction = launch_prediction(gpu, occ, geo, kernel)
    achieved = of_simulation(prediction.simulation, occ) if prediction is not None else None
    _print_table("As Nsight Compute's Occupancy section puts it (achieved: the simulated schedule)",
                 ncu_rows(work, achieved))
    if prediction is not None:
        _print_table(f"Predicted (sim/model/launch_model.py, {COST_MODELS[prediction.mode].title}; "
                     "constants from resources/physics)", prediction_rows(prediction, gpu))
    print_findings(_findings(gpu, occ, geo, kernel))
    print_next_steps(_next_steps(gpu, occ, geo, kernel))
    return 0


def kernel_work(gpu, occ, geo, kernel):
    """What each block of a named kernel does (sim.model.throughput.LaunchWork), or None."""
    if kernel is None or kernel.declaration is None or not occ.can_launch:
        return None
    from sim.model.throughput import launch_work

    sizes = kernel.sizes if kernel.sizes and set(kernel.sizes) != {"n"} else None
    return launch_work(kernel.declaration, geo.elements, kernel.block_params or {}, gpu,
                       occ.blocks_per_sm, geo.blocks, sizes)


def launch_prediction(gpu, occ, geo, kernel=None):
    """The launch model's answer for the launch in its kernel's mode (sim.model.launch_model.
    default_mode: a tiled matmul compute-bound, the rest memory-bound); None: it cannot run."""
    if not occ.can_launch:
        return None
    return predict_geometry(gpu, occ, geo, bytes_moved=kernel.bytes_moved if kernel else None,
                            work=kernel_work(gpu, occ, geo, kernel), **_loads(kernel),
                            chain=_resolved(kernel, geo))


def _resolved(kernel, geo) -> dict | None:
    """The kernel's declared chain with its tile's steps per sweep for this launch (as compare
    resolves a trace's), None without a kernel."""
    if kernel is None or kernel.chain is None:
        return None
    from sim.model.chain import resolved_chain

    return resolved_chain(kernel.chain, kernel.block_params, geo.elements_per_block or 0)


def prediction_rows(p, gpu) -> list[tuple[str, str, str]]:
    parts = " + ".join(f"{v:,.2f}" for v in p.parts().values())
    rows = [("Whole launch", f"{p.whole_launch_us:,.2f} us",
             f"= {parts}: launch overhead + fill + full waves + tail"),
            ("Bandwidth", f"{p.bandwidth_gbps:,.0f} GB/s",
             f"{p.bytes_moved:,.0f} B / whole launch; {p.bandwidth_gbps / p.ceiling_gbps:.0%} of "
             f"the {p.ceiling_gbps:,.0f} GB/s ceiling a full GPU reaches"), *p.speed_of_light().rows(),
            ("Bound by", p.bound, f"tail {p.tail_fraction:.0%} of the schedule"),
            ("Confidence", prediction_confidence(gpu, p).short,
             "the weakest of the per-GPU constants it used:")]
    return rows + [(f"  {k}", "", v) for k, v in p.sources.items()]


def print_choice(choice) -> None:
    """matmul_auto: every candidate's tiles, waves and predicted time, and what was chosen."""
    print(f"matmul_auto on {choice.gpu}, M={choice.dims['M']:,} N={choice.dims['N']:,} "
          f"K={choice.dims['K']:,} ({choice.dtype}): its candidates by predicted time")
    rows = [("candidate", "tiles", "waves", "us", "TFLOP/s"), *choice.rows()]
    widths = [max(len(r[i]) for r in rows) for i in range(5)]
    for r in rows:
        print("  " + f"{r[0]:<{widths[0]}}" + "".join(f"  {v:>{w}}" for v, w in zip(r[1:], widths[1:])))
    print(f"  => chose {choice.why()}")
    for line in choice.skipped:
        print(f"  (not a candidate here: {line})")


def _findings(gpu, occ, geo, kernel):

    memory = default_mode(kernel.declaration if kernel else None) == "memory"
    return launch_findings(gpu, occ, geo, bytes_moved=kernel.bytes_moved if kernel else None,
                           memory_bound=memory, **_loads(kernel))


def _loads(kernel) -> dict:
    """The kernel's input arrays for the memory-bound model (none named: its default)."""
    return {"loads": kernel.loads} if kernel is not None else {}


def _next_steps(gpu, occ, geo, kernel):
    """The next step of a memory-bound launch (sim.model.next_step); a matrix product has matmul_auto."""
    from sim.model.next_step import next_steps
    from sim.model.what_if import from_geometry

    if not occ.can_launch or geo.sizes:
        return []
    return next_steps(gpu, from_geometry(occ, geo, kernel.bytes_moved if kernel else None))


def print_next_steps(steps) -> None:
    if not steps:
        return
    print("\nNext step: the smallest change per lever that gains a block per SM or a wave "
          "(time: the memory-bound model)")
    for st in steps:
        print(f"  - {st.line()}")


def print_findings(found) -> None:
    print("\nFindings, biggest waste first" if found else "\nFindings: nothing to fix in this launch")
    for i, f in enumerate(found, 1):
        print(f"  {i}. {f.title}\n     {f.detail}\n     Try: {f.action}")


def cmd_compare(args) -> int:
    from sim.traces.compare import compare_trace
    from sim.traces.trace_bundle import is_bundle, read_recorded

    if args.ncu is not None or args.trace_file is None:
        return cmd_ncu(args)  # an Nsight Compute report instead of a trace
    if args.perfetto:
        check_writable(args.perfetto, "--perfetto file")
    if args.trace_name is None and is_bundle(args.trace_file):
        return _list_bundle(args.trace_file, args.json)
    trace = read_recorded(args.trace_file, args.trace_name)
    comparison = compare_trace(trace, preset(args.gpu) if args.gpu else None, args.blocks_per_sm,
                               mode=args.schedule, placement=args.placement, seed=args.seed)
    wrote = args.perfetto and written_line(args.perfetto, {"predicted": comparison.simulated,
                                                           "recorded": comparison.recorded}, {"gpu": comparison.gpu})
    if args.json:
        print(json.dumps(comparison.as_dict(), indent=2))
        return 0
    where = args.trace_file + (f" {args.trace_name}" if args.trace_name else "")
    print(f"{where}: recorded on {trace.gpu}, predicted from its launch on "
          f"{comparison.gpu} ({PLACEMENTS[args.placement].title})")
    for note in comparison.notes:
        print(f"  note: {note}")
    for line in comparison.lines():
        print(f"  {line}")
    if wrote:
        print(wrote)
    return 0


def _list_bundle(folder: str, as_json: bool) -> int:
    """`compare BUNDLE` without a NAME: the bundle's traces, one a line, and how to pick one."""
    from sim.traces.trace_bundle import listing, read_index

    index = read_index(folder)
    if as_json:
        print(json.dumps({"bundle": folder, "traces": [e["name"] for e in index["traces"]],
                          "failed": [e["name"] for e in index["failed"]]}, indent=2))
        return 0
    print(f"{folder} is a trace bundle of {len(index['traces'])} traces:")
    print("\n".join(f"  {line}" for line in listing(index)))
    print(f"compare one with: python main.py compare {folder} NAME")
    return 0


def _print_table(title: str, rows, align: str = ">") -> None:
    print(title)
    width = max(len(r[0]) for r in rows)
    vwidth = max(len(r[1]) for r in rows)
    for name, value, note in rows:
        print(f"  {name:<{width}}  {value:{align}{vwidth}}  {note}".rstrip())
    print()
