"""How a process that runs a user's code is started, heard and ended: the kernel and compiler
hosts (kernels.host.process) and a kernel file's own process (kernels.declare.declarations).

- `start(module, args, env)`: `python -m module args` in a session of its own, so a file that
  signals its process group (`os.killpg(0, ...)`, `kill 0`) reaches only its own group, and one
  `os.killpg` ends the child with every process it started (threads end with the process).
- `die_with_parent()`, the child's first call: Linux's parent-death signal (prctl
  PR_SET_PDEATHSIG), so a kill -9 of the window or the command leaves no child spinning. Linux
  sends it when the *thread* that forked the child ends, not its process, so every child is
  forked by one thread that lives as long as the process (`_Spawner`), never by a worker thread
  that may finish first.
- `Output`: a child's stderr read in pieces, never a line at a time: each line cut at
  LINE_CHARS, the last lines kept for an error message, and at most ECHO_BYTES passed on with
  the child's label; a file that prints 100 MB in one line costs neither memory nor a flooded
  terminal.

What the OS still allows a file, under the same user: to kill its parent by pid (os.kill of
os.getppid()) or every process of the user (kill -1), and to start a process in a session of its
own that no group kill reaches and that outlives it.
"""

from __future__ import annotations

import collections
import os
import queue
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PARENT_ENV = "WARPSCOPE_PARENT_PID"  # the parent the child must die with
LINE_CHARS = 400  # one line of a child's output, as kept or shown
ECHO_BYTES = 64 << 10  # what one child may write to the window's or the command's stderr
READ_BYTES = 64 << 10
PR_SET_PDEATHSIG = 1


class _Spawner:
    """One thread that forks every child (see the module's docstring) and then waits for work."""

    def __init__(self) -> None:
        self._jobs: queue.Queue = queue.Queue()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def _serve(self) -> None:
        while True:
            make, box = self._jobs.get()
            try:
                box.put((True, make()))
            except BaseException as exc:  # noqa: BLE001 - raised again in the caller's thread
                box.put((False, exc))

    def run(self, make: Callable[[], subprocess.Popen]) -> subprocess.Popen:
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._serve, name="child-spawner",
                                                daemon=True)
                self._thread.start()
        box: queue.Queue = queue.Queue(maxsize=1)
        self._jobs.put((make, box))
        ok, value = box.get()
        if not ok:
            raise value
        return value


_SPAWNER = _Spawner()


def start(module: str, args=(), env: dict | None = None) -> subprocess.Popen:
    """`python -m module *args` with pipes on stdin, stdout and stderr, in its own session, told
    to die with this process (it calls die_with_parent)."""
    env = dict(os.environ if env is None else env, PYTHONUNBUFFERED="1")
    env[PARENT_ENV] = str(os.getpid())
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    return _SPAWNER.run(lambda: subprocess.Popen(
        [sys.executable, "-m", module, *map(str, args)], cwd=ROOT, env=env,
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        start_new_session=True))


def die_with_parent() -> None:
    """In a child made by `start`: be killed when the parent ends; exit now if it already has."""
    expected = os.environ.pop(PARENT_ENV, "")
    if not expected.isdigit():
        return  # started by hand
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):  # not Linux: the end of stdin still ends the child
        pass
    if os.getppid() != int(expected):  # the parent died before the signal was set
        os._exit(0)


def leave(code: int) -> None:
    """End a child made by `start` now: flush what it wrote, then skip the interpreter's
    teardown, which takes a second or more once torch, triton and numba are loaded (the parent
    waits on it at every close). Whatever the child started dies with its session."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)


def kill_group(proc: subprocess.Popen) -> None:
    """SIGKILL to the child's session (it leads its own group) and whatever stayed in it."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        try:
            proc.kill()
        except OSError:
            pass


class Output:
    """Reads a child's stream to its end (call `drain` in a thread of its own). Keeps the last
    `keep` lines, each at most LINE_CHARS; with `echo`, passes lines on as "[label] line" until
    ECHO_BYTES are spent, then says once how much it left out."""

    def __init__(self, stream, label: str, echo: Callable[[str], None] | None = None,
                 keep: int = 30) -> None:
        self.stream, self.label, self.echo = stream, label, echo
        self.tail: collections.deque[str] = collections.deque(maxlen=keep)
        self.total = 0  # bytes read
        self._echoed = 0
        self._partial = bytearray()
        self._partial_cut = 0

    def drain(self) -> None:
        read = getattr(self.stream, "read1", self.stream.read)
        while True:
            try:
                chunk = read(READ_BYTES)
            except (OSError, ValueError):
                break
            if not chunk:
                break
            self.total += len(chunk)
            self._take(chunk)
        if self._partial or self._partial_cut:
            self._line(bytes(self._partial), self._partial_cut)
        if self.echo is not None and self._echoed >= ECHO_BYTES:
            self.echo(f"[{self.label}] … {self.total - self._echoed:,} more bytes of output "
                      "not shown")

    def _take(self, chunk: bytes) -> None:
        *lines, rest = chunk.split(b"\n")
        for piece in lines:
            room = max(0, LINE_CHARS + 1 - len(self._partial))
            self._partial += piece[:room]
            self._line(bytes(self._partial), self._partial_cut + max(0, len(piece) - room))
            self._partial.clear()
            self._partial_cut = 0
        room = max(0, LINE_CHARS + 1 - len(self._partial))
        self._partial += rest[:room]
        self._partial_cut += max(0, len(rest) - room)

    def _line(self, raw: bytes, cut: int) -> None:
        text = raw.decode(errors="replace").rstrip()
        if not text and not cut:
            return
        extra = max(0, len(text) - LINE_CHARS) + cut
        line = text[:LINE_CHARS] + (f"… ({extra:,} more bytes)" if extra else "")
        self.tail.append(line)
        if self.echo is not None and self._echoed < ECHO_BYTES:
            self._echoed += len(raw) + cut + 1
            self.echo(f"[{self.label}] {line}")

    def lines(self) -> list[str]:
        return list(self.tail)
