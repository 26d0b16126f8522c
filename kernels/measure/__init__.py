"""Measuring on the GPU, honestly: `timing` (device events, L2 eviction, medians) and `harness`,
`bench` (sweeps), `timing_methods` and `experiments` (the teaching experiments), `results`
(bench files), `occupancy_probe` and `occupancy_sweep` (occupancy against the driver; bandwidth
with blocks per SM forced), `check` (correctness against float64), `calibrate` (record and fit a
GPU's dispatch model)."""
