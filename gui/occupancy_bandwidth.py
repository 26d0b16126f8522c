"""The bandwidth-against-occupancy view on its own, for one launch and optionally a sweep:

    python -m gui.occupancy_bandwidth [--gpu H200] [--block 256] [--elements 2^28]
        [--sweep SWEEP.json] [--shot FILE.png]

(gui/widgets/qt_occupancy_bandwidth.py is the view; a results file is read here, by
kernels.measure.results, which views do not import.)
"""

from __future__ import annotations

from gui import style
from gui.widgets.qt_occupancy_bandwidth import QtOccupancyBandwidth


def main(argv=None) -> int:
    import argparse
    import sys

    from PySide6.QtWidgets import QApplication

    from gui.models.bench import BenchModel
    from gui.models.launch import LaunchInputs, LaunchModel
    from kernels.measure.results import load_results
    from sim.inputs.errors import UserError
    from sim.inputs.units import parse_count

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gpu", default="H200")
    ap.add_argument("--block", type=int, default=256)
    ap.add_argument("--elements", default="2^28")
    ap.add_argument("--sweep", default=None, help="a `bench --occupancy-sweep` results file")
    ap.add_argument("--shot", default=None, help="save a PNG of the view and exit")
    args = ap.parse_args(argv)
    app = QApplication.instance() or QApplication(sys.argv[:1])
    style.apply_theme(app)
    try:
        launch = LaunchModel(LaunchInputs(gpu=args.gpu, elements=parse_count(args.elements, "elements"),
                                          threads_per_block=args.block))
        if launch.state.error:
            raise UserError(launch.state.error)
        bench = BenchModel()
        if args.sweep:
            bench.set_result(load_results(args.sweep))
    except UserError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    view = QtOccupancyBandwidth(launch, bench)
    view.resize(760, 520)
    view.show()
    if args.shot:
        app.processEvents()
        view.grab().save(args.shot)
        return 0
    return app.exec()


if __name__ == "__main__":
    raise SystemExit(main())
