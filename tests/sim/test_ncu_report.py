"""Nsight Compute import (sim/traces/ncu_report.py, sim/traces/ncu_compare.py): for every kernel of
every real report in tests/data/ncu, WarpScope's block limits, theoretical occupancy and waves per
SM for ncu's launch equal what ncu printed (to its two decimals); damaged files are one line."""

import sys
import types
from pathlib import Path

import pytest

from main import main
from sim.inputs.errors import UserError
from sim.traces.ncu_compare import compare_kernel, compare_report
from sim.traces.ncu_report import read_ncu

DATA = Path(__file__).resolve().parents[1] / "data" / "ncu"
REPORTS = sorted(DATA.glob("*.csv"))
H100 = DATA / "h100_launchstats_occupancy.csv"


@pytest.mark.parametrize("report", REPORTS, ids=lambda p: p.name)
def test_occupancy_limits_and_waves_equal_ncus(report):
    for c in compare_report(report):
        k = c.kernel
        assert c.must_equal("Theoretical occupancy"), (k.id, k.name[:40])
        assert c.must_equal("Waves per SM"), (k.id, k.name[:40])
        for limit in ("registers", "shared memory", "warps", "SM (blocks)"):
            assert c.must_equal(f"Block limit: {limit}"), (k.id, limit)
        assert c.must_equal("Limited by") and c.must_equal("Theoretical warps per SM")
        assert not c.differences, [r.quantity for r in c.differences]


def test_the_reference_report_read_as_ncu_printed_it():
    kernels = read_ncu(H100)
    assert len(kernels) == 7
    mm = kernels[6]  # cuBLAS's bf16 product: a (2, 66, 1) grid of 384-thread blocks
    assert mm.grid == (2, 66, 1) and mm.grid_blocks == 132 and mm.block == (384, 1, 1)
    assert (mm.regs_per_thread, mm.smem_dynamic, mm.smem_driver) == (168, 213_188, 1024)
    assert mm.limits == {"registers": 1, "shared memory": 1, "warps": 5, "blocks": 32, "barriers": 21}
    assert mm.theoretical_occupancy_pct == 18.75 and mm.cluster_size == 2
    assert kernels[3].waves_per_sm == 7.76 and kernels[3].achieved_occupancy_pct == 80.96


def _with_time(tmp_path, unit="usecond", value="52.35", bytes_unit="Mbyte"):
    """Kernel 3 of the reference with a Duration and DRAM bytes appended as ncu writes them
    (SpeedOfLight's row; --metrics rows under "Command line profiler metrics")."""
    lines = H100.read_text().splitlines()
    rows = [lines[0]] + [ln for ln in lines[1:] if ln.startswith('"3",')]
    head = rows[1].split('"Launch Statistics"')[0]
    rows += [head + f'"GPU Speed Of Light Throughput","Duration","{unit}","{value}"',
             head + f'"Command line profiler metrics","dram__bytes_read.sum","{bytes_unit}","134.22"',
             head + f'"Command line profiler metrics","dram__bytes_write.sum","{bytes_unit}","67.11"']
    path = tmp_path / "timed.csv"
    path.write_text("==PROF== Connected to process 1\n" + "\n".join(rows)
                    + "\n==PROF== Disconnected from process 1\n")
    return path


def test_duration_and_bytes_in_their_units(tmp_path):
    k, = read_ncu(_with_time(tmp_path))
    assert k.duration_us == pytest.approx(52.35) and k.dram_bytes == pytest.approx(201.33e6)
    k, = read_ncu(_with_time(tmp_path, "msecond", "0.05235", "Gbyte"))
    assert k.duration_us == pytest.approx(52.35) and k.dram_bytes == pytest.approx(201.33e9)
    c = compare_kernel(read_ncu(_with_time(tmp_path))[0], "H100 SXM")
    assert c.predicted_us and c.predicted_us > 0
    assert any(r.quantity == "Duration" and r.ncu == "52.35 us" for r in c.rows)


def test_a_difference_is_flagged_not_hidden():
    k = read_ncu(H100)[3]
    c = compare_kernel(k, "L40S")  # 142 SMs, 24 blocks an SM: other waves and limits than ncu's H100
    assert "Waves per SM" in [r.quantity for r in c.differences]
    assert any("142" in n for n in c.notes)


