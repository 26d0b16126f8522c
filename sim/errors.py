"""The one exception type a user can cause; front ends print its message on one line.

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
    """Input the user gave (or a device they asked for) that WarpScope cannot work with."""

    def __init__(self, message="") -> None:
        super().__init__(printable(message))
