#!/usr/bin/env python3
"""Check tests/data/kueue/cases.json (Kueue's TestFindTopologyAssignments ported
to rackfit problems) for internal consistency.  Standard library only.

For every case it checks:
  * the problem is valid per /work/shared/PLACEMENT-MODEL.md as far as these
    cases use it (known keys only, levels coarsest first with the hostname
    last when present, level_costs length, unique names, parseable quantities,
    whole extended resources, slices that divide their count and sit at or
    below the required levels, preferred not coarser than required);
  * Kueue's expected placement: counts sum to each pod set's count, every
    named node exists and lies in the recorded domain, every domain path is a
    real leaf domain, the placement fits the nodes' free capacity and the
    pods' eligibility (selector, taints, cordon, level labels), and it keeps
    the hard constraints (required levels, slices);
  * kueue_penalty equals sum_l cost_l * (D_l - 1) recomputed from the
    placement (bandwidth 1);
  * "contract": a brute-force search over every placement of the (tiny)
    problem gives whether the contract can admit the gang at all and the
    least penalty it can reach; this must equal the stored values, Kueue's
    admitted cases must be feasible and kueue_penalty >= min_penalty.

Usage: validate_kueue_cases.py [cases.json] [--write]
  --write   fill in kueue_penalty and the "contract" object instead of
            checking them (everything else is still checked).
Exit status 0 when every check passes, 1 otherwise.
"""
import json
import math
import os
import re
import sys
from fractions import Fraction

HOST = "kubernetes.io/hostname"

# --------------------------------------------------------------- quantities
_SUFFIX = {
    "": 1, "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15, "E": 10**18,
    "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60,
    "m": Fraction(1, 1000),
}
_QTY = re.compile(r"^([+-]?)(\d+(?:\.\d*)?|\.\d+)(?:([eE][+-]?\d+)|(Ki|Mi|Gi|Ti|Pi|Ei|m|k|M|G|T|P|E)?)$")


def parse_qty(resource, value):
    """Base units: millicores for cpu, whole units for everything else (rounded up)."""
    if isinstance(value, bool):
        raise ValueError("boolean is not a quantity")
    if isinstance(value, int):
        amount = Fraction(value)
    elif isinstance(value, float):
        amount = Fraction(value)
    elif isinstance(value, str):
        m = _QTY.match(value)
        if not m:
            raise ValueError("unparseable quantity %r" % value)
        sign, num, exp, suf = m.groups()
        amount = Fraction(num)
        if exp:
            amount *= Fraction(10) ** int(exp[1:])
        amount *= _SUFFIX[suf or ""]
        if sign == "-":
            amount = -amount
    else:
        raise ValueError("not a quantity: %r" % (value,))
    if amount < 0:
        raise ValueError("negative quantity %r" % (value,))
    if resource == "cpu":
        amount *= 1000
    elif resource not in ("memory", "ephemeral-storage", "pods") and not resource.startswith("hugepages-"):
        if amount.denominator != 1:
            raise ValueError("fractional amount of extended resource %s: %r" % (resource, value))
    base = math.ceil(amount)
    if base > 2**62:
        raise ValueError("quantity above 2^62: %r" % (value,))
    return base


def qty_map(d, where, errs):
    out = {}
    if not isinstance(d, dict):
        errs.append("%s: not an object" % where)
        return out
    for k, v in d.items():
        try:
            out[k] = parse_qty(k, v)
        except ValueError as e:
            errs.append("%s[%r]: %s" % (where, k, e))
    return out


# --------------------------------------------------------------- schema
KEYS = {
    "problem": {"cluster", "gangs", "options"},
    "cluster": {"levels", "level_costs", "nodes"},
    "node": {"name", "labels", "allocatable", "used", "taints", "unschedulable"},
    "taint": {"key", "value", "effect"},
    "gang": {"name", "priority", "bandwidth", "topology", "pod_sets"},
    "topology": {"required", "preferred"},
    "pod_set": {"name", "count", "min_count", "requests", "node_selector", "tolerations", "slice", "bound", "topology"},
    "toleration": {"key", "operator", "value", "effect"},
    "slice": {"size", "required"},
    "bound": {"node", "count"},
    "options": {"mode", "time_limit_ms", "threads", "admission", "value_resource"},
}
EFFECTS = {"NoSchedule", "PreferNoSchedule", "NoExecute"}


def check_keys(obj, kind, where, errs):
    if not isinstance(obj, dict):
        errs.append("%s: not an object" % where)
        return False
    for k in obj:
        if k not in KEYS[kind]:
            errs.append("%s.%s: unknown key" % (where, k))
    return True



