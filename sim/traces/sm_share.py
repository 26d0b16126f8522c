"""Which SMs of a chip move their blocks' bytes faster, read off recorded traces (the "dram_share"
of a GPU's data, docs/GPU_DATA.md): in a long bandwidth-bound launch every freed slot refills at
once, so an SM that moves bytes faster runs more blocks. Per trace, each SM's block count over the
mean; over the traces, the mean of those; the SMs above the largest gap in the sorted means are
the faster ones. Only traces whose per-SM counts vary (coefficient of variation >= MIN_CV) and that
hold at least MIN_BLOCKS_PER_SM blocks per SM are read: a launch the port does not bound runs the
same count on every SM whatever its share.

It reads recorded bundles, and `main.py calibrate` its own add traces.
"""

from __future__ import annotations

import numpy as np

MIN_CV = 0.08
MIN_BLOCKS_PER_SM = 32


def relative_counts(traces: dict, prefix: str = "", min_cv: float = MIN_CV,
                    min_blocks_per_sm: int = MIN_BLOCKS_PER_SM) -> dict[str, np.ndarray]:
    """Each read trace's blocks per SM over their mean (name -> array over the SMs)."""
    out = {}
    for name, tr in traces.items():
        if not name.startswith(prefix) or len(tr.sm) == 0:
            continue
        sms = int(tr.meta.get("sm_count") or tr.sm.max() + 1)
        count = np.bincount(tr.sm.astype(np.int64), minlength=sms).astype(float)
        if count.size == sms and count.mean() >= min_blocks_per_sm \
                and count.std() / count.mean() >= min_cv:
            out[name] = count / count.mean()
    return out


def faster_sms(rows: dict[str, np.ndarray]) -> list[int]:
    """The SMs above the largest gap in the sorted mean relative counts."""
    mean = np.mean(list(rows.values()), axis=0)
    order = np.argsort(mean)[::-1]
    cut = int(np.argmax(-np.diff(mean[order]))) + 1
    return sorted(int(s) for s in order[:cut])


def count_ratio(count: np.ndarray, faster: list[int]) -> float:
    """Blocks per SM on the faster SMs over those on the rest."""
    on = np.zeros(count.size, bool)
    on[faster] = True
    return float(count[on].mean() / count[~on].mean())


def measured_share(traces: dict) -> tuple[list[int], float, list[str]] | None:
    """(the faster SMs, the largest count ratio over the read traces, the traces read), or None
    where no trace was long and bandwidth-bound enough to tell or every SM ran alike."""
    rows = relative_counts(traces)
    if not rows:
        return None
    fast = faster_sms(rows)
    if len(fast) >= next(iter(rows.values())).size / 2:  # no small group stands out
        return None
    return fast, max(count_ratio(c, fast) for c in rows.values()), sorted(rows)
