"""`python3 benchmarks/dispatch_score.py [ARGS]`: kernels/fitting/dispatch_score.py, whose docstring says what it does."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kernels.fitting.dispatch_score import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