def named(obj, kind, where, seen, errs):
    """check_keys, then obj's name: None (reported) when missing; a duplicate
    of one in `seen` is reported; the name joins `seen`."""
    check_keys(obj, kind, where, errs)
    name = obj.get("name")
    if not isinstance(name, str) or not name:
        errs.append("%s.name: missing" % where)
        return None
    if name in seen:
        errs.append("%s.name: duplicate %r" % (where, name))
    seen.add(name)
    return name

def validate_problem(p, errs):
    """Contract checks; returns a normalised model or None."""
    if not check_keys(p, "problem", "problem", errs):
        return None
    for req in ("cluster", "gangs"):
        if req not in p:
            errs.append("problem.%s: missing" % req)
            return None
    c = p["cluster"]
    check_keys(c, "cluster", "cluster", errs)
    levels = c.get("levels")
    if not isinstance(levels, list) or not (1 <= len(levels) <= 16) or not all(isinstance(x, str) for x in levels):
        errs.append("cluster.levels: must be 1..16 label keys")
        return None
    if len(set(levels)) != len(levels):
        errs.append("cluster.levels: duplicate level")
    if HOST in levels and levels[-1] != HOST:
        errs.append("cluster.levels: %s must be last" % HOST)
    k = len(levels)
    default_costs = [10 ** (k - 1 - i) for i in range(k)]
    costs = c.get("level_costs", default_costs)
    if not isinstance(costs, list) or len(costs) != k:
        errs.append("cluster.level_costs: must have one cost per level")
        costs = default_costs
    if costs != default_costs:
        errs.append("cluster.level_costs: %r is not the contract default %r (kueue_penalty assumes defaults)" % (costs, default_costs))
    lvl = {name: i for i, name in enumerate(levels)}

    nodes = []
    seen = set()
    for i, n in enumerate(c.get("nodes", [])):
        w = "cluster.nodes[%d]" % i
        name = named(n, "node", w, seen, errs)
        if name is None:
            continue
        labels = n.get("labels", {})
        alloc = qty_map(n.get("allocatable", {}), w + ".allocatable", errs)
        used = qty_map(n.get("used", {}), w + ".used", errs)
        taints = n.get("taints", [])
        for t, tn in enumerate(taints):
            check_keys(tn, "taint", "%s.taints[%d]" % (w, t), errs)
            if tn.get("effect") not in EFFECTS:
                errs.append("%s.taints[%d].effect: bad effect" % (w, t))
        path = tuple(labels[l] for l in levels) if all(l in labels for l in levels) else None
        nodes.append({"name": name, "labels": labels, "alloc": alloc, "used": used, "taints": taints,
                      "unschedulable": bool(n.get("unschedulable", False)), "path": path})

    gangs = p["gangs"]
    if not isinstance(gangs, list) or len(gangs) != 1:
        errs.append("gangs: these cases hold exactly one gang")
        return None
    g = gangs[0]
    check_keys(g, "gang", "gangs[0]", errs)
    if not isinstance(g.get("name"), str):
        errs.append("gangs[0].name: missing")

    def topo(t, where):
        if t is None:
            return (None, None)
        check_keys(t, "topology", where, errs)
        r, pf = t.get("required"), t.get("preferred")
        for key, v in (("required", r), ("preferred", pf)):
            if v is not None and v not in lvl:
                errs.append("%s.%s: unknown level %r" % (where, key, v))
                return (None, None)
        if r is not None and pf is not None and lvl[pf] < lvl[r]:
            errs.append("%s.preferred: coarser than required" % where)
        return (lvl[r] if r is not None else None, lvl[pf] if pf is not None else None)

    g_req, _ = topo(g.get("topology"), "gangs[0].topology")
    pod_sets = []
    ps_names = set()
    for j, ps in enumerate(g.get("pod_sets", [])):
        w = "gangs[0].pod_sets[%d]" % j
        name = named(ps, "pod_set", w, ps_names, errs)
        count = ps.get("count")
        if not isinstance(count, int) or isinstance(count, bool) or count < 0:
            errs.append("%s.count: missing or not a count" % w)
            return None
        if ps.get("min_count", count) != count:
            errs.append("%s: these cases use no min_count" % w)
        bound = {}
        for b, bd in enumerate(ps.get("bound", [])):
            bw = "%s.bound[%d]" % (w, b)
            check_keys(bd, "bound", bw, errs)
            i = next((x for x, n in enumerate(nodes) if n["name"] == bd.get("node")), None)
            c = bd.get("count")
            if i is None or not isinstance(c, int) or c <= 0:
                errs.append("%s: needs a node of the cluster and a count > 0" % bw)
                continue
            bound[i] = bound.get(i, 0) + c
        if sum(bound.values()) > count:
            errs.append("%s.bound: more pods than count" % w)
        req = qty_map(ps.get("requests", {}), w + ".requests", errs)
        req["pods"] = req.get("pods", 0) + 1
        p_req, _ = topo(ps.get("topology"), w + ".topology")
        if p_req is not None and g_req is not None and p_req < g_req:
            errs.append("%s.topology.required: above the gang's required level" % w)
        sl = ps.get("slice")
        slice_ = None
        if sl is not None:
            check_keys(sl, "slice", w + ".slice", errs)
            size, sreq = sl.get("size"), sl.get("required")
            if not isinstance(size, int) or size <= 0:
                errs.append("%s.slice.size: must be > 0" % w)
            elif sreq not in lvl:
                errs.append("%s.slice.required: unknown level %r" % (w, sreq))
            else:
                if count % size:
                    errs.append("%s.slice: size %d does not divide count %d" % (w, size, count))
                for cover in (g_req, p_req):
                    if cover is not None and lvl[sreq] < cover:
                        errs.append("%s.slice.required: above a required level covering the pod set" % w)
                slice_ = (size, lvl[sreq])
        for t, tol in enumerate(ps.get("tolerations", [])):
            check_keys(tol, "toleration", "%s.tolerations[%d]" % (w, t), errs)
            if tol.get("operator", "Equal") not in ("Equal", "Exists"):
                errs.append("%s.tolerations[%d].operator: must be Equal or Exists" % (w, t))
        if bound and slice_:
            errs.append("%s: bound pods of a sliced pod set are not modelled here" % w)
        pod_sets.append({"name": name, "count": count, "req": req, "required": p_req, "slice": slice_, "bound": bound,
                         "selector": ps.get("node_selector", {}), "tolerations": ps.get("tolerations", [])})
    opts = p.get("options", {})
    check_keys(opts, "options", "options", errs)
    if opts.get("mode") != "greedy":
        errs.append("options.mode: the brief asks for greedy")
    return {"levels": levels, "costs": costs, "nodes": nodes, "gang_required": g_req, "pod_sets": pod_sets,
            "bandwidth": g.get("bandwidth", 1)}


