#!/usr/bin/env python3
"""tests/emulator/emuctl.py: drive the API server emulator from tests.

  emuctl.py URL nodes --blocks B --racks R --hosts H [--gpu 8] [--cpu 64] [--prefix P] [--label K=V]
  emuctl.py URL gang NAME --pods N [--ns NS] [--gpu G] [--cpu C] [--required LEVEL] [--slice-level L
            --slice-size S] [--podgroup MIN | --kueue] [--scheduler NAME] [--recreate] [--extra JSON]
  emuctl.py URL wait-bound NS GANG N [--timeout S]     every pod of the gang bound (N of them)
  emuctl.py URL wait-phase NS GANG PHASE N [--timeout S]
  emuctl.py URL wait-event NS SUBSTRING [--timeout S]  a FailedScheduling event whose message has it
  emuctl.py URL check [--levels L1,L2,...] [--partial-ok GANG]...  the invariants (see check())
  emuctl.py URL faults JSON | compact | state | cordon NODE
  emuctl.py URL node-lost NODE [--gone]   the node NotReady (or deleted) and its pods deleted, as the
                                          node lifecycle controller does; prints the pods it took
  emuctl.py URL make-ready NS GANG        every Running pod of the gang Ready (the kubelet's probe passing)
  emuctl.py URL annotation NS GANG KEY    a pod's (or else the PodGroup's) annotation KEY, or nothing
  emuctl.py URL nodes-of NS GANG          the gang's live pods' nodes, one per line: POD NODE
  emuctl.py URL state-bindings | delete-pod NS NAME
  emuctl.py URL bind NS NAME NODE [--uid UID] [--binding-name NAME]   (prints the HTTP status)
Exit status 0 on success, 1 when a wait times out or a check fails.
"""
import argparse
import http.client
import json
import socket
import sys
import time
from urllib.parse import urlparse

LEVELS = ["example.com/block", "example.com/rack", "kubernetes.io/hostname"]


class Api:
    def __init__(self, url, token=""):
        u = urlparse(url)
        self.host, self.port = u.hostname, u.port
        self.token = token
        self.conn = None

    def call(self, method, path, body=None, ctype="application/json"):
        for attempt in range(3):
            try:
                if self.conn is None:
                    self.conn = http.client.HTTPConnection(self.host, self.port, timeout=30)
                    self.conn.connect()
                    self.conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                hdr = {"Content-Type": ctype}
                if self.token:
                    hdr["Authorization"] = "Bearer " + self.token
                self.conn.request(method, path, json.dumps(body) if body is not None else None, hdr)
                r = self.conn.getresponse()
                data = r.read()
                return r.status, (json.loads(data) if data else {})
            except (ConnectionError, http.client.HTTPException, OSError):
                self.conn = None
                if attempt == 2:
                    raise
                time.sleep(0.1)

    def pods(self, ns=None):
        st, body = self.call("GET", "/api/v1/namespaces/%s/pods" % ns if ns else "/api/v1/pods")
        return body.get("items", [])

    def nodes(self):
        return self.call("GET", "/api/v1/nodes")[1].get("items", [])


def gang_of(p):
    labels = p["metadata"].get("labels") or {}
    return labels.get("scheduling.x-k8s.io/pod-group") or labels.get("kueue.x-k8s.io/pod-group-name")


def cmd_nodes(api, a):
    n = 0
    extra = dict(kv.split("=", 1) for kv in a.label)
    for b in range(a.blocks):
        for r in range(a.racks):
            for h in range(a.hosts):
                name = "%sb%d-r%d-h%d" % (a.prefix, b, r, h)
                labels = {LEVELS[0]: "b%d" % b, LEVELS[1]: "r%d" % r, LEVELS[2]: name, **extra}
                node = {"metadata": {"name": name, "labels": labels},
                        "spec": {},
                        "status": {"allocatable": {"cpu": str(a.cpu), "memory": "512Gi", "pods": "110",
                                                   "nvidia.com/gpu": str(a.gpu)},
                                   "conditions": [{"type": "Ready", "status": "True"}]}}
                st, body = api.call("POST", "/api/v1/nodes", node)
                if st != 201:
                    sys.exit("node %s: %s %s" % (name, st, body))
                n += 1
    print("%d nodes" % n)


