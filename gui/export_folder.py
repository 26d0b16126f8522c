"""Where an export goes, and how it replaces the earlier one: never touching a stranger's file.

An export folder is WarpScope's when every entry in it is a file its manifest
(warpscope-export.json) lists with the sha256 of what was written; an empty folder, or one that
does not exist yet, is too. Anything else (a user's own summary.html, a note, a subfolder, a file
edited since, a manifest entry whose hash does not match) makes the folder a stranger's:
`export_target` refuses it in one line, or, with `force`, exports into its subfolder
warpscope-export/ instead, so the user's files are never changed or removed.

`replace_folder` renders the whole new export into a staging folder next to the target (same
file system), writes the manifest with the hashes, then swaps the two folders with one
rename(2) (Linux renameat2 RENAME_EXCHANGE; or a plain rename where the target does not exist),
and only then removes the old export, file by file, each only if its hash still matches. A kill
at any instant leaves the old export or the new one, never a mix; a killed run's staging folder
is named like sim.inputs.files' temporaries (TEMP_PREFIX + pid) and removed by the next write there.
Without RENAME_EXCHANGE (another OS, some network file systems) the old folder is first renamed
aside: a kill between the two renames leaves neither in place, the old one whole beside it.

No Qt here: the switch is tested with kills at every step (`STEP_HOOK`), no window needed.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import datetime as _dt
import errno
import hashlib
import os
import re
import shutil
import tempfile
from pathlib import Path
from typing import Callable

from sim.inputs.errors import UserError
from sim.inputs.files import (TEMP_PREFIX, _umask, clean_stale_temporaries, load_json_bounded,
                       make_folder, read_user_bytes, read_user_file, write_json_atomic)

MANIFEST = "warpscope-export.json"
MANIFEST_FORMAT = "warpscope-export/2"  # /1 had no hashes: its files are not trusted
SUBFOLDER = "warpscope-export"  # where --force puts an export into a folder with others' files
EXPORT_NAME = re.compile(r"[a-z0-9_]+\.(png|svg|csv|json|html)")  # what an export ever writes
MAX_ENTRIES = 2000  # more than an export ever writes: the folder is not one
MAX_FILE_BYTES = 512 << 20  # hashing more than this: not one of our PNGs
STEP_HOOK: Callable[[str], None] | None = None  # tests: a kill at each named step


def _step(name: str) -> None:
    if STEP_HOOK is not None:
        STEP_HOOK(name)


def sha256_of(path: Path) -> str | None:
    """The sha256 of a regular file (not through a link), or None."""
    try:
        info = os.lstat(path)
        if not os.path.isfile(path) or os.path.islink(path) or info.st_size > MAX_FILE_BYTES:
            return None
        return hashlib.sha256(read_user_bytes(path, "exported file", MAX_FILE_BYTES)).hexdigest()
    except (OSError, UserError):
        return None


def manifest_entries(folder: Path) -> dict[str, str]:
    """name -> sha256 from the folder's manifest; {} when it is missing, damaged or of /1."""
    path = folder / MANIFEST
    if not path.is_file() or path.is_symlink():
        return {}
    try:
        data = load_json_bounded(read_user_file(path, "manifest", 1 << 20), MANIFEST)
    except UserError:
        return {}
    if not isinstance(data, dict) or data.get("format") != MANIFEST_FORMAT:
        return {}
    files = data.get("files")
    if not isinstance(files, dict):
        return {}
    return {name: sha for name, sha in files.items()
            if isinstance(name, str) and EXPORT_NAME.fullmatch(name) and name != MANIFEST
            and isinstance(sha, str) and re.fullmatch(r"[0-9a-f]{64}", sha)}


def foreign_files(folder: Path) -> list[str]:
    """The entries of `folder` WarpScope did not write (sorted; [] for a missing or empty
    folder, or one holding exactly an export its manifest vouches for)."""
    try:
        names = sorted(os.listdir(folder))
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise UserError(f"cannot read the folder {folder}: {exc.strerror or exc}") from None
    if len(names) > MAX_ENTRIES:
        return names[:5] + [f"... ({len(names):,} entries)"]
    ours = manifest_entries(folder)
    strangers = []
    for name in names:
        if name == MANIFEST and ours:
            continue
        if re.match(re.escape(TEMP_PREFIX) + r"\d+-", name):
            continue  # a killed write's temporary: sim.inputs.files removes it
        if name not in ours or sha256_of(folder / name) != ours[name]:
            strangers.append(name)
    return strangers


