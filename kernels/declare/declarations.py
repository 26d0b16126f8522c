"""A kernel file's declarations, read in a process of their own, under a time and a memory limit.

The window evaluates a kernel's grid rule, bytes and named sizes at every change of the launch,
and ``explain`` / ``simulate --kernel-file`` need the same numbers once; but a kernel file is the
user's code, which may loop, allocate 10 GB, print, crash or ``os._exit`` at import, and imports
triton or numba, which the window's process never imports (importing them holds the GIL long
enough to freeze the window; see kernels/host/process.py). So each file lives in a small child process
(`python -m kernels.declare.declarations`) that imports it once, under RLIMIT_AS, and answers calls with
plain data; the caller keeps `KernelSpec`s whose plain fields are copies and whose functions
(`grid`, `tile`, `bytes`, `flops`, `dims`) call into that process (the window), or asks for one
launch's facts (the command line, kernels/declare/user_code.declared_launch). Every value the file returns is
checked there (kernels/declare/user_code.guarded) and again here. A request that does not answer within
its limit, or a process that ends, is one `UserCodeError` line naming the file; the child's
stdout and stderr never reach the caller's output (its last lines are kept for that message).
Nothing is launched in that process.

Protocol: kernels.host.process's frames over the child's stdin/stdout.
  caller -> child  ("open", path)                         -> ("ok", [plain spec fields, ...])
                   ("call", name, key, args, kwargs)      -> ("ok", value)
                   ("launch", name, n, block, warps, sm_count, cc) -> ("ok", launch facts)
  child -> caller  ("error", one line, from_the_file) for any of them
                   ("progress", IMPORTING | COMPILING) before the answer: the file's own code
                   starts (its libraries are loaded), or the compile starts (its rules answered)
"""

from __future__ import annotations

import inspect
import io
import os
import pickle
import queue
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, fields, replace

from sim.inputs.errors import UserError

from kernels.host import child
from kernels.host.process import exit_reason, one_line, read_bytes, read_frame, write_frame
from kernels.declare.spec import KernelSpec
from kernels.declare.user_code import UserCodeError, declared_launch

FUNCTIONS = ("grid", "tile", "bytes", "flops", "dims")  # what the window evaluates
POLL_S = 0.2  # how often a wait that can be cancelled looks
IMPORTING, COMPILING = "importing", "compiling"  # the phases a request's limit follows
ANSWER_GRACE_S = 2.0  # past a rule's own limit (kernels.declare.user_code.time_limit), which names it


@dataclass(frozen=True, slots=True)
class Limits:
    """How long and how much a kernel file's process may take. The environment overrides the
    defaults (tests use short ones): WARPSCOPE_USER_CODE_TIMEOUT_S (the file's own code: its
    import, one launch's rules), WARPSCOPE_USER_CODE_MEMORY_MB (address space, RLIMIT_AS).
    Loading torch, Triton and Numba and compiling are WarpScope's work, not the file's: they get
    limits of their own, so the file's code is answered quickly even on a busy machine."""

    open_s: float = 20.0  # the file's own code at import, once its libraries are loaded
    call_s: float = 1.0  # one grid rule, bytes formula, ...: arithmetic
    launch_s: float = 20.0  # one launch's rules (grid, tile, bytes, sizes), its compile aside
    libraries_s: float = 180.0  # importing torch / triton / numba on a busy two-core machine
    compile_s: float = 300.0  # one launch's compile (kernels.offline_compile.compile: 120 s a try)
    memory_bytes: int = 2 << 30  # importing triton and compiling takes about 0.6 GB

    @classmethod
    def from_env(cls) -> "Limits":
        limits = cls()
        timeout = _env_number("WARPSCOPE_USER_CODE_TIMEOUT_S")
        memory = _env_number("WARPSCOPE_USER_CODE_MEMORY_MB")
        values = {}
        if timeout is not None:
            values.update(open_s=timeout, launch_s=timeout, call_s=min(limits.call_s, timeout))
        if memory is not None:
            values["memory_bytes"] = int(memory * (1 << 20))
        return replace(limits, **values)


