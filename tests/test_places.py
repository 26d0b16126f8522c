"""sim/inputs/places.py, the one place that says where WarpScope's folders are, and pyproject.toml
shipping resources/ so an installed `warpscope` finds what a checkout finds."""

import re
import sys
import tomllib
from pathlib import Path

import pytest

from sim.inputs import places

ROOT = Path(__file__).resolve().parents[1]


def test_the_users_folders_follow_xdg_with_or_without_platformdirs(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("WARPSCOPE_SETTINGS_DIR", raising=False)
    expected = (tmp_path / "cfg" / "warpscope", tmp_path / "cache" / "warpscope")
    with monkeypatch.context() as without:
        without.setitem(sys.modules, "platformdirs", None)  # sim/ used without it
        assert (places.config_dir(), places.cache_dir()) == expected
    assert places.dispatch_dir() == expected[0] / "dispatch"
    assert places.compiled_dir() == expected[1] / "compiled"
    assert places.settings_file() == expected[0] / "settings.ini"
    monkeypatch.setenv("WARPSCOPE_SETTINGS_DIR", str(tmp_path / "s"))
    assert places.settings_file() == tmp_path / "s" / "warpscope.ini"
    if sys.platform.startswith("linux"):  # platformdirs (every requirements file has it)
        pytest.importorskip("platformdirs")
        assert (places.config_dir(), places.cache_dir()) == expected


def test_every_reader_of_a_folder_asks_places():
    """No module builds a path to resources/ or to ~/.config, ~/.cache on its own."""
    own = re.compile(r'(?<!\[)"resources"(?!\])|XDG_(CONFIG|CACHE)_HOME|\.config"|\.cache"'
                     r'|expanduser\("~"\)')
    found = [f"{p.relative_to(ROOT)}:{n}" for folder in ("sim", "kernels", "gui")
             for p in (ROOT / folder).rglob("*.py") if p.name != "places.py"
             for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
             if own.search(line.split("#")[0]) and not line.lstrip().startswith(('"', "'"))]
    assert not found, found


def test_settings_dispatch_profiles_and_compiled_cache_use_places(monkeypatch, tmp_path):
    from kernels.offline_compile.compile import cache_folder
    from sim.schedule.dispatch_profile import BUILTIN_DIR, user_dir

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert user_dir() == places.dispatch_dir() and cache_folder() == places.compiled_dir()
    assert BUILTIN_DIR == places.resource("physics") and (BUILTIN_DIR / "H200.json").is_file()


def test_settings_left_in_the_old_folder_move_to_the_new_one(monkeypatch, tmp_path):
    pytest.importorskip("PySide6")
    from PySide6.QtCore import QSettings

    from gui import settings

    monkeypatch.delenv("WARPSCOPE_SETTINGS_DIR", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    old = Path(QSettings(QSettings.Format.IniFormat, QSettings.Scope.UserScope, settings.ORG,
                         settings.APP).fileName())
    if not old.is_relative_to(tmp_path):
        pytest.skip(f"Qt's settings folder here ignores XDG_CONFIG_HOME ({old})")
    old.parent.mkdir(parents=True)
    old.write_text("[launch]\ngpu=T4\n")
    assert settings.settings_path() == str(tmp_path / "warpscope" / "settings.ini")
    assert not old.exists() and "gpu=T4" in (tmp_path / "warpscope" / "settings.ini").read_text()


def test_the_wheel_ships_every_file_under_resources():
    """`pip install .` once gave a `warpscope` that failed on --help: resources/ was not in the
    wheel. Each folder under resources/ is a package the find step includes, and each file's
    suffix is package data."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]
    find = config["setuptools"]["packages"]["find"]
    data = config["setuptools"]["package-data"]["*"]
    assert find["namespaces"] and "resources*" in find["include"]
    files = [p for p in places.RESOURCES.rglob("*") if p.is_file() and "__pycache__" not in p.parts]
    assert files and places.RESOURCES == ROOT / "resources"
    missing = [str(p.relative_to(ROOT)) for p in files if f"*{p.suffix}" not in data]
    assert not missing, missing
