"""What a kernel file's own code may return, checked on both sides of its process.

A user's declaration holds functions (``grid``, ``tile``, ``bytes``, ``flops``, ``dims``) that
WarpScope calls at every launch. They run in the file's own process (kernels/declare/declarations.py),
under a time and a memory limit; here is what that process wraps them in and what the process
that asked checks again in the plain data it gets back:

- ``guarded(spec)``: the spec with each of those functions wrapped, so that an exception, NaN, 0,
  a string or an absurd number is one ``UserCodeError`` line naming the file, the kernel and the
  key ("softmax.py: softmax_kernel's 'grid' returned nan, not a whole number");
- ``declared_launch(spec, ...)``: everything ``explain`` and ``simulate`` need of one launch as
  plain numbers and strings (the grid rule, the sizes, the bytes, the compiler's registers);
- ``check_facts(facts, where)``: the same fields validated one by one in the parent, which never
  trusts the child's answer more than the file itself.
"""

from __future__ import annotations

import functools
import math
import numbers
import signal
import threading
from contextlib import contextmanager
from dataclasses import replace

from sim.inputs.errors import UserError

MAX_GRID = (2**31 - 1, 65535, 65535)  # CUDA's grid limits per dimension
MAX_COUNT = 2**62  # bytes, FLOPs, sizes: anything larger is a mistake, not a kernel


class UserCodeError(UserError):
    """The user's kernel file failed (at import, in one of its functions, by a timeout, a memory
    blow-up or a crash): front ends print its one line and exit with status 1, not the status 2
    of a mistyped option."""

    exit_status = 1


def _label(value) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def whole(value, what: str, lowest: int = 0, highest: int = MAX_COUNT) -> int:
    """`value` as an int in [lowest, highest]; UserCodeError (without a file: the caller adds
    it) for NaN, infinities, fractions, bools, strings and the like."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise UserCodeError(f"returned {_label(value)} (a {type(value).__name__}), not {what}")
    if isinstance(value, numbers.Integral):
        number = int(value)
    else:
        as_float = float(value)
        if not math.isfinite(as_float) or not as_float.is_integer():
            raise UserCodeError(f"returned {_label(value)}, not {what}")
        number = int(as_float)
    if not lowest <= number <= highest:
        raise UserCodeError(f"returned {number:,}: {what} must be {lowest:,} to {highest:,}")
    return number


def _grid(value) -> tuple[int, ...]:
    items = tuple(value) if isinstance(value, (tuple, list)) else (value,)
    if not 1 <= len(items) <= 3:
        raise UserCodeError(f"returned {_label(value)}: a grid is 1 to 3 numbers of blocks")
    return tuple(whole(v, "a whole number of blocks", 1, top) for v, top in zip(items, MAX_GRID))


def _dims(value) -> dict:
    if not isinstance(value, dict) or not value:
        raise UserCodeError(f"returned {_label(value)}, not a dict of named sizes like "
                            "dict(M=1024, N=1024)")
    out = {}
    for key, size in value.items():
        if not isinstance(key, str) or not key.isidentifier():
            raise UserCodeError(f"returned a size named {_label(key)}: names are identifiers")
        out[key] = whole(size, f"a whole size for {key}", 1)
    return out


CHECKS = {  # key -> how its value is read
    "grid": _grid,
    "tile": lambda v: whole(v, "a whole number of elements per block", 1),
    "bytes": lambda v: whole(v, "a whole number of bytes"),
    "flops": lambda v: whole(v, "a whole number of FLOPs"),
    "dims": _dims,
}


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


class _OutOfTime(BaseException):
    """Raised into the user's code by the alarm: not an Exception, so the file's own `except
    Exception` cannot swallow it."""


@contextmanager
def time_limit(seconds: float | None, message: str):
    """UserCodeError(message) if the block runs longer than `seconds` (SIGALRM). Only on the main
    thread, where the kernel host and a kernel file's process run the user's code, and only
    outside another limit; elsewhere the block runs as it is (the parent's own limit holds)."""
    if (not seconds or threading.current_thread() is not threading.main_thread()
            or not hasattr(signal, "setitimer") or signal.getitimer(signal.ITIMER_REAL)[0] > 0):
        yield
        return

    def on_alarm(*_):
        raise _OutOfTime()

    old = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    except _OutOfTime:
        raise UserCodeError(message) from None
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old if old is not None else signal.SIG_DFL)


def call_limit_s() -> float:
    """How long one of a file's functions may run (Limits.launch_s)."""
    from kernels.declare.declarations import Limits

    return Limits.from_env().launch_s


def _guard(fn, where: str, key: str):
    check = CHECKS[key]

    @functools.wraps(fn)  # keeps the signature: call_with passes what the function asks for
    def call(*args, **kwargs):
        seconds = call_limit_s()
        try:
            with time_limit(seconds, f"{where}'s '{key}' did not return within {seconds:g} s (a "
                            "loop, or waiting on something? WARPSCOPE_USER_CODE_TIMEOUT_S)"):
                value = fn(*args, **kwargs)
        except UserCodeError:
            raise
        except Exception as exc:  # noqa: BLE001 - the user's code: one line naming the key
            raise UserCodeError(f"{where}'s '{key}' raised {_first_line(exc)}") from None
        try:
            return check(value)
        except UserCodeError as exc:
            raise UserCodeError(f"{where}'s '{key}' {exc}") from None

    return call


