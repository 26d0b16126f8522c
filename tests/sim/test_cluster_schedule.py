"""The scheduler with clusters: invariants of CUDA's guarantee (a cluster's blocks are co-scheduled
on one GPC) and of the cluster limit (sim/rules/clusters.py, checked against hardware in
tests/sim/test_cluster_truth.py)."""

from __future__ import annotations

import numpy as np
import pytest

from sim.inputs.errors import UserError
from sim.rules.clusters import cluster_occupancy, gpc_layout
from sim.rules.devices import preset
from sim.schedule.scheduler import SmOrderPlacement, TpcSpreadPlacement, UniformCost, simulate


@pytest.mark.parametrize("cluster, per_sm, placement", [(2, 8, TpcSpreadPlacement()), (4, 1, SmOrderPlacement()),
                                                        (8, 1, TpcSpreadPlacement()), (16, 2, SmOrderPlacement()),
                                                        (8, 3, TpcSpreadPlacement())])
def test_clusters_stay_in_one_gpc_and_respect_the_limit(cluster, per_sm, placement):
    gpu = preset("H200")
    gpc_of_sm = {sm: g for g, sms in enumerate(gpc_layout(gpu)[0]) for sm in sms}
    limit = cluster_occupancy(gpu, per_sm, cluster).max_active_clusters
    n = cluster * limit * 3 + cluster * 5  # three full waves of clusters and a few more
    sim = simulate(gpu, n, per_sm, UniformCost(10.0, 0.3, seed=1), placement, cluster_size=cluster)
    sms = sim.block_sm.reshape(-1, cluster)
    starts = sim.block_start_us.reshape(-1, cluster)
    for k in range(sms.shape[0]):
        assert len({gpc_of_sm[int(sm)] for sm in sms[k]}) == 1, k
    assert np.all(starts == starts[:, :1])  # co-scheduled: every block of a cluster starts together
    # the first wave is exactly the cluster limit; with equal blocks, every wave is
    assert np.sum(starts[:, 0] == 0.0) == limit
    even = simulate(gpu, n, per_sm, UniformCost(10.0), placement, cluster_size=cluster)
    first = even.block_start_us.reshape(-1, cluster)[:, 0]
    assert np.all(np.unique(first, return_counts=True)[1][:3] == limit)
    # an SM never holds more blocks than its slots
    for t in np.unique(sim.block_start_us):
        live = (sim.block_start_us <= t) & (sim.block_end_us > t)
        assert np.bincount(sim.block_sm[live], minlength=gpu.sm_count).max() <= per_sm


def test_a_grid_of_partial_clusters_is_refused():
    with pytest.raises(UserError, match="whole number of clusters"):
        simulate(preset("H200"), 7, 1, cluster_size=2)


def test_simulate_command_runs_waves_of_whole_clusters(capsys):
    """Equal 10 us blocks, one per SM: 3,912 blocks are 489 clusters of 8; the H200 holds 15 at
    once (2 x 2 + 5 x 2 + 1 + 4 x 0), so 33 waves: 330 us, where 132 slots would take 30."""
    import json

    import main

    assert main.main(["simulate", "--cluster", "8", "--smem", "120K", "--schedule", "ideal",
                      "--cost", "uniform", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["blocks"] == 3912 and out["waves"] == 33
    assert abs(out["makespan_us"] - 330.0) < 1e-6
