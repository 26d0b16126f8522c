"""The selected kernel's own rules (its grid, bytes and named sizes), asked of its spec, never
worked out here; and, for a kernel of the user's file, asked off the GUI thread.

A user's kernel file declares functions (a grid rule, a bytes formula) that run in the file's own
process (kernels/declare/declarations.py): each call is a blocking request of up to
`Limits.call_s`. The window asks them off the GUI thread: `answered_spec` wraps each such function
in an `Answered`, which keeps its answers; on the GUI thread (the process's main thread) a
question not answered before raises `RulesPending` instead of waiting, so the launch model shows
"grid: asking FILE…" and asks a worker (gui/rules_jobs.py) to work the launch out; in that worker
the calls go through (`answering` lets a newer launch stop it between calls), and their answers
are then at hand on the GUI thread. No Qt.
"""

from __future__ import annotations

import inspect
import os
import threading
from collections import OrderedDict
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Any

from gui.models.compiled import block_params
from sim.inputs.errors import UserError

RULES = ("grid", "tile", "bytes", "flops", "dims")  # the functions the window evaluates
ANSWERS_KEPT = 4096  # per function: a slider's sweep many times over


@dataclass(frozen=True, slots=True)
class GridShape:
    """What the selected kernel launches for this size (kernels.declare.spec.LaunchShape's numbers)."""

    grid_blocks: int
    threads_per_block: int
    elements_per_block: int | None  # a fixed tile per block; None: a grid-stride loop


def kernel_grid(kernel, inputs, sm_count: int) -> GridShape:
    """The grid `kernel` launches: its spec's grid rule (the launcher's own)."""
    params = block_params(kernel, inputs)
    dims = launch_dims(inputs)
    shape = kernel.launch_shape(inputs.elements, params, sm_count, **({"dims": dims} if dims else {}))
    return GridShape(shape.grid_blocks, shape.threads_per_block, shape.elements_per_block)


def launch_dims(inputs) -> dict | None:
    """The matmul sizes the inputs name (a sawtooth point chose them), else None."""
    from sim.traces.waves import dims_of

    return dims_of(inputs.dims) if inputs.dims else None


def declared_bytes(kernel, n: int, dims: dict | None = None) -> int | None:
    """One call's DRAM traffic as the kernel declares it; None where it declares none."""
    try:
        return int(kernel.bytes_moved(n, **({"dims": dims} if dims else {})))
    except (UserError, TypeError, ValueError):  # no 'bytes' declared
        return None


# -- asking a user's file off the GUI thread -----------------------------------------------------

class RulesPending(Exception):
    """A rule of a user's file has not answered this question yet, and the GUI thread does not
    wait for it. Not a ValueError: it is no mistake in the inputs."""

    def __init__(self, file: str) -> None:
        super().__init__(f"asking {file}…")
        self.file = file


class Superseded(Exception):
    """A newer launch replaced the one a worker was working out."""


_worker = threading.local()


@contextmanager
def answering(should_cancel=None):
    """In a worker: rules are asked (each call waits for its file's answer); `should_cancel()`
    true stops the work before the next call."""
    _worker.should_cancel = should_cancel or (lambda: False)
    try:
        yield
    finally:
        del _worker.should_cancel


def _on_gui_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


class Answered:
    """A declared function of a user's file (a kernels.declare.declarations.RemoteFunction) with
    the answers it gave: asked again, it answers from them (an error too: the same question
    gets the same line); asked something new on the GUI thread, it raises RulesPending."""

    def __init__(self, fn, file: str) -> None:
        self.fn, self.file = fn, file
        self._answers: OrderedDict = OrderedDict()
        self._lock = threading.Lock()
        try:  # kernels.declare.spec.call_with passes each rule only the names it asks for
            self.__signature__ = inspect.signature(fn)
        except (TypeError, ValueError):
            pass

    def __call__(self, *args, **kwargs):
        try:
            key = (args, tuple(sorted(kwargs.items())))
            hash(key)
        except TypeError:  # unhashable arguments: asked every time, off the GUI thread only
            key = None
        with self._lock:
            found = self._answers.get(key) if key is not None else None
        if found is not None:
            ok, value = found
            if ok:
                return value
            raise value
        if _on_gui_thread():
            raise RulesPending(self.file)
        if getattr(_worker, "should_cancel", lambda: False)():
            raise Superseded()
        try:
            value = self.fn(*args, **kwargs)
        except UserError as exc:
            self._keep(key, (False, exc))
            raise
        self._keep(key, (True, value))
        return value

    def _keep(self, key, answer) -> None:
        if key is None:
            return
        with self._lock:
            self._answers[key] = answer
            while len(self._answers) > ANSWERS_KEPT:
                self._answers.popitem(last=False)

    def __repr__(self) -> str:
        return f"<answered {self.fn!r}>"


def answered_spec(spec):
    """`spec` with each rule that runs in its file's process wrapped in an `Answered`. Call it
    off the GUI thread: the sizes a kernel names (`dims` at one element: whether it is a matrix
    product) are asked here, so menus and cost models know them at once."""
    from kernels.declare.declarations import RemoteFunction

    file = os.path.basename(spec.origin)
    remote = {key: Answered(fn, file) for key in RULES
              if isinstance(fn := getattr(spec, key, None), RemoteFunction)}
    if not remote:
        return spec
    spec = replace(spec, **remote)
    try:
        spec.size_dims(1)  # is_matrix_product, is_tiled_matmul
    except UserError:
        pass
    return spec


def asks_a_file(kernel) -> bool:
    return any(isinstance(getattr(kernel, key, None), Answered) for key in RULES)


@dataclass(frozen=True)
class RulesRequest:
    """A launch whose kernel's rules a worker must ask (`key`: what those rules are asked; two
    launches with one key need one answer)."""

    inputs: Any
    spec: Any  # the GPU
    kernel: Any = None
    origin: Any = None  # where the registers come from (gui/models/compiled.ResourceOrigin)

    @property
    def key(self) -> tuple:
        try:
            params = tuple(sorted(block_params(self.kernel, self.inputs).items()))
        except (UserError, TypeError, ValueError):
            params = ()
        i = self.inputs
        return (self.kernel.name, i.elements, i.dims, params, self.spec.sm_count)

    @property
    def file(self) -> str:
        return os.path.basename(self.kernel.origin)

    @property
    def text(self) -> str:
        return f"grid: asking {self.file}…"
