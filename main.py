"""WarpScope: see and measure what the GPU does with your kernel launch.

    python main.py                    open the app
    python main.py explain ...        device, grid geometry and occupancy of a launch
    python main.py simulate ...       run the block scheduler
    python main.py check|bench|trace  live kernels (correctness, bandwidth, block placement)
    python main.py export ...         write plots and a summary without a window
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import io
import os
import sys

from sim import __version__
from sim.inputs.errors import UserError


class _Parser(argparse.ArgumentParser):
    """Bad arguments: one clear line and exit status 2, no usage dump."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")

    def _print_message(self, message, file=None):
        if message:  # argparse drops a failed write (--help > /dev/full would exit 0); report it
            (file or sys.stderr).write(message)


class _NotPlain(Exception):
    """What the window's own options alone cannot parse: the whole parser's to answer."""


class _WindowParser(_Parser):
    def error(self, message: str):
        raise _NotPlain(message)


def build_parser(commands: bool = True) -> argparse.ArgumentParser:
    """Every command's options; `commands=False`: the window's alone (no help, and no command's
    module imported: `python main.py` opens the window sooner)."""
    from sim.inputs.args import BlockAction, arg_block, arg_bytes, arg_count, arg_path

    parser = (_Parser if commands else _WindowParser)(
        prog="warpscope", description=__doc__.split("\n\n")[0], add_help=commands,
        formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__.split("\n\n", 1)[1])
    parser.add_argument("--version", action="version", version=f"warpscope {__version__}")
    parser.add_argument("--screenshot", metavar="FILE.png", type=arg_path("screenshot file"),
                        help="render the main window for the launch below, save it, exit")
    parser.add_argument("--gpu", metavar="NAME", help="GPU to open with (preset name; default: detected or H200)")
    parser.add_argument("--elements", type=arg_count("element count"), metavar="N",
                        help="elements in the launch to open with")
    parser.add_argument("--block", type=arg_block, action=BlockAction, metavar="THREADS",
                        help="threads per block to open with, or a 2D/3D block: 16x16, 32x8x2")
    parser.add_argument("--regs", type=arg_count("registers"), metavar="N",
                        help="registers per thread to open with")
    parser.add_argument("--smem", type=arg_bytes("shared memory"), metavar="BYTES",
                        help="shared memory per block to open with")
    if not commands:
        parser.set_defaults(command=None)
        return parser
    import gui.cli
    import kernels.cli
    import sim.cli

    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for layer in (sim.cli, kernels.cli, gui.cli):
        layer.register(sub)
    return parser


def _window_args(argv: list[str] | None) -> argparse.Namespace | None:
    """The arguments of a plain `python main.py [--gpu ...]`, or None for anything else (a
    command, --help, a bad value): then the whole parser parses them, as it always did."""
    try:
        args, rest = build_parser(commands=False).parse_known_args(argv)
    except _NotPlain:
        return None
    return None if rest else args


def main(argv: list[str] | None = None) -> int:
    """Run one command. Whatever the user or the machine does (bad input, a full disk, a closed
    pipe, a name too long, SIGINT, SIGTERM), the outcome is an exit status and at most one line
    on stderr."""
    with _terminate_like_interrupt():
        return _main(argv)


def _main(argv: list[str] | None) -> int:
    _occupy_closed_streams()
    for stream in (sys.stdout, sys.stderr):  # a file name that is not UTF-8 still prints
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")
    try:
        args = _window_args(argv) or build_parser().parse_args(argv)
        if args.command is None:
            import gui.cli
            return gui.cli.run_app(args)
        status = args.handler(args)
        sys.stdout.flush()  # a closed pipe or a full disk surfaces here, not at Python's exit
        return status
    except UserError as exc:  # usage errors exit 2, runtime failures (RunFailure) 1
        return _fail(str(exc), exc.exit_status)
    except ModuleNotFoundError as exc:  # a live-kernel package this command needs is missing
        from kernels.launching.backends import missing_module_error

        failure = missing_module_error(exc)
        if failure is None:
            raise
        return _fail(str(failure), failure.exit_status)
    except KeyboardInterrupt as exc:  # SIGINT, or SIGTERM (_Terminated): children are ended
        print(f"warpscope: {exc.args[0] if exc.args else 'interrupted'}", file=sys.stderr)
        return 143 if isinstance(exc, _Terminated) else 130
    except BrokenPipeError:  # output piped into `head` and the reader left: nothing to report
        _silence_stdout()
        return 0
    except OSError as exc:  # stdout on a full disk, a path the system refuses (ENAMETOOLONG), ...
        where = f": {_short(exc.filename)}" if exc.filename else " (writing the output)"
        # a path the user gave is a usage error; the machine failing to write is a runtime one
        return _fail(f"{exc.strerror or exc}{where}", 2 if exc.filename else 1)
    except SystemExit:  # argparse after --help or a bad option: its output must reach its reader
        try:
            sys.stdout.flush()
        except OSError as exc:
            return _fail(f"{exc.strerror or exc} (writing the output)", 1)
        raise
    except MemoryError:
        return _fail("out of memory; try a smaller launch or file", 1)


class _Terminated(KeyboardInterrupt):
    """SIGTERM, unwound like Ctrl+C: each command's `finally` ends its child processes."""


@contextlib.contextmanager
def _terminate_like_interrupt():
    """While a command runs (on the main thread), SIGTERM raises _Terminated; the earlier
    handler afterwards."""
    import signal
    import threading

    def on_term(*_):
        raise _Terminated("terminated")

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    old = signal.signal(signal.SIGTERM, on_term)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, old if old is not None else signal.SIG_DFL)


class _ClosedStdout(io.TextIOBase):
    """stdout when the shell closed it (`>&-`): Python sets sys.stdout to None, and the first
    print was an AttributeError traceback. Now the first write is an OSError, which main()
    reports in one line (exit 1, a runtime failure)."""

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        raise OSError(errno.EBADF, "standard output is closed")

    def fileno(self) -> int:
        raise OSError(errno.EBADF, "standard output is closed")


def _occupy_closed_streams() -> None:
    """A closed fd 0, 1 or 2 is pointed at /dev/null, so that no file opened later takes its
    number (a print would then write into it); a closed stdout raises on its first write."""
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            devnull = os.open(os.devnull, os.O_RDWR)
            if devnull != fd:
                os.dup2(devnull, fd)
                os.close(devnull)
    if sys.stdout is None:
        sys.stdout = _ClosedStdout()
    if sys.stderr is None:  # nowhere to say anything: the exit status still tells
        sys.stderr = io.StringIO()


def _fail(message: str, status: int = 2) -> int:
    try:
        sys.stdout.flush()
    except (OSError, ValueError):  # unwritable stdout must not fail again at exit
        _silence_stdout()
    line = " ".join(message.split())  # one line, whatever the message held
    if len(line) > 2000:  # e.g. a pasted megabyte echoed back
        line = f"{line[:1500]} ... {line[-300:]}"
    try:
        print(f"warpscope: error: {line}", file=sys.stderr, flush=True)
    except OSError:
        pass
    return status


def _short(text) -> str:
    text = str(text)
    return text if len(text) <= 120 else f"{text[:60]}...{text[-40:]}"


def _silence_stdout() -> None:
    """Point stdout at /dev/null: Python's exit-time flush of what is still buffered would
    otherwise raise again (closed pipe, full disk) and print a traceback-like note."""
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):  # captured or replaced stdout (tests)
        sys.stdout = open(os.devnull, "w")
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, fd)
    os.close(devnull)


if __name__ == "__main__":
    sys.exit(main())
