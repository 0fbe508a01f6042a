#!/usr/bin/env python3
"""tests/kube/kctl.py: drive a REAL kube-apiserver (scripts/kube/start.sh) from
the real-server tests (tests/integration/kube_*.sh). Python 3 standard library
plus PyYAML (for `apply`); TLS verified against $KUBE_CA, bearer token
$KUBE_ADMIN_TOKEN unless --token says otherwise; server $KUBE_API.

  kctl.py apply FILE...                     create or replace every object (multi-document YAML);
                                            waits for a CRD to be Established
  kctl.py nodes --blocks B --racks R --hosts H [--gpu 8] [--cpu 64] [--prefix P]
                                            nodes created with their status (Ready, allocatable)
  kctl.py gang NAME --pods N [--ns NS] [--gpu G] [--cpu C] [--required LEVEL] [--slice-level L
            --slice-size S] [--podgroup MIN | --kueue] [--scheduler NAME] [--start I] [--extra JSON]
  kctl.py kubelet [--reject REGEX=REASON]... [--not-ready REGEX] [--hold REGEX] [--log FILE]
                                            plays every node's kubelet until killed: a pod bound to a
                                            node is started (phase Running, Ready, startTime), or
                                            rejected (phase Failed, reason REASON) when its name
                                            matches; started but never Ready when it matches
                                            --not-ready; a bound pod being deleted is finished (DELETE,
                                            grace 0, uid precondition), as a kubelet does, unless its
                                            name matches --hold: it stays Terminating (holding its
                                            room) until `finish` ends it
  kctl.py finish NS GANG                    ends the gang's terminating pods (DELETE, grace 0, uid
                                            precondition): the kubelet, late; prints how many
  kctl.py monitor --log FILE                until killed: list+watch pods, and after every change
                                            compare each node's usage (every pod bound to it that is
                                            not Succeeded/Failed, terminating ones included) with its
                                            allocatable: one line per sample, "violation ..." when over
  kctl.py nominated NS GANG N [--timeout S] N pods of the gang are pending (no node) with
                                            status.nominatedNodeName set; prints pod=node pairs
  kctl.py nodes-of NS GANG                  "POD NODE NOMINATED" of the gang's bound pods, sorted
                                            (NOMINATED: status.nominatedNodeName, or -)
  kctl.py events NS --reason R              "POD MESSAGE" of every core/v1 Event with that reason
  kctl.py pdb NS NAME --match K=V --allowed N
                                            a PodDisruptionBudget (policy/v1, else v1beta1) selecting
                                            K=V, its status written as the disruption controller would
                                            (observedGeneration, disruptionsAllowed N): the test server
                                            runs no controller-manager
  kctl.py wait-bound NS GANG N [--timeout S]
  kctl.py wait-phase NS GANG PHASE N [--timeout S]
  kctl.py wait-gone NS GANG [--timeout S]  no pod of the gang exists any more
  kctl.py wait-event NS TEXT [--api core|events] [--reason R] [--timeout S]
                                            a FailedScheduling (or R) Event (core/v1 or events.k8s.io/v1)
                                            whose message (note) has TEXT
  kctl.py condition NS POD                  exit 0 when PodScheduled=False/Unschedulable with a message
  kctl.py check [--levels L1,L2,...]        no node over its allocatable, no gang partly bound,
                                            required domains kept (computed from the API's objects)
  kctl.py can-i USER VERB RESOURCE [--group G] [--sub SUB] [--ns NS] [--name N] [--groups G1,G2]
                                            a SubjectAccessReview: prints yes/no, exit 0 for yes
  kctl.py delete-gang NS GANG               force-deletes its pods (grace 0) and its PodGroup
  kctl.py lease NS NAME                     prints the holder
  kctl.py compact                           compacts etcd ($KUBE_ETCD) at its current revision
  kctl.py rbac-check RBAC_YAML AUDIT_LOG EXCEPTIONS USER GROUPS
                                            deploy/'s RBAC is exactly enough for USER: every rule bound
                                            to it is allowed (SubjectAccessReview), everything else in a
                                            matrix of resources x verbs is denied, and every granted
                                            (verb, group, resource) was used (audit log) unless
                                            EXCEPTIONS lists it with a reason
  kctl.py bind-time FILE NS GANG           from the audit log: the gang's last pod created -> its
                                            last binding answered 201, in ms (and the request counts)
  kctl.py audit-names FILE USER SUBRESOURCE
                                            "POD CODE" of every pods/SUBRESOURCE request of the user
  kctl.py audit FILE USER [--outside T0,T1]                  the (verb group resource subresource code) the user
                                            sent, from the API server's audit log, one per line, counted
Exit status 0 on success, 1 when a wait times out or a check fails, 2 for bad usage.
"""
import argparse
import base64
import http.client
import json
import os
import re
import ssl
import sys
import time
from urllib.parse import urlencode, urlparse

LEVELS = ["example.com/block", "example.com/rack", "kubernetes.io/hostname"]
GANG_LABELS = ("scheduling.x-k8s.io/pod-group", "kueue.x-k8s.io/pod-group-name")

# kind -> (path prefix for its apiVersion, plural, namespaced)
KINDS = {
    "Namespace": ("namespaces", False),
    "ServiceAccount": ("serviceaccounts", True),
    "ConfigMap": ("configmaps", True),
    "ClusterRole": ("clusterroles", False),
    "ClusterRoleBinding": ("clusterrolebindings", False),
    "Role": ("roles", True),
    "RoleBinding": ("rolebindings", True),
    "CustomResourceDefinition": ("customresourcedefinitions", False),
    "PodGroup": ("podgroups", True),
    "Deployment": ("deployments", True),
    "PriorityClass": ("priorityclasses", False),
}


