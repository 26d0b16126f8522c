"""What a launch costs: `launch_model` (THE prediction: schedule, whole-launch time and its parts,
bandwidth or FLOP/s, bound, tail share; every surface reads it), `latency` (the loaded queueing
model behind a memory-bound block's time), `throughput` and `matmul_work` (compute-bound tiles:
tiled, persistent, stream-K), `advice` (the verdicts), `gpu_diff` (one launch on two GPUs)."""
