"""Recorded schedules: `trace` (warpscope-trace/1 files), `trace_bundle` (many traces in two
files), `proton_trace` (Triton Proton's per-program timeline), `compare` and `schedule_metrics`
(one scored comparison of any trace with its prediction), `matmul_trace` (a matmul trace's
launch), `calibrate` (fit a GPU's dispatch model to its traces), `sm_share` (which SMs move
bytes faster: their blocks per SM), `latency_data` and `waves`
(measured latency runs and sawtooth sweeps)."""
