"""kernels/offline_compile/compile.py: resources of a kernel for a compute capability, compiled without a GPU."""

from __future__ import annotations

import json

import numpy as np
import pytest

from kernels.offline_compile.compile import (CompileError, CompiledResources, ResourceCache,
                             numba_argtypes_from_args, numba_request, numba_resources,
                             resources_many, signature_from_args, triton_request,
                             triton_resources)
from kernels.declare.kernel_file import import_file
from sim.inputs.errors import UserError

KERNELS = '''
import numpy as np
import triton
import triton.language as tl
from numba import cuda


@triton.jit
def scale_kernel(x_ptr, out_ptr, n, factor, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) * factor, mask=mask)


@triton.jit
def broken_kernel(x_ptr, n, BLOCK_SIZE: tl.constexpr):
    offsets = tl.arange(0, BLOCK_SIZE)
    tl.store(x_ptr + offsets, not_defined_anywhere, mask=offsets < n)


@cuda.jit
def scale_numba(x, out, factor):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = x[i] * factor


@cuda.jit(device=True)
def _twice(v):
    return v + v


@cuda.jit
def twice_numba(x, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = _twice(x[i])


@cuda.jit
def broken_numba(x, out):
    i = cuda.grid(1)
    out[i] = x[i] + "text"
'''


@pytest.fixture(scope="module")
def user_module(tmp_path_factory):
    from kernels.launching.backends import available

    available()  # interpreter and simulator, as on a laptop: compiling goes to a child process
    path = tmp_path_factory.mktemp("kernels") / "my_kernels.py"
    path.write_text(KERNELS, encoding="utf-8")
    return import_file(path)


# --------------------------------------------------------------------------------------------
# Arguments -> signatures
# --------------------------------------------------------------------------------------------
def test_signature_from_args_follows_the_launchers_specialization():
    x = np.zeros(8, np.float32)
    assert signature_from_args((x, np.zeros(4, np.float16), np.zeros(2, np.int32))) == (
        "*fp32:16", "*fp16:16", "*i32:16")
    assert signature_from_args((4096, 1000, 1, 0, -16, 2**31, 2**40 + 1)) == (
        "i32:16", "i32", "1", "i32:16", "i32:16", "i64:16", "i64")
    assert signature_from_args((0.5, np.float32(2), True)) == ("fp32", "fp32", "u1")
    with pytest.raises(UserError, match="cannot pass a str"):
        signature_from_args(("text",))
    with pytest.raises(UserError, match="no pointer type for complex64"):
        signature_from_args((np.zeros(2, np.complex64),))


def test_numba_argtypes_from_args_match_numba_typeof():
    from kernels.launching.compat import numba_cuda

    numba_cuda()
    import numba

    args = (np.zeros(8, np.float32), np.zeros((4, 8), np.float64), np.zeros((4, 8)).T, 3, 0.5)
    names = numba_argtypes_from_args(args)
    assert names == ("float32[::1]", "float64[:, ::1]", "float64[::1, :]", "int64", "float64")
    sig = numba.core.sigutils.normalize_signature(f"void({', '.join(names)})")[0]
    assert tuple(sig) == tuple(numba.typeof(a) for a in args)


class _DeviceTensor:
    """What Triton's launcher asks of a tensor: a device address and a dtype."""

    def __init__(self, ptr: int, dtype: str):
        self.ptr, self.dtype = ptr, dtype

    def data_ptr(self) -> int:
        return self.ptr


def _launcher_source(fn, args, consts: dict):
    """The ASTSource Triton's own launcher builds for these arguments (its private binder)."""
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource, make_backend
    from triton.runtime.jit import create_function_from_signature

    backend = make_backend(GPUTarget("cuda", 90, 32))
    binder = create_function_from_signature(fn.signature, fn.params, backend)
    bound, spec, opts = binder(*args, **consts, num_warps=4)
    _, sig, constants, attrs = fn._pack_args(backend, {**consts, "num_warps": 4}, bound, spec,
                                             opts)
    return ASTSource(fn, sig, constants, attrs)


