"""Registers, shared memory and spills of a kernel on any GPU, without that GPU.

The occupancy a user sees depends on what the compiler gave the kernel. Both compilers can say it
with no GPU: Triton's ``triton.compile`` for a ``GPUTarget``, and Numba's ``compile_ptx`` plus
``ptxas``. This module asks them, for a compute capability taken from a GPU preset::

    from kernels.offline_compile.compile import triton_resources, signature_from_args

    res = triton_resources(softmax_kernel, signature_from_args((out, x, 4096)),
                           {"BLOCK_SIZE": 4096}, num_warps=8, num_stages=3, cc=(9, 0))
    res.regs_per_thread, res.smem_per_block_bytes, res.stack_bytes, res.compiler

Registers depend on the compiler's version (triton 3.6 and 3.7 differ by tens of registers for
the same softmax), so every record says which compiler and ptxas produced it. The signature is
specialized the way Triton's launcher specializes real arguments (16-byte-aligned pointers,
ints divisible by 16, an int equal to 1 as a constant), so a kernel compiled here matches what the
driver reports for the same Triton version.

The compilers need Triton's real JIT and Numba's real CUDA target. When this process runs kernels
on the CPU (Triton's interpreter, numba-cuda's simulator), they run in a child process that
imports the kernel's module afresh (``kernels/offline_compile/toolchain.py``). Results are cached in memory and
in the user's cache folder (``compiled/`` there, sim/inputs/places.py; one small JSON file each), so
moving a slider back and forth compiles each configuration once.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field, fields
from importlib import metadata
from pathlib import Path

from sim.inputs.errors import UserError
from sim.inputs.files import read_json_file, read_user_bytes, write_json_atomic
from sim.inputs.places import compiled_dir

from kernels.host.child import PARENT_ENV
from kernels.offline_compile.toolchain import CompileError, signature_entry

__all__ = ["CompileCancelled", "CompileError", "CompiledResources", "CompileRequest", "ResourceCache",
           "numba_argtypes_from_args", "numba_request", "numba_resources",
           "resources_many", "signature_from_args", "spec_request", "triton_request",
           "triton_resources"]

ROOT = Path(__file__).resolve().parents[2]
CHILD_TIMEOUT_S = 120  # per configuration: a huge tile can keep LLVM busy for minutes
CACHE_FORMAT = "warpscope-compiled/1"
POLL_S = 0.2  # how often a waiting compile looks whether it was cancelled
MAX_SOURCE_BYTES = 4 << 20  # a kernel's module: source code, hashed into its cache key


class CompileCancelled(UserError):
    """The caller's `should_cancel` said stop: the compiler processes were ended, nothing cached."""


@dataclass(frozen=True, slots=True)
class CompiledResources:
    """What the compiler gave one kernel for one target: what the occupancy rules need."""

    kernel: str
    backend: str  # "triton" | "numba"
    compute_capability: tuple[int, int]
    regs_per_thread: int
    static_smem_bytes: int  # in the cubin (Triton kernels: the 1 KiB sm_90+ reserve, if any)
    dynamic_smem_bytes: int  # what the launcher asks for at launch (Triton: metadata.shared)
    stack_bytes: int  # per thread: register spills and local arrays (cuobjdump's STACK)
    local_bytes: int  # per thread (cuobjdump's LOCAL)
    threads_per_block: int | None  # Triton: 32 x num_warps; Numba: set at launch
    compiler: str  # "triton 3.7.1", "numba-cuda 0.30.4, NVVM of CUDA 12.9"
    ptxas: str  # "12.8.93"

    @property
    def cubin_reserved_smem_bytes(self) -> int:
        """The driver's per-block reserve that sm_90+ cubins carry as a shared section (1 KiB):
        cuobjdump counts it in SHARED, the driver does not (it adds the reserve itself, and so
        do the occupancy rules: sim.rules.occupancy). A 512-float32 array reads 3,072 B in the cubin
        and 2,048 B from the H200's driver."""
        if tuple(self.compute_capability) < (9, 0):
            return 0
        from sim.rules.devices import architecture_limits

        reserve = architecture_limits(self.compute_capability)["smem_reserved_per_block_bytes"]
        return reserve if self.static_smem_bytes >= reserve else 0

    @property
    def smem_per_block_bytes(self) -> int:
        """Static + dynamic shared memory per block as the driver counts it (without the reserve)."""
        return self.static_smem_bytes - self.cubin_reserved_smem_bytes + self.dynamic_smem_bytes

    @property
    def spills(self) -> bool:
        return self.stack_bytes > 0

    def to_dict(self) -> dict:
        data = asdict(self)
        data["compute_capability"] = list(self.compute_capability)
        return data

    @classmethod
    def from_dict(cls, data: dict) -> "CompiledResources":
        values = {f.name: data[f.name] for f in fields(cls)}
        values["compute_capability"] = tuple(int(v) for v in values["compute_capability"])
        return cls(**values)


