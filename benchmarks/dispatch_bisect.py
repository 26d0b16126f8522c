"""Which property of Triton's binary starves new blocks? One GPU call that bisects it.

Family F (tests/data/dispatch_h200, docs/DISPATCH.md) showed that the Triton trace kernel's own
cubin, launched by cupy, fills SMs slowly while a CUDA C kernel with the same six-instruction busy
loop fills at once: the difference is in the binary, not in Triton's launch path. What differs:
Triton's PTX targets sm_90a and declares `.reqntid 128`, takes six parameters (two unused scratch
pointers) and has its own prologue. Every variant below is built from one of the two sources with
one of those properties changed, loaded with cupy and launched alike — 4,225 blocks of 4 warps
(128 threads), each resident 20 us (two waves at 16 blocks per SM) — and recorded in the trace
format (%smid, %globaltimer of thread 0):

    triton-cubin              Triton's own cubin (sm_90a, .reqntid 128)        [slow in family F]
    triton-ptx-sm90a          Triton's PTX, assembled here by ptxas for sm_90a  (= the cubin?)
    triton-ptx-sm90           ... with `.target sm_90`
    triton-ptx-sm90a-noreqntid ... with `.reqntid` removed
    triton-ptx-sm90-noreqntid ... both
    triton-ptx-sm90a-nodebug  ... without its line info and DWARF sections
    triton-ptx-sm90a-toolkit-ptxas  Triton's PTX assembled by the CUDA toolkit's ptxas (13.0 here),
                              not the one in Triton's wheel (12.8 here)

Read here (cuobjdump -elf), Triton's cubin differs from the CUDA C one in EIATTR_REQNTID and an
EIATTR_CRS_STACK_SIZE of 0 (from its PTX, whichever ptxas), and lacks EIATTR_MERCURY_ISA_VERSION;
each variant's attributes are recorded beside its trace.
    cuda-sm90                 the CUDA C spin loop, nvcc -arch=sm_90           [fast in family F]
    cuda-sm90a                ... nvcc -arch=sm_90a
    cuda-sm90-reqntid         ... its PTX with `.reqntid 128` added, ptxas sm_90
    cuda-sm90a-reqntid        ... and sm_90a
    cuda-sm90a-6params        a CUDA C twin with Triton's six parameters, sm_90a, .reqntid 128
    cuda-sm90a-triton-ptxas   the CUDA C PTX (its .version lowered) + .reqntid 128, Triton's ptxas

Writes $OUT/dispatch_bisect.json: per variant its build (target, .reqntid, registers), a summary
(blocks started within 0.5 us, median SM's peak, makespan; the textbook makespan is 40 us) and the
whole trace (sim.traces.trace format). A variant that fails is recorded with its error; the run goes on.

    PYTHONUNBUFFERED=1 python3 benchmarks/dispatch_bisect.py --out $OUT      # on the GPU, ~30 s
    python3 benchmarks/dispatch_bisect.py --check                           # here: builds only

`--check` compiles the Triton kernel for sm_90 and assembles every Triton PTX variant with the
ptxas bundled in the triton wheel (nvcc, where present, for the CUDA ones); no GPU needed.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

GRID, WARPS, SPIN_US = 4225, 4, 20.0
THREADS = 32 * WARPS

CUDA_SOURCE = r"""
__device__ __forceinline__ unsigned long long globaltimer() {
    unsigned long long t; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); return t; }
__device__ __forceinline__ unsigned int smid() {
    unsigned int s; asm volatile("mov.u32 %0, %%smid;" : "=r"(s)); return s; }
