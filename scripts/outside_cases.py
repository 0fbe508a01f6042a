#!/usr/bin/env python3
"""Write (or check) tests/data/volcano/cases.json and tests/data/kai/cases.json:
Volcano's and KAI Scheduler's topology allocation test tables, transcribed by
hand into rackfit problems (contract: /work/shared/PLACEMENT-MODEL.md).
Standard library only.  Sources and what was left out: the PORTING.md next to
each cases.json.

Every case holds the rackfit problem and the peer's expectation from its own
table:
  peer.binds      new pods the peer binds (ExpectBindsNum / NumberOfCacheBinds)
  peer.placement  the nodes the table names for new pods ({pod_set, node, count})
  peer.complete   true when placement names every new pod the peer binds
  peer.domains    D(l) per level of the peer's whole placement (bound pods
                  included), only when complete; else null
The generator also checks each peer placement against the problem: named
nodes exist, fit the free capacity and the node selector, and keep the hard
constraints (gang and pod-set required levels).

Usage: outside_cases.py [--check]
  --check   rebuild in memory and fail (exit 1) if a file differs.
"""
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HOST = "kubernetes.io/hostname"

# ------------------------------------------------------------------ helpers


def tier_level(t):
    return "volcano.sh/hypernode-tier-%d" % t


def problem(levels, nodes, gangs_topology, pod_sets):
    g = {"name": "job"}
    if gangs_topology:
        g["topology"] = gangs_topology
    g["pod_sets"] = pod_sets
    return {"cluster": {"levels": levels, "nodes": nodes}, "gangs": [g], "options": {"mode": "greedy"}}


def ps(name, count, requests, min_count=None, bound=None, selector=None, required=None):
    p = {"name": name, "count": count}
    if min_count is not None and min_count != count:
        p["min_count"] = min_count
    p["requests"] = dict(requests)
    if selector:
        p["node_selector"] = dict(selector)
    if required:
        p["topology"] = {"required": required}
    if bound:
        p["bound"] = [{"node": n, "count": c} for n, c in bound]
    return p


def domains_of(levels, nodes, used_nodes):
    by = {n["name"]: n for n in nodes}
    out = []
    for li in range(len(levels)):
        paths = set()
        for name in used_nodes:
            lab = by[name]["labels"]
            paths.add(tuple(lab[levels[k]] for k in range(li + 1)))
        out.append(len(paths))
    return out


def verify(case):
    """The peer's placement against the problem: existence, capacity,
    selector, required levels.  Raises on any mismatch."""
    pb = case["problem"]
    levels = pb["cluster"]["levels"]
    nodes = {n["name"]: n for n in pb["cluster"]["nodes"]}
    g = pb["gangs"][0]
    sets = {p["name"]: p for p in g["pod_sets"]}
    peer = case["peer"]
    load = {}
    per_set_nodes = {p: [b["node"] for b in sets[p].get("bound", [])] for p in sets}
    for pl in peer["placement"]:
        p = sets[pl["pod_set"]]
        n = nodes[pl["node"]]
        for k, v in p.get("node_selector", {}).items():
            assert n["labels"].get(k) == v, (case["name"], "selector", pl)
        load.setdefault(pl["node"], {})
        for r, q in list(p["requests"].items()) + [("pods", 1)]:
            load[pl["node"]][r] = load[pl["node"]].get(r, 0) + qty(r, q) * pl["count"]
        per_set_nodes[pl["pod_set"]].append(pl["node"])
    for name, l in load.items():
        n = nodes[name]
        for r, q in l.items():
            if r == "pods" and "pods" not in n.get("allocatable", {}):
                continue
            free = qty(r, n["allocatable"].get(r, 0)) - qty(r, n.get("used", {}).get(r, 0))
            assert q <= free, (case["name"], "capacity", name, r, q, free)
    req = g.get("topology", {}).get("required")
    everyone = [x for v in per_set_nodes.values() for x in v]
    if req and everyone:
        li = levels.index(req)
        assert len({tuple(nodes[x]["labels"][levels[k]] for k in range(li + 1)) for x in everyone}) == 1, (
            case["name"], "gang required")
    for p in sets.values():
        r = p.get("topology", {}).get("required")
        if r and per_set_nodes[p["name"]] and peer["complete"]:
            li = levels.index(r)
            got = {tuple(nodes[x]["labels"][levels[k]] for k in range(li + 1)) for x in per_set_nodes[p["name"]]}
            assert len(got) == 1, (case["name"], "pod set required", p["name"])
    if peer["complete"]:
        assert sum(pl["count"] for pl in peer["placement"]) == peer["binds"], (case["name"], "binds")


