"""The kernel host: one child process that imports torch, Triton and Numba and runs the window's
kernel jobs, so that the window's own process never imports them; `check` and `bench
--kernel-file` run in one too (kernels/host/in_host.py), so a user's file never runs in the command's.

Why a process: importing torch and initialising CUDA hold the GIL for seconds. In a worker thread
of the window that still froze the GUI thread (2.4 s in one piece on the H200), and torch.compile
inside a worker thread did not finish at all. The host runs each job on its own main thread, as the
command line does, and a host that crashes or hangs is killed and started again, never a frozen
window.

A job is a callable that takes a `TaskContext`: a module-level function, or `functools.partial` of
one with picklable arguments (pickle sends it by import path; the host imports it). The same
callable runs unchanged in a thread of the window (gui.adapter.TaskRunner) or here
(gui.adapter.HostRunner). Results come back as picklable records.

Protocol, frames of a 4-byte big-endian length and a pickle, over the host's stdin/stdout:
  window -> host   ("run", job_id, name, payload)  payload = pickle of the job
                   ("cancel", job_id)              the job's ctx.cancelled() turns True
                   ("stop",)                       or end of input: finish up and exit
  host -> window   ("ready", pid)
                   ("started", job_id)
                   ("progress", job_id, done, total, label)
                   ("done", TaskOutcome)

    python -m kernels.host.process          # what HostProcess starts; not meant to be run by hand
"""

from __future__ import annotations

import io
import os
import pickle
import queue
import signal
import struct
import subprocess
import sys
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, BinaryIO

from sim.inputs.errors import UserError

from kernels.host import child

_HEADER = struct.Struct(">I")
EXIT_GRACE_S = 5.0  # after its input ends, the host waits this long for a job to notice, then exits
HOST_NICENESS = 5  # matters only when every core is busy (inductor compiling, say)


# --------------------------------------------------------------------------------------------
# A job, wherever it runs
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class TaskContext:
    """What a job gets: report progress, ask whether it should stop."""

    job_id: int
    _cancel: threading.Event
    _progress: Callable[[int, int, int, str], None]

    def progress(self, done: int, total: int, label: str = "") -> None:
        self._progress(self.job_id, int(done), int(total), str(label))

    def cancelled(self) -> bool:
        return self._cancel.is_set()


@dataclass(frozen=True, slots=True)
class TaskOutcome:
    """Immutable record of a job that ended: its result, or a one-line error."""

    job_id: int
    name: str
    ok: bool
    cancelled: bool
    result: Any
    error: str
    elapsed_s: float
    traceback: str = ""
    exit_status: int = 0  # what a command exits with: 1 the user's code failed, 2 a bad input


def one_line(exc: BaseException) -> str:
    """A user error as it reads; anything else prefixed with its class name."""
    text = str(exc).strip()
    msg = text.splitlines()[0] if text else type(exc).__name__
    return msg if isinstance(exc, UserError) else f"{type(exc).__name__}: {msg}"


def run_job(job_id: int, name: str, fn: Callable[[TaskContext], Any], cancel: threading.Event,
            progress: Callable[[int, int, int, str], None]) -> TaskOutcome:
    """Call `fn(ctx)`; every exception becomes a one-line error in the outcome, never a raise."""
    t0 = time.perf_counter()
    try:
        result = fn(TaskContext(job_id, cancel, progress))
        return TaskOutcome(job_id, name, True, cancel.is_set(), result, "", time.perf_counter() - t0)
    except Exception as exc:  # reported to the window, which keeps running
        return TaskOutcome(job_id, name, False, cancel.is_set(), None, one_line(exc),
                           time.perf_counter() - t0, traceback.format_exc(),
                           getattr(exc, "exit_status", 2 if isinstance(exc, UserError) else 1))


# --------------------------------------------------------------------------------------------
# The first job: what runs here, on which device
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class HostInfo:
    """What the host found: per-backend availability (kernels.Availability), the detected GPU as a
    sim GpuSpec (or None and why), or the error that stopped it from loading."""

    available: dict | None
    device: Any
    device_reason: str
    error: str = ""
    pid: int = 0


def describe(ctx: TaskContext | None = None) -> HostInfo:
    """Import torch, Triton and Numba (kernels.available()) and detect the device."""
    step = ctx.progress if ctx is not None else (lambda *a: None)
    try:
        step(0, 2, "loading torch / triton / numba…")
        import kernels

        av = kernels.available()
        step(1, 2, "detecting the GPU…")
        try:
            from kernels.launching.device import detect_device

            spec, why = detect_device()
        except Exception as exc:  # noqa: BLE001 - no device is a normal answer here
            spec, why = None, one_line(exc)
        step(2, 2, "loaded")
        return HostInfo(av, spec, why, "", os.getpid())
    except Exception as exc:  # noqa: BLE001 - shown in the panel; the window keeps working
        return HostInfo(None, None, "", one_line(exc), os.getpid())


