"""The same comparison everywhere: for every trace in tests/data, `main.py compare --json` and the
window's comparison (gui.models.trace.compare_job, what the Timeline shows) agree, number for
number and word for word; so do `--mode ideal` and the window's textbook schedule.

Every trace file, and every trace of every bundle in tests/data, is listed. Every file and the
smallest trace of each bundle (of at most CAP blocks) run in every run; the slow run adds the bundles' other traces of at
most CAP blocks and the smallest of each kernel kind above it; WARPSCOPE_COMPARE_ALL=1 runs them all."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

import main
from gui.models.trace import compare_job
from sim.rules.devices import preset
from sim.traces.trace import write_trace
from sim.traces.trace_bundle import load_bundle
from sim.traces.compare import REAL_KERNEL_TRACES

DATA = Path(__file__).parents[1] / "data"
CAP = 400
ALL = os.environ.get("WARPSCOPE_COMPARE_ALL") == "1"
FALLBACK = preset("H200")  # the window's GPU, for files that name none (Proton's)


def _every_trace() -> list[tuple[str, object, int, bool]]:
    """(id, file or (bundle, name), blocks, run it?) for every trace in tests/data."""
    out = []
    for path in sorted(DATA.rglob("*")):
        if path.suffix == ".chrome_trace" or (path.suffix == ".json" and path.name != "dispatch_index.json"
                                              and '"warpscope-trace/1"' in path.read_text()[:200]):
            out.append((str(path.relative_to(DATA)), path, 0, True))
    for index in sorted(DATA.rglob("dispatch_index.json")):
        entries = json.loads(index.read_text())["traces"]
        smallest_big = {}
        for e in sorted(entries, key=lambda e: e["count"]):
            if e["count"] > CAP:
                smallest_big.setdefault(e["meta"].get("kernel"), e["name"])
        for e in entries:
            run = ALL or e["count"] <= CAP or e["name"] in smallest_big.values()
            out.append((f"{index.parent.name}/{e['name']}", (index.parent, e["name"]), e["count"], run))
    return out


def _params() -> list:
    """The traces that run: each file and each bundle's smallest trace (of at most CAP blocks) in
    every run, the rest slow."""
    smallest = {}
    for t in TRACES:
        if isinstance(t[1], tuple):
            folder = t[1][0]
            if t[2] <= CAP and (folder not in smallest or t[2] < smallest[folder][2]):
                smallest[folder] = t
    quick = {t[0] for t in smallest.values()}
    return [t if not isinstance(t[1], tuple) or t[0] in quick else pytest.param(*t, marks=pytest.mark.slow)
            for t in TRACES if t[3]]


TRACES = _every_trace()


def test_every_trace_in_tests_data_is_listed():
    """Nothing in tests/data escapes: the H200 trace file, the 9 matmul traces, the Proton
    timeline and every trace of every bundle (as its index lists them); each kernel kind of each
    bundle runs at least once."""
    from sim.traces.trace_bundle import read_index

    names = [t[0] for t in TRACES]
    in_bundles = sum(len(read_index(i)["traces"]) for i in DATA.rglob("dispatch_index.json"))
    assert len(names) == len(set(names)) == 1 + 9 + 1 + in_bundles
    ran = [t for t in TRACES if t[3]]
    assert {"trace_h200.json", "proton/vector_add.chrome_trace"} <= {t[0] for t in ran}
    assert any("E-add" in t[0] for t in ran) and any("cuda" in t[0] for t in ran)


@pytest.fixture(scope="session")
def bundles():
    cache = {}
    return lambda folder: cache.setdefault(folder, load_bundle(folder))


@pytest.mark.parametrize("name,where,blocks,run", _params(), ids=lambda v: v
                         if isinstance(v, str) else "")
def test_the_command_line_and_the_window_give_the_same_comparison(name, where, blocks, run,
                                                                  bundles, tmp_path, capsys):
    if isinstance(where, tuple):  # a bundle's trace: as `python3 -m sim.traces.trace_bundle` extracts it
        path = tmp_path / "t.json"
        write_trace(path, bundles(where[0])[where[1]])
    else:
        path = where
    argv = ["compare", str(path), "--json"] + (["--gpu", "H200"] if path.suffix == ".chrome_trace" else [])
    assert main.main(argv) == 0
    printed = json.loads(capsys.readouterr().out)
    window = compare_job(str(path), FALLBACK)
    shown = json.loads(json.dumps(window.comparison.as_dict()))
    assert shown == printed
    # what the Timeline draws is the schedule that was scored
    assert window.recorded.n_blocks == window.simulated.n_blocks == printed["blocks"]
    sim = window.simulated
    assert sim.end_us.max() - sim.start_us.min() == pytest.approx(printed["simulated_makespan_us"])
    # the window's second schedule is `compare --mode ideal`'s (a matmul has one: its tiles)
    if len(window.predictions) == 2:
        assert main.main(argv + ["--mode", "ideal"]) == 0
        ideal = json.loads(capsys.readouterr().out)
        assert json.loads(json.dumps(window.predictions[1].comparison.as_dict())) == ideal
    else:
        assert printed["model"] == "compute"
    kind = printed["kernel"]
    meta = (bundles(where[0])[where[1]] if isinstance(where, tuple) else None)
    from_file = meta is not None and isinstance(meta.meta.get("kernel_file"), str)
    real = kind in REAL_KERNEL_TRACES or from_file  # `trace --kernel-file` names its file
    expect = "memory" if real else {"tiled": "compute", "persistent": "compute",
                                    "stream_k": "compute"}.get(kind, "uniform")
    assert printed["model"] == expect, (kind, printed["model"])
