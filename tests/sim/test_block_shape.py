"""2D/3D blocks: warps checked against a brute-force enumeration of a block's threads, x fastest
(the order the CUDA Programming Guide gives: id = x + y·Dx + z·Dx·Dy), and the input errors."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from sim.cli import resolve_launch
from sim.inputs.args import parse_dims
from sim.inputs.errors import UserError
from sim.rules.block_shape import Dims, block_of, warp_folds
from sim.rules.devices import preset
from sim.rules.geometry import geometry_facts, launch_geometry

SHAPES = [(256, 1, 1), (16, 16, 1), (32, 8, 2), (24, 24, 1), (24, 20, 1), (20, 20, 1), (7, 5, 3),
          (1, 1, 64), (1024, 1, 1), (3, 1, 1), (8, 4, 32)]


def brute_warps(dims):
    """Each warp's threads as (x, y, z), in launch order: loop z, then y, then x (x innermost)."""
    dx, dy, dz = dims
    order = [(x, y, z) for z in range(dz) for y in range(dy) for x in range(dx)]
    return [order[i:i + 32] for i in range(0, len(order), 32)]


@pytest.mark.parametrize("dims", SHAPES)
def test_folds_match_enumeration(dims):
    warps = brute_warps(dims)
    folds = warp_folds(Dims(*dims))
    assert len(folds) == len(warps)
    for fold, threads in zip(folds, warps):
        assert fold.first == threads[0] and fold.last == threads[-1]
        assert fold.active == len(threads) and fold.idle == 32 - len(threads)
        assert fold.rows == len({(y, z) for _, y, z in threads})


@pytest.mark.parametrize("dims", SHAPES)
def test_linear_id_formula_in_float64(dims):
    """The id formula the panel prints (x + y·Dx + z·Dx·Dy), evaluated in float64 over the block's
    index grid, numbers the threads exactly as the enumeration does."""
    dx, dy, dz = dims
    z, y, x = np.indices((dz, dy, dx), dtype=np.float64)
    ids = (x + y * dx + z * dx * dy).ravel()
    assert np.array_equal(ids, np.arange(dx * dy * dz, dtype=np.float64))


@pytest.mark.parametrize("dims, warps, idle", [((24, 24, 1), 18, 0), ((24, 20, 1), 15, 0),
                                               ((20, 20, 1), 13, 16), ((16, 16, 1), 8, 0),
                                               ((32, 8, 2), 16, 0)])
def test_geometry_of_2d_blocks(dims, warps, idle):
    gpu = preset("H200")
    n = int(np.prod(dims))
    geo = launch_geometry(gpu, 10 * n, n, block_dims=dims)
    assert (geo.warps_per_block, geo.idle_lanes_per_block) == (warps, idle)
    assert len(brute_warps(dims)) == warps and 32 - len(brute_warps(dims)[-1]) == (idle or 0)
    shape = {f.key: f for f in geometry_facts(gpu, geo)}["shape"]
    assert shape.value == "×".join(str(d) for d in dims if d > 1 or dims.index(d) == 0)


@pytest.mark.parametrize("text, dims", [("256", (256, 1, 1)), ("16x16", (16, 16, 1)),
                                        ("32x8x2", (32, 8, 2)), ("24×24", (24, 24, 1))])
def test_parse_dims(text, dims):
    assert parse_dims(text).tuple == dims


@pytest.mark.parametrize("text, words", [("0x4", "at least 1"), ("16x16x16x2", "4 dimensions"),
                                         ("64x32", "over the limit of 1,024"),
                                         ("1x1x65", "z is at most 64"), ("2000x1", "x is at most 1,024"),
                                         ("16xabc", "not a number")])
def test_bad_blocks_are_one_line(text, words):
    with pytest.raises(UserError) as exc:
        parse_dims(text)
    assert words in str(exc.value) and "\n" not in str(exc.value)


def test_block_of_refuses_a_shape_that_does_not_divide():
    assert block_of(480, 20).tuple == (24, 20, 1)
    with pytest.raises(ValueError, match="multiple of y"):
        block_of(250, 16)


def _args(**kw):
    import argparse

    from sim.cli import add_launch_arguments

    parser = argparse.ArgumentParser()
    add_launch_arguments(parser)
    argv = list(itertools.chain.from_iterable((f"--{k}", str(v)) for k, v in kw.items()))
    return parser.parse_args(argv)


def test_cli_block_and_grid():
    gpu, occ, geo, _ = resolve_launch(_args(block="24x20", grid="8x4"))
    assert geo.block_dims == (24, 20, 1) and geo.grid_dims == (8, 4, 1)
    assert geo.blocks == 32 and geo.elements == 32 * 480 and occ.threads_per_block == 480
    gpu, occ, geo, _ = resolve_launch(_args(block="256"))
    assert geo.block_dims == (256, 1, 1) and geo.grid_dims is None


def test_cli_grid_too_small_for_elements():
    with pytest.raises(UserError, match="fewer than"):
        resolve_launch(_args(block="16x16", grid="2x2", elements="1e6"))