# --------------------------------------------------------------------------------------------
# Frames
# --------------------------------------------------------------------------------------------
def write_frame(stream: BinaryIO, msg: tuple, lock: threading.Lock | None = None) -> None:
    data = pickle.dumps(msg, protocol=pickle.HIGHEST_PROTOCOL)
    if lock is None:
        stream.write(_HEADER.pack(len(data)) + data)
        stream.flush()
        return
    with lock:
        stream.write(_HEADER.pack(len(data)) + data)
        stream.flush()


def read_bytes(stream: BinaryIO) -> bytes | None:
    """The next frame's pickle, or None at the end of the stream."""
    head = stream.read(_HEADER.size)
    if len(head) < _HEADER.size:
        return None
    (n,) = _HEADER.unpack(head)
    data = stream.read(n)
    return data if len(data) == n else None


def read_frame(stream: BinaryIO) -> tuple | None:
    data = read_bytes(stream)
    return None if data is None else pickle.loads(data)


GPU_LIBRARIES = ("torch", "triton", "numba", "cupy", "cuda")


class _WindowUnpickler(pickle.Unpickler):
    """Refuses anything from a GPU library: unpickling it would import that library into the
    window's process, the very stall the host exists to avoid. Results must be plain records."""

    def find_class(self, module: str, name: str):
        if module.split(".")[0] in GPU_LIBRARIES:
            raise pickle.UnpicklingError(f"the kernel host sent a {module}.{name}; results must be "
                                         "plain records (no objects of torch, triton or numba)")
        return super().find_class(module, name)


def decode_for_window(data: bytes) -> tuple:
    try:
        return _WindowUnpickler(io.BytesIO(data)).load()
    except Exception as exc:  # noqa: BLE001 - the running job fails with this line; the host lives
        return ("undecodable", one_line(exc))


# --------------------------------------------------------------------------------------------
# The host process
# --------------------------------------------------------------------------------------------
class _Serving:
    """The host's state, shared by its main thread (jobs) and its reader thread (messages)."""

    def __init__(self, out: BinaryIO) -> None:
        self.out, self.lock = out, threading.Lock()
        self.jobs: queue.Queue = queue.Queue()
        self.current: tuple[int, threading.Event] | None = None
        self.cancelled_early: set[int] = set()

    def send(self, *msg) -> None:
        write_frame(self.out, msg, self.lock)

    def cancel(self, job_id: int | None) -> None:
        cur = self.current
        if cur is not None and job_id in (None, cur[0]):
            cur[1].set()
        elif job_id is not None:
            self.cancelled_early.add(job_id)

    def read_loop(self, inp: BinaryIO) -> None:
        while True:
            try:
                msg = read_frame(inp)
            except Exception:  # noqa: BLE001 - a broken pipe reads as the end
                msg = None
            if msg is None or msg[0] == "stop":
                self.cancel(None)
                self.jobs.put(None)
                _exit_later(EXIT_GRACE_S)  # a job that ignores cancel must not keep us alive
                return
            if msg[0] == "run":
                self.jobs.put(msg[1:])
            elif msg[0] == "cancel":
                self.cancel(msg[1])

    def serve(self) -> None:
        self.send("ready", os.getpid())
        while (item := self.jobs.get()) is not None:
            job_id, name, payload = item
            cancel = threading.Event()
            if job_id in self.cancelled_early:
                cancel.set()
            self.current = (job_id, cancel)
            self.send("started", job_id)
            outcome = run_job(job_id, name, lambda ctx, p=payload: pickle.loads(p)(ctx), cancel,
                              lambda *a: self.send("progress", *a))
            self.current = None
            try:
                self.send("done", outcome)
            except (pickle.PicklingError, TypeError, AttributeError) as exc:
                self.send("done", TaskOutcome(job_id, name, False, outcome.cancelled, None,
                                              f"{name}: its result could not be sent back ({one_line(exc)})",
                                              outcome.elapsed_s))


def _exit_later(seconds: float) -> None:
    def leave():
        time.sleep(seconds)
        os._exit(0)

    threading.Thread(target=leave, name="host-exit", daemon=True).start()


