"""A user's kernel file against the processes that run it (kernels/host/child.py): its output
reaches us capped and labelled, its threads and children end with its process, that process dies
with its parent (kill -9 included) and cannot signal the parent's group, its code is answered
within its own limit whatever the libraries take, and SIGTERM ends the command line in one line."""

from __future__ import annotations

import os
import pickle
import signal
import subprocess
import sys
import threading
import time
from functools import partial
from pathlib import Path

import pytest

from kernels.declare.declarations import DeclarationProcess, Limits
from kernels.declare.user_code import UserCodeError
from kernels.host import child
from tests.hostile.test_kernel_files import KERNEL
from tests.patience import HANG_S

ROOT = Path(__file__).resolve().parents[2]
FLOOD = "import sys\nsys.stdout.write('x' * 100_000_000)\nsys.stdout.flush()\n"


def _rss_bytes() -> int:
    with open("/proc/self/statm", encoding="ascii") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _children_of(pid: int) -> list[int]:
    """Every live process whose parent is `pid` (from /proc)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid and fields[0] != "Z":
            found.append(int(entry))
    return found


def _hosts_of(pid: int) -> list[int]:
    """The children of `pid` that run a user's file (a kernel host or a file's own process)."""
    found = []
    for child_pid in _children_of(pid):
        try:
            with open(f"/proc/{child_pid}/cmdline", "rb") as fh:
                line = fh.read()
        except OSError:
            continue
        if b"kernels.host.process" in line or b"kernels.declare.declarations" in line:
            found.append(child_pid)
    return found


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _wait_for(predicate, seconds: float = HANG_S) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()


def _write(tmp_path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def flood_job(path: str, ctx) -> int:
    """In a kernel host: open a file the way the window's hosts do (kernel_file.open_once)."""
    from kernels.declare.kernel_file import open_once

    return len(open_once(path, cpu_fallback=False))


def test_a_100_mb_print_reaches_the_window_capped_and_labelled(tmp_path, capfd):
    from kernels.host.process import HostProcess

    path = _write(tmp_path, "flood.py", FLOOD + KERNEL + "WARPSCOPE = GOOD\n")
    done, ended = threading.Event(), []

    def on_message(msg):
        if msg[0] == "done":
            ended.append(msg)
            done.set()

    host = HostProcess(on_message, lambda why: done.set(), label="kernels host")
    before = _rss_bytes()
    try:
        host.send("run", 1, "flood", pickle.dumps(partial(flood_job, path)))
        assert done.wait(HANG_S), "the host never answered"
    finally:
        host.stop()
    err = capfd.readouterr().err
    assert ended and ended[0][1].ok, ended
    assert len(err) < 2 * child.ECHO_BYTES, len(err)  # the window's stderr: 100 MB capped
    assert all(line.startswith("[kernels host] ") for line in err.splitlines()), err[:300]
    assert all(len(line) < child.LINE_CHARS + 80 for line in err.splitlines())
    assert "more bytes" in err
    assert _rss_bytes() - before < 50 << 20  # never held as one line


@pytest.mark.slow
def test_a_looping_thread_at_import_costs_no_memory_here_and_ends_with_its_process(tmp_path):
    sleeper = tmp_path / "sleeper.pid"
    path = _write(tmp_path, "threads.py", (
        "import subprocess, sys, threading\n"
        "def chatter():\n    while True:\n        sys.stderr.write('y' * 65536)\n"
        "threading.Thread(target=chatter, daemon=False).start()\n"
        f"p = subprocess.Popen(['sleep', '600'])\nopen({str(sleeper)!r}, 'w').write(str(p.pid))\n"
        + KERNEL + "WARPSCOPE = GOOD\n"))
    before = _rss_bytes()
    process = DeclarationProcess(path)
    try:
        [spec] = process.open()
        time.sleep(3)  # the thread prints all the while
        assert spec.launch_shape(1 << 20, None, 132).grid_blocks == 4096
        assert _rss_bytes() - before < 50 << 20
        assert all(len(line) < child.LINE_CHARS + 40 for line in process.output_tail())
        grandchild = int(sleeper.read_text())
        assert _alive(grandchild)
    finally:
        process.close()
    assert not process.alive()
    assert _wait_for(lambda: not _alive(grandchild), 10), "the file's child outlived its process"


def test_a_child_forked_for_a_worker_thread_outlives_the_thread(tmp_path):
    """The parent-death signal follows the forking thread: the window's opening thread ends,
    its file's process must not."""
    path = _write(tmp_path, "good.py", KERNEL + "WARPSCOPE = GOOD\n")
    made = []
    worker = threading.Thread(target=lambda: made.append(DeclarationProcess(path)))
    worker.start()
    worker.join()
    [process] = made
    try:
        [spec] = process.open()
        assert process.alive() and spec.launch_shape(1 << 20, None, 132).grid_blocks == 4096
    finally:
        process.close()


