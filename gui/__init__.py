"""WarpScope's desktop app: a PySide6 + pyqtgraph window over `sim` (and, live, `kernels`).

Nothing here is imported by `sim` or `kernels`. `gui.cli` is cheap to import (no Qt at
module level); everything else imports Qt.
"""
