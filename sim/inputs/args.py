"""The input boundary: every value a user gives is checked here before any arithmetic sees it.

- Typed text (command-line options, the window's boxes): argparse types around `sim.inputs.units`'
  bounded parsers (`arg_count`, `arg_bytes`, `arg_real`, `arg_path`).
- Values inside files and saved settings (already parsed JSON): a schema of field kinds
  (`Whole`, `Real`, `Text`, `Flag`, `OneOf`, `Maybe`) checked field by field by `check_fields`,
  so a damaged file is one message naming the file and the field: "r.json: measurement 3:
  field 'regs_per_thread' must be a whole number 0..65,536, got 'abc'".
"""

from __future__ import annotations

import argparse
import math
import re
from dataclasses import dataclass
from typing import Any

from sim.inputs.errors import UserError
from sim.inputs.units import MAX_COUNT, parse_bytes, parse_count, parse_real


# -- command-line values ------------------------------------------------------------------------
def _argparse_type(parse, name: str):
    """An argparse `type` that reports a bad value in plain words (not 'invalid <lambda> value')."""
    def convert(text):
        try:
            return parse(text)
        except UserError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
    convert.__name__ = name
    return convert


def arg_count(what: str, lo: int = -MAX_COUNT, hi: int = MAX_COUNT):
    """A whole number: 1000000, 1e6, 2^20, 4M."""
    return _argparse_type(lambda t: parse_count(t, what, lo, hi), what)


def arg_bytes(what: str, lo: int = -MAX_COUNT, hi: int = MAX_COUNT):
    """A size in bytes: 49152, 48K, 48KiB."""
    return _argparse_type(lambda t: parse_bytes(t, what, lo, hi), what)


def arg_real(what: str, lo: float | None = None, hi: float | None = None, *,
             positive: bool = False):
    """A finite number in [lo, hi] ('nan', 'inf' and '1e400' are refused); `positive` also
    refuses 0 (a block that takes no time is no block)."""
    def parse(text):
        value = parse_real(text, what, lo, hi)
        if positive and not value > 0:
            raise UserError(f"{what} must be greater than 0, got {text!r}")
        return value
    return _argparse_type(parse, what)


def arg_path(what: str = "file"):
    """A file name that is not empty: '' would otherwise mean 'no file' (nothing written) or
    'the current folder' (30 files dropped into it)."""
    def parse(text):
        if not str(text).strip():
            raise UserError(f"{what} is empty; give a name")
        return text
    return _argparse_type(parse, what)


_DIM_SEP = re.compile(r"\s*[x×X*]\s*")


def parse_dims(text, what: str = "block"):
    """'256', '16x16', '32x8x2' (also '16×16') -> sim.rules.block_shape.Dims, checked against
    CUDA's limits on block (x, y <= 1024, z <= 64, 1024 threads) or grid dimensions."""
    from sim.rules.block_shape import block_dims, grid_dims

    parts = _DIM_SEP.split(str(text).strip())
    if len(parts) > 3:
        raise UserError(f"{what} {str(text)[:40]!r} has {len(parts)} dimensions; give x, XxY or XxYxZ")
    values = tuple(parse_count(p, f"{what} dimension", 0) for p in parts)
    try:
        return block_dims(values) if what == "block" else grid_dims(values)
    except ValueError as exc:
        raise UserError(str(exc)) from None


def arg_dims(what: str):
    """A block or grid shape: 256, 16x16, 32x8x2."""
    return _argparse_type(lambda t: parse_dims(t, what), what)


def _parse_block(text):
    if _DIM_SEP.search(str(text).strip()):
        return parse_dims(text, "block")
    return parse_count(text, "block size")


# --block: one number (threads, or with --kernel its block parameter, checked there) or a 2D/3D
# block '16x16', '32x8x2' checked against CUDA's limits here.
arg_block = _argparse_type(_parse_block, "block")


class BlockAction(argparse.Action):
    """Stores --block as its thread count in `dest` (what every command reads) and a 2D/3D shape
    in `block_dims` (None for a plain number)."""

    def __call__(self, parser, namespace, value, option_string=None):
        dims = None if isinstance(value, int) else value
        setattr(namespace, self.dest, value if dims is None else dims.count)
        setattr(namespace, "block_dims", dims)