# --------------------------------------------------------------- model
def tolerated(taint, tols):
    if taint.get("effect") not in ("NoSchedule", "NoExecute"):
        return True
    for t in tols:
        if t.get("effect") and t["effect"] != taint["effect"]:
            continue
        op = t.get("operator", "Equal")
        if op == "Exists":
            if not t.get("key") or t["key"] == taint["key"]:
                return True
        elif t.get("key") == taint["key"] and t.get("value", "") == taint.get("value", ""):
            return True
    return False


def eligible(node, ps):
    if node["path"] is None or node["unschedulable"]:
        return False
    if any(node["labels"].get(k) != v for k, v in ps["selector"].items()):
        return False
    return all(tolerated(t, ps["tolerations"]) for t in node["taints"])


def free_of(node):
    f = {r: max(0, a - node["used"].get(r, 0)) for r, a in node["alloc"].items()}
    return f


def fits(free, req, n):
    """Can n pods of request `req` fit in `free` (pods absent from allocatable = no limit)?"""
    for r, q in req.items():
        if q == 0:
            continue
        if r == "pods" and r not in free:
            continue
        if q * n > free.get(r, 0):
            return False
    return True


def max_pods(free, req):
    best = None
    for r, q in req.items():
        if q == 0 or (r == "pods" and r not in free):
            continue
        m = free.get(r, 0) // q
        best = m if best is None else min(best, m)
    return best if best is not None else 10**9


def constraints_ok(model, assign):
    """assign: list (per pod set) of {node_index: count}."""
    nodes, gr = model["nodes"], model["gang_required"]
    all_paths = [nodes[i]["path"] for a in assign for i, c in a.items() if c]
    if gr is not None and len({p[:gr + 1] for p in all_paths}) > 1:
        return False
    for ps, a in zip(model["pod_sets"], assign):
        paths = [nodes[i]["path"] for i, c in a.items() if c]
        if ps["required"] is not None and len({p[:ps["required"] + 1] for p in paths}) > 1:
            return False
        if ps["slice"]:
            size, L = ps["slice"]
            per = {}
            for i, c in a.items():
                key = nodes[i]["path"][:L + 1]
                per[key] = per.get(key, 0) + c
            if any(v % size for v in per.values()):
                return False
    return True


def penalty_of_paths(model, paths):
    tot = 0
    for l, c in enumerate(model["costs"]):
        tot += c * (len({p[:l + 1] for p in paths}) - 1)
    return model["bandwidth"] * tot


