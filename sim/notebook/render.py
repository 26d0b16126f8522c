"""What the notebook's results draw: small HTML tables and an inline SVG of blocks on SMs over time.

Plain strings, made with numpy and the standard library (no plotting package, no Qt), so a result
displays itself in Jupyter, Colab or any HTML page, and a test can parse it.
"""

from __future__ import annotations

import html

import numpy as np

MAX_RECTS = 6000  # blocks drawn in one SVG: past this, the first SMs only (the caption says so)
WAVE_COLOURS = ("#4c72b0", "#dd8452", "#55a868", "#c44e52", "#8172b3", "#937860", "#da8bc3",
                "#8c8c8c", "#ccb974", "#64b5cd")


def esc(value) -> str:
    return html.escape(str(value))


def table(header, rows, caption: str = "", cls: str = "") -> str:
    """An HTML table: `header` a sequence of column names, `rows` sequences of cells."""
    head = "".join(f"<th style='text-align:left;padding:2px 8px'>{esc(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td style='padding:2px 8px'>{esc(c)}</td>" for c in row)
                   + "</tr>" for row in rows)
    cap = f"<caption style='text-align:left;font-weight:bold'>{esc(caption)}</caption>" if caption else ""
    klass = f" class='{esc(cls)}'" if cls else ""
    return f"<table{klass} style='border-collapse:collapse;margin:4px 0'>{cap}<tr>{head}</tr>{body}</table>"


def card_html(card) -> str:
    """The speed-of-light card (sim.model.speed_of_light.SpeedOfLight): bound, share, the gap's parts."""
    rows = [("speed of light", f"{card.bound_us:,.3f} µs", f"{card.bound}: {card.floor_text()}"),
            ("predicted whole launch", f"{card.time_us:,.3f} µs", f"{card.percent:.0f}% of the speed of light")]
    if card.measured_us:
        rows.append(("measured", f"{card.measured_us:,.3f} µs",
                     f"{card.measured_percent:.0f}% of the speed of light"))
    rows += [(f"  + {card.part_title(k)}", f"{v:,.3f} µs", "part of the gap")
             for k, v in card.parts.items() if abs(v) >= 5e-4]
    return table(("", "time", "what"), rows, "The parts of the time", "speed-of-light")


def timeline_svg(timeline, *, width: int = 640, plot_height: int = 240, title: str = "") -> str:
    """Every block of a schedule (sim.schedule.timeline.Timeline) as a bar on its SM's row (its
    slot a sub-row), coloured by wave, with the tail's start dashed. Past MAX_RECTS blocks only
    the first SMs are drawn."""
    tl = timeline
    n_sms = int(tl.sm_count)
    if tl.n_blocks > MAX_RECTS:
        per_sm = max(1, int(np.ceil(tl.n_blocks / max(n_sms, 1))))
        n_sms = max(1, MAX_RECTS // per_sm)
    keep = np.flatnonzero(tl.block_sm < n_sms)
    lanes = max(int(tl.lanes), 1)
    left, top, bottom = 44, 18 if title else 6, 26
    plot_w, plot_h = width - left - 8, float(plot_height)
    sm_h = plot_h / n_sms
    height = int(np.ceil(top + plot_h + bottom))
    span = float(tl.makespan_us) or 1.0
    x = left + tl.start_us[keep] / span * plot_w
    w = np.maximum((tl.end_us[keep] - tl.start_us[keep]) / span * plot_w, 0.3)
    lane_h = sm_h / lanes
    y = top + tl.block_sm[keep] * sm_h + tl.block_lane[keep] * lane_h
    colour = tl.wave[keep] % len(WAVE_COLOURS)
    bar_h = max(lane_h * 0.9, 0.4)
    rects = "".join(  # one path per colour: a bar is "M x y h w v h h -w z"
        f"<path fill='{WAVE_COLOURS[c]}' d='"
        + "".join(f"M{a:.1f} {b:.2f}h{d:.2f}v{bar_h:.2f}h{-d:.2f}z"
                  for a, b, d in zip(x[colour == c], y[colour == c], w[colour == c])) + "'/>"
        for c in np.unique(colour))
    ticks = "".join(
        f"<line x1='{left + t / span * plot_w:.1f}' y1='{top + plot_h:.1f}' "
        f"x2='{left + t / span * plot_w:.1f}' y2='{top + plot_h + 4:.1f}' stroke='#444'/>"
        f"<text x='{left + t / span * plot_w:.1f}' y='{top + plot_h + 15:.1f}' font-size='10' "
        f"text-anchor='middle'>{t:,.3g}</text>" for t in _ticks(span))
    tail = float(tl.tail_start_us)
    tail_line = (f"<line x1='{left + tail / span * plot_w:.1f}' y1='{top}' "
                 f"x2='{left + tail / span * plot_w:.1f}' y2='{top + plot_h:.1f}' stroke='#c00' "
                 "stroke-dasharray='3,2'><title>tail starts</title></line>") if tail < span else ""
    shown = f"SMs 0–{n_sms - 1} of {tl.sm_count}" if n_sms < tl.sm_count else f"{tl.sm_count} SMs"
    head = (f"<text x='{left}' y='12' font-size='11' font-weight='bold'>{esc(title)}</text>"
            if title else "")
    return (f"<svg xmlns='http://www.w3.org/2000/svg' width='{width}' height='{height}' "
            f"viewBox='0 0 {width} {height}' font-family='sans-serif'>"
            f"<title>blocks per SM over time ({esc(shown)})</title>{head}"
            f"<rect x='{left}' y='{top}' width='{plot_w}' height='{plot_h:.1f}' fill='#f4f4f4'/>"
            f"{rects}{tail_line}{ticks}"
            f"<text x='{left - 4}' y='{top + 9}' font-size='10' text-anchor='end'>SM 0</text>"
            f"<text x='{left - 4}' y='{top + plot_h:.1f}' font-size='10' text-anchor='end'>"
            f"{n_sms - 1}</text>"
            f"<text x='{left + plot_w}' y='{height - 2}' font-size='10' text-anchor='end'>"
            f"µs from the first block ({esc(shown)}; colour: wave; dashed: the tail)</text></svg>")


def _ticks(span: float) -> list[float]:
    """About five round times in [0, span]."""
    raw = span / 5
    step = 10 ** np.floor(np.log10(raw))
    step *= next(m for m in (1, 2, 5, 10) if raw <= m * step)
    return list(np.arange(0.0, span + step * 1e-9, step))


def page(title: str, *parts: str) -> str:
    """One result's HTML: a heading and its parts, in a div of its own."""
    return (f"<div class='warpscope'><h4 style='margin:4px 0'>{esc(title)}</h4>"
            + "".join(parts) + "</div>")
