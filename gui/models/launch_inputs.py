"""What the user sets for a launch: `LaunchInputs`, plain values (saved, compared, exported), and
the boxes' text read as the command line reads it (`parse_field`). No Qt; the state worked out
from them is gui/models/launch.py's.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any

from sim.inputs.defaults import DEFAULT_ELEMENTS
from sim.inputs.errors import UserError
from sim.inputs.units import parse_bytes, parse_count

MAX_ELEMENTS = 2**31
MAX_REGS = 512  # the registers box goes past every GPU's 255, to show why such a kernel cannot run
MAX_SMEM = 1 << 20  # likewise shared memory per block (no GPU offers more than 228 KiB)
CUSTOM_KERNEL = "custom"
# A kernel with `dims` (a matmul) picked from the menu starts at DEFAULT_SIDE, and a stream kernel
# picked after it starts back at DEFAULT_ELEMENTS (sim/inputs/defaults.py, as on the command line)


@dataclass(frozen=True, slots=True)
class LaunchInputs:
    """Everything the user sets. Plain values, so it can be saved, compared and exported."""

    gpu: str = "H200"
    kernel: str = CUSTOM_KERNEL
    elements: int = DEFAULT_ELEMENTS
    threads_per_block: int = 256
    regs_per_thread: int = 0
    smem_per_block: int = 0
    carveout_percent: int | None = None
    block_size: int | None = None  # a Triton kernel's BLOCK_SIZE (elements per program)
    dims: str = ""  # a matmul's sizes, "M=1024,N=4352,K=8192"; "" = those of `elements`
    block_extra: str = ""  # the kernel's other block parameters, "BLOCK_N=128,BLOCK_K=32"
    block_y: int = 1  # a 2D/3D block's y and z; its x is threads_per_block / (y × z)
    block_z: int = 1
    cluster_size: int = 1  # blocks per thread-block cluster (compute capability 9.0+)
    max_registers: int = 0  # a cap on registers per thread (maxrregcount; 0: none)

    def __post_init__(self) -> None:
        # under a cap the compiler keeps a thread within it (spilling the rest): typed registers too
        if self.max_registers and self.regs_per_thread > self.max_registers:
            object.__setattr__(self, "regs_per_thread", self.max_registers)

    def to_dict(self) -> dict:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @classmethod
    def from_dict(cls, data: dict) -> LaunchInputs:
        """Tolerant: unknown keys and values of the wrong type are ignored."""
        data = dict(data)
        ept = data.pop("elements_per_thread", None)  # saved by earlier versions
        if data.get("block_size") is None and isinstance(ept, int) and ept > 1:
            data["block_size"] = ept * int(data.get("threads_per_block") or 1)
        values: dict[str, Any] = {}
        for f in fields(cls):
            if f.name not in data:
                continue
            v = data[f.name]
            if v is None:
                if f.name in ("carveout_percent", "block_size"):
                    values[f.name] = None
                continue
            kind = str if f.name in ("gpu", "kernel", "dims", "block_extra") else int
            try:
                values[f.name] = kind(v)
            except (TypeError, ValueError):
                continue
        return replace(cls(), **values)


def parse_field(name: str, text: str) -> int:
    """A number typed into a box, read as the command line reads it (sim.inputs.units): 1e6, 2^20, 4M for
    counts, 48K or 48KiB for shared memory. UserError (one line) if it is no number."""
    what = {"elements": "element count", "threads_per_block": "threads per block",
            "regs_per_thread": "registers per thread", "smem_per_block": "shared memory per block",
            "block_size": "BLOCK_SIZE", "block_x": "block x", "block_y": "block y",
            "block_z": "block z", "cluster_size": "cluster size",
            "max_registers": "max registers"}[name]
    text = str(text).strip()
    value = parse_bytes(text, what) if name == "smem_per_block" else parse_count(text, what)
    if value < 0:
        raise UserError(f"{what} cannot be negative, got {text!r}")
    return value
