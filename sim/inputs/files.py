"""Files in and out, safely: bounded reads of the files a user gives, whole writes of ours.

Reading, the one boundary every file read passes (tests/hostile/test_one_boundary.py walks the
code for reads elsewhere): `read_user_bytes` looks at a path with os.stat BEFORE opening it, so
a folder, a FIFO (which would block forever), /dev/zero (which never ends) or a 1 GB file is one
clear line, not a hang or a MemoryError; `read_user_file` decodes it; `load_json_bounded`
refuses JSON nested deeper than any WarpScope file before json.loads can recurse into it, and
NaN/Infinity, which JSON does not have (`read_json_file`: both); `read_npz_file` reads numpy
arrays without trusting the archive's sizes or headers. Field-by-field schemas follow in each
reader (sim/inputs/args.py: check_fields).

Writing: `atomic_file` / `write_bytes_atomic` / `write_text_atomic` write to a temporary file in
the target's folder, flush it to disk and rename it over the target. A full disk, an unwritable
folder or a kill -9 leaves the earlier file as it was; a temporary left by a killed run (its
name holds the dead process's id) is removed by the next write into that folder.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shutil
import stat
import tempfile
import zipfile
import zlib

import numpy as np

from sim.inputs.errors import UserError
from sim.inputs.units import fmt_bytes

TEMP_PREFIX = ".tmp-warpscope-"  # + "<pid>-<random><suffix>"; see clean_stale_temporaries
MAX_JSON_DEPTH = 32  # WarpScope's files nest 4 deep; settings and results a little more
_NOT_STRUCTURAL = bytes(sorted(set(range(256)) - set(b'[]{}"')))
_ESCAPE = re.compile(rb"\\.", re.DOTALL)
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")


# -- reading ----------------------------------------------------------------------------------
def check_user_file(path, what: str, max_bytes: int) -> os.stat_result:
    """Before anything opens `path` (this module, or a library such as QSettings that reads
    the file itself): a regular file of at most `max_bytes`, or one UserError line."""
    if path is None or not str(path).strip():
        raise UserError(f"no {what} given (the file name is empty)")
    try:
        info = os.stat(path)
    except (OSError, ValueError) as exc:  # ValueError: a NUL in the name
        why = getattr(exc, "strerror", None) or exc
        raise UserError(f"cannot read {what} {_short(path)}: {why}") from None
    _check_regular(info, path, what, max_bytes)
    return info


def read_user_bytes(path, what: str, max_bytes: int) -> bytes:
    """The bytes of a regular file of at most `max_bytes`, or one UserError line."""
    check_user_file(path, what, max_bytes)
    try:  # O_NONBLOCK: should a FIFO be swapped in after the stat, open and read still return
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
    except OSError as exc:
        raise UserError(f"cannot read {what} {_short(path)}: {exc.strerror or exc}") from None
    try:
        _check_regular(os.fstat(fd), path, what, max_bytes)
        with os.fdopen(fd, "rb", closefd=False) as fh:
            data = fh.read(max_bytes + 1)
    except OSError as exc:
        raise UserError(f"cannot read {what} {_short(path)}: {exc.strerror or exc}") from None
    finally:
        os.close(fd)
    if len(data) > max_bytes:  # it grew after the stat
        raise UserError(f"{_short(path)} is larger than {fmt_bytes(max_bytes)}, the most a {what} may be")
    return data


def peek_user_file(path, n: int) -> bytes:
    """The first `n` bytes of a regular file (what it declares itself to be); b"" for anything
    else or anything unreadable (a pipe or a device is never opened: it would block)."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return b""
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
    except (OSError, ValueError):
        return b""
    try:
        return os.read(fd, n) if stat.S_ISREG(os.fstat(fd).st_mode) else b""
    except OSError:
        return b""
    finally:
        os.close(fd)


def read_user_file(path, what: str, max_bytes: int) -> str:
    """The text of a regular UTF-8 file of at most `max_bytes`, or one UserError line."""
    data = read_user_bytes(path, what, max_bytes)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise UserError(f"{_short(path)} is not a text file (not UTF-8 at byte {exc.start:,})") from None


