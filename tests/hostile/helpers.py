"""What every hostile case must satisfy, and the hostile values and mutations they are made of.

The contract: a bad input ends in exit status 2 and exactly one line on stderr, no
traceback, no hang; no file is left behind that was not there before; earlier files are intact.

Fuzzing is small by default (CI's two-minute budget); `WARPSCOPE_FUZZ=long` runs it properly.
"""

from __future__ import annotations

import contextlib
import copy
import io
import json
import os
import signal
from pathlib import Path

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

import main

LONG = os.environ.get("WARPSCOPE_FUZZ", "").lower() == "long"


def fuzz(examples: int):
    """Hypothesis settings for one fuzz test: `examples` by default, 40x that with WARPSCOPE_FUZZ=long."""
    return settings(
        max_examples=examples * 40 if LONG else examples,
        deadline=None,
        derandomize=not LONG,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
        database=None,
    )


class Hang(Exception):
    pass


@contextlib.contextmanager
def time_limit(seconds: float):
    """Fail (instead of hanging the suite) if the block takes longer than `seconds`."""

    def on_alarm(*_):
        raise Hang(f"took more than {seconds} s")

    old = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def run_cli(argv: list[str], seconds: float = 20.0) -> tuple[int, str, str]:
    """main.main(argv) in this process, with stdout and stderr captured; argparse's SystemExit
    becomes its status. Any other exception escapes: in a real run it would be a traceback."""
    out, err = io.StringIO(), io.StringIO()
    with time_limit(seconds), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main.main([str(a) for a in argv])
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 2
    return code, out.getvalue(), err.getvalue()


def assert_contract(code: int, err: str, argv=()) -> None:
    """0 (it worked), or 2 with one line on stderr that is no traceback."""
    assert code in (0, 2), (code, argv, err)
    assert "Traceback" not in err, (argv, err)
    if code == 2:
        assert err.count("\n") == 1 and err.endswith("\n"), (argv, err)
        assert "error" in err, (argv, err)


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file under `folder` and its bytes (to prove nothing appeared, changed or vanished)."""
    return {
        str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }


# -- hostile values -------------------------------------------------------------------------------
# Text a user might type (or paste) where a number belongs.
_SPECIAL_TEXT = [
    "",
    " ",
    "-",
    ".",
    "-.",
    "e",
    "1e",
    "nan",
    "NaN",
    "inf",
    "-inf",
    "Infinity",
    "1e400",
    "1e-400",
    "1e999999999",
    "9" * 400,
    "9" * 50 + "^64",
    "2^99",
    "2**64",
    "2^63",
    "2^-1",
    "0x10",
    "1_000",
    "1,,000",
    "--5",
    "+5",
    "-0",
    "0",
    "1.5",
    "1.5e3",
    "4M",
    "48KiB",
    "1e6k",
    "١٢٣",
    "１２",
    "\u00a0",
    "\x00",
    "5 parsecs",
    "2^20..2^10",
    "1e6;;",
    "0..0",
    "1..2^62 x2",
]
number_text = st.one_of(
    st.sampled_from(_SPECIAL_TEXT),
    st.integers(min_value=-(10**30), max_value=10**30).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.builds(lambda a, b: f"{a}^{b}", st.integers(0, 10**25), st.integers(0, 200)),
    st.builds(
        lambda a, b, s: f"{a}e{b}{s}",
        st.integers(-(10**6), 10**6),
        st.integers(-50, 50),
        st.sampled_from(["", "k", "M", "G", "KiB", "kb"]),
    ),
    st.text(max_size=12),
)

# JSON values that replace one field of a valid file.
_NESTED = json.loads("[" * 40 + "]" * 40)
json_values = st.one_of(
    st.sampled_from(
        [
            None,
            True,
            False,
            0,
            -1,
            1,
            0.5,
            -0.0,
            2**31,
            2**63,
            -(2**63),
            10**30,
            1e308,
            -1e308,
            1e-308,
            "",
            "abc",
            "1",
            "NaN",
            [],
            {},
            [[]],
            [1, 2],
            {"a": 1},
            "x" * 5000,
            _NESTED,
        ]
    ),
    st.integers(),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=20),
)
# Tokens that are not JSON values at all but a damaged file may hold.
raw_tokens = st.sampled_from(
    [
        "NaN",
        "Infinity",
        "-Infinity",
        "1" * 5000,
        "[" * 5000,
        "{",
        '"\\ud800"',
        "1e99999",
        "tru",
        '"unterminated',
    ]
)


def paths(doc, prefix=()) -> list[tuple]:
    """Every place in a JSON document a value sits, as key/index paths (lists: first 3 items)."""
    out = []
    items = (
        doc.items()
        if isinstance(doc, dict)
        else enumerate(doc[:3])
        if isinstance(doc, list)
        else ()
    )
    for key, value in items:
        out.append(prefix + (key,))
        out += paths(value, prefix + (key,))
    return out


def mutated(doc, path: tuple, value, delete: bool = False):
    """A deep copy of `doc` with the value at `path` replaced (or deleted)."""
    doc = copy.deepcopy(doc)
    parent = doc
    for key in path[:-1]:
        parent = parent[key]
    if delete:
        del parent[path[-1]]
    else:
        parent[path[-1]] = value
    return doc


def mutations(doc):
    """A strategy for (text of `doc` with one field changed, what was changed)."""
    where = st.sampled_from(paths(doc))

    def replace(path, value):
        return json.dumps(mutated(doc, path, value)), f"{path} = {value!r:.40}"

    def delete(path):
        return json.dumps(mutated(doc, path, None, delete=True)), f"del {path}"

    def token(path, tok):
        marker = '"__HOSTILE__"'
        return json.dumps(mutated(doc, path, "__HOSTILE__")).replace(
            marker, tok, 1
        ), f"{path} = {tok:.20}"

    return st.one_of(
        st.builds(replace, where, json_values),
        st.builds(delete, where),
        st.builds(token, where, raw_tokens),
    )
