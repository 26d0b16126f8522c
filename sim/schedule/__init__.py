"""Blocks onto SMs over time: `scheduler` (a small deterministic discrete-event engine, SimPy's
shape), `dispatch` and `dispatch_profile` (how the GPU really hands blocks out, fitted to traces),
`policies` (cost models, placements and schedules by stable id), `timeline` (residency, waves, THE
tail, the state at any moment), `warps` (one SM's warp schedulers over a few microseconds)."""
