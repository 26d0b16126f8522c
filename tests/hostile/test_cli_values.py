"""Every number the command line takes, fuzzed: a value or one line and exit 2, never a traceback,
never a hang, never a wrong answer (exit 0 with nonsense)."""

from __future__ import annotations

import contextlib
import io
import json
import math
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

import main
from sim.inputs.errors import UserError
from sim.inputs.units import MAX_COUNT, parse_bytes, parse_count, parse_count_list, parse_real

from tests.hostile.helpers import assert_contract, fuzz, number_text, run_cli, snapshot, time_limit

ROOT = Path(__file__).resolve().parents[2]
TRACE = ROOT / "tests" / "data" / "trace_h200.json"


@fuzz(300)
@given(text=st.one_of(number_text, st.text(max_size=80)))
@example("9" * 400)  # was OverflowError in sim/inputs/units.py
@example("9" * 50 + "^64")  # was Python's int-digits limit when printed
def test_number_parsers_return_bounded_values_or_one_line(text):
    with time_limit(2):
        for parse, kwargs in (
            (parse_count, {}),
            (parse_bytes, {}),
            (parse_real, {"lo": -1e9, "hi": 1e9}),
        ):
            try:
                value = parse(text, "x", **kwargs)
            except UserError as exc:
                assert "\n" not in str(exc)
                continue
            if parse is parse_real:
                assert math.isfinite(value) and -1e9 <= value <= 1e9
            else:
                assert isinstance(value, int) and abs(value) <= MAX_COUNT
                str(value)  # printable: no 5000-digit int
        try:
            values = parse_count_list(text)
        except UserError as exc:
            assert "\n" not in str(exc)
        else:
            assert 1 <= len(values) <= 256 and all(1 <= v <= 2**31 for v in values)


LAUNCH_OPTIONS = ["--elements", "--block", "--regs", "--smem", "--carveout"]


@fuzz(60)
@given(
    option=st.sampled_from(LAUNCH_OPTIONS),
    value=number_text,
    # simulate at 2^16 elements (a fuzzed --elements comes later and wins): at the default 10^6,
    # `--block 1` simulates a million blocks, seconds each time Hypothesis draws it
    command=st.sampled_from([["explain", "--json"],
                             ["simulate", "--json", "--cost", "uniform", "--elements", "65536"]]),
)
@example(option="--smem", value="9" * 400, command=["explain", "--json"])  # OverflowError
@example(option="--block", value="9" * 50 + "^64", command=["explain", "--json"])  # int-digits limit
@pytest.mark.slow
def test_launch_options(option, value, command):
    argv = [*command, option, value]
    code, out, err = run_cli(argv)
    assert_contract(code, err, argv)
    if code == 0:
        json.loads(out)


SIM_OPTIONS = [
    "--duration-us",
    "--jitter",
    "--bytes-per-element",
    "--overhead-us",
    "--latency-us",
    "--sm-dispatch-us",
]


@fuzz(80)
@given(
    option=st.sampled_from(SIM_OPTIONS),
    value=number_text,
    cost=st.sampled_from(["uniform", "memory"]),
)
@example(option="--duration-us", value="0", cost="uniform")  # was exit 0 with 2,851 waves
@example(option="--bytes-per-element", value="0", cost="memory")
@pytest.mark.slow
def test_simulate_options_give_sane_waves_or_one_line(option, value, cost):
    argv = [
        "simulate",
        "--json",
        "--cost",
        cost,
        "--elements",
        "1e6",
        "--block",
        "256",
        option,
        value,
    ]
    if cost == "memory" and option != "--latency-us":
        argv += [
            "--latency-us",
            "0",
        ]  # so that zero bytes or overhead could mean zero-length blocks
    code, out, err = run_cli(argv)
    assert_contract(code, err, argv)
    if code == 0:
        summary = json.loads(out)
        assert summary["blocks"] == 3907 and summary["makespan_us"] > 0
        if cost == "uniform" and option != "--jitter":  # equal blocks: one wave per slot round
            assert summary["waves"] == math.ceil(3907 / summary["slots_on_gpu"])


@fuzz(40)
@given(option=st.sampled_from(["--blocks-per-sm", "--gpu"]), value=number_text)
def test_compare_options(option, value):
    argv = ["compare", str(TRACE), option, value, "--json"]
    code, _, err = run_cli(argv)
    assert_contract(code, err, argv)