def test_the_command(capsys):
    assert main(["compare", "--ncu", str(H100)]) == 0
    out = capsys.readouterr().out
    assert "equal ncu's for 7 of 7 kernels" in out and "DIFFERS" not in out
    assert main(["compare", "--ncu", str(H100), "--json"]) == 0


def _one_line(capsys, path) -> str:
    assert main(["compare", "--ncu", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err and "\n" not in err and "Traceback" not in err
    return err


def test_damaged_reports_are_one_line(tmp_path, capsys):
    data = H100.read_bytes()
    cases = {"empty.csv": b"", "cut_in_a_field.csv": data[:len(data) // 2],
             "cut_at_a_line.csv": data[:data.rfind(b"\n", 0, len(data) // 2) + 1],
             "columns.csv": b'"ID","Kernel Name","Value"\n"0","k","1"\n',
             "binary.csv": bytes(range(256)) * 4, "latin1.csv": b'"ID",\xff\xfe\n'}
    for name, content in cases.items():
        (tmp_path / name).write_bytes(content)
    assert "empty" in _one_line(capsys, tmp_path / "empty.csv")
    cut = _one_line(capsys, tmp_path / "cut_in_a_field.csv")
    assert "damaged" in cut or "truncated" in cut
    assert "truncated" in _one_line(capsys, tmp_path / "cut_at_a_line.csv")
    assert "lacks the columns" in _one_line(capsys, tmp_path / "columns.csv")
    assert "binary" in _one_line(capsys, tmp_path / "binary.csv")
    assert "UTF-8" in _one_line(capsys, tmp_path / "latin1.csv")
    assert main(["compare"]) == 2 and "compare needs one of" in capsys.readouterr().err


def test_ncu_rep_without_nvidias_module_is_one_line(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "ncu_report", None)  # import fails as where it is not installed
    rep = tmp_path / "run.ncu-rep"
    rep.write_bytes(b"\x00NVIDIA")
    assert "ncu_report module" in _one_line(capsys, rep)


class _Metric:
    def __init__(self, v):
        self.v = v

    def as_double(self):
        return float(self.v)

    def as_string(self):
        return str(self.v)


def test_ncu_rep_through_the_module(tmp_path, monkeypatch):
    """The module's API (load_report, ranges, actions, metric_by_name) with kernel 3's numbers."""
    values = {"launch__grid_dim_x": 16384, "launch__block_dim_x": 128, "launch__registers_per_thread": 26,
              "launch__shared_mem_per_block_driver": 1024, "launch__shared_mem_config_size": 32768,
              "device__attribute_multiprocessor_count": 132, "launch__waves_per_multiprocessor": 7.76,
              "sm__maximum_warps_per_active_cycle_pct": 100, "sm__maximum_warps_avg_per_active_cycle": 64,
              "launch__occupancy_limit_registers": 16, "launch__occupancy_limit_shared_mem": 32,
              "launch__occupancy_limit_warps": 16, "launch__occupancy_limit_blocks": 32,
              "launch__occupancy_limit_barriers": 32, "gpu__time_duration.sum": 52350,
              "device__attribute_display_name": "NVIDIA H100 80GB HBM3"}
    action = types.SimpleNamespace(name=lambda: "add_kernel",
                                   metric_by_name=lambda n: _Metric(values[n]) if n in values else None)
    rng = types.SimpleNamespace(num_actions=lambda: 1, action_by_idx=lambda i: action)
    ctx = types.SimpleNamespace(num_ranges=lambda: 1, range_by_idx=lambda i: rng)
    monkeypatch.setitem(sys.modules, "ncu_report", types.SimpleNamespace(load_report=lambda p: ctx))
    rep = tmp_path / "run.ncu-rep"
    rep.write_bytes(b"\x00")
    k, = read_ncu(rep)
    assert k.grid == (16384, 1, 1) and k.duration_us == pytest.approx(52.35)
    c = compare_kernel(k)
    assert c.gpu == "H100 SXM" and not c.differences
    with pytest.raises(UserError):
        monkeypatch.setitem(sys.modules, "ncu_report", types.SimpleNamespace(
            load_report=lambda p: (_ for _ in ()).throw(RuntimeError("bad magic\nmore"))))
        read_ncu(rep)
