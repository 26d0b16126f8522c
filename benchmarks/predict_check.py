"""`python3 benchmarks/predict_check.py [ARGS]`: kernels/fitting/predict_check.py, whose docstring says what it does."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kernels.fitting.predict_check import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
