"""kernels/cli.py: argument parsing, exit codes, files written (or not) — without a GPU."""

import argparse
import json
import re

import pytest
from kernels_env import HAS_GPU

from kernels import cli
from sim.inputs.errors import UserError
from sim.inputs.units import parse_count_list


def _parse(*argv):
    parser = argparse.ArgumentParser(prog="warpscope")
    cli.register(parser.add_subparsers(dest="command", required=True))
    return parser.parse_args(argv)


@pytest.mark.parametrize("text,value", [("1048576", 1 << 20), ("2^20", 1 << 20), ("2**26", 1 << 26),
                                        ("1e6", 1_000_000), ("1_048_583", 1_048_583)])
def test_parse_size(text, value):
    assert parse_count_list(text) == [value]


@pytest.mark.parametrize("text", ["abc", "1.5", "2^"])
def test_parse_size_rejects(text):
    with pytest.raises(UserError):
        parse_count_list(text)


def _summary(out: str) -> tuple[int, int, int]:
    """(OK, FAIL, SKIP) from the last line, "N OK, N FAIL, N SKIP"."""
    match = re.fullmatch(r"(\d+) OK, (\d+) FAIL, (\d+) SKIP", out.splitlines()[-1])
    assert match, out.splitlines()[-1]
    return tuple(int(g) for g in match.groups())


def test_check_prints_table_and_exit_status(capsys):
    args = _parse("check", "--kernel", "add_triton,lanes_numba,trace_triton", "--sizes", "1,1000")
    assert args.handler(args) == 0
    out = capsys.readouterr().out
    ok, failed, skipped = _summary(out)
    # add_triton at 2 sizes and lanes_numba at its block sizes pass; trace_triton needs a GPU
    assert failed == 0 and ok >= 3 and skipped == (0 if HAS_GPU else 1)
    assert re.search(r"^add_triton +triton +1,000 +OK ", out, re.M)


def test_check_fails_when_a_kernel_is_wrong(capsys, monkeypatch):
    """A kernel that disagrees with its reference must make `check` fail (exit status 1)."""
    import dataclasses

    from kernels.bodies import reference

    from kernels.declare import registry

    spec = registry.get_kernel("add_torch")
    wrong = dataclasses.replace(spec, reference=lambda x, y: reference.add(x, y) + 1e-3)
    monkeypatch.setitem(registry._BY_NAME, "add_torch", wrong)
    args = _parse("check", "--kernel", "add_torch", "--sizes", "10")
    assert args.handler(args) == 1
    assert _summary(capsys.readouterr().out) == (0, 1, 0)


@pytest.mark.skipif(HAS_GPU, reason="checks the no-GPU path")
def test_bench_without_gpu_is_one_clear_error_and_writes_nothing(tmp_path):
    out = tmp_path / "b.json"
    args = _parse("bench", "--kernel", "add_triton", "--sizes", "2^10", "--out", str(out))
    with pytest.raises(UserError, match="no GPU"):
        args.handler(args)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.skipif(HAS_GPU, reason="checks the no-GPU path")
def test_bench_cpu_writes_labelled_json(tmp_path, capsys):
    out = tmp_path / "b.json"
    args = _parse("bench", "--kernel", "add_torch,add_triton", "--sizes", "2^10", "--reps", "2",
                  "--cpu", "--out", str(out))
    assert args.handler(args) == 0
    data = json.loads(out.read_text())
    assert data["format"] == "warpscope-bench/1" and len(data["measurements"]) == 2
    assert all(m["is_gpu_timing"] is False for m in data["measurements"])
    assert "NO" in capsys.readouterr().out  # the GPU? column says these are not GPU timings


def test_bench_rejects_bad_extension_before_measuring(tmp_path):
    args = _parse("bench", "--kernel", "add_torch", "--out", str(tmp_path / "b.txt"))
    with pytest.raises(UserError, match=".json or .csv"):
        args.handler(args)


@pytest.mark.skipif(HAS_GPU, reason="checks the no-GPU path")
def test_trace_without_gpu(tmp_path):
    args = _parse("trace", "--grid", "10", "--out", str(tmp_path / "t.json"))
    with pytest.raises(UserError, match="needs a GPU"):
        args.handler(args)
    assert list(tmp_path.iterdir()) == []


def test_help_explains_every_option(capsys):
    for command in ("check", "bench", "trace"):
        with pytest.raises(SystemExit):
            _parse(command, "--help")
        text = capsys.readouterr().out
        assert "--out" in text or command == "check"
    assert "L2" in _help("bench")


def _help(command):
    parser = argparse.ArgumentParser(prog="warpscope")
    sub = parser.add_subparsers(dest="command")
    cli.register(sub)
    return sub.choices[command].format_help()


def test_bench_refuses_an_unwritable_path_before_measuring(capsys, monkeypatch):
    from kernels.measure import bench

    monkeypatch.setattr(bench, "sweep", lambda *a, **k: pytest.fail("measured before checking --out"))
    args = _parse("bench", "--kernel", "add_triton", "--sizes", "1000", "--cpu", "--out", "/proc/no/x.json")
    with pytest.raises(UserError, match="does not exist"):
        args.handler(args)