def cmd_gang(api, a):
    ns = a.ns
    labels = {"emu/gang": a.name}
    anns = {}
    if a.podgroup is not None:
        labels["scheduling.x-k8s.io/pod-group"] = a.name
    if a.podgroup is not None and a.start == 0:
        pg = {"metadata": {"name": a.name, "namespace": ns}, "spec": {"minMember": a.podgroup}}
        st, body = api.call("POST", "/apis/scheduling.x-k8s.io/v1alpha1/namespaces/%s/podgroups" % ns, pg)
        if st != 201:
            sys.exit("podgroup: %s %s" % (st, body))
    elif a.kueue:
        labels["kueue.x-k8s.io/pod-group-name"] = a.name
        anns["kueue.x-k8s.io/pod-group-total-count"] = str(a.pods)
    if a.required:
        anns["kueue.x-k8s.io/podset-required-topology"] = a.required
    if a.slice_level:
        anns["kueue.x-k8s.io/podset-slice-required-topology"] = a.slice_level
        anns["kueue.x-k8s.io/podset-slice-size"] = str(a.slice_size)
    if a.recreate:
        labels["emu/recreate"] = "true"
    for kv in a.annotation:
        k, v = kv.split("=", 1)
        anns[k] = v
    extra = json.loads(a.extra) if a.extra else {}
    for i in range(a.start, a.start + a.pods):
        name = "%s-%d" % (a.name, i) if a.pods > 1 or a.podgroup is not None or a.kueue else a.name
        lab = dict(labels)
        lab["batch.kubernetes.io/job-completion-index"] = str(i)
        pod = {"metadata": {"name": name, "namespace": ns, "labels": lab, "annotations": dict(anns)},
               "spec": {"schedulerName": a.scheduler,
                        "containers": [{"name": "main", "image": "busybox",
                                        "resources": {"requests": {"cpu": a.cpu, "nvidia.com/gpu": str(a.gpu)},
                                                      "limits": {"nvidia.com/gpu": str(a.gpu)}}}],
                        **extra}}
        st, body = api.call("POST", "/api/v1/namespaces/%s/pods" % ns, pod)
        if st != 201:
            sys.exit("pod %s: %s %s" % (name, st, body))
    print("gang %s/%s: %d pods" % (ns, a.name, a.pods))


def _wait(fn, timeout):
    end = time.time() + timeout
    while True:
        ok, msg = fn()
        if ok:
            print(msg)
            return 0
        if time.time() > end:
            print("timeout: " + msg)
            return 1
        time.sleep(0.1)


def cmd_bind(api, a):
    """POST a Binding of NS/NAME to NODE; print the HTTP status."""
    meta = {"name": a.binding_name or a.name, "namespace": a.ns}
    if a.uid:
        meta["uid"] = a.uid
    st, _ = api.call("POST", "/api/v1/namespaces/%s/pods/%s/binding" % (a.ns, a.name),
                     {"apiVersion": "v1", "kind": "Binding", "metadata": meta,
                      "target": {"apiVersion": "v1", "kind": "Node", "name": a.node}})
    print(st)
    return 0


def cmd_wait_bound(api, a):
    def f():
        pods = [p for p in api.pods(a.ns) if gang_of(p) == a.gang or p["metadata"]["name"] == a.gang]
        bound = [p for p in pods if p["spec"].get("nodeName")]
        return len(bound) >= a.n, "%s/%s: %d of %d pods bound (%d exist)" % (a.ns, a.gang, len(bound), a.n, len(pods))
    return _wait(f, a.timeout)


def cmd_wait_phase(api, a):
    def f():
        pods = [p for p in api.pods(a.ns) if gang_of(p) == a.gang or p["metadata"]["name"] == a.gang]
        n = sum(1 for p in pods if (p.get("status") or {}).get("phase") == a.phase)
        return n >= a.n, "%s/%s: %d of %d pods %s" % (a.ns, a.gang, n, a.n, a.phase)
    return _wait(f, a.timeout)


def cmd_wait_event(api, a):
    def f():
        st, body = api.call("GET", "/api/v1/namespaces/%s/events" % a.ns)
        hits = [e for e in body.get("items", []) if e.get("reason") == a.reason and a.text in e.get("message", "")]
        return bool(hits), "%d %s events with %r" % (len(hits), a.reason, a.text)
    return _wait(f, a.timeout)


def live_pods(api, ns, gang):
    return [p for p in api.pods(ns) if (gang_of(p) == gang or p["metadata"]["name"] == gang)
            and not p["metadata"].get("deletionTimestamp")]


def cmd_node_lost(api, a):
    if a.gone:
        st, body = api.call("DELETE", "/api/v1/nodes/" + a.node, {})
    else:
        st, node = api.call("GET", "/api/v1/nodes/" + a.node)
        conds = [c for c in node["status"].get("conditions", []) if c["type"] != "Ready"]
        conds.append({"type": "Ready", "status": "False", "reason": "NodeStatusUnknown"})
        st, body = api.call("PATCH", "/api/v1/nodes/%s/status" % a.node, {"status": {"conditions": conds}},
                            "application/merge-patch+json")
    if st != 200:
        sys.exit("node %s: %s %s" % (a.node, st, body))
    for p in api.pods():
        if p["spec"].get("nodeName") == a.node:
            md = p["metadata"]
            api.call("DELETE", "/api/v1/namespaces/%s/pods/%s" % (md["namespace"], md["name"]),
                     {"preconditions": {"uid": md["uid"]}})
            print(md["name"])
    return 0