def read_json_file(path, what: str, max_bytes: int, max_depth: int = MAX_JSON_DEPTH):
    """A JSON file through both checks: regular and bounded, then bounded nesting."""
    return load_json_bounded(read_user_file(path, what, max_bytes), _short(path), max_depth)


def read_npz_file(path, what: str, columns: dict, max_bytes: int, max_rows: int) -> dict:
    """The 1-D arrays `columns` (name -> numpy dtype) of a .npz file, each cast to its dtype.

    np.load alone trusts the file: an .npy header may claim 10^12 rows (numpy allocates them
    before reading), a member may be an object array (unpickled code) or inflate to gigabytes.
    Here the archive is read whole under `max_bytes`, each member's inflated size and header
    are checked before its data is, and np.load runs with allow_pickle=False."""
    data = read_user_bytes(path, what, max_bytes)
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, ValueError, OSError):
        raise UserError(f"{_short(path)} is not a {what} (not a .npz archive)") from None
    out = {}
    with archive:
        for name, dtype in columns.items():
            out[name] = _npz_member(archive, name, np.dtype(dtype), path, max_rows)
    return out


def _npz_member(archive: zipfile.ZipFile, name: str, want: np.dtype, path, max_rows: int):
    where = f"{_short(path)}: array {name!r}"
    try:
        info = archive.getinfo(f"{name}.npy")
    except KeyError:
        raise UserError(f"{where} is missing") from None
    limit = 1024 + max_rows * 8
    if info.file_size > limit:
        raise UserError(f"{where} is {fmt_bytes(info.file_size)} unpacked; at most "
                        f"{max_rows:,} rows are read")
    try:
        raw = archive.read(info)  # zipfile stops at the declared size and checks the CRC
        head = io.BytesIO(raw)
        version = np.lib.format.read_magic(head)
        read_header = {(1, 0): np.lib.format.read_array_header_1_0,
                       (2, 0): np.lib.format.read_array_header_2_0}.get(version)
        if read_header is None:
            raise ValueError(f"npy format {version}")
        shape, _fortran, dtype = read_header(head)
    except (zipfile.BadZipFile, ValueError, OSError, EOFError, NotImplementedError, SyntaxError,
            TypeError, zlib.error):
        raise UserError(f"{where} is damaged (not a numpy array)") from None
    if dtype.hasobject:
        raise UserError(f"{where} holds Python objects; WarpScope reads numbers only")
    if len(shape) != 1 or shape[0] > max_rows or dtype.kind != want.kind:
        raise UserError(f"{where} must be 1-D {want.name} of at most {max_rows:,} rows, got "
                        f"{dtype.name} of shape {shape}")
    if shape[0] * dtype.itemsize > len(raw) - head.tell():
        raise UserError(f"{where} is shorter than its header says")
    try:
        array = np.load(io.BytesIO(raw), allow_pickle=False)
    except (ValueError, OSError, EOFError) as exc:
        raise UserError(f"{where} is damaged ({str(exc).splitlines()[0][:80]})") from None
    if want.kind == "f" and not np.isfinite(array).all():
        raise UserError(f"{where} holds NaN or infinite values")
    if want.kind in "iu" and array.size and (array.min() < np.iinfo(want).min
                                             or array.max() > np.iinfo(want).max):
        raise UserError(f"{where} holds values outside the range of {want.name}")
    return array.astype(want)


def _check_regular(info: os.stat_result, path, what: str, max_bytes: int) -> None:
    if stat.S_ISDIR(info.st_mode):
        raise UserError(f"{_short(path)} is a folder, not a {what}")
    if not stat.S_ISREG(info.st_mode):
        raise UserError(f"{_short(path)} is a pipe, device or socket, not a {what} (a regular file)")
    if info.st_size > max_bytes:
        raise UserError(f"{_short(path)} is {fmt_bytes(info.st_size)}; a {what} may be at most "
                        f"{fmt_bytes(max_bytes)}")


