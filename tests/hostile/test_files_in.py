"""Files a user gives (traces, results): checked to be regular and bounded before they are read,
parsed with bounded nesting, validated field by field. Mutating valid files one field at a time
gives a result or one line naming the file and the field; never a traceback, hang or blow-up."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import given

from kernels.measure.results import from_dict, load_results, save_results
from sim.inputs.errors import UserError
from sim.inputs.files import load_json_bounded
from sim.traces.trace import load_trace

from tests.hostile.helpers import assert_contract, fuzz, mutations, run_cli, snapshot, time_limit

ROOT = Path(__file__).resolve().parents[2]
TRACE = json.loads((ROOT / "tests" / "data" / "trace_h200.json").read_text())
TRACE["blocks"] = TRACE["blocks"][:200]
RESULTS = json.loads((ROOT / "tests" / "data" / "h200_block_size_sweep.json").read_text())
RESULTS["measurements"] = RESULTS["measurements"][:4]


@fuzz(100)
@given(case=mutations(TRACE))
def test_mutated_traces_load_or_name_the_problem(tmp_path_factory, case):
    text, _ = case
    path = tmp_path_factory.mktemp("t") / "t.json"
    path.write_text(text)
    with time_limit(5):
        try:
            trace = load_trace(path)
        except UserError as exc:
            assert "\n" not in str(exc) and str(path) in str(exc)
            return
    # what loads is what the rest of WarpScope may rely on
    assert isinstance(trace.gpu, str) and isinstance(trace.meta, dict) and len(trace.block) >= 1
    assert trace.sm.min() >= 0 and (trace.end_us >= trace.start_us).all()


@fuzz(40)
@given(case=mutations(TRACE))
def test_compare_on_mutated_traces_keeps_the_contract(tmp_path_factory, case):
    text, _ = case
    path = tmp_path_factory.mktemp("t") / "t.json"
    path.write_text(text)
    code, _, err = run_cli(["compare", str(path), "--json"])
    assert_contract(code, err)


@fuzz(100)
@given(case=mutations(RESULTS))
def test_mutated_results_load_or_name_the_field(tmp_path_factory, case):
    text, _ = case
    folder = tmp_path_factory.mktemp("r")
    (folder / "r.json").write_text(text)
    with time_limit(5):
        try:
            result = load_results(folder / "r.json")
        except UserError as exc:
            assert "\n" not in str(exc)
            return
    save_results(result, folder / "r.csv")  # what loads also round-trips through CSV
    assert load_results(folder / "r.csv").measurements == result.measurements


@fuzz(60)
@given(case=mutations(RESULTS))
def test_mutated_results_as_csv(tmp_path_factory, case):
    """The same damage in a CSV file: the cell is damaged instead of the JSON field."""
    text, _ = case
    folder = tmp_path_factory.mktemp("c")
    try:
        result = from_dict(load_json_bounded(text, "r.json"))
    except UserError:
        return
    save_results(result, folder / "r.csv")
    with time_limit(5):
        load_results(folder / "r.csv")


@pytest.mark.parametrize(
    "change, words",
    [
        ({"notes": 5}, "'notes' must be a list"),  # was TypeError
        (
            {"measurements": [{**RESULTS["measurements"][0], "regs_per_thread": "abc"}]},
            "'regs_per_thread' must be a whole number",
        ),  # printed a traceback and exited 0
        ({"device": {**RESULTS["device"], "warp_size": 0}}, "'warp_size'"),
        ({"device": {**RESULTS["device"], "sm_count": 10**9}}, "'sm_count'"),
        ({"device": []}, "'device' must be an object"),
        (
            {"measurements": [{**RESULTS["measurements"][0], "blocks_per_sm": 10**6}]},
            "'blocks_per_sm'",
        ),
    ],
)
def test_listed_results_damage(tmp_path, change, words):
    (tmp_path / "r.json").write_text(json.dumps({**RESULTS, **change}))
    code, _, err = run_cli(
        ["export", "--results", str(tmp_path / "r.json"), "--out", str(tmp_path / "o")]
    )
    assert code == 2 and words in err and err.count("\n") == 1
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize(
    "doc, words",
    [
        ({**TRACE, "blocks": []}, "holds no blocks"),
        ({**TRACE, "gpu": 123}, "field 'gpu' must be one line of text"),
        ({**TRACE, "gpu": None}, "field 'gpu' must be one line of text"),
        ({**TRACE, "gpu": ["H200"]}, "field 'gpu' must be one line of text"),
        ({**TRACE, "blocks": [[0, -1, 0, 0, 1]]}, "sm must be an SM in 0..1023"),
        ({**TRACE, "blocks": [[0, 0, 0, 0, 1e300]]}, "end_us must be a time"),
        ({**TRACE, "blocks": [[0, 0, 0, 5, 1]]}, "ends before it starts"),
        # a meta that cannot say the blocks per SM: compare takes the recorded peak and says so
        # (tests/sim/test_compare_everywhere.py)
    ],
)
def test_listed_trace_damage(tmp_path, doc, words):
    (tmp_path / "t.json").write_text(json.dumps(doc))
    code, _, err = run_cli(["compare", str(tmp_path / "t.json")])
    assert code == 2 and words in err and err.count("\n") == 1, err


def _deep(path: Path) -> Path:
    path.write_text("[" * 200_000 + "]" * 200_000)  # RecursionError in compare and export --results
    return path


def _fifo(path: Path) -> Path:
    os.mkfifo(path)  # blocked forever
    return path


def _sparse_gigabyte(path: Path) -> Path:
    with open(path, "wb") as fh:  # a 1 GB file that takes no disk space
        fh.truncate(2**30)
    return path


def _folder(path: Path) -> Path:
    path.mkdir()
    return path


def _too_many_blocks(path: Path) -> Path:
    rows = ",".join("[0,0,0,0,1]" for _ in range(300_000))  # 3.6 MB: under the size cap
    path.write_text(f'{{"format":"warpscope-trace/1","blocks":[{rows}]}}')
    return path


@pytest.mark.parametrize(
    "make, words",
    [
        (_deep, "nested 200,000 levels deep"),
        (_fifo, "pipe, device"),
        (_sparse_gigabyte, "1 GiB; a"),
        (_folder, "is a folder"),
        (_too_many_blocks, "more than 262,144 blocks"),
        (lambda p: Path("/dev/zero"), "pipe, device"),  # grew without bound (12 GB)
        (lambda p: p.with_name("absent.json"), "No such"),
        (
            lambda p: p.write_bytes(b'{"format": "warpscope-trace/1", "x": "\xff"}') and p,
            "not a text file",
        ),
        (
            lambda p: (
                p.write_text('{"format": "warpscope-trace/1", "blocks": [[0,0,0,0,NaN]]}') and p
            ),
            "NaN",
        ),
        (
            lambda p: (
                p.write_text('{"format": "warpscope-trace/1", "n": ' + "1" * 5000 + "}") and p
            ),
            "not valid JSON",
        ),
    ],
)
@pytest.mark.parametrize("command", ["compare", "export --results"])
def test_files_that_are_not_files(tmp_path, make, words, command):
    path = make(tmp_path / "in.json")
    argv = [*command.split(), str(path)] + (
        ["--out", str(tmp_path / "o")] if "export" in command else []
    )
    before = snapshot(tmp_path) if path.is_file() and path.stat().st_size < 2**24 else None
    code, _, err = run_cli(argv, seconds=10)
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    if command == "compare" or (
        path.suffix == ".json" and words in ("pipe, device", "is a folder", "No such")
    ):
        assert words in err, err
    assert not (tmp_path / "o").exists()
    if before is not None:
        assert snapshot(tmp_path) == before
