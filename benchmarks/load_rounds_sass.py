"""How many dependent DRAM round trips the traced kernels' loads take, read off their sm_90 SASS,
against the register rule of sim/model/load_rounds.py. No GPU needed (Triton's bundled ptxas and
cuobjdump):

    python3 benchmarks/load_rounds_sass.py            # add, copy, square x BLOCK_SIZE x warps (~90 s)
    python3 benchmarks/load_rounds_sass.py add:2048:4 # one launch, with its loads and stores listed

Each kernel is compiled as `trace --kernel K --block B --warps W` launches it (pointers and the
element count specialized as divisible by 16, so the loads are 128-bit). The chain depth is the
SASS walked in order (a warp issues in order; an instruction waits for its operands, a load's value
lands one round after it issues, and a load that reuses a register waits for the instruction that
read it): the round in which the end stamp issues. The rule says one round while a thread's loaded
values fit its registers less `load_base_regs`, else `serialized_load_rounds`. Prints each launch,
the bracket the compiles allow for `load_base_regs` and the depths of the serialized ones.
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

REG = re.compile(r"\bR(\d+)\b")
INSTR = re.compile(r"\*/\s+(@!?U?P\d+\s+)?([A-Z0-9_.]+)\s*(.*?);")
STORES = ("STG", "STS", "RED", "ATOMG")
INPUTS = {"add": 2, "copy": 1, "square": 1}


def compiled(kernel: str, block: int, warps: int):
    """triton.compile of the trace kernel as a launch of it specializes (divisibility by 16)."""
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    from kernels.bodies.trace_kernels import add_trace_kernel, unary_trace_kernel

    div = [["tt.divisibility", 16]]
    if kernel == "add":
        sig = {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "stamps_ptr": "*i64",
               "n_elements": "i32", "BLOCK_SIZE": "constexpr", "STAMP": "constexpr"}
        src = ASTSource(fn=add_trace_kernel, signature=sig,
                        constexprs={"BLOCK_SIZE": block, "STAMP": True},
                        attrs={(i,): div for i in range(5)})
    else:
        sig = {"x_ptr": "*fp32", "out_ptr": "*fp32", "stamps_ptr": "*i64", "n_elements": "i32",
               "BLOCK_SIZE": "constexpr", "SQUARE": "constexpr", "STAMP": "constexpr"}
        src = ASTSource(fn=unary_trace_kernel, signature=sig,
                        constexprs={"BLOCK_SIZE": block, "SQUARE": kernel == "square", "STAMP": True},
                        attrs={(i,): div for i in range(4)})
    return triton.compile(src, target=GPUTarget("cuda", 90, 32), options={"num_warps": warps})


def _regs(token: str, width: int) -> list[int]:
    return [int(r) + k for r in REG.findall(token) for k in range(width)]


def chain_depth(code: str) -> tuple[int, int]:
    """(rounds until the last instruction issues, loads) of a kernel's SASS."""
    avail: dict[int, int] = {}
    level = loads = 0
    for line in code.splitlines():
        m = INSTR.search(line)
        if not m or m.group(2).startswith(("BRA", "EXIT", "NOP")):
            continue
        op, parts = m.group(2), [a.strip() for a in m.group(3).split(",")]
        base = op.split(".")[0]
        width = 4 if ".128" in op else 2 if ".64" in op else 1
        dests, srcs = ([], parts) if base in STORES else (parts[:1], parts[1:])
        used = []
        for i, tok in enumerate(srcs):
            if "[" in tok:  # an address: a 64-bit register pair
                used += _regs(tok.split("][")[-1], 2)
            else:  # a stored value is as wide as the store
                used += _regs(tok, width if base in STORES and i == len(srcs) - 1 else 1)
        level = max([level] + [avail.get(r, 0) for r in used])
        for r in (_regs(dests[0], width) if dests else []):
            avail[r] = level + 1 if base == "LDG" else level
        loads += base == "LDG"
    return level, loads


def measure(kernel: str, block: int, warps: int) -> dict:
    from dispatch_sass import sass

    k = compiled(kernel, block, warps)
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "k.cubin"
        path.write_bytes(k.asm["cubin"])
        usage, code = sass(path)
    depth, loads = chain_depth(code)
    per_thread = block // (32 * warps)
    return {"kernel": kernel, "block": block, "warps": warps, "regs": int(re.search(r"REG:(\d+)", usage).group(1)),
            "values": per_thread * INPUTS[kernel], "loads": loads, "depth": depth, "code": code}


def plan() -> list[tuple[str, int, int]]:
    return [(k, b, w) for k in INPUTS for w in (1, 2, 4, 8, 16)
            for b in (256, 512, 1024, 2048, 4096, 8192, 16384) if 1 <= b // (32 * w) <= 128]


def main(argv=None) -> int:
    from sim.model.load_rounds import load_rounds
    from sim.rules.physics import physics_for

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("launches", nargs="*", metavar="KERNEL:BLOCK:WARPS")
    args = p.parse_args(argv)
    ph = physics_for("H200")
    rows = [measure(k, int(b), int(w)) for k, b, w in
            (s.split(":") for s in args.launches)] if args.launches else [measure(*x) for x in plan()]
    for r in rows:
        rule = load_rounds(r["regs"], r["values"], ph)
        print(f"{r['kernel']:6s} BLOCK {r['block']:5d} w{r['warps']:<2d} {r['values']:3d} values "
              f"{r['regs']:3d} registers {r['loads']:2d} loads: SASS {r['depth']} round(s), rule {rule}")
        if args.launches:
            print("\n".join(ln for ln in r["code"].splitlines() if re.search(r"LDG|STG|GLOBALTIMER", ln)))
    one = [r["regs"] - r["values"] for r in rows if r["depth"] == 1]
    more = [r["regs"] - r["values"] for r in rows if r["depth"] > 1]
    if one and more:
        print(f"load_base_regs bracket: ({max(more)}, {min(one)}] (one round needs registers >= "
              f"values + it; every serialized launch has fewer)")
    if more:
        print("depths where the loads serialize:", dict(sorted(Counter(r["depth"] for r in rows
                                                                       if r["depth"] > 1).items())))
    print(f"rule right on {sum((r['depth'] > 1) == (load_rounds(r['regs'], r['values'], ph) > 1) for r in rows)}"
          f" of {len(rows)} (one round or more); the round count itself on "
          f"{sum(r['depth'] == load_rounds(r['regs'], r['values'], ph) for r in rows)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