def guarded(spec):
    """`spec` with each function WarpScope evaluates wrapped by `_guard`."""
    where = f"{spec.origin}: {spec.name}"  # the file, wherever the message ends up
    changes = {key: _guard(getattr(spec, key), where, key) for key in CHECKS
               if callable(getattr(spec, key, None))}
    return replace(spec, **changes) if changes else spec


# --------------------------------------------------------------------------------------------
# One launch as plain data
# --------------------------------------------------------------------------------------------
COMPILED_FIELDS = ("compiler", "ptxas", "target", "regs_per_thread", "smem_per_block",
                   "stack_bytes", "elements")


def declared_launch(spec, elements: int, block, warps, sm_count: int, cc, *, setting=None,
                    dims=None, max_registers: int | None = None, before_compile=None) -> dict:
    """The launch of `spec` at `elements` as plain data: its grid rule's blocks, threads, tile,
    parameters, named sizes and bytes, and (with `cc`) what its compiler gives it there.
    `setting`: a block setting already made (else from `block` and `warps`); `dims`: a matmul's
    M, N and K; `before_compile()`: called once the file's rules have answered (the compile's
    limit is not theirs)."""
    from kernels.measure.harness import block_setting

    setting = setting if setting is not None else block_setting(spec, block, warps)
    shape = spec.launch_shape(elements, setting, sm_count, dims=dims)
    facts = {"name": spec.name, "blocks": shape.grid_blocks,
             "threads_per_block": shape.threads_per_block,
             "elements_per_block": shape.elements_per_block,
             "params": {k: list(v) if isinstance(v, tuple) else v for k, v in shape.params.items()},
             "dims": spec.size_dims(elements, dims),
             "bytes_moved": spec.bytes_moved(elements, dims=dims) if spec.bytes else None,
             "chain": spec.chain,
             "compiled": None}
    if cc is not None:
        from kernels.offline_compile.compile import CompileError
        from kernels.offline_compile.resources import launch_resources

        if before_compile is not None:
            before_compile()
        try:
            res = launch_resources(spec, elements, setting, tuple(cc), max_registers=max_registers)
        except CompileError as exc:
            raise CompileError(f"{exc} (or give --regs and --smem to skip the compiler)",
                               exc.log) from None
        facts["compiled"] = {"compiler": res.compiler, "ptxas": res.ptxas, "target": res.target,
                             "regs_per_thread": res.regs_per_thread,
                             "smem_per_block": res.smem_per_block,
                             "stack_bytes": res.stack_bytes, "elements": res.elements}
    return facts


def _field(facts: dict, key: str, where: str, read):
    if key not in facts:
        raise UserCodeError(f"{where}: its process sent no '{key}'")
    try:
        return read(facts[key])
    except UserCodeError as exc:
        raise UserCodeError(f"{where}: '{key}' {exc}") from None


def _text(value) -> str:
    if not isinstance(value, str) or len(value) > 200:
        raise UserCodeError(f"returned {_label(value)}, not a short text")
    return value


def _optional(read):
    return lambda v: None if v is None else read(v)


def _params(value) -> dict:
    if not isinstance(value, dict):
        raise UserCodeError(f"returned {_label(value)}, not a dict of block parameters")
    out = {}
    for key, v in value.items():
        _text(key)
        out[key] = (tuple(whole(x, "a whole number", 1, 1 << 20) for x in v)
                    if isinstance(v, (list, tuple)) else whole(v, "a whole number", 0, 1 << 20))
    return out


def _compiled(value) -> dict:
    if not isinstance(value, dict):
        raise UserCodeError(f"returned {_label(value)}, not the compiler's record")
    out = {}
    for key in COMPILED_FIELDS:
        read = _text if key in ("compiler", "ptxas", "target") else (
            lambda v: whole(v, "a whole number", 0, MAX_COUNT))
        out[key] = _field(value, key, "the compiler's record", read)
    return out


def _chain(value) -> dict:
    """A launch's declared chain (kernels.declare.spec.chain_of): passes, reductions, and its tile
    and loads where declared."""
    from kernels.declare.spec import chain_of

    try:
        passes, reductions = chain_of(value)
    except UserError as exc:
        raise UserCodeError(str(exc)) from None
    extra = {k: value[k] for k in ("tile", "loads") if k in value}
    return {"passes": passes, "reductions": reductions, **extra}


