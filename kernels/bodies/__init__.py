"""Kernel bodies, imported lazily (torch, triton and numba load only when one runs):
`triton_kernels`, `numba_kernels`,
`torch_peers`, `trace_kernels` (the stamped spin and real kernels), `latency_kernels` (pointer
chase), `matmul` (tiled, persistent, stream-K), `reference` (float64 references)."""
