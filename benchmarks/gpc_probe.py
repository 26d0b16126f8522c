"""Which SMs share a GPC, read off the hardware: the blocks of one thread-block cluster always run
in one GPC (Hopper), so every cluster names SMs of one GPC, and many clusters join them into the
GPCs (union-find). Each block pads itself with dynamic shared memory so that one fits on an SM:
a cluster of k blocks then spans k SMs.

Needs a Hopper GPU and cupy (the H200 image has cupy-cuda13x):
    python3 benchmarks/gpc_probe.py --out gpc_w_h200.json

The JSON holds each launch's (cluster, SM) pairs, the GPCs found (SM ids, sorted) and the driver's
distinct SMs each cluster size reached per launch. The launch model does not read it: it is the
check that refuted "the faster SMs are a GPC of their own" (benchmarks/NOTES-dispatch.md, eighth
session; resources/physics/H200.json "dram_share").
"""

from __future__ import annotations

import argparse
import json
import sys
import time

SOURCE = r"""
extern "C" __global__ void __cluster_dims__(CLUSTER, 1, 1)
where_am_i(unsigned int* sm_of_block, long long spin_ns) {
    extern __shared__ unsigned char pad[];
    unsigned int smid;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); } while ((long long)(t - t0) < spin_ns);
    if (threadIdx.x == 0) { pad[0] = 1; sm_of_block[blockIdx.x] = smid; }
}
"""


def gpcs_of(pairs: list[tuple[int, int]]) -> list[list[int]]:
    """SM ids joined when they ran blocks of one cluster: the GPCs (each sorted, largest first)."""
    parent: dict[int, int] = {}

    def find(a):
        while parent.setdefault(a, a) != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        return a

    by_cluster: dict[int, list[int]] = {}
    for cluster, sm in pairs:
        by_cluster.setdefault(cluster, []).append(sm)
    for sms in by_cluster.values():
        for sm in sms[1:]:
            parent[find(sm)] = find(sms[0])
        find(sms[0])
    groups: dict[int, list[int]] = {}
    for sm in parent:
        groups.setdefault(find(sm), []).append(sm)
    return sorted((sorted(g) for g in groups.values()), key=lambda g: (-len(g), g[0]))


def probe(cluster: int, launches: int, spin_ns: int, waves: int) -> dict:
    import cupy as cp

    mod = cp.RawModule(code=SOURCE, options=("-std=c++17", "-arch=sm_90", f"-DCLUSTER={cluster}"))
    fn = mod.get_function("where_am_i")
    props = cp.cuda.runtime.getDeviceProperties(cp.cuda.Device().id)
    smem = int(props["sharedMemPerMultiprocessor"]) // 2 + 1024  # one block per SM
    fn.max_dynamic_shared_size_bytes = smem
    sms = int(props["multiProcessorCount"])
    grid = (sms * waves // cluster) * cluster
    pairs, per_launch = [], []
    for i in range(launches):
        out = cp.full(grid, 0xFFFFFFFF, dtype=cp.uint32)
        fn((grid,), (128,), (out, cp.int64(spin_ns * (1 + i % 3))), shared_mem=smem)
        cp.cuda.Device().synchronize()
        got = out.get().tolist()
        launch = [(i * grid + b) // cluster for b in range(grid)]
        pairs += list(zip(launch, got))
        per_launch.append(len(set(got)))
    return {"cluster": cluster, "grid": grid, "launches": launches, "smem_per_block": smem,
            "distinct_sms_per_launch": per_launch, "pairs": pairs}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", required=True)
    p.add_argument("--launches", type=int, default=6)
    p.add_argument("--spin-ns", type=int, default=20000)
    p.add_argument("--waves", type=int, default=4)
    args = p.parse_args(argv)
    import cupy as cp

    props = cp.cuda.runtime.getDeviceProperties(0)
    doc = {"gpu": props["name"].decode() if isinstance(props["name"], bytes) else str(props["name"]),
           "sm_count": int(props["multiProcessorCount"]), "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
           "command": "python3 benchmarks/gpc_probe.py " + " ".join(argv or sys.argv[1:]), "probes": []}
    pairs = []
    for cluster in (2, 4, 8):
        try:
            r = probe(cluster, args.launches, args.spin_ns, args.waves)
        except Exception as exc:  # a size this GPU refuses is recorded, the others still run
            doc["probes"].append({"cluster": cluster, "error": f"{type(exc).__name__}: {exc}"})
            continue
        # clusters of different probes are different clusters
        pairs += [(cluster * 10**7 + c, sm) for c, sm in r["pairs"]]
        doc["probes"].append(r)
    doc["gpcs"] = gpcs_of(pairs)
    doc["gpc_sizes"] = [len(g) for g in doc["gpcs"]]
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump(doc, f)
    print(f"{doc['gpu']}: {len(doc['gpcs'])} GPCs of {doc['gpc_sizes']} SMs")
    for g in doc["gpcs"]:
        print(" ", g)
    for r in doc["probes"]:
        print("  cluster", r["cluster"], r.get("error") or f"distinct SMs per launch {r['distinct_sms_per_launch']}")
    return 0 if doc["gpcs"] else 1


if __name__ == "__main__":
    sys.exit(main())
