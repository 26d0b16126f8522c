"""Loads a thread cannot keep in flight: the dependent rounds a register-limited tile takes.

A load's destination registers are held from its issue until its data lands, so a thread can have
at most its registers (less the ones its addresses, masks and counters need) of loaded values in
flight. When its tile needs more, ptxas issues what fits, and a later load waits until an earlier
value is consumed and its register free: the block's data comes in several dependent DRAM round
trips, not one. Compiled for sm_90 (Triton's add at
BLOCK_SIZE 2048 and 4 warps, 16 elements a thread = 32 values in 32 registers: five loads, then
two after the first ones land, then one: three rounds), this is what made the H200's one-wave
add of 1,024 such blocks end no block before 4.3 us and run 25% past the one-trip model.

`load_rounds` says how many rounds from what a launch knows: its compiled registers per thread,
the elements a thread handles per trip and the values it loads per element (`Launch.loads`, 32-bit
each). Two constants of the GPU's data file (sim/rules/physics.py): `load_base_regs` (registers a
thread needs besides the values in flight) and `serialized_load_rounds` (the rounds ptxas makes
once they do not fit). Unknown registers (0): one round, as before.
"""

from __future__ import annotations

VALUE_BYTES = 4  # a loaded value is one 32-bit register (fp32: the traced kernels' type)


def values_per_thread(elements: int, grid_blocks: int, threads_per_block: int, trips: int,
                      loads: int) -> float:
    """32-bit values one thread loads per trip: its elements per trip times the loads per element."""
    per_thread = elements / max(grid_blocks * threads_per_block * trips, 1)
    return per_thread * max(loads, 1)


def load_rounds(regs_per_thread: int, values: float, physics) -> int:
    """Dependent rounds a thread's loads of one trip take: 1 while they fit its registers beside
    `load_base_regs`, else `serialized_load_rounds`."""
    if regs_per_thread <= 0 or values <= regs_per_thread - physics.value("load_base_regs"):
        return 1
    return max(1, int(round(physics.value("serialized_load_rounds"))))


def inputs_of_traffic(bytes_per_element: float) -> int:
    """Input arrays of an elementwise kernel of 32-bit values with one output, from its traffic per
    element (an add's 12 B: 2; a copy's 8 B: 1)."""
    return max(1, round(bytes_per_element / VALUE_BYTES) - 1)
