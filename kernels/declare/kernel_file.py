"""Open a user's kernel file and return the declarations in its ``WARPSCOPE``.

The format is docs/KERNEL_FILES.md: a plain Python file with a ``@triton.jit`` or ``@cuda.jit``
kernel and ``WARPSCOPE = dict(kernel=..., inputs=..., block=...)`` (or a list of such dicts).
Opening the file runs it, as importing any module does; that happens only when the user opens it.

Everything that can go wrong is one line (``UserError``) naming the file and, where there is one,
the line: not a file, too big, a syntax error, an exception while importing, no WARPSCOPE, a
declaration without its required keys, a kernel that is neither Triton's nor Numba's. The module
gets a unique name, so two files both called ``kernel.py`` never meet, and a file that fails
leaves nothing behind in ``sys.modules``. Turning a declaration into the registry's KernelSpec is
``kernels/declare/spec.py``'s job; here only what is needed for a clear message is checked, and each
function WarpScope calls is wrapped (kernels/declare/user_code.guarded). Only processes that exist for
the user's code open a file (kernels/declare/declarations.py, kernels/host/in_host.py, the hosts), under
kernels.declare.declarations.Limits; never a command's or the window's own process.
"""

from __future__ import annotations

import hashlib
import itertools
import os
import re
import sys
import traceback
import types

from sim.inputs.errors import UserError
from sim.inputs.files import read_user_bytes

MAX_FILE_BYTES = 1_000_000  # source code, not data: a bigger file is a mistake
MODULE_PREFIX = "warpscope_kernel_file_"
REQUIRED = ("kernel", "inputs", "block")
FORMAT_HINT = "see docs/KERNEL_FILES.md"
_serial = itertools.count(1)


def split_path(path) -> tuple[str, str | None]:
    """"FILE.py:NAME" -> ("FILE.py", "NAME"); a plain path -> (path, None)."""
    text = os.fspath(path)
    head, sep, tail = text.rpartition(":")
    if sep and re.fullmatch(r"[A-Za-z_][\w.-]*", tail) and not os.path.exists(text):
        return head, tail
    return text, None


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


def _read_source(path: str) -> bytes:
    if not os.path.exists(path):
        raise UserError(f"kernel file {path} does not exist")
    if not os.path.isfile(path):
        raise UserError(f"kernel file {path} is not a regular file")
    size = os.path.getsize(path)
    if size > MAX_FILE_BYTES:
        raise UserError(f"kernel file {path} is {size:,} bytes; a kernel file is source code, "
                        f"at most {MAX_FILE_BYTES:,} bytes")
    return read_user_bytes(path, "kernel file", MAX_FILE_BYTES)


LIBRARIES = {b"triton": "triton", b"numba": "numba.cuda", b"torch": "torch"}


def load_libraries(path) -> None:
    """Import the GPU libraries the file names, before its own code runs: loading them is
    WarpScope's wait (long on a busy machine), and the file's time limit counts its code only.
    A library that fails to load is left for the file's import to report."""
    import importlib

    source = _read_source(os.path.abspath(os.fspath(split_path(path)[0])))
    from kernels.launching.compat import apply_numpy_shims

    apply_numpy_shims()
    for word, module in LIBRARIES.items():
        if word in source:
            try:
                importlib.import_module(module)
            except Exception:  # noqa: BLE001 - the file's own import says it, naming its line
                pass


def import_file(path, limit_s: float | None = None) -> types.ModuleType:
    """Run a kernel file as a module under a unique name and return it. Does not switch the
    backends to their CPU fallbacks (load_kernel_file does). `limit_s`: how long the file's own
    code may run (kernels.declare.user_code.time_limit), its libraries loaded first."""
    from kernels.declare.user_code import UserCodeError, time_limit

    path = os.path.abspath(os.fspath(path))
    source = _read_source(path)
    try:
        code = compile(source, path, "exec", dont_inherit=True)
    except SyntaxError as exc:
        raise UserError(f"{path}, line {exc.lineno}: syntax error: {exc.msg}") from None
    except ValueError as exc:  # null bytes, an unknown encoding
        raise UserError(f"{path} is not Python source: {exc}") from None
    from kernels.launching.compat import apply_numpy_shims

    apply_numpy_shims()  # the file may import numba.cuda itself, on a numpy it predates
    stem = re.sub(r"\W", "_", os.path.splitext(os.path.basename(path))[0])
    name = f"{MODULE_PREFIX}{stem}_{next(_serial)}"
    module = types.ModuleType(name)
    module.__file__ = path
    sys.modules[name] = module  # dataclasses and pickling in the file look themselves up here
    if limit_s:
        load_libraries(path)
    try:
        with time_limit(limit_s, f"{path}: no answer while importing it within {limit_s or 0:g} "
                        "s (a loop, or waiting on something? WARPSCOPE_USER_CODE_TIMEOUT_S)"):
            exec(code, module.__dict__)
    except UserCodeError:
        del sys.modules[name]
        raise
    except (Exception, SystemExit) as exc:
        del sys.modules[name]
        frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == path]
        where = f", line {frames[-1].lineno}" if frames else ""
        raise UserError(f"{path}{where}: importing it raised {_first_line(exc)}") from None
    return module