# Options of the commands that need a GPU, Qt or minutes: their values are checked by argparse
# before any of that starts, so parsing alone is what is fuzzed here.
PARSE_ONLY = [
    (["bench", "--kernel", "add", "--out", "r.json"], ["--warps", "--reps"]),
    (["trace", "--out", "t.json"], ["--grid", "--warps", "--spin-us"]),
    (["export", "--out", "o"], LAUNCH_OPTIONS),
    ([], LAUNCH_OPTIONS),  # the window's own launch options
]


@fuzz(80)
@given(case=st.sampled_from(PARSE_ONLY), data=st.data())
@pytest.mark.slow
def test_other_commands_parse_values_or_exit_2(case, data):
    base, options = case
    option, value = data.draw(st.sampled_from(options)), data.draw(number_text)
    err, code = io.StringIO(), 0
    try:
        with time_limit(2), contextlib.redirect_stderr(err):
            main.build_parser().parse_args([*base, option, value])
    except SystemExit as exc:
        code = exc.code
    assert_contract(code, err.getvalue(), [*base, option, value])


@pytest.mark.parametrize(
    "argv, words",
    [
        (["explain", "--smem", "9" * 400], "characters long"),  # OverflowError in sim/inputs/units.py
        (["explain", "--block", "9" * 50 + "^64"], "far too large"),  # int-digits limit
        (["explain", "--elements", "1e400"], "out of range"),
        (["explain", "--elements", "nan"], "finite"),
        (["simulate", "--cost", "uniform", "--duration-us", "0", "--json"], "at least 0.001"),
        (
            ["simulate", "--cost", "memory", "--bytes-per-element", "0", "--latency-us", "0"],
            "at least 0.001 us",
        ),
        (["simulate", "--trace", ""], "empty"),  # silently wrote nothing
        (["export", "--out", ""], "empty"),  # wrote 30 files into the current folder
        (["--screenshot", ""], "empty"),  # opened the interactive window
        (["export", "--out", "x", "--results", ""], "empty"),
        (
            ["simulate", "--cost", "uniform", "--jitter", "0.5", "--elements", "2^29"],
            "at most 131,072 blocks",
        ),
        (
            ["simulate", "--elements", "2^30", "--block", "1024", "--trace", "t.json"],
            "at most 262,144 blocks",
        ),
    ],
)
def test_listed_cases(tmp_path, monkeypatch, argv, words):
    monkeypatch.chdir(tmp_path)
    code, _, err = run_cli(argv)
    assert_contract(code, err, argv)
    assert code == 2 and words in err, err
    assert snapshot(tmp_path) == {}


@pytest.mark.parametrize(
    "argv",
    [
        ["simulate", "--trace", "{long}.json"],
        [
            "bench",
            "--kernel",
            "add",
            "--cpu",
            "--out",
            "{long}.json",
        ],  # measured first, then failed
        ["export", "--out", "{long}"],  # Errno 36 traceback
        ["export", "--out", "{long}/x"],
        ["--screenshot", "{long}.png"],
    ],
)
def test_names_too_long_for_the_system(tmp_path, monkeypatch, argv):
    monkeypatch.chdir(tmp_path)
    argv = [a.replace("{long}", "a" * 300) for a in argv]
    code, _, err = run_cli(argv, seconds=10)  # bench must refuse before it measures anything
    assert code == 2 and "255" in err and err.count("\n") == 1
    assert snapshot(tmp_path) == {}


def test_cpu_bench_caps_sizes_like_check(monkeypatch, tmp_path):
    """`bench --cpu --sizes 2^31` took 8 GB in 19 s; `check` caps CPU sizes, now bench does too."""
    import kernels.measure.bench

    monkeypatch.setattr(kernels.measure.bench, "gpu_status", lambda: (False, "no GPU here"))
    monkeypatch.chdir(tmp_path)
    for kernel, cap in (("add_numba", "4,099"), ("add_triton", "1,048,583")):
        code, _, err = run_cli(
            ["bench", "--cpu", "--kernel", kernel, "--sizes", "2^31", "--out", "r.json"]
        )
        assert code == 2 and f"cap of {cap}" in err and err.count("\n") == 1
    assert snapshot(tmp_path) == {}
