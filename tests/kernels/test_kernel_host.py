"""The kernel host process (kernels.host.process) without Qt: jobs by import path, progress, one-line errors,
cancel, a crash reported in one line, stray prints kept out of the frames, and results that would
import a GPU library into the window refused."""

from __future__ import annotations

import functools
import os
import pickle
import sys

import pytest

from kernels.host.process import decode_for_window
from tests import host_jobs
from tests.host_jobs import Host


@pytest.fixture
def host():
    h = Host()
    yield h
    h.proc.stop(1.0)
    assert not h.proc.alive() and not h.proc.threads_alive()


def test_jobs_run_in_the_host_with_progress_and_one_line_errors(host):
    host.run(functools.partial(host_jobs.answer, {"x": 1}))
    (_, out), seen = host.until("done")
    assert seen[0] == ("ready", host.proc.pid)
    assert ("progress", 1, 1, 2, "half") in seen
    assert out.ok and out.result == ({"x": 1}, host.proc.pid) and out.result[1] != os.getpid()
    host.run(host_jobs.fail)
    (_, out), _ = host.until("done")
    assert not out.ok and out.error == "the input was bad, in one line" and "UserError" in out.traceback
    host.run(host_jobs.noisy)  # the host survived the error; prints stay out of the frames
    (_, out), _ = host.until("done")
    assert out.ok and out.result == "clean"


def test_cancel_reaches_the_running_job(host):
    job = host.run(host_jobs.until_cancelled)
    host.until("progress")
    host.proc.send("cancel", job)
    (_, out), _ = host.until("done", timeout=10)
    assert out.ok and out.cancelled and out.result == "stopped"


def test_a_crash_is_one_line_and_the_end_of_that_host(host):
    host.run(host_jobs.crash)
    (_, why), _ = host.until("exit", timeout=30)
    assert why.startswith("killed by SIGSEGV") and "\n" not in why  # + the last line it wrote
    assert not host.proc.alive()


def test_a_job_that_cannot_be_imported_is_an_error_not_a_crash(host):
    host.proc.send("run", 7, "bad", b"\x80\x04\x95" + b"not a pickle")
    (_, out), _ = host.until("done")
    assert not out.ok and out.job_id == 7 and out.error.startswith("UnpicklingError")


def test_the_window_refuses_objects_of_gpu_libraries():
    """Unpickling a torch object would import torch into the window: the very stall to avoid."""
    before = set(sys.modules)
    msg = decode_for_window(b"ctorch\nfloat32\n.")
    assert msg[0] == "undecodable" and "torch.float32" in msg[1] and "plain records" in msg[1]
    assert "torch" in before or "torch" not in sys.modules
    assert decode_for_window(pickle.dumps(("progress", 1, 2, 3, "ok"))) == ("progress", 1, 2, 3, "ok")


def test_frames_larger_than_a_pipe_travel_both_ways(host):
    big = bytes(range(256)) * 20_000  # 5 MB: far past a pipe's 64 KiB buffer
    host.run(functools.partial(host_jobs.answer, big))
    (_, out), _ = host.until("done")
    assert out.ok and out.result[0] == big
