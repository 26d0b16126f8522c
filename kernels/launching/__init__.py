"""Launching a declared kernel: `launcher` (bind any spec to inputs, once), `launch` (what a
launcher hands back), `backends` (which of torch, triton, numba are here and how), `device` (the
real GPU as a GpuSpec), `compat` (numpy >= 2.5 for numba-cuda), `kernel_args` (`--kernel` and
`--kernel-file` for explain and simulate: the launch a kernel's declaration makes)."""
