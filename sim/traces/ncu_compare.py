"""What Nsight Compute measured beside what WarpScope predicts for the same launch on the same GPU.

For each kernel of a report (sim/traces/ncu_report.py) the launch is taken as ncu saw it (grid,
block, registers, static + dynamic shared memory, the shared-memory carveout it ran with) and
put through the same rules `explain` uses (sim.rules.occupancy, sim.rules.geometry.waves_of). The
derived numbers must equal ncu's: each block limit, the limiter, the theoretical warps and
occupancy, the waves per SM. A difference is flagged in the row, never dropped. Where the report
holds the DRAM bytes and the Duration, the memory-bound launch model's time for those bytes stands
beside the measured one (a compute-bound kernel takes longer than that: the model's time is its
memory floor then).

The GPU: `--gpu`, else the device the report names (.ncu-rep), else the preset with the report's
compute capability and SM count (a CSV names only the device's index); where two presets share
both (the H100 SXM and the H200), the first is taken and a note says so: their occupancy rules and
SM counts are the same, their times are not.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from sim.inputs.errors import UserError
from sim.rules.devices import GpuSpec, preset, preset_for_device_name, presets
from sim.rules.geometry import launch_geometry, waves_of
from sim.rules.occupancy import LIMITERS, occupancy
from sim.traces.ncu_report import LIMIT_METRICS, NcuKernel, read_ncu

PCT_TOL = 0.005  # ncu prints occupancy and waves to 2 decimals
ROW_TITLES = {"registers": "Block limit: registers", "shared memory": "Block limit: shared memory",
              "warps": "Block limit: warps", "blocks": "Block limit: SM (blocks)",
              "barriers": "Block limit: barriers"}


@dataclass(frozen=True)
class Row:
    quantity: str
    ncu: str
    warpscope: str
    equal: bool | None  # None: not a derived number (an input, or measured only)


@dataclass(frozen=True)
class NcuComparison:
    kernel: NcuKernel
    gpu: str
    rows: tuple[Row, ...]
    notes: tuple[str, ...]
    predicted_us: float | None  # the model's GPU time (no launch overhead: ncu's Duration has none)

    @property
    def differences(self) -> list[Row]:
        return [r for r in self.rows if r.equal is False]

    def notes_text(self) -> list[str]:
        return [f"note: {n}" for n in self.notes]

    def must_equal(self, quantity: str) -> bool:
        return next(r.equal for r in self.rows if r.quantity == quantity)

    def as_dict(self) -> dict:
        k = asdict(self.kernel)
        return {"id": k["id"], "kernel": k["name"], "gpu": self.gpu, "ncu": k,
                "rows": [asdict(r) for r in self.rows], "differences": [r.quantity for r in self.differences],
                "predicted_us": self.predicted_us, "notes": list(self.notes)}


def gpu_for(kernel: NcuKernel, name: str | None = None,
            prefer: str | None = None) -> tuple[GpuSpec, str | None]:
    """(the preset, a note or None): `name`, else the report's device name, else its CC and SMs
    (of several such presets `prefer`, where it is one: the GPU the window shows)."""
    if name:
        return preset(name), None
    if kernel.device and not kernel.device.isdigit():
        found = preset_for_device_name(kernel.device, kernel.sm_count)
        if found is not None:
            return found, None
    same = [preset(p) for p in presets()
            if preset(p).cc_string == kernel.cc and preset(p).sm_count == kernel.sm_count]
    if not same:
        raise UserError(f"kernel {kernel.id}: no GPU preset has compute capability {kernel.cc or '?'} "
                        f"and {kernel.sm_count or '?'} SMs; pass --gpu NAME")
    note = None
    chosen = [g for g in same if g.name == prefer]
    if chosen and len(same) > 1:
        return chosen[0], (f"the report names no GPU: compute capability {kernel.cc} with "
                           f"{kernel.sm_count} SMs, as the {prefer} shown has")
    if len(same) > 1:
        note = (f"the report names no GPU: compute capability {kernel.cc} with {kernel.sm_count} SMs is "
                f"the {' or the '.join(g.name for g in same)}; predicted on the {same[0].name} "
                "(same occupancy rules; pass --gpu for its time)")
    return same[0], note


def _carveout(gpu: GpuSpec, k: NcuKernel) -> int | None:
    """The carveout preference (percent) under which the driver's rule picks the shared-memory
    configuration the launch ran with; None: the driver's default."""
    if k.smem_config is None:
        return None
    for pct in range(101):
        occ = occupancy(gpu, k.threads_per_block, k.regs_per_thread, k.smem_per_block, pct)
        if occ.smem_per_sm_config_bytes == k.smem_config:
            return pct
    return None


