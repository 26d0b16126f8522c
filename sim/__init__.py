"""WarpScope's scheduling model. Pure Python + numpy: nothing here imports Qt, torch, triton or
numba (tests/test_project.py keeps it so).

    rules/     what a GPU is and allows: devices (specs, the device-name rule), physics (per-GPU
               constants with provenance), occupancy (the driver's rules), geometry (grid, waves)
    schedule/  blocks onto SMs over time: scheduler (discrete events), dispatch and
               dispatch_profile (how the GPU really hands out blocks), policies (costs,
               placements by name), timeline (residency, waves, THE tail), warps (one SM's lanes)
    model/     what a launch costs: launch_model (THE prediction every surface reads), latency
               (the loaded queueing model), throughput and matmul_work (compute-bound tiles),
               advice (the verdicts), gpu_diff (one launch on two GPUs), confidence (a
               prediction's provenance), matmul_choice, next_step, what_if, run_diff (choose for
               me), occupancy_bandwidth (bandwidth with blocks per SM forced)
    traces/    recorded schedules: trace, trace_bundle, proton_trace (other tools' timelines),
               compare and schedule_metrics (one scored comparison), matmul_trace, calibrate
               (fit a GPU's dispatch model), sm_share (which SMs move bytes faster),
               latency_data and waves (measured runs)
    inputs/    the input boundary: files (every read and write), args and units (every value a
               user types), errors (the one exception a user can cause), places (where
               resources, config and cache live)
    cli.py     `explain`, `simulate`, `compare`
    notebook/  the same as functions whose results display themselves in Jupyter
               (`sim.explain(...)`, `sim.simulate(...)`, ...: loaded on first use)
"""

__version__ = "0.1.0"  # the one place: pyproject.toml reads it, `--version` prints it

NOTEBOOK = ("explain", "simulate", "compare", "next_step", "sweep")


def __getattr__(name):
    """`sim.explain` and the other notebook functions (sim.notebook), imported when first asked
    for, so the command line does not load them."""
    if name in NOTEBOOK:
        from sim import notebook

        return getattr(notebook, name)
    raise AttributeError(f"module 'sim' has no attribute {name!r}")
