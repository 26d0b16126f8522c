"""One way to describe a kernel: a declaration (docs/KERNEL_FILES.md) becomes a ``KernelSpec``.

The built-in registry (kernels/declare/registry.py) and a user's kernel file use the same keys. The spec
owns the facts every front end shows: how a problem size becomes a grid (``launch_shape``), which
block parameter the sliders move and which values suit it (``block_problem``), the bytes and
FLOPs of one call. The window, ``explain``, the simulator and the launcher all ask it.

Importing this module is cheap: a built-in kernel is named as ``"module:attr"`` and imported (with
its GPU library) only when it is launched or compiled.
"""

from __future__ import annotations

import importlib
import inspect
import math
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from sim.inputs.errors import UserError

BACKENDS = ("triton", "numba", "torch")
KINDS = ("kernel", "lanes", "trace")  # a declared kernel; the warp-lanes demo; the placement trace
TRITON_WARPS = (1, 2, 4, 8, 16, 32)
MAX_TRITON_BLOCK = 1 << 17
MAX_THREADS = 1024
MAX_THREADS_PER_DIM = (1024, 1024, 64)
DEFAULT_CHECK_SIZES = (1, 128, 1024, 1_048_583)  # the article's sizes: odd ones included

KEYS = {"kernel", "name", "title", "description", "group", "inputs", "output", "args", "block",
        "sweep", "constants", "grid", "tile", "bytes", "flops", "reference", "rtol", "atol", "peer",
        "dims", "check_sizes", "backend",
        # the block's dependent chain (sim.model.memory_cost.chain_ns), its own and its peer's
        "chain", "peer_chain",
        # built-in extras: the article's teaching versions, torch's two-kernel eager op, ...
        "teaching", "kind", "kernels_per_call", "cpu_max_elements",
        # the oldest GPU it runs on (the TMA matmuls: Hopper's tensor descriptors, 9.0)
        "min_cc"}


def cdiv(a: int, b: int) -> int:
    return -(-int(a) // int(b))


def call_with(fn: Callable, *positional, **named):
    """Call a declaration's lambda with only the named values it asks for (all, given **kw)."""
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):  # a builtin without a signature: positional only
        return fn(*positional)
    if any(p.kind is p.VAR_KEYWORD for p in params):
        return fn(*positional, **named)
    wanted = {p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    takes_var = any(p.kind is p.VAR_POSITIONAL for p in params)
    n_pos = sum(1 for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD))
    if not takes_var:
        positional = positional[:n_pos]
    taken = {p.name for p in list(params)[:len(positional)]
             if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)}
    return fn(*positional, **{k: v for k, v in named.items() if k in wanted and k not in taken})


def resolve(ref):
    """A kernel given as "module:attr" (the registry's cheap form) -> the object itself."""
    if not isinstance(ref, str):
        return ref
    module, _, attr = ref.partition(":")
    return getattr(importlib.import_module(module), attr)


def backend_of(kernel) -> str:
    """'triton' for a @triton.jit function, 'numba' for a @cuda.jit one (by type, no import)."""
    mod = type(kernel).__module__ or ""
    if mod.startswith("triton"):
        return "triton"
    if mod.startswith("numba"):
        return "numba"
    raise UserError(f"'kernel' must be a @triton.jit or a numba @cuda.jit function, got {type(kernel).__name__}")


@dataclass(frozen=True, slots=True)
class LaunchShape:
    """One launch of a kernel: its grid and blocks, as the launcher launches it."""
    grid: tuple[int, ...]  # as passed to the launch
    threads_per_block: int  # CUDA threads (Triton: 32 x num_warps)
    params: Mapping[str, Any]  # the block parameters used (BLOCK_SIZE, num_warps, threads, ...)
    elements_per_block: int | None  # elements one block covers, where that is a fixed tile

    @property
    def grid_blocks(self) -> int:
        return math.prod(self.grid)