class Api:
    """One keep-alive HTTPS connection; call() returns (status, parsed body)."""

    def __init__(self, url, token, ca):
        u = urlparse(url)
        self.host, self.port = u.hostname, u.port
        self.token = token
        self.ctx = ssl.create_default_context(cafile=ca)
        self.conn = None

    def _connect(self, timeout=30):
        return http.client.HTTPSConnection(self.host, self.port, context=self.ctx, timeout=timeout)

    def call(self, method, path, body=None, ctype="application/json"):
        for attempt in range(5):
            try:
                if self.conn is None:
                    self.conn = self._connect()
                hdr = {"Content-Type": ctype, "Authorization": "Bearer " + self.token, "Accept": "application/json"}
                self.conn.request(method, path, json.dumps(body) if body is not None else None, hdr)
                r = self.conn.getresponse()
                data = r.read()
                try:
                    parsed = json.loads(data) if data else {}
                except ValueError:
                    parsed = {"raw": data.decode(errors="replace")}
                return r.status, parsed
            except (ConnectionError, http.client.HTTPException, OSError):
                self.conn = None
                if attempt == 4:
                    raise
                time.sleep(0.5)

    def items(self, path):
        st, body = self.call("GET", path)
        if st != 200:
            raise RuntimeError("GET %s: %s %s" % (path, st, body.get("message", body)))
        return body.get("items", []), body["metadata"].get("resourceVersion", "")

    def pods(self, ns=None):
        return self.items("/api/v1/namespaces/%s/pods" % ns if ns else "/api/v1/pods")[0]

    def nodes(self):
        return self.items("/api/v1/nodes")[0]

    def watch(self, path, rv):
        """Yields watch events (dicts) until the stream ends."""
        conn = self._connect(timeout=120)
        q = urlencode({"watch": "1", "resourceVersion": rv, "allowWatchBookmarks": "true", "timeoutSeconds": "60"})
        conn.request("GET", path + "?" + q, headers={"Authorization": "Bearer " + self.token})
        r = conn.getresponse()
        if r.status != 200:
            r.read()
            conn.close()
            yield {"type": "ERROR", "object": {"code": r.status}}
            return
        try:
            while True:
                line = r.readline()
                if not line:
                    return
                yield json.loads(line)
        finally:
            conn.close()


def api_path(obj):
    kind = obj["kind"]
    if kind not in KINDS:
        raise SystemExit("apply: kind %s is not known to kctl.py" % kind)
    plural, namespaced = KINDS[kind]
    av = obj["apiVersion"]
    base = "/api/" + av if "/" not in av else "/apis/" + av
    ns = obj["metadata"].get("namespace") or "default"
    coll = "%s/namespaces/%s/%s" % (base, ns, plural) if namespaced else "%s/%s" % (base, plural)
    return coll, coll + "/" + obj["metadata"]["name"]


def cmd_apply(api, a):
    import yaml  # python3-yaml (scripts/bootstrap.sh)
    for f in a.files:
        with open(f) as fh:
            docs = [d for d in yaml.safe_load_all(fh) if d]
        for obj in docs:
            coll, one = api_path(obj)
            st, body = api.call("POST", coll, obj)
            if st == 409:
                st, cur = api.call("GET", one)
                obj["metadata"]["resourceVersion"] = cur["metadata"]["resourceVersion"]
                st, body = api.call("PUT", one, obj)
            if st not in (200, 201):
                sys.exit("apply %s %s: %s %s" % (obj["kind"], obj["metadata"]["name"], st, body.get("message", body)))
            print("%s/%s applied" % (obj["kind"], obj["metadata"]["name"]))
            if obj["kind"] == "CustomResourceDefinition":
                for _ in range(100):
                    st, cur = api.call("GET", one)
                    conds = (cur.get("status") or {}).get("conditions") or []
                    if any(c["type"] == "Established" and c["status"] == "True" for c in conds):
                        break
                    time.sleep(0.1)
                else:
                    sys.exit("CRD %s not Established" % obj["metadata"]["name"])
    return 0


def now():
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def cmd_nodes(api, a):
    n = 0
    for b in range(a.blocks):
        for r in range(a.racks):
            for h in range(a.hosts):
                name = "%sb%d-r%d-h%d" % (a.prefix, b, r, h)
                labels = {LEVELS[0]: "b%d" % b, LEVELS[1]: "b%d-r%d" % (b, r), LEVELS[2]: name}
                res = {"cpu": str(a.cpu), "memory": "512Gi", "pods": "110", "nvidia.com/gpu": str(a.gpu)}
                node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels},
                        "spec": {},
                        "status": {"capacity": res, "allocatable": res,
                                   "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                                                   "message": "kubelet is posting ready status (kctl.py)",
                                                   "lastHeartbeatTime": now(), "lastTransitionTime": now()}]}}
                st, body = api.call("POST", "/api/v1/nodes", node)
                if st != 201:
                    sys.exit("node %s: %s %s" % (name, st, body.get("message", body)))
                n += 1
    print("%d nodes" % n)
    return 0


