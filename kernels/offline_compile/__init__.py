"""Compiling without a GPU: `compile` (Triton and Numba/NVVM for any preset's compute capability,
cached), `toolchain` (the compiler host process), `resources` (registers and shared memory of a
launch)."""
