"""Which backends can run here, and on what: ``kernels.available()``.

Without a GPU, Triton kernels run in Triton's interpreter (``TRITON_INTERPRET=1``) and Numba
kernels in numba-cuda's simulator (``NUMBA_ENABLE_CUDASIM=1``). Both libraries read their switch
once: Triton when a ``@triton.jit`` decorator runs (so before our kernel modules are imported),
Numba at ``import numba``. :func:`available` therefore turns both on as soon as it sees there is
no GPU, if it is not too late; if it is too late, it says so in ``reason`` instead of failing later.
Everything measured on that path is correctness only: ``is_gpu=False``, never a GPU timing.

torch, triton and numba are optional (the app's requirements.txt leaves them out); a backend
whose package is missing says so, with the one pip line that adds them (:func:`install_hint`).
"""

from __future__ import annotations

import ctypes
import functools
import importlib.util
import os
import shlex
import sys
from dataclasses import dataclass

BACKENDS = ("triton", "numba", "torch")
TRITON_KERNEL_MODULES = ("kernels.bodies.triton_kernels", "kernels.tracing.trace", "kernels.bodies.trace_kernels",
                         "kernels.bodies.matmul")

# import name -> the release CI tests on the CPU (requirements-test.txt; test_project checks)
CPU_PINS = {"torch": "torch==2.13.0", "triton": "triton==3.7.1", "numba": "numba==0.68.1",
            "numba_cuda": "numba-cuda==0.30.4"}
# numba-cuda loads libcudart even in its simulator; a machine without a CUDA toolkit needs this
CUDA_RUNTIME_PIN = "nvidia-cuda-runtime-cu12==12.9.79"
# PyPI's Linux torch is the CUDA build (GBs of CUDA libraries); PyTorch's own index has CPU-only
TORCH_CPU_INDEX = "https://download.pytorch.org/whl/cpu"


@dataclass(frozen=True, slots=True)
class Availability:
    backend: str
    ok: bool  # can run kernels here at all (on a GPU or on the CPU fallback)
    is_gpu: bool  # runs on a real GPU, so its timings are GPU timings
    reason: str  # "" on a GPU; otherwise why not, or which CPU fallback is used
    version: str = ""
    install: str = ""  # the pip line that adds what this backend is missing ("" if nothing)

    @property
    def mode(self) -> str:
        """Short label for tables: "gpu", "interpreter", "simulator", "cpu" or "unavailable"."""
        if not self.ok:
            return "unavailable"
        if self.is_gpu:
            return "gpu"
        return {"triton": "interpreter", "numba": "simulator"}.get(self.backend, "cpu")


def missing_packages() -> list[str]:
    """The live kernels' packages that are not installed here (pip names)."""
    return [pin.split("==")[0] for module, pin in CPU_PINS.items()
            if importlib.util.find_spec(module) is None]


def missing_module_error(exc: ModuleNotFoundError):
    """A RunFailure naming the live-kernel package a command needed and the pip line that adds
    it, for an import that failed on one; None for any other module (a bug, not the machine)."""
    from sim.inputs.errors import RunFailure

    top = (exc.name or "").split(".")[0]
    if top not in CPU_PINS and top != "llvmlite":
        return None
    package = CPU_PINS.get(top, "numba==").split("==")[0]
    return RunFailure(f"this command needs {package}, which is not installed; add the live "
                      f"kernels with: {install_hint() or install_hint([package])}")


def has_cuda_runtime() -> bool:
    """Is a CUDA runtime library here (a toolkit's, or NVIDIA's wheel)?"""
    try:
        if importlib.util.find_spec("nvidia.cuda_runtime") is not None:
            return True
    except ModuleNotFoundError:  # no nvidia.* wheel at all
        pass
    for soname in ("libcudart.so.13", "libcudart.so.12"):
        try:
            ctypes.CDLL(soname)
            return True
        except OSError:
            continue
    return False


def has_nvidia_driver() -> bool:
    """Is NVIDIA's driver library here? (Tells which torch build to suggest, without torch.)"""
    try:
        ctypes.CDLL("libcuda.so.1" if sys.platform.startswith("linux") else "nvcuda.dll")
    except OSError:
        return False
    return True


def install_hint(missing: list[str] | None = None, gpu: bool | None = None) -> str:
    """The exact pip command(s) that add `missing` (default: what is missing here) to this
    Python. Without an NVIDIA driver, torch comes from PyTorch's CPU-only index (about 200 MB
    instead of PyPI's CUDA build); with one, PyPI's CUDA build brings its matching triton."""
    missing = missing_packages() if missing is None else missing
    if not missing:
        return ""
    pip = f"{shlex.quote(sys.executable)} -m pip install"
    if has_nvidia_driver() if gpu is None else gpu:
        return f"{pip} {' '.join(missing)}"
    pins = {pin.split("==")[0]: pin for pin in CPU_PINS.values()}
    steps = [f"{pip} {pins['torch']} --index-url {TORCH_CPU_INDEX}"] if "torch" in missing else []
    rest = [pins[name] for name in missing if name != "torch"]
    if "numba-cuda" in missing and not has_cuda_runtime():
        rest.append(CUDA_RUNTIME_PIN)
    if rest:
        steps.append(f"{pip} {' '.join(rest)}")
    return " && ".join(steps)


