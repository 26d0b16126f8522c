"""The pinned NVRTC (nvidia-cuda-nvrtc-cu12, CUDA 12.9) is the one numba-cuda uses in the compile
child, also where PyPI's CUDA torch brings CUDA 13's (which dropped sm_70): docs/SETUP.md."""

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.patience import HANG_S

ROOT = Path(__file__).resolve().parents[2]

CHILD = """
from kernels.launching.compat import pin_nvrtc
pinned = pin_nvrtc()
import torch  # PyPI's CUDA build loads its CUDA 13 NVRTC here
from cuda.pathfinder import load_nvidia_dynamic_lib
from numba.cuda.cudadrv import nvrtc
print(pinned, load_nvidia_dynamic_lib("nvrtc").abs_path, (7, 0) in nvrtc.get_supported_ccs())
"""


def _has(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except ModuleNotFoundError:
        return False


@pytest.mark.skipif(not _has("nvidia.cuda_nvrtc"), reason="needs nvidia-cuda-nvrtc-cu12 "
                    "(requirements-test.txt)")
@pytest.mark.slow
def test_the_pinned_nvrtc_wins_and_targets_sm_70():
    done = subprocess.run([sys.executable, "-c", CHILD], cwd=ROOT, capture_output=True,
                          text=True, timeout=HANG_S, env={**os.environ, "NUMBA_ENABLE_CUDASIM": "0"})
    assert done.returncode == 0, done.stderr[-2000:]
    pinned, used, sm_70 = done.stdout.split()[-3:]
    assert pinned.endswith("nvidia/cuda_nvrtc/lib/libnvrtc.so.12") and used == pinned
    assert sm_70 == "True"
