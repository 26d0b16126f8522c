"""A kernel file's declarations, read in a process of their own, for the window.

The window evaluates a kernel's grid rule, bytes and named sizes at every change of the launch,
but a kernel file imports triton or numba, which the window's process never imports (importing
them holds the GIL long enough to freeze the window; see kernels/host.py). So each opened file
lives in a small child process (`python -m kernels.declarations`) that imports it once and then
answers calls; the window keeps `KernelSpec`s whose plain fields are copies and whose functions
(`grid`, `tile`, `bytes`, `flops`, `dims`) call into that process. A call takes well under a
millisecond; one that does not answer within `CALL_TIMEOUT_S` is one line, never a frozen window.
Nothing is compiled or launched in that process.

Protocol: kernels.host's frames over the child's stdin/stdout.
  window -> child  ("open", path)                         -> ("ok", [plain spec fields, ...])
                   ("call", name, key, args, kwargs)      -> ("ok", value)
  child -> window  ("error", one line) for either
"""

from __future__ import annotations

import inspect
import os
import queue
import subprocess
import sys
import threading
from dataclasses import fields
from pathlib import Path

from sim.errors import UserError

from .host import one_line, read_frame, write_frame
from .spec import KernelSpec

ROOT = Path(__file__).resolve().parents[1]
FUNCTIONS = ("grid", "tile", "bytes", "flops", "dims")  # what the window evaluates
OPEN_TIMEOUT_S = 120.0  # importing the file (triton, numba) on a busy machine
CALL_TIMEOUT_S = 5.0


# --------------------------------------------------------------------------------------------
# The child
# --------------------------------------------------------------------------------------------
def _signature(fn) -> list[tuple[str, int]] | None:
    try:
        return [(p.name, int(p.kind)) for p in inspect.signature(fn).parameters.values()]
    except (TypeError, ValueError):
        return None


def describe(spec: KernelSpec) -> dict:
    """A spec as plain data: its fields, with each function the window evaluates replaced by
    its parameters (the others by whether the declaration has them)."""
    out = {}
    for f in fields(KernelSpec):
        value = getattr(spec, f.name)
        if f.name in FUNCTIONS:
            out[f.name] = None if value is None else ("remote", _signature(value))
        elif f.name == "kernel":
            fn = getattr(value, "py_func", None) or getattr(value, "fn", None) or value
            out[f.name] = f"{spec.origin}:{getattr(fn, '__name__', spec.name)}"
        elif f.name == "inputs" and not isinstance(value, int):
            out[f.name] = ("declared", None)
        elif callable(value):
            out[f.name] = ("declared", None)
        else:
            out[f.name] = value
    return out


def serve(inp, out) -> None:
    from .kernel_file import open_kernel_file

    specs: dict[str, KernelSpec] = {}
    while (msg := read_frame(inp)) is not None:
        try:
            if msg[0] == "open":
                found = open_kernel_file(msg[1], cpu_fallback=False)
                specs.update((s.name, s) for s in found)
                reply = ("ok", [describe(s) for s in found])
            elif msg[0] == "call":
                _, name, key, args, kwargs = msg
                reply = ("ok", getattr(specs[name], key)(*args, **kwargs))
            else:
                reply = ("error", f"unknown request {msg[0]!r}")
        except Exception as exc:  # noqa: BLE001 - the user's code: one line for the window
            reply = ("error", one_line(exc))
        write_frame(out, reply)


def main() -> int:
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # whatever the user's file prints goes to stderr, never into a frame
    sys.stdout = sys.stderr
    serve(os.fdopen(os.dup(0), "rb"), out)
    return 0


# --------------------------------------------------------------------------------------------
# The window's side
# --------------------------------------------------------------------------------------------
class DeclarationProcess:
    """One kernel file in its child process. `open()` (slow: the file is imported) belongs in a
    worker thread; the specs' functions then call in from any thread, one call at a time."""

    def __init__(self, path: str) -> None:
        self.path = os.path.abspath(path)
        env = dict(os.environ, PYTHONUNBUFFERED="1",
                   PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT),
                                                            os.environ.get("PYTHONPATH")])))
        self.proc = subprocess.Popen([sys.executable, "-m", "kernels.declarations"], cwd=ROOT,
                                     env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, start_new_session=True)
        self._replies: queue.Queue = queue.Queue()
        self._lock = threading.Lock()
        threading.Thread(target=self._read, name="declarations-reader", daemon=True).start()

    def _read(self) -> None:
        while True:
            try:
                msg = read_frame(self.proc.stdout)
            except Exception:  # noqa: BLE001 - a broken pipe reads as the end
                msg = None
            self._replies.put(msg)
            if msg is None:
                return

    def request(self, msg: tuple, timeout_s: float):
        with self._lock:
            if self.proc.poll() is not None:
                raise UserError(f"the process reading {os.path.basename(self.path)} has stopped: "
                                "open the file again")
            try:
                write_frame(self.proc.stdin, msg)
                reply = self._replies.get(timeout=timeout_s)
            except (OSError, ValueError):
                reply = None
            except queue.Empty:
                self.close()
                raise UserError(f"{os.path.basename(self.path)} did not answer within "
                                f"{timeout_s:g} s (its {msg[0]} {msg[2] if len(msg) > 2 else ''}"
                                "); open the file again") from None
        if reply is None:
            raise UserError(f"the process reading {os.path.basename(self.path)} has stopped: "
                            "open the file again")
        if reply[0] == "error":
            raise UserError(reply[1])
        return reply[1]

    def open(self) -> list[KernelSpec]:
        """The file's kernels (torch peers included), as specs the window can evaluate."""
        try:
            described = self.request(("open", self.path), OPEN_TIMEOUT_S)
        except UserError:
            self.close()
            raise
        return [self._spec(d) for d in described]

    def _spec(self, data: dict) -> KernelSpec:
        values = {}
        for key, value in data.items():
            if isinstance(value, tuple) and value and value[0] == "remote":
                value = RemoteFunction(self, data["name"], key, value[1])
            elif isinstance(value, tuple) and value and value[0] == "declared":
                value = _declared(key)
            values[key] = value
        return KernelSpec(**values)

    def alive(self) -> bool:
        return self.proc.poll() is None

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            pass
        for stream in (self.proc.stdin, self.proc.stdout):
            try:
                stream.close()
            except OSError:
                pass


class RemoteFunction:
    """A declaration's function that runs in its file's process, with the declaration's own
    parameters (kernels.spec.call_with passes each the values it asks for)."""

    def __init__(self, process: DeclarationProcess, name: str, key: str, params) -> None:
        self.process, self.name, self.key = process, name, key
        if params is not None:
            self.__signature__ = inspect.Signature(
                [inspect.Parameter(n, inspect._ParameterKind(k)) for n, k in params])

    def __call__(self, *args, **kwargs):
        return self.process.request(("call", self.name, self.key, args, kwargs), CALL_TIMEOUT_S)

    def __repr__(self) -> str:
        return f"<{self.key} of {self.name}, in {os.path.basename(self.process.path)}'s process>"


def _declared(key: str):
    """A declared function the window never calls (it runs where the kernel runs)."""
    def elsewhere(*_a, **_k):
        raise UserError(f"'{key}' runs in the kernel host, not in the window")
    elsewhere.__name__ = key
    return elsewhere


if __name__ == "__main__":
    from kernels import declarations  # frames must pickle as kernels.*, not __main__.*

    sys.exit(declarations.main())
