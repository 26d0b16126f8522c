"""The launch model without a window: inputs, the kernel's own grid, text read like the CLI."""

from __future__ import annotations

import math
from dataclasses import dataclass

import pytest

from gui.models.launch import (CUSTOM_KERNEL, LaunchInputs, LaunchModel, compute_state,
                               parse_field)
from sim.rules.devices import preset
from sim.inputs.errors import UserError
from tests.models.fakes import Recorder


def test_article_example_numbers():
    g = compute_state(LaunchInputs(gpu="L40S", elements=1_000_000, threads_per_block=256),
                      preset("L40S")).geometry
    assert (g.blocks, g.warps_in_grid, g.idle_threads_last_block) == (3907, 31256, 192)
    assert (g.warp_slots_per_sm, g.warp_slots_on_gpu) == (48, 6816)
    assert round(g.waves_at_best, 1) == 4.6


def test_rejects_nonsense_without_losing_state():
    model = LaunchModel(LaunchInputs(gpu="H200"))
    rejected, changed = Recorder(model.rejected), Recorder(model.changed)
    before = model.state
    assert not model.update(elements=0)
    assert not model.update(gpu="GTX 9999")
    assert not model.update(threads_per_block=-3)
    assert not model.update(regs_per_thread=2**40)
    assert model.state == before and not changed.calls
    assert "elements" in rejected.calls[0][0] and "GTX 9999" in rejected.calls[1][0]
    assert model.update(threads_per_block=512)
    assert changed.calls[-1][0].inputs.threads_per_block == 512
    assert model.update(threads_per_block=512) and len(changed.calls) == 1  # no change, no signal


@pytest.mark.parametrize("name,text,value", [
    ("elements", "4M", 4_000_000), ("elements", "2^20", 2**20), ("elements", "1,234,567", 1_234_567),
    ("threads_per_block", "512", 512), ("smem_per_block", "48K", 48 * 1024),
    ("smem_per_block", "48KiB", 48 * 1024), ("smem_per_block", "12345", 12345),
    ("regs_per_thread", "64", 64),
])
def test_boxes_read_what_the_command_line_reads(name, text, value):
    assert parse_field(name, text) == value
    model = LaunchModel(LaunchInputs(gpu="H200"))
    assert model.update_text(name, text) and getattr(model.inputs, name) == value


def test_text_that_is_no_number_is_a_message():
    model = LaunchModel()
    rejected = Recorder(model.rejected)
    with pytest.raises(UserError):
        parse_field("elements", "lots")
    assert not model.update_text("smem_per_block", "48 apples")
    assert "is not a number (try 49152, 48K" in rejected.calls[0][0] and model.inputs.smem_per_block == 0


def test_old_saved_inputs_still_load():
    old = {"gpu": "T4", "kernel": "add_triton", "elements": "4096", "threads_per_block": 128,
           "elements_per_thread": 8, "carveout_percent": None, "mystery": 1}
    i = LaunchInputs.from_dict(old)
    assert (i.gpu, i.elements, i.threads_per_block, i.block_size) == ("T4", 4096, 128, 1024)
    assert LaunchInputs.from_dict(i.to_dict()) == i
    assert LaunchInputs.from_dict({"elements": "many"}).elements == LaunchInputs().elements


@dataclass(frozen=True)
class _Shape:
    grid_blocks: int
    threads_per_block: int
    elements_per_block: int | None


