"""Jobs for the kernel-host tests. Module-level functions, so they pickle by import path and the
host (a fresh process) can import them; and `Host`, a host without Qt whose messages land in a
queue."""

from __future__ import annotations

import os
import pickle
import queue
import signal
import sys
import time

from kernels.host.process import HostProcess
from sim.inputs.errors import UserError


class Host:
    def __init__(self):
        self.inbox: queue.Queue = queue.Queue()
        self.proc = HostProcess(self.inbox.put, lambda why: self.inbox.put(("exit", why)))
        self._next = 0

    def run(self, fn, name="job") -> int:
        self._next += 1
        assert self.proc.send("run", self._next, name, pickle.dumps(fn))
        return self._next

    def until(self, kind, timeout=60):
        """The first message of `kind`, and every message up to it."""
        seen = []
        while True:
            msg = self.inbox.get(timeout=timeout)
            seen.append(msg)
            if msg[0] == kind:
                return msg, seen


def answer(value, ctx):
    ctx.progress(1, 2, "half")
    return value, os.getpid()


def fail(ctx):
    raise UserError("the input was bad, in one line")


def noisy(ctx):
    """Libraries print; none of it may land in the protocol's frames."""
    print("a library talking on stdout " * 50)
    os.write(1, b"raw bytes on file descriptor 1\n")
    sys.stdout.flush()
    return "clean"


def until_cancelled(ctx):
    ctx.progress(0, 1, "waiting")
    while not ctx.cancelled():
        time.sleep(0.01)
    return "stopped"


def deaf(ctx):
    """A job stuck in C code hears no Cancel."""
    ctx.progress(0, 1, "stuck")
    time.sleep(120)


def crash(ctx):
    print("about to crash", file=sys.stderr, flush=True)
    os.kill(os.getpid(), signal.SIGSEGV)
