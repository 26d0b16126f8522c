"""kernels.fitting.dispatch_score on a bundle of recorded traces, without a GPU."""

import pathlib

from kernels.fitting import dispatch_score as score

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_score_a_recorded_set(tmp_path, capsys):
    """kernels.fitting.dispatch_score on a bundle of recorded traces: the bar, both schedules."""
    from sim.traces.trace_bundle import load_bundle, write_bundle

    traces = load_bundle(ROOT / "tests" / "data" / "h200_spin_fit")
    names = ["G-spin-w4-20us-2.2w", "B-sleep-w8-20us-3.3w"]
    write_bundle(tmp_path, [(n, "V", traces[n], {}) for n in names])
    assert score.main([str(tmp_path), "--json", str(tmp_path / "s.json")]) == 0
    out = capsys.readouterr().out
    assert "calibrated: 2 of 2 traces within the bar" in out
    assert "ideal: 1 of 2 traces within the bar" in out  # busy warps: the textbook is 41% off
    assert score.main([str(tmp_path / "missing")]) == 2
