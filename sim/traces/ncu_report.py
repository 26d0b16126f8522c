"""Nsight Compute reports in: each kernel's launch statistics and occupancy, as ncu measured them.

Two forms:
- the CSV `ncu --csv --page details` writes (shared/reference/ncu/ holds a real one; tests/data/ncu/
  the tests' copies): one row per metric of each kernel, columns "ID", "Kernel Name", "Block Size",
  "Grid Size", "Device", "CC", "Section Name", "Metric Name", "Metric Unit", "Metric Value" (rule
  rows leave the metric empty). Values carry thousands separators ("16,384"); times and bytes come
  in the unit the row names ("usecond", "Mbyte"). ncu's own lines (==PROF==, ==WARNING==) and
  anything before the header are skipped.
- a `.ncu-rep` file, through NVIDIA's `ncu_report` Python module (shipped with Nsight Compute, in
  its extras/python folder), imported only when such a file is opened.

The sections read: LaunchStats (grid, block, registers, shared memory, waves per SM), Occupancy
(block limits, theoretical and achieved occupancy), and where recorded SpeedOfLight's Duration
and the DRAM bytes (`--metrics dram__bytes_read.sum,dram__bytes_write.sum`). Every damaged file is
one UserError line.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass, field
from pathlib import Path

from sim.inputs.errors import UserError
from sim.inputs.files import read_user_bytes

MAX_BYTES = 64 * 2**20  # a details page of thousands of kernels; ~25 kB a kernel
COLUMNS = ("ID", "Kernel Name", "Block Size", "Grid Size", "Section Name", "Metric Name",
           "Metric Unit", "Metric Value")
# ncu's occupancy limiters, by WarpScope's names (sim.rules.occupancy.LIMITERS); barriers: ncu only
LIMIT_METRICS = {"registers": "Block Limit Registers", "shared memory": "Block Limit Shared Mem",
                 "warps": "Block Limit Warps", "blocks": "Block Limit SM",
                 "barriers": "Block Limit Barriers"}
NEEDED = ("Registers Per Thread", "Theoretical Occupancy", "Waves Per SM", *LIMIT_METRICS.values())
# ncu's unit names (with --print-units base: nsecond, byte), and their short forms
TIME_US = {"nsecond": 1e-3, "usecond": 1.0, "msecond": 1e3, "second": 1e6,
           "ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6}
BYTES = {"byte": 1, "Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9, "Tbyte": 1e12, "Kibyte": 2**10,
         "Mibyte": 2**20, "Gibyte": 2**30, "B": 1, "KB": 1e3, "MB": 1e6, "GB": 1e9}
RECORD_HINT = "ncu --csv --page details --section LaunchStats --section Occupancy"


@dataclass(frozen=True)
class NcuKernel:
    """One profiled kernel launch as ncu reported it (None: not in the report)."""
    id: str
    name: str
    device: str  # the device's name where the report says it, else its index ("0")
    cc: str  # "9.0"
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    regs_per_thread: int
    smem_static: int
    smem_dynamic: int
    smem_driver: int  # the driver's own reserve per block
    smem_config: int | None  # the shared-memory carveout the launch ran with, bytes per SM
    sm_count: int | None
    waves_per_sm: float
    limits: dict = field(hash=False)  # LIMIT_METRICS key -> blocks per SM
    theoretical_occupancy_pct: float
    theoretical_warps: float | None
    achieved_occupancy_pct: float | None
    achieved_warps: float | None
    duration_us: float | None
    dram_bytes: float | None
    cluster_size: int = 0

    @property
    def grid_blocks(self) -> int:
        return self.grid[0] * self.grid[1] * self.grid[2]

    @property
    def threads_per_block(self) -> int:
        return self.block[0] * self.block[1] * self.block[2]

    @property
    def smem_per_block(self) -> int:
        """Static + dynamic: what a launch asks for (the driver's reserve comes on top)."""
        return self.smem_static + self.smem_dynamic


def read_ncu(path) -> list[NcuKernel]:
    """Every kernel of an Nsight Compute report: a details-page CSV or a .ncu-rep file."""
    if str(path).lower().endswith(".ncu-rep"):
        return read_ncu_rep(path)
    return read_ncu_csv(path)


def read_ncu_csv(path) -> list[NcuKernel]:
    data = read_user_bytes(path, "Nsight Compute report", MAX_BYTES)
    name = Path(path).name
    if not data.strip():
        raise UserError(f"{name} is empty: no Nsight Compute report (record one with {RECORD_HINT})")
    if b"\0" in data[:4096]:
        raise UserError(f"{name} is a binary file, not the CSV of {RECORD_HINT} "
                        "(a .ncu-rep report must end in .ncu-rep)")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise UserError(f"{name} is not UTF-8 text: not an Nsight Compute CSV") from None
    rows = _metric_rows(text, name)
    kernels: dict[str, dict] = {}
    for row in rows:
        kernels.setdefault(row["ID"], {"row": row, "metrics": {}})["metrics"].setdefault(
            row["Metric Name"], (row["Metric Unit"], row["Metric Value"]))
    if not kernels:
        raise UserError(f"{name} holds no kernel's metrics (record it with {RECORD_HINT})")
    return [_kernel(k["row"], k["metrics"], name) for k in kernels.values()]


def _metric_rows(text: str, name: str) -> list[dict]:
    # ncu's own messages (==PROF==, ==WARNING==) share its --log-file with the table
    lines = [line for line in text.splitlines(keepends=True) if not line.startswith("==")]
    start = next((i for i, line in enumerate(lines) if line.startswith('"ID",')), None)
    if start is None:
        raise UserError(f"{name} is not an Nsight Compute details CSV: no \"ID\",\"Process ID\",... "
                        f"header (record it with {RECORD_HINT})")
    try:
        table = list(csv.reader(io.StringIO("".join(lines[start:])), strict=True))
    except csv.Error as exc:
        raise UserError(f"{name} is damaged: {exc}") from None
    header = table[0]
    missing = [c for c in COLUMNS if c not in header]
    if missing:
        raise UserError(f"{name} lacks the column{'s' if len(missing) > 1 else ''} "
                        f"{', '.join(missing)}: not the details page ({RECORD_HINT})")
    out = []
    need = max(header.index(c) for c in COLUMNS) + 1  # a metric's row stops after its value
    for i, values in enumerate(table[1:], start + 2):
        if not values:
            continue
        if not need <= len(values) <= len(header):
            raise UserError(f"{name} is truncated or damaged: line {i} has {len(values)} fields, "
                            f"the header {len(header)}")
        row = dict(zip(header, values + [""] * (len(header) - len(values))))
        if row["Metric Name"]:
            out.append(row)
    return out


def _number(text: str, what: str, where: str) -> float:
    try:
        return float(text.replace(",", ""))
    except ValueError:
        raise UserError(f"{where}: {what} is {text[:40]!r}, not a number") from None


def _dims(text: str, what: str, where: str) -> tuple[int, int, int]:
    parts = re.findall(r"\d+", text or "")
    if not 1 <= len(parts) <= 3:
        raise UserError(f"{where}: {what} {text[:40]!r} is not (x, y, z)")
    dims = tuple(int(p) for p in parts) + (1,) * (3 - len(parts))
    if min(dims) < 1:
        raise UserError(f"{where}: {what} {text[:40]!r} has a zero dimension")
    return dims


def _kernel(row: dict, metrics: dict, name: str) -> NcuKernel:
    where = f"{name}, kernel {row['ID']} ({row['Kernel Name'][:40]})"
    lacking = [m for m in NEEDED if m not in metrics]
    if lacking:
        raise UserError(f"{where} lacks {', '.join(lacking[:3])}{', ...' if len(lacking) > 3 else ''} "
                        f"(truncated, or not recorded with {RECORD_HINT})")

    def value(metric, default=None):
        if metric not in metrics:
            return default
        return _number(metrics[metric][1], metric, where)

    def scaled(metric, units):
        if metric not in metrics:
            return None
        unit, text = metrics[metric]
        if unit not in units:
            raise UserError(f"{where}: {metric} in {unit!r}, not one of {', '.join(units)}")
        return _number(text, metric, where) * units[unit]

    reads, writes = scaled("dram__bytes_read.sum", BYTES), scaled("dram__bytes_write.sum", BYTES)
    dram = scaled("dram__bytes.sum", BYTES)
    if reads is not None and writes is not None:
        dram = reads + writes
    return NcuKernel(
        id=row["ID"], name=row["Kernel Name"], device=row.get("Device", ""), cc=row.get("CC", ""),
        grid=_dims(row["Grid Size"], "Grid Size", where), block=_dims(row["Block Size"], "Block Size", where),
        regs_per_thread=int(value("Registers Per Thread")),
        smem_static=int(value("Static Shared Memory Per Block", 0)),
        smem_dynamic=int(value("Dynamic Shared Memory Per Block", 0)),
        smem_driver=int(value("Driver Shared Memory Per Block", 0)),
        smem_config=_int_or_none(value("Shared Memory Configuration Size")),
        sm_count=_int_or_none(value("# SMs")), waves_per_sm=value("Waves Per SM"),
        limits={k: int(value(m)) for k, m in LIMIT_METRICS.items()},
        theoretical_occupancy_pct=value("Theoretical Occupancy"),
        theoretical_warps=value("Theoretical Active Warps per SM"),
        achieved_occupancy_pct=value("Achieved Occupancy"),
        achieved_warps=value("Achieved Active Warps Per SM"),
        duration_us=scaled("Duration", TIME_US), dram_bytes=dram,
        cluster_size=int(value("Cluster Size", 0)))


def _int_or_none(v):
    return None if v is None else int(v)


# -- .ncu-rep through NVIDIA's module ------------------------------------------------------------
REP_METRICS = {"regs": "launch__registers_per_thread", "static": "launch__shared_mem_per_block_static",
               "dynamic": "launch__shared_mem_per_block_dynamic",
               "driver": "launch__shared_mem_per_block_driver", "config": "launch__shared_mem_config_size",
               "sms": "device__attribute_multiprocessor_count", "waves": "launch__waves_per_multiprocessor",
               "theoretical": "sm__maximum_warps_per_active_cycle_pct",
               "theoretical_warps": "sm__maximum_warps_avg_per_active_cycle",
               "achieved": "sm__warps_active.avg.pct_of_peak_sustained_active",
               "achieved_warps": "sm__warps_active.avg.per_cycle_active",
               "duration_ns": "gpu__time_duration.sum", "dram": "dram__bytes.sum",
               "cluster": "launch__cluster_size"}
REP_LIMITS = {"registers": "launch__occupancy_limit_registers",
              "shared memory": "launch__occupancy_limit_shared_mem",
              "warps": "launch__occupancy_limit_warps", "blocks": "launch__occupancy_limit_blocks",
              "barriers": "launch__occupancy_limit_barriers"}


def read_ncu_rep(path) -> list[NcuKernel]:
    """A .ncu-rep report through NVIDIA's `ncu_report` module (one line if it is not importable)."""
    from sim.inputs.files import check_user_file

    check_user_file(path, "Nsight Compute report", 2**31)
    try:
        import ncu_report  # Nsight Compute's extras/python, on PYTHONPATH
    except ImportError:
        raise UserError("a .ncu-rep file needs NVIDIA's ncu_report module (Nsight Compute's "
                        "extras/python folder on PYTHONPATH); or export it as CSV: ncu --import "
                        f"{Path(path).name} --csv --page details > report.csv") from None
    try:
        context = ncu_report.load_report(str(path))
        actions = [rng.action_by_idx(a) for rng in (context.range_by_idx(r) for r in range(context.num_ranges()))
                   for a in range(rng.num_actions())]
        kernels = [_rep_kernel(i, action) for i, action in enumerate(actions)]
    except UserError:
        raise
    except Exception as exc:  # the module's own errors: a damaged or foreign file
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise UserError(f"ncu_report cannot read {Path(path).name}: {first}") from None
    if not kernels:
        raise UserError(f"{Path(path).name} holds no profiled kernel")
    return kernels


def _rep_kernel(index: int, action) -> NcuKernel:
    where = f"{action.name()} (kernel {index})"

    def metric(name, default=None):
        m = action.metric_by_name(name)
        return default if m is None else m.as_double()

    def dims(prefix):
        return tuple(int(metric(f"launch__{prefix}_dim_{a}", 1)) for a in "xyz")

    theoretical = metric(REP_METRICS["theoretical"])
    if theoretical is None or metric(REP_METRICS["regs"]) is None:
        raise UserError(f"{where}: the report lacks the LaunchStats and Occupancy sections")
    name = action.metric_by_name("device__attribute_display_name")
    duration = metric(REP_METRICS["duration_ns"])
    get = {k: metric(v) for k, v in REP_METRICS.items()}
    return NcuKernel(
        id=str(index), name=action.name(), device=name.as_string() if name is not None else "",
        cc="", grid=dims("grid"), block=dims("block"), regs_per_thread=int(get["regs"]),
        smem_static=int(get["static"] or 0), smem_dynamic=int(get["dynamic"] or 0),
        smem_driver=int(get["driver"] or 0), smem_config=_int_or_none(get["config"]),
        sm_count=_int_or_none(get["sms"]), waves_per_sm=get["waves"],
        limits={k: int(metric(v, 0)) for k, v in REP_LIMITS.items()},
        theoretical_occupancy_pct=theoretical, theoretical_warps=get["theoretical_warps"],
        achieved_occupancy_pct=get["achieved"], achieved_warps=get["achieved_warps"],
        duration_us=None if duration is None else duration / 1e3, dram_bytes=get["dram"],
        cluster_size=int(get["cluster"] or 0))
