"""Command-line entry points of the GUI layer. Cheap to import: no Qt until a command runs.

- `register(subparsers)` adds `export` (headless: every plot as PNG/SVG/CSV, session JSON, a
  one-page PNG + HTML summary).
- `run_app(args)` opens the window (main.py calls it when no sub-command is given); with
  `args.screenshot` it renders the window for that launch to a PNG and exits.
"""

from __future__ import annotations

from sim.inputs.errors import UserError


def register(subparsers) -> None:
    from sim.cli import add_launch_arguments  # the same options and number syntax as `explain`
    from sim.inputs.args import arg_path
    from sim.traces.perfetto import add_perfetto_argument

    p = subparsers.add_parser(
        "export",
        help="write every plot (PNG, SVG, CSV), session JSON and a summary, no window",
        description="Render WarpScope's views for one launch without opening a window and write "
        "them to a folder: each plot as PNG, SVG and CSV (the plotted points), "
        "session.json (inputs, device, occupancy, simulation summary), and a "
        "one-page summary.png and summary.html. The export is rendered in full before it "
        "replaces an earlier export in the same folder in one rename: a failed or killed run "
        "leaves the earlier one whole, never a mix. A folder holding files WarpScope did not "
        "write (its warpscope-export.json lists each file with its sha256) is refused, or with "
        "--force exported into its subfolder warpscope-export/: those files are never touched.",
    )
    add_launch_arguments(p)
    p.add_argument(
        "--results",
        metavar="FILE",
        default=None,
        type=arg_path("--results file"),
        help="also plot a results file from `python main.py bench` (JSON or CSV), "
        "e.g. measured on a GPU server",
    )
    p.add_argument(
        "--out",
        type=arg_path("--out folder"),
        help="folder to write into (created if missing); an earlier export there is replaced "
        "(needed unless --perfetto is given)",
    )
    add_perfetto_argument(p)  # the launch's predicted schedule, without drawing any view
    p.add_argument("--force", action="store_true",
                   help="the --out folder holds files WarpScope did not write: export into its "
                        "subfolder warpscope-export/ instead of refusing (those files are never "
                        "touched)")
    p.add_argument("--theme", choices=("light", "dark"), default="light",
                   help="colours of the exported figures (default: light, for slides and print)")
    p.set_defaults(handler=_export_handler)


def _export_handler(args) -> int:
    from gui.app import run_export
    from sim.inputs.defaults import launch_elements

    if args.perfetto:
        from sim.traces.perfetto import export_launch

        print(export_launch(args, args.perfetto))
    if args.out is None:
        if args.perfetto:
            return 0
        raise UserError("export needs --out FOLDER (every view) or --perfetto FILE.json (the timeline)")
    return run_export(
        args.gpu,
        launch_elements(args),
        args.block,
        args.regs,
        args.smem,
        args.out,
        results=getattr(args, "results", None),
        carveout=args.carveout,
        theme=getattr(args, "theme", "light"),
        force=getattr(args, "force", False),
        cluster=getattr(args, "cluster", None),
        max_registers=getattr(args, "max_registers", None),
    )


def run_app(args) -> int:
    """Open the window (or, with args.screenshot, save one and exit). Any of the launch
    attributes may be missing or None: saved settings or defaults fill in."""
    from gui.app import run_window

    def get(name):
        return getattr(args, name, None)

    return run_window(
        gpu=get("gpu"),
        elements=get("elements"),
        block=get("block_dims") or get("block"),
        regs=get("regs"),
        smem=get("smem"),
        screenshot=get("screenshot"),
    )
