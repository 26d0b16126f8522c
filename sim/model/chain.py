"""What a kernel's declared chain tells the memory-bound model besides its passes and reductions.

A declaration's `chain` (kernels/declare/spec.py `chain_of`) may say two more launch facts:
- `tile`: the block parameter whose value is the elements one step of a sweep covers. A block
  whose share is longer than its tile walks it in ceil(share / tile) dependent steps per sweep
  (tutorial 05's layernorm: a row of 4,096 in tiles of BLOCK_SIZE 1,024 is 4 steps, three
  sweeps): each step is one round trip (sim.model.launch_model.Launch.loop_trips), the first
  sweep's to the DRAM, the later sweeps' to the L2 (`chain_ns`).
- `loads`: the global loads a thread issues per element (the compiled kernel's), where it is not
  the input-array count (a stencil reads its one array at five places): each past the first adds
  `trip_load_ns` to a trip (sim.model.latency.TripCosts).
`declared_chain` turns a chain into `Launch` fields; `resolved_chain` puts the tile's step count
(`trips`) into a trace's chain, from the trace's own block parameters and grid.
"""

from __future__ import annotations

import math


def _whole(value) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def declared_chain(declaration) -> dict:
    """The `Launch` fields for the chain a kernel declares (a kernels/declare/spec.py KernelSpec's
    passes and reductions, or its `chain` dict as a trace's meta keeps it, with `loads` where it
    says them); one sweep and no reduction for a kernel that declares none. A chain's `trips`
    (`resolved_chain`) are the caller's: they set the launch's loop trips."""
    def get(key):
        return _whole(declaration.get(key) if isinstance(declaration, dict) else
                      getattr(declaration, key, None))
    fields = {"passes": max(1, get("passes") or 1), "reductions": max(0, get("reductions") or 0)}
    if (get("loads") or 0) >= 1:
        fields["loads"] = get("loads")
    return fields


def tile_steps(chain: dict | None, block_params: dict | None, elements_per_block: int) -> int:
    """Dependent steps one sweep of a block takes: its share over its declared tile (1 where the
    chain names no tile or the launch's block parameters lack it)."""
    name = (chain or {}).get("tile")
    tile = _whole((block_params or {}).get(name)) if isinstance(name, str) else None
    if not tile or tile < 1 or elements_per_block < 1:
        return 1
    return max(1, math.ceil(elements_per_block / tile))


def resolved_chain(chain: dict | None, block_params: dict | None, elements_per_block: int) -> dict:
    """A trace's chain with its tile resolved to `trips` (steps per sweep) for its launch."""
    chain = dict(chain or {})
    steps = tile_steps(chain, block_params, elements_per_block)
    if steps > 1:
        chain["trips"] = steps
    return chain
