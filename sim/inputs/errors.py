"""The exceptions a user meets; front ends print their message on one line and exit with
`exit_status` (the CLI's convention, docs/SETUP.md "Command-line conventions").

`printable` is the one place text from a file is made safe to show: a terminal escape, a line
break or a bidirectional override in a profile's GPU name or a trace's meta would otherwise
reach the terminal (or the window) raw. Every UserError message passes through it.
"""

import re

# C0/C1 controls, line/paragraph separators and the bidi embeddings, overrides and isolates
CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def printable(text) -> str:
    """`text` with every control character written as an escape (\\x1b, \\n, \\u202e)."""
    text = str(text)
    if CONTROL.search(text) is None:
        return text
    return CONTROL.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)


class UserError(ValueError):
    """Input the user gave (an option, a value, a file) that WarpScope cannot work with: a usage
    error, exit status 2."""

    exit_status = 2

    def __init__(self, message="") -> None:
        super().__init__(printable(message))


class RunFailure(UserError):
    """The request was valid but this machine could not carry it out (no GPU, a package not
    installed, out of GPU memory, nothing left to check): a runtime failure, exit status 1."""

    exit_status = 1


class NeedsGpu(UserError):
    """A command that only a GPU can carry out (`trace`, `calibrate`: they record on one) was
    asked for where there is none: a precondition the user can see before anything runs, like a
    usage error, exit status 2 (docs/SETUP.md "Command-line conventions")."""

    exit_status = 2
