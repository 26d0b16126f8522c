"""How far to trust a prediction: the weakest provenance among the per-GPU constants it used.

A launch-model prediction (sim.model.launch_model) names the constants it read in `sources`; each is a
sim.rules.physics.Constant that is "measured" (calibrated on this GPU), "published" (with its source) or
"assumed" (taken from another GPU). A chain is as strong as its weakest link, so the prediction's
level is the weakest of them, and its label names what that rests on: the GPU an assumption is
taken from, the sources of the published figures. `explain`, `simulate`, the Verdicts, Two GPUs
and the exports all print `confidence_of(...)`; nothing else words it.
"""

from __future__ import annotations

from dataclasses import dataclass

from sim.rules.devices import GpuSpec
from sim.rules.physics import Constant, cite, physics_for

STRENGTH = {"assumed": 0, "published": 1, "measured": 2}
NAMES = {"launch_overhead_us": "launch overhead", "dram_latency_ns": "DRAM latency",
         "copy_fraction": "copy bandwidth", "trip_overhead_ns": "trip overhead",
         "trip_load_ns": "per-load trip overhead", "first_wave_block_ns": "first wave's start interval", "l2_latency_ns": "L2 latency",
         "l2_gbps": "L2 bandwidth", "reduction_step_ns": "reduction step",  # the last three: chain_ns
         "tile_efficiency": "matmul tile efficiency",  # a matmul's fitted terms (matmul_choice)
         "compute_terms": "matmul compute terms",
         "stream_k_leftover_us": "stream-K leftover wave",
         "dram_share": "faster SMs' DRAM share"}  # sim.rules.physics.DramShare


@dataclass(frozen=True)
class Confidence:
    gpu: str  # the preset whose constants were used
    constants: tuple[tuple[str, Constant], ...]  # (name, constant), in the prediction's order

    @property
    def level(self) -> str:
        """"measured", "published" or "assumed": the weakest constant's provenance."""
        if not self.constants:
            return "assumed"
        return min((c.provenance for _, c in self.constants), key=STRENGTH.__getitem__)

    def _of(self, provenance: str) -> list[tuple[str, Constant]]:
        return [(n, c) for n, c in self.constants if c.provenance == provenance]

    @property
    def short(self) -> str:
        """A few words for beside a number: "measured on the H200", "published", "assumed from
        H200"."""
        if self.level == "measured":
            return f"measured on the {self.gpu}"
        if self.level == "published":
            return "published"
        donors = sorted({c.assumed_from for _, c in self._of("assumed") if c.assumed_from})
        return f"assumed from {', '.join(donors)}" if donors else "assumed"

    @property
    def label(self) -> str:
        """One line: the level, then every constant grouped by provenance (the published ones
        with their sources)."""
        parts = []
        for prov in ("assumed", "published", "measured"):
            group = self._of(prov)
            if not group:
                continue
            if prov == "assumed":
                names = ", ".join(f"{NAMES.get(n, n)} from {c.assumed_from or '?'}" for n, c in group)
            elif prov == "published":
                names = ", ".join(f"{NAMES.get(n, n)} ({cite(c.source)})" for n, c in group)
            else:
                names = ", ".join(f"{NAMES.get(n, n)} ({c.date})" if c.date else NAMES.get(n, n)
                                  for n, c in group)
            parts.append(f"{prov}: {names}")
        return f"Confidence: {self.short} (" + "; ".join(parts) + ")" if parts else \
            "Confidence: assumed (no per-GPU constant named)"

    def to_dict(self) -> dict:
        return {"level": self.level, "short": self.short, "gpu": self.gpu, "label": self.label,
                "constants": {n: {"provenance": c.provenance, "label": c.label}
                              for n, c in self.constants}}


def confidence_of(gpu: GpuSpec, names) -> Confidence:
    """The confidence of a prediction for `gpu` that used the constants `names` (a
    LaunchPrediction's `sources` works: its keys are the names), read the way the launch model
    reads them (sim.rules.physics.physics_for)."""
    ph = physics_for(gpu)
    return Confidence(ph.gpu, tuple((n, ph.constant(n)) for n in names))


def prediction_confidence(gpu: GpuSpec, prediction) -> Confidence:
    """A sim.model.launch_model.LaunchPrediction's confidence: the constants its `sources` name
    (a matmul's fitted terms are its `fitted` constants, not per-GPU ones)."""
    fitted = tuple(getattr(prediction, "fitted", ()))
    per_gpu = confidence_of(gpu, [n for n in prediction.sources if n not in dict(fitted)])
    return Confidence(per_gpu.gpu, per_gpu.constants + fitted)