def _declarations(module, path: str) -> list[dict]:
    if not hasattr(module, "WARPSCOPE"):
        raise UserError(f"{path} declares no kernel: it needs WARPSCOPE = dict(kernel=..., "
                        f"inputs=..., block=...) ({FORMAT_HINT})")
    found = module.WARPSCOPE
    items = [found] if isinstance(found, dict) else found
    if not isinstance(items, (list, tuple)) or not items:
        raise UserError(f"{path}: WARPSCOPE must be a dict or a non-empty list of dicts, "
                        f"not {type(found).__name__}")
    return list(items)


def _check(decl, index: int, path: str) -> dict:
    """A copy of one declaration with "name" and "backend" filled in."""
    from kernels.declare.spec import backend_of

    label = f"{path}: WARPSCOPE[{index}]"
    if not isinstance(decl, dict):
        raise UserError(f"{label} is a {type(decl).__name__}, not a dict ({FORMAT_HINT})")
    if isinstance(decl.get("name"), str):
        label = f"{path}: declaration {decl['name']!r}"
    missing = [k for k in REQUIRED if k not in decl]
    if missing:
        raise UserError(f"{label} lacks {', '.join(missing)} (required: {', '.join(REQUIRED)}; "
                        f"{FORMAT_HINT})")
    kernel = decl["kernel"]
    try:
        backend = backend_of(kernel)
    except UserError:
        what = ("a plain function: decorate it with @triton.jit or @cuda.jit"
                if type(kernel).__name__ == "function" else f"a {type(kernel).__name__}")
        raise UserError(f"{label}: kernel must be a @triton.jit or @cuda.jit function, "
                        f"got {what}") from None
    inputs = decl["inputs"]
    if not callable(inputs) and not (type(inputs) is int and inputs >= 1):
        raise UserError(f"{label}: inputs must be a function of the size, like "
                        "lambda n: [np.random.rand(n).astype(np.float32)], or a number of "
                        "float32 arrays of n elements")
    if not isinstance(decl["block"], dict) or not decl["block"]:
        raise UserError(f"{label}: block must be a dict of block parameters and their defaults, "
                        "like dict(BLOCK_SIZE=1024, num_warps=4) or dict(threads=256)")
    name = decl.get("name") or (getattr(kernel, "py_func", None) or kernel.fn).__name__
    return {**decl, "name": name, "backend": backend}


def load_kernel_file(path, name: str | None = None, *, cpu_fallback: bool = True,
                     limit_s: float | None = None) -> list[dict]:
    """The declarations of a kernel file ("FILE.py", or "FILE.py:NAME" for one of them), each a
    copy of the user's dict with "name" (defaulted to the kernel function's) and "backend"
    ("triton" | "numba") filled in: ready for kernels.declare.spec.declare(decl, origin=path).
    `cpu_fallback=False`: do not look for a GPU first (that imports torch) nor switch to the
    interpreter/simulator: for a process that only reads the declarations or compiles.
    `limit_s`: import_file's."""
    path, named = split_path(path)
    name = name or named
    if cpu_fallback:
        from kernels.launching.backends import available

        available()  # no GPU: kernels defined by the file must run in the interpreter/simulator
    module = import_file(path, limit_s)
    try:
        return _select(module, name)
    except UserError:
        sys.modules.pop(module.__name__, None)
        raise


def _select(module, name: str | None) -> list[dict]:
    path = module.__file__
    decls = [_check(d, i, path) for i, d in enumerate(_declarations(module, path))]
    names = [d["name"] for d in decls]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise UserError(f"{path}: two declarations are named {twice[0]!r}; give each a name=")
    if name is None:
        return decls
    if name not in names:
        raise UserError(f"{path} has no kernel named {name!r} (it has {', '.join(names)})")
    return [decls[names.index(name)]]



