"""Live kernels and honest timing. Never imports Qt; importing it is cheap: torch, triton and
numba are imported lazily, inside functions, so the CLI and the GUI can start without them.

    bodies/     the kernels themselves (Triton, Numba, torch peers, trace and latency kernels,
                matmuls, float64 references)
    declare/    what a kernel is: KernelSpec and THE grid rule, the registry, a user's file
                (in a child process of its own) and its checked answers
    launching/  binding a declared kernel to its inputs, the backends here, the real device
    measure/    timing (device events, L2 eviction, medians), bench sweeps, experiments,
                results files, occupancy probes and sweeps, correctness checks, calibration
    tracing/    which SM ran each block: the trace kernels, the instrument, trace --kernel-file
    offline_compile/  compiling for any preset GPU without one: Triton and Numba/NVVM, the
                toolchain host, registers and shared memory
    host/       the kernel host process: user code and GPU libraries run there, not here
    cli.py      `check`, `bench`, `trace`, `calibrate`
"""

from kernels.launching.backends import Availability, available

__all__ = ["Availability", "available"]