// the busy loop of benchmarks/dispatch_probe.cu:probe_spin_all (same SASS as Triton's loop)
extern "C" __global__ void bisect_spin(long long* out, long long spin_ns) {
    unsigned long long start = globaltimer(), now = start;
    while ((long long)(now - start) < spin_ns) now = globaltimer();
    if (threadIdx.x == 0) {
        long long* row = out + 3 * (long long)blockIdx.x;
        row[0] = smid(); row[1] = (long long)start; row[2] = (long long)now; }
}
// the same with Triton's parameter list: (out, int spin_ns, int* chase, int chase_len, 2 scratch)
extern "C" __global__ void bisect_spin_6params(
        long long* out, int spin_ns, int* chase, int chase_len, void* scratch0, void* scratch1) {
    unsigned long long start = globaltimer(), now = start;
    while ((long long)(now - start) < spin_ns) now = globaltimer();
    if (threadIdx.x == 0) {
        long long* row = out + 3 * (long long)blockIdx.x;
        row[0] = smid(); row[1] = (long long)start; row[2] = (long long)now; }
}
"""


# -- building the variants ---------------------------------------------------------------------------

def ptxas_path() -> str:
    """The ptxas Triton uses (bundled in its wheel), else one on PATH."""
    try:
        from triton.backends.nvidia.compiler import get_ptxas

        found = get_ptxas()
        return found.path if hasattr(found, "path") else found[0]
    except Exception:  # noqa: BLE001 - older/newer triton: fall back to the wheel's folder
        import triton

        bundled = Path(triton.__file__).parent / "backends" / "nvidia" / "bin" / "ptxas"
        return str(bundled) if bundled.exists() else (shutil.which("ptxas") or "ptxas")


def retarget(ptx: str, target: str) -> str:
    return re.sub(r"^\.target\s+\S+", f".target {target}", ptx, count=1, flags=re.M)


def without_reqntid(ptx: str) -> str:
    return re.sub(r"^\.reqntid[^\n]*\n", "", ptx, flags=re.M)


def without_debug(ptx: str) -> str:
    """Triton's PTX without its line info and DWARF sections (`.loc`, `.file`, `.section`)."""
    body = ptx[:ptx.index("\t.section")] if "\t.section" in ptx else ptx
    return "\n".join(ln for ln in body.splitlines()
                     if not ln.lstrip().startswith((".loc", ".file"))) + "\n"


def same_version(ptx: str, like: str) -> str:
    """`ptx` with the PTX ISA `.version` of `like` (an older ptxas refuses a newer version)."""
    version = re.search(r"^\.version\s+\S+", like, flags=re.M).group(0)
    return re.sub(r"^\.version\s+\S+", version, ptx, count=1, flags=re.M)


def with_reqntid(ptx: str, threads: int = THREADS) -> str:
    """Add `.reqntid` after every entry's parameter list (before its body)."""
    return re.sub(r"(\.entry\s+\w+\s*\((?:[^()]*)\))\s*\n", rf"\1\n.reqntid {threads}\n", ptx)


def toolkit_ptxas() -> str:
    """The CUDA toolkit's ptxas (beside nvcc): nvcc's PTX may be newer than Triton's ptxas reads."""
    exe = shutil.which("nvcc")
    beside = Path(exe).with_name("ptxas") if exe else None
    return str(beside) if beside is not None and beside.exists() else (shutil.which("ptxas") or "ptxas")


