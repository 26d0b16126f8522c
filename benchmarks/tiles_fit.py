"""`python3 benchmarks/tiles_fit.py [ARGS]`: kernels/fitting/tiles_fit.py, whose docstring says what it does."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kernels.fitting.tiles_fit import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