# --------------------------------------------------------------------------------------------
# Arguments -> what the compilers are told
# --------------------------------------------------------------------------------------------
def signature_from_args(args) -> tuple[str, ...]:
    """Triton signature entries for a kernel's arguments (before its constexprs), as the
    launcher would specialize them: numpy arrays -> "*fp32:16" ("*fp16", "*bf16", "*i32", ...;
    ":16" = 16-byte aligned, as device allocations are), ints -> "i32"/"i64" (":16" when a
    multiple of 16; the int 1 -> "1", a constant), floats -> "fp32"."""
    return tuple(signature_entry(a) for a in args)


def numba_argtypes_from_args(args) -> tuple[str, ...]:
    """Numba types for a kernel's arguments, as numba.typeof gives them for device arrays:
    a C-contiguous float32 matrix -> "float32[:, ::1]", an int -> "int64", a float -> "float64"."""
    out = []
    for a in args:
        if isinstance(a, bool):
            out.append("boolean")
        elif isinstance(a, int):
            out.append("int64")
        elif isinstance(a, float):
            out.append("float64")
        elif hasattr(a, "dtype") and getattr(a, "ndim", 0) > 0:  # a numpy array or a tensor
            dims = [":"] * a.ndim
            flags = getattr(a, "flags", None)
            if flags.c_contiguous if flags is not None else a.is_contiguous():
                dims[-1] = "::1"
            elif flags is not None and flags.f_contiguous:
                dims[0] = "::1"
            out.append(f"{str(a.dtype).removeprefix('torch.')}[{', '.join(dims)}]")
        elif hasattr(a, "dtype"):  # a numpy scalar
            out.append(str(a.dtype))
        else:
            raise UserError(f"cannot pass a {type(a).__name__} to a Numba kernel: "
                            "give numpy arrays, ints and floats")
    return tuple(out)


def _numba_simulated() -> bool:
    numba = sys.modules.get("numba")
    if numba is not None:
        return bool(numba.config.ENABLE_CUDASIM)
    return os.environ.get("NUMBA_ENABLE_CUDASIM", "0") == "1"


def _in_process(kernel) -> bool:
    """True when this process holds the real compiler's kernel object, not the interpreter's or
    the simulator's (then a child process compiles it)."""
    name = type(kernel).__name__
    if name in ("JITFunction", "CUDADispatcher"):
        return True
    return name == "function" and not _numba_simulated()  # a plain Python function for Numba


def _python_function(kernel):
    return getattr(kernel, "py_func", None) or getattr(kernel, "fn", None) or kernel


def _locate(kernel) -> dict:
    """Where a child process finds the kernel again: its module (or file) and global name."""
    fn = _python_function(kernel)
    module = sys.modules.get(getattr(fn, "__module__", None) or "")
    path = getattr(module, "__file__", None)
    if module is None or not path:
        raise UserError(f"{getattr(fn, '__name__', kernel)} is defined in no file: WarpScope "
                        "compiles kernels from a .py file")
    attr = next((k for k, v in vars(module).items() if v is kernel), None)
    if attr is None:
        raise UserError(f"{fn.__name__} must be a top-level name of {path} to be compiled")
    from kernels.declare.kernel_file import MODULE_PREFIX

    if module.__name__ == "__main__" or module.__name__.startswith(MODULE_PREFIX):
        return {"file": str(path), "attr": attr}  # a script or a user's kernel file
    return {"module": module.__name__, "attr": attr}


