"""The Verdicts' headline: the launch's whole time and rate, the same numbers `explain --json`
prints for it, its speed of light and gap, and every other rate labelled with what it is."""

from __future__ import annotations

import math
import re
from types import SimpleNamespace

import pytest

from sim.cli import explain_payload, resolve_launch
from sim.inputs.units import fmt_us
from tests.gui.conftest import drawn

LAUNCHES = [("H200", 1_000_000, 256), ("L40S", 1_000_000, 256), ("T4", 2**24, 128),
            ("A100 80GB", 5_000, 1024)]
LABELS = ("Whole launch", "steady state", "ceiling", "peak")


def _explain(gpu, elements, threads):
    args = SimpleNamespace(gpu=gpu, elements=elements, block=threads, regs=None, smem=None,
                           carveout=None, kernel=None, kernel_file=None)
    return explain_payload(*resolve_launch(args))


@pytest.mark.parametrize("gpu,elements,threads", LAUNCHES)
def test_headline_is_explains_time_and_rate(mount, gpu, elements, threads):
    stage = mount(gpu, elements, threads, views=("verdicts",))
    view = drawn(stage.verdicts_view)
    cli = _explain(gpu, elements, threads)
    card = view.insight.speed_of_light.to_dict()
    # one launch, one time: the window's card is explain's, number for number
    assert card == cli["speed_of_light"]
    assert math.isclose(card["bound_us"] + sum(card["parts"].values()), card["time_us"], rel_tol=1e-9)
    head = view.list.toPlainText().split("\n1.")[0]  # the header, before the first verdict
    lines = head.splitlines()
    assert lines[1] == (f"Whole launch, predicted: {fmt_us(cli['whole_launch_us'])} at "
                        f"{cli['bandwidth_gbps']:,.0f} GB/s")
    assert f"Speed of light {fmt_us(card['bound_us'])}: {card['bound']}" in head
    assert f"at {card['percent']:.0f}% of it" in head
    # every rate in the header says what it is
    for line in lines:
        for _ in re.finditer(r"[\d,]+ (GB/s|TFLOP/s)", line):
            assert any(label in line for label in LABELS), line


def test_a_bench_result_of_this_launch_is_the_measured_time(mount):
    """The measured time is the results file's median for the same GPU, kernel, size and block
    (read here from the raw JSON), and its share of the speed of light is the card's."""
    import json

    from gui.widgets.qt_verdicts import header_html
    from kernels.measure.results import load_results

    path = "tests/data/h200_size_sweep.json"
    with open(path, encoding="utf-8") as f:
        raw = [m for m in json.load(f)["measurements"] if m["kernel"] == "add_numba_naive"
               and m["elements"] == 65536 and m["threads_per_block"] == 256]
    stage = mount("H200", 65536, 256, views=("verdicts",))
    view = drawn(stage.verdicts_view)
    stage.bench.set_result(load_results(path))
    measured = stage.bench.measured_us(view.insight.gpu, "add_numba_naive", 65536, 256)
    assert len(raw) == 1 and measured == raw[0]["median_ms"] * 1e3
    assert stage.bench.measured_us(view.insight.gpu, "add_numba_naive", 65536, 512) is None
    from sim.rules.devices import preset

    assert stage.bench.measured_us(preset("T4"), "add_numba_naive", 65536, 256) is None
    card = view.insight.speed_of_light
    text = re.sub(r"<[^>]+>", "", header_html(view.insight, "launch", None, measured))
    assert (f"Measured: {fmt_us(measured)} (bench results), "
            f"{100 * card.bound_us / measured:.0f}% of the speed of light") in text


def test_the_export_notes_carry_the_card(mount):
    """The export's "Time" notes are the insight's time lines (gui.window_export): the card and
    the labelled rates are among them."""
    view = drawn(mount("H200", 1_000_000, 256, views=("verdicts",)).verdicts_view)
    lines = view.insight.time_lines()
    assert set(view.insight.sol_lines()) <= set(lines)
    assert any(line.startswith("Other rates: steady state") for line in lines)
