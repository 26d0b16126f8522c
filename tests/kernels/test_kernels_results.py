"""Result files: JSON and CSV round trips, atomic writes, clear errors."""

import json
import os

import pytest

from kernels.measure.results import load_results, save_results
from kernels.measure.timing import FORMAT, BenchResult, Measurement
from sim.inputs.errors import UserError


def _m(**kw) -> Measurement:
    base = dict(kernel="add_triton", backend="triton", elements=1 << 20, block_size=4096,
                threads_per_block=256, num_warps=8, median_ms=0.01, p20_ms=0.009, p80_ms=0.012,
                reps=50, flush_l2=True, bytes_moved=12_582_912, bandwidth_gbps=1258.2912,
                bandwidth_p20_gbps=1048.576, bandwidth_p80_gbps=1398.101, regs_per_thread=26,
                smem_per_block_bytes=0, is_gpu_timing=True, method="CUDA events",
                device="NVIDIA H200",
                grid_blocks=256, blocks_per_sm=8, occupancy=1.0, limited_by=("warps",), waves=0.24,
                percent_of_copy=29.7, percent_of_peak=26.1)
    base.update(kw)
    return Measurement(**base)


RESULT = BenchResult(device={"name": "NVIDIA H200", "sm_count": 132},
                     created="2026-11-29T10:00:00+00:00",
                     command="warpscope bench --kernel add_triton", copy_ceiling_gbps=4237.0,
                     peak_dram_gbps=4814.3,
                     measurements=(_m(), _m(kernel="add_torch", backend="torch", block_size=None,
                                            threads_per_block=None, num_warps=None,
                                            regs_per_thread=None, limited_by=(), occupancy=None)))


@pytest.mark.parametrize("ext", ["json", "csv"])
def test_round_trip(tmp_path, ext):
    path = tmp_path / f"r.{ext}"
    save_results(RESULT, path)
    back = load_results(path)
    assert back.measurements == RESULT.measurements
    assert back.copy_ceiling_gbps == RESULT.copy_ceiling_gbps and back.created == RESULT.created
    assert back.device["name"] == "NVIDIA H200"
    assert os.listdir(tmp_path) == [f"r.{ext}"]  # no temporary file left behind


def test_json_format_tag(tmp_path):
    path = tmp_path / "r.json"
    save_results(RESULT, path)
    data = json.loads(path.read_text())
    assert data["format"] == FORMAT == "warpscope-bench/1"
    assert data["measurements"][0]["limited_by"] == ["warps"]


def test_errors_are_user_errors(tmp_path):
    with pytest.raises(UserError, match=".json or .csv"):
        save_results(RESULT, tmp_path / "r.txt")
    with pytest.raises(UserError, match="cannot write"):
        save_results(RESULT, tmp_path / "missing" / "r.json")
    assert not (tmp_path / "missing").exists()
    (tmp_path / "bad.json").write_text('{"format": "other"}')
    with pytest.raises(UserError, match="warpscope-bench/1"):
        load_results(tmp_path / "bad.json")
    with pytest.raises(UserError, match="cannot read"):
        load_results(tmp_path / "absent.json")


@pytest.mark.parametrize("change,words", [
    (dict(elements=0), "measurement 0: field 'elements' must be a whole number >= 1, got 0"),  # log2(0)
    (dict(elements="lots"), "'elements' must be"),
    (dict(median_ms=0, bandwidth_gbps=0), "must be a positive number"),  # ZeroDivisionError
    (dict(median_ms=float("nan")), "NaN is not a number JSON allows"),
    (dict(median_ms=1e300), "'median_ms' must be a positive number up to 1e"),
    (dict(block_size=-1), "'block_size' must be"),
    (dict(notes=5), "'notes' must be a list"),  # was TypeError
    (dict(regs_per_thread="abc"), "'regs_per_thread' must be a whole number"),  # was a traceback, exit 0
])
def test_damaged_measurements_are_user_errors(tmp_path, change, words):
    data = _as_dict(RESULT)
    if "notes" in change:
        data.update(change)
    else:
        data["measurements"][0].update(change)
    (tmp_path / "r.json").write_text(json.dumps(data))
    with pytest.raises(UserError, match=words):
        load_results(tmp_path / "r.json")


def _as_dict(result):
    from kernels.measure.results import to_dict

    return to_dict(result)


@pytest.mark.parametrize("text,words", [("[1, 2]", "not an object"),
                                        ('{"format": "warpscope-bench/1", "measurements": {}}', "must be a list"),
                                        ('{"format": "warpscope-bench/1", "measurements": ["x"]}',
                                         "measurement 0 must be a set of named fields")])
def test_damaged_files_are_user_errors(tmp_path, text, words):
    (tmp_path / "r.json").write_text(text)
    with pytest.raises(UserError, match=words):
        load_results(tmp_path / "r.json")
    (tmp_path / "b.json").write_bytes(b"\xff\xfe\x00")
    with pytest.raises(UserError, match="not a text file"):
        load_results(tmp_path / "b.json")
