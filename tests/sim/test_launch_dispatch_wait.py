"""The memory model's stamps of short blocks: a block that refills a slot waits at the SM's
dispatcher first, with the slot empty, and stamps its start once dispatched. The held-out b256
copy and square at 2^24 (h200_memory_kernels_fit) kept ~7 of 16 slots stamped, 0.58 us blocks;
with the wait inside the stamped block the model gave 0.98 us (~12 resident)."""

import numpy as np

from sim.model.launch_model import Launch, TripCost, predict_launch
from sim.rules.devices import preset
from importlib import import_module

N = 2**24


def copy_b256():
    return Launch(N // 256, 128, 16, 8.0 * N, N, loads=1)


def steady(pred):
    tl = pred.timeline
    later = tl.wave > 0
    return np.median(tl.end_us[later] - tl.start_us[later]), tl


def test_a_dispatcher_bound_block_is_stamped_from_its_dispatch():
    gpu = preset("H200")
    pred = predict_launch(gpu, copy_b256(), "memory", max_waves=None)
    stamped, tl = steady(pred)
    assert 0.45 < stamped < 0.7  # H200: 0.58 us
    t = 0.5 * tl.makespan_us
    resident = np.sum((tl.start_us <= t) & (tl.end_us > t)) / gpu.sm_count
    assert 5.5 < resident < 9.0  # H200: 7.1 of 16


def test_the_wait_keeps_the_makespan_and_the_first_wave():
    gpu = preset("H200")
    pred = predict_launch(gpu, copy_b256(), "memory", max_waves=None)
    tl = pred.timeline
    # the first blocks wait at no dispatcher: they start on the first wave's ramp, in block order
    first = tl.start_us[tl.wave == 0]
    assert first.max() < 0.4 and np.all(np.diff(first[np.argsort(first)]) < 0.01)
    cost = TripCost.for_gpu(gpu, copy_b256())
    # dispatcher-bound: each SM starts one block per dispatch interval, as before the change
    # (compare on h200_memory_kernels_fit copy_n24_b256: makespan -0.6% before, -0.3% after)
    paced = N / 256 / gpu.sm_count * cost.dispatch_ns / 1e3
    assert paced < pred.makespan_us < 1.06 * paced


def test_a_port_bound_block_keeps_its_stamps():
    """add b256 (FIT, port-bound: 3 KB blocks take longer at the port than at the dispatcher)
    stamps 1.15-1.18 us, ~12 of 16 resident on the H200: unchanged."""
    gpu = preset("H200")
    add = Launch(N // 256, 128, 16, 12.0 * N, N, loads=2)
    cost = TripCost.for_gpu(gpu, add)
    dispatch_ns, port_ns = cost._demands(gpu.sm_count)
    assert dispatch_ns <= port_ns
    stamped, _ = steady(predict_launch(gpu, add, "memory", max_waves=None))
    assert 1.0 < stamped < 1.35


def test_the_first_wave_ramp_lengthens_a_one_wave_launch():
    """h200_memory_kernels_fit (FIT) add 2^20 BLOCK_SIZE 1024: the whole first wave started within 0.22 us,
    half by 0.1 us; first_wave_block_ns (0.15 ns a block, fitted on the FIT adds) starts 1,024
    blocks over 0.15 us, and each slot's life that much later."""
    fit = import_module("kernels.fitting.launch_fit")
    gpu = preset("H200")
    add = Launch(1024, 128, 16, 12.0 * 2**20, 2**20, loads=2)
    with fit.constants(first_wave_block_ns=0.0):
        flat = predict_launch(gpu, add, "memory", max_waves=None)
    ramped = predict_launch(gpu, add, "memory", max_waves=None)
    starts = ramped.timeline.start_us
    assert 0.14 < starts.max() < 0.16 and abs(np.median(starts) - 0.077) < 0.01
    assert 0.05 < ramped.makespan_us - flat.makespan_us < 0.16
