"""The default tier's share of a sweep over every GPU preset: the fitted GPU (the H200) and the two
that differ most from it (the T4: Turing, 40 SMs, 64 KiB of shared memory; the B200: Blackwell,
the most SMs) run in every run, each other preset in the slow tier (`pytest -m slow`)."""

from __future__ import annotations

import pytest

from sim.rules.devices import presets

EVERY_RUN = ("H200", "T4", "B200")


def every_preset() -> list:
    """`presets()` as parametrize values, those outside EVERY_RUN marked slow."""
    return [name if name in EVERY_RUN else pytest.param(name, marks=pytest.mark.slow)
            for name in presets()]