def cmd_make_ready(api, a):
    n = 0
    for p in live_pods(api, a.ns, a.gang):
        if (p.get("status") or {}).get("phase") != "Running":
            continue
        conds = [c for c in p["status"].get("conditions", []) if c["type"] != "Ready"]
        conds.append({"type": "Ready", "status": "True", "lastTransitionTime": time.strftime("%Y-%m-%dT%H:%M:%SZ",
                                                                                          time.gmtime())})
        st, body = api.call("PATCH", "/api/v1/namespaces/%s/pods/%s/status" % (a.ns, p["metadata"]["name"]),
                            {"status": {"conditions": conds}}, "application/merge-patch+json")
        n += st == 200
    print("%d pods ready" % n)
    return 0


def cmd_annotation(api, a):
    for p in live_pods(api, a.ns, a.gang):
        v = (p["metadata"].get("annotations") or {}).get(a.key)
        if v:
            print(v)
            return 0
    st, pg = api.call("GET", "/apis/scheduling.x-k8s.io/v1alpha1/namespaces/%s/podgroups/%s" % (a.ns, a.gang))
    v = ((pg.get("metadata") or {}).get("annotations") or {}).get(a.key) if st == 200 else None
    if v:
        print(v)
    return 0


def cmd_nodes_of(api, a):
    for p in sorted(live_pods(api, a.ns, a.gang), key=lambda p: p["metadata"]["name"]):
        if p["spec"].get("nodeName"):
            if a.annotation:  # a third column: the annotation's value on the pod, `-` when absent
                print(p["metadata"]["name"], p["spec"]["nodeName"],
                      (p["metadata"].get("annotations") or {}).get(a.annotation) or "-")
            else:
                print(p["metadata"]["name"], p["spec"]["nodeName"])
    return 0


