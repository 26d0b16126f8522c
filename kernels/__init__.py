"""Live kernels and honest timing.

Importing this package is cheap: torch, triton and numba are imported lazily, inside functions,
so the CLI and the GUI can start without them. See docs/ARCHITECTURE.md ("kernels").
"""

from .backends import Availability, available

__all__ = ["Availability", "available"]
