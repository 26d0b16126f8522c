"""Trace bundles (sim/traces/trace_bundle.py): many recorded traces in one index + one npz, read back as
Trace objects and written out as warpscope-trace/1 files that `compare` runs on."""

import json
from pathlib import Path

import numpy as np
import pytest

from sim.traces import trace_bundle
from sim.traces.compare import compare_trace
from sim.rules.devices import preset
from sim.inputs.errors import UserError
from sim.traces.trace import Trace, load_trace
from sim.traces.trace_bundle import ARRAYS_NAME, BUNDLE_FORMAT, INDEX_NAME, load_bundle, write_bundle

META = {"kernel": "spin-trace", "wait": "spin", "grid": 4, "num_warps": 4, "spin_us": 10.0,
        "sm_count": 132, "predicted": {"blocks_per_sm": 2, "waves": 4 / 264}}


def _hand_made_bundle(folder, rows_a, rows_b):
    """The documented layout written with numpy and json alone: independent of write_bundle."""
    both = np.array(rows_a + rows_b, dtype=float)
    np.savez_compressed(folder / ARRAYS_NAME, block=both[:, 0].astype(np.int32),
                        sm=both[:, 1].astype(np.int16), start_us=both[:, 2].astype(np.float32),
                        end_us=both[:, 3].astype(np.float32),
                        offsets=np.array([0, len(rows_a), len(both)]))
    index = {"format": BUNDLE_FORMAT, "arrays": ARRAYS_NAME, "info": {},
             "traces": [{"name": "a", "family": "A", "source": "recorded", "gpu": "NVIDIA H200",
                         "offset": 0, "count": len(rows_a), "meta": META, "summary": {}},
                        {"name": "b", "family": "B", "source": "recorded", "gpu": "NVIDIA H200",
                         "offset": len(rows_a), "count": len(rows_b), "meta": {}, "summary": {}}],
             "failed": [{"name": "c", "family": "C", "error": "boom"}]}
    (folder / INDEX_NAME).write_text(json.dumps(index))


ROWS_A = [[0, 3, 0.0, 10.0], [1, 5, 0.25, 10.25], [2, 3, 0.5, 10.5], [3, 5, 10.0, 20.0]]
ROWS_B = [[0, 7, 0.0, 1.5], [1, 7, 1.5, 3.0]]


def test_reads_the_documented_layout(tmp_path):
    _hand_made_bundle(tmp_path, ROWS_A, ROWS_B)
    traces = load_bundle(tmp_path)
    assert list(traces) == ["a", "b"]
    a = traces["a"]
    assert a.block.tolist() == [0, 1, 2, 3] and a.sm.tolist() == [3, 5, 3, 5]
    assert a.start_us.tolist() == [0.0, 0.25, 0.5, 10.0] and a.end_us[-1] == 20.0
    assert a.slot.tolist() == [-1] * 4 and a.gpu == "NVIDIA H200" and a.meta == META
    assert traces["b"].sm.tolist() == [7, 7]
    assert load_bundle(tmp_path / INDEX_NAME).keys() == traces.keys()  # the index path works too


def _trace(n, seed):
    rng = np.random.default_rng(seed)
    start = np.sort(rng.uniform(0, 50, n))
    return Trace(source="recorded", gpu="NVIDIA H200", block=np.arange(n),
                 sm=rng.integers(0, 132, n), slot=np.full(n, -1), start_us=start,
                 end_us=start + rng.uniform(5, 6, n), meta=dict(META, grid=n))


def test_write_then_load_gives_the_traces_back_at_float32_precision(tmp_path):
    traces = [("x", "A", _trace(300, 1), {"makespan_us": 1.0}), ("y", "B", _trace(50, 2), {})]
    write_bundle(tmp_path, traces, [{"name": "z", "family": "C", "error": "boom"}],
                 {"command": "test"})
    back = load_bundle(tmp_path)
    for name, _, trace, _ in traces:
        got = back[name]
        assert np.array_equal(got.block, trace.block) and np.array_equal(got.sm, trace.sm)
        assert np.allclose(got.start_us, trace.start_us, rtol=0, atol=1e-5)
        assert np.allclose(got.end_us, trace.end_us, rtol=0, atol=1e-5)
        assert got.meta == trace.meta
    index = json.loads((tmp_path / INDEX_NAME).read_text())
    assert index["failed"][0]["error"] == "boom" and index["info"]["command"] == "test"
    assert index["traces"][0]["summary"] == {"makespan_us": 1.0}
    with np.load(tmp_path / ARRAYS_NAME) as npz:
        assert npz["sm"].dtype == np.int16 and npz["start_us"].dtype == np.float32
        assert npz["offsets"].tolist() == [0, 300, 350]


