"""The compilers themselves, run in this process: a kernel in, its resource use for one compute
capability out, read from the cubin the way the driver will read it.

Triton: ``triton.compile(ASTSource(...), target=GPUTarget("cuda", cc, 32))`` builds the cubin with
the ptxas its wheel bundles. Numba: ``cuda.compile_ptx`` (NVIDIA's NVVM), then ``ptxas``.
Either way ``cuobjdump -res-usage`` reads registers, shared memory, stack (spills and local
arrays) and local memory from the cubin. No GPU and no driver are needed.

These need Triton's real compiler and Numba's real CUDA target, not the interpreter or the
simulator; ``kernels/offline_compile/compile.py`` runs them in a child process (``python -m kernels.offline_compile.toolchain``)
when this process runs kernels on the CPU. Every failure is a ``CompileError``: one line for the
user, the compiler's whole output in ``.log``.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import json
import numbers
import os
import re
import shutil
import subprocess
import sys
import tempfile
import traceback
import types
from pathlib import Path

from sim.inputs.errors import UserError

ANSI = re.compile(r"\x1b\[[0-9;]*m")


class CompileError(UserError):
    """A kernel that does not compile (or a target no compiler here can build for).
    str() is one line; ``log`` is the compiler's whole output, for a log view."""

    def __init__(self, message: str, log: str = ""):
        super().__init__(message)
        self.log = log or message


def one_line(text: str, limit: int = 300) -> str:
    """The first meaningful line of a compiler message, without colour codes."""
    lines = [ln.strip() for ln in ANSI.sub("", str(text)).splitlines() if ln.strip()]
    line = lines[0] if lines else ""
    return line if len(line) <= limit else line[: limit - 1] + "…"


# --------------------------------------------------------------------------------------------
# NVIDIA's tools: where they are, which version, which targets
# --------------------------------------------------------------------------------------------
def _triton_bin() -> Path | None:
    """triton/backends/nvidia/bin, found without importing triton."""
    spec = importlib.util.find_spec("triton")
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = Path(list(spec.submodule_search_locations)[0]) / "backends" / "nvidia" / "bin"
    return folder if folder.is_dir() else None


def _pathfinder(name: str) -> str | None:
    """A CUDA tool from NVIDIA's pip packages or the CUDA toolkit (cuda-pathfinder's search)."""
    try:
        from cuda.pathfinder import find_nvidia_binary_utility
    except ImportError:
        return None
    try:
        return find_nvidia_binary_utility(name)
    except Exception:  # an unsupported platform or name: not found
        return None


@functools.lru_cache(maxsize=None)
def cuobjdump() -> str:
    candidates = [_triton_bin() and str(_triton_bin() / "cuobjdump"), _pathfinder("cuobjdump"),
                  shutil.which("cuobjdump")]
    for path in candidates:
        if path and os.access(path, os.X_OK):
            return path
    raise CompileError("cuobjdump not found: install triton (its wheel bundles it) or the CUDA "
                       "toolkit")


@functools.lru_cache(maxsize=None)
def tool_version(path: str) -> str:
    """'12.8.93' from a CUDA tool's --version ('Cuda compilation tools, release 12.8, V12.8.93')."""
    out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30).stdout
    match = re.search(r"V(\d+\.\d+\.\d+)", out) or re.search(r"release (\d+\.\d+)", out)
    return match.group(1) if match else "unknown"


@functools.lru_cache(maxsize=None)
def ptxas_targets(path: str) -> frozenset[str]:
    """The sm_XY names this ptxas accepts for --gpu-name (from its --help)."""
    out = subprocess.run([path, "--help"], capture_output=True, text=True, timeout=30).stdout
    section = out[out.find("--gpu-name"):]
    section = section[: section.find("\n--", 1)] if "\n--" in section else section
    return frozenset(re.findall(r"'(sm_\d+)'", section))


def check_target(ptxas: str, cc: tuple[int, int], owner: str) -> None:
    """One line if this ptxas cannot build for the compute capability."""
    known = ptxas_targets(ptxas)
    if known and f"sm_{cc[0]}{cc[1]}" not in known:
        numbers = sorted(int(s[3:]) for s in known)
        raise CompileError(
            f"compute capability {cc[0]}.{cc[1]} cannot be targeted: ptxas {tool_version(ptxas)} "
            f"({owner}) builds for sm_{numbers[0]} to sm_{numbers[-1]}")