def main() -> int:
    """The host: frames in on stdin, frames out on what was stdout. Anything a library prints goes
    to stderr, so it can never corrupt a frame."""
    child.die_with_parent()
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    inp = os.fdopen(os.dup(0), "rb")
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    try:  # compilers (inductor's worker pool) may take every core: the window's process goes first
        os.nice(HOST_NICENESS)
    except OSError:
        pass
    state = _Serving(out)
    threading.Thread(target=state.read_loop, args=(inp,), name="host-reader", daemon=True).start()
    try:
        state.serve()
    except BrokenPipeError:  # the window went away
        pass
    return 0


# --------------------------------------------------------------------------------------------
# The window's side (no Qt here: gui.adapter.HostRunner wraps this in signals)
# --------------------------------------------------------------------------------------------
class HostProcess:
    """One running host. `on_message(msg)` and, once, `on_exit(why)` are called from reader
    threads; `why` is one line ("exit status -11: Segmentation fault")."""

    def __init__(self, on_message: Callable[[tuple], None], on_exit: Callable[[str], None],
                 echo_stderr: bool = True, label: str = "kernel host") -> None:
        self._on_message, self._on_exit = on_message, on_exit
        # the command line keeps the host's output for a failure only; the window shows it capped
        echo = (lambda line: print(line, file=sys.stderr, flush=True)) if echo_stderr else None
        self.proc = child.start("kernels.host.process")
        self.pid = self.proc.pid
        self._stderr = child.Output(self.proc.stderr, label, echo)
        self._outbox: queue.Queue = queue.Queue()
        self._err_thread = threading.Thread(target=self._stderr.drain, name="host-stderr", daemon=True)
        self._out_thread = threading.Thread(target=self._read_stdout, name="host-stdout", daemon=True)
        self._in_thread = threading.Thread(target=self._write_stdin, name="host-stdin", daemon=True)
        for t in (self._err_thread, self._out_thread, self._in_thread):
            t.start()

    def alive(self) -> bool:
        return self.proc.poll() is None

    def threads_alive(self) -> bool:
        return any(t.is_alive() for t in (self._out_thread, self._err_thread, self._in_thread))

    def send(self, *msg) -> bool:
        """Queue a message; a thread writes it, so the caller never waits on a full pipe. False if
        the host is gone (its exit is reported through on_exit)."""
        if not self.alive():
            return False
        self._outbox.put(msg)
        return True

    def _write_stdin(self) -> None:
        while (msg := self._outbox.get()) is not None:
            try:
                write_frame(self.proc.stdin, msg)
            except (OSError, ValueError):  # the host is gone: stdout's end reports it
                return
        try:
            self.proc.stdin.close()
        except OSError:
            pass

    def stop(self, timeout_s: float = 1.0) -> None:
        """Ask politely and wait up to `timeout_s`, then kill (and wait a second more at most)."""
        if self.alive():
            self.send("stop")
            self._outbox.put(None)  # then the end of its input
            try:
                self.proc.wait(timeout_s)
            except subprocess.TimeoutExpired:
                pass
        self.kill(wait_s=1.0)

    def kill(self, wait_s: float = 2.0) -> None:
        """Kill the host and everything it started. With `wait_s` 0 return at once (a process stuck
        in the GPU driver can take long to die; the reader thread reaps it): the GUI thread's way."""
        child.kill_group(self.proc)
        self._outbox.put(None)
        if wait_s <= 0:
            return
        try:
            self.proc.wait(wait_s)
        except subprocess.TimeoutExpired:
            pass
        for t in (self._out_thread, self._err_thread, self._in_thread):
            if t is not threading.current_thread():
                t.join(wait_s)  # a grandchild that left the host's session could hold a pipe open

    def _read_stdout(self) -> None:
        while (data := read_bytes(self.proc.stdout)) is not None:
            self._on_message(decode_for_window(data))
        code = self.proc.wait()
        self._err_thread.join(2)
        self._on_exit(self._why(code))

    def _why(self, code: int) -> str:
        return exit_reason(code, self._stderr.lines())

    def output_tail(self) -> list[str]:
        """The last lines the host wrote to stderr (for a log when something failed)."""
        return self._stderr.lines()


def exit_reason(code: int, stderr_tail=()) -> str:
    """A child's end as one line: "killed by SIGKILL: <its last line on stderr>"."""
    status = (f"killed by {signal.Signals(-code).name}" if code < 0 and -code in signal.valid_signals()
              else f"exit status {code}")
    last = next((ln for ln in reversed(list(stderr_tail))
                 if ln.strip() and not ln.startswith((" ", "Traceback"))), "")
    return f"{status}: {last[:300]}" if last else status


if __name__ == "__main__":
    from kernels.host import child
    from kernels.host import process as host  # records must pickle as kernels.host.process.*, not __main__.*

    child.leave(host.main())
