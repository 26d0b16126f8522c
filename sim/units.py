"""Parsing and printing the numbers users type: counts like 2^20 or 1e6, sizes like 48KiB."""

from __future__ import annotations

import re

from sim.errors import UserError

_SUFFIX = {"": 1, "k": 10**3, "m": 10**6, "g": 10**9}
_BYTES = {"": 1, "b": 1, "k": 1024, "kb": 1000, "kib": 1024, "m": 1024**2, "mb": 1000**2,
          "mib": 1024**2, "g": 1024**3, "gb": 1000**3, "gib": 1024**3}


def parse_count(text, what: str = "count") -> int:
    """'1000000', '1_000_000', '1e6', '2^20', '2**20', '4M' -> int."""
    s = str(text).strip().lower().replace("_", "").replace(",", "")
    try:
        if m := re.fullmatch(r"(\d+)\s*(\^|\*\*)\s*(\d+)", s):
            if int(m.group(3)) > 64:
                raise UserError(f"{what} {text!r} is absurdly large")
            return int(m.group(1)) ** int(m.group(3))
        if m := re.fullmatch(r"(-?[\d.]+(?:e\d+)?)\s*([kmg]?)", s):
            value = float(m.group(1)) * _SUFFIX[m.group(2)]
            if value != int(value):
                raise UserError(f"{what} must be a whole number, got {text!r}")
            return int(value)
    except (ValueError, OverflowError):
        pass
    raise UserError(f"{what} {text!r} is not a number (try 1000000, 1e6, 2^20 or 4M)")


def parse_bytes(text, what: str = "size") -> int:
    """'49152', '48K', '48KiB', '100kb' -> bytes (K/M/G alone are binary)."""
    s = str(text).strip().lower().replace("_", "").replace(",", "")
    m = re.fullmatch(r"(-?[\d.]+)\s*([a-z]*)", s)
    if not m or m.group(2) not in _BYTES:
        raise UserError(f"{what} {text!r} is not a size in bytes (try 49152, 48K or 48KiB)")
    try:
        value = float(m.group(1)) * _BYTES[m.group(2)]
    except ValueError:  # '.', '1.2.3': digits and dots that are no number
        raise UserError(f"{what} {text!r} is not a size in bytes (try 49152, 48K or 48KiB)") from None
    if value != int(value):
        raise UserError(f"{what} must be a whole number of bytes, got {text!r}")
    return int(value)


def fmt_bytes(n: float) -> str:
    """Binary units, as the article and the CUDA tools print them: 96 MiB, 44 GiB, 48 KiB."""
    for unit, size in (("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024)):
        if n >= size:
            value = n / size
            return f"{value:.0f} {unit}" if value == int(value) or value >= 10 else f"{value:.1f} {unit}"
    return f"{int(n)} B"


def parse_count_list(text, what: str = "sizes", upper: int | None = 2**31) -> list[int]:
    """A list of counts, sorted and de-duplicated: '2^20,2^24', '1e6; 1048583', a range of powers
    of two '2^16..2^28' (every doubling) or '2^16..2^28 x4' (every 4x)."""
    out: list[int] = []
    for part in str(text).replace(";", ",").split(","):
        part = part.strip()
        if not part:
            continue
        part, _, step = part.partition(" x")
        if ".." in part:
            lo_text, _, hi_text = part.partition("..")
            lo, hi = parse_count(lo_text, what), parse_count(hi_text, what)
            factor = parse_count(step, "range step") if step else 2
            if lo < 1 or lo > hi or factor < 2:
                raise UserError(f"{what}: {part!r} is not an increasing range of positive counts")
            while lo <= hi:
                out.append(lo)
                lo *= factor
        else:
            out.append(parse_count(part, what))
    if not out:
        raise UserError(f"no {what} given")
    if min(out) < 1 or (upper is not None and max(out) > upper):
        limit = f"between 1 and {upper:,}" if upper is not None else "at least 1"
        raise UserError(f"{what} must be {limit}, got {text!r}")
    return sorted(set(out))


def fmt_us(t_us: float) -> str:
    """A duration given in µs, in the unit that reads best: 860.0 µs, 7.55 ms, 1.20 s."""
    if t_us >= 1e6:
        return f"{t_us / 1e6:,.2f} s"
    if t_us >= 1e3:
        return f"{t_us / 1e3:,.2f} ms"
    return f"{t_us:,.1f} µs"