def _not_installed(backend: str, packages: str, version: str = "") -> Availability:
    hint = install_hint()
    verb = "are" if " and " in packages else "is"
    return Availability(backend, False, False,
                        f"{packages} {verb} not installed; add the live kernels with: {hint}",
                        version, hint)


@functools.lru_cache(maxsize=1)
def gpu_status() -> tuple[bool, str]:
    """(has a CUDA GPU that torch can use, reason if not). Imports torch."""
    try:
        import torch
    except ImportError:
        return False, "torch is not installed"
    if not torch.cuda.is_available():
        return False, "no CUDA GPU (torch.cuda.is_available() is False)"
    return True, ""


def _triton_interpreting() -> bool:
    return os.environ.get("TRITON_INTERPRET", "0").lower() in ("1", "true", "on", "yes")


def enable_cpu_fallback() -> None:
    """Route Triton to its interpreter and Numba to its simulator, where it is not too late.

    Call before anything imports numba or our Triton kernel modules (``kernels.available()`` does).
    A value the user set explicitly is kept.
    """
    if "numba" not in sys.modules:
        os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")
    if not any(m in sys.modules for m in TRITON_KERNEL_MODULES):
        os.environ.setdefault("TRITON_INTERPRET", "1")


def _version(module: str) -> str:
    try:
        return str(sys.modules[module].__version__)  # torch's is a TorchVersion: plain text pickles alone
    except (KeyError, AttributeError):
        return ""


def _torch(gpu: bool, why: str) -> Availability:
    if why == "torch is not installed":
        return _not_installed("torch", "torch")
    reason = "" if gpu else f"{why}: torch runs on the CPU (correctness only, not GPU timings)"
    return Availability("torch", True, gpu, reason, _version("torch"))


def _triton(gpu: bool, why: str) -> Availability:
    if importlib.util.find_spec("triton") is None:
        return _not_installed("triton", "triton")
    try:
        import triton  # noqa: F401
    except ImportError as exc:
        return Availability("triton", False, False, f"triton cannot be imported: {exc}")
    version = _version("triton")
    if why == "torch is not installed":
        return _not_installed("triton", "torch (it owns our tensors)", version)
    if _triton_interpreting():
        reason = ("TRITON_INTERPRET=1: Triton's interpreter on the CPU "
                  "(correctness only, not GPU timings)")
        if not gpu:
            reason = f"{why}; {reason}"
        return Availability("triton", True, False, reason, version)
    if gpu:
        return Availability("triton", True, True, "", version)
    return Availability(
        "triton", False, False,
        f"{why}, and Triton kernels were defined before its interpreter could be enabled: "
        "start with TRITON_INTERPRET=1", version)


def _numba(gpu: bool, why: str) -> Availability:
    absent = [m for m in ("numba", "numba_cuda") if importlib.util.find_spec(m) is None]
    if absent:
        return _not_installed("numba", " and ".join(CPU_PINS[m].split("==")[0] for m in absent))
    if why == "torch is not installed":
        return _not_installed("numba", "torch (it owns our tensors)")
    try:
        from kernels.launching.compat import numba_cuda

        cuda = numba_cuda()
        import numba
    except Exception as exc:  # ImportError, or numba-cuda failing on this numpy
        return Availability("numba", False, False, f"numba-cuda cannot be imported: {exc}")
    version = f"numba {numba.__version__}"
    if numba.config.ENABLE_CUDASIM:
        reason = ("NUMBA_ENABLE_CUDASIM=1: numba-cuda's simulator on the CPU "
                  "(correctness only, not GPU timings)")
        if not gpu:
            reason = f"{why}; {reason}"
        return Availability("numba", True, False, reason, version)
    if not cuda.is_available():
        detail = why or "numba-cuda sees no CUDA driver/GPU"
        return Availability(
            "numba", False, False,
            f"{detail}, and numba was imported before its simulator could be enabled: "
            "start with NUMBA_ENABLE_CUDASIM=1", version)
    if not gpu:  # numba sees a GPU but torch does not: our harness allocates with torch
        return Availability("numba", False, False, f"numba sees a GPU but {why}", version)
    return Availability("numba", True, True, "", version)


def available() -> dict[str, Availability]:
    """Per backend ("triton", "numba", "torch"): can it run here, on a GPU or not, and why."""
    gpu, why = gpu_status()
    if not gpu:
        enable_cpu_fallback()
    return {"triton": _triton(gpu, why), "numba": _numba(gpu, why), "torch": _torch(gpu, why)}