def test_triton_source_is_the_launchers_source():
    """The ASTSource built from a signature equals what Triton's own launcher builds from real
    arguments (pointers aligned or not, ints divisible by 16 or not, the int 1, None, a kernel
    that opts out of specialization), attribute by attribute. Uses Triton's private binder:
    skipped where this Triton has none."""
    jit = pytest.importorskip("triton.runtime.jit")
    if not hasattr(jit.JITFunction, "_pack_args"):
        pytest.skip("this Triton has no JITFunction._pack_args to compare with")
    from kernels.offline_compile.toolchain import triton_source

    def kernel(x_ptr, out_ptr, n, stride, eps, extra_ptr, BLOCK_SIZE: jit.constexpr):
        pass

    T = _DeviceTensor
    cases = [((T(256, "float32"), T(512, "float32"), 4096, 1, 0.5, None), True),
             ((T(256, "float32"), T(8, "float32"), 1000, 3, 2.0, None), False),
             ((T(0, "float16"), T(0, "float16"), 2**40, 16, 1.0, T(0, "int32")), True)]
    for fn in (jit.JITFunction(kernel), jit.JITFunction(kernel, do_not_specialize=["n", "stride"])):
        for args, aligned in cases:
            theirs = _launcher_source(fn, args, {"BLOCK_SIZE": 128})
            arrays = [np.zeros(2, a.dtype) if isinstance(a, T) else a for a in args]
            ours = list(signature_from_args(arrays))
            if not aligned:  # numpy has no device address: an unaligned pointer is written so
                ours[1] = ours[1].removesuffix(":16")
            mine = triton_source(fn, ours, {"BLOCK_SIZE": 128})
            assert mine.signature == theirs.signature, args
            assert mine.constants == theirs.constants, args
            assert mine.attrs == {k: v for k, v in theirs.attrs.items() if v}  # [] is nothing


# --------------------------------------------------------------------------------------------
# Compiling: every configuration the tests look at, in one batch (one child process per
# backend, side by side), so the file stays fast
# --------------------------------------------------------------------------------------------
X = np.zeros(4096, np.float32)
SIG = signature_from_args((X, X, X.size, 2.0))
NUMBA_TYPES = numba_argtypes_from_args((X, X, 2.0))
SWEEP = (256, 512, 1024)


def _requests(m) -> dict:
    tri = lambda sig, consts, warps=4, cc=(9, 0), fn=m.scale_kernel: triton_request(  # noqa: E731
        fn, sig, consts, warps, 3, cc)
    reqs = {f"sweep{b}": tri(SIG, {"BLOCK_SIZE": b}) for b in SWEEP}
    reqs |= {
        "sm80": tri(SIG, {"BLOCK_SIZE": 1024}, cc=(8, 0)),
        "sm80_named": tri(dict(zip(["x_ptr", "out_ptr", "n", "factor"], SIG)),
                          {"BLOCK_SIZE": 1024}, cc=(8, 0)),
        "wide": tri(SIG, {"BLOCK_SIZE": 2048}, warps=8),
        "odd_n": tri(signature_from_args((X, X, 4095, 2.0)), {"BLOCK_SIZE": 1024}),
        "broken": tri(signature_from_args((X, 64)), {"BLOCK_SIZE": 64}, fn=m.broken_kernel),
        "bad_constexpr": tri(SIG, {"BLOCK_SIZE": 1000}),
        "sm130": tri(SIG, {"BLOCK_SIZE": 64}, cc=(13, 0)),
        "extra_arg": tri(signature_from_args((X, X, 64, 2.0, 3)), {"BLOCK_SIZE": 64}),
        "no_constexpr": tri(SIG, {}),
        "numba": numba_request(m.scale_numba, NUMBA_TYPES, (8, 6)),
        "numba_device_fn": numba_request(m.twice_numba, numba_argtypes_from_args((X, X)), (8, 0)),
        "numba_broken": numba_request(m.broken_numba, numba_argtypes_from_args((X, X)), (9, 0)),
        "numba_sm130": numba_request(m.scale_numba, NUMBA_TYPES, (13, 0)),
    }
    return reqs


@pytest.fixture(scope="module")
def compiled(user_module, tmp_path_factory):
    """(requests by name, results by name, the cache that compiled them)."""
    cache = ResourceCache(tmp_path_factory.mktemp("cache"))
    reqs = _requests(user_module)
    results = dict(zip(reqs, resources_many(list(reqs.values()), cache)))
    return reqs, results, cache