def cmd_gang(api, a):
    ns = a.ns
    labels = {"rackfit-test/gang": a.name}
    anns = {}
    if a.podgroup is not None:
        labels["scheduling.x-k8s.io/pod-group"] = a.name
        if a.start == 0:
            pg = {"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup",
                  "metadata": {"name": a.name, "namespace": ns}, "spec": {"minMember": a.podgroup}}
            st, body = api.call("POST", "/apis/scheduling.x-k8s.io/v1alpha1/namespaces/%s/podgroups" % ns, pg)
            if st != 201:
                sys.exit("podgroup: %s %s" % (st, body.get("message", body)))
    elif a.kueue:
        labels["kueue.x-k8s.io/pod-group-name"] = a.name
        anns["kueue.x-k8s.io/pod-group-total-count"] = str(a.pods)
    if a.required:
        anns["kueue.x-k8s.io/podset-required-topology"] = a.required
    if a.slice_level:
        anns["kueue.x-k8s.io/podset-slice-required-topology"] = a.slice_level
        anns["kueue.x-k8s.io/podset-slice-size"] = str(a.slice_size)
    for kv in a.annotation:
        key, _, val = kv.partition("=")
        anns[key] = val
    extra = json.loads(a.extra) if a.extra else {}
    for i in range(a.start, a.start + a.pods):
        name = "%s-%d" % (a.name, i) if a.pods > 1 or a.podgroup is not None or a.kueue else a.name
        lab = dict(labels)
        lab["batch.kubernetes.io/job-completion-index"] = str(i)
        # a real server wants an extended resource's limit equal to its request
        res = {"requests": {"cpu": a.cpu}, "limits": {}}
        if a.gpu:
            res["requests"]["nvidia.com/gpu"] = str(a.gpu)
            res["limits"]["nvidia.com/gpu"] = str(a.gpu)
        pod = {"apiVersion": "v1", "kind": "Pod",
               "metadata": {"name": name, "namespace": ns, "labels": lab, "annotations": dict(anns)},
               "spec": {"schedulerName": a.scheduler, "restartPolicy": "Never",
                        "containers": [{"name": "main", "image": "busybox", "resources": res}], **extra}}
        st, body = api.call("POST", "/api/v1/namespaces/%s/pods" % ns, pod)
        if st != 201:
            sys.exit("pod %s: %s %s" % (name, st, body.get("message", body)))
    print("gang %s/%s: %d pods" % (ns, a.name, a.pods))
    return 0


# ---- the kubelet ---------------------------------------------------------------------------------------------------

def kubelet_step(api, pod, rejects, not_ready, log, hold=None):
    """One pod event: start or reject a newly bound pod; finish a deletion."""
    md, spec, status = pod["metadata"], pod.get("spec") or {}, pod.get("status") or {}
    node = spec.get("nodeName")
    if not node:
        return
    path = "/api/v1/namespaces/%s/pods/%s" % (md["namespace"], md["name"])
    if md.get("deletionTimestamp"):
        if hold and hold.search(md["name"]):
            log("hold delete %s/%s: it stays Terminating until the test finishes it" % (md["namespace"], md["name"]))
            return
        st, _ = api.call("DELETE", path, {"gracePeriodSeconds": 0, "preconditions": {"uid": md["uid"]}})
        log("finish delete %s/%s: %s" % (md["namespace"], md["name"], st))
        return
    if status.get("phase", "Pending") != "Pending" or status.get("startTime"):
        return
    t = now()
    for rx, reason in rejects:
        if rx.search(md["name"]):
            body = {"status": {"phase": "Failed", "reason": reason, "startTime": t,
                               "message": "Pod was rejected: Node didn't have enough resource (kctl.py kubelet)"}}
            break
    else:
        ready = "False" if not_ready and not_ready.search(md["name"]) else "True"
        conds = [{"type": c, "status": "True" if c == "Initialized" else ready, "lastProbeTime": None,
                  "lastTransitionTime": t} for c in ("Initialized", "Ready", "ContainersReady")]
        cs = [{"name": c["name"], "image": c.get("image", ""), "imageID": "", "ready": ready == "True", "restartCount": 0,
               "started": True, "state": {"running": {"startedAt": t}}} for c in spec.get("containers", [])]
        body = {"status": {"phase": "Running", "startTime": t, "hostIP": "127.0.0.1", "podIP": "127.0.0.1",
                           "conditions": conds, "containerStatuses": cs}}
    st, resp = api.call("PATCH", path + "/status", body, "application/strategic-merge-patch+json")
    log("%s %s/%s on %s: %s %s" % (body["status"]["phase"], md["namespace"], md["name"], node, st,
                                   "" if st == 200 else resp.get("message", "")))


def cmd_kubelet(api, a):
    rejects = []
    for r in a.reject:
        rx, _, reason = r.partition("=")
        rejects.append((re.compile(rx), reason or "OutOfnvidia.com/gpu"))
    not_ready = re.compile(a.not_ready) if a.not_ready else None
    hold = re.compile(a.hold) if a.hold else None
    out = open(a.log, "a", buffering=1) if a.log else sys.stdout

    def log(msg):
        out.write("%s %s\n" % (now(), msg))

    while True:
        try:
            pods, rv = api.items("/api/v1/pods")
            for p in pods:
                kubelet_step(api, p, rejects, not_ready, log, hold)
            while True:
                gone = False
                for ev in api.watch("/api/v1/pods", rv):
                    if ev["type"] == "ERROR":
                        gone = True
                        break
                    if ev["type"] == "BOOKMARK":
                        rv = ev["object"]["metadata"]["resourceVersion"]
                        continue
                    rv = ev["object"]["metadata"]["resourceVersion"]
                    if ev["type"] in ("ADDED", "MODIFIED"):
                        kubelet_step(api, ev["object"], rejects, not_ready, log, hold)
                if gone:
                    break  # relist
        except (OSError, RuntimeError, http.client.HTTPException, ValueError) as e:
            log("kubelet: %s; listing again in 0.5 s" % e)
            api.conn = None
            time.sleep(0.5)


# ---- waits and checks ----------------------------------------------------------------------------------------------

def gang_of(p):
    labels = p["metadata"].get("labels") or {}
    for k in GANG_LABELS:
        if labels.get(k):
            return labels[k]
    return labels.get("rackfit-test/gang")


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
        time.sleep(0.2)


def gang_pods(api, ns, gang):
    return [p for p in api.pods(ns) if gang_of(p) == gang]