def compare_kernel(k: NcuKernel, gpu_name: str | None = None, prefer: str | None = None) -> NcuComparison:
    gpu, note = gpu_for(k, gpu_name, prefer)
    notes = [note] if note else []
    carveout = _carveout(gpu, k)
    try:
        occ = occupancy(gpu, k.threads_per_block, k.regs_per_thread, k.smem_per_block, carveout)
    except ValueError as exc:
        raise UserError(f"kernel {k.id}: {exc}") from None
    if k.smem_config is not None and carveout is None:
        notes.append(f"no carveout of the {gpu.name} gives ncu's {k.smem_config:,} B configuration: "
                     "the driver's default taken")
    if k.sm_count and k.sm_count != gpu.sm_count:
        notes.append(f"ncu's GPU has {k.sm_count} SMs, the {gpu.name} preset {gpu.sm_count}: waves differ")
    rows = [Row("Grid", f"{k.grid} = {k.grid_blocks:,} blocks", "from the report", None),
            Row("Block", f"{k.block} = {k.threads_per_block:,} threads", "from the report", None),
            Row("Registers per thread", f"{k.regs_per_thread}", "from the report", None),
            Row("Shared memory per block", f"{k.smem_static:,} + {k.smem_dynamic:,} B + {k.smem_driver:,} B "
                "driver", f"{k.smem_per_block:,} B + {gpu.smem_reserved_per_block_bytes:,} B driver",
                k.smem_driver == gpu.smem_reserved_per_block_bytes),
            Row("Shared memory configuration", _bytes(k.smem_config), f"{occ.smem_per_sm_config_bytes:,} B",
                None if k.smem_config is None else k.smem_config == occ.smem_per_sm_config_bytes)]
    rows += _limit_rows(k, occ)
    blocks_per_wave = occ.blocks_per_sm * gpu.sm_count
    waves = waves_of(k.grid_blocks, blocks_per_wave)
    rows += [Row("Theoretical warps per SM", _num(k.theoretical_warps), f"{occ.active_warps_per_sm}",
                 None if k.theoretical_warps is None else abs(k.theoretical_warps - occ.active_warps_per_sm) < PCT_TOL),
             Row("Theoretical occupancy", f"{k.theoretical_occupancy_pct:.2f} %", f"{occ.occupancy * 100:.2f} %",
                 abs(k.theoretical_occupancy_pct - occ.occupancy * 100) <= PCT_TOL + 1e-9),
             Row("Waves per SM", f"{k.waves_per_sm:.2f}", f"{waves:.2f}",
                 abs(k.waves_per_sm - waves) <= PCT_TOL + 1e-9)]
    predicted, time_rows = _time_rows(k, gpu, occ, notes)
    return NcuComparison(k, gpu.name, tuple(rows + time_rows), tuple(notes), predicted)


def _limit_rows(k: NcuKernel, occ) -> list[Row]:
    rows = []
    for name in (*LIMITERS, "barriers"):
        ncu = k.limits[name]
        if name == "barriers":  # not a WarpScope limiter: equal only in not binding
            binds = ncu < min(k.limits[n] for n in LIMITERS)
            rows.append(Row(ROW_TITLES[name], f"{ncu}", "not modelled", False if binds else None))
            continue
        ours = occ.limits[name]
        shown = "no limit" if ours is None else f"{ours}"
        rows.append(Row(ROW_TITLES[name], f"{ncu}", shown, ours == ncu))
    low = min(k.limits.values())
    ncu_by = {n for n, v in k.limits.items() if v == low}
    rows.append(Row("Limited by", ", ".join(sorted(ncu_by)), ", ".join(sorted(occ.limited_by)),
                    ncu_by == set(occ.limited_by)))
    return rows