@dataclass(frozen=True)
class KernelSpec:
    name: str
    backend: str  # "triton" | "numba" | "torch"
    kernel: Any  # the jit function / torch callable, or "module:attr"
    title: str
    description: str
    group: str
    block: Mapping[str, Any]  # block parameters with their defaults
    sweep: str | None  # the block parameter sliders and sweeps move
    inputs: Any = 2  # lambda <dims>: [arrays], or k: k random float32 arrays of n elements
    output: Callable | None = None
    args: Callable | None = None
    constants: Mapping[str, Any] = field(default_factory=dict)
    grid: Callable | None = None
    tile: Callable | None = None
    bytes: Callable | None = None
    flops: Callable | None = None
    reference: Callable | None = None
    rtol: float = 1e-5
    atol: float = 1e-6
    peer: Callable | None = None
    dims: Callable | None = None
    check_sizes: tuple[int, ...] = DEFAULT_CHECK_SIZES
    teaching: bool = False
    kind: str = "kernel"
    kernels_per_call: int = 1
    cpu_max_elements: int = 1_048_583  # largest size the interpreter/simulator check runs
    passes: int = 1  # dependent sweeps a block makes over its data (`chain`)
    reductions: int = 0  # block-wide reductions among them
    peer_chain: Mapping[str, int] | None = None  # the torch peer's own chain, where declared
    chain_extra: Mapping[str, object] | None = None  # the chain's `tile` and `loads` (sim.model.chain)
    min_cc: tuple[int, int] = (0, 0)  # the oldest compute capability it runs on (TMA: 9.0)
    origin: str = "built-in"  # or the file a user's declaration came from

    @property
    def chain(self) -> dict:
        """The declared chain as the launch model and a trace's meta take it: passes, reductions,
        and the `tile` and `loads` where declared."""
        return {"passes": self.passes, "reductions": self.reductions, **(self.chain_extra or {})}

    # -- what the views ask ------------------------------------------------------------------
    @property
    def block_param(self) -> str | None:
        return self.sweep

    @property
    def default_block(self) -> int | None:
        return None if self.sweep is None else self.block[self.sweep]

    @property
    def default_num_warps(self) -> int | None:
        return self.block.get("num_warps")

    @property
    def launchable(self) -> bool:
        """Its grid is ours to know (torch picks its own grids)."""
        return self.kind == "kernel" and self.backend != "torch"

    @property
    def benchable(self) -> bool:
        return self.kind == "kernel"

    @property
    def arity(self) -> int | None:
        return self.inputs if isinstance(self.inputs, int) else None

    @property
    def is_matrix_product(self) -> bool:
        """Whether its size is a matrix product's M, N and K (`--elements` and the window's size
        box then give its side n: M = N = K = n)."""
        return self.dims is not None and {"M", "N", "K"} <= set(self.size_dims(1))

    def size_dims(self, n: int, dims: Mapping[str, int] | None = None) -> dict:
        """The problem's sizes by name for size `n` (a matmul's M=N=K=n), or `dims` as given
        (a matmul of M=1024, N=4352, K=8192: the sawtooth's points)."""
        if dims:
            return {k: int(v) for k, v in dims.items()}
        return dict(self.dims(n)) if self.dims is not None else {"n": int(n)}

    def block_params(self, block: Mapping[str, Any] | int | None = None) -> dict:
        """The defaults with `block` applied: a dict of parameters, or one value of `sweep`."""
        params = dict(self.block)
        if isinstance(block, Mapping):
            unknown = set(block) - set(params)
            if unknown:
                raise UserError(f"{self.name} has no block parameter {sorted(unknown)[0]!r} "
                                f"(it has {', '.join(params) or 'none'})")
            params.update(block)
        elif block is not None:
            if self.sweep is None:
                raise UserError(f"{self.name}: its block size is fixed by torch")
            params[self.sweep] = block
        return params

    def block_problem(self, block: Mapping[str, Any] | int | None = None) -> str | None:
        """Why this block setting does not suit the kernel (None: it does)."""
        try:
            params = self.block_params(block)
        except UserError as exc:
            return str(exc)
        if self.backend == "triton":
            warps = params.get("num_warps", 4)
            if warps not in TRITON_WARPS:
                return f"num_warps must be 1, 2, 4, 8, 16 or 32, got {warps}"
            for key, value in params.items():
                if key in ("num_warps", "num_stages"):
                    continue
                if not (isinstance(value, int) and 1 <= value <= MAX_TRITON_BLOCK
                        and value & (value - 1) == 0):
                    return f"Triton {key} must be a power of two up to {MAX_TRITON_BLOCK:,}, got {value}"
        elif self.backend == "numba":
            dims = _as_tuple(params["threads"])
            if any(not isinstance(d, int) or d < 1 for d in dims) or len(dims) > 3:
                return f"threads per block must be 1 to 3 positive whole numbers, got {params['threads']}"
            if math.prod(dims) > MAX_THREADS or any(d > m for d, m in zip(dims, MAX_THREADS_PER_DIM)):
                return f"threads per block must be 1..{MAX_THREADS}, got {math.prod(dims):,}"
        return None

    def check_block(self, block=None) -> dict:
        problem = self.block_problem(block)
        if problem:
            raise UserError(f"{self.name}: {problem}")
        return self.block_params(block)

    def threads_per_block(self, params: Mapping[str, Any]) -> int:
        if self.backend == "triton":
            return 32 * int(params.get("num_warps", 4))
        if self.backend == "numba":
            return math.prod(_as_tuple(params["threads"]))
        raise UserError(f"{self.name}: torch chooses its own blocks")

    def launch_shape(self, n: int, block: Mapping[str, Any] | int | None = None,
                     sm_count: int | None = None, dims: Mapping[str, int] | None = None) -> LaunchShape:
        """The grid this kernel launches for problem size `n` (or the sizes `dims`): THE grid
        rule, asked by the window, `explain`, the simulator and the launcher alike."""
        if not self.launchable:
            raise UserError(f"{self.name}: torch chooses its own grid, so WarpScope cannot show it")
        params = self.check_block(block)
        named = {**self.size_dims(n, dims), **self.constants, **params, "sm_count": sm_count}
        tile = int(call_with(self.tile, **named)) if self.tile is not None else None
        if self.grid is not None:
            if sm_count is None and "sm_count" in _param_names(self.grid):
                raise UserError(f"{self.name}: its grid depends on the GPU's SM count; give a GPU")
            grid = call_with(self.grid, **named)
        else:
            grid = cdiv(named["n"], tile)
        grid = tuple(int(g) for g in _as_tuple(grid))
        if not grid or any(g < 1 for g in grid):
            raise UserError(f"{self.name}: a size of {n:,} gives no blocks (grid {grid})")
        if tile is None and self._one_program_per_share(n, dims):
            tile = cdiv(named["n"], math.prod(grid))
        return LaunchShape(grid, self.threads_per_block(params), params, tile)

    def _one_program_per_share(self, n: int, dims) -> bool:
        """A Triton program loads its whole block at once (no grid-stride loop): with a declared
        grid and no tile (a row softmax: one program per row), each covers its share of n."""
        return self.backend == "triton" and set(self.size_dims(n, dims)) == {"n"}

    def loop_trips(self, n: int, grid_blocks: int, threads_per_block: int) -> int:
        """DRAM round trips one block makes in a row: 1 for a fixed tile (every load issued up
        front), else the iterations of its grid-stride loop (sim.model.launch_model.Launch's `loop_trips`)."""
        if self.tile is not None:
            return 1
        return max(1, cdiv(n, int(grid_blocks) * int(threads_per_block)))

    def bytes_moved(self, n: int, arrays=None, dims: Mapping[str, int] | None = None) -> int:
        """Bytes one call must move: the declared formula, else every array read or written once
        (`arrays`: the inputs and output of this call)."""
        if self.bytes is not None:
            return int(call_with(self.bytes, **self.size_dims(n, dims)))
        if arrays is None:
            raise UserError(f"{self.name}: declare 'bytes' (or 'flops') to measure its throughput")
        return int(sum(a.numel() * a.element_size() if hasattr(a, "numel") else a.nbytes
                       for a in arrays))

    def flops_of(self, n: int, dims: Mapping[str, int] | None = None) -> int | None:
        return None if self.flops is None else int(call_with(self.flops, **self.size_dims(n, dims)))

    def peer_spec(self) -> "KernelSpec | None":
        """The torch peer a user's file declares, as a kernel of its own (measured beside it)."""
        if self.peer is None:
            return None
        peer = self.peer

        def run(*inputs, out=None):
            import torch

            return peer(torch, *inputs)

        return declare(dict(kernel=run, backend="torch", name=f"{self.name}_torch",
                            title=f"{self.title} (torch peer)", group=self.group, inputs=self.inputs,
                            output=self.output, bytes=self.bytes, flops=self.flops,
                            reference=self.reference, rtol=self.rtol, atol=self.atol,
                            dims=self.dims, check_sizes=self.check_sizes,
                            chain=self.peer_chain),
                       origin=self.origin)


