"""benchmarks/chooser_run.py's summary and throughput scale, on run I as recorded."""

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
import chooser_run  # noqa: E402

RUN_I = json.loads((ROOT / "benchmarks" / "run_i" / "chooser_h200.json").read_text())


def test_the_scale_is_against_the_run_the_tile_fit_was_made_on():
    """Run H carries the efficiencies' machine: run I's cuBLAS 8192^3 736 over run H's 734, not
    over matmul_h200.json's 704 (that counted run H's machine twice)."""
    scale = chooser_run.throughput_scale(RUN_I["squares"][-1])
    assert scale["value"] == pytest.approx(1.0034, abs=1e-3)
    assert "run_h" in scale["how"]


def test_the_summary_tells_the_pick_from_the_repeat_noise(capsys):
    chooser_run.print_summary({**RUN_I, "scale": chooser_run.throughput_scale(RUN_I["squares"][-1])})
    out = capsys.readouterr().out
    assert "auto / best of the 9 candidates, min and median" in out and "54/57" in out
    line = next(x for x in out.splitlines() if "the pick / best candidate, same rounds" in x)
    assert line.rstrip().endswith("0.64; >= 0.97 at 58/59")
    line = next(x for x in out.splitlines() if "auto vs the same launch" in x)
    assert line.rstrip().endswith("2.1%, 45.8%")  # N=2304: 70 vs 129 us


def test_median_of_rounds():
    assert chooser_run.median([3.0, 1.0, 2.0]) == 2.0 and chooser_run.median([1.0, 2.0]) == 1.5
    assert chooser_run.spread([1.0, 1.1, 1.0]) == pytest.approx(0.1)