@pytest.mark.slow
def test_triton_resources(compiled):
    _, got, _ = compiled
    res = got["sm80"]
    assert isinstance(res, CompiledResources)
    assert res.backend == "triton" and res.kernel == "scale_kernel"
    assert res.compute_capability == (8, 0) and res.threads_per_block == 128
    assert 8 <= res.regs_per_thread <= 255 and not res.spills
    import triton

    assert res.compiler == f"triton {triton.__version__}"
    assert res.ptxas.count(".") == 2
    assert got["sm80_named"] == res  # a signature by name is the same request
    assert got["wide"].threads_per_block == 256


def test_triton_resources_wraps_one_request(user_module, compiled):
    _, got, cache = compiled
    assert triton_resources(user_module.scale_kernel, SIG, {"BLOCK_SIZE": 1024}, 4, 3, (8, 0),
                            cache=cache) == got["sm80"]
    with pytest.raises(CompileError, match="power of 2"):
        triton_resources(user_module.scale_kernel, SIG, {"BLOCK_SIZE": 1000}, cache=cache)


def test_in_process_and_child_process_agree(user_module, compiled):
    """A real JITFunction compiles in this process; the interpreter's object goes to a child
    process. Both must give the same numbers."""
    from triton.runtime.jit import JITFunction

    _, got, _ = compiled
    real = JITFunction(user_module.scale_kernel.fn)
    assert type(real).__name__ == "JITFunction"
    here = triton_resources(real, SIG, {"BLOCK_SIZE": 2048}, 8, 3, (9, 0), cache=ResourceCache())
    assert here == got["wide"]


def test_specialization_changes_code_as_on_the_gpu(compiled):
    """n divisible by 16 lets Triton vectorize loads; the register count follows."""
    reqs, got, _ = compiled
    assert reqs["sweep1024"].spec["signature"][2] == "i32:16"
    assert reqs["odd_n"].spec["signature"][2] == "i32"
    assert got["sweep1024"].regs_per_thread != got["odd_n"].regs_per_thread


def test_numba_resources(user_module, compiled):
    _, got, cache = compiled
    res = got["numba"]
    assert res.backend == "numba" and res.kernel == "scale_numba"
    assert res.compute_capability == (8, 6) and res.regs_per_thread > 0
    assert res.threads_per_block is None and res.dynamic_smem_bytes == 0
    assert res.compiler.startswith("numba-cuda ")
    assert numba_resources(user_module.scale_numba, NUMBA_TYPES, (8, 6), cache=cache) == res
    # a kernel calling a device function: numba-cuda asks the driver for the device's cc there
    assert isinstance(got["numba_device_fn"], CompiledResources), got["numba_device_fn"]


def test_a_sweep_compiles_each_configuration_once_and_the_disk_remembers(compiled):
    reqs, got, cache = compiled
    sweep = [reqs[f"sweep{b}"] for b in SWEEP]
    first = [got[f"sweep{b}"] for b in SWEEP]
    before = cache.compiled
    assert resources_many(sweep + sweep[::-1], cache) == first + first[::-1]
    assert cache.compiled == before  # the slider moved back and forth: nothing compiled again
    fresh = ResourceCache(cache.folder)  # the next session
    assert resources_many(sweep, fresh) == first and fresh.compiled == 0


@pytest.mark.slow
def test_damaged_cache_files_are_compiled_again(compiled, tmp_path):
    reqs, got, cache = compiled
    sweep = [reqs[f"sweep{b}"] for b in SWEEP]
    folder = tmp_path / "cache"
    folder.mkdir()
    for r in sweep:
        name = f"{r.digest}.json"
        (folder / name).write_bytes((cache.folder / name).read_bytes())
    (folder / f"{sweep[0].digest}.json").write_text("{not json", encoding="utf-8")
    data = json.loads((folder / f"{sweep[1].digest}.json").read_text(encoding="utf-8"))
    data["key"]["num_warps"] = 99  # someone else's entry under this name
    (folder / f"{sweep[1].digest}.json").write_text(json.dumps(data), encoding="utf-8")
    later = ResourceCache(folder)
    assert resources_many(sweep, later) == [got[f"sweep{b}"] for b in SWEEP]
    assert later.compiled == 2
    assert ResourceCache(folder).get(sweep[0]) == got["sweep256"]  # rewritten whole


