"""The command line: the article's numbers, one-line errors, files that are whole."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

import main
from sim.traces.trace import load_trace

ROOT = Path(__file__).resolve().parents[1]


def run(capsys, *argv):
    code = main.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_explain_prints_the_article_numbers(capsys):
    code, out, _ = run(capsys, "explain", "--gpu", "L40S", "--elements", "1000000", "--block", "256")
    assert code == 0
    for needle in ("142", "48", "3,907", "31,256", "192", "6,816", "4.6", "limited by warps"):
        assert needle in out, needle


def test_explain_json(capsys):
    code, out, _ = run(capsys, "explain", "--gpu", "h200", "--elements", "2^20", "--block", "128",
                       "--regs", "64", "--json")
    data = json.loads(out)
    assert code == 0 and data["geometry"]["blocks"] == 8192
    assert data["occupancy"]["blocks_per_sm"] == 8 and data["occupancy"]["limited_by"] == ["registers"]


def test_simulate_writes_a_whole_trace(capsys, tmp_path):
    path = tmp_path / "t.json"
    code, out, _ = run(capsys, "simulate", "--gpu", "H200", "--elements", "1e6", "--block", "256",
                       "--cost", "uniform", "--schedule", "ideal", "--trace", str(path), "--json")
    summary = json.loads(out)
    assert code == 0 and summary["waves"] == 4 and summary["blocks"] == 3907
    assert summary["schedule"] == "ideal" and summary["dispatch_profile"] is None
    trace = load_trace(path)
    assert trace.source == "simulated" and len(trace.block) == 3907
    assert trace.max_resident_per_sm().max() == 8


def _makespan(capsys, *extra):
    code, out, _ = run(capsys, "simulate", "--gpu", "H200", "--elements", "594688", "--block",
                       "128", "--cost", "uniform", "--duration-us", "20", "--json", *extra)
    assert code == 0
    return json.loads(out)


def test_simulate_schedules_and_waits(capsys):
    """2.2 waves of 4-warp blocks of 20 us: the H200 ran them in 101.6 us (A-spin-w4-20us-2.2w in
    tests/data/h200_spin_fit); the textbook says 60; sleeping warps fill as the textbook."""
    ideal = _makespan(capsys, "--schedule", "ideal")
    spin = _makespan(capsys)
    sleep = _makespan(capsys, "--wait", "sleep")
    assert ideal["makespan_us"] == 60.0 and ideal["blocks"] == 4646
    assert spin["schedule"] == "calibrated" and spin["wait"] == "spin"
    assert spin["dispatch_profile"].startswith("calibrated on NVIDIA H200")
    assert abs(spin["makespan_us"] / 101.6 - 1) < 0.10
    assert 60.0 < sleep["makespan_us"] < 63.0


@pytest.mark.parametrize("argv,needle", [
    (["explain", "--block", "0"], "block size"),
    (["explain", "--block", "2000"], "1..1024"),
    (["explain", "--elements", "-5"], "at least 1"),
    (["explain", "--elements", "lots"], "not a number"),
    (["explain", "--gpu", "GTX480"], "unknown GPU"),
    (["explain", "--elements", "2^40", "--block", "1"], "grid limit"),
    (["simulate", "--smem", "300K"], "opt-in"),
    (["simulate", "--trace", "/proc/nope/t.json"], "cannot write"),
    (["simulate", "--cost", "uniform", "--duration-us", "inf"], "finite"),
    (["simulate", "--latency-us", "inf"], "finite"),
    (["simulate", "--overhead-us", "1e308"], "out of range"),
    (["simulate", "--overhead-us", "2e9"], "at most 1,000,000,000"),
    (["simulate", "--cost", "uniform", "--duration-us", "0"], "at least 0.001"),  # was 2,851 waves
    (["simulate", "--cost", "memory", "--bytes-per-element", "0", "--latency-us", "0"], "at least 0.001 us"),
    (["explain", "--smem", "9" * 400], "characters long"),  # was OverflowError
    (["explain", "--block", "9" * 50 + "^64"], "far too large"),  # was Python's int-digits limit
    (["explain", "--block", "9" * 70 + "^64"], "characters long"),
    (["simulate", "--trace", ""], "empty"),  # silently wrote nothing
    (["--screenshot", ""], "empty"),  # opened the interactive window
    (["compare", str(ROOT / "tests" / "data" / "trace_h200.json"), "--blocks-per-sm", "0"], "1..32"),
    (["compare", str(ROOT / "tests" / "data" / "trace_h200.json"), "--blocks-per-sm", "100000"], "1..32"),
    (["frobnicate"], "invalid choice"),
])
def test_bad_input_is_one_line_and_nonzero(capsys, argv, needle):
    try:
        code = main.main(argv)
    except SystemExit as exc:  # argparse's own errors exit
        code = exc.code
    err = capsys.readouterr().err
    assert code == 2 and needle in err
    assert err.count("\n") == 1, err


def test_real_process_has_no_traceback():
    proc = subprocess.run([sys.executable, "main.py", "explain", "--block", "0"], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr


def test_compare_a_recorded_trace(capsys):
    trace = str(ROOT / "tests" / "data" / "trace_h200.json")
    code, out, _ = run(capsys, "compare", trace)
    assert code == 0
    assert "recorded 8, simulated 8 (occupancy allows 8" in out and "busy spin" in out
    assert "calibrated on NVIDIA H200" in out
    code, out, _ = run(capsys, "compare", trace, "--placement", "recorded", "--mode", "ideal")
    assert code == 0 and "100% of the first wave" in out and "the textbook" in out
    code, out, _ = run(capsys, "compare", trace, "--json")
    keys = set(json.loads(out))
    assert {"blocks", "block_duration_us", "predicted_blocks_per_sm", "recorded_max_blocks_per_sm",
            "recorded_median_peak_blocks_per_sm", "recorded_makespan_us", "simulated_makespan_us",
            "recorded_mean_resident", "simulated_mean_resident", "recorded_sms_used",
            "dispatch_interval_us", "same_sm_first_wave", "same_sm_fraction",
            "simulated_median_peak_blocks_per_sm", "residency_error"} <= keys
    code, _, err = run(capsys, "compare", str(ROOT / "tests" / "data" / "occupancy_h200.json"))
    assert code == 2 and "not a WarpScope trace" in err


def test_compare_trace_with_nonsense_prediction_takes_the_recorded_peak(capsys, tmp_path):
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"format": "warpscope-trace/1", "gpu": "NVIDIA H200",
                                "meta": {"predicted": {"blocks_per_sm": "eight"}},
                                "blocks": [[0, 0, -1, 0.0, 1.0]]}))
    code, out, err = run(capsys, "compare", str(path))  # was a TypeError traceback
    assert code == 0 and not err and "the most any SM held in the recording (1)" in out


def test_output_piped_into_a_closed_reader_is_not_an_error(monkeypatch):
    """`warpscope ... | head -3`: once the reader has gone, every write raises BrokenPipeError."""

    class ClosedPipe:
        def write(self, text):
            raise BrokenPipeError(32, "Broken pipe")

        def flush(self):
            raise BrokenPipeError(32, "Broken pipe")

    monkeypatch.setattr(sys, "stdout", ClosedPipe())
    assert main.main(["explain", "--gpu", "L40S"]) == 0
    assert not isinstance(sys.stdout, ClosedPipe)  # swapped for /dev/null: exit's flush is quiet
