"""Trace a user's Triton kernel without the user changing it: an instrumented copy of the kernel.

The copy is the kernel's own source (``JITFunction.src``) with its AST rewritten:
- a first argument ``_warpscope_stamps`` (int64 [programs, 3]) before the user's arguments, so
  positional and keyword launches alike pass through unchanged;
- at entry: the flattened program id and ``%globaltimer``;
- before every ``return`` and at the end: ``%smid``, ``%globaltimer`` again, and the row
  (sm, start ns, end ns) stored by the program's thread 0 (kernels/bodies/trace_kernels.py's readers).
It is compiled with the user's module globals (plus the stamp helpers, under names no kernel
uses) and the user's jit options, and launched with the same arguments, constexprs and grid as
the kernel itself (kernels/launching/launcher.py). Helper functions the kernel calls are not touched: a
program's start and end are the kernel's own first and last statements.

The interpreter cannot run inline PTX, so recording needs a GPU; compiling the copy for sm_90
(`compile_instrumented`) does not.
"""

from __future__ import annotations

import ast
import itertools
import linecache
import textwrap

from sim.inputs.errors import UserError

PREFIX = "_warpscope_"
STAMPS = PREFIX + "stamps"
_serial = itertools.count(1)

_ENTRY = f"""
{PREFIX}pid = ({PREFIX}tl.program_id(0) + {PREFIX}tl.num_programs(0) * ({PREFIX}tl.program_id(1)
             + {PREFIX}tl.num_programs(1) * {PREFIX}tl.program_id(2)))
{PREFIX}start = {PREFIX}globaltimer({PREFIX}pid)
"""
_EXIT = (f"{PREFIX}store_stamp({STAMPS}, {PREFIX}pid, {PREFIX}start, "
         f"{PREFIX}globaltimer({PREFIX}pid))")


def _statements(text: str) -> list[ast.stmt]:
    return ast.parse(textwrap.dedent(text)).body


# Proton's intra-kernel profiler instead of our stamps: one scope around the whole program
# (triton.profiler.language; Proton records each CTA's SM, its start and the scope's cycles)
PROTON_SCOPE = "program"
_PROTON_ENTRY = f'{PREFIX}pl.enter_scope("{PROTON_SCOPE}")'
_PROTON_EXIT = f'{PREFIX}pl.exit_scope("{PROTON_SCOPE}")'
# Numba (kernels/tracing/numba_stamps.py): intrinsics emitting the same inline PTX. At entry
# every thread reads the timer (one CS2R); at each exit thread (0, 0, 0) reads it again and the
# SM, finds its row (32-bit index math, the launch's dims baked in) and stores it, in one
# intrinsic; the default ("numba-exit-split") pushes the end stamp into both branches of a
# trailing `if` (kernels/tracing/numba_stamps.py says why). "numba-row-at-exit" does the exit
# in Numba code (64-bit signed index math), kept to measure against
_NUMBA_START = f"{PREFIX}start = {PREFIX}globaltimer()"
_NUMBA_EXIT = (f"{PREFIX}stamp_exit({STAMPS}, {PREFIX}start, {PREFIX}grid_dims, "
               f"{PREFIX}block_dims)")
_NUMBA_ROW_AT_EXIT = f"""
if {PREFIX}cuda.threadIdx.x == 0 and {PREFIX}cuda.threadIdx.y == 0 and {PREFIX}cuda.threadIdx.z == 0:
    {PREFIX}b = {PREFIX}cuda.blockIdx.x + {PREFIX}cuda.gridDim.x * ({PREFIX}cuda.blockIdx.y
                 + {PREFIX}cuda.gridDim.y * {PREFIX}cuda.blockIdx.z)
    {STAMPS}[{PREFIX}b, 0] = {PREFIX}smid()
    {STAMPS}[{PREFIX}b, 1] = {PREFIX}start
    {STAMPS}[{PREFIX}b, 2] = {PREFIX}globaltimer()
"""
NUMBA_PROBES = ("numba-exit-split", "numba-exit-dims", "numba-exit", "numba-row-at-exit")
# probe: (entry, exit, the stamps as a first argument, the exit pushed into a trailing if's branches)
PROBES = {"stamps": (_ENTRY, _EXIT, True, False),
          "proton": (_PROTON_ENTRY, _PROTON_EXIT, False, False),
          "numba-exit-split": (_NUMBA_START, _NUMBA_EXIT, True, True),
          "numba-exit-dims": (_NUMBA_START, _NUMBA_EXIT, True, False),
          "numba-exit": (_NUMBA_START, _NUMBA_EXIT, True, False),
          "numba-row-at-exit": (_NUMBA_START, _NUMBA_ROW_AT_EXIT, True, False)}
PROBES["numba"] = PROBES[NUMBA_PROBES[0]]  # the default


class _StampReturns(ast.NodeTransformer):
    """A stamp before every `return` of the kernel itself (not of functions defined inside)."""

    def __init__(self, root: ast.FunctionDef, exit_text: str):
        self.root = root
        self.exit_text = exit_text

    def visit_FunctionDef(self, node):
        return self.generic_visit(node) if node is self.root else node

    visit_AsyncFunctionDef = visit_FunctionDef
    visit_Lambda = visit_FunctionDef

    def visit_Return(self, node):
        return [*_statements(self.exit_text), node]