def cmd_wait_bound(api, a):
    def f():
        pods = gang_pods(api, a.ns, a.gang)
        bound = [p for p in pods if p["spec"].get("nodeName")]
        return len(bound) >= a.n, "%s/%s: %d of %d pods bound (%d exist)" % (a.ns, a.gang, len(bound), a.n, len(pods))
    return _wait(f, a.timeout)


def cmd_wait_phase(api, a):
    def f():
        pods = gang_pods(api, a.ns, a.gang)
        n = sum(1 for p in pods if (p.get("status") or {}).get("phase") == a.phase)
        return n >= a.n, "%s/%s: %d of %d pods %s" % (a.ns, a.gang, n, a.n, a.phase)
    return _wait(f, a.timeout)


def cmd_wait_gone(api, a):
    def f():
        pods = gang_pods(api, a.ns, a.gang)
        return not pods, "%s/%s: %d pods left" % (a.ns, a.gang, len(pods))
    return _wait(f, a.timeout)


def cmd_wait_event(api, a):
    path = ("/api/v1/namespaces/%s/events" if a.api == "core" else "/apis/events.k8s.io/v1/namespaces/%s/events")

    def f():
        items, _ = api.items(path % a.ns)
        text = "message" if a.api == "core" else "note"
        hits = [e for e in items if e.get("reason") == a.reason and a.text in (e.get(text) or "")]
        return bool(hits), "%d %s events (%s) with %r of %d" % (len(hits), a.reason, a.api, a.text, len(items))
    return _wait(f, a.timeout)


def cmd_condition(api, a):
    st, p = api.call("GET", "/api/v1/namespaces/%s/pods/%s" % (a.ns, a.pod))
    conds = [c for c in (p.get("status") or {}).get("conditions") or [] if c["type"] == "PodScheduled"]
    print(conds)
    ok = conds and conds[0]["status"] == "False" and conds[0].get("reason") == "Unschedulable" and conds[0].get(
        "message")
    return 0 if ok else 1


def qty(name, v):
    m = re.fullmatch(r"([0-9.]+)([KMGTPE]i|[mkMGTPE]?)", str(v))
    if not m:
        raise ValueError("quantity %r" % v)
    mult = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60, "m": 1e-3, "": 1,
            "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "E": 1e18}[m.group(2)]
    return float(m.group(1)) * mult * (1000 if name == "cpu" else 1)


def check(api, levels):
    """No node over its allocatable (requests of its live pods, containers
    summed: the fixtures have no init containers or overhead); no gang partly
    bound among its live pods; every bound gang with a required level inside
    one domain of that level."""
    problems = []
    nodes = {n["metadata"]["name"]: n for n in api.nodes()}
    used = {}
    gangs = {}
    for p in api.pods():
        phase = (p.get("status") or {}).get("phase")
        if phase in ("Succeeded", "Failed"):
            continue
        node = p["spec"].get("nodeName")
        if node:
            u = used.setdefault(node, {})
            for r, v in pod_usage(p).items():
                u[r] = u.get(r, 0) + v
        g = gang_of(p)
        if g and not p["metadata"].get("deletionTimestamp"):
            gangs.setdefault((p["metadata"]["namespace"], g), []).append(p)
    for node, u in sorted(used.items()):
        alloc = nodes.get(node, {}).get("status", {}).get("allocatable", {})
        for r, v in u.items():
            if r in alloc and v > qty(r, alloc[r]) + 1e-9:
                problems.append("node %s over its %s: %g > %s" % (node, r, v, alloc[r]))
    labels = {n: o["metadata"].get("labels", {}) for n, o in nodes.items()}
    for (ns, g), pods in sorted(gangs.items()):
        bound = [p for p in pods if p["spec"].get("nodeName")]
        if bound and len(bound) != len(pods):
            problems.append("gang %s/%s partly bound: %d of %d" % (ns, g, len(bound), len(pods)))
        req = (pods[0]["metadata"].get("annotations") or {}).get("kueue.x-k8s.io/podset-required-topology")
        if req and bound:
            li = levels.index(req)
            doms = {tuple(labels.get(p["spec"]["nodeName"], {}).get(x) for x in levels[:li + 1]) for p in bound}
            if len(doms) > 1:
                problems.append("gang %s/%s spans %d domains of %s" % (ns, g, len(doms), req))
    return problems


def cmd_can_i(api, a):
    attrs = {"verb": a.verb, "resource": a.resource, "group": a.group}
    if a.sub:
        attrs["subresource"] = a.sub
    if a.ns:
        attrs["namespace"] = a.ns
    if a.name:
        attrs["name"] = a.name
    groups = [g for g in a.groups.split(",") if g] + ["system:authenticated"]
    sar = {"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
           "spec": {"user": a.user, "groups": groups, "resourceAttributes": attrs}}
    st, body = api.call("POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews", sar)
    if st != 201:
        print("SubjectAccessReview: %s %s" % (st, body.get("message", body)))
        return 2
    allowed = body.get("status", {}).get("allowed", False)
    print("yes" if allowed else "no")
    return 0 if allowed else 1


def cmd_delete_gang(api, a):
    for p in gang_pods(api, a.ns, a.gang):
        md = p["metadata"]
        st, body = api.call("DELETE", "/api/v1/namespaces/%s/pods/%s" % (md["namespace"], md["name"]),
                            {"gracePeriodSeconds": 0})
        if st not in (200, 404):
            sys.exit("delete %s: %s %s" % (md["name"], st, body.get("message", body)))
    api.call("DELETE", "/apis/scheduling.x-k8s.io/v1alpha1/namespaces/%s/podgroups/%s" % (a.ns, a.gang))
    print("gang %s/%s deleted" % (a.ns, a.gang))
    return 0


