"""Startup to a visible, painted main window, and how long the heavy imports take after it.

Runs `python main.py` in a fresh process N times with WARPSCOPE_STARTUP_PROBE set; the app prints
the wall-clock time of its first painted frame (and, with "kernels", when torch/triton/numba have
loaded in the background, plus the longest stall of the GUI event loop meanwhile). We time from
just before the process is spawned, so interpreter start-up and every import are included.

    xvfb-run -s "-screen 0 1600x1000x24" .venv/bin/python benchmarks/gui_startup.py
    QT_QPA_PLATFORM=offscreen .venv/bin/python benchmarks/gui_startup.py
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def one_run(mode: str) -> dict:
    env = dict(
        os.environ,
        WARPSCOPE_STARTUP_PROBE=mode,
        WARPSCOPE_SETTINGS_DIR=tempfile.mkdtemp(prefix="ws-startup-"),
    )
    t0 = time.time()
    p = subprocess.run(
        [
            sys.executable,
            "main.py",
            "--gpu",
            "RTX 5090",
            "--elements",
            "10000000",
            "--block",
            "256",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    out = {}
    for line in p.stdout.splitlines():
        parts = line.split()
        if parts and parts[0] == "WARPSCOPE_VISIBLE":
            out["visible_s"] = float(parts[1]) - t0
            out["listed"] = dict(kv.split("=", 1) for kv in parts[2:])  # kernels=N imported=...
        elif parts and parts[0] == "WARPSCOPE_KERNELS":
            out["kernels_s"] = float(parts[1]) - t0
            out["max_stall_ms"] = float(parts[2])
    if "visible_s" not in out:
        raise SystemExit(f"no probe output (exit {p.returncode}):\n{p.stdout}\n{p.stderr}")
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    platform = os.environ.get("QT_QPA_PLATFORM") or ("xcb" if os.environ.get("DISPLAY") else "?")
    one_run("visible")  # warm the OS file cache once; not counted
    runs = [one_run("visible") for _ in range(args.runs)]
    vis = [r["visible_s"] for r in runs]
    full = [one_run("kernels") for _ in range(max(1, args.runs // 2))]
    load = os.getloadavg()
    # without cached bytecode every module is compiled again at each start (a few tenths of a s)
    pyc = "off (PYTHONDONTWRITEBYTECODE)" if sys.flags.dont_write_bytecode else "on"
    print(
        f"platform: {platform}; python {sys.version.split()[0]}; {os.cpu_count()} CPUs; "
        f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} (other work on the machine "
        f"slows every figure); bytecode cache {pyc}"
    )
    print(
        f"window painted after: median {statistics.median(vis):.2f} s "
        f"(runs: {', '.join(f'{v:.2f}' for v in vis)}); Kernel list then: "
        f"{runs[-1]['listed'].get('kernels', '?')} kernels, heavy modules imported: "
        f"{runs[-1]['listed'].get('imported', '?')}"
    )
    ks = [f["kernels_s"] for f in full]
    stalls = [f["max_stall_ms"] for f in full]
    print(
        f"torch/triton/numba loaded in the background after: median {statistics.median(ks):.2f} s; "
        f"longest GUI event-loop stall meanwhile: median {statistics.median(stalls):.0f} ms "
        f"(runs: {', '.join(f'{s:.0f}' for s in stalls)})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
