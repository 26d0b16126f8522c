"""Kernel files broken in each way a user's file can be: what the CLI and the window must each
answer with one clear line. name -> (source, what the message says)."""

from __future__ import annotations

from pathlib import Path

BROKEN = {
    "syntax.py": ("import triton\ndef f(:\n    pass\n", "line 2: syntax error"),
    "nodecl.py": ("import numpy as np\nX = 1\n", "declares no kernel"),
    "raises.py": ("import numpy as np\nraise RuntimeError('no data folder')\n",
                  "line 2: importing it raised RuntimeError: no data folder"),
    "compile_error.py": ('''import triton
import triton.language as tl


@triton.jit
def broken_kernel(x_ptr, out_ptr, n, BLOCK_SIZE: tl.constexpr):
    offs = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs) * not_defined, mask=offs < n)


WARPSCOPE = dict(kernel=broken_kernel, inputs=1, block=dict(BLOCK_SIZE=1024, num_warps=4))
''', "broken_kernel does not compile (BLOCK_SIZE=1024, num_warps=4, sm_75, line 8)"),
}


def write_broken(folder: Path) -> dict[str, Path]:
    paths = {}
    for name, (text, _) in BROKEN.items():
        paths[name] = folder / name
        paths[name].write_text(text, encoding="utf-8")
    return paths
