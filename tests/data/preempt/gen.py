#!/usr/bin/env python3
"""tests/data/preempt/gen.py: writes the preemption benchmark problems of bench/RESULTS.md
("Preemption: one gang against 1,000 running gangs"): 1,024 full 8-GPU nodes (4 blocks x 8 racks
x 32 hosts), 1,000 running gangs (976 of one pod, 24 of two; priority 0 or 50; one in ten not
preemptible), one pending gang of priority 100 asking 24 8-GPU pods, with (`rack`) or without
(`any`) a required rack. Deterministic (seed 7). Run from the repository root."""
import json
import random


def gen(seed, rack_required):
    rnd = random.Random(seed)
    nodes = []
    for b in range(4):
        for r in range(8):
            for h in range(32):
                n = f"h-{b}-{r}-{h:02d}"
                nodes.append({"name": n,
                              "labels": {"example.com/block": f"b{b}", "example.com/rack": f"r{r}",
                                         "kubernetes.io/hostname": n},
                              "allocatable": {"nvidia.com/gpu": 8, "cpu": "96", "pods": 110},
                              "used": {"nvidia.com/gpu": 8, "cpu": "32", "pods": 1}})
    running, i = [], 0
    two = set(rnd.sample(range(1000), 24))
    for k in range(1000):
        pl = [i, i + 1] if k in two else [i]
        i += len(pl)
        g = {"name": f"run-{k:04d}", "priority": rnd.choice([0, 0, 0, 50]),
             "pod_sets": [{"name": "w", "requests": {"nvidia.com/gpu": 8, "cpu": "32"},
                           "placements": [{"node": nodes[n]["name"], "count": 1} for n in pl]}]}
        if rnd.random() < 0.1:
            g["preemptible"] = False
        running.append(g)
    gang = {"name": "train", "priority": 100,
            "pod_sets": [{"name": "w", "count": 24, "requests": {"nvidia.com/gpu": 8, "cpu": "32"}}]}
    if rack_required:
        gang["topology"] = {"required": "example.com/rack"}
    return {"cluster": {"levels": ["example.com/block", "example.com/rack", "kubernetes.io/hostname"],
                        "nodes": nodes},
            "running": running, "gangs": [gang], "options": {"mode": "greedy"}}


for name, rack in (("one-gang-rack-1024.json", True), ("one-gang-any-1024.json", False)):
    with open("tests/data/preempt/" + name, "w") as f:
        f.write(json.dumps(gen(7, rack), separators=(",", ":")))
