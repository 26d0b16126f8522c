"""Kernel tests run on whatever is here; see kernels_env.py. Tests marked `gpu` skip with a reason
when there is no CUDA GPU."""

import pytest
from kernels_env import AVAILABLE, HAS_GPU


def pytest_collection_modifyitems(config, items):
    skip = pytest.mark.skip(reason=f"needs a CUDA GPU: {AVAILABLE['torch'].reason}")
    for item in items:
        if "gpu" in item.keywords and not HAS_GPU:
            item.add_marker(skip)