def test_a_different_kernel_file_is_a_different_key(compiled, tmp_path):
    reqs, _, _ = compiled
    path = tmp_path / "my_kernels.py"
    path.write_text(KERNELS.replace("* factor", "* factor + 1.0"), encoding="utf-8")
    edited = import_file(path)
    assert triton_request(edited.scale_kernel, SIG, {"BLOCK_SIZE": 1024}, 4, 3, (8, 0)).digest \
        != reqs["sm80"].digest


# --------------------------------------------------------------------------------------------
# Errors: one line, the whole compiler output beside it
# --------------------------------------------------------------------------------------------
def test_a_triton_compile_error_is_one_line_with_the_log(compiled):
    err = compiled[1]["broken"]
    assert isinstance(err, CompileError) and isinstance(err, UserError)
    assert "\n" not in str(err)
    assert "broken_kernel does not compile" in str(err) and "not_defined_anywhere" in str(err)
    assert "line 18" in str(err)  # of the file, where the name is used
    assert "\n" in err.log and "not_defined_anywhere" in err.log


def test_a_bad_constexpr_is_a_compile_error(compiled):
    err = compiled[1]["bad_constexpr"]
    assert isinstance(err, CompileError) and "power of 2" in str(err)
    assert "BLOCK_SIZE=1000" in str(err) and "\n" not in str(err)


def test_a_numba_typing_error_is_one_line(compiled):
    err = compiled[1]["numba_broken"]
    assert isinstance(err, CompileError)
    assert str(err).startswith("broken_numba does not compile") and "\n" not in str(err)
    assert "TypingError" in err.log


def test_a_target_no_ptxas_here_knows_is_one_line(compiled):
    for name in ("sm130", "numba_sm130"):
        err = compiled[1][name]
        assert isinstance(err, CompileError), name
        assert "compute capability 13.0 cannot be targeted" in str(err)
        assert "\n" not in str(err)


def test_wrong_signatures_are_user_errors(compiled):
    _, got, _ = compiled
    assert "takes 4 arguments" in str(got["extra_arg"])
    assert "no value for constexpr BLOCK_SIZE" in str(got["no_constexpr"])
    with pytest.raises(UserError, match="not a @triton.jit"):
        triton_request(lambda x: x, ["*fp32"])


def test_a_kernel_in_no_file_says_so(tmp_path):
    from kernels.launching.compat import numba_cuda

    namespace = {"cuda": numba_cuda(), "__name__": "nowhere"}
    exec("@cuda.jit\ndef floating(x):\n    x[0] = 1\n", namespace)
    result = resources_many([numba_request(namespace["floating"], ["float32[::1]"])],
                            ResourceCache(tmp_path))
    assert isinstance(result[0], CompileError) and "defined in no file" in str(result[0])


def test_numba_toolchain_failures_say_what_to_do():
    """What a laptop without NVIDIA's libraries, or with a too-new NVVM, is told."""
    from kernels.offline_compile.toolchain import NVRTC_HINT, _numba_error

    class DynamicLibNotFoundError(Exception):
        pass

    class CCSupportError(Exception):
        pass

    try:
        try:
            raise DynamicLibNotFoundError('Failure finding "libnvrtc.so.13"')
        except DynamicLibNotFoundError:
            raise RuntimeError("while compiling")
    except RuntimeError as exc:
        err = _numba_error(exc, "k", (9, 0), "sm_90")
    assert str(err) == NVRTC_HINT and "pip install nvidia-cuda-nvcc-cu12" in str(err)
    err = _numba_error(CCSupportError("GPU compute capability 7.0 is not supported"), "k",
                       (7, 0), "sm_70")
    assert str(err).startswith("compute capability 7.0 cannot be targeted")


def test_the_disk_cache_lives_in_the_users_cache_folder(monkeypatch, tmp_path):
    from kernels.offline_compile.compile import cache_folder

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert cache_folder() == tmp_path / "warpscope" / "compiled"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache_folder() == tmp_path / "home" / ".cache" / "warpscope" / "compiled"


def test_constexprs_travel_as_json(user_module):
    import triton.language as tl

    req = triton_request(user_module.scale_kernel, SIG, {"BLOCK_SIZE": 64, "DT": tl.float16})
    assert req.spec["constexprs"] == {"BLOCK_SIZE": 64, "DT": {"triton_dtype": "fp16"}}
    json.dumps(req.key)
    with pytest.raises(UserError, match="constexpr BLOCK_SIZE=<object"):
        triton_request(user_module.scale_kernel, SIG, {"BLOCK_SIZE": object()})
