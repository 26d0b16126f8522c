"""Parsing and printing the numbers users type: counts like 2^20 or 1e6, sizes like 48KiB.

Every number a user types goes through `parse_number` (here) and comes out as an exact int or a
finite float inside stated bounds: no digit string, exponent, infinity or NaN ever reaches the
arithmetic behind it. Values that arrive already parsed (JSON files, saved settings) are
checked by `sim.inputs.args`, with the same bounds.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction

from sim.inputs.errors import UserError

MAX_TEXT = 64  # characters in one typed number; more is a paste accident, not a number
MAX_COUNT = 2**63 - 1  # every count fits an int64, so numpy arithmetic on it cannot wrap
MAX_EXPONENT = 30  # 1e30 already overflows every bound here; 1e999999 must not cost anything
MAX_LIST = 256  # values in one list (--sizes): more is not a sweep anyone can wait for

_SUFFIX = {"": 1, "k": 10**3, "m": 10**6, "g": 10**9}
_BYTES = {"": 1, "b": 1, "k": 1024, "kb": 1000, "kib": 1024, "m": 1024**2, "mb": 1000**2,
          "mib": 1024**2, "g": 1024**3, "gb": 1000**3, "gib": 1024**3}
_DECIMAL = re.compile(r"([+-]?)(\d*\.?\d*)(?:e([+-]?\d+))?\s*([a-z]*)")
_POWER = re.compile(r"(\d+)\s*(?:\^|\*\*)\s*(\d+)")


def _clean(text) -> str:
    return str(text).strip().lower().replace("_", "").replace(",", "")


def parse_number(text, what: str, *, units: dict[str, int] | None = None, integer: bool = True,
                 lo: float | None = None, hi: float | None = MAX_COUNT, hint: str = ""):
    """The one parser behind every typed number: '1e6', '2^20', '4M', '48KiB', '0.5'.

    Exact (no float rounding of '12345678901234567891'), bounded in length, exponent and value;
    `units` maps suffixes to multipliers. Returns an int when `integer`, else a finite float."""
    units = _SUFFIX if units is None else units
    s = _clean(text)
    hint = hint or ("try 1000000, 1e6, 2^20 or 4M" if integer else "try 10 or 2.5")
    if len(s) > MAX_TEXT:
        raise UserError(f"{what} {str(text)[:20]!r}... is {len(s)} characters long; no number here is")
    value = _power(s, what, hi) if _POWER.fullmatch(s) else _decimal(s, what, units, hint)
    if integer and value.denominator != 1:
        raise UserError(f"{what} must be a whole number, got {text!r}")
    if lo is not None and value < lo:
        raise UserError(f"{what} must be at least {_fmt(lo)}, got {text!r}")
    if hi is not None and value > hi:
        raise UserError(f"{what} must be at most {_fmt(hi)}, got {text!r}")
    return int(value) if integer else float(value)


def _power(s: str, what: str, hi) -> Fraction:
    m = _POWER.fullmatch(s)
    base, exp = int(m.group(1)), int(m.group(2))
    limit = hi if hi is not None else MAX_COUNT
    if base > 1 and (base.bit_length() - 1) * exp > max(int(limit), 1).bit_length():
        raise UserError(f"{what} {s!r} is far too large (at most {_fmt(limit)})")
    return Fraction(base**exp)


def _decimal(s: str, what: str, units: dict[str, int], hint: str) -> Fraction:
    if re.fullmatch(r"[+-]?(inf|infinity|nan)", s):
        raise UserError(f"{what} must be a finite number, got {s!r}")
    m = _DECIMAL.fullmatch(s)
    if not m or not any(c.isdigit() for c in m.group(2)) or m.group(4) not in units:
        raise UserError(f"{what} {s!r} is not a number ({hint})")
    exp = int(m.group(3) or 0) if len(m.group(3) or "") <= 4 else 10**9
    if abs(exp) > MAX_EXPONENT:
        raise UserError(f"{what} {s!r}: an exponent of {exp if exp != 10**9 else 'that size'} "
                        f"is out of range (at most {MAX_EXPONENT})")
    value = Fraction(m.group(2)) * Fraction(10) ** exp * units[m.group(4)]
    return -value if m.group(1) == "-" else value


def _fmt(v) -> str:
    return f"{v:,}" if float(v).is_integer() else f"{v:g}"


def parse_count(text, what: str = "count", lo: int = -MAX_COUNT, hi: int = MAX_COUNT) -> int:
    """'1000000', '1_000_000', '1e6', '2^20', '2**20', '4M' -> int."""
    return parse_number(text, what, lo=lo, hi=hi)


def parse_bytes(text, what: str = "size", lo: int = -MAX_COUNT, hi: int = MAX_COUNT) -> int:
    """'49152', '48K', '48KiB', '100kb', '1.5K' -> bytes (K/M/G alone are binary)."""
    return parse_number(text, what, units=_BYTES, lo=lo, hi=hi,
                        hint="try 49152, 48K or 48KiB")


def parse_real(text, what: str = "value", lo: float | None = None, hi: float | None = None) -> float:
    """'10', '2.5', '1e-3' -> a finite float in [lo, hi] ('nan', 'inf', '1e999' are refused)."""
    value = parse_number(text, what, integer=False, lo=lo, hi=hi)
    if not math.isfinite(value):  # pragma: no cover - bounded exponents cannot overflow a float
        raise UserError(f"{what} must be a finite number, got {text!r}")
    return value


def fmt_bytes(n: float) -> str:
    """Binary units, as the article and the CUDA tools print them: 96 MiB, 44 GiB, 48 KiB."""
    for unit, size in (("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024)):
        if n >= size:
            value = n / size
            return f"{value:.0f} {unit}" if value == int(value) or value >= 10 else f"{value:.1f} {unit}"
    return f"{int(n)} B"


def parse_count_list(text, what: str = "sizes", upper: int | None = 2**31) -> list[int]:
    """A list of counts, sorted and de-duplicated: '2^20,2^24', '1e6; 1048583', a range of powers
    of two '2^16..2^28' (every doubling) or '2^16..2^28 x4' (every 4x). At most MAX_LIST values."""
    out: list[int] = []
    hi = upper if upper is not None else MAX_COUNT
    for part in str(text).replace(";", ",").split(","):
        part = part.strip()
        if not part:
            continue
        part, _, step = part.partition(" x")
        if ".." in part:
            lo_text, _, hi_text = part.partition("..")
            lo, top = parse_count(lo_text, what, hi=hi), parse_count(hi_text, what, hi=hi)
            factor = parse_count(step, "range step", hi=hi) if step else 2
            if lo < 1 or lo > top or factor < 2:
                raise UserError(f"{what}: {part!r} is not an increasing range of positive counts")
            while lo <= top and len(out) <= MAX_LIST:
                out.append(lo)
                lo *= factor
        else:
            out.append(parse_count(part, what, hi=hi))
        if len(out) > MAX_LIST:
            raise UserError(f"{what}: more than {MAX_LIST} values; measure fewer at a time")
    if not out:
        raise UserError(f"no {what} given")
    if min(out) < 1:
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