def chain_of(value, where: str = "") -> tuple[int, int]:
    """A declaration's `chain`, dict(passes=P, reductions=R): P dependent sweeps over the block's
    data (a layernorm: mean, variance, normalise = 3), R block-wide reductions (a softmax: max,
    sum = 2); optional `tile` (the block parameter a sweep steps by) and `loads` (global loads a
    thread issues per element), read by sim.model.chain. None: one sweep, no reduction."""
    if value is None:
        return 1, 0
    if not isinstance(value, Mapping) or set(value) - {"passes", "reductions", "tile", "loads"} \
            or not isinstance(value.get("tile", ""), str) or type(value.get("loads", 1)) is not int:
        raise UserError(f"{where}'chain' must be dict(passes=..., reductions=..., tile='PARAM', "
                        f"loads=...), got {value!r}")
    passes, reductions = value.get("passes", 1), value.get("reductions", 0)
    if type(passes) is not int or type(reductions) is not int or passes < 1 or reductions < 0:
        raise UserError(f"{where}'chain' wants passes >= 1 and reductions >= 0 (whole numbers), "
                        f"got {value!r}")
    return passes, reductions


def _as_tuple(value) -> tuple:
    return tuple(value) if isinstance(value, (tuple, list)) else (value,)


def _param_names(fn) -> set[str]:
    try:
        return set(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        return set()


def declare(decl: Mapping[str, Any], origin: str = "built-in") -> KernelSpec:
    """A declaration (docs/KERNEL_FILES.md) -> KernelSpec; every mistake is one UserError line."""
    where = "" if origin == "built-in" else f"{origin}: "
    if not isinstance(decl, Mapping):
        raise UserError(f"{where}a declaration must be a dict, got {type(decl).__name__}")
    unknown = set(decl) - KEYS
    if unknown:
        raise UserError(f"{where}unknown declaration key {sorted(unknown)[0]!r} "
                        f"(known: {', '.join(sorted(KEYS - {'backend', 'kind', 'teaching', 'kernels_per_call', 'cpu_max_elements', 'min_cc'}))})")
    if "kernel" not in decl:
        raise UserError(f"{where}the declaration needs 'kernel'")
    kernel = decl["kernel"]
    backend = decl.get("backend") or backend_of(kernel)
    if backend not in BACKENDS:
        raise UserError(f"{where}backend must be one of {', '.join(BACKENDS)}, got {backend!r}")
    name = decl.get("name") or getattr(kernel, "__name__", None) or getattr(
        getattr(kernel, "fn", None), "__name__", None) or getattr(getattr(kernel, "py_func", None), "__name__", "kernel")
    kind = decl.get("kind", "kernel")
    if kind not in KINDS:
        raise UserError(f"{where}kind must be one of {', '.join(KINDS)}, got {kind!r}")
    block = dict(decl.get("block") or {})
    if backend == "triton":
        block.setdefault("num_warps", 4)
    elif backend == "numba" and "threads" not in block and kind == "kernel":
        raise UserError(f"{where}{name}: a Numba kernel's 'block' needs 'threads' (threads per block)")
    if kind == "kernel" and backend != "torch" and not decl.get("block"):
        raise UserError(f"{where}{name}: the declaration needs 'block' (its block parameters and defaults)")
    sweep = decl.get("sweep")
    if sweep is None and backend != "torch":
        sweep = next((k for k in block if k not in ("num_warps", "num_stages")), None)
    if sweep is not None and sweep not in block:
        raise UserError(f"{where}{name}: 'sweep' names {sweep!r}, which is not in 'block'")
    inputs = decl.get("inputs", 2)
    if kind == "kernel" and not (callable(inputs) or (isinstance(inputs, int) and inputs >= 1)):
        raise UserError(f"{where}{name}: 'inputs' must be a function of the size or a count of arrays")
    default_tile = None
    if "tile" not in decl and "grid" not in decl and backend != "torch" and kind == "kernel":
        if backend == "triton":
            if "BLOCK_SIZE" not in block:
                raise UserError(f"{where}{name}: give 'grid' (blocks for a size): there is no "
                                "BLOCK_SIZE to divide the size by")
            default_tile = lambda BLOCK_SIZE: BLOCK_SIZE  # noqa: E731
        else:
            default_tile = lambda threads: math.prod(_as_tuple(threads))  # noqa: E731
    n_arrays = inputs if isinstance(inputs, int) else None
    bytes_fn = decl.get("bytes")
    if bytes_fn is None and n_arrays is not None:
        bytes_fn = lambda n, _k=n_arrays: 4 * n * (_k + 1)  # noqa: E731 - inputs read, output written
    passes, reductions = chain_of(decl.get("chain"), f"{where}{name}: ")
    chain_of(decl.get("peer_chain"), f"{where}{name}: peer_")
    for key in ("output", "args", "grid", "tile", "bytes", "flops", "reference", "peer", "dims"):
        if decl.get(key) is not None and not callable(decl[key]):
            raise UserError(f"{where}{name}: '{key}' must be a function (a lambda)")
    return KernelSpec(
        name=str(name), backend=backend, kernel=kernel,
        title=str(decl.get("title") or name),
        description=str(decl.get("description") or _doc(kernel)),
        group=str(decl.get("group") or ("yours" if origin != "built-in" else name)),
        block=block, sweep=sweep, inputs=inputs, output=decl.get("output"), args=decl.get("args"),
        constants=dict(decl.get("constants") or {}), grid=decl.get("grid"),
        tile=decl.get("tile") or default_tile, bytes=bytes_fn, flops=decl.get("flops"),
        reference=decl.get("reference"), rtol=float(decl.get("rtol", 1e-5)),
        atol=float(decl.get("atol", 1e-6)), peer=decl.get("peer"), dims=decl.get("dims"),
        check_sizes=tuple(int(s) for s in decl.get("check_sizes", DEFAULT_CHECK_SIZES)),
        teaching=bool(decl.get("teaching", False)), kind=kind,
        kernels_per_call=int(decl.get("kernels_per_call", 1)),
        cpu_max_elements=int(decl.get("cpu_max_elements", 1_048_583)), origin=origin,
        passes=passes, reductions=reductions, peer_chain=decl.get("peer_chain"),
        chain_extra={k: v for k, v in (decl.get("chain") or {}).items() if k in ("tile", "loads")},
        min_cc=tuple(int(v) for v in decl.get("min_cc", (0, 0))))


def _doc(kernel) -> str:
    if isinstance(kernel, str):
        return ""
    fn = getattr(kernel, "fn", None) or getattr(kernel, "py_func", None) or kernel
    return inspect.getdoc(fn) or ""