@dataclass(frozen=True)
class FakeKernel:
    """A spec that owns its grid rule, like kernels.declare.spec.KernelSpec."""
    name: str
    backend: str
    block_param: str
    default_block: int
    tile: int = 1  # elements per thread
    fixed_grid: int | None = None
    default_num_warps: int | None = None
    description: str = ""
    launchable: bool = True

    def bytes_moved(self, n):
        return 12 * n

    def size_dims(self, n, dims=None):
        return dict(dims) if dims else {"n": n}

    @property
    def block(self):
        warps = {"num_warps": self.default_num_warps} if self.backend == "triton" else {}
        return {self.block_param: self.default_block, **warps} if self.block_param else warps

    def block_params(self, given):
        return {**self.block, **given}

    def launch_shape(self, n, block, sm_count):
        if self.backend == "triton":
            threads, per_block = 32 * block["num_warps"], block["BLOCK_SIZE"]
        else:
            threads = block["threads"]
            per_block = None if self.fixed_grid else self.tile * threads
        grid = self.fixed_grid * sm_count if self.fixed_grid else -(-n // per_block)
        return _Shape(min(grid, -(-n // threads)), threads, per_block)


def test_the_grid_comes_from_the_kernels_rule():
    """add_numba's 4 elements per thread: 977 blocks at 1,000,000 elements, not 3,907."""
    four = FakeKernel("add_numba", "numba", "threads", 256, tile=4)
    stride = FakeKernel("add_numba_gridstride", "numba", "threads", 256, fixed_grid=8)
    tri = FakeKernel("add_triton", "triton", "BLOCK_SIZE", 1024, default_num_warps=4)
    torch = FakeKernel("add_torch", "torch", None, 128, launchable=False)
    model = LaunchModel(LaunchInputs(gpu="H200"))
    model.set_kernels([four, stride, tri, torch])
    assert [k.name for k in model.kernels()] == ["add_numba", "add_numba_gridstride", "add_triton"]
    assert model.select_kernel("add_numba")
    g = model.state.geometry
    assert g.blocks == 977 and g.elements_per_thread == 4 and g.elements_per_block == 1024
    assert g.idle_threads_last_block == 977 * 1024 - 1_000_000 and g.threads_with_data_in_last_block == 144
    assert model.select_kernel("add_numba_gridstride")
    g = model.state.geometry
    assert g.blocks == 8 * 132 and g.idle_threads_last_block == 0  # every thread loops
    assert model.select_kernel("add_triton")
    assert (model.inputs.threads_per_block, model.inputs.block_size) == (128, 1024)
    assert model.state.geometry.blocks == math.ceil(1_000_000 / 1024)
    assert model.update(block_size=4096) and model.state.geometry.blocks == math.ceil(1_000_000 / 4096)
    assert model.select_kernel(CUSTOM_KERNEL)
    assert model.inputs.block_size is None and model.state.geometry.blocks == math.ceil(1_000_000 / 128)


def test_a_kernel_that_leaves_the_table_falls_back_to_custom():
    four = FakeKernel("add_numba", "numba", "threads", 256, tile=4)
    model = LaunchModel(LaunchInputs(gpu="H200"))
    model.set_kernels([four])
    model.select_kernel("add_numba")
    model.set_kernels([])
    assert model.inputs.kernel == CUSTOM_KERNEL and model.state.geometry.blocks == 3907


def test_measured_resources_apply_to_their_kernel():
    four = FakeKernel("add_numba", "numba", "threads", 256, tile=4)
    model = LaunchModel(LaunchInputs(gpu="H200"))
    model.set_kernels([four])
    model.set_measured_resources({"add_numba": (40, 1024)})
    assert model.inputs.regs_per_thread == 0  # not selected yet
    model.select_kernel("add_numba")
    assert (model.inputs.regs_per_thread, model.inputs.smem_per_block) == (40, 1024)


def test_detected_device_is_listed_first():
    from dataclasses import replace

    model = LaunchModel()
    specs = Recorder(model.specs_changed)
    label = model.add_detected_spec(replace(preset("H200"), detected=True))
    assert label == "H200 (this machine)" and model.gpu_names()[0] == label and specs.calls
    assert model.update(gpu=label) and model.state.spec.detected


def test_occupancy_curves_are_sims_sweeps_around_the_launch():
    from sim.rules.occupancy import occupancy

    model = LaunchModel(LaunchInputs(gpu="H200", threads_per_block=128, regs_per_thread=40))
    curves = model.curves
    xs, ys = curves.threads
    i = list(xs).index(128)
    assert ys[i] == model.state.occ.active_warps_per_sm
    rx, ry = curves.registers
    assert ry[64] == occupancy(preset("H200"), 128, 64).active_warps_per_sm
    assert model.curves is curves  # worked out once per launch
    model.update(threads_per_block=256)
    assert model.curves is not curves