def _env_number(name: str) -> float | None:
    text = os.environ.get(name, "").strip()
    if not text:
        return None
    try:
        value = float(text)
    except ValueError:
        raise UserError(f"{name} must be a number, got {text!r}") from None
    if not 0 < value < 1e9:
        raise UserError(f"{name} must be positive, got {text!r}")
    return value


# --------------------------------------------------------------------------------------------
# The child
# --------------------------------------------------------------------------------------------
def _signature(fn) -> list[tuple[str, int]] | None:
    try:
        return [(p.name, int(p.kind)) for p in inspect.signature(fn).parameters.values()]
    except (TypeError, ValueError):
        return None


def plain(value, depth: int = 0):
    """`value` as numbers, strings, tuples, lists and dicts only (numpy scalars as Python's), or
    None where it holds anything else: what the caller's strict unpickler accepts."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if depth > 8:
        return None
    if isinstance(value, (tuple, list)):
        items = [plain(v, depth + 1) for v in value]
        return tuple(items) if isinstance(value, tuple) else items
    if isinstance(value, dict):
        return {str(k): plain(v, depth + 1) for k, v in value.items()}
    item = getattr(value, "item", None)  # a numpy scalar
    if callable(item) and getattr(value, "shape", None) == ():
        return plain(item(), depth + 1)
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
            out[f.name] = plain(value)
    return out


def _answer(specs: dict, msg: tuple, say):
    from kernels.declare.kernel_file import load_libraries, open_kernel_file

    if msg[0] == "open":
        load_libraries(msg[1])
        say(IMPORTING)
        found = open_kernel_file(msg[1], cpu_fallback=False)  # guarded (kernels.declare.user_code)
        specs.update((s.name, s) for s in found)
        return [describe(s) for s in found]
    if msg[0] == "call":
        _, name, key, args, kwargs = msg
        spec = specs[name]  # its own constants, not the copies the caller may hold
        kwargs = {**kwargs, **{k: v for k, v in spec.constants.items() if k in kwargs}}
        return plain(getattr(spec, key)(*args, **kwargs))
    if msg[0] == "launch":
        _, name, n, block, warps, sm_count, cc, *cap = msg  # cap: [max registers] if given
        return plain(declared_launch(specs[name], n, block, warps, sm_count, cc,
                                     max_registers=cap[0] if cap else None,
                                     before_compile=lambda: say(COMPILING)))
    raise UserError(f"unknown request {msg[0]!r}")


def _from_the_file(msg: tuple, exc: BaseException) -> bool:
    """Whether a failure is the file's (exit status 1) rather than a bad option (2)."""
    return msg[0] == "open" or isinstance(exc, UserCodeError) or not isinstance(exc, UserError) \
        or type(exc).__name__ == "CompileError"


def serve(inp, out) -> None:
    specs: dict[str, KernelSpec] = {}
    while (msg := read_frame(inp)) is not None:
        try:
            reply = ("ok", _answer(specs, msg, lambda phase: write_frame(out, ("progress", phase))))
        except (Exception, SystemExit) as exc:  # noqa: BLE001 - the user's code: one line back
            line = one_line(exc) if not isinstance(exc, SystemExit) else f"SystemExit: {exc}"
            if "MemoryError" in line:
                line += " (a kernel file's process may use WARPSCOPE_USER_CODE_MEMORY_MB)"
            reply = ("error", line, _from_the_file(msg, exc))
        write_frame(out, reply)


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    child.die_with_parent()
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # whatever the user's file prints goes to stderr, never into a frame
    sys.stdout = sys.stderr
    if argv[:1] == ["--memory-bytes"]:
        import resource

        limit = int(argv[1])
        _, hard = resource.getrlimit(resource.RLIMIT_AS)
        resource.setrlimit(resource.RLIMIT_AS, (limit if hard < 0 else min(limit, hard), hard))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # a crash is a line, not a core file
    serve(os.fdopen(os.dup(0), "rb"), out)
    return 0