def res_usage(cubin: bytes, entry: str | None = None) -> dict[str, int]:
    """REG, STACK, SHARED, LOCAL of the kernel `entry` (the only/first function if None)."""
    with tempfile.TemporaryDirectory(prefix="warpscope-cubin-") as folder:
        path = os.path.join(folder, "kernel.cubin")
        with open(path, "wb") as fh:
            fh.write(cubin)
        done = subprocess.run([cuobjdump(), "-res-usage", path], capture_output=True, text=True,
                              timeout=60)
    if done.returncode:
        raise CompileError(f"cuobjdump could not read the cubin: {one_line(done.stderr)}",
                           done.stdout + done.stderr)
    functions = {}
    for name, fields in re.findall(r"Function ([^\s:]+):\s*\n\s*(REG:.*)", done.stdout):
        functions[name] = {k: int(v) for k, v in re.findall(r"(\w+):(\d+)", fields)}
    if not functions:
        raise CompileError("cuobjdump found no kernel in the cubin", done.stdout)
    usage = functions.get(entry) if entry else None
    return usage or next(iter(functions.values()))


# --------------------------------------------------------------------------------------------
# Triton
# --------------------------------------------------------------------------------------------
NO_CONSTANT = object()


def _parse_entry(entry) -> tuple[str, int | None, object]:
    """A signature entry -> (type, divisibility hint, constant or NO_CONSTANT). Entries follow
    Triton's AOT compiler (triton/tools/compile.py): "*fp32:16" (a pointer whose address is a
    multiple of 16), "i32:16", "i32", "fp32", or a constant the launcher bakes in: a number
    (it does that for the int 1) or "None" (a None argument)."""
    if entry is None or str(entry).strip() == "None":
        return "", None, None
    if isinstance(entry, (bool, int, float)):
        return "", None, entry
    text = str(entry).strip()
    try:
        return "", None, int(text)
    except ValueError:
        pass
    ty, _, hint = text.partition(":")
    return ty.strip(), int(hint) if hint else None, NO_CONSTANT


def triton_source(jit_fn, signature, constexprs: dict):
    """The ASTSource Triton's launcher would build for these arguments: the same types, the same
    divisibility-by-16 hints (16-byte-aligned pointers, ints that are multiples of 16) and the
    same constant for an int equal to 1, unless the kernel opted out (do_not_specialize...)."""
    from triton.backends.compiler import BaseBackend
    from triton.compiler import ASTSource

    runtime = [p for p in jit_fn.params if not p.is_constexpr]
    if isinstance(signature, dict):
        unknown = set(signature) - {p.name for p in runtime}
        if unknown:
            raise CompileError(f"{jit_fn.__name__} has no argument(s) {', '.join(sorted(unknown))}")
        missing = [p.name for p in runtime if p.name not in signature and not p.has_default]
        by_name = dict(signature)
    else:
        entries = list(signature)
        missing = [p.name for p in runtime[len(entries):] if not p.has_default]
        if len(entries) > len(runtime):
            raise CompileError(f"{jit_fn.__name__} takes {len(runtime)} arguments before its "
                               f"constexprs, got {len(entries)}")
        by_name = dict(zip((p.name for p in runtime), entries))
    if missing:
        raise CompileError(f"{jit_fn.__name__}: no value for argument(s) {', '.join(missing)}")
    sig, consts, attrs = {}, {}, {}
    divisible = BaseBackend.parse_attr("D")
    for p in jit_fn.params:
        key = (p.num,)
        if p.is_constexpr:
            sig[p.name] = "constexpr"
            if p.name in constexprs:
                consts[key] = constexprs[p.name]
            elif p.has_default:
                consts[key] = p.default
            else:
                raise CompileError(f"{jit_fn.__name__}: no value for constexpr {p.name}")
            continue
        entry = by_name[p.name] if p.name in by_name else signature_entry(p.default)
        ty, hint, const = _parse_entry(entry)
        annotated = p.annotation_type
        if const is None or type(const) is int and const == 1 and not (
                p.do_not_specialize or annotated):
            sig[p.name] = "constexpr"  # None, or the int 1: the launcher passes a constant
            consts[key] = const
            continue
        if const is not NO_CONSTANT:  # a number the launcher would not bake in
            ty, hint = _scalar_type(const), None
        if annotated:
            if annotated == "u1" or annotated[:2] in ("fp", "bf"):
                hint = None  # the launcher does not specialize floats and bools
            ty = annotated
        sig[p.name] = ty
        if hint == 16 and not p.do_not_specialize and not p.do_not_specialize_on_alignment:
            attrs[key] = divisible
    return ASTSource(fn=jit_fn, signature=sig, constexprs=consts, attrs=attrs)