def check(api, levels, exempt=()):
    """No node over its allocatable (the emulator records it at every bind); no
    gang partly bound among its live pods; every bound gang with a required
    level inside one domain of that level."""
    problems = []
    st, state = api.call("GET", "/emu/state")
    for v in state["violations"]:
        problems.append("node %s over its %s after binding %s" % (v["node"], v["resource"], v["pod"]))
    nodes = {n["metadata"]["name"]: n["metadata"].get("labels", {}) for n in api.nodes()}
    gangs = {}
    for p in api.pods():
        g = gang_of(p)
        if not g or (p.get("status") or {}).get("phase") in ("Succeeded", "Failed") or p["metadata"].get(
                "deletionTimestamp"):
            continue
        gangs.setdefault((p["metadata"]["namespace"], g), []).append(p)
    for (ns, g), pods in sorted(gangs.items()):
        bound = [p for p in pods if p["spec"].get("nodeName")]
        if bound and len(bound) != len(pods) and g not in exempt:
            problems.append("gang %s/%s partly bound: %d of %d" % (ns, g, len(bound), len(pods)))
        req = (pods[0]["metadata"].get("annotations") or {}).get("kueue.x-k8s.io/podset-required-topology")
        if req and bound:
            li = levels.index(req)
            doms = {tuple(nodes.get(p["spec"]["nodeName"], {}).get(l) for l in levels[:li + 1]) for p in bound}
            if len(doms) > 1:
                problems.append("gang %s/%s spans %d domains of %s" % (ns, g, len(doms), req))
    return problems


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("url")
    ap.add_argument("--token", default="")
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("nodes")
    p.add_argument("--blocks", type=int, default=1)
    p.add_argument("--racks", type=int, default=1)
    p.add_argument("--hosts", type=int, default=1)
    p.add_argument("--gpu", type=int, default=8)
    p.add_argument("--cpu", type=int, default=64)
    p.add_argument("--prefix", default="")
    p.add_argument("--label", action="append", default=[])
    p = sub.add_parser("gang")
    p.add_argument("name")
    p.add_argument("--ns", default="default")
    p.add_argument("--pods", type=int, default=1)
    p.add_argument("--gpu", type=int, default=1)
    p.add_argument("--cpu", default="1")
    p.add_argument("--required")
    p.add_argument("--slice-level")
    p.add_argument("--slice-size", type=int, default=1)
    p.add_argument("--podgroup", type=int)
    p.add_argument("--kueue", action="store_true")
    p.add_argument("--scheduler", default="rackfit")
    p.add_argument("--recreate", action="store_true")
    p.add_argument("--extra")
    p.add_argument("--annotation", action="append", default=[])
    p.add_argument("--start", type=int, default=0)
    p = sub.add_parser("wait-bound")
    p.add_argument("ns")
    p.add_argument("gang")
    p.add_argument("n", type=int)
    p.add_argument("--timeout", type=float, default=30)
    p = sub.add_parser("wait-phase")
    p.add_argument("ns")
    p.add_argument("gang")
    p.add_argument("phase")
    p.add_argument("n", type=int)
    p.add_argument("--timeout", type=float, default=30)
    p = sub.add_parser("wait-event")
    p.add_argument("ns")
    p.add_argument("text")
    p.add_argument("--reason", default="FailedScheduling")
    p.add_argument("--timeout", type=float, default=30)
    p = sub.add_parser("node-lost")
    p.add_argument("node")
    p.add_argument("--gone", action="store_true")
    p = sub.add_parser("make-ready")
    p.add_argument("ns")
    p.add_argument("gang")
    p = sub.add_parser("annotation")
    p.add_argument("ns")
    p.add_argument("gang")
    p.add_argument("key")
    p = sub.add_parser("nodes-of")
    p.add_argument("ns")
    p.add_argument("gang")
    p.add_argument("--annotation", default="")
    p = sub.add_parser("check")
    p.add_argument("--levels", default=",".join(LEVELS))
    p.add_argument("--partial-ok", action="append", default=[], help="a gang that may be partly bound (node loss)")
    p = sub.add_parser("faults")
    p.add_argument("json")
    sub.add_parser("compact")
    sub.add_parser("state")
    sub.add_parser("state-bindings")
    p = sub.add_parser("delete-pod")
    p.add_argument("ns")
    p.add_argument("name")
    p = sub.add_parser("lease-steal")
    p.add_argument("ns")
    p.add_argument("name")
    p.add_argument("holder")
    p = sub.add_parser("bind")
    p.add_argument("ns")
    p.add_argument("name")
    p.add_argument("node")
    p.add_argument("--uid")
    p.add_argument("--binding-name")
    p = sub.add_parser("cordon")
    p.add_argument("node")
    a = ap.parse_args()
    api = Api(a.url, a.token)
    if a.cmd == "nodes":
        return cmd_nodes(api, a)
    if a.cmd == "gang":
        return cmd_gang(api, a)
    if a.cmd == "bind":
        return cmd_bind(api, a)
    if a.cmd == "wait-bound":
        return cmd_wait_bound(api, a)
    if a.cmd == "wait-phase":
        return cmd_wait_phase(api, a)
    if a.cmd == "wait-event":
        return cmd_wait_event(api, a)
    for name, fn in (("node-lost", cmd_node_lost), ("make-ready", cmd_make_ready), ("annotation", cmd_annotation),
                     ("nodes-of", cmd_nodes_of)):
        if a.cmd == name:
            return fn(api, a)
    if a.cmd == "check":
        probs = check(api, a.levels.split(","), a.partial_ok)
        for pr in probs:
            print("violation: " + pr)
        print("check: %d violations" % len(probs))
        return 1 if probs else 0
    if a.cmd == "faults":
        print(api.call("POST", "/emu/faults", json.loads(a.json))[1])
        return 0
    if a.cmd == "compact":
        print(api.call("POST", "/emu/compact", {})[1])
        return 0
    if a.cmd == "state-bindings":
        print(json.dumps(api.call("GET", "/emu/state")[1]["bindings"]))
        return 0
    if a.cmd == "delete-pod":
        st, body = api.call("DELETE", "/api/v1/namespaces/%s/pods/%s" % (a.ns, a.name), {})
        return 0 if st == 200 else 1
    if a.cmd == "state":
        st = api.call("GET", "/emu/state")[1]
        st.pop("bindings")
        st.pop("created")
        print(json.dumps(st, indent=1))
        return 0
    if a.cmd == "lease-steal":
        path = "/apis/coordination.k8s.io/v1/namespaces/%s/leases/%s" % (a.ns, a.name)
        st, lease = api.call("GET", path)
        lease["spec"]["holderIdentity"] = a.holder
        lease["spec"]["renewTime"] = time.strftime("%Y-%m-%dT%H:%M:%S.000000Z", time.gmtime())
        st, body = api.call("PUT", path, lease)
        print(st, body.get("spec"))
        return 0 if st == 200 else 1
    if a.cmd == "cordon":
        st, body = api.call("PATCH", "/api/v1/nodes/" + a.node, {"spec": {"unschedulable": True}},
                            "application/merge-patch+json")
        return 0 if st == 200 else 1


if __name__ == "__main__":
    sys.exit(main() or 0)