def open_kernel_file(path, name: str | None = None, *, cpu_fallback: bool = True,
                     limit_s: float | None = None) -> list:
    """The KernelSpecs of a kernel file ("FILE.py" or "FILE.py:NAME"), each followed by its torch
    peer where it declares one: ready for registry.add_kernels. The file is run (see
    load_kernel_file) in this process: call it only in a process that exists for the user's code
    (kernels/declare/declarations.py, the kernel and compiler hosts); every mistake is one UserError
    line."""
    from kernels.declare.spec import declare
    from kernels.declare.user_code import guarded

    origin = os.path.abspath(split_path(path)[0])
    decls = load_kernel_file(path, name, cpu_fallback=cpu_fallback, limit_s=limit_s)
    # every function WarpScope calls answers a bad value or an exception with one line naming it
    specs = [guarded(declare(d, origin=origin)) for d in decls]
    out = []
    for spec in specs:
        peer = spec.peer_spec()
        out += [spec] if peer is None else [spec, peer]
    return out


def file_digest(path) -> str:
    """What a file holds now (sha256 of its bytes): a process that opens it later can tell whether
    it is still the version the user opened."""
    return hashlib.sha256(_read_source(os.path.abspath(os.fspath(path)))).hexdigest()


_OPENED_HERE: dict[str, tuple[str, list]] = {}  # path -> (digest, specs) opened in this process


def open_once(path, digest: str | None = None, *, cpu_fallback: bool = True) -> list:
    """The kernels of a file the user opened, in a process that works for the window (the kernel
    host, the compiler host): opened here the first time, or when the file changed, and added to
    this process's registry. `digest` (file_digest when the user opened it): a file that changed
    since then is one line asking to open it again, so nothing runs that the window does not
    show."""
    from kernels.declare.registry import add_kernels

    path = os.path.abspath(os.fspath(path))
    now = file_digest(path)
    if digest is not None and now != digest:
        raise UserError(f"{path} changed since you opened it: open it again (File ▸ Open "
                        "kernel…) to use the new version")
    known = _OPENED_HERE.get(path)
    if known is not None and known[0] == now:
        specs = known[1]
    else:
        from kernels.declare.declarations import Limits
        from kernels.host.in_host import memory_limit

        if cpu_fallback:
            from kernels.launching.backends import available

            available()  # torch and the GPU libraries, before the limit
        limits = Limits.from_env()
        with memory_limit(limits.memory_bytes):  # the file's import, not the kernels
            specs = open_kernel_file(path, cpu_fallback=cpu_fallback, limit_s=limits.open_s)
    _OPENED_HERE[path] = (now, specs)
    add_kernels(specs)  # again, if the registry was reset: it keeps the newest of each name
    return specs


EXAMPLES = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                        "resources", "examples")

# `trace --kernel softmax` traces one row of tutorial 02's softmax (kernels/bodies/trace_kernels.py)
TRACE_KERNEL_FILES = {"softmax-trace": os.path.join(EXAMPLES, "softmax_triton.py")}


def with_declared_chain(trace):
    """A trace whose meta names its kernel file but not its chain (recorded before the tracer wrote
    one) with the chain that file declares (`chain`, kernels.declare.spec.chain_of) put in its meta,
    for sim.traces.compare; other traces as they are. A file under some checkout's
    resources/examples/ is read from this checkout's (the same example, as declared now). Runs the
    file: a benchmark's or a host process's call, never the window's."""
    from dataclasses import replace

    meta = trace.meta
    path = TRACE_KERNEL_FILES.get(meta.get("kernel"), meta.get("kernel_file"))
    if "chain" in meta or not isinstance(path, str) or path == "built-in":
        return trace
    here = os.path.join(EXAMPLES, os.path.basename(path))
    if os.path.basename(os.path.dirname(path)) == "examples" and os.path.isfile(here):
        path = here
    if not os.path.isfile(path):
        return trace
    decls = load_kernel_file(path, cpu_fallback=False)
    match = [d for d in decls if d["name"] == meta.get("kernel")] or decls[:1]  # the trace kernel
    chain = match[0].get("chain")
    return trace if chain is None else replace(trace, meta={**meta, "chain": dict(chain)})