POINTER_TYPES = {"float32": "fp32", "float16": "fp16", "bfloat16": "bf16", "float64": "fp64",
                 "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64", "uint8": "u8",
                 "uint16": "u16", "uint32": "u32", "uint64": "u64", "bool": "i1"}


def signature_entry(value) -> str:
    """One argument as the launcher types and specializes it (see _parse_entry)."""
    if value is None:
        return "None"
    if hasattr(value, "data_ptr") or getattr(value, "ndim", 0) > 0:  # an array: a pointer
        dtype = str(value.dtype).removeprefix("torch.")
        if dtype not in POINTER_TYPES:
            raise UserError(f"Triton has no pointer type for {dtype} arrays")
        return f"*{POINTER_TYPES[dtype]}:16"  # device copies are allocated 256-byte aligned
    ty = _scalar_type(value)
    if ty[0] in "iu" and ty != "u1":
        if int(value) == 1:
            return "1"
        if int(value) % 16 == 0:
            return f"{ty}:16"
    return ty


def _scalar_type(value) -> str:
    if isinstance(value, bool) or type(value).__name__ == "bool_":
        return "u1"
    if isinstance(value, numbers.Integral):
        value = int(value)
        return "i32" if -2**31 <= value < 2**31 else "u64" if value >= 2**63 else "i64"
    if isinstance(value, numbers.Real):
        return "fp32"
    raise UserError(f"cannot pass a {type(value).__name__} to a Triton kernel: "
                    "give numpy arrays, ints and floats")


def _triton_error(exc: Exception, jit_fn, where: str) -> CompileError:
    log = "".join(traceback.format_exception(exc))
    node = getattr(exc, "node", None)
    message = getattr(exc, "error_message", None) or one_line(str(exc).splitlines()[-1])
    if node is not None and hasattr(node, "lineno"):
        try:
            import inspect

            lines, first = inspect.getsourcelines(jit_fn.fn)
            offset = next(i for i, ln in enumerate(lines) if ln.lstrip().startswith("def "))
            where += f", line {first + offset + node.lineno - 1}"
        except (OSError, TypeError, StopIteration):
            pass
    if type(exc).__name__ == "PTXASError":
        message = "ptxas failed: " + one_line(str(exc).split("stderr:")[-1])
    elif not getattr(exc, "error_message", None) and type(exc).__name__ != "CompilationError":
        message = f"{type(exc).__name__}: {one_line(str(exc))}"
    return CompileError(f"{jit_fn.__name__} does not compile ({where}): {one_line(message)}", log)


def compile_triton(jit_fn, signature, constexprs: dict, num_warps: int, num_stages: int,
                   cc: tuple[int, int], maxnreg: int | None = None) -> dict:
    """Compile a @triton.jit function (a real JITFunction) for `cc`; its resources as a dict."""
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.backends.nvidia.compiler import get_ptxas

    import triton.language as tl

    constexprs = {k: tl.dtype(v["triton_dtype"]) if isinstance(v, dict) else v
                  for k, v in constexprs.items()}
    arch = cc[0] * 10 + cc[1]
    ptxas = get_ptxas(arch).path
    check_target(ptxas, cc, f"bundled with triton {triton.__version__}")
    where = ", ".join([f"{k}={v}" for k, v in constexprs.items()]
                      + [f"num_warps={num_warps}", f"sm_{arch}"])
    try:
        src = triton_source(jit_fn, signature, constexprs)
        options = {"num_warps": num_warps, "num_stages": num_stages}
        if maxnreg is not None:
            options["maxnreg"] = maxnreg
        ck = triton.compile(src, target=GPUTarget("cuda", arch, 32), options=options)
    except CompileError:
        raise
    except Exception as exc:  # CompilationError, PTXASError, or Triton rejecting the options
        raise _triton_error(exc, jit_fn, where) from None
    usage = res_usage(ck.asm["cubin"], ck.metadata.name)
    return {"kernel": jit_fn.__name__, "backend": "triton", "compute_capability": list(cc),
            "regs_per_thread": usage.get("REG", 0), "static_smem_bytes": usage.get("SHARED", 0),
            "dynamic_smem_bytes": int(ck.metadata.shared), "stack_bytes": usage.get("STACK", 0),
            "local_bytes": usage.get("LOCAL", 0), "threads_per_block": 32 * num_warps,
            "compiler": f"triton {triton.__version__}", "ptxas": tool_version(ptxas)}