def _source_hash(kernel) -> str:
    """Hash of the file that defines the kernel (its helpers and constants live there too)."""
    from kernels.declare.kernel_file import MODULE_PREFIX

    fn = _python_function(kernel)
    module = sys.modules.get(getattr(fn, "__module__", None) or "")
    path = getattr(module, "__file__", None)
    # a kernel file gets a new module name each time it is opened: name it by its path
    owner = path if fn.__module__.startswith(MODULE_PREFIX) and path else fn.__module__
    digest = hashlib.sha256(f"{owner}.{fn.__qualname__}".encode())
    if path and os.path.isfile(path):
        digest.update(read_user_bytes(path, "kernel source", MAX_SOURCE_BYTES))
    return digest.hexdigest()


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "missing"


# --------------------------------------------------------------------------------------------
# Requests and the cache
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class CompileRequest:
    kernel: object = field(compare=False)
    key: dict  # everything the result depends on, JSON-ready
    spec: dict  # what the compiler is told, JSON-ready

    @property
    def digest(self) -> str:
        return hashlib.sha256(json.dumps(self.key, sort_keys=True).encode()).hexdigest()


def _jsonable(name: str, value):
    """A constexpr as JSON (requests travel to child processes and into the disk cache)."""
    if isinstance(value, (bool, int, float, str)) or value is None:
        return value
    if type(value).__name__ == "dtype" and type(value).__module__.startswith("triton"):
        return {"triton_dtype": str(value)}  # tl.float16 and friends
    raise UserError(f"constexpr {name}={value!r}: WarpScope passes numbers, strings, None and "
                    "Triton dtypes")


def _kernel_of(kernel, backend: str):
    """The kernel object (a registry's "module:attr" is imported), checked for its backend."""
    from kernels.declare.spec import backend_of, resolve

    kernel = resolve(kernel)
    if backend == "numba" and type(kernel).__name__ == "function":
        return kernel  # a plain Python function, compiled as a Numba kernel
    try:
        found = backend_of(kernel)
    except UserError:
        found = None
    if found != backend:
        decorator = "@triton.jit" if backend == "triton" else "@cuda.jit"
        raise UserError(f"{type(kernel).__name__} is not a {decorator} function")
    return kernel


def triton_request(fn, signature, constexprs: dict | None = None, num_warps: int = 4,
                   num_stages: int = 3, cc=(9, 0), max_registers: int | None = None) -> CompileRequest:
    fn = _kernel_of(fn, "triton")
    cc = (int(cc[0]), int(cc[1]))
    sig = ({k: str(v) for k, v in signature.items()} if isinstance(signature, dict)
           else [str(v) for v in signature])
    consts = {k: _jsonable(k, v) for k, v in (constexprs or {}).items()}
    spec = {"backend": "triton", "signature": sig, "constexprs": consts,
            "num_warps": int(num_warps), "num_stages": int(num_stages), "cc": list(cc)}
    if max_registers is not None:  # Triton's maxnreg: ptxas keeps each thread within it
        spec["maxnreg"] = int(max_registers)
    key = spec | {"source": _source_hash(fn), "compiler": f"triton {_version('triton')}"}
    return CompileRequest(fn, key, spec)


def numba_request(kernel, argtypes, cc=(9, 0), max_registers: int | None = None) -> CompileRequest:
    kernel = _kernel_of(kernel, "numba")
    cc = (int(cc[0]), int(cc[1]))
    spec = {"backend": "numba", "argtypes": [str(t) for t in argtypes], "cc": list(cc)}
    if max_registers is not None:  # cuda.jit(max_registers=N): ptxas --maxrregcount=N
        spec["max_registers"] = int(max_registers)
    key = spec | {"source": _source_hash(kernel),
                  "compiler": f"numba-cuda {_version('numba-cuda')}"}
    return CompileRequest(kernel, key, spec)


def spec_request(spec, n: int, block=None, cc=(9, 0), arrays=None,
                 max_registers: int | None = None) -> CompileRequest:
    """The request for a registry kernel (a KernelSpec) launched at size `n` with `block` (a
    sweep value or a dict): the arguments, constexprs and options kernels/launching/launcher.py passes.
    `arrays`: (inputs, out) if you have them; else they are made on the host for size n (the
    ints among the arguments, and so the code, depend on n)."""
    from kernels.measure.harness import make_arrays
    from kernels.launching.launcher import TRITON_OPTIONS, kernel_args

    if not spec.launchable:
        raise UserError(f"{spec.name} is not a kernel WarpScope launches with a grid")
    params = spec.check_block(block)
    inputs, out = arrays if arrays is not None else make_arrays(spec, n, on_gpu=False)
    args = kernel_args(spec, inputs, out, n)
    if spec.backend == "numba":
        return numba_request(spec.kernel, numba_argtypes_from_args(args), cc, max_registers)
    options = {k: params.pop(k) for k in TRITON_OPTIONS if k in params}
    constexprs = {**spec.constants, **params}
    from kernels.declare.spec import resolve

    kernel, signature = resolve(spec.kernel), None
    warps = options.get("num_warps", 4)
    if hasattr(kernel, "compile_signature"):  # a launcher that makes its kernel's arguments (TMA)
        kernel, signature, constexprs = kernel.compile_signature(args, constexprs, warps)
    return triton_request(kernel, signature or signature_from_args(args), constexprs,
                          warps, options.get("num_stages", 3), cc, max_registers)


