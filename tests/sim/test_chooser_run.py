"""kernels.fitting.chooser_summary's summary (benchmarks/chooser_run.py prints it) and the
throughput scale between two machines' runs, on recorded chooser runs."""

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
from kernels.fitting import chooser_summary  # noqa: E402
from kernels.fitting.tiles_fit import this_run_scale  # noqa: E402

RUN_I = json.loads((ROOT / "tests" / "data" / "h200_matmul_tiles" / "pointer_heldout_and_pairs.json").read_text())


RUN_M = json.loads((ROOT / "tests" / "data" / "h200_matmul_tiles" / "tma_fit.json")
                   .read_text())


def test_the_scale_is_the_median_over_sizes_against_the_run_the_tile_fit_was_made_on():
    """The fitting run carries the efficiencies' machine. One size is fragile: the TMA run's cuBLAS
    at 8192^3 was 0.864 x the fitting run's, its median over the 59 sizes 0.992."""
    scale = this_run_scale(RUN_M)
    assert scale["value"] == pytest.approx(0.9923, abs=1e-3) and scale["sizes"] == 59
    assert scale["cublas_8192_only"] == pytest.approx(0.864, abs=1e-3)
    assert "pointer_fit" in scale["how"]
    assert this_run_scale(RUN_I)["value"] == pytest.approx(1.0029, abs=1e-3)


def test_run_ms_summary_with_the_median_scale(capsys):
    chooser_summary.print_summary({**RUN_M, "scale": this_run_scale(RUN_M)})
    line = next(x for x in capsys.readouterr().out.splitlines() if "fitted candidates'" in x)
    assert "scale 0.992" in line and ": 513/531; raw 508/531" in line and "say 0.864" in line


def test_the_summary_tells_the_pick_from_the_repeat_noise(capsys):
    chooser_summary.print_summary({**RUN_I, "scale": this_run_scale(RUN_I)})
    out = capsys.readouterr().out
    assert "auto / best of its candidates, min and median" in out and "54/57" in out
    line = next(x for x in out.splitlines() if "the pick / best candidate, same rounds" in x)
    assert line.rstrip().endswith("0.64; >= 0.97 at 58/59")
    line = next(x for x in out.splitlines() if "auto vs the same launch" in x)
    assert line.rstrip().endswith("2.1%, 45.8%")  # N=2304: 70 vs 129 us


def test_median_of_rounds():
    assert chooser_summary.median([3.0, 1.0, 2.0]) == 2.0 and chooser_summary.median([1.0, 2.0]) == 1.5
    assert chooser_summary.spread([1.0, 1.1, 1.0]) == pytest.approx(0.1)