def export_target(out_dir, force: bool = False) -> Path:
    """The folder an export into `out_dir` replaces: `out_dir` itself when it is missing, empty
    or WarpScope's own; with `force`, its subfolder warpscope-export/; else one UserError line."""
    out = Path(os.path.realpath(out_dir))  # a link to a folder: the folder is replaced
    if out.exists() and not out.is_dir():
        raise UserError(f"{out_dir} is not a folder")
    strangers = foreign_files(out)
    if not strangers:
        return out
    shown = ", ".join(strangers[:3]) + (f" and {len(strangers) - 3} more" if len(strangers) > 3 else "")
    if not force:
        raise UserError(f"{out_dir} holds files WarpScope did not write ({shown}); choose an "
                        f"empty or new folder, or pass --force to export into {SUBFOLDER}/ "
                        "inside it (your files are never touched)")
    inner = out / SUBFOLDER
    if inner.is_symlink() or (inner.exists() and not inner.is_dir()):
        raise UserError(f"{inner} is not a folder WarpScope can write: choose another folder")
    others = foreign_files(inner)
    if others:
        raise UserError(f"{inner} holds files WarpScope did not write ({', '.join(others[:3])}); "
                        "choose an empty or new folder")
    return inner


# --------------------------------------------------------------------------------------------
# The switch
# --------------------------------------------------------------------------------------------
_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def _exchange(a: Path, b: Path) -> bool:
    """Swap two folders in one step (Linux renameat2); False where that is not supported."""
    libc_name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(libc_name, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError, TypeError):
        return False
    renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p,
                          ctypes.c_uint]
    if renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP):
        return False
    raise OSError(code, os.strerror(code), str(b))


def _write_manifest(folder: Path, names: list[str]) -> None:
    hashes = {}
    for name in names:
        sha = sha256_of(folder / name)
        if sha is None:
            raise UserError(f"the export did not write {name} as a file")
        hashes[name] = sha
    write_json_atomic(folder / MANIFEST, {
        "format": MANIFEST_FORMAT,
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "files": hashes}, indent=2)


def _remove_old(folder: Path) -> None:
    """Remove an export that was swapped out: each file only if its hash matches its manifest
    (what foreign_files checked before); the folder only once it is empty."""
    ours = manifest_entries(folder)
    for name, sha in ours.items():
        _step("removing old")
        if sha256_of(folder / name) == sha:
            (folder / name).unlink(missing_ok=True)
    if ours:
        (folder / MANIFEST).unlink(missing_ok=True)
    try:
        folder.rmdir()
    except OSError:
        pass  # something that is not ours is in it: it stays, under its temporary name


def replace_folder(target: Path, render: Callable[[Path], list]) -> list[Path]:
    """`render(staging) -> files` writes a whole export into a staging folder beside `target`
    (export_target's answer); it then takes `target`'s place in one rename. UserError lines for
    what cannot be done; the earlier export stays whole on any failure or kill."""
    parent = target.parent
    make_folder(parent, "export folder")
    clean_stale_temporaries(parent)
    try:
        staging = Path(tempfile.mkdtemp(dir=parent, prefix=f"{TEMP_PREFIX}{os.getpid()}-export-"))
    except OSError as exc:
        raise UserError(f"cannot write into {parent}: {exc.strerror or exc}") from None
    _same_mode(staging, target)
    swapped = False  # after the swap, `staging` holds the old export: not ours to rmtree
    try:
        names = [Path(f).name for f in render(staging)]
        bad = [n for n in names if not EXPORT_NAME.fullmatch(n) or n == MANIFEST]
        if bad:
            raise UserError(f"the export wrote {bad[0]!r}, which is not an export file name")
        _step("rendered")
        _write_manifest(staging, names)
        _step("staged")
        try:
            if target.is_dir() and _exchange(staging, target):
                swapped = True
                _step("exchanged")
                _remove_old(staging)
            else:
                swapped = _switch_by_renames(staging, target)
        except OSError as exc:
            raise UserError(f"export to {target} failed: {exc.strerror or exc}") from None
        _step("done")
    finally:
        if not swapped:
            shutil.rmtree(staging, ignore_errors=True)  # our own render, never moved in
    return [target / n for n in names]


def _same_mode(staging: Path, target: Path) -> None:
    """mkdtemp makes a private folder: give it the earlier export's mode, or a new folder's."""
    try:
        mode = os.stat(target).st_mode & 0o7777 if target.is_dir() else 0o777 & ~_umask()
        os.chmod(staging, mode)
    except OSError:
        pass  # a private folder is still a correct export


def _switch_by_renames(staging: Path, target: Path) -> bool:
    """Where the folders cannot be exchanged: True once `staging` is in place."""
    if not target.exists():
        os.rename(staging, target)  # fails, not merges, if a folder appeared there meanwhile
        return True
    aside = Path(tempfile.mkdtemp(dir=target.parent, prefix=f"{TEMP_PREFIX}{os.getpid()}-old-"))
    os.rmdir(aside)
    os.rename(target, aside)
    _step("moved aside")
    os.rename(staging, target)
    _remove_old(aside)
    return True
