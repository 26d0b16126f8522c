"""The notebook API: each function's result holds what its command prints (the command's --json
is the truth here), displays itself as well-formed HTML, and gives rows and a DataFrame."""

from __future__ import annotations

import json
import math
import re

import pytest

import main
import sim
import sim.notebook as ws
from sim.inputs.errors import UserError
from sim.notebook.render import MAX_RECTS
from tests.test_notebook import parsed


def _cli_json(capsys, *argv):
    assert main.main([*argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_explain_is_the_commands_json_and_displays_itself(capsys):
    r = ws.explain("L40S", 1_000_000, 256)
    assert json.loads(json.dumps(r.to_dict())) == _cli_json(capsys, "explain", "--gpu", "L40S",
                                                           "--elements", "1000000", "--block", "256")
    page = r._repr_html_()
    tags = parsed(page).tags
    assert "svg" in tags and "table" in tags and "class='occupancy'" in page
    # one bar per simulated block, one path per wave colour
    bars = len(re.findall(r"h-[\d.]+z", page))  # each bar's path ends "h-width z"
    assert r.prediction.timeline.n_blocks <= MAX_RECTS and bars == r.prediction.timeline.n_blocks
    row = r.rows()[0]
    assert row["blocks"] == 3907 and row["blocks_per_sm"] == 6  # the article's L40S launch
    assert math.isclose(row["sol_us"] + sum(v for k, v in row.items() if k.endswith("_us")
                                            and k not in ("sol_us", "whole_launch_us")),
                        row["whole_launch_us"], rel_tol=1e-9)


def test_simulate_gives_every_block_and_the_commands_time(capsys):
    r = ws.simulate("H200", "1e6", 256)
    cli = _cli_json(capsys, "simulate", "--gpu", "H200", "--elements", "1e6", "--block", "256")
    assert r.to_dict()["whole_launch_us"] == cli["whole_launch_us"]
    rows = r.rows()
    assert len(rows) == r.timeline.n_blocks and all(b["end_us"] > b["start_us"] for b in rows)
    parsed(r._repr_html_())


def test_compare_is_the_commands_json(capsys):
    trace = "tests/data/trace_h200.json"
    r = ws.compare(trace)
    assert json.loads(json.dumps(r.to_dict())) == _cli_json(capsys, "compare", trace)
    assert parsed(r._repr_html_()).tags.count("svg") == 2  # recorded and predicted


def test_next_step_is_explains(capsys):
    r = ws.next_step("H200", 1_000_000, 256)
    cli = _cli_json(capsys, "explain", "--gpu", "H200", "--elements", "1000000", "--block", "256")
    assert [(s["lever"], s["after_time_us"]) for s in r.rows()] == \
        [(s["lever"], s["after_time_us"]) for s in cli["next_steps"]]
    parsed(r._repr_html_())


def test_a_sweep_is_one_explain_per_value():
    r = ws.sweep("L40S", 1_000_000, block=[128, 256, 1024])
    assert [row["threads_per_block"] for row in r.rows()] == [128, 256, 1024]
    assert r.rows()[1] == ws.explain("L40S", 1_000_000, 256).rows()[0]
    assert r.fastest.prediction.whole_launch_us == min(x["whole_launch_us"] for x in r.rows())
    parsed(r._repr_html_())
    with pytest.raises(UserError, match="sweep one input"):
        ws.sweep("L40S", 1_000_000, block=[128], regs=[32])


def test_bad_input_is_the_commands_one_line():
    with pytest.raises(UserError, match="unknown GPU"):
        ws.explain("nope", 1000, 256)
    with pytest.raises(UserError, match="block size"):
        sim.explain("H200", 1000, 4096)


def test_to_frame_needs_pandas_only_when_asked():
    r = ws.explain("T4", 100_000, 128)
    try:
        import pandas  # noqa: F401
    except ImportError:
        with pytest.raises(ImportError, match="pip install pandas"):
            r.to_frame()
    else:
        frame = r.to_frame()
        assert list(frame["blocks"]) == [r.geometry.blocks]


@pytest.mark.slow
def test_bench_lays_the_measured_time_on_the_card():
    """measured_us is the file's median, read here from the raw JSON."""
    from kernels.notebook import bench

    path = "tests/data/h200_size_sweep.json"
    with open(path, encoding="utf-8") as f:
        raw = json.load(f)["measurements"]
    r = bench(path)
    rows = r.rows()
    assert [row["measured_us"] for row in rows] == [m["median_ms"] * 1e3 for m in raw]
    timed = [row for row in rows if "predicted_us" in row]
    assert timed, "no measured point got a prediction"
    for row in timed:
        assert math.isclose(row["measured_percent"], 100 * row["sol_us"] / row["measured_us"])
    parsed(r._repr_html_())