def check_facts(facts, where: str) -> dict:
    """declared_launch' answer, each field checked again in the process that shows it."""
    if not isinstance(facts, dict):
        raise UserCodeError(f"{where}: its process sent {_label(facts)}, not a launch")
    readers = {
        "name": _text,
        "blocks": lambda v: whole(v, "a whole number of blocks", 1, math.prod(MAX_GRID)),
        "threads_per_block": lambda v: whole(v, "a whole number of threads", 1, 1024),
        "elements_per_block": _optional(lambda v: whole(v, "a whole tile", 1)),
        "params": _params,
        "dims": _dims,
        "bytes_moved": _optional(lambda v: whole(v, "a whole number of bytes")),
        "chain": _chain,
        "compiled": _optional(_compiled),
    }
    return {key: _field(facts, key, where, read) for key, read in readers.items()}


# --------------------------------------------------------------------------------------------
# The answers of a file's process, kept per file content
# --------------------------------------------------------------------------------------------
CACHE_FORMAT = "warpscope-launch-facts/1"
_CODE = ("declare/spec.py", "declare/user_code.py", "measure/harness.py",
         "offline_compile/resources.py", "offline_compile/compile.py",
         "offline_compile/toolchain.py")  # under kernels/


def _cache_key(path: str, digest: str, request: tuple) -> dict:
    """What one launch's facts depend on: the file's bytes, the request, the compilers and the
    code that evaluates them (an edited file, a new triton or WarpScope is a new key)."""
    import hashlib
    import sys
    from importlib import metadata
    from pathlib import Path

    here = Path(__file__).resolve().parents[1]  # kernels/
    code = hashlib.sha256(b"".join((here / name).read_bytes() for name in _CODE)).hexdigest()
    versions = {}
    for dist in ("triton", "numba-cuda", "numpy"):
        try:
            versions[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            versions[dist] = "missing"
    return {"file": path, "sha256": digest, "request": list(request), "code": code,
            "python": sys.version.split()[0], "versions": versions}


def cached_facts(path: str, digest: str, request: tuple, compute) -> dict:
    """`compute()` (a file's process answering `request`), or its earlier answer for the same
    file content and request: explain then starts no process and imports nothing of the file.
    A cached answer is data from disk: the caller checks it field by field (check_facts)."""
    import hashlib
    import json

    from sim.inputs.files import load_json_bounded, read_user_file, write_json_atomic

    from kernels.offline_compile.compile import cache_folder

    folder = cache_folder().parent / "launch_facts"
    try:
        key = _cache_key(path, digest, request)
    except OSError:
        return compute()
    name = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()
    entry = folder / f"{name}.json"
    try:
        data = load_json_bounded(read_user_file(entry, "cached launch", 1 << 16), str(entry))
        if isinstance(data, dict) and data.get("format") == CACHE_FORMAT and data.get("key") == key:
            return data["facts"]
    except (UserError, KeyError):
        pass  # none yet, or damaged: asked again
    facts = compute()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        write_json_atomic(entry, {"format": CACHE_FORMAT, "key": key, "facts": facts})
    except (OSError, UserError):
        pass  # a cache that cannot be written costs the next run a process
    return facts


# --------------------------------------------------------------------------------------------
# `explain` / `simulate --kernel-file`
# --------------------------------------------------------------------------------------------
def pick_kernel(path: str, found: list[dict], name: str | None) -> str:
    """The one launchable kernel of a file's declarations (plain data) that `name` names, or
    the only one."""
    launchable = [d["name"] for d in found if d.get("kind") == "kernel"
                  and d.get("backend") != "torch"]
    if name:
        if name not in launchable:
            raise UserError(f"{path} has no kernel named {name!r} (it has "
                            f"{', '.join(launchable) or 'none to launch'})")
        return name
    if not launchable:
        raise UserError(f"{path}: torch chooses its own grid; declare a Triton or Numba kernel")
    if len(launchable) > 1:
        raise UserError(f"{path} declares {len(launchable)} kernels ({', '.join(launchable)}): "
                        f"pick one with {path}:NAME")
    return launchable[0]


def file_declared_launch(file: str, kernel: str | None, elements: int, block, warps, sm_count: int,
                      cc, max_registers: int | None = None) -> dict:
    """declared_launch of the kernel `file` ("FILE.py[:NAME]") declares (or `kernel` names), from
    a process of the file's own (kernels.declare.declarations), or the cache for the same content and
    launch; checked field by field."""
    import os

    from kernels.declare.declarations import DeclarationProcess
    from kernels.declare.kernel_file import file_digest, split_path

    path, named = split_path(file)
    path = os.path.abspath(path)
    digest = file_digest(path)  # missing, not a regular file, too big: one line, no process
    wanted = named or kernel
    request = (wanted, elements, block, warps, sm_count, list(cc) if cc else None, max_registers)

    def ask() -> dict:
        with DeclarationProcess(path) as process:
            name = pick_kernel(path, process.describe(), wanted)
            return process.launch(name, elements, block, warps, sm_count, cc,
                                  max_registers=max_registers)

    facts = cached_facts(path, digest, request, ask)
    name = facts.get("name", wanted) if isinstance(facts, dict) else wanted
    return check_facts(facts, f"{path}: {name}")
