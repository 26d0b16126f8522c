"""For every test: Hypothesis's per-example deadline is off (a wall-clock limit: on CI's two busy
cores it failed correct code as "flaky"; performance targets live in benchmarks/); compiled kernel
resources are cached in a folder of this test session, never in the user's cache
(kernels/offline_compile/compile.py writes under $XDG_CACHE_HOME/warpscope/compiled), and so is the run's
bytecode; and the kernel files a test opens join the registry for that test only."""

import os
import shutil
import sys
import tempfile

import pytest
from hypothesis import settings

settings.register_profile("warpscope", deadline=None)
settings.load_profile("warpscope")

# One folder per run, made by the process that starts first (xdist's controller, or the only one
# with -n 0) and inherited by its workers, so they share their compiles; removed when it ends.
# In memory where there is room (Linux's /dev/shm): ~10,000 files of bytecode and compiles that
# the disk took ~10 s to delete after the last test of a full run (py-spy, 2026-12-02).
_MADE_HERE = "WARPSCOPE_TEST_RUN_CACHE" not in os.environ


def _in_memory_folder(need_bytes: int = 2 << 30) -> str | None:
    try:
        st = os.statvfs("/dev/shm")
    except OSError:
        return None
    roomy = st.f_bavail * st.f_frsize >= need_bytes
    return "/dev/shm" if roomy and not st.f_flag & os.ST_NOEXEC and os.access("/dev/shm", os.W_OK) \
        else None


if _MADE_HERE:
    os.environ["WARPSCOPE_TEST_RUN_CACHE"] = tempfile.mkdtemp(prefix="warpscope-test-cache-",
                                                              dir=_in_memory_folder())
os.environ["XDG_CACHE_HOME"] = os.environ["WARPSCOPE_TEST_RUN_CACHE"]

# Bytecode where none is written (PYTHONDONTWRITEBYTECODE=1, as on this machine, and pip's
# --no-compile): shared by every Python process of the run, in its folder. Each worker and each
# child process (kernel hosts, compilers, the CLI) compiled torch, numba and Qt's Python from
# source again, ~1 s of CPU for torch alone (the suite: 271 -> 227 CPU-s, docs/SETUP.md). Where Python writes
# bytecode beside the sources (benchmarks/fresh_machine.sh's `env -i`), that stays as it is.
# The workers inherit the prefix from the environment.
if sys.dont_write_bytecode:
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    os.environ["PYTHONPYCACHEPREFIX"] = os.path.join(os.environ["XDG_CACHE_HOME"], "bytecode")
    sys.dont_write_bytecode = False
    sys.pycache_prefix = os.environ["PYTHONPYCACHEPREFIX"]


@pytest.hookimpl(tryfirst=True)  # before pytest's tmp_path plugin reads the option
def pytest_configure(config):
    """Where the run's folder is in memory, the tests' tmp_path folders go in it too (unless
    --basetemp says where): pytest otherwise deletes the oldest of its last runs' folders in
    /tmp when a run ends, 8 s of a small run's end here (py-spy). A worker gets its folder
    inside the controller's from xdist."""
    folder = os.environ["WARPSCOPE_TEST_RUN_CACHE"]
    if _MADE_HERE and config.option.basetemp is None and folder.startswith("/dev/shm/"):
        config.option.basetemp = os.path.join(folder, "tmp")


def pytest_unconfigure(config):
    if _MADE_HERE:  # after the workers have ended: ~100 MB of bytecode and compiles
        shutil.rmtree(os.environ["WARPSCOPE_TEST_RUN_CACHE"], ignore_errors=True)


def pytest_collection_modifyitems(config, items):
    """Modules with a `slow` test run first, each module whole (its fixtures set up once), the
    order otherwise kept: under xdist's worksteal a worker that starts a 20-s test last keeps the
    run going while the other waits (gw1 ran the app-without-torch child for the last 22 s of a
    run). Every worker sorts the same collection the same way, as xdist requires."""
    heavy = {item.path for item in items if item.get_closest_marker("slow")}
    items.sort(key=lambda item: item.path not in heavy)  # stable


@pytest.fixture(autouse=True)
def _opened_kernels_last_one_test(monkeypatch):
    from kernels.declare import registry

    monkeypatch.setattr(registry, "_OPENED", {})


@pytest.fixture(autouse=True)
def _delete_closed_windows():
    """Windows a test closed with deleteLater() (pytest-qt's qtbot, gui.app's export and screenshot)
    are deleted only by an event loop, and tests run none: they piled up by the thousand in a
    worker, and every later theme switch, style sheet and processEvents walked them all (an export
    took 10x longer late in a run than alone). Set up first, so this runs after the test's own
    fixtures have shut their windows down."""
    yield
    if "PySide6.QtWidgets" not in sys.modules:  # a test without Qt: nothing to delete
        return
    from PySide6.QtCore import QCoreApplication, QEvent

    if QCoreApplication.instance() is not None:
        QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