# --------------------------------------------------------------------------------------------
# The caller's side
# --------------------------------------------------------------------------------------------
_PLAIN_CLASSES = {("builtins", n) for n in ("set", "frozenset", "complex", "slice")}


class _PlainUnpickler(pickle.Unpickler):
    """The child's answers are plain data: nothing it sends may import a module here."""

    def find_class(self, module: str, name: str):
        if (module, name) not in _PLAIN_CLASSES:
            raise pickle.UnpicklingError(f"sent a {module}.{name}, not plain data")
        return super().find_class(module, name)


class DeclarationProcess:
    """One kernel file in its child process. `open()` (slow: the file is imported) belongs in a
    worker thread; the specs' functions then call in from any thread, one call at a time."""

    def __init__(self, path: str, limits: Limits | None = None) -> None:
        self.path = os.path.abspath(path)
        self.name = os.path.basename(self.path)
        self.limits = limits or Limits.from_env()
        # real compilers, nothing launched; its own session, dying with this process
        self.proc = child.start("kernels.declare.declarations",
                                ["--memory-bytes", self.limits.memory_bytes],
                                dict(os.environ, TRITON_INTERPRET="0", NUMBA_ENABLE_CUDASIM="0",
                                     # a rule's own limit there (kernels.declare.user_code)
                                     WARPSCOPE_USER_CODE_TIMEOUT_S=f"{self.limits.launch_s:g}"))
        self._replies: queue.Queue = queue.Queue()
        self._lock = threading.Lock()
        self._output = child.Output(self.proc.stderr, self.name)  # kept for a message, not shown
        self._stopped_why = ""
        self._err_thread = threading.Thread(target=self._output.drain, daemon=True,
                                            name="declarations-stderr")
        self._err_thread.start()
        threading.Thread(target=self._read, name="declarations-reader", daemon=True).start()

    def _read(self) -> None:
        while True:
            try:
                data = read_bytes(self.proc.stdout)
                msg = None if data is None else _PlainUnpickler(io.BytesIO(data)).load()
            except Exception as exc:  # noqa: BLE001 - a broken pipe reads as the end
                msg = None if isinstance(exc, OSError) else ("error", f"its process {one_line(exc)}", True)
            self._replies.put(msg)
            if msg is None:
                return

    def output_tail(self) -> list[str]:
        """The last lines the file's process printed (a log, when something failed)."""
        return self._output.lines()

    def _ended(self, doing: str) -> UserCodeError:
        try:
            code = self.proc.wait(5)
        except subprocess.TimeoutExpired:
            code = None
        self._err_thread.join(2)
        why = self._stopped_why or ("it did not exit" if code is None
                                    else exit_reason(code, self._output.lines()))
        again = ": open the file again" if doing == "earlier" else ""
        return UserCodeError(f"{self.path}: its process ended {doing} ({why}){again}")

    def _reply(self, phase: list, phases: dict, should_cancel):
        """The answer; `phase` ([seconds, doing]) follows the child's progress through `phases`
        (label -> (seconds, doing)). queue.Empty once the phase's time is up."""
        deadline = time.monotonic() + phase[0]
        while True:  # a cancel (the window closing, a newer request) ends the wait within POLL_S
            try:
                msg = self._replies.get(timeout=max(0.0, min(POLL_S, deadline - time.monotonic())))
            except queue.Empty:
                if should_cancel is not None and should_cancel():
                    self._stopped_why = "cancelled"
                    self.close()
                    raise UserError(f"{self.path}: cancelled") from None
                if time.monotonic() >= deadline:
                    raise
                continue
            if msg is not None and msg[0] == "progress":
                if msg[1] in phases:
                    phase[:] = phases[msg[1]]
                    deadline = time.monotonic() + phase[0]
                continue
            return msg

    def request(self, msg: tuple, timeout_s: float, doing: str = "", should_cancel=None,
                phases: dict | None = None):
        """The child's answer to `msg` within `timeout_s`, or, once it reports a phase of
        `phases` (label -> (seconds, doing)), within that phase's time."""
        doing = doing or {"open": "while importing it", "launch": f"while working out {msg[1]}'s "
                          "launch"}.get(msg[0], f"in {msg[1]}'s '{msg[2]}'" if len(msg) > 2 else "")
        phase = [timeout_s, doing]
        with self._lock:
            if self.proc.poll() is not None:
                raise self._ended("earlier")
            try:
                write_frame(self.proc.stdin, msg)
                reply = self._reply(phase, phases or {}, should_cancel)
            except (OSError, ValueError):
                reply = None
            except queue.Empty:
                seconds, doing = phase
                self._stopped_why = f"stopped after {seconds:g} s: a loop, or waiting on something"
                self.close()
                raise UserCodeError(f"{self.path}: no answer {doing} within {seconds:g} s "
                                    "(a loop, or waiting on something? "
                                    "WARPSCOPE_USER_CODE_TIMEOUT_S); its process was stopped"
                                    ) from None
        if reply is None:
            raise self._ended(phase[1])
        if reply[0] == "error":
            raise (UserCodeError if reply[2] else UserError)(
                reply[1] if reply[1].startswith(self.path) or not reply[2]
                else f"{self.path}: {reply[1]}")
        return reply[1]

    def describe(self, should_cancel=None) -> list[dict]:
        """The file's declarations as plain data (importing it: slow)."""
        try:
            found = self.request(("open", self.path), self.limits.libraries_s,
                                 "while loading torch, triton or numba for it", should_cancel,
                                 {IMPORTING: (self.limits.open_s, "while importing it")})
        except UserError:
            self.close()
            raise
        if not isinstance(found, list) or not all(isinstance(d, dict) and isinstance(
                d.get("name"), str) for d in found):
            self.close()
            raise UserCodeError(f"{self.path}: its process sent no declarations")
        return found

    def open(self, should_cancel=None) -> list[KernelSpec]:
        """The file's kernels (torch peers included), as specs the window can evaluate."""
        return [self._spec(d) for d in self.describe(should_cancel)]

    def launch(self, name: str, n: int, block, warps, sm_count: int, cc, timeout_s=None,
               should_cancel=None, max_registers: int | None = None) -> dict:
        """kernels.declare.user_code.declared_launch of kernel `name`, from the file's process, checked."""
        from kernels.declare.user_code import check_facts

        cap = () if max_registers is None else (max_registers,)
        compiling = (self.limits.compile_s, f"while compiling {name}")
        facts = self.request(("launch", name, n, block, warps, sm_count, cc, *cap),
                             timeout_s or self.limits.launch_s + ANSWER_GRACE_S,
                             should_cancel=should_cancel,
                             phases={COMPILING: compiling})
        return check_facts(facts, f"{self.path}: {name}")

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
            child.kill_group(self.proc)
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            pass
        for stream in (self.proc.stdin, self.proc.stdout):
            try:
                stream.close()
            except OSError:
                pass

    def __enter__(self) -> "DeclarationProcess":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class RemoteFunction:
    """A declaration's function that runs in its file's process, with the declaration's own
    parameters (kernels.declare.spec.call_with passes each the values it asks for)."""

    def __init__(self, process: DeclarationProcess, name: str, key: str, params) -> None:
        self.process, self.name, self.key = process, name, key
        if params is not None:
            self.__signature__ = inspect.Signature(
                [inspect.Parameter(n, inspect._ParameterKind(k)) for n, k in params])

    def __call__(self, *args, **kwargs):
        return self.process.request(("call", self.name, self.key, args, kwargs),
                                    self.process.limits.call_s)

    def __repr__(self) -> str:
        return f"<{self.key} of {self.name}, in {os.path.basename(self.process.path)}'s process>"


def _declared(key: str):
    """A declared function the window never calls (it runs where the kernel runs)."""
    def elsewhere(*_a, **_k):
        raise UserError(f"'{key}' runs in the kernel host, not in the window")
    elsewhere.__name__ = key
    return elsewhere


if __name__ == "__main__":
    from kernels.host import child
    from kernels.declare import declarations  # frames must pickle as kernels.declare.*, not __main__.*

    child.leave(declarations.main())