def json_depth(data: bytes) -> int:
    """How deep arrays and objects nest in JSON text (brackets inside strings do not count).

    Vectorised, so a 50 MB file costs milliseconds and no recursion: escapes are dropped first
    (so every remaining quote opens or closes a string), then everything but brackets and quotes."""
    kept = np.frombuffer(_ESCAPE.sub(b"", data).translate(None, _NOT_STRUCTURAL), dtype=np.uint8)
    if kept.size == 0:
        return 0
    outside = np.cumsum(kept == ord('"')) % 2 == 0
    opens = outside & ((kept == ord("[")) | (kept == ord("{")))
    closes = outside & ((kept == ord("]")) | (kept == ord("}")))
    return int(np.cumsum(opens.astype(np.int64) - closes).max())


def _no_constants(name: str):
    raise ValueError(f"{name} is not a number JSON allows")


def load_json_bounded(text: str | bytes, where: str, max_depth: int = MAX_JSON_DEPTH):
    """json.loads, but nesting deeper than `max_depth`, NaN/Infinity and absurd numbers are one
    UserError naming `where` (never a RecursionError or an 'int too long' traceback)."""
    raw = text.encode("utf-8") if isinstance(text, str) else text
    depth = json_depth(raw)
    if depth > max_depth:
        raise UserError(f"{where}: JSON nested {depth:,} levels deep; WarpScope's files nest at "
                        f"most {max_depth}")
    try:
        data = json.loads(text, parse_constant=_no_constants)
    except json.JSONDecodeError as exc:
        raise UserError(f"{where} is not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})") from None
    except (ValueError, RecursionError) as exc:  # 5000-digit numbers, NaN, what the scan missed
        raise UserError(f"{where} is not valid JSON: {str(exc).splitlines()[0][:120]}") from None
    if _SURROGATE_ESCAPE.search(raw) and not _all_text_encodes(data):
        raise UserError(f"{where} holds text that is not valid Unicode (a lone \\ud800-\\udfff escape)")
    return data


def _all_text_encodes(data) -> bool:
    """No string (key or value) holds a lone surrogate, which no file or terminal can take."""
    stack = [data]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack += list(item.keys()) + list(item.values())
        elif isinstance(item, list):
            stack += item
        elif isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                return False
    return True


def _short(path) -> str:
    """A path as messages show it: long names shortened, so the message stays one line."""
    text = str(path)
    return text if len(text) <= 120 else f"{text[:60]}...{text[-40:]}"


# -- writing ----------------------------------------------------------------------------------
def check_writable(path, what: str = "file") -> None:
    """Fail before the work, not after it: `path` must name a file (not a folder, device or
    an empty string) whose folder exists and takes new files, with a name the system allows."""
    if path is None or not str(path).strip():
        raise UserError(f"no {what} name given (it is empty)")
    target = os.path.abspath(path)
    folder, name = os.path.split(target)
    if not name:
        raise UserError(f"{_short(path)} names a folder; give a {what} name")
    try:
        name_max = os.pathconf(folder, "PC_NAME_MAX") if os.path.isdir(folder) else 255
    except OSError:
        name_max = 255
    if len(os.fsencode(name)) > name_max:
        raise UserError(f"cannot write {_short(path)}: the file name is {len(os.fsencode(name))} "
                        f"bytes long, this system allows {name_max}")
    if not os.path.isdir(folder):
        raise UserError(f"cannot write {_short(path)}: folder {_short(folder)} does not exist")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise UserError(f"cannot write {_short(path)}: folder {_short(folder)} is not writable")
    try:
        info = os.stat(target)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise UserError(f"cannot write {_short(path)}: {exc.strerror or exc}") from None
    if stat.S_ISDIR(info.st_mode):
        raise UserError(f"cannot write {_short(path)}: it is a folder")
    if not stat.S_ISREG(info.st_mode):
        raise UserError(f"cannot write {_short(path)}: it is not a regular file (WarpScope only "
                        "replaces files)")


