"""What an export says about the session: session.json and the summary's facts, read from the
models (the launch table's rows are sim.rules.geometry.geometry_facts, as `explain` prints them)."""

from __future__ import annotations

import datetime as _dt
from dataclasses import asdict
from typing import Any

from gui.models.bench import BenchModel
from gui.models.launch import LaunchModel
from gui.models.playback import PlaybackModel
from gui.models.simulation import SimulationModel
from sim.rules.geometry import geometry_facts
from sim.schedule.policies import COST_MODELS, PLACEMENTS

SESSION_FORMAT = "warpscope-session/1"
SUMMARY_ROWS = ("elements", "tpb", "blocks", "warps", "idle_last", "slots_gpu", "waves_best", "waves_occ")


def session_dict(launch: LaunchModel, simulation: SimulationModel, playback: PlaybackModel,
                 bench: BenchModel) -> dict:
    st = launch.state
    out: dict[str, Any] = {
        "format": SESSION_FORMAT,
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "inputs": st.inputs.to_dict(),
        "device": st.spec.to_dict(),
        "occupancy": None if st.occ is None else {**asdict(st.occ), "can_launch": st.occ.can_launch},
        "geometry": None if st.geometry is None else asdict(st.geometry),
        "simulation": None if simulation.run is None else simulation.run.summary(),
        "animation_time_us": round(playback.time_us, 4),
        "measurements": bench.session_dict(),
    }
    if bench.available:
        out["backends"] = {n: {"ok": a.ok, "is_gpu": a.is_gpu, "reason": a.reason}
                           for n, a in bench.available.items()}
    return out


def summary_facts(launch: LaunchModel, simulation: SimulationModel) -> list[tuple[str, str]]:
    st = launch.state
    spec, occ, g = st.spec, st.occ, st.geometry
    facts = [("GPU", f"{spec.name} (cc {spec.cc_string})"),
             ("SMs × warp slots", f"{spec.sm_count} × {spec.max_warps_per_sm}")]
    if g is not None:
        rows = {f.key: f for f in geometry_facts(spec, g)}
        facts += [(rows[k].label, rows[k].value) for k in SUMMARY_ROWS if k in rows]
    facts += [("Registers / thread", f"{st.inputs.regs_per_thread}"),
              ("Shared memory / block", f"{st.inputs.smem_per_block:,} B")]
    if occ is not None:
        facts += [("Theoretical occupancy", f"{occ.occupancy:.0%} ({occ.active_warps_per_sm}/{occ.max_warps_per_sm} warps)"),
                  ("Blocks per SM", f"{occ.blocks_per_sm}"),
                  ("Limited by", ", ".join(occ.limited_by) if occ.can_launch else occ.reason)]
    run = simulation.run
    if run is not None:
        tl = run.timeline
        facts += [("Simulated tail", f"{tl.tail_fraction:.0%} of the run (from {tl.tail_start_us:,.1f} µs)"),
                  ("Cost / placement", f"{COST_MODELS[run.cost].title} / {PLACEMENTS[run.placement].title}")]
    return facts