def qty(resource, v):
    """A quantity in base units (millicores for cpu), for the few forms the
    cases use: a plain integer, or one with m, k, M, G, Ki, Mi, Gi."""
    s = str(v)
    scale = 1000 if resource == "cpu" else 1
    if s.endswith("m"):
        return int(s[:-1])
    for suf, m in (("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10), ("G", 10**9), ("M", 10**6), ("k", 10**3)):
        if s.endswith(suf):
            return int(s[: -len(suf)]) * m * scale
    return int(s) * scale


def finish(case):
    pb = case["problem"]
    peer = case["peer"]
    peer.setdefault("placement", [])
    peer["complete"] = peer.get("complete", False)
    if peer["complete"]:
        used = [pl["node"] for pl in peer["placement"]]
        for p in pb["gangs"][0]["pod_sets"]:
            used += [b["node"] for b in p.get("bound", [])]
        peer["domains"] = domains_of(pb["cluster"]["levels"], pb["cluster"]["nodes"], used) if used else None
    else:
        peer["domains"] = None
    verify(case)
    return case


# ------------------------------------------------------------------ Volcano

V_POD = {"cpu": "2", "memory": "4G"}  # BuildResourceList("2", "4G")
V_CPU_M = 2000
V_MEM = 4 * 10**9


def v_cluster(tiers, node_names, extra_labels=None, used=None):
    """tiers: {tier: {hypernode: [node names]}} (flattened members, as the
    tables' HyperNodes map); levels coarsest tier first, then the hostname."""
    ts = sorted(tiers, reverse=True)
    levels = [tier_level(t) for t in ts] + [HOST]
    nodes = []
    for name in node_names:
        labels = {}
        for t in ts:
            hn = [h for h, members in tiers[t].items() if name in members]
            assert len(hn) == 1, (name, t, hn)
            labels[tier_level(t)] = hn[0]
        labels[HOST] = name
        labels.update((extra_labels or {}).get(name, {}))
        n = {"name": name, "labels": labels, "allocatable": {"cpu": "2", "memory": "4Gi", "pods": 10}}
        k = (used or {}).get(name, 0)
        if k:
            n["used"] = {"cpu": "%dm" % (V_CPU_M * k), "memory": str(V_MEM * k), "pods": k}
        nodes.append(n)
    return levels, nodes


def v_topology(tiers, mode, tier):
    """Volcano's networkTopology (mode, highestTierAllowed) as the gang's
    topology: hard -> required at that tier's level; a tier above every tier
    the HyperNode tree has (or an unknown tier name) -> no constraint, as
    Volcano admits such jobs across the whole cluster; soft -> preferred at
    that tier when it exists (no constraint in the contract either)."""
    if mode is None or tier is None or tier not in tiers:
        return None
    return {"required" if mode == "hard" else "preferred": tier_level(tier)}


T2 = {1: {"s0": ["s0-n1", "s0-n2"], "s1": ["s1-n3", "s1-n4"]}, 2: {"s2": ["s0-n1", "s0-n2", "s1-n3", "s1-n4"]}}
T01 = {0: {"s0": ["s0-n1", "s0-n2"], "s1": ["s1-n3", "s1-n4"]}, 1: {"s2": ["s0-n1", "s0-n2", "s1-n3", "s1-n4"]}}
T1 = {1: {"s0": ["s0-n1", "s0-n2"], "s1": ["s1-n3", "s1-n4"]}}
N4 = ["s0-n1", "s0-n2", "s1-n3", "s1-n4"]
TAFF = {0: {"s0": ["s0-n1"], "s1": ["s1-n2"]}}
NAFF = ["s0-n1", "s1-n2"]
AFF_LABELS = {"s1-n2": {"nodeRole": "master"}}
T3 = {
    1: {"s3": ["s3-n1", "s3-n2"], "s4": ["s4-n1", "s4-n2"], "s5": ["s5-n1", "s5-n2"], "s6": ["s6-n1", "s6-n2"]},
    2: {"s1": ["s3-n1", "s3-n2", "s4-n1", "s4-n2"], "s2": ["s5-n1", "s5-n2", "s6-n1", "s6-n2"]},
    3: {"s0": ["s3-n1", "s3-n2", "s4-n1", "s4-n2", "s5-n1", "s5-n2", "s6-n1", "s6-n2"]},
}
N8 = ["s3-n1", "s3-n2", "s4-n1", "s4-n2", "s5-n1", "s5-n2", "s6-n1", "s6-n2"]
T2N3 = {1: {"s0": ["s0-n1", "s0-n2"], "s1": ["s1-n3"]}, 2: {"s2": ["s0-n1", "s0-n2", "s1-n3"]}}
N3 = ["s0-n1", "s0-n2", "s1-n3"]

F_NT = "TestAllocateWithNetWorkTopologies"
F_NL = "TestNodeLevelScoreWithNetWorkTopologies"
F_PP = "TestAllocateWithPartitionPolicyNetworkTopology"
TIER_NAMES = {"volcano.sh/task-spec": 1, "volcano.sh/job-spec": 2, "volcano.sh/hypernode-spec": 3}


def vjob(name, fn, tiers, node_names, mode, tier, pod_sets_fn, binds, bind_map=None, complete=False, notes="",
         extra_labels=None):
    """One Volcano case.  pod_sets_fn(tiers) returns the pod sets; bound pods
    put their usage on their nodes."""
    sets = pod_sets_fn(tiers)
    used = {}
    for p in sets:
        for b in p.get("bound", []):
            used[b["node"]] = used.get(b["node"], 0) + b["count"]
    levels, nodes = v_cluster(tiers, node_names, extra_labels, used)
    pb = problem(levels, nodes, v_topology(tiers, mode, tier), sets)
    return finish({"name": name, "source": {"function": fn, "case": name},
                   "problem": pb,
                   "peer": {"binds": binds, "placement": bind_map or [], "complete": complete},
                   "notes": notes})


def one_set(count, min_count, bound=None, selector=None):
    return lambda tiers: [ps("tasks", count, V_POD, min_count, bound, selector)]


def bunches(spec):
    """spec: [(name, count, bound, required_tier)]: one pod set per bunch,
    each placed whole (min_count = count)."""
    def f(tiers):
        out = []
        for name, count, bound, t in spec:
            req = tier_level(t) if (t is not None and t in tiers) else None
            out.append(ps(name, count, V_POD, count, bound, None, req))
        return out
    return f


def volcano_cases():
    c = []
    B2 = [("s0-n1", 1), ("s0-n2", 1)]
    B3 = [("s3-n1", 1), ("s3-n2", 1)]
    # TestAllocateWithNetWorkTopologies
    c.append(vjob("soft network topology constrain, can allocate job when resources are enough", F_NT, T01, N4,
                  "soft", 0, one_set(3, 3), 3))
    c.append(vjob("soft network topology constrain, can allocate job when minavailable < replicas", F_NT, T2, N4,
                  "soft", 0, one_set(2, 1), 2))
    c.append(vjob("soft network topology constrain, two available hyperNodes, can allocate job to nodes with affinity",
                  F_NT, TAFF, NAFF, "soft", 0, one_set(1, 1, None, {"nodeRole": "master"}), 1,
                  [{"pod_set": "tasks", "node": "s1-n2", "count": 1}], True, extra_labels=AFF_LABELS))
    c.append(vjob("soft network topology constrain and tasks in job rescheduled, can allocate job when resources are "
                  "enough", F_NT, T2, N4, "soft", 0, one_set(3, 2, B2), 1))
    c.append(vjob("soft network topology constrain and tasks in job rescheduled, can allocate job when resources are "
                  "enough and minavailable = replicas", F_NT, T2, N4, "soft", 0, one_set(3, 3, B2), 1))
    c.append(vjob("soft network topology constrain and tasks in job rescheduled, can allocate job when cross "
                  "highestTierAllowed tier and hyperNodesInfo has three tier", F_NT, T3, N8, "soft", 0,
                  one_set(3, 2, B3), 1))
    c.append(vjob("hard network topology constrain, can not allocate job when cross highestTierAllowed tier", F_NT,
                  T2, N4, "hard", 1, one_set(3, 3), 0))
    c.append(vjob("hard network topology constrain, can allocate job when highestTierAllowed not reached", F_NT, T2,
                  N4, "hard", 2, one_set(3, 3), 3))
    c.append(vjob("hard network topology constrain, can allocate job when multi hyperNodes are available", F_NT, T2,
                  N4, "hard", 1, one_set(2, 2), 2))
    c.append(vjob("hard network topology constrain, can allocate job when minavailable < replicas", F_NT, T2, N4,
                  "hard", 1, one_set(2, 1), 2))
    c.append(vjob("hard network topology constrain, two available hyperNodes, can allocate job to nodes with affinity",
                  F_NT, TAFF, NAFF, "hard", 1, one_set(1, 1, None, {"nodeRole": "master"}), 1,
                  [{"pod_set": "tasks", "node": "s1-n2", "count": 1}], True, extra_labels=AFF_LABELS,
                  notes="highestTierAllowed 1 with only tier 0 in the tree: no constraint (the rule in PORTING.md)"))
    c.append(vjob("hard network topology constrain and tasks in job rescheduled, can allocate job when "
                  "highestTierAllowed not reached", F_NT, T2, N4, "hard", 2, one_set(3, 2, B2), 1))
    c.append(vjob("hard network topology constrain and tasks in job rescheduled, can allocate job when "
                  "highestTierAllowed not reached and minavailable = replicas", F_NT, T2, N4, "hard", 2,
                  one_set(3, 3, B2), 1))
    c.append(vjob("hard network topology constrain and tasks in job rescheduled, can allocate job when "
                  "highestTierAllowed not reached and hyperNodesInfo has three tier", F_NT, T3, N8, "hard", 2,
                  one_set(3, 2, B3), 1))
    c.append(vjob("hard network topology constrain and tasks in job rescheduled, can not allocate job when cross "
                  "highestTierAllowed tier", F_NT, T2, N4, "hard", 1, one_set(3, 2, B2), 0))
    c.append(vjob("hard network topology constrain and tasks in job rescheduled, can not allocate job when cross "
                  "highestTierAllowed tier and hyperNodesInfo has three tier", F_NT, T3, N8, "hard", 1,
                  one_set(3, 2, B3), 0))
    c.append(vjob("hard network topology constrain and tasks in job rescheduled, can allocate job when LCAHyperNode is "
                  "empty", F_NT, T1, N4, "hard", 2, one_set(3, 2, B2), 1,
                  notes="highestTierAllowed 2 with only tier 1 in the tree: no constraint"))
    tn = lambda name: TIER_NAMES.get(name)  # noqa: E731
    c.append(vjob("hard network topology constrain, can not allocate job when cross highestTierName tier", F_NT, T2,
                  N4, "hard", tn("volcano.sh/task-spec"), one_set(3, 3), 0))
    c.append(vjob("hard network topology constrain, can allocate job when the tier corresponding to highestTierName "
                  "not reached", F_NT, T2, N4, "hard", tn("volcano.sh/job-spec"), one_set(3, 3), 3))
    c.append(vjob("hard network topology constrain, can allocate job when multi hyperNodes are available "
                  "(highestTierName)", F_NT, T2, N4, "hard", tn("volcano.sh/task-spec"), one_set(2, 2), 2,
                  notes="the table repeats the name of an earlier case; '(highestTierName)' added here"))
    c.append(vjob("hard network topology constrain and task in job rescheduled, can allocate job when the tier "
                  "corresponding to highestTierName not reached", F_NT, T2, N4, "hard", tn("volcano.sh/job-spec"),
                  one_set(3, 2, B2), 1))
    c.append(vjob("hard network topology constrain and task in job rescheduled, can allocate job when the tier "
                  "corresponding to highestTierName not reached and minavailable = replicas", F_NT, T2, N4, "hard",
                  tn("volcano.sh/job-spec"), one_set(3, 3, B2), 1))
    c.append(vjob("hard network topology constrain and task in job rescheduled, can allocate job when the tier "
                  "corresponding to highestTierName not reached and hyperNodesInfo has three tier", F_NT, T3, N8,
                  "hard", tn("volcano.sh/job-spec"), one_set(1, 1), 1,
                  notes="the table's two running pods name nodes s0-n1 and s0-n2, which are not in its node list "
                        "(s3-n1 ... s6-n2): they take no capacity there and count only toward minMember, so "
                        "the port keeps the one pending pod"))
    c.append(vjob("hard network topology constrain and tasks in job rescheduled, can not allocate job when cross the "
                  "tier corresponding to highestTierName", F_NT, T2, N4, "hard", tn("volcano.sh/task-spec"),
                  one_set(3, 2, B2), 0))
    c.append(vjob("hard network topology with highestTierName constrain and tasks in job rescheduled, can allocate job "
                  "when here is no corresponding highestTierAllowed for highestTierName", F_NT, T1, N4, "hard",
                  tn("volcano.sh/hypercluster"), one_set(3, 2, B2), 1,
                  notes="an unknown tier name: no constraint"))
    # TestNodeLevelScoreWithNetWorkTopologies: pg2's running pods as used capacity
    levels, nodes = v_cluster(T2, N4)
    caps = {"s0-n1": ("4", "8Gi"), "s0-n2": ("8", "16Gi"), "s1-n3": ("4", "8Gi"), "s1-n4": ("8", "16Gi")}
    for n in nodes:
        n["allocatable"] = {"cpu": caps[n["name"]][0], "memory": caps[n["name"]][1], "pods": 10}
    nodes[0]["used"] = {"cpu": "2", "memory": "4Gi", "pods": 1}
    nodes[1]["used"] = {"cpu": "4", "memory": "8Gi", "pods": 1}
    pb = problem(levels, nodes, {"required": tier_level(1)},
                 [ps("master", 1, {"cpu": "2", "memory": "4Gi"}), ps("worker", 1, {"cpu": "4", "memory": "8Gi"})])
    c.append(finish({"name": "hard network topology constrain, allocate job to highest score hypeNode with node level "
                     "binpack", "source": {"function": F_NL, "case": "the one case"}, "problem": pb,
                     "peer": {"binds": 2, "complete": True,
                              "placement": [{"pod_set": "master", "node": "s0-n1", "count": 1},
                                            {"pod_set": "worker", "node": "s0-n2", "count": 1}]},
                     "notes": "pg2 (running, p3 on s0-n1, p4 on s0-n2) is the nodes' used capacity"}))
    # TestAllocateWithPartitionPolicyNetworkTopology
    pp = "podgroup hard network topology constrain and bunch soft network topology constrain"
    c.append(vjob(pp + ", can allocate job when resources are enough", F_PP, T01, N4, "hard", 2, one_set(3, 3), 3,
                  notes="highestTierAllowed 2 with tiers 0 and 1: no constraint; a soft bunch adds none"))
    c.append(vjob(pp + ", can allocate job when minavailable < replicas", F_PP, T2, N4, "hard", 1, one_set(2, 1), 2))
    c.append(vjob(pp + ", two available hyperNodes, can allocate job to nodes with affinity", F_PP, TAFF, NAFF, "hard",
                  1, one_set(1, 1, None, {"nodeRole": "master"}), 1,
                  [{"pod_set": "tasks", "node": "s1-n2", "count": 1}], True, extra_labels=AFF_LABELS))
    c.append(vjob(pp + " and tasks in job rescheduled, can allocate job when resources are enough", F_PP, T2, N4,
                  "hard", 2, one_set(3, 2, B2), 1))
    c.append(vjob(pp + " and tasks in job rescheduled, can allocate job when resources are enough and minavailable = "
                  "replicas", F_PP, T2, N4, "hard", 2, one_set(3, 3, B2), 1))
    c.append(vjob(pp + " and tasks in job rescheduled, can allocate job when cross highestTierAllowed tier and "
                  "hyperNodesInfo has three tier", F_PP, T3, N8, "hard", 2, one_set(3, 2, B3), 1))
    sp = "podgroup soft network topology constrain and bunch hard network topology constrain"
    c.append(vjob(sp + ", can allocate job when minavailable < replicas", F_PP, T2, N4, "soft", 0,
                  bunches([("master", 1, None, 1), ("worker", 1, None, 1)]), 2,
                  notes="minMember 1 of 2; each bunch placed whole (PORTING.md)"))
    c.append(vjob(sp + ", can not allocate job when cross highestTierAllowed tier", F_PP, T2, N4, "soft", 0,
                  bunches([("master", 1, None, 1), ("worker", 3, None, 1)]), 0))
    c.append(vjob(sp + " and tasks in job rescheduled, can allocate job when resources are enough", F_PP, T2, N4,
                  "soft", 0, bunches([("master", 1, [("s0-n1", 1)], 1), ("worker", 2, [("s1-n3", 1)], 1)]), 1,
                  [{"pod_set": "worker", "node": "s1-n4", "count": 1}], True))
    c.append(vjob(sp + " and tasks in job rescheduled, can not allocate job when cross highestTierAllowed tier and "
                  "hyperNodesInfo has three tier", F_PP, T3, N8, "soft", 0,
                  bunches([("master", 1, [("s3-n1", 1)], 2),
                           ("worker", 4, [("s3-n2", 1), ("s4-n1", 1), ("s4-n2", 1)], 2)]), 0))
    hp = "podgroup hard network topology constrain and bunch hard network topology constrain"
    c.append(vjob(hp + ", can allocate job when highestTierAllowed not reached", F_PP, T2, N4, "hard", 2,
                  bunches([("master", 1, None, 1), ("worker", 2, None, 1)]), 3))
    c.append(vjob(hp + ", can allocate job according to the network topology constrain of bunch policy", F_PP, T2N3,
                  N3, "hard", 2, bunches([("master", 1, None, 1), ("worker", 2, None, 1)]), 3,
                  [{"pod_set": "master", "node": "s1-n3", "count": 1}], False,
                  notes="bunch task1 (task-spec, size 1) is the master, bunch task2 (task-instance, size 2) the two "
                        "workers; the table names p1's node only"))
    c.append(vjob(hp + ", can allocate job when multi hyperNodes are available", F_PP, T2, N4, "hard", 2,
                  bunches([("master", 1, None, 1), ("worker", 1, None, 1)]), 2))
    c.append(vjob(hp + ", can allocate job when minavailable < replicas", F_PP, T2, N4, "hard", 2,
                  bunches([("master", 1, None, 1), ("worker", 1, None, 1)]), 2,
                  notes="bunch size 1: every pod its own bunch; minMember 1 of 2"))
    c.append(vjob(hp + " and tasks in job rescheduled, two available hyperNodes, can allocate job to nodes with "
                  "affinity", F_PP, T2, N4, "hard", 2,
                  bunches([("master", 1, [("s0-n1", 1)], 1), ("worker", 2, [("s1-n3", 1)], 1)]), 1,
                  [{"pod_set": "worker", "node": "s1-n4", "count": 1}], True))
    c.append(vjob(hp + " and tasks in job rescheduled, can allocate job when highestTierAllowed not reached and "
                  "minavailable = replicas", F_PP, T2, N4, "hard", 2,
                  bunches([("master", 1, [("s0-n1", 1)], 2), ("worker", 2, [("s0-n2", 1)], 2)]), 1))
    c.append(vjob(hp + " and tasks in job rescheduled, can allocate job when highestTierAllowed not reached and "
                  "hyperNodesInfo has three tier", F_PP, T3, N8, "hard", 3,
                  bunches([("master", 1, [("s3-n1", 1)], 2), ("worker", 2, [("s3-n2", 1)], 2)]), 1))
    c.append(vjob(hp + " and tasks in job rescheduled, can not allocate job when cross highestTierAllowed tier", F_PP,
                  T2, N4, "hard", 2, bunches([("master", 1, [("s0-n1", 1)], 1), ("worker", 2, [("s0-n2", 1)], 1)]),
                  0))
    c.append(vjob(hp + " and tasks in job rescheduled, can not allocate job when cross highestTierAllowed tier and "
                  "hyperNodesInfo has three tier", F_PP, T3, N8, "hard", 3,
                  bunches([("master", 1, [("s3-n1", 1)], 2),
                           ("worker", 4, [("s3-n2", 1), ("s4-n1", 1), ("s4-n2", 1)], 2)]), 0))
    c.append(vjob(hp + " and tasks in job rescheduled, can allocate job when LCAHyperNode is empty", F_PP, T1, N4,
                  "hard", 3, bunches([("master", 1, [("s0-n1", 1)], 2), ("worker", 2, [("s0-n2", 1)], 2)]), 1,
                  notes="highestTierAllowed 3 and bunch tier 2 with only tier 1 in the tree: no constraint"))
    return c


# ------------------------------------------------------------------ KAI

K_FN = "TestHandleTopologyAllocation (getTopologyTestsMetadata)"
AFF = "kai.test/node-affinity"  # tasks_fake.NodeAffinityKey: the table does not spell its value


def k_cluster(levels, spec, used=None):
    """spec: {node: (gpus, {label: value})}; levels: KAI's Topology levels
    (coarsest first), then the hostname."""
    nodes = []
    for name in sorted(spec, key=lambda s: int(s[4:])):
        gpus, labels = spec[name]
        lab = dict(labels)
        lab[HOST] = name
        n = {"name": name, "labels": lab, "allocatable": {"nvidia.com/gpu": gpus}}
        k = (used or {}).get(name, 0)
        if k:
            n["used"] = {"nvidia.com/gpu": k}
        nodes.append(n)
    return levels + [HOST], nodes


def evenly(zones, spines, racks, per_rack, gpus):
    """buildEvenlyDistributedTopologyNodes of the source file."""
    spec, i = {}, 0
    for z in range(1, zones + 1):
        for sp in range(1, spines + 1):
            for r in range(1, racks + 1):
                for _ in range(per_rack):
                    spec["node%d" % i] = (gpus, {"k8s.io/zone": "zone%d" % z,
                                                 "k8s.io/spine": "spine%d" % (sp + (z - 1) * spines),
                                                 "k8s.io/rack": "rack%d" % (r + (sp - 1) * racks +
                                                                            (z - 1) * spines * racks)})
                    i += 1
    return spec


def kjob(name, levels, spec, used, topo, sets, binds, placement, notes=""):
    lv, nodes = k_cluster(levels, spec, used)
    pb = problem(lv, nodes, topo, sets)
    return finish({"name": name, "source": {"function": K_FN, "case": name}, "problem": pb,
                   "peer": {"binds": binds, "placement": placement, "complete": binds > 0},
                   "notes": notes})


def pl(pod_set, node, count=1):
    return {"pod_set": pod_set, "node": node, "count": count}


def kai_cases():
    R, S, Z = "k8s.io/rack", "k8s.io/spine", "k8s.io/zone"
    g = lambda n: {"nvidia.com/gpu": n}  # noqa: E731
    c = []
    four1 = {"node0": (1, {R: "rack1"}), "node1": (1, {R: "rack1"}), "node2": (1, {R: "rack2"}),
             "node3": (1, {R: "rack2"})}
    c.append(kjob("Required topology level - schedule all tasks on the same rack", [R], four1, {"node0": 1},
                  {"required": R}, [ps("tasks", 2, g(1))], 2, [pl("tasks", "node2"), pl("tasks", "node3")]))
    aff = {"node0": (1, {R: "rack1"}), "node1": (1, {R: "rack1"}), "node2": (1, {R: "rack2", AFF: "affinity1"}),
           "node3": (1, {R: "rack2", AFF: "affinity1"})}
    c.append(kjob("Required topology level - could not schedule on first domain due to affinity, goes to next", [R],
                  aff, None, {"required": R},
                  [ps("task-0", 1, g(1), selector={AFF: "affinity1"}), ps("task-1", 1, g(1))], 2,
                  [pl("task-0", "node2"), pl("task-1", "node3")],
                  notes="task 0's node affinity as a node selector on label %s" % AFF))
    two = {"node0": (2, {R: "rack1", S: "spine1"}), "node1": (2, {R: "rack1", S: "spine2"})}
    c.append(kjob("Required topology with multiple levels - schedule all tasks on the same spine", [R, S], two,
                  {"node0": 1}, {"required": S}, [ps("tasks", 2, g(1))], 2, [pl("tasks", "node1", 2)]))
    rs4 = {"node0": (2, {R: "rack1", S: "spine1"}), "node1": (2, {R: "rack1", S: "spine2"}),
           "node2": (2, {R: "rack2", S: "spine1"}), "node3": (2, {R: "rack2", S: "spine2"})}
    c.append(kjob("Required topology with multiple levels - schedule all tasks on the same rack", [R, S], rs4,
                  {"node0": 1}, {"required": R}, [ps("tasks", 4, g(1))], 4,
                  [pl("tasks", "node2", 2), pl("tasks", "node3", 2)]))
    c.append(kjob("Required topology with multiple levels - schedule all tasks on the same partially occupied rack",
                  [R, S], two, {"node0": 1}, {"required": R}, [ps("tasks", 2, g(1))], 2,
                  [pl("tasks", "node0"), pl("tasks", "node1")]))
    c.append(kjob("Required topology with multiple levels - job remains pending as no available rack can be found",
                  [R, S], rs4, {"node0": 1, "node2": 1}, {"required": R}, [ps("tasks", 4, g(1))], 0, []))
    r2 = {"node0": (2, {R: "rack1"}), "node1": (2, {R: "rack2"})}
    c.append(kjob("Preferred topology - schedule job on the same rack", [R], r2, {"node0": 1}, {"preferred": R},
                  [ps("tasks", 2, g(1))], 2, [pl("tasks", "node1", 2)]))
    c.append(kjob("Preferred topology - schedule job even if preferred constraint can't be met", [R], r2,
                  {"node0": 1, "node1": 1}, {"preferred": R}, [ps("tasks", 2, g(1))], 2,
                  [pl("tasks", "node1"), pl("tasks", "node0")]))
    c.append(kjob("Combined preferred and required topology constraints - schedule job although preferred constraint "
                  "cannot be satisfied", [R, S], rs4, {"node0": 2, "node1": 1, "node2": 1, "node3": 1},
                  {"required": R, "preferred": S}, [ps("tasks", 2, g(1))], 2,
                  [pl("tasks", "node3"), pl("tasks", "node2")]))
    zr4 = {"node0": (2, {R: "rack1", Z: "zone1"}), "node1": (2, {R: "rack2", Z: "zone1"}),
           "node2": (2, {R: "rack3", Z: "zone2"}), "node3": (2, {R: "rack4", Z: "zone2"})}
    c.append(kjob("Required topology at multiple subgroup hierarchy levels - subgroup on the same rack and workload in "
                  "the same zone", [Z, R], zr4, {"node0": 2}, {"required": Z},
                  [ps("sub-a", 1, g(2), required=R), ps("sub-b", 1, g(2), required=R)], 2,
                  [pl("sub-a", "node2"), pl("sub-b", "node3")]))
    zsr8 = {"node0": (2, {R: "rack1", S: "spine1", Z: "zone1"}), "node1": (2, {R: "rack2", S: "spine1", Z: "zone1"}),
            "node2": (2, {R: "rack3", S: "spine2", Z: "zone1"}), "node3": (2, {R: "rack4", S: "spine2", Z: "zone1"}),
            "node4": (2, {R: "rack5", S: "spine3", Z: "zone2"}), "node5": (2, {R: "rack6", S: "spine3", Z: "zone2"}),
            "node6": (2, {R: "rack7", S: "spine4", Z: "zone2"}), "node7": (2, {R: "rack8", S: "spine4", Z: "zone2"})}
    rep_note = ("each replica subgroup (two one-pod pod sets of equal requests) is one pod set of two pods with the "
                "subgroup's required level; a one-pod pod set's own required rack holds trivially")
    c.append(kjob("Required topology at multiple subgroup hierarchy levels - rack, spine and zone", [Z, S, R], zsr8,
                  {"node0": 2}, {"required": Z},
                  [ps("replica1", 2, g(2), required=S), ps("replica2", 2, g(2), required=S)], 4,
                  [pl("replica1", "node4"), pl("replica1", "node5"), pl("replica2", "node6"),
                   pl("replica2", "node7")], notes=rep_note))
    c.append(kjob("Required topology constraint - prefer packed domain", [R],
                  {"node0": (10, {R: "rack1"}), "node1": (10, {R: "rack2"})}, {"node1": 1}, None,
                  [ps("sub-a", 1, g(1), required=R)], 1, [pl("sub-a", "node1")],
                  notes="the table's job has one task but its expected results also list pending_job0-1 on node1 and "
                        "two cache binds; ported with the one task the job has"))
    zr4g = {k: (4, v[1]) for k, v in zr4.items()}
    c.append(kjob("Preferred topology at multiple subgroup hierarchy levels - rack and zone", [Z, R], zr4g,
                  {"node0": 1}, {"preferred": Z},
                  [ps("encoder1", 1, g(2)), ps("decoder1", 1, g(2)), ps("encoder2", 1, g(2)),
                   ps("decoder2", 1, g(2))], 4,
                  [pl("encoder1", "node2"), pl("decoder1", "node2"), pl("encoder2", "node3"),
                   pl("decoder2", "node3")], notes="the replicas' preferred rack adds no constraint"))
    c.append(kjob("Required and preferred topology constraints combined at different levels - rack and zone", [Z, R],
                  zr4g, {"node0": 1}, {"preferred": Z},
                  [ps("replica1", 2, g(2), required=R), ps("replica2", 2, g(2), required=R)], 4,
                  [pl("replica1", "node2", 2), pl("replica2", "node3", 2)],
                  notes="replica = encoder + decoder (equal requests) as one pod set of two pods"))
    c.append(kjob("Required and preferred topology constraints with single unconstrained level", [Z, S, R], zsr8,
                  {"node0": 2}, {"preferred": Z},
                  [ps("replica1", 2, g(2), required=S), ps("replica2", 2, g(2), required=S)], 4,
                  [pl("replica1", "node4"), pl("replica1", "node5"), pl("replica2", "node6"),
                   pl("replica2", "node7")], notes=rep_note))
    one_rack = {"node%d" % i: (1, {R: "rack1", S: "spine%d" % (i // 2 + 1)}) for i in range(8)}
    c.append(kjob("Combined preferred and required topology constraints - preferred level respected when possible",
                  [R, S], one_rack, None, {"required": R, "preferred": S}, [ps("tasks", 3, g(1))], 3,
                  [pl("tasks", "node6"), pl("tasks", "node7"), pl("tasks", "node4")]))
    ev = evenly(1, 2, 2, 2, 1)
    six = [ps(n, 1, g(1)) for n in ("pod-a-1", "pod-a-2", "pod-a-3", "pod-b-1", "pod-b-2", "pod-b-3")]
    c.append(kjob("Hierarchical Preferred Topology - PodGroup prefers Spine, SubGroups has no preference - should "
                  "allocate on closest Spine nodes", [Z, S, R], ev, None, {"preferred": S}, six, 6,
                  [pl("pod-a-1", "node4"), pl("pod-a-2", "node5"), pl("pod-a-3", "node6"), pl("pod-b-1", "node7"),
                   pl("pod-b-2", "node0"), pl("pod-b-3", "node1")]))
    c.append(kjob("Hierarchical Conflicting Preferred Topology - PodGroup prefers Spine, SubGroups prefer Rack - should "
                  "allocate on closest Rack nodes", [Z, S, R], ev, None, {"preferred": S}, [dict(p) for p in six], 6,
                  [pl("pod-a-1", "node2"), pl("pod-a-2", "node3"), pl("pod-a-3", "node0"), pl("pod-b-1", "node6"),
                   pl("pod-b-2", "node7"), pl("pod-b-3", "node4")],
                  notes="the subgroups' preferred rack adds no constraint"))
    c.append(kjob("Bin Packing - allocate on domain with least free resources (most occupied)", [Z, S, R], ev,
                  {"node0": 1, "node1": 1, "node2": 1}, {"preferred": S}, [ps("tasks", 1, g(1))], 1,
                  [pl("tasks", "node3")]))
    top = {"node0": (1, {Z: "zone1", S: "spine1", R: "rack1"}), "node1": (1, {Z: "zone1", S: "spine1", R: "rack2"}),
           "node2": (1, {Z: "zone1", S: "spine1", R: "rack3"}), "node3": (1, {Z: "zone1", S: "spine2", R: "rack4"}),
           "node4": (1, {Z: "zone1", S: "spine2", R: "rack4"})}
    c.append(kjob("Bin Packing - Pack Top-Most domain first", [Z, S, R], top, None, {"preferred": R},
                  [ps("tasks", 1, g(1))], 1, [pl("tasks", "node3")]))
    return c


# ------------------------------------------------------------------ main


def dump(cases):
    return json.dumps(cases, indent=1, sort_keys=False) + "\n"


def main():
    check = "--check" in sys.argv[1:]
    out = {os.path.join(ROOT, "tests/data/volcano/cases.json"): dump(volcano_cases()),
           os.path.join(ROOT, "tests/data/kai/cases.json"): dump(kai_cases())}
    bad = 0
    for path, text in out.items():
        if check:
            try:
                with open(path) as f:
                    same = f.read() == text
            except OSError:
                same = False
            if not same:
                print("%s: differs from the generator's output" % path)
                bad = 1
        else:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as f:
                f.write(text)
            print("%s: %d cases" % (path, len(json.loads(text))))
    return bad


if __name__ == "__main__":
    sys.exit(main())
