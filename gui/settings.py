"""Where settings live, and how they repair themselves.

QSettings in INI format, in the user's config folder (sim/inputs/places.py); tests point
`WARPSCOPE_SETTINGS_DIR` at a temporary directory so they never touch the user's file.

`open_settings` checks the saved file before the window reads it: a file that is damaged (not
INI, a launch that cannot run, Infinity where a count belongs, a FIFO, 1 GB) is renamed aside
(`warpscope.ini.damaged-<time>`) and the window starts with defaults, saying so on stderr and in
the status bar (`settings_notice`), so one bad file never breaks every later start. A settings
folder that cannot be used (a file, read-only) gives settings kept in memory for the session.
"""

from __future__ import annotations

import os
import sys
import time

from PySide6.QtCore import QByteArray, QSettings

from sim.inputs.errors import UserError
from sim.inputs.files import check_user_file, load_json_bounded
from sim.inputs.args import Maybe, Text, Whole, check_fields
from sim.inputs.places import settings_file
from sim.inputs.units import parse_real

ORG = "WarpScope"
APP = "WarpScope"
MAX_SETTINGS_BYTES = 1 << 20  # the real file is about 4 KB


def settings_path() -> str:
    """sim/inputs/places.py says where (~/.config/warpscope/settings.ini on Linux). A file Qt's own
    choice left in the old folder (~/.config/WarpScope/WarpScope.ini) is moved there once."""
    path = settings_file()
    if not os.environ.get("WARPSCOPE_SETTINGS_DIR") and not path.exists():
        old = QSettings(QSettings.Format.IniFormat, QSettings.Scope.UserScope, ORG, APP).fileName()
        if os.path.isfile(old):
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                os.replace(old, path)
            except OSError:  # unusable folder: open_settings says so and keeps them in memory
                pass
    return str(path)


def open_settings():
    """The app's settings, checked and repaired (see the module docstring). A QSettings, or a
    MemorySettings when the folder cannot hold a file; `settings_notice(s)` says what happened."""
    path = settings_path()
    folder = os.path.dirname(path)
    problem = _folder_problem(folder)
    if problem:
        return _with_notice(
            MemorySettings(),
            f"the settings folder {folder} {problem}; settings are kept in memory for this session",
        )
    damage = _file_problem(path)
    settings = None
    if damage is None:
        settings = QSettings(path, QSettings.Format.IniFormat)
        damage = settings_problem(settings)
    if damage is None:
        return _with_notice(settings, "")
    del settings  # release the damaged file before it is renamed
    aside = f"{path}.damaged-{time.strftime('%Y%m%d-%H%M%S')}"
    try:
        os.replace(path, aside)
    except OSError as exc:
        return _with_notice(
            MemorySettings(),
            f"saved settings are damaged ({damage}) and could not "
            f"be set aside ({exc.strerror}); settings are kept in "
            "memory for this session",
        )
    return _with_notice(
        QSettings(path, QSettings.Format.IniFormat),
        f"saved settings were damaged ({damage}); started with defaults, the old "
        f"file is kept as {aside}",
    )


def settings_notice(settings) -> str:
    """What `open_settings` had to do ('' if nothing): the window shows it in its status bar."""
    return getattr(settings, "warpscope_notice", "")


def _with_notice(settings, notice: str):
    settings.warpscope_notice = notice
    if notice:
        print(f"warpscope: note: {notice}", file=sys.stderr, flush=True)
    return settings


def _folder_problem(folder: str) -> str:
    try:
        os.makedirs(folder, exist_ok=True)
    except FileExistsError:
        return "is a file, not a folder"
    except OSError as exc:
        return f"cannot be created ({exc.strerror})"
    if not os.path.isdir(folder):
        return "is not a folder"
    if not os.access(folder, os.W_OK | os.X_OK):
        return "is not writable"
    return ""


def _file_problem(path: str) -> str | None:
    """Checks that must come before QSettings opens the file (which would block on a FIFO and
    read a 1 GB file whole)."""
    if not os.path.lexists(path):
        return None
    try:
        check_user_file(path, "settings file", MAX_SETTINGS_BYTES)
    except UserError as exc:
        return str(exc)
    if not os.access(path, os.R_OK | os.W_OK):
        return "it cannot be read and written"
    return None