def add_shape_arguments(parser) -> None:
    """--grid, --cluster and --max-registers: the launch's shape beyond --block, and the register
    cap its kernel is compiled with."""
    parser.add_argument("--grid", type=arg_dims("grid"), default=None, metavar="X[xY[xZ]]",
                        help="the grid's blocks, e.g. 64x64 (default: enough blocks for --elements)")
    parser.add_argument("--cluster", type=arg_count("cluster size", 1, 16), default=1, metavar="BLOCKS",
                        help="blocks per thread-block cluster, co-scheduled on one GPC (compute "
                             "capability 9.0+; at most 8, or 16 non-portable; default 1: none)")
    parser.add_argument("--max-registers", "--maxrregcount", "--maxnreg", dest="max_registers",
                        type=arg_count("--max-registers", 1, 255), default=None, metavar="N",
                        help="a cap on registers per thread (__launch_bounds__/-maxrregcount; Triton "
                             "maxnreg, Numba max_registers): a --kernel is compiled with it; "
                             "otherwise --regs above it become N")


def capped_regs(args, regs: int, kernel) -> int:
    """Registers per thread under --max-registers: a kernel's compiler already kept within it, so
    only registers given by hand (--regs) are lowered (the compiler would spill the rest)."""
    cap = getattr(args, "max_registers", None)
    return min(regs, cap) if cap is not None and (kernel is None or args.regs is not None) else regs


def launch_dims(args, kernel, threads: int, gpu):
    """(block Dims, grid Dims or None, cluster size) of a launch's parsed arguments: --block's
    shape, else the block tuple a kernel's declaration gives (a Numba threads=(16, 16)), else 1D;
    --grid only without a kernel (a kernel's grid rule gives its grid); --cluster checked for
    `gpu` (ValueError in one line)."""
    from sim.rules.block_shape import block_dims
    from sim.rules.clusters import check_cluster

    dims = getattr(args, "block_dims", None)
    declared = (kernel.block_params or {}).get("threads") if kernel is not None else None
    declared = block_dims(tuple(int(v) for v in declared)) if isinstance(declared, (list, tuple)) else None
    if kernel is not None and dims is not None and dims != declared:
        raise UserError(f"{kernel.name} indexes its threads in 1D, so a {dims.text('x')} block would "
                        "not be its launch; give --block as one number")
    dims = dims or declared
    if dims is None or dims.count != threads:
        dims = block_dims((threads,), max(threads, 1))
    grid = getattr(args, "grid", None)
    if grid is not None and kernel is not None:
        raise UserError("--grid is for a launch without --kernel: a kernel's own grid rule gives its grid")
    cluster = getattr(args, "cluster", 1) or 1
    check_cluster(gpu, cluster)
    return dims, grid, cluster




# -- values in files and settings ---------------------------------------------------------------
class FieldError(ValueError):
    """Raised by a field kind; `check_fields` turns it into a UserError naming file and field."""


def _is_number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _range(lo, hi) -> str:
    hi = None if hi == MAX_COUNT else hi
    if lo is not None and hi is not None:
        return f" {lo:,}..{hi:,}" if isinstance(lo, int) and isinstance(hi, int) else f" in {lo:g}..{hi:g}"
    if lo is not None:
        return f" >= {lo:,}" if isinstance(lo, int) else f" >= {lo:g}"
    return ""


@dataclass(frozen=True)
class Whole:
    """An integer (a JSON number without a fraction) in lo..hi."""
    lo: int | None = 0
    hi: int | None = MAX_COUNT

    @property
    def want(self) -> str:
        return f"a whole number{_range(self.lo, self.hi)}"

    def __call__(self, v):
        if not _is_number(v) or (isinstance(v, float) and not v.is_integer()):
            raise FieldError(self.want)
        if (self.lo is not None and v < self.lo) or (self.hi is not None and v > self.hi):
            raise FieldError(self.want)
        return int(v)


@dataclass(frozen=True)
class Real:
    """A finite number in lo..hi; `positive` excludes 0."""
    lo: float | None = None
    hi: float | None = 1e15
    positive: bool = False

    @property
    def want(self) -> str:
        kind = "a positive number" if self.positive else "a finite number"
        return kind + (f" up to {self.hi:g}" if self.positive and self.hi is not None
                       else _range(self.lo, self.hi))

    def __call__(self, v):
        if not _is_number(v) or not math.isfinite(v) or (self.positive and not v > 0):
            raise FieldError(self.want)
        if (self.lo is not None and v < self.lo) or (self.hi is not None and v > self.hi):
            raise FieldError(self.want)
        return float(v)