@pytest.mark.slow
def test_an_import_loop_is_answered_within_the_files_own_limit(tmp_path):
    """Loading triton is WarpScope's wait; the file's own loop gets Limits.open_s."""
    assert Limits().open_s <= 20 and Limits().launch_s <= 20
    path = _write(tmp_path, "loop.py", "import triton\nwhile True:\n    pass\n")
    process = DeclarationProcess(path, Limits(open_s=2, libraries_s=HANG_S))
    t0 = time.monotonic()
    with pytest.raises(UserCodeError, match="no answer while importing it within 2 s"):
        process.open()
    assert time.monotonic() - t0 < HANG_S and not process.alive()


@pytest.mark.slow
def test_a_looping_grid_rule_is_named_and_its_process_lives_on(tmp_path):
    path = _write(tmp_path, "grid.py", KERNEL + "WARPSCOPE = dict(GOOD, grid=lambda n: n // 256 "
                  "if n < 2**21 else [i for i in iter(int, 1)])\n")
    with DeclarationProcess(path, Limits(launch_s=1.5)) as process:
        process.describe()
        with pytest.raises(UserCodeError, match=r"k's 'grid' did not return within 1.5 s"):
            process.launch("k", 1 << 22, None, None, 132, None)
        assert process.launch("k", 1 << 20, None, None, 132, None)["blocks"] == 4096


def test_a_file_that_signals_its_group_cannot_reach_its_parent(tmp_path):
    path = _write(tmp_path, "killer.py", "import os, signal\nos.killpg(0, signal.SIGKILL)\n")
    script = ("from kernels.declare.declarations import DeclarationProcess\n"
              f"p = DeclarationProcess({path!r})\n"
              "try:\n    p.open()\nexcept Exception as exc:\n    print('answered:', exc)\n")
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True,
                          text=True, timeout=HANG_S)
    assert done.returncode == 0, done.stderr
    assert "answered:" in done.stdout and "killed by SIGKILL" in done.stdout, done.stdout


def _loop_file(tmp_path) -> tuple[str, Path]:
    """A file that loops at import, and the flag it raises once it loops (its libraries loaded)."""
    flag = tmp_path / "looping"
    return _write(tmp_path, "loop.py", f"import triton\nopen({str(flag)!r}, 'w').close()\n"
                  "while True:\n    pass\n"), flag
COMMANDS = {  # the command, and the process that runs the file's import there
    "explain": ["explain", "--gpu", "H200", "--regs", "32", "--smem", "0", "--kernel-file"],
    "check": ["check", "--kernel-file"],
}


def _start_command(argv: list[str]) -> subprocess.Popen:
    env = dict(os.environ, WARPSCOPE_USER_CODE_TIMEOUT_S="600")
    return subprocess.Popen([sys.executable, "main.py", *argv], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_kill_9_of_the_command_leaves_no_child(command, tmp_path):
    path, flag = _loop_file(tmp_path)
    cli = _start_command(COMMANDS[command] + [path])
    try:
        assert _wait_for(flag.exists), "the file never ran"
        children = _hosts_of(cli.pid)
        os.kill(cli.pid, signal.SIGKILL)
        cli.wait(HANG_S)
        assert _wait_for(lambda: not any(_alive(c) for c in children), 10), children
    finally:
        cli.kill()
        cli.communicate()


def test_sigterm_ends_the_command_in_one_line_and_its_child_with_it(tmp_path):
    path, flag = _loop_file(tmp_path)
    cli = _start_command(COMMANDS["explain"] + [path])
    try:
        assert _wait_for(flag.exists), "the file never ran"
        children = _hosts_of(cli.pid)
        cli.send_signal(signal.SIGTERM)
        out, err = cli.communicate(timeout=HANG_S)
    finally:
        cli.kill()
    assert (cli.returncode, out, err) == (143, "", "warpscope: terminated\n")
    assert _wait_for(lambda: not any(_alive(c) for c in children), 10), children


WINDOW = """
import os, sys, time
os.environ["QT_QPA_PLATFORM"] = "offscreen"
from gui.app import make_app
from gui.main_window import MainWindow
from gui.models.launch import LaunchInputs
app = make_app()
win = MainWindow(LaunchInputs(), restore=False, load_kernels=False)
win.user_kernels.open(sys.argv[1])
print("opening", flush=True)
while True:
    app.processEvents()
    time.sleep(0.02)
"""


def test_kill_9_of_the_window_leaves_no_child(tmp_path):
    """The window opens a file that loops at import (on a thread of its own): killed, it
    leaves no process of the file spinning."""
    path, flag = _loop_file(tmp_path)
    env = dict(os.environ, WARPSCOPE_USER_CODE_TIMEOUT_S="600",
               WARPSCOPE_SETTINGS_DIR=str(tmp_path / "settings"))
    window = subprocess.Popen([sys.executable, "-c", WINDOW, path], cwd=ROOT, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert window.stdout.readline() == "opening\n"
        assert _wait_for(flag.exists), "the file never ran"
        children = _hosts_of(window.pid)
        os.kill(window.pid, signal.SIGKILL)
        window.wait(HANG_S)
        assert _wait_for(lambda: not any(_alive(c) for c in children), 10), children
    finally:
        window.kill()
        window.communicate()