def settings_problem(settings) -> str | None:
    """The first damaged value in `settings`, in words, or None."""
    if settings.status() != QSettings.Status.NoError:
        return "it is not a settings file Qt can read"
    try:
        launch_inputs(settings.value("launch/inputs", ""))
        for key in ("window/geometry", "window/state"):
            value = settings.value(key)
            if value is not None and not isinstance(value, QByteArray):
                raise UserError(f"{key} is not window layout data")
        for key, check in _checks().items():
            value = settings.value(key)
            if value is not None:
                check(key, value)
        speed = settings.value("sim/speed")
        if speed is not None:
            parse_real(
                speed if isinstance(speed, (str, int, float)) else "?", "sim/speed", 0.05, 64
            )
    except UserError as exc:
        return str(exc)
    return None


def _id_check(resolve):
    """A saved policy name, read as sim.schedule.policies reads it (old spellings too); UserError if unknown."""
    def check(key, value):
        try:
            resolve(str(value))
        except UserError:
            raise UserError(f"{key} is not a known name, got {str(value)[:40]!r}") from None
    return check


def _checks():
    from sim.schedule.policies import cost_model_id, placement_id

    return {"sim/cost": _id_check(cost_model_id), "sim/placement": _id_check(placement_id)}


def _inputs_schema() -> dict:
    from gui.models.launch import MAX_ELEMENTS, MAX_REGS, MAX_SMEM

    return {
        "gpu": Text(200),
        "kernel": Text(200),
        "elements": Whole(1, MAX_ELEMENTS),
        "threads_per_block": Whole(1, 4096),
        "regs_per_thread": Whole(0, MAX_REGS),
        "smem_per_block": Whole(0, MAX_SMEM),
        "carveout_percent": Maybe(Whole(0, 100)),
        "block_size": Maybe(Whole(1, 1 << 20)),
        "elements_per_thread": Whole(1, MAX_ELEMENTS),  # saved by earlier versions
    }


def launch_inputs(raw):
    """The saved launch (JSON text in launch/inputs) as LaunchInputs, or None if none is saved;
    UserError naming the field if it is damaged or describes a launch that cannot run."""
    if raw in (None, ""):
        return None
    if not isinstance(raw, str):
        raise UserError("launch/inputs is not text")
    from gui.models.launch import LaunchInputs, compute_state
    from sim.rules.devices import preset, presets

    data = check_fields(
        load_json_bounded(raw, "launch/inputs", max_depth=2), _inputs_schema(), "launch/inputs"
    )
    inputs = LaunchInputs.from_dict(data)
    # A launch the window would open stuck on (elements 0, carveout 500, 5000 threads): every
    # later change would be refused. A GPU saved on another machine falls back to the default.
    spec = preset(inputs.gpu if inputs.gpu in presets() else LaunchInputs().gpu)
    error = compute_state(inputs, spec).error
    if error or inputs.threads_per_block > spec.max_threads_per_block:
        raise UserError(f"launch/inputs: {error or 'more threads per block than the GPU allows'}")
    return inputs


def saved_inputs(settings):
    """The saved launch, or None (none saved, or damaged: then the defaults are used)."""
    try:
        return launch_inputs(settings.value("launch/inputs", ""))
    except UserError:
        return None


class MemorySettings:
    """The part of QSettings' interface the app uses, kept in memory only (for a settings
    folder that cannot hold a file)."""

    def __init__(self) -> None:
        self._values: dict = {}

    def value(self, key, defaultValue=None, type=None):  # noqa: A002 - QSettings' names
        value = self._values.get(key, defaultValue)
        return type(value) if type is not None and value is not None else value

    def setValue(self, key, value) -> None:
        self._values[key] = value

    def contains(self, key) -> bool:
        return key in self._values

    def remove(self, key) -> None:
        self._values = {
            k: v for k, v in self._values.items() if k != key and not k.startswith(f"{key}/")
        }

    def allKeys(self) -> list:
        return list(self._values)

    def clear(self) -> None:
        self._values.clear()

    def sync(self) -> None:
        pass

    def status(self):
        return QSettings.Status.NoError

    def fileName(self) -> str:
        return ""
