#!/usr/bin/env python3
"""scripts/problem2dat.py: a contract JSON problem as GNU MathProg data for
models/placement.mod (node granularity).

    python3 scripts/problem2dat.py PROBLEM.json > P.dat
    glpsol -m models/placement.mod -d P.dat

Standard library only. Written from PLACEMENT-MODEL.md, independently of
librackfit: eligibility (every level label present, not cordoned, node
selector exact, NoSchedule/NoExecute taints tolerated by Kubernetes' rules),
domains (the path of label values; a node lacking a level label is a domain
of its own at that level and every finer one), free capacity in base units
(Kubernetes quantities: cpu in millicores, everything else in whole units,
rounded up) are computed here; the model only optimises. Running gangs
(`running`) become the model's V data: priority, whether they may be
preempted, value and penalty while kept, what they use on each node, and
the nodes' allocatable - used unclamped (`raw`). The problem is
assumed valid (run `rackfit solve` on it to validate); the little that is
checked here fails with a message on stderr and exit status 2.
"""

import json
import math
import sys
from fractions import Fraction

BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
DECIMAL = {"n": Fraction(1, 10**9), "u": Fraction(1, 10**6), "m": Fraction(1, 1000), "": 1,
           "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15, "E": 10**18}
UNITS_RESOURCES = ("memory", "ephemeral-storage", "storage")


def node_free(node, resources, clamp):
    """allocatable - used per resource in base units (-1: pods without a limit); clamp: never below 0."""
    alloc = node.get("allocatable") or {}
    used = node.get("used") or {}
    amounts = []
    for r in resources:
        if r == "pods" and "pods" not in alloc:
            amounts.append(-1)
            continue
        a = base_units(alloc[r], r) if r in alloc else 0
        u = base_units(used[r], r) if r in used else 0
        amounts.append(max(a - u, 0) if clamp else a - u)
    return amounts


def fail(msg):
    sys.stderr.write("problem2dat: %s\n" % msg)
    sys.exit(2)


def kind_of(resource):
    if resource == "cpu":
        return "milli"
    if resource in UNITS_RESOURCES or resource.startswith("hugepages-"):
        return "units"
    return "whole"


def parse_quantity(value, resource):
    """A Kubernetes quantity as an exact Fraction of the resource's unit."""
    if isinstance(value, bool):
        fail("%s: a quantity cannot be a boolean" % resource)
    if isinstance(value, int):
        q = Fraction(value)
    elif isinstance(value, float):
        q = Fraction(value)
    elif isinstance(value, str):
        s = value.strip()
        i = 0
        if i < len(s) and s[i] in "+-":
            i += 1
        while i < len(s) and (s[i].isdigit() or s[i] == "."):
            i += 1
        number, suffix = s[:i], s[i:]
        if number in ("", "+", "-", "."):
            fail("%s: bad quantity %r" % (resource, value))
        q = Fraction(number)
        if suffix in BINARY:
            q *= BINARY[suffix]
        elif suffix in DECIMAL:
            q *= DECIMAL[suffix]
        elif suffix[:1] in ("e", "E") and suffix[1:].lstrip("+-").isdigit():
            q *= Fraction(10) ** int(suffix[1:])
        else:
            fail("%s: bad quantity suffix in %r" % (resource, value))
    else:
        fail("%s: bad quantity %r" % (resource, value))
    if q < 0:
        fail("%s: negative quantity %r" % (resource, value))
    return q


def base_units(value, resource):
    """Base units as an int: millicores for cpu, whole units otherwise,
    rounded up as Kubernetes rounds them."""
    q = parse_quantity(value, resource)
    kind = kind_of(resource)
    if kind == "milli":
        return math.ceil(q * 1000)
    if kind == "whole" and q.denominator != 1:
        fail("%s: a fraction of a whole resource: %r" % (resource, value))
    return math.ceil(q)


def tolerates(tol, taint):
    """Kubernetes' ToleratesTaint."""
    effect = tol.get("effect") or ""
    if effect and effect != taint["effect"]:
        return False
    key = tol.get("key") or ""
    if key and key != taint["key"]:
        return False
    op = tol.get("operator") or "Equal"
    if op == "Exists":
        return True
    return (tol.get("value") or "") == (taint.get("value") or "")


def eligible(node, pod_set, levels):
    labels = node.get("labels") or {}
    if node.get("unschedulable"):
        return False
    if any(level not in labels for level in levels):
        return False
    for key, value in (pod_set.get("node_selector") or {}).items():
        if labels.get(key) != value:
            return False
    for taint in node.get("taints") or []:
        if taint["effect"] not in ("NoSchedule", "NoExecute"):
            continue
        if not any(tolerates(t, taint) for t in pod_set.get("tolerations") or []):
            return False
    return True


def quote(s):
    return "'" + str(s).replace("'", "''") + "'"


def running_data(pb, nodes, dom, costs, resources, value_resource, node_index):
    """The model's running-gang parameters (placement.mod, "Running gangs"),
    as data lines; none when the problem has no running gangs."""
    running = pb.get("running") or []
    if not running:
        return []
    never = (pb.get("options") or {}).get("preemption", "lower_priority") == "never"
    out = ["param nV := %d;" % len(running)]
    rows = {"vname": [], "vprio": [], "vpre": [], "vunits": [], "vpods": [], "vpen": []}
    use = {}  # (v, n, r) -> amount, summed over the gang's pod sets
    for v, run in enumerate(running):
        units = pods = 0
        on = set()
        for ps in run["pod_sets"]:
            requests = ps.get("requests") or {}
            per_node = {}
            for pl in ps["placements"]:
                n = node_index[pl["node"]]
                per_node[n] = per_node.get(n, 0) + pl["count"]
                on.add(n)
            k = sum(per_node.values())
            pods += k
            if value_resource == "pods":
                units += k
            elif value_resource in requests:
                units += k * base_units(requests[value_resource], value_resource)
            for n, c in sorted(per_node.items()):
                for r, name in enumerate(resources):
                    amount = c if name == "pods" else (c * base_units(requests[name], name) if name in requests else 0)
                    if amount:
                        use[(v + 1, n + 1, r + 1)] = use.get((v + 1, n + 1, r + 1), 0) + amount
        pen = float(run.get("bandwidth", 1)) * sum(
            float(costs[l]) * (len({dom[n][l] for n in on}) - 1) for l in range(len(costs)))
        rows["vname"].append(quote(run["name"]))
        rows["vprio"].append("%d" % run.get("priority", 0))
        rows["vpre"].append("%d" % (0 if never or not run.get("preemptible", True) else 1))
        rows["vunits"].append("%d" % units)
        rows["vpods"].append("%d" % pods)
        rows["vpen"].append("%r" % pen)
    for name, values in rows.items():
        out.append("param %s := %s;" % (name, " ".join("%d %s" % (v + 1, x) for v, x in enumerate(values))))
    if use:
        out.append("param vuse := %s;" % " ".join("[%d,%d,%d] %d" % (k + (a,)) for k, a in sorted(use.items())))
    out.append("param raw : %s :=" % " ".join(str(r + 1) for r in range(len(resources))))
    for i, node in enumerate(nodes):
        out.append("  %d %s" % (i + 1, " ".join(str(a) for a in node_free(node, resources, clamp=False))))
    out.append(";")
    return out


def main(argv):
    if len(argv) != 2:
        sys.stderr.write("usage: problem2dat.py PROBLEM.json > P.dat\n")
        return 2
    with open(argv[1], encoding="utf-8") as f:
        pb = json.load(f)
    cluster = pb["cluster"]
    levels = cluster["levels"]
    nl = len(levels)
    costs = cluster.get("level_costs") or [10 ** (nl - 1 - l) for l in range(nl)]
    nodes = cluster["nodes"]
    gangs = pb["gangs"]
    options = pb.get("options") or {}
    ordered = 1 if options.get("admission", "value") == "ordered" else 0
    value_resource = options.get("value_resource", "nvidia.com/gpu")
    node_index = {n["name"]: i for i, n in enumerate(nodes)}
    level_index = {l: i + 1 for i, l in enumerate(levels)}

    # domains: level l's domain of a node is its label path down to l; a node
    # lacking one of those labels is a domain of its own
    n_dom = []
    dom = [[0] * nl for _ in nodes]
    for l in range(nl):
        ids = {}
        count = 0
        for i, node in enumerate(nodes):
            labels = node.get("labels") or {}
            if all(levels[k] in labels for k in range(l + 1)):
                path = tuple(labels[levels[k]] for k in range(l + 1))
                if path not in ids:
                    count += 1
                    ids[path] = count
                dom[i][l] = ids[path]
            else:
                count += 1
                dom[i][l] = count
        n_dom.append(max(count, 1))

    # pod sets, flattened
    pod_sets = []  # (gang index, pod set)
    for g, gang in enumerate(gangs):
        for ps in gang["pod_sets"]:
            pod_sets.append((g, ps))
    resources = ["pods"]
    for _, ps in pod_sets:
        for r in (ps.get("requests") or {}):
            if r == "pods":
                fail("requests must not name pods")
            if r not in resources:
                resources.append(r)

    def level_of(topology_or_slice):
        if not topology_or_slice or topology_or_slice.get("required") is None:
            return 0
        return level_index[topology_or_slice["required"]]

    out = []
    w = out.append
    w("/* generated by scripts/problem2dat.py from %s */" % argv[1])
    w("data;")
    w("param nN := %d;" % len(nodes))
    w("param nL := %d;" % nl)
    w("param nG := %d;" % len(gangs))
    w("param nP := %d;" % len(pod_sets))
    w("param nR := %d;" % len(resources))
    w("param ordered := %d;" % ordered)
    w("/* levels: %s */" % ", ".join("%d %s" % (i + 1, l) for i, l in enumerate(levels)))
    w("/* resources: %s; value resource: %s */"
      % (", ".join("%d %s" % (i + 1, r) for i, r in enumerate(resources)), value_resource))
    w("/* nodes: %s */" % ", ".join("%d %s" % (i + 1, n["name"]) for i, n in enumerate(nodes)))
    w("param cost := %s;" % " ".join("%d %r" % (l + 1, float(costs[l])) for l in range(nl)))
    w("param nD := %s;" % " ".join("%d %d" % (l + 1, n_dom[l]) for l in range(nl)))
    if nodes:
        w("param dom : %s :=" % " ".join(str(l + 1) for l in range(nl)))
        for i in range(len(nodes)):
            w("  %d %s" % (i + 1, " ".join(str(d) for d in dom[i])))
        w(";")
    if gangs:
        w("param gname := %s;" % " ".join("%d %s" % (g + 1, quote(x["name"])) for g, x in enumerate(gangs)))
        w("param prio := %s;" % " ".join("%d %d" % (g + 1, x.get("priority", 0)) for g, x in enumerate(gangs)))
        w("param bw := %s;" % " ".join("%d %r" % (g + 1, float(x.get("bandwidth", 1))) for g, x in enumerate(gangs)))
        w("param greq := %s;" % " ".join("%d %d" % (g + 1, level_of(x.get("topology"))) for g, x in enumerate(gangs)))
    if pod_sets:
        rows = {"gang": [], "cnt": [], "mn": [], "preq": [], "sz": [], "slv": [], "val": []}
        for p, (g, ps) in enumerate(pod_sets):
            count = ps["count"]
            slice_ = ps.get("slice") or {}
            requests = ps.get("requests") or {}
            if value_resource == "pods":
                val = 1
            elif value_resource in requests:
                val = base_units(requests[value_resource], value_resource)
            else:
                val = 0
            rows["gang"].append(g + 1)
            rows["cnt"].append(count)
            rows["mn"].append(ps.get("min_count", count))
            rows["preq"].append(level_of(ps.get("topology")))
            rows["sz"].append(slice_.get("size", 0) if slice_ else 0)
            rows["slv"].append(level_of(slice_))
            rows["val"].append(val)
        for name, values in rows.items():
            w("param %s := %s;" % (name, " ".join("%d %d" % (p + 1, v) for p, v in enumerate(values))))
        w("param req : %s :=" % " ".join(str(r + 1) for r in range(len(resources))))
        for p, (g, ps) in enumerate(pod_sets):
            requests = ps.get("requests") or {}
            amounts = [1] + [base_units(requests[r], r) if r in requests else 0 for r in resources[1:]]
            w("  %d %s   /* %s/%s */" % (p + 1, " ".join(str(a) for a in amounts), gangs[g]["name"], ps["name"]))
        w(";")
        if nodes:
            w("param elig : %s :=" % " ".join(str(n + 1) for n in range(len(nodes))))
            for p, (g, ps) in enumerate(pod_sets):
                w("  %d %s" % (p + 1, " ".join("1" if eligible(n, ps, levels) else "0" for n in nodes)))
            w(";")
        bound = []
        for p, (g, ps) in enumerate(pod_sets):
            per_node = {}
            for b in ps.get("bound") or []:
                c = b.get("count", len(b.get("ranks") or []))
                per_node[node_index[b["node"]]] = per_node.get(node_index[b["node"]], 0) + c
            for n, c in sorted(per_node.items()):
                bound.append("[%d,%d] %d" % (p + 1, n + 1, c))
        if bound:
            w("param bnd := %s;" % " ".join(bound))
    if nodes:
        w("param free : %s :=" % " ".join(str(r + 1) for r in range(len(resources))))
        for i, node in enumerate(nodes):
            w("  %d %s" % (i + 1, " ".join(str(a) for a in node_free(node, resources, clamp=True))))
        w(";")
    for line in running_data(pb, nodes, dom, costs, resources, value_resource, node_index):
        w(line)
    w("end;")
    sys.stdout.write("\n".join(out) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
