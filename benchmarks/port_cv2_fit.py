"""Choose the memory port's service variability (sim.model.latency.PORT_CV2) on the FIT set of
benchmarks/NOTES-bandwidth.md, and print the grid. No GPU needed:

    python3 benchmarks/port_cv2_fit.py

FIT set: the V100's rows of benchmarks/published/gpu_stream_occupancy.csv (bandwidth against
occupancy on another card) and the H200 rows benchmarks/predict_check.py already calls fitted
(add_numba_naive at 2^26, the launch overhead's fit rows). The score is the mean of the two sets'
rms errors of predicted GB/s, each set weighing the same. Every other published GPU, the
article's table, the H200 occupancy sweep and predict_check's held-out rows are the TEST set.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import sim.model.latency as latency  # noqa: E402
import sim.model.launch_model as launch_model  # noqa: E402
from benchmarks.published_check import loads_of, predict_us, published_rows  # noqa: E402
from benchmarks.predict_check import fitted, predicted, rows  # noqa: E402
from sim.rules.devices import preset  # noqa: E402

GRID = (0.0, 0.125, 0.25, 0.375, 0.5, 0.75, 1.0)
FIT_GPU = "V100"


def fit_errors() -> tuple[np.ndarray, np.ndarray]:
    published = []
    for r in published_rows():
        if r["gpu"] != FIT_GPU:
            continue
        nbytes = float(r["bytes_moved"])
        t = predict_us(preset(r["preset"]), int(r["elements"]), int(r["threads_per_block"]),
                       int(r["blocks_per_sm"]), nbytes, loads_of(r))
        published.append(nbytes / t / 1e3 / float(r["measured_gbps"]) - 1)
    h200 = preset("H200")
    own = [predicted(h200, m) / m["bandwidth_gbps"] - 1 for m in rows() if fitted(m)]
    return np.array(published), np.array(own)


def score(port_cv2: float) -> tuple[float, float]:
    """(rms on the V100 rows, rms on the H200 fitted rows) with the port's cv^2 set to this."""
    saved = latency.mean_value_analysis.__defaults__
    latency.mean_value_analysis.__defaults__ = ((latency.DISPATCH_CV2, port_cv2),)
    launch_model._solved.cache_clear()  # the block cost caches its MVA
    try:
        v, h = fit_errors()
    finally:
        latency.mean_value_analysis.__defaults__ = saved
        launch_model._solved.cache_clear()
    return float(np.sqrt(np.mean(v ** 2))), float(np.sqrt(np.mean(h ** 2)))


def main() -> int:
    print(f"port cv^2 | {FIT_GPU} occupancy rms | H200 fitted rows rms | mean (in use: {latency.PORT_CV2})")
    for c in GRID:
        v, h = score(c)
        print(f"{c:9.3f} | {v:19.2%} | {h:20.2%} | {(v + h) / 2:.2%}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