def assemble(ptx: str, arch: str, tmp: Path, name: str, ptxas: str | None = None) -> bytes:
    src, out = tmp / f"{name}.ptx", tmp / f"{name}.cubin"
    src.write_text(ptx)
    done = subprocess.run([ptxas or ptxas_path(), f"-arch={arch}", str(src), "-o", str(out)],
                          capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(f"ptxas {arch}: {(done.stderr or done.stdout).strip()[:400]}")
    return out.read_bytes()


def nvcc(args: list[str], tmp: Path, out_name: str) -> bytes:
    exe = shutil.which("nvcc")
    if exe is None:
        raise RuntimeError("nvcc is not on PATH")
    src = tmp / "bisect.cu"
    src.write_text(CUDA_SOURCE)
    out = tmp / out_name
    done = subprocess.run([exe, *args, str(src), "-o", str(out)], capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(f"nvcc {' '.join(args)}: {(done.stderr or done.stdout).strip()[:400]}")
    return out.read_bytes()


def triton_kernel(cc: int = 90):
    """Triton's spin kernel compiled for the target (no GPU needed): (ptx, cubin, entry name)."""
    from kernels.bodies.trace_kernels import compile_for

    compiled = compile_for("spin", wait="spin", num_warps=WARPS, cc=cc)
    return compiled.asm["ptx"], compiled.asm["cubin"], compiled.metadata.name


def build_variants(tmp: Path) -> list[dict]:
    """Every variant as {name, what, entry, args ('triton'|'cuda'|'cuda6'), image | error}."""
    out = []

    def add(name, what, entry, args, make):
        try:
            out.append({"name": name, "what": what, "entry": entry, "args": args, "image": make()})
        except Exception as exc:  # noqa: BLE001 - one variant failing must not end the run
            out.append({"name": name, "what": what, "entry": entry, "args": args,
                        "error": f"{type(exc).__name__}: {str(exc)[:400]}"})

    ptx, cubin, entry = triton_kernel()
    plain = without_reqntid(ptx)
    add("triton-cubin", "Triton's own cubin (sm_90a, .reqntid 128)", entry, "triton", lambda: cubin)
    add("triton-ptx-sm90a", "Triton's PTX, ptxas sm_90a", entry, "triton",
        lambda: assemble(ptx, "sm_90a", tmp, "t90a"))
    add("triton-ptx-sm90", "Triton's PTX retargeted to sm_90", entry, "triton",
        lambda: assemble(retarget(ptx, "sm_90"), "sm_90", tmp, "t90"))
    add("triton-ptx-sm90a-noreqntid", "Triton's PTX without .reqntid, sm_90a", entry, "triton",
        lambda: assemble(plain, "sm_90a", tmp, "t90a_n"))
    add("triton-ptx-sm90-noreqntid", "Triton's PTX without .reqntid, sm_90", entry, "triton",
        lambda: assemble(retarget(plain, "sm_90"), "sm_90", tmp, "t90_n"))
    add("triton-ptx-sm90a-nodebug", "Triton's PTX without line info / DWARF, sm_90a", entry,
        "triton", lambda: assemble(without_debug(ptx), "sm_90a", tmp, "t90a_nd"))
    add("triton-ptx-sm90a-toolkit-ptxas", "Triton's PTX, the CUDA toolkit's ptxas (nvcc's), sm_90a",
        entry, "triton", lambda: assemble(ptx, "sm_90a", tmp, "t90a_tk", toolkit_ptxas()))

    def cuda_ptx(arch):
        return nvcc([f"-arch={arch}", "-ptx"], tmp, f"c_{arch}.ptx").decode()

    add("cuda-sm90", "CUDA C spin loop, nvcc -arch=sm_90", "bisect_spin", "cuda",
        lambda: nvcc(["-arch=sm_90", "-cubin"], tmp, "c90.cubin"))
    add("cuda-sm90a", "CUDA C spin loop, nvcc -arch=sm_90a", "bisect_spin", "cuda",
        lambda: nvcc(["-arch=sm_90a", "-cubin"], tmp, "c90a.cubin"))
    add("cuda-sm90-reqntid", "CUDA C PTX + .reqntid 128, ptxas sm_90", "bisect_spin", "cuda",
        lambda: assemble(with_reqntid(cuda_ptx("sm_90")), "sm_90", tmp, "c90_r", toolkit_ptxas()))
    add("cuda-sm90a-reqntid", "CUDA C PTX + .reqntid 128, ptxas sm_90a", "bisect_spin", "cuda",
        lambda: assemble(with_reqntid(cuda_ptx("sm_90a")), "sm_90a", tmp, "c90a_r", toolkit_ptxas()))
    add("cuda-sm90a-6params", "CUDA C twin with Triton's six parameters, sm_90a, .reqntid 128",
        "bisect_spin_6params", "cuda6",
        lambda: assemble(with_reqntid(cuda_ptx("sm_90a")), "sm_90a", tmp, "c90a_6", toolkit_ptxas()))
    add("cuda-sm90a-triton-ptxas", "CUDA C PTX (.version lowered to Triton's) + .reqntid 128, "
        "assembled by Triton's ptxas, sm_90a", "bisect_spin", "cuda",
        lambda: assemble(with_reqntid(same_version(cuda_ptx("sm_90a"), ptx)), "sm_90a", tmp,
                         "c90a_tp"))
    return out


def describe(image: bytes, tmp: Path) -> dict:
    """Registers and the attributes that differ between the builds, read with cuobjdump."""
    import triton

    bundled = Path(triton.__file__).parent / "backends" / "nvidia" / "bin" / "cuobjdump"
    exe = shutil.which("cuobjdump") or str(bundled)
    path = tmp / "d.cubin"
    path.write_bytes(image)
    info = {}
    try:
        usage = subprocess.run([exe, "-res-usage", str(path)], capture_output=True, text=True,
                               timeout=60).stdout
        elf = subprocess.run([exe, "-elf", str(path)], capture_output=True, text=True,
                             timeout=60).stdout
        info["res_usage"] = " | ".join(ln.strip() for ln in usage.splitlines() if "REG:" in ln)
        info["arch"] = sorted(set(re.findall(r"sm_\d+a?", elf)))
        info["eiattr"] = sorted(set(re.findall(r"EIATTR_[A-Z_]+", elf)))
        info["ptxas"] = sorted(set(re.findall(r"(?:ptxas|Cuda compilation tools)[^\n]*", elf)))[:2]
    except (OSError, subprocess.SubprocessError) as exc:
        info["describe_error"] = str(exc)
    return info


# -- running them ------------------------------------------------------------------------------------

def launch(variant: dict, tmp: Path):
    """Load the variant with cupy, launch GRID blocks, return the int64 [grid, 3] stamps."""
    import cupy as cp
    import numpy as np

    path = tmp / f"{variant['name']}.cubin"
    path.write_bytes(variant["image"])
    fn = cp.RawModule(path=str(path)).get_function(variant["entry"])
    out = cp.full((GRID, 3), -1, dtype=cp.int64)
    spin_ns = int(SPIN_US * 1000)
    if variant["args"] == "cuda":
        args = (out, np.int64(spin_ns))
    else:  # Triton's parameters: out, spin_ns, chase, chase_len, two scratch pointers (unused)
        chase = cp.zeros(2, dtype=cp.int32)
        args = (out, np.int32(spin_ns), chase, np.int32(2), np.uint64(0), np.uint64(0))
    fn((1,), (THREADS,), args)  # loads the module; not recorded
    cp.cuda.runtime.deviceSynchronize()
    out.fill(-1)
    fn((GRID,), (THREADS,), args)
    cp.cuda.runtime.deviceSynchronize()
    return out.get()


def summarize(trace) -> dict:
    from sim.traces.schedule_metrics import peak_per_sm

    start = trace.start_us - trace.start_us.min()
    peaks = peak_per_sm(trace.sm, trace.start_us, trace.end_us)
    return {"blocks": int(len(trace.block)), "started_within_0_5us": int((start <= 0.5).sum()),
            "median_peak_per_sm": float(sorted(peaks)[len(peaks) // 2]),
            "makespan_us": round(float(trace.end_us.max() - trace.start_us.min()), 2),
            "textbook_makespan_us": 40.0}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", help="folder for dispatch_bisect.json (the GPU run)")
    p.add_argument("--check", action="store_true", help="build every variant; no GPU, no launch")
    p.add_argument("--budget-s", type=float, default=240.0)
    args = p.parse_args(argv)
    if not args.check and not args.out:
        p.error("give --out DIR (GPU run) or --check")
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        variants = build_variants(tmp)
        for v in variants:
            if "image" in v:
                v["build"] = describe(v["image"], tmp)
            print(f"{'built ' if 'image' in v else 'FAILED'} {v['name']:<28} "
                  f"{v.get('build', {}).get('res_usage', v.get('error', ''))[:120]}", flush=True)
        if args.check:
            return 0 if all("image" in v for v in variants if v["args"] == "triton") else 1
        from kernels.tracing.trace import require_gpu, trace_from_stamps
        from sim.traces.trace import trace_document

        gpu = require_gpu()
        results = []
        for v in variants:
            entry = {k: v[k] for k in ("name", "what", "entry") if k in v}
            entry.update(build=v.get("build"), error=v.get("error"))
            if "image" in v and time.perf_counter() - t0 < args.budget_s:
                try:
                    stamps = launch(v, tmp)
                    meta = {"kernel": "dispatch-bisect", "variant": v["name"], "grid": GRID,
                            "num_warps": WARPS, "threads_per_block": THREADS, "spin_us": SPIN_US,
                            "wait": "spin", "sm_count": gpu.sm_count,
                            "predicted": {"blocks_per_sm": 16}}
                    trace = trace_from_stamps(stamps, gpu.name, meta)
                    entry["summary"] = summarize(trace)
                    entry["trace"] = trace_document(
                        source="recorded", gpu=gpu.name, meta=meta,
                        records=zip(trace.block, trace.sm, trace.slot, trace.start_us, trace.end_us))
                except Exception as exc:  # noqa: BLE001
                    entry["error"] = f"{type(exc).__name__}: {str(exc)[:400]}"
            elif "image" in v:
                entry["error"] = "the time budget was spent"
            print(f"{v['name']:<28} {entry.get('summary') or entry.get('error')}", flush=True)
            results.append(entry)
    os.makedirs(args.out, exist_ok=True)
    doc = {"format": "warpscope-dispatch-bisect/1", "gpu": gpu.name,
           "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
           "command": "python3 benchmarks/dispatch_bisect.py " + " ".join(sys.argv[1:]),
           "launch": {"grid": GRID, "threads_per_block": THREADS, "spin_us": SPIN_US},
           "variants": results}
    path = Path(args.out) / "dispatch_bisect.json"
    path.write_text(json.dumps(doc))
    print(f"wrote {path} ({time.perf_counter() - t0:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
