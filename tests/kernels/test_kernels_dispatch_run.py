"""benchmarks/dispatch_run.py without a GPU: its plan, the commands it records, its budget and its
output (a --dry-run goes through the same loop with simulated traces)."""

import argparse
import pathlib
import sys
import time

import pytest

from kernels import cli
from sim.traces.trace_bundle import load_bundle, read_index

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "benchmarks"))
import dispatch_run  # noqa: E402


def _parse(command: str):
    parser = argparse.ArgumentParser(prog="warpscope")
    cli.register(parser.add_subparsers(dest="command", required=True))
    assert command.startswith("python3 main.py ")
    return parser.parse_args(command.split()[2:])


def test_plan_covers_the_families_in_order_with_unique_names():
    experiments = dispatch_run.plan()
    names = [e.name for e in experiments]
    assert len(set(names)) == len(names)
    families = [e.family for e in experiments]
    assert "".join(dict.fromkeys(families)) == "AFEBCDG"  # most important first
    assert families.count("A") == 6 * 7 * 4 + 4 and families.count("G") == 8


def test_every_recorded_command_reproduces_its_trace_with_the_real_cli():
    """The command stored with a trace must parse, and say what the run launched."""
    for exp in dispatch_run.plan():
        if exp.kind == "probe":
            assert exp.command().startswith("python3 benchmarks/dispatch_probe_cuda.py")
            continue
        args, p = _parse(exp.command()), exp.params
        assert args.warps == p["num_warps"]
        if exp.kind == "add":
            assert (args.kernel, int(args.elements), args.block) == ("add", p["elements"],
                                                                     p["block_size"])
        else:
            assert (args.wait, args.spin_us, args.grid) == (p["wait"], p["spin_us"], p["grid"])
            assert args.waves == (None if p["grid"] else pytest.approx(p["waves"]))
            assert (args.hold_regs or 0) == p["hold_regs"]


def test_dry_run_writes_a_bundle_that_loads(tmp_path, capsys):
    assert dispatch_run.main(["--out", str(tmp_path), "--dry-run", "--only", "DE"]) == 0
    traces = load_bundle(tmp_path)
    assert len(traces) == 8
    d = traces["D-sleep-w4-20us-3.3w-hold128"]
    assert d.meta["wait"] == "sleep" and d.meta["family"] == "D" and d.meta["dry_run"]
    assert "--hold-regs 128" in d.meta["command"]
    index = read_index(tmp_path)
    assert index["info"]["recorded"] == 8 and index["info"]["stopped_early"] is None
    out = capsys.readouterr().out
    assert "E-add-2^24-b256-w2" in out and "textbook" in out


def test_budget_stops_cleanly_and_keeps_what_it_has(tmp_path, capsys, monkeypatch):
    fast = dispatch_run.simulated

    def slow(exp, recorded_by):  # each trace takes 0.5 s
        time.sleep(0.5)
        return fast(exp, recorded_by)

    monkeypatch.setattr(dispatch_run, "simulated", slow)
    # each D trace is estimated at ~1.7 s (a new kernel each) and 8 s are kept for writing
    assert dispatch_run.main(["--out", str(tmp_path), "--dry-run", "--only", "D",
                              "--budget-s", "10.3"]) == 0
    index = read_index(tmp_path)
    assert index["info"]["stopped_early"].startswith("budget")
    assert 1 <= index["info"]["recorded"] < 4 == index["info"]["planned"]
    assert len(load_bundle(tmp_path)) == index["info"]["recorded"]
    assert "stopping: budget" in capsys.readouterr().out