def cache_folder() -> Path:
    return compiled_dir()  # sim/inputs/places.py: ~/.cache/warpscope/compiled on Linux


class ResourceCache:
    """Compiled resources by request digest: in memory, and one JSON file each in `folder`
    (None: memory only). A damaged or foreign file is ignored and compiled again; a folder that
    cannot be written only costs the next session a compile. Compile errors are remembered in
    memory only (an edited file is a new key)."""

    def __init__(self, folder: Path | str | None = None):
        self.folder = Path(folder) if folder is not None else None
        self._memory: dict[str, CompiledResources | CompileError] = {}
        self.compiled = 0  # configurations this cache had to compile

    def get(self, request: CompileRequest) -> CompiledResources | CompileError | None:
        digest = request.digest
        if digest in self._memory:
            return self._memory[digest]
        if self.folder is None:
            return None
        try:
            data = read_json_file(self.folder / f"{digest}.json", "compile cache entry", 1 << 20)
            if data.get("format") != CACHE_FORMAT or data.get("key") != request.key:
                return None
            found = CompiledResources.from_dict(data["resources"])
        except (OSError, ValueError, KeyError, TypeError, AttributeError):  # UserError too
            return None
        self._memory[digest] = found
        return found

    def put(self, request: CompileRequest, resources: CompiledResources | CompileError) -> None:
        self._memory[request.digest] = resources
        if self.folder is None or isinstance(resources, CompileError):
            return
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            write_json_atomic(self.folder / f"{request.digest}.json",
                              {"format": CACHE_FORMAT, "key": request.key,
                               "resources": resources.to_dict()}, indent=1)
        except (OSError, UserError):
            pass


_DEFAULT_CACHE: list[ResourceCache] = []


def default_cache() -> ResourceCache:
    if not _DEFAULT_CACHE:
        _DEFAULT_CACHE.append(ResourceCache(cache_folder()))
    return _DEFAULT_CACHE[0]


# --------------------------------------------------------------------------------------------
# Compiling
# --------------------------------------------------------------------------------------------
def _compile_here(request: CompileRequest) -> CompiledResources:
    from kernels.offline_compile.toolchain import compile_request

    return CompiledResources.from_dict(compile_request(request.spec, request.kernel))


