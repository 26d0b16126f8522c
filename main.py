"""WarpScope: see and measure what the GPU does with your kernel launch.

    python main.py                    open the app
    python main.py explain ...        device, grid geometry and occupancy of a launch
    python main.py simulate ...       run the block scheduler
    python main.py check|bench|trace  live kernels (correctness, bandwidth, block placement)
    python main.py export ...         write plots and a summary without a window
"""

from __future__ import annotations

import argparse
import os
import sys

from sim.errors import UserError


class _Parser(argparse.ArgumentParser):
    """Bad arguments: one clear line and exit status 2, no usage dump."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


def build_parser() -> argparse.ArgumentParser:
    import gui.cli
    import kernels.cli
    import sim.cli
    from sim.cli import arg_bytes, arg_count

    parser = _Parser(prog="warpscope", description=__doc__.split("\n\n")[0],
                     formatter_class=argparse.RawDescriptionHelpFormatter,
                     epilog=__doc__.split("\n\n", 1)[1])
    parser.add_argument("--screenshot", metavar="FILE.png",
                        help="render the main window for the launch below, save it, exit")
    parser.add_argument("--gpu", metavar="NAME", help="GPU to open with (preset name; default: detected or H200)")
    parser.add_argument("--elements", type=arg_count("element count"), metavar="N",
                        help="elements in the launch to open with")
    parser.add_argument("--block", type=arg_count("block size"), metavar="THREADS",
                        help="threads per block to open with")
    parser.add_argument("--regs", type=arg_count("registers"), metavar="N",
                        help="registers per thread to open with")
    parser.add_argument("--smem", type=arg_bytes("shared memory"), metavar="BYTES",
                        help="shared memory per block to open with")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for layer in (sim.cli, kernels.cli, gui.cli):
        layer.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    try:
        parser = build_parser()
        args = parser.parse_args(argv)
        if args.command is None:
            import gui.cli
            return gui.cli.run_app(args)
        status = args.handler(args)
        sys.stdout.flush()  # a closed pipe surfaces here, not in Python's exit-time flush
        return status
    except UserError as exc:
        print(f"warpscope: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("warpscope: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # output piped into `head` and the reader left: nothing to report
        sys.stdout = open(os.devnull, "w")  # keep Python's exit flush from raising again
        return 0


if __name__ == "__main__":
    sys.exit(main())
