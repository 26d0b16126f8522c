"""Cluster occupancy (sim/rules/clusters.py) against the hardware.

- The driver's cuOccupancyMaxActiveClusters, recorded by kernels/measure/cluster_occupancy.py in
  tests/data/cluster_occupancy_*.json: equal on every case (skipped, naming the command, until a
  file is recorded).
- The GPC probe recorded on four H200s (tests/data/h200_gpc_probes): with one block per
  SM, the SMs any cluster reached over a launch are at most the SMs of GPCs big enough for one
  cluster, and reach that count in some launch (132 for clusters of 2; 124 for 4 and 8: the four
  lone TPCs never ran a cluster of 4).
"""

from __future__ import annotations

import glob
import json
from pathlib import Path

import pytest

from sim.rules.clusters import check_cluster, cluster_occupancy, gpc_layout
from sim.rules.devices import preset
from sim.rules.occupancy import occupancy

ROOT = Path(__file__).resolve().parents[2]
TRUTH = sorted(glob.glob(str(ROOT / "tests/data/cluster_occupancy_*.json")))
PROBES = sorted(glob.glob(str(ROOT / "tests/data/h200_gpc_probes/*.json")))
COMMAND = "python3 -m kernels.measure.cluster_occupancy --out tests/data/cluster_occupancy_h200.json"
PRESET_OF = {"NVIDIA H200": "H200", "NVIDIA H100 80GB HBM3": "H100 SXM"}


@pytest.mark.skipif(not TRUTH, reason=f"no recorded driver answers: run `{COMMAND}` on a lent GPU")
@pytest.mark.parametrize("path", TRUTH)
def test_model_equals_driver_max_active_clusters(path):
    data = json.loads(Path(path).read_text())
    gpu = preset(PRESET_OF.get(data["device"], data["device"]))
    assert data["sm_count"] == gpu.sm_count
    col = {name: i for i, name in enumerate(data["columns"])}
    wrong = []
    for case in data["cases"]:
        cluster, threads, dyn = (case[col[k]] for k in ("cluster", "threads_per_block", "dynamic_smem_bytes"))
        truth = case[col["driver_max_active_clusters"]]
        occ = occupancy(gpu, threads, data["num_regs"], data["static_smem_bytes"] + dyn)
        model = cluster_occupancy(gpu, occ.blocks_per_sm, cluster).max_active_clusters
        if truth >= 0 and model != truth:  # tolerance: exact; -1 is a refused query
            wrong.append((cluster, threads, dyn, occ.blocks_per_sm, model, truth))
    assert not wrong, f"(cluster, threads, smem, blocks/SM, model, driver): {wrong[:8]}"


@pytest.mark.skipif(not PROBES, reason="no GPC probe recorded")
@pytest.mark.parametrize("path", PROBES)
def test_gpcs_big_enough_bound_the_sms_clusters_reach(path):
    data = json.loads(Path(path).read_text())
    gpu = preset("H200")
    groups, _ = gpc_layout(gpu)
    for probe in data["probes"]:
        if "error" in probe:
            continue
        c = probe["cluster"]
        cocc = cluster_occupancy(gpu, 1, c)  # the probe pads every block to one per SM
        reachable = sum(n for n, k in zip(cocc.gpc_sms, cocc.clusters_per_gpc) if k > 0)
        seen = probe["distinct_sms_per_launch"]
        assert max(seen) <= reachable  # no cluster ever ran on a GPC too small for it
        assert reachable - max(seen) <= 2, (c, seen, reachable)  # within one TPC of all of them


def test_h200_layout_is_the_measured_one():
    groups, source = gpc_layout(preset("H200"))
    assert sorted(len(g) for g in groups) == sorted([18, 18, 16, 16, 16, 16, 16, 8, 2, 2, 2, 2])
    assert sorted(sm for g in groups for sm in g) == list(range(132))
    assert source.startswith("measured")
    assert gpc_layout(preset("H100 SXM"))[1].startswith("assumed")


@pytest.mark.parametrize("name", ["B200", "H100 PCIe", "V100", "RTX 5090"])
def test_assumed_layouts_cover_every_sm_once(name):
    gpu = preset(name)
    groups, source = gpc_layout(gpu)
    assert sorted(sm for g in groups for sm in g) == list(range(gpu.sm_count))
    assert len(groups) == gpu.gpc_count and source.startswith("assumed")


@pytest.mark.parametrize("blocks_per_sm, cluster", [(b, c) for b in (1, 2, 3, 8) for c in (1, 2, 4, 8, 16)])
def test_invariants(blocks_per_sm, cluster):
    gpu = preset("H200")
    cocc = cluster_occupancy(gpu, blocks_per_sm, cluster)
    assert cocc.blocks_resident <= gpu.sm_count * blocks_per_sm
    assert cocc.max_active_clusters <= gpu.sm_count * blocks_per_sm // cluster
    if cluster == 1:
        assert cocc.blocks_resident == gpu.sm_count * blocks_per_sm


def test_refusals_are_one_line():
    with pytest.raises(ValueError, match="compute capability 9.0"):
        check_cluster(preset("A100 80GB"), 2)
    with pytest.raises(ValueError, match="at most 8"):
        check_cluster(preset("H200"), 32)
    check_cluster(preset("A100 80GB"), 1)


def test_cli_cluster_rounds_the_grid_and_limits_a_wave(capsys):
    import main
    from sim.cli import resolve_launch
    from sim.inputs.errors import UserError
    from tests.sim.test_block_shape import _args

    gpu, occ, geo, _ = resolve_launch(_args(cluster=8, smem="120K"))
    assert geo.blocks % 8 == 0 and geo.blocks - 8 < -(-1_000_000 // 256) <= geo.blocks
    # 1 block/SM: 2 x 2 + 5 x 2 + 1 x 1 + 4 x 0 = 15 clusters of 8 (the lone TPCs hold none)
    assert occ.blocks_per_sm == 1 and geo.blocks_per_wave == 15 * 8
    with pytest.raises(UserError, match="9.0 or later"):
        resolve_launch(_args(cluster=2, gpu="A100 80GB"))
    assert main.main(["explain", "--cluster", "2"]) == 0
    assert "Max active clusters" in capsys.readouterr().out
    assert main.main(["explain", "--cluster", "8", "--smem", "120K", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["clusters"]["max_active_clusters"] == 15
