"""Triton Proton's per-program timeline: read through the same bounded boundary as every trace,
compared by the same compare, and every file it cannot use is one line."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import main
from sim.traces.compare import compare_trace
from sim.rules.devices import preset
from sim.inputs.errors import UserError
from sim.traces.trace import read_any_trace

SAMPLE = Path(__file__).parents[1] / "data" / "proton" / "vector_add.chrome_trace"


def _event(cta, sm, warp, ts, dur, kernel="k", name="kernel"):
    return {"ph": "X", "cat": kernel, "name": name, "pid": f"{kernel} Core{sm} CTA{cta}",
            "tid": f"warp {warp} (line 0)", "ts": ts, "dur": dur,
            "args": {"Frequency (MHz)": 1000.0, "Finalization Time (ns)": 900}}


def _write(tmp_path, events, **extra) -> Path:
    path = tmp_path / "t.chrome_trace"
    path.write_text(json.dumps({"displayTimeUnit": "ns", "traceEvents": events, **extra}))
    return path


def test_the_sample_reads_as_one_block_per_cta():
    trace = read_any_trace(SAMPLE)
    assert len(trace.block) == 97 and trace.block.tolist() == list(range(97))
    assert trace.meta["kernel"] == "proton" and trace.meta["kernel_name"] == "add_kernel"
    assert trace.meta["num_warps"] == 8 and trace.gpu == "?" and trace.start_us.min() == 0
    assert (trace.slot == -1).all() and len(np.unique(trace.sm)) == 97  # one wave, one CTA an SM


def test_a_cta_spans_its_warps_scopes_and_its_cycles_become_time(tmp_path):
    # CTA 0 on SM 5: warp 0 from 0 to 3 (3,000 cycles at the file's 1 GHz), warp 1 ends at 4;
    # CTA 1 on SM 7 starts 0.5 us later (its global-timer start) and lasts 2,000 cycles
    path = _write(tmp_path, [_event(0, 5, 0, 0.0, 3.0), _event(0, 5, 1, 0.2, 3.8),
                             _event(0, 5, 0, 1.0, 1.0, name="inner"), _event(1, 7, 0, 0.5, 2.0)])
    trace = read_any_trace(path)
    assert trace.sm.tolist() == [5, 7] and trace.start_us.tolist() == [0.0, 0.5]
    assert trace.end_us.tolist() == [4.0, 2.5] and trace.meta["num_warps"] == 2
    c = compare_trace(trace, preset("H200"))
    clock = preset("H200").clock_mhz
    assert c.recorded.end_us.tolist() == pytest.approx([4.0 * 1000 / clock, 0.5 + 2.0 * 1000 / clock])
    assert any("converted at" in n for n in c.notes) and c.model == "uniform"
    assert c.wait == "memory" and c.predicted_blocks_per_sm == 32  # 64 threads: the block limit


@pytest.mark.parametrize("events, words", [
    ([], "no Proton scope events"),
    ([{"ph": "X", "pid": 3, "ts": 0, "dur": 1}], "is not Proton's"),
    ([_event(0, 1, 0, 0.0, 1.0), _event(1, 2, 0, 0.0, 1.0)], "every CTA starts at the same moment"),
    ([_event(0, 1, 0, 0.0, 1.0), _event(0, 2, 0, 5.0, 1.0)], "more than one launch"),
    ([_event(0, 1, 0, -1.0, 1.0)], "'ts' and 'dur' must be times"),
    ([_event(0, 1, 0, 0.0, float("nan"))], "NaN"),
    ([_event(0, 5000, 0, 0.0, 1.0)], "past any GPU"),
    ([_event(2**31, 1, 0, 0.0, 1.0)], "past CUDA's grid"),
])
def test_what_cannot_be_used_is_one_line(tmp_path, events, words):
    path = tmp_path / "t.chrome_trace"
    text = json.dumps({"displayTimeUnit": "ns", "traceEvents": events}, allow_nan=True)
    path.write_text(text)
    with pytest.raises(UserError, match=words) as err:
        read_any_trace(path)
    assert "\n" not in str(err.value)


def test_a_second_kernel_in_the_file_is_left_out_and_said(tmp_path):
    path = _write(tmp_path, [_event(0, 1, 0, 0.0, 1.0, kernel="a"), _event(1, 2, 0, 0.2, 1.0, kernel="a"),
                             _event(0, 3, 0, 9.0, 1.0, kernel="b")])
    trace = read_any_trace(path)
    assert len(trace.block) == 2 and any("compared: the first, a" in n for n in trace.meta["notes"])


def test_the_command_line_opens_it_and_asks_for_the_gpu_it_does_not_name(capsys):
    assert main.main(["compare", str(SAMPLE), "--gpu", "H200"]) == 0
    out = capsys.readouterr().out
    assert "97 blocks" in out and "converted at H200's 1,980 MHz" in out
    assert main.main(["compare", str(SAMPLE)]) == 2
    err = capsys.readouterr().err
    assert "names '?', which is no GPU preset; pass --gpu" in err and err.count("\n") == 1


def test_a_chrome_trace_of_something_else_is_one_line(tmp_path, capsys):
    path = _write(tmp_path, [{"ph": "X", "pid": 1, "tid": 2, "ts": 0, "dur": 5, "name": "f"}])
    assert main.main(["compare", str(path), "--gpu", "H200"]) == 2
    err = capsys.readouterr().err
    assert "is not Proton's" in err and err.count("\n") == 1


_VALUES = st.one_of(st.none(), st.booleans(), st.integers(-2**40, 2**40), st.floats(allow_nan=False),
                    st.text(max_size=30), st.lists(st.integers(), max_size=3))


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_damaged_events_load_or_name_the_problem(tmp_path_factory, data):
    events = [_event(c, c % 7, w, 0.1 * c, 1.0 + w) for c in range(4) for w in range(2)]
    for _ in range(data.draw(st.integers(1, 4))):
        ev = events[data.draw(st.integers(0, len(events) - 1))]
        ev[data.draw(st.sampled_from(sorted(ev)))] = data.draw(_VALUES)
    path = _write(tmp_path_factory.mktemp("p"), events)
    try:
        trace = read_any_trace(path)
    except UserError as exc:
        assert "\n" not in str(exc)
        return
    assert len(trace.block) >= 1 and (trace.end_us >= trace.start_us).all()
    try:  # what loads, compares, or says in one line why not
        compare_trace(trace, preset("H200"))
    except UserError as exc:
        assert "\n" not in str(exc)