def _time_rows(k: NcuKernel, gpu: GpuSpec, occ, notes: list) -> tuple[float | None, list[Row]]:
    rows = [Row("Achieved occupancy", "-" if k.achieved_occupancy_pct is None
                else f"{k.achieved_occupancy_pct:.2f} %", "measured only", None)]
    if not occ.can_launch:
        return None, rows
    if not k.dram_bytes:
        notes.append("no DRAM bytes in the report: no time predicted (record with --metrics "
                     "dram__bytes_read.sum,dram__bytes_write.sum)")
        rows.append(Row("Duration", _us(k.duration_us), "-", None))
        return None, rows
    from sim.model.launch_model import predict_geometry

    geo = launch_geometry(gpu, k.grid_blocks * k.threads_per_block, k.threads_per_block, occ,
                          blocks=k.grid_blocks)
    p = predict_geometry(gpu, occ, geo, bytes_moved=k.dram_bytes, mode="memory")
    rows.append(Row("DRAM bytes", f"{k.dram_bytes:,.0f} B", "the model's input", None))
    ratio = f" ({p.makespan_us / k.duration_us - 1:+.0%})" if k.duration_us else ""
    rows.append(Row("Duration", _us(k.duration_us), f"{p.makespan_us:,.2f} us{ratio}", None))
    notes.append("time: the memory-bound model for ncu's DRAM bytes, without the launch overhead "
                 f"({p.launch_overhead_us:.1f} us) ncu's Duration leaves out; a compute-bound kernel runs longer")
    return p.makespan_us, rows


def _num(v) -> str:
    return "-" if v is None else f"{v:g}"


def _bytes(v) -> str:
    return "-" if v is None else f"{v:,} B"


def _us(v) -> str:
    return "-" if v is None else f"{v:,.2f} us"


def compare_report(path, gpu_name: str | None = None, prefer: str | None = None) -> list[NcuComparison]:
    return [compare_kernel(k, gpu_name, prefer) for k in read_ncu(path)]


def report_lines(path, comparisons: list[NcuComparison]) -> list[str]:
    """What `compare --ncu` prints: per kernel its rows, differences flagged."""
    lines = []
    for c in comparisons:
        k = c.kernel
        lines.append(f"Kernel {k.id}: {k.name[:100]} (ncu; WarpScope on the {c.gpu})")
        wq = max(len(r.quantity) for r in c.rows)
        wn = max(len(r.ncu) for r in c.rows)
        ww = max(len(r.warpscope) for r in c.rows)
        lines.append(f"  {'':<{wq}}  {'Nsight Compute':<{wn}}  {'WarpScope':<{ww}}")
        for r in c.rows:
            flag = {True: "equal", False: "DIFFERS", None: ""}[r.equal]
            lines.append(f"  {r.quantity:<{wq}}  {r.ncu:<{wn}}  {r.warpscope:<{ww}}  {flag}".rstrip())
        lines += [f"  {n}" for n in c.notes_text()] + [""]
    same = sum(1 for c in comparisons if c.must_equal("Theoretical occupancy") and c.must_equal("Waves per SM"))
    differ = sum(1 for c in comparisons if c.differences)
    lines.append(f"{path}: theoretical occupancy and waves equal ncu's for {same} of {len(comparisons)} "
                 f"kernel{'s' if len(comparisons) != 1 else ''}; {differ} with a difference flagged")
    return lines


def add_ncu_argument(parser) -> None:
    from sim.inputs.args import arg_path

    parser.add_argument("--ncu", metavar="REPORT.csv", type=arg_path("--ncu report"),
                        help="instead of a trace: an Nsight Compute report (the CSV of ncu --csv --page "
                             "details, or a .ncu-rep); each kernel's occupancy and waves beside WarpScope's")


def cmd_ncu(args) -> int:
    """`compare --ncu REPORT`: every kernel's rows (with --json one object per kernel)."""
    import json

    if (args.ncu is None) == (args.trace_file is None):
        raise UserError("compare needs one of TRACE.json or --ncu REPORT.csv")
    if getattr(args, "perfetto", None):
        raise UserError("an Nsight Compute report holds no per-block schedule: --perfetto needs a TRACE")
    comparisons = compare_report(args.ncu, args.gpu)
    if args.json:
        print(json.dumps([c.as_dict() for c in comparisons], indent=2))
    else:
        print("\n".join(report_lines(args.ncu, comparisons)))
    return 0