# --------------------------------------------------------------------------------------------
# Numba: NVVM's PTX, then ptxas
# --------------------------------------------------------------------------------------------
NVRTC_HINT = ("numba-cuda needs NVIDIA's NVVM and NVRTC to compile without a GPU: "
              "pip install nvidia-cuda-nvcc-cu12==12.9.86 nvidia-cuda-nvrtc-cu12==12.9.86")


def ptxas_candidates() -> list[str]:
    """ptxas binaries to try, best first: the one beside NVVM (same CUDA release, so it reads
    NVVM's PTX version), the CUDA toolkit's, then Triton's two."""
    found = [_pathfinder("ptxas"), shutil.which("ptxas")]
    home = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH")
    if home:
        found.append(os.path.join(home, "bin", "ptxas"))
    if _triton_bin():
        found += [str(_triton_bin() / "ptxas"), str(_triton_bin() / "ptxas-blackwell")]
    seen, out = set(), []
    for path in found:
        if path and os.access(path, os.X_OK) and os.path.realpath(path) not in seen:
            seen.add(os.path.realpath(path))
            out.append(path)
    return out


def ptx_to_cubin(ptx: str, cc: tuple[int, int], what: str,
                 max_registers: int | None = None) -> tuple[bytes, str]:
    """Assemble PTX for sm_XY with the first ptxas that can; (cubin, ptxas path).
    `max_registers`: ptxas --maxrregcount, what numba-cuda's cuda.jit(max_registers=N) passes."""
    arch = f"sm_{cc[0]}{cc[1]}"
    candidates = ptxas_candidates()
    if not candidates:
        raise CompileError(f"no ptxas found to assemble {what}: {NVRTC_HINT}")
    usable = [p for p in candidates if arch in ptxas_targets(p) or not ptxas_targets(p)]
    if not usable:
        versions = ", ".join(tool_version(p) for p in candidates)
        raise CompileError(f"compute capability {cc[0]}.{cc[1]} cannot be targeted: "
                           f"no ptxas here builds for {arch} (found ptxas {versions})")
    logs = []
    with tempfile.TemporaryDirectory(prefix="warpscope-ptx-") as folder:
        src, out = os.path.join(folder, "kernel.ptx"), os.path.join(folder, "kernel.cubin")
        with open(src, "w", encoding="utf-8") as fh:
            fh.write(ptx)
        for ptxas in usable:
            cap = [f"--maxrregcount={max_registers}"] if max_registers is not None else []
            done = subprocess.run([ptxas, f"--gpu-name={arch}", *cap, src, "-o", out],
                                  capture_output=True, text=True, timeout=300)
            if done.returncode == 0:
                with open(out, "rb") as fh:
                    return fh.read(), ptxas
            logs.append(f"{ptxas}:\n{done.stderr}")
            if "version" not in done.stderr.lower():  # a real error, not too old a ptxas
                break
    log = "\n".join(logs)
    raise CompileError(f"ptxas cannot assemble {what}: {one_line(log.split(':', 1)[-1])}", log)


def _numba_error(exc: Exception, name: str, cc: tuple[int, int], where: str) -> CompileError:
    log = "".join(traceback.format_exception(exc))
    chain, cause = [], exc
    while cause is not None and len(chain) < 10:  # numba's own error, not what its handler hit
        chain.append(cause)
        cause = cause.__context__
    kinds = {type(e).__name__: e for e in chain}
    if "DynamicLibNotFoundError" in kinds:
        return CompileError(NVRTC_HINT, log)
    if "CCSupportError" in kinds:
        return CompileError(f"compute capability {cc[0]}.{cc[1]} cannot be targeted: "
                            f"numba-cuda's NVVM says {one_line(kinds['CCSupportError'])}", log)
    numba_errors = [e for e in chain if type(e).__module__.startswith("numba")
                    and "Support" not in type(e).__name__]
    root = numba_errors[-1] if numba_errors else exc
    text = ANSI.sub("", str(root))
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    detail = next((ln for ln in lines if not ln.startswith(("Failed in", "During:"))),
                  lines[0] if lines else type(root).__name__)
    return CompileError(f"{name} does not compile ({where}): {one_line(detail)}", log)


@contextlib.contextmanager
def _device_functions_for(cuda, cc: tuple[int, int]):
    """numba-cuda compiles a kernel's @cuda.jit(device=True) callees for the current device's
    compute capability, which it asks the driver for (numba/cuda/dispatcher.py,
    compile_device). With no driver there is no current device: answer `cc` for the duration."""
    from numba.cuda import dispatcher

    if cuda.is_available() or not hasattr(dispatcher, "get_current_device"):
        yield
        return
    real = dispatcher.get_current_device
    dispatcher.get_current_device = lambda: types.SimpleNamespace(compute_capability=cc)
    try:
        yield
    finally:
        dispatcher.get_current_device = real


