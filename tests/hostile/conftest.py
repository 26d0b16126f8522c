"""The hostile-input suite: offscreen Qt, settings in a temporary folder (never the user's)."""

from __future__ import annotations

import os
import tempfile

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ["WARPSCOPE_SETTINGS_DIR"] = tempfile.mkdtemp(prefix="settings-",
                                                     dir=os.environ["WARPSCOPE_TEST_RUN_CACHE"])

import pytest  # noqa: E402


@pytest.fixture(autouse=True)
def _settings_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("WARPSCOPE_SETTINGS_DIR", str(tmp_path / "settings"))
    yield