def brute_force(model):
    """Least contract penalty over every feasible placement, or None when none exists."""
    nodes, pss = model["nodes"], model["pod_sets"]
    best = [None]
    free0 = [free_of(n) for n in nodes]

    def rec_ps(k, free, assign):
        if k == len(pss):
            if constraints_ok(model, assign):
                paths = [nodes[i]["path"] for a in assign for i, c in a.items() if c]
                pen = penalty_of_paths(model, paths)
                if best[0] is None or pen < best[0]:
                    best[0] = pen
            return
        ps = pss[k]
        elig = [i for i, n in enumerate(nodes) if eligible(n, ps)]
        caps = [min(ps["count"], max_pods(free[i], ps["req"])) for i in elig]
        suffix = [0] * (len(elig) + 1)
        for t in range(len(elig) - 1, -1, -1):
            suffix[t] = suffix[t + 1] + caps[t]

        def rec_node(t, left, cur):
            if left == 0:
                nf = list(free)
                for i, c in cur.items():
                    nf[i] = {r: v - ps["req"].get(r, 0) * c for r, v in free[i].items()}
                whole = dict(cur)  # the new pods and the bound ones (already in `used`)
                for i, c in ps["bound"].items():
                    whole[i] = whole.get(i, 0) + c
                rec_ps(k + 1, nf, assign + [whole])
                return
            if t == len(elig) or suffix[t] < left:
                return
            i = elig[t]
            for c in range(min(caps[t], left), -1, -1):
                if c:
                    cur[i] = c
                rec_node(t + 1, left - c, cur)
                cur.pop(i, None)

        rec_node(0, ps["count"] - sum(ps["bound"].values()), {})

    rec_ps(0, free0, [])
    return best[0]


def check_placement(model, kueue, errs):
    """Validate Kueue's placement against the model; returns its penalty or None."""
    nodes, levels = model["nodes"], model["levels"]
    by_name = {n["name"]: i for i, n in enumerate(nodes)}
    leaves = {}
    for i, n in enumerate(nodes):
        if n["path"] is not None:
            leaves.setdefault(n["path"], []).append(i)
    ps_by_name = {ps["name"]: k for k, ps in enumerate(model["pod_sets"])}
    entries = []
    sums = [0] * len(model["pod_sets"])
    for e, pl in enumerate(kueue["placement"]):
        w = "kueue.placement[%d]" % e
        dom = tuple(pl.get("domain", ()))
        if len(dom) != len(levels) or dom not in leaves:
            errs.append("%s.domain %r: not a leaf domain of the cluster" % (w, list(dom)))
            continue
        k = ps_by_name.get(pl.get("pod_set"))
        if k is None:
            errs.append("%s.pod_set %r: no such pod set" % (w, pl.get("pod_set")))
            continue
        cnt = pl.get("count")
        if not isinstance(cnt, int) or cnt <= 0:
            errs.append("%s.count: must be a positive integer" % w)
            continue
        node = pl.get("node")
        if node is not None:
            if node not in by_name:
                errs.append("%s.node %r: no such node" % (w, node))
                continue
            if nodes[by_name[node]]["path"] != dom:
                errs.append("%s.node %r: not in domain %r" % (w, node, list(dom)))
                continue
            cands = [by_name[node]]
        else:
            cands = leaves[dom]
            if len(cands) == 1:
                errs.append("%s.node: null but the leaf domain holds the single node %r" % (w, nodes[cands[0]]["name"]))
        sums[k] += cnt
        entries.append((k, cnt, cands))
    for k, ps in enumerate(model["pod_sets"]):
        if sums[k] != ps["count"]:
            errs.append("kueue.placement: pod set %r gets %d pods, count is %d" % (ps["name"], sums[k], ps["count"]))
    if errs:
        return None
    # Bound pods are already in `used`: Kueue's entries on their nodes hold
    # them first, and only the rest must fit the free capacity.
    left = [dict(ps["bound"]) for ps in model["pod_sets"]]
    new_entries = []
    for k, cnt, cands in entries:
        if len(cands) == 1 and left[k].get(cands[0], 0):
            take = min(cnt, left[k][cands[0]])
            left[k][cands[0]] -= take
            cnt -= take
        if cnt:
            new_entries.append((k, cnt, cands))
    entries = new_entries
    for k, ps in enumerate(model["pod_sets"]):
        if any(left[k].values()):
            errs.append("kueue.placement: pod set %r does not keep its bound pods where they are" % ps["name"])
    if errs:
        return None

    # Can the entries be realised on the nodes (capacity, eligibility)?
    free = [free_of(n) for n in nodes]
    realised = [None]

    def rec(e, free, assign):
        if realised[0] is not None:
            return
        if e == len(entries):
            realised[0] = assign
            return
        k, cnt, cands = entries[e]
        ps = model["pod_sets"][k]
        cands = [i for i in cands if eligible(nodes[i], ps)]

        def split(t, left, cur, free):
            if realised[0] is not None:
                return
            if left == 0:
                a = [dict(x) for x in assign]
                for i, c in cur.items():
                    a[k][i] = a[k].get(i, 0) + c
                rec(e + 1, free, a)
                return
            if t == len(cands):
                return
            i = cands[t]
            for c in range(min(left, max_pods(free[i], ps["req"])), -1, -1):
                nf = list(free)
                nf[i] = {r: v - ps["req"].get(r, 0) * c for r, v in free[i].items()}
                if c:
                    cur[i] = c
                split(t + 1, left - c, cur, nf)
                cur.pop(i, None)

        split(0, cnt, {}, free)

    rec(0, free, [dict(ps["bound"]) for ps in model["pod_sets"]])
    if realised[0] is None:
        errs.append("kueue.placement: does not fit the nodes' free capacity / eligibility under the contract")
        return None
    if not constraints_ok(model, realised[0]):
        errs.append("kueue.placement: breaks a hard constraint of the contract problem (required level or slice)")
        return None
    return penalty_of_paths(model, [tuple(pl["domain"]) for pl in kueue["placement"]])


