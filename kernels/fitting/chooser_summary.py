"""benchmarks/chooser_run.py's summary: the issue's bars from one run's rows, printed.

replaced_lines (first for old_flags_heldout.json): each candidate beside an extra of its kernel,
tile and warps (there the candidate with TMA stream-K's flatten=False + warp_specialize declaration
over it as declared before, same rounds).

stream_k_lines (first for stream_k_fit.json) adds the stream-K lines: per target size, cuBLAS's
speed over pointer stream-K, the best TMA stream-K launch (candidates and extras), TMA-persistent
and matmul_auto; and TMA stream-K over pointer stream-K at the same tile, the measurement its
assumed efficiency waits for.
"""

from __future__ import annotations

from sim.model.next_step import NO_CLEAR_CHANGE, direction

# the sizes of the H200 matmul sawtooth's dips (N at M=1024, K=8192), where tiles are told apart
DIPS = (3328, 4352, 5376, 6400, 8704, 10752, 12800)


def median(values) -> float:
    v = sorted(values)
    return v[len(v) // 2] if len(v) % 2 else (v[len(v) // 2 - 1] + v[len(v) // 2]) / 2


def _run_l_dips() -> tuple:
    return DIPS


def spread(values) -> float:
    return (max(values) - min(values)) / median(values)


def _speed(row: dict, key: str, size: dict | None = None) -> float:
    """cuBLAS's time (the size's, default the row's own) over a launch's: above 1, it is faster."""
    return (size or row)["cublas_ms"] / row[key]


def next_step_lines(result: dict) -> list[tuple[str, str]]:
    """The next step's pairs: direction (2% dead band) and magnitude, and the noise."""
    lines = []
    ns = [r for r in result.get("next_step", []) if "error" not in r]
    if "next_step" in result:
        right = sum(direction(r["predicted_change"]) == direction(r["measured_change"]) for r in ns)
        within = sum(abs((1 + r["predicted_change"]) / (1 + r["measured_change"]) - 1) <= 0.10
                     for r in ns)
        lines += [
            ("next step: direction right / magnitude within 10%",
             f"{right}/{len(ns)}, {within}/{len(ns)} ({len(result['next_step']) - len(ns)} failed)"),
            ("next step: a launch's spread over its rounds (max - min over median), largest",
             f"{max((spread(r[k]) for r in ns for k in ('before_rounds_ms', 'after_rounds_ms') if k in r), default=float('nan')):.1%}"
             f" (the direction test's dead band: {NO_CLEAR_CHANGE:.0%})")]
    return lines


def print_summary(result: dict) -> None:
    rows, squares = result["sawtooth"], result["squares"]
    if not rows + squares:  # --only-next-step
        _print(next_step_lines(result) + [("wall", f"{result['wall_s']:.0f} s")])
        return
    scale = result["scale"]["value"]
    vs_best = [r["best_candidate_ms"] / r["auto_ms"] for r in rows]
    vs_variants = [r["best_variant_default_tile_ms"] / r["auto_ms"] for r in rows
                   if r["best_variant_default_tile_ms"]]
    vs_cublas = [_speed(r, "auto_ms") for r in rows]
    # the chooser alone: its pick's time over the best candidate's, both from the same rounds;
    # and auto against its own candidate (the same launch measured apart): the noise
    picked = [(r["best_candidate_ms"], next(c["measured_ms"] for c in r["candidates"]
                                            if c["label"] == r["chosen"]), r["auto_ms"])
              for r in rows + squares]
    pick_vs_best = [b / c for b, c, _ in picked]
    repeat = sorted(abs(a / c - 1) for _, c, a in picked)
    # cuBLAS's own dips: at least 5% below the mean of its two neighbours (256 apart)
    from kernels.fitting.tiles_fit import cublas_dips

    dips = cublas_dips(rows)
    targets = result.get("dips") or _run_l_dips()
    run_l_dips = [r for r in rows if r["N"] in targets]
    # predictions: of the candidates whose efficiency was fitted, and apart the assumed ones
    pts = [c for r in rows + squares for c in r["candidates"] if not c.get("efficiency_assumed")]
    raw = sum(abs(c["predicted_ms"] / c["measured_ms"] - 1) <= 0.10 for c in pts)
    scaled = sum(abs(c["predicted_ms"] / scale / c["measured_ms"] - 1) <= 0.10 for c in pts)
    assumed = [c for r in rows + squares for c in r["candidates"] if c.get("efficiency_assumed")]
    assumed_ok = sum(abs(c["predicted_ms"] / scale / c["measured_ms"] - 1) <= 0.10 for c in assumed)

    def med(values):
        return f"{median(values):.2f}" if values else "n/a"

    lines = [
        ("sizes in the sawtooth", f"{len(rows)}" + (f" ({result['sawtooth_cut']})"
                                                   if "sawtooth_cut" in result else "")),
        ("auto / best of its candidates, min and median",
         f"{min(vs_best, default=float('nan')):.2f}, {med(vs_best)}; >= 0.97 at "
         f"{sum(v >= 0.97 for v in vs_best)}/{len(vs_best)}"),
        ("the pick / best candidate, same rounds (sawtooth + squares), min",
         f"{min(pick_vs_best):.2f}; >= 0.97 at {sum(v >= 0.97 for v in pick_vs_best)}/"
         f"{len(pick_vs_best)}"),
        ("auto vs the same launch as a candidate: |difference| median, max",
         f"{repeat[len(repeat) // 2]:.1%}, {repeat[-1]:.1%}"),
        ("auto / best of 3 pointer variants at 128x256x64, min",
         f"{min(vs_variants, default=float('nan')):.2f}; >= 0.97 at "
         f"{sum(v >= 0.97 for v in vs_variants)}/{len(vs_variants)}"),
        ("auto / cuBLAS in the sawtooth, median", f"{med(vs_cublas)}; >= 1 at "
                                                  f"{sum(v >= 1 for v in vs_cublas)}"),
        ("where cuBLAS dips >= 5% below its neighbours here: auto >= cuBLAS",
         f"{sum(vs_cublas[i] >= 1 for i in dips)}/{len(dips)} (N = "
         f"{', '.join(str(rows[i]['N']) for i in dips) or 'none'})"),
        *[(f"{s['M']}^3: auto / cuBLAS; best TMA / cuBLAS",
           f"{_speed(s, 'auto_ms'):.3f} ({s['chosen']}); "
           + (f"{_speed(s, 'best_tma_ms'):.3f} ({s['best_tma']})" if "best_tma" in s else "n/a"))
          for s in squares],
        *[(f"target dip N={r['N']}: auto / cuBLAS; best TMA / cuBLAS",
           f"{_speed(r, 'auto_ms'):.3f}; "
           + (f"{_speed(r, 'best_tma_ms'):.3f} ({r['best_tma']})" if "best_tma" in r else "n/a"))
          for r in run_l_dips],
        ("TMA launches that failed to compile or run",
         "; ".join(sorted({f"{e['label']}: {e['error'][:60]}" for r in rows + squares
                           for e in r.get("extras_failed", [])})) or "none"),
        ("fitted candidates' predictions within 10%",
         f"with this run's scale {scale:.3f} ({result['scale']['how']}): {scaled}/{len(pts)}; "
         f"raw {raw}/{len(pts)}" + (f"; cuBLAS 8192^3 alone would say "
                                    f"{result['scale']['cublas_8192_only']:.3f}"
                                    if "cublas_8192_only" in result["scale"] else "")),
        ("assumed candidates' predictions within 10%, with the scale",
         f"{assumed_ok}/{len(assumed)}"),
    ]
    lines += next_step_lines(result)
    lines += replaced_lines(rows + squares)
    lines += stream_k_lines(rows + squares)
    lines.append(("wall", f"{result['wall_s']:.0f} s"))
    _print(lines)


def _print(lines: list[tuple[str, str]]) -> None:
    width = max(len(k) for k, _ in lines)
    print("\nSummary (benchmarks/chooser_run.py)")
    for k, v in lines:
        print(f"  {k:<{width}}  {v}")


def replaced_lines(rows: list) -> list[tuple[str, str]]:
    """Each extra beside the candidate of the same kernel, tile and warps (other loop flags or
    stages), the candidate's speed over the extra's in the same rounds (old_flags_heldout.json: TMA
    stream-K's flatten=False + warp_specialize declaration over the one before it)."""
    pairs: dict = {}
    for r in rows:
        for e in r.get("extras", []):
            p = e["params"]
            tile, warps = f"{p['BLOCK_M']}x{p['BLOCK_N']}x{p['BLOCK_K']}", f" w{p['num_warps']} "
            c = next((c for c in r["candidates"] if c["variant"] == e["variant"]
                      and c["tile"] == tile and warps in c["label"]), None)
            if c is not None:
                pairs.setdefault((c["label"], e["label"]), []).append(
                    e["measured_ms"] / c["measured_ms"])
    return [(f"{now} / {then}, same rounds", f"median {median(v):.3f}, min {min(v):.3f}, max "
             f"{max(v):.3f} over {len(v)} sizes") for (now, then), v in sorted(pairs.items())]


def _launches(row: dict) -> list[dict]:
    return row["candidates"] + row.get("extras", [])


def stream_k_lines(rows: list) -> list[tuple[str, str]]:
    """Per size that ran TMA stream-K extras (the targets), each family's best / cuBLAS; over
    every size, TMA stream-K / pointer stream-K at each tile, same rounds."""
    lines = []
    for r in (r for r in rows if any(e["variant"] == "tma_stream_k" for e in r.get("extras", []))):
        best = {}
        for c in _launches(r):
            if c["variant"] in ("stream_k", "tma_stream_k", "tma_persistent"):
                if c["variant"] not in best or c["measured_ms"] < best[c["variant"]]["measured_ms"]:
                    best[c["variant"]] = c
        text = "; ".join(f"{v} {_speed(best[v], 'measured_ms', r):.3f}" + (
            f" ({best[v]['label'].split(' ', 1)[1]})" if v == "tma_stream_k" else "")
            for v in ("stream_k", "tma_stream_k", "tma_persistent") if v in best)
        lines.append((f"{r['M']}x{r['N']}x{r['K']}: best / cuBLAS",
                      f"auto {_speed(r, 'auto_ms'):.3f}; {text}"))
    pairs: dict = {}
    for r in rows:
        pointer = {c["tile"]: c["measured_ms"] for c in r["candidates"] if c["variant"] == "stream_k"}
        for c in r["candidates"]:
            if c["variant"] == "tma_stream_k" and c["tile"] in pointer:
                pairs.setdefault(c["tile"], []).append(pointer[c["tile"]] / c["measured_ms"])
    for tile, gains in sorted(pairs.items()):
        lines.append((f"TMA stream-K / pointer stream-K speed, {tile}",
                      f"median {median(gains):.3f}, min {min(gains):.3f}, max {max(gains):.3f} "
                      f"over {len(gains)} sizes"))
    return lines
