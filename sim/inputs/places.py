"""Where WarpScope keeps things: the one module that says so.

- Its own data, `resources/` (GPU specs, per-GPU physics and dispatch profiles, examples):
  beside the packages, in a checkout and in an installed wheel alike (pyproject.toml ships it as
  package data; tests/test_project.py checks that every file under it is shipped).
- The user's config folder: the window's settings (`settings.ini`) and the dispatch profiles
  `main.py calibrate` writes (`dispatch/<GPU>.json`) and the matmul fits `calibrate --matmul`
  writes (`fits/<GPU>_matmul.json`). On Linux ~/.config/warpscope.
- The user's cache folder: compiled kernel resources (`compiled/`). On Linux ~/.cache/warpscope.

platformdirs (in every requirements file) picks the user's folders for the platform, honouring
$XDG_CONFIG_HOME and $XDG_CACHE_HOME on Linux. sim/ is stdlib + numpy, so it is imported here
only when it is installed; without it (sim/ copied on its own) the same XDG folders are used.
Tests point $WARPSCOPE_SETTINGS_DIR at a temporary folder for the settings file.
"""

from __future__ import annotations

import os
from pathlib import Path

APP = "warpscope"
RESOURCES = Path(__file__).resolve().parents[2] / "resources"


def resource(*parts: str) -> Path:
    """A file or folder under resources/ (e.g. resource("dispatch", "H200.json"))."""
    return RESOURCES.joinpath(*parts)


def config_dir() -> Path:
    try:
        from platformdirs import user_config_path
    except ImportError:
        return _xdg("XDG_CONFIG_HOME", ".config")
    return user_config_path(APP, appauthor=False)


def cache_dir() -> Path:
    try:
        from platformdirs import user_cache_path
    except ImportError:
        return _xdg("XDG_CACHE_HOME", ".cache")
    return user_cache_path(APP, appauthor=False)


def settings_file() -> Path:
    folder = os.environ.get("WARPSCOPE_SETTINGS_DIR")
    return Path(folder) / "warpscope.ini" if folder else config_dir() / "settings.ini"


def dispatch_dir() -> Path:
    """The dispatch profiles `main.py calibrate` writes and `profile_for` reads first."""
    return config_dir() / "dispatch"


def fits_dir() -> Path:
    """The matmul fits `main.py calibrate --matmul` writes and sim.model.matmul_choice reads first."""
    return config_dir() / "fits"


def compiled_dir() -> Path:
    """Compiled kernel resources (kernels/offline_compile/compile.py), one small JSON file per request."""
    return cache_dir() / "compiled"


def _xdg(variable: str, default: str) -> Path:
    return Path(os.environ.get(variable) or Path.home() / default) / APP