def instrumented_source(src: str, name: str | None = None,
                        probe: str = "stamps") -> tuple[str, str]:
    """(source, function name) of the stamped copy of one kernel's source (its `def`, with or
    without decorators); probe "proton" wraps the program in one Proton scope instead (no extra
    argument). UserError where the kernel cannot take the stamps."""
    entry, exit_text, extra_arg, split_tail = PROBES[probe]
    try:
        tree = ast.parse(textwrap.dedent(src))
    except SyntaxError as exc:
        raise UserError(f"cannot read the kernel's source: {exc.msg} (line {exc.lineno})") from None
    defs = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
    if len(defs) != 1:
        raise UserError("the kernel's source is not one function")
    fn = defs[0]
    taken = {n.id for n in ast.walk(fn) if isinstance(n, ast.Name)} | {
        a.arg for a in ast.walk(fn) if isinstance(a, ast.arg)}
    clash = sorted(t for t in taken if t.startswith(PREFIX))
    if clash:
        raise UserError(f"{fn.name} uses the name {clash[0]}, which the trace's stamps need")
    if fn.args.posonlyargs or fn.args.vararg or fn.args.kwarg:
        raise UserError(f"{fn.name}: a kernel with positional-only, *args or **kwargs "
                        "parameters cannot be traced")
    fn.decorator_list = []
    fn.name = f"{fn.name}{PREFIX}traced" if name is None else name
    if extra_arg:  # first, so positional and keyword launches pass through; defaults unchanged
        fn.args.args.insert(0, ast.arg(arg=STAMPS))
    _StampReturns(fn, exit_text).visit(fn)
    body = list(fn.body)
    doc = body[:1] if body and isinstance(body[0], ast.Expr) and isinstance(
        getattr(body[0], "value", None), ast.Constant) and isinstance(body[0].value.value, str) else []
    rest = body[len(doc):]
    fn.body = [*doc, *_statements(entry), *_stamp_end(rest, exit_text, split_tail)]
    tree.body = [fn]
    ast.fix_missing_locations(tree)
    return ast.unparse(tree) + "\n", fn.name


def _stamp_end(body: list[ast.stmt], exit_text: str, into_branches: bool) -> list[ast.stmt]:
    """`body` with the exit stamp at its end (none after a `return`: that one has its own);
    into_branches: pushed into both branches of a trailing `if` (and theirs), so each path keeps
    its own exit as the kernel had, not one after the branches merge."""
    last = body[-1] if body else None
    if isinstance(last, ast.Return):
        return body
    if into_branches and isinstance(last, ast.If):
        last.body = _stamp_end(last.body, exit_text, True)
        last.orelse = _stamp_end(last.orelse, exit_text, True)
        return body
    return [*body, *_statements(exit_text)]


def next_filename(name: str) -> str:
    """A file name of its own for each stamped copy (linecache keeps its source under it)."""
    return f"<warpscope: {name} stamped for a trace, #{next(_serial)}>"


def _helpers(probe: str) -> dict:
    if probe == "proton":
        import triton.profiler.language as pl

        return {PREFIX + "pl": pl}
    import triton.language as tl

    from kernels.bodies.trace_kernels import _globaltimer, _store_stamp

    return {PREFIX + "tl": tl, PREFIX + "globaltimer": _globaltimer,
            PREFIX + "store_stamp": _store_stamp}


def instrument(kernel, probe: str = "stamps"):
    """The stamped copy of a @triton.jit kernel, as a new JITFunction with the same options
    (probe "proton": the copy with one Proton scope, for Proton's instrumentation backend)."""
    import triton

    if type(kernel).__name__ != "JITFunction":
        what = type(kernel).__name__
        hint = (" (declare the @triton.jit function under the autotuner)"
                if what in ("Autotuner", "Heuristics") else "")
        raise UserError(f"only a @triton.jit kernel can be traced, got {what}{hint}")
    fn = kernel.fn
    if fn.__code__.co_freevars:
        raise UserError(f"{fn.__name__} uses variables of an enclosing function "
                        f"({', '.join(fn.__code__.co_freevars)}): define it at the top of its file")
    src, name = instrumented_source(kernel.src, probe=probe)
    filename = next_filename(fn.__name__)
    # inspect.getsource (which triton.jit calls) finds the generated source here
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
    scope = dict(fn.__globals__)
    scope.update(_helpers(probe))
    exec(compile(src, filename, "exec"), scope)  # noqa: S102 - the user's own kernel, re-stated
    new = scope[name]
    keep = [p.name for p in kernel.params if p.do_not_specialize]
    keep_align = [p.name for p in kernel.params if p.do_not_specialize_on_alignment]
    return triton.jit(new, do_not_specialize=keep, do_not_specialize_on_alignment=keep_align,
                      debug=kernel.debug, noinline=kernel.noinline)


def compile_instrumented(spec, n: int, block=None, cc=(9, 0)) -> dict:
    """Compile the stamped copy of a Triton KernelSpec at size n for `cc`, no GPU needed (the
    arguments as the launcher types them, the stamps pointer first); its resources as a dict,
    and the plain kernel's beside them ("untraced")."""
    from kernels.offline_compile.compile import signature_from_args
    from kernels.measure.harness import make_arrays
    from kernels.launching.launcher import TRITON_OPTIONS, kernel_args
    from kernels.declare.spec import resolve
    from kernels.offline_compile.toolchain import compile_triton

    if spec.backend != "triton":
        raise UserError(f"{spec.name}: only Triton kernels are traced this way")
    kernel = resolve(spec.kernel)
    params = spec.check_block(block)
    inputs, out = make_arrays(spec, n, on_gpu=False)
    signature = signature_from_args(kernel_args(spec, inputs, out, n))
    options = {k: params.pop(k) for k in TRITON_OPTIONS if k in params}
    consts = {**spec.constants, **params}
    warps, stages = options.get("num_warps", 4), options.get("num_stages", 3)
    traced = compile_triton(instrument(kernel), ("*i64:16", *signature), consts, warps, stages, cc)
    plain = compile_triton(kernel, signature, consts, warps, stages, cc)
    return {**traced, "untraced": plain}