def numba_signature(argtypes) -> str:
    return "void(" + ", ".join(str(t) for t in argtypes) + ")"


def compile_numba(dispatcher, argtypes, cc: tuple[int, int], max_registers: int | None = None) -> dict:
    """Compile a @cuda.jit kernel (a real CUDADispatcher or its Python function) for `cc`."""
    from kernels.launching.compat import numba_cuda

    cuda = numba_cuda()
    import numba_cuda as numba_cuda_package

    pyfunc = getattr(dispatcher, "py_func", dispatcher)
    name = pyfunc.__name__
    opts = dict(getattr(dispatcher, "targetoptions", {}))
    kwargs = {k: opts[k] for k in ("fastmath", "lineinfo", "opt", "launch_bounds") if k in opts}
    where = f"{numba_signature(argtypes)}, sm_{cc[0]}{cc[1]}"
    try:
        with _device_functions_for(cuda, cc):
            ptx, _ = cuda.compile_ptx(pyfunc, numba_signature(argtypes), cc=cc, **kwargs)
    except Exception as exc:  # TypingError, missing NVVM/NVRTC, an unsupported cc
        raise _numba_error(exc, name, cc, where) from None
    entry = re.search(r"\.entry\s+([\w$.]+)", ptx)
    cubin, ptxas = ptx_to_cubin(ptx, cc, name, max_registers)
    usage = res_usage(cubin, entry.group(1) if entry else None)
    release = re.search(r"Cuda compilation tools, release (\d+\.\d+)", ptx)
    nvvm = f", NVVM of CUDA {release.group(1)}" if release else ""
    return {"kernel": name, "backend": "numba", "compute_capability": list(cc),
            "regs_per_thread": usage.get("REG", 0), "static_smem_bytes": usage.get("SHARED", 0),
            "dynamic_smem_bytes": 0, "stack_bytes": usage.get("STACK", 0),
            "local_bytes": usage.get("LOCAL", 0), "threads_per_block": None,
            "compiler": f"numba-cuda {numba_cuda_package.__version__}{nvvm}",
            "ptxas": tool_version(ptxas)}


# --------------------------------------------------------------------------------------------
# The child process: python -m kernels.offline_compile.toolchain < requests.json > results.json
# --------------------------------------------------------------------------------------------
def find_kernel(where: dict):
    """The kernel object a parent process pointed at: a global of an importable module, or of a
    file loaded the way kernels.declare.kernel_file loads a user's file."""
    if where.get("file"):
        from kernels.declare.kernel_file import import_file

        module = import_file(where["file"])
    else:
        module = importlib.import_module(where["module"])
    try:
        return getattr(module, where["attr"])
    except AttributeError:
        raise CompileError(f"{where.get('file') or where['module']} has no {where['attr']} "
                           "when imported on its own") from None


def compile_request(request: dict, kernel) -> dict:
    cc = tuple(request["cc"])
    if request["backend"] == "triton":
        return compile_triton(kernel, request["signature"], request["constexprs"],
                              request["num_warps"], request["num_stages"], cc, request.get("maxnreg"))
    return compile_numba(kernel, request["argtypes"], cc, request.get("max_registers"))


def main() -> int:
    """Compile each request from stdin; print one JSON list of results (or errors)."""
    from kernels.host.child import die_with_parent
    from kernels.launching.compat import pin_nvrtc

    die_with_parent()
    pin_nvrtc()  # before any kernel module imports torch (whose CUDA 13 NVRTC drops sm_70)
    results = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)  # the compilers print (Triton's ptxas reproducer): keep stdout for the answer
    batch = json.load(sys.stdin)
    sys.path[:0] = [p for p in batch.get("sys_path", []) if p not in sys.path]
    answers, kernels = [], {}
    for request in batch["requests"]:
        try:
            key = json.dumps(request["where"], sort_keys=True)
            if key not in kernels:
                kernels[key] = find_kernel(request["where"])
            answers.append({"ok": compile_request(request, kernels[key])})
        except CompileError as exc:
            answers.append({"error": str(exc), "log": exc.log})
        except Exception as exc:  # the user's file failing to import, and the like
            answers.append({"error": f"{type(exc).__name__}: {one_line(str(exc))}",
                            "log": traceback.format_exc()})
    json.dump(answers, results)
    results.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
