"""`python3 benchmarks/sm_share.py [ARGS]`: kernels/fitting/sm_share.py, whose docstring says what it does."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kernels.fitting.sm_share import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