def test_an_extracted_trace_is_a_trace_file_that_compare_runs_on(tmp_path):
    _hand_made_bundle(tmp_path, ROWS_A, ROWS_B)
    out = tmp_path / "a.json"
    trace_bundle.extract(tmp_path, "a", out)
    trace = load_trace(out)
    assert trace.block.tolist() == [0, 1, 2, 3] and trace.meta["kernel"] == "spin-trace"
    comparison = compare_trace(trace, preset("H200"), trace.meta["predicted"]["blocks_per_sm"])
    assert comparison.blocks == 4 and comparison.recorded_makespan_us == 20.0
    assert comparison.recorded_max_blocks_per_sm == 2


def test_cli_lists_and_extracts(tmp_path, capsys):
    _hand_made_bundle(tmp_path, ROWS_A, ROWS_B)
    assert trace_bundle.main([str(tmp_path)]) == 0
    listing = capsys.readouterr().out
    assert "a " in listing and "FAILED: boom" in listing
    assert trace_bundle.main([str(tmp_path), "b", "--out", str(tmp_path / "b.json")]) == 0
    assert load_trace(tmp_path / "b.json").sm.tolist() == [7, 7]
    assert trace_bundle.main([str(tmp_path), "nope", "--out", str(tmp_path / "n.json")]) == 2
    assert "no trace 'nope'" in capsys.readouterr().err


def test_damaged_bundles_are_one_clear_error(tmp_path):
    with pytest.raises(UserError, match="a folder without dispatch_index.json, so not a trace bundle"):
        load_bundle(tmp_path)
    (tmp_path / INDEX_NAME).write_text(json.dumps({"format": "something/1"}))
    with pytest.raises(UserError, match="not a WarpScope trace bundle"):
        load_bundle(tmp_path)
    _hand_made_bundle(tmp_path, ROWS_A, ROWS_B)
    index = json.loads((tmp_path / INDEX_NAME).read_text())
    index["traces"][1]["count"] = 99
    (tmp_path / INDEX_NAME).write_text(json.dumps(index))
    with pytest.raises(UserError, match="points outside"):
        load_bundle(tmp_path)
    _hand_made_bundle(tmp_path, ROWS_A, [[0, 7, 2.0, 1.0]])  # ends before it starts
    with pytest.raises(UserError, match="ends before starts"):
        load_bundle(tmp_path)


REAL = Path(__file__).resolve().parents[1] / "data" / "h200_memory_kernels_fit"


def _main(capsys, *argv):
    import main

    code = main.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_compare_on_a_bundle_lists_its_traces_and_says_how_to_pick_one(capsys):
    index = json.loads((REAL / INDEX_NAME).read_text())
    code, out, err = _main(capsys, "compare", str(REAL))
    lines = out.splitlines()
    assert code == 0 and not err
    names = [e["name"] for e in index["traces"]]
    assert [ln.split()[0] for ln in lines[1:1 + len(names)]] == names  # one a line, in order
    assert f"python main.py compare {REAL} NAME" in lines[-1]
    code, out, _ = _main(capsys, "compare", str(REAL), "--json")
    assert code == 0 and json.loads(out)["traces"] == names


def test_compare_on_a_bundle_and_a_name_compares_that_recording(capsys):
    """The recorded makespan printed is the one the recording run wrote in the index's summary
    (float32 times in the arrays: within 0.05 us as printed)."""
    index = json.loads((REAL / INDEX_NAME).read_text())
    entry = index["traces"][3]
    for where in (REAL, REAL / INDEX_NAME):  # the folder or its index file
        code, out, err = _main(capsys, "compare", str(where), entry["name"])
        assert code == 0 and not err
        recorded = float(out.split("makespan: recorded ")[1].split(" us")[0].replace(",", ""))
        assert abs(recorded - entry["summary"]["makespan_us"]) <= 0.05
        assert f"{entry['count']:,} blocks" in out


def test_a_bundle_is_never_called_not_a_trace_of_its_own_format(capsys, tmp_path):
    renamed = tmp_path / "renamed.json"
    renamed.write_text((REAL / INDEX_NAME).read_text())
    code, out, err = _main(capsys, "compare", str(renamed))  # known by what it declares
    traces = len(json.loads((REAL / INDEX_NAME).read_text())["traces"])
    assert code == 0 and f"is a trace bundle of {traces} traces" in out
    with pytest.raises(UserError) as exc:
        from sim.traces.trace import read_any_trace

        read_any_trace(renamed)
    assert "not a WarpScope trace" not in str(exc.value) and "trace bundle" in str(exc.value)
    code, _, err = _main(capsys, "compare", str(REAL), "no_such_trace")
    assert code == 2 and "no trace 'no_such_trace'" in err and err.count("\n") == 1
    code, _, err = _main(capsys, "compare", str(REAL.parent / "trace_h200.json"), "x")
    assert code == 2 and "one trace, not a bundle" in err
    code, _, err = _main(capsys, "compare", str(tmp_path))
    assert code == 2 and "without dispatch_index.json" in err