def check_folder(path, what: str = "folder") -> str:
    """Fail before the work: `path` must be a folder, or a place where one can be made, with
    names the system allows. Returns it as an absolute path."""
    if path is None or not str(path).strip():
        raise UserError(f"no {what} given (the name is empty)")
    target = os.path.abspath(path)
    for part in target.split(os.sep):
        if len(os.fsencode(part)) > 255:
            raise UserError(f"cannot create {_short(path)}: a name in it is {len(os.fsencode(part))} "
                            "bytes long, this system allows 255")
    if len(os.fsencode(target)) > 4000:
        raise UserError(f"cannot create {_short(path)}: the path is too long")
    if os.path.exists(target) and not os.path.isdir(target):
        raise UserError(f"{_short(path)} exists and is not a folder")
    return target


def make_folder(path, what: str = "folder") -> str:
    """Create `path` (and its parents) if needed; one UserError line if that cannot be done."""
    target = check_folder(path, what)
    try:
        os.makedirs(target, exist_ok=True)
    except OSError as exc:
        raise UserError(f"cannot create {_short(path)}: {exc.strerror or exc}") from None
    if not os.access(target, os.W_OK | os.X_OK):
        raise UserError(f"cannot write into {_short(path)}: permission denied")
    return target


@contextlib.contextmanager
def atomic_file(path, what: str = "file"):
    """Yield a temporary path in `path`'s folder; when the block ends without error, the file
    there is flushed to disk and renamed over `path`. On any error it is removed and `path` is
    left as it was; an OSError becomes one UserError line."""
    check_writable(path, what)
    target = os.path.realpath(path)  # a link is written through, not replaced
    folder = os.path.dirname(target)
    clean_stale_temporaries(folder)
    try:
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=f"{TEMP_PREFIX}{os.getpid()}-",
                                   suffix=os.path.splitext(target)[1])
        os.close(fd)
    except OSError as exc:
        raise UserError(f"cannot write {_short(path)}: {exc.strerror or exc}") from None
    try:
        yield tmp
        _fsync(tmp)
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes files private; give it an ordinary mode
        os.replace(tmp, target)
    except OSError as exc:
        _remove(tmp)
        raise UserError(f"cannot write {_short(path)}: {exc.strerror or exc}") from None
    except BaseException:
        _remove(tmp)
        raise
    _fsync_folder(folder)


def write_bytes_atomic(path, data: bytes) -> None:
    with atomic_file(path) as tmp, open(tmp, "wb") as fh:
        fh.write(data)


def write_text_atomic(path, text: str) -> None:
    write_bytes_atomic(path, text.encode("utf-8"))


def write_json_atomic(path, payload, indent: int | None = None) -> None:
    separators = None if indent else (",", ":")
    write_text_atomic(path, json.dumps(payload, indent=indent, separators=separators))


def clean_stale_temporaries(folder) -> list[str]:
    """Remove temporaries (files or staging folders) that a killed WarpScope run left in
    `folder`: their names carry the writer's process id, and that process is gone."""
    removed = []
    try:
        names = os.listdir(folder)
    except OSError:
        return removed
    for name in names:
        m = re.match(re.escape(TEMP_PREFIX) + r"(\d+)-", name)
        if m is None or _alive(int(m.group(1))):
            continue
        _remove(os.path.join(folder, name))
        removed.append(name)
    return removed


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, OSError):
        return True  # someone else's process (or a name we do not understand): leave it
    return True


def _remove(path) -> None:
    try:
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path, ignore_errors=True)
        else:
            os.unlink(path)
    except OSError:
        pass


def _fsync(path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_folder(folder) -> None:
    """Make the rename itself durable (best effort: not every file system lets a folder sync)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


_UMASK: list[int] = []


def _umask() -> int:
    if not _UMASK:
        mask = os.umask(0)
        os.umask(mask)
        _UMASK.append(mask)
    return _UMASK[0]
