"""The fits and checks of the model's constants on recorded runs (tests/data) and what records
them: each module writes or scores product data under resources/ and runs without a GPU unless
its docstring says otherwise (`python3 -m kernels.fitting.NAME`; benchmarks/ holds thin entry
points for the ones a maintainer re-runs)."""

from __future__ import annotations

from pathlib import Path

from sim.inputs.files import read_json_file

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"
MAX_RUN_BYTES = 16 * 2**20  # the largest recorded run (a chooser run) is under 1 MB


def read_json(path):
    """A recorded run's JSON, through the app's one reading boundary."""
    return read_json_file(path, "a recorded run", MAX_RUN_BYTES)