_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")  # would break a line, a CSV row or a terminal


@dataclass(frozen=True)
class Text:
    """One line of text: no control characters (a terminal escape, a line break in a CSV cell)."""
    max_len: int = 1000

    @property
    def want(self) -> str:
        return f"one line of text of at most {self.max_len:,} characters"

    def __call__(self, v):
        if not isinstance(v, str) or len(v) > self.max_len or _CONTROL.search(v):
            raise FieldError(self.want)
        return v


@dataclass(frozen=True)
class Flag:
    want: str = "true or false"

    def __call__(self, v):
        if not isinstance(v, bool):
            raise FieldError(self.want)
        return v


@dataclass(frozen=True)
class OneOf:
    choices: tuple

    @property
    def want(self) -> str:
        return "one of " + ", ".join(repr(c) for c in self.choices)

    def __call__(self, v):
        if not isinstance(v, (str, int, float)) or v not in self.choices:
            raise FieldError(self.want)
        return v


@dataclass(frozen=True)
class TextList:
    """A list of short texts (notes, limiter names)."""
    max_items: int = 100
    max_len: int = 1000

    @property
    def want(self) -> str:
        return f"a list of at most {self.max_items} texts"

    def __call__(self, v):
        if not isinstance(v, (list, tuple)) or len(v) > self.max_items:
            raise FieldError(self.want)
        if not all(isinstance(s, str) and len(s) <= self.max_len for s in v):
            raise FieldError(self.want)
        return tuple(v)


@dataclass(frozen=True)
class Object:
    """A JSON object (its own fields are checked by their own schema)."""
    want: str = "an object of named fields"

    def __call__(self, v):
        if not isinstance(v, dict):
            raise FieldError(self.want)
        return dict(v)


@dataclass(frozen=True)
class Items:
    """A list of at most `max_items` entries, each checked by `kind` if one is given."""
    max_items: int
    kind: Any = None

    @property
    def want(self) -> str:
        of = f" of {self.kind.want}" if self.kind is not None else ""
        return f"a list of at most {self.max_items:,} entries{of}"

    def __call__(self, v):
        if not isinstance(v, (list, tuple)) or len(v) > self.max_items:
            raise FieldError(self.want)
        if self.kind is None:
            return list(v)
        try:
            return [self.kind(x) for x in v]
        except FieldError:
            raise FieldError(self.want) from None


@dataclass(frozen=True)
class CudaCC:
    """A compute capability: "9.0" or [9, 0]."""
    want: str = "a compute capability such as \"9.0\" or [9, 0]"

    def __call__(self, v):
        parts = v.split(".") if isinstance(v, str) and len(v) <= 8 else v
        if not isinstance(parts, (list, tuple)) or len(parts) != 2:
            raise FieldError(self.want)
        for part in parts:
            number = int(part) if isinstance(part, str) and part.isdigit() else part
            try:
                Whole(0, 99)(number)
            except FieldError:
                raise FieldError(self.want) from None
        return v


@dataclass(frozen=True)
class Maybe:
    """`kind`, or null."""
    kind: Any

    @property
    def want(self) -> str:
        return f"{self.kind.want} (or null)"

    def __call__(self, v):
        return None if v is None else self.kind(v)


def shown(value) -> str:
    """A value as a message shows it: short, one line."""
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def check_field(value, kind, where: str, name: str):
    try:
        return kind(value)
    except FieldError as exc:
        raise UserError(f"{where}: field {name!r} must be {exc}, got {shown(value)}") from None


def check_fields(data, schema: dict, where: str, *, required=(), defaults: dict | None = None) -> dict:
    """Check `data` (a dict from a file) against `schema` (name -> kind). Returns the checked
    values of the fields present (plus `defaults` for absent ones); the first bad field is a
    UserError naming `where` and the field. Unknown fields are ignored (newer writers)."""
    if not isinstance(data, dict):
        raise UserError(f"{where} must be a set of named fields (a JSON object), got {shown(data)}")
    out = dict(defaults or {})
    for name in required:
        if name not in data:
            raise UserError(f"{where}: field {name!r} is missing")
    for name, kind in schema.items():
        if name in data:
            out[name] = check_field(data[name], kind, where, name)
    return out
