"""Where settings live. QSettings in INI format under the organisation/app "WarpScope"; tests
point `WARPSCOPE_SETTINGS_DIR` at a temporary directory so they never touch the user's file."""

from __future__ import annotations

import os

from PySide6.QtCore import QSettings

ORG = "WarpScope"
APP = "WarpScope"


def open_settings() -> QSettings:
    folder = os.environ.get("WARPSCOPE_SETTINGS_DIR")
    if folder:
        os.makedirs(folder, exist_ok=True)
        return QSettings(os.path.join(folder, "warpscope.ini"), QSettings.Format.IniFormat)
    return QSettings(QSettings.Format.IniFormat, QSettings.Scope.UserScope, ORG, APP)
