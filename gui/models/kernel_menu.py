"""How the Kernel menu lists each kernel, and whether it can run here yet.

The kernel declarations are plain data (kernels/declare): the window lists them before torch,
Triton and Numba have loaded in the kernel host (gui/live_kernels.py), and marks each one
available, loading, or missing with the reason, from the host's `kernels.available()` answer
(kernels.launching.backends.Availability per backend). A kernel's grid and its compile do not
wait for that answer; running it live does. Plain data: no Qt.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

AVAILABLE, LOADING, MISSING = "available", "loading", "missing"


@dataclass(frozen=True)
class Availability:
    """What the kernel host said about the backends: None while it loads."""

    backends: dict | None = None  # backend -> kernels.launching.backends.Availability
    error: str = ""  # the host could not load them at all (one line)
    loading: bool = True  # False: nothing will load in this session


def kernel_status(kernel, availability: Availability) -> tuple[str, str]:
    """(AVAILABLE | LOADING | MISSING, the reason in a line) for `kernel` here."""
    backends = availability.backends
    if backends is None:
        if availability.error:
            return MISSING, f"the kernel host could not load torch / triton / numba: {availability.error}"
        if availability.loading:
            return LOADING, "torch / triton / numba are loading in the kernel host"
        return MISSING, "live kernels were not loaded in this session"
    a = backends.get(kernel.backend)
    if a is None:
        return MISSING, f"no {kernel.backend} backend here"
    if not a.ok:
        install = getattr(a, "install", "")
        return MISSING, a.reason + (f" ({install})" if install else "")
    return AVAILABLE, f"runs live ({a.mode}{': ' + a.reason if a.reason else ''})"


def menu_entry(kernel, availability: Availability) -> tuple[str, str, str]:
    """(label, tooltip, status) of `kernel` in the Kernel menu: its name and backend, its file
    when a user opened it, and its status unless it is available."""
    status, reason = kernel_status(kernel, availability)
    label = f"{kernel.name}  [{kernel.backend}]"
    tip = kernel.description or kernel.title
    if kernel.origin != "built-in":  # opened from a file: listed after the built-ins
        label += f"  · {os.path.basename(kernel.origin)}"
        tip = f"{kernel.origin}\n{tip}"
    if status == LOADING:
        label += "  · loading…"
    elif status == MISSING:
        label += "  · missing"
    return label, f"{tip}\n{status}: {reason}", status


def status_note(kernel, availability: Availability) -> str:
    """The line under the menu for the selected kernel ("" when it runs live here); the
    menu's tooltip has the whole reason."""
    status, reason = kernel_status(kernel, availability)
    if status == LOADING:
        return f"{kernel.backend} is loading: live runs wait for it, the grid and registers do not."
    if status == MISSING:
        return f"{kernel.backend} missing: {reason}."
    return ""
