"""Issue 17's failures as classes: every reader behind the one boundary (sim/inputs/files.py), trace
bundles, dispatch profiles, caps on typed counts, a closed stdout. Each reader is called directly
(fast); a real process only where the process itself is the point (a closed fd 1).

The contract: a damaged file is one UserError line (or, for a profile, one "ignored:" line and
the preset's data), within a time limit, never a traceback, a hang or gigabytes."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given

from kernels.measure.results import load_results
from sim.schedule import dispatch_profile
from sim.schedule.dispatch_profile import DispatchProfile, builtin_profile, load_profile, profile_for
from sim.inputs.errors import UserError, printable
from sim.traces.latency_data import CHECKED_IN, load_latency_run
from sim.traces.trace import Trace, load_trace
from sim.traces.trace_bundle import ARRAYS_NAME, INDEX_NAME, load_bundle, read_index, write_bundle
from sim.traces.waves import load_matmul_run, parse_sweep

from tests.hostile.helpers import assert_contract, fuzz, mutations, run_cli, time_limit

ROOT = Path(__file__).resolve().parents[2]
TRACE = ROOT / "tests" / "data" / "trace_h200.json"
CLOSED = "warpscope: error: standard output is closed (writing the output)\n"
LATENCY = json.loads(CHECKED_IN.read_text())
for key, keep in (("methods", 6),):
    LATENCY[key] = LATENCY[key][:keep]
LATENCY["occupancy"]["rows"] = [r for r in LATENCY["occupancy"]["rows"]
                                if r.get("target_blocks_per_sm") is not None][:4]
MATMUL = json.loads((ROOT / "resources" / "measured" / "H200_matmul_sawtooth.json").read_text())
MATMUL = {k: MATMUL[k] for k in ("format", "gpu_spec", "created", "method")} | {
    "steps": {"sawtooth": {**MATMUL["steps"]["sawtooth"],
                           "points": MATMUL["steps"]["sawtooth"]["points"][:3]}}}
# a user profile as `calibrate` wrote it before the per-GPU files (still read; field names as in the
# dispatch section of resources/physics/H200.json)
PROFILE = {"format": dispatch_profile.LEGACY_FORMAT, **builtin_profile().to_json()}


def _one_line(exc: UserError) -> str:
    text = str(exc)
    assert text and "\n" not in text and "Traceback" not in text, text
    return text


# -- files that are not files, for every reader ---------------------------------------------------
def _fifo(p: Path) -> Path:
    os.mkfifo(p)
    return p


def _zero_link(p: Path) -> Path:
    p.symlink_to("/dev/zero")
    return p


def _folder(p: Path) -> Path:
    p.mkdir()
    return p


def _sparse(p: Path) -> Path:
    with open(p, "wb") as fh:
        fh.truncate(2**31)  # 2 GB, no disk used
    return p


def _deep(p: Path) -> Path:
    p.write_text("[" * 100_000 + "]" * 100_000)
    return p


def _not_utf8(p: Path) -> Path:
    p.write_bytes(b'{"format": "\xff\xfe"}')
    return p


def _latency_dir(p: Path) -> Path:
    return p


READERS = {
    "latency run": load_latency_run,
    "matmul run": load_matmul_run,
    "waves tab": lambda p: __import__("gui.models.waves", fromlist=["x"]).read_measured(p),
    "trace": load_trace,
    "results": load_results,
    "dispatch profile": load_profile,
    "bundle index": read_index,
}
HOSTILE = {"fifo": _fifo, "/dev/zero": _zero_link, "folder": _folder, "2 GB": _sparse,
           "deep": _deep, "not UTF-8": _not_utf8, "missing": lambda p: p}


class TestEveryReader:
    @pytest.mark.parametrize("reader", READERS)
    @pytest.mark.parametrize("kind", HOSTILE)
    def test_a_hostile_file_is_one_line_at_once(self, tmp_path, reader, kind):
        path = HOSTILE[kind](tmp_path / "in.json")
        with time_limit(5), pytest.raises(UserError) as err:
            READERS[reader](str(path))
        _one_line(err.value)

    @fuzz(40)
    @given(case=mutations(LATENCY))
    def test_mutated_latency_runs(self, tmp_path_factory, case):
        path = tmp_path_factory.mktemp("l") / "l.json"
        path.write_text(case[0])
        with time_limit(5):
            try:
                run = load_latency_run(path)
            except UserError as exc:
                _one_line(exc)
                return
        assert all(r.blocks_per_sm >= 1 and r.gbps > 0 for r in run.occupancy)
        assert all(isinstance(m.label, str) for m in run.methods)

    @fuzz(40)
    @given(case=mutations(MATMUL))
    def test_mutated_matmul_runs(self, tmp_path_factory, case):
        path = tmp_path_factory.mktemp("m") / "m.json"
        path.write_text(case[0])
        with time_limit(5):
            try:
                sweep = load_matmul_run(path)
            except UserError as exc:
                _one_line(exc)
                return
        for points in sweep.points.values():
            assert all(p.median_ms > 0 and min(p.dims.values()) >= 1 for p in points)
            [p.tflops() for p in points]

    def test_the_checked_in_files_still_read(self):
        assert load_latency_run().methods
        assert load_matmul_run(str(ROOT / "resources" / "measured" / "H200_matmul_sawtooth.json")).points
        assert load_bundle(ROOT / "tests" / "data" / "h200_spin_heldout")


# -- trace bundles --------------------------------------------------------------------------------
def _bundle(folder: Path) -> Path:
    t = Trace(source="recorded", gpu="H200", block=np.arange(4), sm=np.array([0, 1, 0, 1]),
              slot=np.full(4, -1), start_us=np.zeros(4), end_us=np.full(4, 2.0),
              meta={"sm_count": 132})
    write_bundle(folder, [("a", "f", t, {"makespan_us": 2.0}), ("b", "f", t, {})])
    return folder


def _set(folder: Path, change) -> None:
    index = json.loads((folder / INDEX_NAME).read_text())
    change(index)
    (folder / INDEX_NAME).write_text(json.dumps(index))


def _npz(folder: Path, **arrays) -> None:
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    (folder / ARRAYS_NAME).write_bytes(buf.getvalue())


GOOD = {"block": np.arange(8, dtype=np.int32), "sm": np.zeros(8, np.int16),
        "start_us": np.zeros(8, np.float32), "end_us": np.ones(8, np.float32)}


def _traces(v):
    return lambda ix: ix.__setitem__("traces", v)


def _entry(**kw):
    return lambda ix: ix["traces"][0].update(kw)


def _drop(key):
    return lambda ix: ix["traces"][0].pop(key)


class TestBundles:
    @pytest.mark.parametrize("change, words", [
        (_traces(None), "field 'traces'"),
        (_traces({"a": 1}), "field 'traces'"),
        (_traces([1]), "field 'traces' must be a list"),
        (_drop("count"), "field 'count' is missing"),
        (_entry(count="12"), "field 'count' must be a whole number"),
        (_entry(count=-1), "field 'count'"),
        (_entry(offset=2**70), "field 'offset'"),
        (_entry(name=None), "field 'name'"),
        (_entry(name="b"), "used twice"),
        (_entry(name="x\x1b[2J"), "field 'name'"),
        (_entry(meta=[1]), "field 'meta'"),
        (_entry(summary={"makespan_us": "abc"}), None),  # a damaged summary entry is dropped
        (lambda ix: ix.__setitem__("arrays", "../../etc/passwd"), "beside the index"),
        (lambda ix: ix.__setitem__("arrays", None), "field 'arrays'"),
        (lambda ix: ix.__setitem__("failed", [{"name": 5}]), "field 'name'"),
        (lambda ix: ix.__setitem__("format", ["x"]), "not a WarpScope trace bundle"),
    ])
    def test_damaged_index(self, tmp_path, change, words):
        _set(_bundle(tmp_path), change)
        if words is None:
            assert load_bundle(tmp_path)["a"].meta == {"sm_count": 132}
            return
        with time_limit(5), pytest.raises(UserError) as err:
            load_bundle(tmp_path)
        assert words in _one_line(err.value)

    def test_the_listing_prints_damaged_entries_as_one_line(self, tmp_path, capsys):
        from sim.traces.trace_bundle import main as bundle_main

        _set(_bundle(tmp_path), _entry(summary={"makespan_us": "x"}))
        assert bundle_main([str(tmp_path)]) == 0
        _set(tmp_path, _traces(None))
        assert bundle_main([str(tmp_path)]) == 2
        assert capsys.readouterr().err.count("\n") == 1

    @pytest.mark.parametrize("make, words", [
        (lambda f: (f / ARRAYS_NAME).write_bytes(b"not a zip at all"), "not a .npz archive"),
        (lambda f: (f / ARRAYS_NAME).unlink() or _fifo(f / ARRAYS_NAME), "pipe, device"),
        (lambda f: (f / ARRAYS_NAME).unlink() or _zero_link(f / ARRAYS_NAME), "pipe, device"),
        (lambda f: _npz(f, **{**GOOD, "sm": np.zeros((4, 2), np.int16)}), "must be 1-D"),
        (lambda f: _npz(f, **{**GOOD, "block": np.array(["a"] * 8)}), "must be 1-D int32"),
        (lambda f: _npz(f, **{**GOOD, "start_us": np.array([object()] * 8)}), "Python objects"),
        (lambda f: _npz(f, **{k: v for k, v in GOOD.items() if k != "sm"}), "'sm' is missing"),
        (lambda f: _npz(f, **{**GOOD, "end_us": np.full(8, np.nan, np.float32)}), "NaN"),
        (lambda f: _npz(f, **{**GOOD, "sm": np.full(8, 2**40)}), "outside the range of int16"),
        (lambda f: _npz(f, **{**GOOD, "sm": np.zeros(3, np.int16)}), "differ in length"),
        (lambda f: _huge_header(f), "shorter than its header says"),
        (lambda f: _zip_bomb(f), "unpacked"),
    ])
    def test_damaged_arrays(self, tmp_path, make, words):
        _bundle(tmp_path)
        make(tmp_path)
        with time_limit(5), pytest.raises(UserError) as err:
            load_bundle(tmp_path)
        assert words in _one_line(err.value)

    def test_a_fifo_as_the_index(self, tmp_path):
        _fifo(tmp_path / INDEX_NAME)
        with time_limit(5), pytest.raises(UserError, match="pipe, device"):
            load_bundle(tmp_path)

    @fuzz(30)
    @given(case=mutations(json.loads(json.dumps({
        "format": "warpscope-trace-bundle/1", "arrays": ARRAYS_NAME, "info": {},
        "traces": [{"name": "a", "family": "f", "source": "recorded", "gpu": "H200", "offset": 0,
                    "count": 4, "meta": {"sm_count": 132}, "summary": {"makespan_us": 2.0}}],
        "failed": [{"name": "c", "family": "f", "error": "boom"}]}))))
    def test_mutated_indexes(self, tmp_path_factory, case):
        folder = _bundle(tmp_path_factory.mktemp("b"))
        (folder / INDEX_NAME).write_text(case[0])
        with time_limit(5):
            try:
                traces = load_bundle(folder)
            except UserError as exc:
                _one_line(exc)
                return
        for t in traces.values():
            assert isinstance(t.gpu, str) and isinstance(t.meta, dict) and len(t.block) >= 1


def _huge_header(folder: Path) -> None:
    """An .npy whose header claims 2^22 rows but holds 8: numpy would allocate them first."""
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, {"descr": "<i4", "fortran_order": False,
                                               "shape": (2**22,)})
    buf.write(np.arange(8, dtype="<i4").tobytes())
    arrays = {k: v for k, v in GOOD.items() if k != "block"}
    _npz(folder, **arrays)
    with zipfile.ZipFile(folder / ARRAYS_NAME, "a") as z:
        z.writestr("block.npy", buf.getvalue())


def _zip_bomb(folder: Path) -> None:
    """A member that inflates past the row cap (72 MB) from a few dozen KB."""
    with zipfile.ZipFile(folder / ARRAYS_NAME, "w", zipfile.ZIP_DEFLATED) as z:
        for name, v in GOOD.items():
            if name != "block":
                buf = io.BytesIO()
                np.save(buf, v)
                z.writestr(f"{name}.npy", buf.getvalue())
        with z.open("block.npy", "w", force_zip64=True) as fh:
            np.lib.format.write_array_header_1_0(fh, {"descr": "<i4", "fortran_order": False,
                                                      "shape": (18 * 2**20,)})
            chunk = bytes(2**20)
            for _ in range(72):
                fh.write(chunk)


# -- dispatch profiles in the config folder -------------------------------------------------------
class TestProfiles:
    @pytest.fixture
    def config(self, tmp_path, monkeypatch):
        monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
        folder = tmp_path / "warpscope" / "dispatch"
        folder.mkdir(parents=True)
        dispatch_profile._IGNORED.clear()
        return folder / "H200.json"

    @pytest.mark.parametrize("damage, words", [
        (lambda p: _deep(p), "nested 100,000 levels deep"),
        (lambda p: _fifo(p), "pipe, device"),
        (lambda p: p.write_text("{"), "not valid JSON"),
        (lambda p: p.write_text(json.dumps({**PROFILE, "params": {}})), "params.burst_warps"),
        (lambda p: p.write_text(json.dumps({**PROFILE, "gpu": 5})), "field 'gpu'"),
        (lambda p: p.write_text(json.dumps({**PROFILE, "params": {
            **PROFILE["params"], "trickle": {"1": [10**400, 1]}}})), "params.trickle"),
        (lambda p: _folder(p), "is a folder"),
    ])
    def test_a_damaged_profile_is_named_once_and_the_preset_used(self, config, capsys, damage,
                                                                 words):
        damage(config)
        with time_limit(5):
            first, again = profile_for("NVIDIA H200"), profile_for("H200")
        assert first == again == builtin_profile()
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.startswith(f"warpscope: ignored: {config}: "), err
        assert words in err

    def test_simulate_and_compare_go_on(self, config):
        _deep(config)
        for argv in (["simulate", "--gpu", "H200", "--elements", "2^16", "--json"],
                     ["compare", str(TRACE), "--json"]):
            dispatch_profile._IGNORED.clear()  # each command is its own process in real life
            code, out, err = run_cli(argv)
            assert code == 0 and json.loads(out), err
            assert "ignored:" in err and "Traceback" not in err

    def test_control_characters_in_a_profile_are_escaped(self, config, capsys):
        config.write_text(json.dumps({**PROFILE, "gpu": "H200\x1b[2J\u202e", "source": "a\nb"}))
        found = profile_for("H200")
        assert found.gpu == "H200\\x1b[2J\\u202e" and found.source == "a\\nb"
        assert "\x1b" not in found.label and not capsys.readouterr().err

    def test_the_profile_round_trips(self, config):
        config.write_text(json.dumps(PROFILE))
        assert profile_for("H200") == DispatchProfile.from_json(PROFILE)


def test_printable_escapes_every_control_character():
    for ch in ["\x00", "\x1b", "\n", "\r", "\x7f", "\x9b", "\u2028", "\u202e", "\u2066"]:
        assert ch not in printable(f"a{ch}b") and printable(f"a{ch}b").startswith("a\\")
    assert printable("H200 ünïcode ✓") == "H200 ünïcode ✓"
    assert str(UserError("bad \x1b[31mname")) == "bad \\x1b[31mname"


# -- caps on typed counts -------------------------------------------------------------------------
class TestCaps:
    @pytest.mark.parametrize("sweep", [
        "M=1024,K=8192,N=1..2^30x1",  # passed 3 GB in 7 s
        "M=1024,K=8192,N=1..2^20x1",
        "M=1..2^62,K=1,N=1", "M=-5,K=1,N=1", "M=1024,K=8192,N=2^40", "M=1,K=1,N=1..10x0",
    ])
    def test_waves_sweeps(self, sweep):
        with time_limit(2), pytest.raises(UserError) as err:
            parse_sweep(sweep)
        _one_line(err.value)

    @pytest.mark.parametrize("argv, words", [
        (["simulate", "--seed", "-1", "--cost", "uniform", "--jitter", "0.2"], "at least 0"),
        (["simulate", "--seed", "2^64"], "far too large"),
        (["compare", str(TRACE), "--seed", "-3"], "at least 0"),
        (["bench", "--waves-sweep", "M=1024,K=8192,N=1..2^30x1"], "must be 1..1,048,576"),
        (["bench", "--kernel", "add", "--block", "2^40", "--out", "r.json"], "far too large"),
        (["trace", "--waves", "1e9", "--out", "t.json"], "--waves"),
        (["trace", "--waves", "-1", "--out", "t.json"], "--waves"),
        (["trace", "--hold-regs", "-1", "--out", "t.json"], "--hold-regs"),
        (["trace", "--kernel", "add", "--block", "-5", "--out", "t.json"], "--block"),
        (["explain", "--kernel", "add_triton", "--warps", "-2"], "--warps"),
        (["bench", "--kernel", "add", "--reps", "10^9", "--out", "r.json"], "--reps"),
    ])
    def test_negative_and_huge_counts(self, tmp_path, monkeypatch, argv, words):
        monkeypatch.chdir(tmp_path)
        code, _, err = run_cli(argv, seconds=10)
        assert_contract(code, err, argv)
        assert code == 2 and words in err, err
        assert not list(tmp_path.iterdir())


# -- a closed stdout ------------------------------------------------------------------------------
class TestClosedStdout:
    @pytest.mark.parametrize("argv", [["explain"], ["simulate", "--elements", "2^12"], ["--help"],
                                      ["compare", str(TRACE)]])
    def test_in_process(self, monkeypatch, argv):
        import main

        monkeypatch.setattr(sys, "stdout", None)  # what Python makes of a closed fd 1
        err = io.StringIO()
        monkeypatch.setattr(sys, "stderr", err)
        code = main.main(argv)
        assert code == 1 and err.getvalue() == CLOSED  # a runtime failure: nowhere to write

    def test_a_real_process_with_fd_1_closed(self):
        done = subprocess.run([sys.executable, str(ROOT / "main.py"), "explain"], cwd=ROOT,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                              preexec_fn=lambda: os.close(1), timeout=60)
        assert done.returncode == 1
        assert done.stderr == CLOSED