def cmd_finish(api, a):
    n = 0
    for p in gang_pods(api, a.ns, a.gang):
        md = p["metadata"]
        if not md.get("deletionTimestamp"):
            continue
        st, body = api.call("DELETE", "/api/v1/namespaces/%s/pods/%s" % (md["namespace"], md["name"]),
                            {"gracePeriodSeconds": 0, "preconditions": {"uid": md["uid"]}})
        if st not in (200, 404, 409):
            sys.exit("finish %s: %s %s" % (md["name"], st, body.get("message", body)))
        n += 1
    print("%d terminating pods of %s/%s finished" % (n, a.ns, a.gang))
    return 0


def pod_usage(p):
    u = {"pods": 1}
    for c in p["spec"]["containers"]:
        for r, v in ((c.get("resources") or {}).get("requests") or {}).items():
            u[r] = u.get(r, 0) + qty(r, v)
    return u


def cmd_monitor(api, a):
    """Node usage sampled at every pod change (list+watch): the moments in
    between change nothing, so this is 'at any moment' as the server saw it.
    A resource a node does not list in its allocatable is one it has none of
    (the placement contract), and so is every resource of a node not seen.
    A sample after an event names the pod and, when it is bound, its node."""
    out = open(a.log, "a", buffering=1)
    alloc = {}
    pods = {}
    samples = 0

    def sample(why):
        nonlocal samples
        samples += 1
        used = {}
        for p in pods.values():
            node = p["spec"].get("nodeName")
            if not node or (p.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
                continue
            u = used.setdefault(node, {})
            for r, v in pod_usage(p).items():
                u[r] = u.get(r, 0) + v
        for node, u in sorted(used.items()):
            for r, v in u.items():
                if v > alloc.get(node, {}).get(r, 0) + 1e-9:
                    out.write("violation: sample %d (%s): node %s over its %s: %g > %g\n" % (
                        samples, why, node, r, v, alloc.get(node, {}).get(r, 0)))
        out.write("sample %d (%s): %d pods, %d nodes in use\n" % (samples, why, len(pods), len(used)))

    while True:
        try:
            alloc = {n["metadata"]["name"]: {r: qty(r, v) for r, v in n["status"].get("allocatable", {}).items()}
                     for n in api.nodes()}
            items, rv = api.items("/api/v1/pods")
            pods = {(p["metadata"]["namespace"], p["metadata"]["name"]): p for p in items}
            sample("list")
            for ev in api.watch("/api/v1/pods", rv):
                if ev["type"] == "ERROR":
                    break
                o = ev["object"]
                key = (o["metadata"].get("namespace"), o["metadata"].get("name"))
                if ev["type"] == "BOOKMARK":
                    continue
                if ev["type"] == "DELETED":
                    pods.pop(key, None)
                else:
                    pods[key] = o
                node = o.get("spec", {}).get("nodeName") if ev["type"] != "DELETED" else None
                sample("%s %s/%s%s" % (ev["type"], key[0], key[1], " node=" + node if node else ""))
        except (OSError, RuntimeError, http.client.HTTPException, ValueError) as e:
            out.write("monitor: %s; listing again\n" % e)
            api.conn = None
            time.sleep(0.2)


def cmd_nominated(api, a):
    def f():
        pods = gang_pods(api, a.ns, a.gang)
        nom = sorted("%s=%s" % (p["metadata"]["name"], (p.get("status") or {}).get("nominatedNodeName"))
                     for p in pods if not p["spec"].get("nodeName") and (p.get("status") or {}).get("nominatedNodeName"))
        return len(nom) >= a.n, "%s/%s: %d of %d pods pending and nominated: %s" % (a.ns, a.gang, len(nom), a.n,
                                                                                   " ".join(nom))
    return _wait(f, a.timeout)


def cmd_stays_unbound(api, a):
    """Pass only when all of the gang's N pods exist and none is bound at any
    look during --for seconds (a look every 0.2 s, the last at the end)."""
    end = time.time() + a.for_s
    looks = 0
    while True:
        pods = gang_pods(api, a.ns, a.gang)
        bound = sorted(p["metadata"]["name"] for p in pods if p["spec"].get("nodeName"))
        looks += 1
        if len(pods) < a.n or bound:
            print("%s/%s: %d pods of %d exist, bound after %.1f s: %s" % (
                a.ns, a.gang, len(pods), a.n, a.for_s - max(0, end - time.time()), " ".join(bound) or "-"))
            return 1
        if time.time() >= end:
            break
        time.sleep(0.2)
    print("%s/%s: %d pods, none bound for %.1f s (%d looks)" % (a.ns, a.gang, len(pods), a.for_s, looks))
    return 0


def cmd_nodes_of(api, a):
    for p in sorted(gang_pods(api, a.ns, a.gang), key=lambda p: p["metadata"]["name"]):
        if p["spec"].get("nodeName"):
            line = "%s %s %s" % (p["metadata"]["name"], p["spec"]["nodeName"],
                                 (p.get("status") or {}).get("nominatedNodeName") or "-")
            if a.annotation:  # then the annotation's value on the pod, `-` when absent
                line += " " + ((p["metadata"].get("annotations") or {}).get(a.annotation) or "-")
            print(line)
    return 0


def cmd_wait_annotation(api, a):
    """Wait until some live pod of the gang carries the annotation; print its value."""
    def f():
        for p in gang_pods(api, a.ns, a.gang):
            v = (p["metadata"].get("annotations") or {}).get(a.key)
            if v and not p["metadata"].get("deletionTimestamp"):
                return True, v
        return False, "%s/%s: no pod with %s" % (a.ns, a.gang, a.key)
    return _wait(f, a.timeout)


def cmd_events(api, a):
    items, _ = api.items("/api/v1/namespaces/%s/events" % a.ns)
    for e in items:
        if e.get("reason") == a.reason:
            print("%s %s" % ((e.get("involvedObject") or {}).get("name"), (e.get("message") or "").replace("\n", " ")))
    return 0


def cmd_pdb(api, a):
    key, _, val = a.match.partition("=")
    for version in ("v1", "v1beta1"):
        coll = "/apis/policy/%s/namespaces/%s/poddisruptionbudgets" % (version, a.ns)
        pdb = {"apiVersion": "policy/" + version, "kind": "PodDisruptionBudget",
               "metadata": {"name": a.name, "namespace": a.ns},
               "spec": {"minAvailable": a.min_available, "selector": {"matchLabels": {key: val}}}}
        st, body = api.call("POST", coll, pdb)
        if st == 404:
            continue
        if st != 201:
            sys.exit("pdb %s: %s %s" % (a.name, st, body.get("message", body)))
        body["status"] = {"observedGeneration": body["metadata"].get("generation", 1),
                          "disruptionsAllowed": a.allowed, "currentHealthy": a.min_available + a.allowed,
                          "desiredHealthy": a.min_available, "expectedPods": a.min_available + a.allowed}
        st, out = api.call("PUT", coll + "/" + a.name + "/status", body)
        if st != 200:
            sys.exit("pdb %s status: %s %s" % (a.name, st, out.get("message", out)))
        print("PodDisruptionBudget %s/%s (policy/%s): disruptionsAllowed %d" % (a.ns, a.name, version, a.allowed))
        return 0
    sys.exit("pdb: the server serves neither policy/v1 nor policy/v1beta1")


def audit_events(path):
    """The audit log's events (one JSON object a line; torn lines skipped)."""
    with open(path) as fh:
        for line in fh:
            try:
                yield json.loads(line)
            except ValueError:
                continue


def cmd_audit_names(a):
    for ev in audit_events(a.file):
        o = ev.get("objectRef") or {}
        if (ev.get("stage") != "ResponseComplete" or (ev.get("user") or {}).get("username") != a.user or
                o.get("resource") != "pods" or (o.get("subresource") or "") != a.sub):
            continue
        print("%s/%s %s %s" % (o.get("namespace"), o.get("name"), o.get("apiVersion"),
                               (ev.get("responseStatus") or {}).get("code")))
    return 0


def cmd_lease(api, a):
    st, body = api.call("GET", "/apis/coordination.k8s.io/v1/namespaces/%s/leases/%s" % (a.ns, a.name))
    if st != 200:
        print("none (%s)" % st)
        return 1
    print((body.get("spec") or {}).get("holderIdentity") or "")
    return 0


def cmd_compact():
    """etcd v3's JSON gateway: read the revision, compact at it (physical)."""
    u = urlparse(os.environ["KUBE_ETCD"])
    c = http.client.HTTPConnection(u.hostname, u.port, timeout=30)
    key = base64.b64encode(b"/registry").decode()
    c.request("POST", "/v3/kv/range", json.dumps({"key": key, "limit": 1}))
    rev = int(json.loads(c.getresponse().read())["header"]["revision"])
    c.request("POST", "/v3/kv/compaction", json.dumps({"revision": rev, "physical": True}))
    r = c.getresponse()
    print("compacted at %d: %s %s" % (rev, r.status, r.read().decode()[:200]))
    return 0 if r.status == 200 else 1


PROBE_RESOURCES = [("", r) for r in ("pods", "pods/binding", "pods/status", "pods/eviction", "pods/log",
                                      "pods/exec", "nodes", "nodes/status", "events", "secrets", "configmaps",
                                      "services", "serviceaccounts", "namespaces")] + [
    ("events.k8s.io", "events"), ("policy", "poddisruptionbudgets"), ("scheduling.x-k8s.io", "podgroups"), ("scheduling.x-k8s.io", "podgroups/status"),
    ("coordination.k8s.io", "leases"), ("rbac.authorization.k8s.io", "clusterroles"), ("apps", "deployments"),
    ("batch", "jobs")]
PROBE_VERBS = ["get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"]


def sar(api, user, groups, verb, group, resource, ns=None, name=None):
    res, _, subres = resource.partition("/")
    attrs = {"verb": verb, "group": group, "resource": res}
    if subres:
        attrs["subresource"] = subres
    if ns:
        attrs["namespace"] = ns
    if name:
        attrs["name"] = name
    body = {"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
            "spec": {"user": user, "groups": groups, "resourceAttributes": attrs}}
    st, out = api.call("POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews", body)
    if st != 201:
        raise RuntimeError("SubjectAccessReview: %s %s" % (st, out.get("message", out)))
    return bool(out.get("status", {}).get("allowed"))


def rbac_rules(path, user):
    """The rules of the (Cluster)Roles bound to the ServiceAccount USER in the
    file: (verb, group, resource, namespace or None, resourceName or None)."""
    import yaml
    with open(path) as fh:
        docs = [d for d in yaml.safe_load_all(fh) if d]
    _, _, ns, name = user.split(":", 3)
    roles = {}
    for d in docs:
        if d["kind"] in ("ClusterRole", "Role"):
            roles[(d["kind"], d["metadata"].get("namespace"), d["metadata"]["name"])] = d.get("rules") or []
    rules = []
    for d in docs:
        if d["kind"] not in ("ClusterRoleBinding", "RoleBinding"):
            continue
        if not any(s.get("kind") == "ServiceAccount" and s.get("name") == name and s.get("namespace") == ns
                   for s in d.get("subjects") or []):
            continue
        ref = d["roleRef"]
        bns = d["metadata"].get("namespace") if d["kind"] == "RoleBinding" else None
        rns = bns if ref["kind"] == "Role" else None
        for r in roles.get((ref["kind"], rns, ref["name"]), []):
            for g in r.get("apiGroups", []):
                for res in r.get("resources", []):
                    for v in r.get("verbs", []):
                        for rn in r.get("resourceNames") or [None]:
                            rules.append((v, g, res, bns, rn))
    return rules


def cmd_rbac_check(api, a):
    groups = [g for g in a.groups.split(",") if g] + ["system:authenticated"]
    rules = rbac_rules(a.rbac, a.user)
    problems = []
    if not rules:
        problems.append("no rules in %s are bound to %s" % (a.rbac, a.user))
    for v, g, res, ns, rn in rules:
        if not sar(api, a.user, groups, v, g, res, ns or "default", rn):
            problems.append("granted by the file but refused by the server: %s %s/%s ns=%s name=%s" % (v, g, res, ns,
                                                                                                       rn))

    def granted(v, g, res, ns, name):
        return any(rv == v and rg == g and rr == res and (rns is None or rns == ns) and (rn is None or rn == name)
                   for rv, rg, rr, rns, rn in rules)
    lease_ns = next((ns for _, g, _, ns, _ in rules if g == "coordination.k8s.io" and ns), "default")
    n = 0
    for g, res in PROBE_RESOURCES:
        for v in PROBE_VERBS:
            for ns, name in (("default", None), (lease_ns, None), (lease_ns, "rackfit-watch")):
                allowed = sar(api, a.user, groups, v, g, res, ns, name)
                n += 1
                if allowed and not granted(v, g, res, ns, name):
                    problems.append("allowed but not in the file: %s %s/%s ns=%s name=%s" % (v, g or "core", res,
                                                                                            ns, name))
    used = set()
    for ev in audit_events(a.audit):
        if (ev.get("user") or {}).get("username") != a.user:
            continue
        o = ev.get("objectRef") or {}
        res = o.get("resource", "") + ("/" + o["subresource"] if o.get("subresource") else "")
        used.add((ev.get("verb"), o.get("apiGroup") or "", res))
    excused = {}
    with open(a.exceptions) as fh:
        for line in fh:
            line = line.split("#", 1)
            if len(line) == 2 and line[0].strip():
                v, g, res = line[0].split()
                excused[(v, "" if g == "core" else g, res)] = line[1].strip()
    for v, g, res, _, _ in sorted(set(rules), key=str):
        key = (v, g, res)
        if key not in used and key not in excused:
            problems.append("granted but never used by the watcher here (and not excused in %s): %s %s %s" % (
                os.path.basename(a.exceptions), v, g or "core", res))
        if key in used and key in excused:
            print("note: excused but used after all: %s %s %s" % (v, g or "core", res))
    for p in problems:
        print("rbac: " + p)
    print("rbac: %d rules bound, %d access reviews, %d used, %d excused, %d problems" % (
        len(rules), n + len(rules), len(used), len(excused), len(problems)))
    return 1 if problems else 0


def audit_ts(ev):
    """stageTimestamp (RFC 3339, microseconds) as seconds since the epoch."""
    import datetime
    t = ev["stageTimestamp"].rstrip("Z")
    return datetime.datetime.fromisoformat(t).replace(tzinfo=datetime.timezone.utc).timestamp()


def cmd_bind_time(a):
    prefix = a.gang + "-"
    created = bound = None
    n_bind = n_patch = 0
    for ev in audit_events(a.file):
        o = ev.get("objectRef") or {}
        if ev.get("stage") != "ResponseComplete" or o.get("namespace") != a.ns or o.get("resource") != "pods":
            continue
        name, code = o.get("name") or "", (ev.get("responseStatus") or {}).get("code")
        if ev["verb"] == "create" and not o.get("subresource") and code == 201:
            # a create's objectRef has no name in v1.20's audit: match the gang by request URI order instead
            created = audit_ts(ev)
        elif ev["verb"] == "create" and o.get("subresource") == "binding" and name.startswith(prefix):
            n_bind += 1
            if code == 201:
                bound = audit_ts(ev)
        elif ev["verb"] == "patch" and not o.get("subresource") and name.startswith(prefix):
            n_patch += 1
    if created is None or bound is None:
        print("bind-time: no creation or no binding of %s/%s* in %s" % (a.ns, prefix, a.file))
        return 1
    print("%.0f %d %d" % ((bound - created) * 1000, n_patch, n_bind))
    return 0


def cmd_audit(a):
    counts = {}
    for ev in audit_events(a.file):
        if ev.get("stage") != "ResponseComplete" or (ev.get("user") or {}).get("username") != a.user:
            continue
        if a.outside and a.outside[0] <= audit_ts(ev) <= a.outside[1]:
            continue
        o = ev.get("objectRef") or {}
        key = "%s %s %s %s %s" % (ev.get("verb"), o.get("apiGroup") or "core", o.get("resource", "-"),
                                  o.get("subresource") or "-", (ev.get("responseStatus") or {}).get("code"))
        counts[key] = counts.get(key, 0) + 1
    for k in sorted(counts):
        print("%s %d" % (k, counts[k]))
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--token", default=os.environ.get("KUBE_ADMIN_TOKEN", ""))
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("apply")
    p.add_argument("files", nargs="+")
    p = sub.add_parser("nodes")
    p.add_argument("--blocks", type=int, default=1)
    p.add_argument("--racks", type=int, default=1)
    p.add_argument("--hosts", type=int, default=1)
    p.add_argument("--gpu", type=int, default=8)
    p.add_argument("--cpu", type=int, default=64)
    p.add_argument("--prefix", default="")
    p = sub.add_parser("gang")
    p.add_argument("name")
    p.add_argument("--ns", default="default")
    p.add_argument("--pods", type=int, default=1)
    p.add_argument("--gpu", type=int, default=1)
    p.add_argument("--cpu", default="100m")
    p.add_argument("--required")
    p.add_argument("--slice-level")
    p.add_argument("--slice-size", type=int, default=1)
    p.add_argument("--podgroup", type=int)
    p.add_argument("--kueue", action="store_true")
    p.add_argument("--scheduler", default="rackfit")
    p.add_argument("--extra")
    p.add_argument("--annotation", action="append", default=[], help="KEY=VALUE on every pod")
    p.add_argument("--start", type=int, default=0)
    p = sub.add_parser("kubelet")
    p.add_argument("--reject", action="append", default=[])
    p.add_argument("--not-ready")
    p.add_argument("--hold")
    p.add_argument("--log")
    p = sub.add_parser("finish")
    p.add_argument("ns")
    p.add_argument("gang")
    p = sub.add_parser("monitor")
    p.add_argument("--log", required=True)
    p = sub.add_parser("nominated")
    p.add_argument("ns")
    p.add_argument("gang")
    p.add_argument("n", type=int)
    p.add_argument("--timeout", type=float, default=30)
    p = sub.add_parser("stays-unbound")
    p.add_argument("ns")
    p.add_argument("gang")
    p.add_argument("n", type=int)
    p.add_argument("--for", dest="for_s", type=float, required=True)
    p = sub.add_parser("nodes-of")
    p.add_argument("ns")
    p.add_argument("gang")
    p.add_argument("--annotation", default="")
    p = sub.add_parser("events")
    p.add_argument("ns")
    p.add_argument("--reason", required=True)
    p = sub.add_parser("pdb")
    p.add_argument("ns")
    p.add_argument("name")
    p.add_argument("--match", required=True)
    p.add_argument("--allowed", type=int, default=0)
    p.add_argument("--min-available", type=int, default=1)
    p = sub.add_parser("audit-names")
    p.add_argument("file")
    p.add_argument("user")
    p.add_argument("sub")
    for name, extra in (("wait-bound", ["n"]), ("wait-phase", ["phase", "n"]), ("wait-gone", [])):
        p = sub.add_parser(name)
        p.add_argument("ns")
        p.add_argument("gang")
        for e in extra:
            p.add_argument(e, type=int if e == "n" else str)
        p.add_argument("--timeout", type=float, default=30)
    p = sub.add_parser("wait-annotation")
    p.add_argument("ns")
    p.add_argument("gang")
    p.add_argument("key")
    p.add_argument("--timeout", type=float, default=30)
    p = sub.add_parser("wait-event")
    p.add_argument("ns")
    p.add_argument("text")
    p.add_argument("--api", choices=("core", "events"), default="core")
    p.add_argument("--reason", default="FailedScheduling")
    p.add_argument("--timeout", type=float, default=30)
    p = sub.add_parser("condition")
    p.add_argument("ns")
    p.add_argument("pod")
    p = sub.add_parser("check")
    p.add_argument("--levels", default=",".join(LEVELS))
    p = sub.add_parser("can-i")
    p.add_argument("user")
    p.add_argument("verb")
    p.add_argument("resource")
    p.add_argument("--group", default="")
    p.add_argument("--sub")
    p.add_argument("--ns")
    p.add_argument("--name")
    p.add_argument("--groups", default="")
    p = sub.add_parser("delete-gang")
    p.add_argument("ns")
    p.add_argument("gang")
    p = sub.add_parser("lease")
    p.add_argument("ns")
    p.add_argument("name")
    sub.add_parser("compact")
    p = sub.add_parser("rbac-check")
    p.add_argument("rbac")
    p.add_argument("audit")
    p.add_argument("exceptions")
    p.add_argument("user")
    p.add_argument("groups")
    p = sub.add_parser("bind-time")
    p.add_argument("file")
    p.add_argument("ns")
    p.add_argument("gang")
    p = sub.add_parser("audit")
    p.add_argument("file")
    p.add_argument("user")
    p.add_argument("--outside", type=lambda v: [float(x) for x in v.split(",")],
                   help="START,END (epoch seconds): leave out the requests answered in between")
    a = ap.parse_args()
    if a.cmd == "compact":
        return cmd_compact()
    if a.cmd == "audit":
        return cmd_audit(a)
    if a.cmd == "bind-time":
        return cmd_bind_time(a)
    if a.cmd == "audit-names":
        return cmd_audit_names(a)
    for var in ("KUBE_API", "KUBE_CA"):
        if not os.environ.get(var):
            print("kctl.py: %s is not set (source the env file scripts/kube/start.sh wrote)" % var, file=sys.stderr)
            return 2
    api = Api(os.environ["KUBE_API"], a.token, os.environ["KUBE_CA"])
    if a.cmd == "check":
        probs = check(api, a.levels.split(","))
        for pr in probs:
            print("violation: " + pr)
        print("check: %d violations" % len(probs))
        return 1 if probs else 0
    fn = {"apply": cmd_apply, "nodes": cmd_nodes, "gang": cmd_gang, "kubelet": cmd_kubelet,
          "wait-bound": cmd_wait_bound, "wait-phase": cmd_wait_phase, "wait-gone": cmd_wait_gone,
          "wait-event": cmd_wait_event, "condition": cmd_condition, "can-i": cmd_can_i, "lease": cmd_lease,
          "delete-gang": cmd_delete_gang, "rbac-check": cmd_rbac_check, "finish": cmd_finish,
          "monitor": cmd_monitor, "nominated": cmd_nominated, "events": cmd_events, "nodes-of": cmd_nodes_of, "pdb": cmd_pdb,
          "stays-unbound": cmd_stays_unbound, "wait-annotation": cmd_wait_annotation}[a.cmd]
    return fn(api, a)


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        sys.exit(130)
