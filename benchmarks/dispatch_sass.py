"""Compile every trace-kernel variant for sm_90 without a GPU, and write their SASS side by side
with the CUDA C probe's, so the wait loops can be compared instruction by instruction.

    python3 benchmarks/dispatch_sass.py                 # writes benchmarks/dispatch_sass.txt
    /tmp/t36/bin/python benchmarks/dispatch_sass.py --check   # compile only (e.g. triton 3.6.0)

Uses triton's bundled ptxas/cuobjdump, and nvcc (if on PATH) for benchmarks/dispatch_probe.cu.
Exit status 1 if any variant fails to compile.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import triton  # noqa: E402

from kernels.bodies.trace_kernels import compile_for  # noqa: E402

BIN = Path(triton.__file__).parent / "backends" / "nvidia" / "bin"
VARIANTS = [  # (label, compile_for arguments): every kernel dispatch_run.py launches, at 4 warps
    ("spin, 4 warps", dict(kernel="spin", wait="spin")),
    ("sleep, 4 warps", dict(kernel="spin", wait="sleep")),
    ("memory, 4 warps", dict(kernel="spin", wait="memory")),
    ("spin, 4 warps, 64 held registers", dict(kernel="spin", wait="spin", hold_regs=64)),
    ("sleep, 4 warps, 128 held registers", dict(kernel="spin", wait="sleep", hold_regs=128)),
    ("add, BLOCK_SIZE 1024, 4 warps", dict(kernel="add", block_size=1024, num_warps=4)),
    ("add, BLOCK_SIZE 256, 2 warps", dict(kernel="add", block_size=256, num_warps=2)),
    ("spin, 32 warps", dict(kernel="spin", wait="spin", num_warps=32)),
]


def sass(cubin: Path) -> tuple[str, str]:
    """(resource usage line, SASS without encodings and padding) of a cubin."""
    usage = subprocess.run([BIN / "cuobjdump", "-res-usage", cubin], capture_output=True,
                           text=True, check=True).stdout
    dump = subprocess.run([BIN / "cuobjdump", "-sass", cubin], capture_output=True, text=True,
                          check=True).stdout
    lines = []
    for line in dump.splitlines():
        if "Function :" in line:
            lines.append(line.strip())
        elif re.search(r"/\*[0-9a-f]{4}\*/", line) and not line.strip().endswith("NOP;"):
            lines.append(re.sub(r"\s*/\* 0x[0-9a-f]+ \*/", "", line).rstrip())
    regs = " | ".join(ln.strip() for ln in usage.splitlines() if "REG:" in ln or "Function" in ln)
    return regs, "\n".join(lines)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--check", action="store_true", help="compile only; write nothing")
    p.add_argument("--out", default=str(ROOT / "benchmarks" / "dispatch_sass.txt"))
    args = p.parse_args(argv)
    sections, failed = [], 0
    with tempfile.TemporaryDirectory() as tmp:
        for label, kwargs in VARIANTS:
            try:
                compiled = compile_for(**kwargs)
            except Exception as exc:  # report every variant, not just the first failure
                failed += 1
                print(f"FAIL  {label}: {type(exc).__name__}: {str(exc).splitlines()[0][:300]}")
                continue
            cubin = Path(tmp) / "k.cubin"
            cubin.write_bytes(compiled.asm["cubin"])
            regs, code = sass(cubin)
            print(f"ok    {label}: {regs}")
            sections.append(f"### Triton {triton.__version__}: {label}\n# {regs}\n{code}\n")
        nvcc = shutil.which("nvcc")
        if nvcc:
            cubin = Path(tmp) / "probe.cubin"
            done = subprocess.run([nvcc, "-arch=sm_90", "-cubin", "-o", cubin,
                                   ROOT / "benchmarks" / "dispatch_probe.cu"],
                                  capture_output=True, text=True)
            if done.returncode:
                failed += 1
                print(f"FAIL  CUDA probe: {done.stderr.strip()[:500]}")
            else:
                regs, code = sass(cubin)
                print(f"ok    CUDA probe: {regs}")
                version = subprocess.run([nvcc, "--version"], capture_output=True,
                                         text=True).stdout.strip().splitlines()[-1]
                sections.append(f"### CUDA C probe (nvcc -arch=sm_90; {version})\n"
                                f"# {regs}\n{code}\n")
        else:
            print("skip  CUDA probe: no nvcc on PATH")
    if not args.check and sections:
        head = ("# SASS of the trace kernels (kernels/bodies/trace_kernels.py) and the CUDA C probe\n"
                "# (benchmarks/dispatch_probe.cu), compiled for sm_90 without a GPU by\n"
                "# benchmarks/dispatch_sass.py; encodings and trailing NOPs dropped.\n\n")
        Path(args.out).write_text(head + "\n".join(sections), encoding="utf-8")
        print(f"wrote {args.out}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
