"""Writing files whole: through a temporary file in the same folder, then one rename.

A crash, a full disk or an unwritable folder never leaves a half-written file behind, and the
user gets one clear message (UserError) instead of a traceback.
"""

from __future__ import annotations

import json
import os
import tempfile

from sim.errors import UserError


def check_writable(path) -> None:
    """Fail before the work, not after it: the folder `path` will be written into must exist and
    take new files."""
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise UserError(f"cannot write {path}: folder {folder} does not exist")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise UserError(f"cannot write {path}: folder {folder} is not writable")


def write_text_atomic(path, text: str) -> None:
    write_bytes_atomic(path, text.encode("utf-8"))


def write_bytes_atomic(path, data: bytes) -> None:
    folder = os.path.dirname(os.path.abspath(path))
    suffix = os.path.splitext(str(path))[1]
    try:
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-", suffix=suffix)
    except OSError as exc:
        raise UserError(f"cannot write {path}: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes files private; give it an ordinary file's mode
        os.replace(tmp, path)
    except OSError as exc:
        os.unlink(tmp)
        raise UserError(f"cannot write {path}: {exc.strerror or exc}") from None


def write_json_atomic(path, payload, indent: int | None = None) -> None:
    separators = None if indent else (",", ":")
    write_text_atomic(path, json.dumps(payload, indent=indent, separators=separators))
