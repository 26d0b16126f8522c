"""What the kernel tests run on. Imported by conftest.py at collection, before any test module:
kernels.available() turns on Triton's interpreter and numba-cuda's simulator when there is no GPU
(both must be switched on before triton kernels are defined and before numba is imported)."""

import kernels

AVAILABLE = kernels.available()
HAS_GPU = AVAILABLE["torch"].is_gpu