def _start_child(specs: list[dict]) -> tuple[subprocess.Popen, str]:
    batch = {"sys_path": [str(ROOT)] + [p for p in sys.path if p], "requests": specs}
    env = os.environ | {"TRITON_INTERPRET": "0", "NUMBA_ENABLE_CUDASIM": "0",
                        PARENT_ENV: str(os.getpid()),  # it imports the user's file: dies with us
                        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT),
                                                                    os.environ.get("PYTHONPATH")]))}
    proc = subprocess.Popen([sys.executable, "-m", "kernels.offline_compile.toolchain"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            cwd=ROOT)
    return proc, json.dumps(batch)


def _finish_child(proc: subprocess.Popen, batch: str, count: int, timeout: float,
                  should_cancel=None) -> list[CompiledResources | CompileError]:
    deadline = time.monotonic() + timeout
    send = batch
    while True:
        wait = timeout if should_cancel is None else min(POLL_S, deadline - time.monotonic())
        try:  # communicate() may be called again after a timeout (without the input again)
            stdout, stderr = proc.communicate(send, timeout=max(0.0, wait))
            break
        except subprocess.TimeoutExpired:
            send = None
            if should_cancel is not None and should_cancel():
                proc.kill()
                proc.communicate()
                raise CompileCancelled("compiling was cancelled") from None
            if time.monotonic() < deadline:
                continue
            proc.kill()
            _, stderr = proc.communicate()
            err = CompileError(f"compiling took longer than {timeout:.0f} s and was stopped "
                               "(a very large block?)", stderr)
            return [err] * count
    try:
        answers = json.loads(stdout)
    except ValueError:
        lines = stderr.strip().splitlines() or ["no output"]
        return [CompileError(f"the compiler process failed: {lines[-1]}", stderr)] * count
    return [CompiledResources.from_dict(a["ok"]) if "ok" in a else CompileError(a["error"],
                                                                                a["log"])
            for a in answers]


def _compile_in_children(requests: list[CompileRequest], workers: int | None,
                         timeout_s: float | None, should_cancel=None
                         ) -> list[CompiledResources | CompileError]:
    """Child processes side by side (both compilers' front ends are single-threaded): one per
    backend, or `workers` of them sharing the requests round-robin."""
    results: list = [None] * len(requests)
    groups: dict[object, list[int]] = {}
    specs = {}
    for i, r in enumerate(requests):
        try:
            specs[i] = r.spec | {"where": _locate(r.kernel)}
        except UserError as exc:
            results[i] = CompileError(str(exc))
            continue
        group = len(specs) % workers if workers else r.spec["backend"]
        groups.setdefault(group, []).append(i)
    children = [(idx, *_start_child([specs[i] for i in idx])) for idx in groups.values()]
    try:
        for idx, proc, batch in children:
            timeout = timeout_s or CHILD_TIMEOUT_S * len(idx)
            for i, res in zip(idx, _finish_child(proc, batch, len(idx), timeout, should_cancel)):
                results[i] = res
    except CompileCancelled:
        for _, proc, _ in children:  # the others too
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
        raise
    return results


def resources_many(requests, cache: ResourceCache | None = None, *, workers: int | None = None,
                   timeout_s: float | None = None, should_cancel=None
                   ) -> list[CompiledResources | CompileError]:
    """Resources for each request, in order; a configuration that does not compile gives its
    CompileError in its place. Cache misses that need a child process share one per backend;
    `workers` > 1 sends every miss to that many child processes instead (a sweep over many
    configurations on a many-core machine). `timeout_s` bounds each child (default: 120 s per
    configuration it compiles). `should_cancel()` is asked while waiting: True ends the child
    processes and raises CompileCancelled (a compile in this process is asked between
    configurations); nothing unfinished is cached."""
    cache = cache or default_cache()
    results: list = [cache.get(r) for r in requests]
    missing = [i for i, r in enumerate(results) if r is None]
    parallel = workers is not None and workers > 1
    here = [i for i in missing if not parallel and _in_process(requests[i].kernel)]
    child = [i for i in missing if i not in here]
    for i in here:
        if should_cancel is not None and should_cancel():
            raise CompileCancelled("compiling was cancelled")
        try:
            results[i] = _compile_here(requests[i])
        except CompileError as exc:
            results[i] = exc
        cache.compiled += 1
        cache.put(requests[i], results[i])
    if child:
        compiled = _compile_in_children([requests[i] for i in child],
                                         workers if parallel else None, timeout_s, should_cancel)
        for i, res in zip(child, compiled):
            results[i] = res
    for i in child:
        cache.compiled += 1
        cache.put(requests[i], results[i])
    return results


def _one(request: CompileRequest, cache) -> CompiledResources:
    result = resources_many([request], cache)[0]
    if isinstance(result, CompileError):
        raise result
    return result


def triton_resources(fn, signature, constexprs: dict | None = None, num_warps: int = 4,
                     num_stages: int = 3, cc=(9, 0), *, cache: ResourceCache | None = None
                     ) -> CompiledResources:
    """Compile a @triton.jit kernel for compute capability `cc`; raise CompileError (a
    UserError, with .log) if it does not compile. `signature`: entries for the arguments before
    the constexprs, positional or by name (see signature_from_args)."""
    return _one(triton_request(fn, signature, constexprs, num_warps, num_stages, cc), cache)


def numba_resources(kernel, argtypes, cc=(9, 0), *, cache: ResourceCache | None = None
                    ) -> CompiledResources:
    """Compile a @cuda.jit kernel for compute capability `cc` with these argument types
    ("float32[::1]", "int64", ...; see numba_argtypes_from_args)."""
    return _one(numba_request(kernel, argtypes, cc), cache)