# --------------------------------------------------------------- main
def main(argv):
    write = "--write" in argv
    args = [a for a in argv[1:] if a != "--write"]
    here = os.path.dirname(os.path.abspath(__file__))
    path = args[0] if args else os.path.join(here, "..", "tests", "data", "kueue", "cases.json")
    with open(path) as f:
        cases = json.load(f)
    failed = 0
    names = set()
    summary = {"admitted": 0, "rejected": 0, "contract_prefers_other": 0, "rejected_but_contract_feasible": 0}
    for idx, case in enumerate(cases):
        errs = []
        name = case.get("name")
        if not isinstance(name, str) or name in names:
            errs.append("name missing or duplicate")
        names.add(name)
        for key in ("problem", "kueue", "notes"):
            if key not in case:
                errs.append("missing %r" % key)
        model = validate_problem(case.get("problem", {}), errs) if not errs else None
        k = case.get("kueue", {})
        info = ""
        if model is not None and not errs:
            best = brute_force(model)
            contract = {"feasible": best is not None, "min_penalty": best}
            if k.get("admitted"):
                summary["admitted"] += 1
                if not k.get("placement"):
                    errs.append("kueue: admitted without a placement")
                pen = check_placement(model, k, errs)
                if pen is not None:
                    if write:
                        k["kueue_penalty"] = pen
                    elif k.get("kueue_penalty") != pen:
                        errs.append("kueue_penalty %r, recomputed %r" % (k.get("kueue_penalty"), pen))
                    if best is None:
                        errs.append("Kueue admits, but the contract problem has no feasible placement")
                    elif pen < best:
                        errs.append("kueue_penalty %r below the brute-force minimum %r" % (pen, best))
                    elif pen > best:
                        summary["contract_prefers_other"] += 1
                        info = "contract prefers another placement: kueue %s > min %s" % (pen, best)
            else:
                summary["rejected"] += 1
                if k.get("placement"):
                    errs.append("kueue: rejected but has a placement")
                if not k.get("reason"):
                    errs.append("kueue: rejected without a reason")
                if "kueue_penalty" in k:
                    errs.append("kueue: rejected case carries kueue_penalty")
                if best is not None:
                    summary["rejected_but_contract_feasible"] += 1
                    info = "WARNING: Kueue rejects, the contract can place it (min penalty %s)" % best
            if write:
                case["contract"] = contract
            elif case.get("contract") != contract:
                errs.append("contract %r, recomputed %r" % (case.get("contract"), contract))
        if errs:
            failed += 1
            print("FAIL [%d] %s" % (idx, name))
            for e in errs:
                print("    " + e)
        elif info:
            print("ok   [%d] %s -- %s" % (idx, name, info))
    if write:
        with open(path, "w") as f:
            json.dump(cases, f, indent=1)
            f.write("\n")
    print("%d cases: %d failed; %d admitted by Kueue, %d rejected; contract prefers another placement in %d; "
          "Kueue-rejected but contract-feasible: %d%s"
          % (len(cases), failed, summary["admitted"], summary["rejected"], summary["contract_prefers_other"],
             summary["rejected_but_contract_feasible"], " (written)" if write else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
