#!/usr/bin/env python3
"""tests/emulator/kube_emulator.py: a Kubernetes API server emulator for
rackfit-watch's tests and benchmark (Python 3 standard library only).

It follows the real API's semantics for what the watcher uses:
- list (paged with limit/continue) and watch with resourceVersion,
  allowWatchBookmarks (BOOKMARK events), timeoutSeconds, and 410 Gone (an
  ERROR event with code 410 in a 200 stream, as the real server sends it)
  for a version older than the retained history;
- pods, nodes, scheduling.x-k8s.io/v1alpha1 PodGroups, core/v1 Events,
  coordination.k8s.io/v1 Leases (PUT with a stale resourceVersion is 409);
- POST pods/NAME/binding: 201, 404 (no pod), 409 (already bound, being
  deleted, or a uid precondition that does not match); Binding annotations
  are copied onto the pod, as the real server does;
- PATCH (merge patch; strategic merge for status.conditions, merged by type);
  a patch naming another uid is a 409;
- validation a real server does and the watcher must get right: timestamps
  (metav1.Time: RFC 3339; metav1.MicroTime: six fractional digits) on pod
  conditions (422), Events (400) and Leases (400); an extended resource
  requested without an equal limit (422);
- DELETE with preconditions.uid (409 on mismatch); a bound pod terminates
  gracefully (deletionTimestamp, then gone), an unbound one goes at once;
- POST pods/NAME/eviction (policy/v1 or policy/v1beta1 Eviction, uid
  precondition in deleteOptions): 201 and the same graceful delete, with the
  DisruptionTarget condition set first, as the real server does; 429 while a
  fault says a PodDisruptionBudget forbids it;
It also plays the parts of a kubelet (admits a bound pod after a delay,
Running with startTime and Ready=True, or rejects it with OutOf<resource>
when the node is over-committed, or on request) and of a Job controller (recreates a deleted pod labelled
emu/recreate=true from its original spec, with a new uid).

Faults, set with POST /emu/faults (JSON, merged into the current set):
  bind_fail:   {"REGEX": {"status": 500, "times": N}}   N < 0: always; with "apply": true
               the binding is applied first when it can be (a 5xx the server sent after
               committing, as a timed-out or cut answer looks to the client)
  throttle:    {"every": K, "retry_after": S, "path_re": "REGEX", "method": "POST"}
  drop_watch_after: S      streams are cut (no final chunk) after S seconds
  gone_as_http: true       answer a stale watch with HTTP 410 instead
  watch_error: CODE        every watch gets one ERROR event (Status CODE, not 410) and ends
  kubelet_reject: {"REGEX": "OutOfcpu"}
  kubelet_delay: S
  never_ready: REGEX       admitted pods whose name matches stay Running but never Ready
  succeed: REGEX           admitted pods whose name matches finish at once (phase Succeeded)
  evict_refuse: {"REGEX": N}  the next N evictions of matching pods get 429 (a PodDisruptionBudget)
  latency: S               added to every non-watch request
Control: POST /emu/compact (forget history, cut every stream: watchers
resume with a version that is now gone), GET /emu/state (bindings, capacity
violations, counters), POST /emu/reset-log.

Usage: kube_emulator.py --port N [--token T] [--tls-cert F --tls-key F]
                        [--bookmark-interval S] [--history N]
Prints "listening on PORT" when ready.
"""
import argparse
import bisect
import copy
import json
import os
import random
import re
import socket
import ssl
import string
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

# ---- quantities and pod requests (as Kubernetes computes them) ----------------------------------------------------

_SUFFIX = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60,
           "n": 1e-9, "u": 1e-6, "m": 1e-3, "": 1, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "E": 1e18}


def qty(name, v):
    """Base units: millicores for cpu, else units (rounded up)."""
    if isinstance(v, (int, float)):
        x = float(v)
    else:
        m = re.fullmatch(r"([+-]?[0-9.]+)(e[+-]?[0-9]+|E[+-]?[0-9]+|[KMGTPE]i|[numkMGTPE]?)", v.strip())
        if not m:
            raise ValueError("bad quantity %r" % v)
        num, suf = m.groups()
        x = float(num) * (10 ** int(suf[1:]) if suf[:1] in ("e", "E") and len(suf) > 1 else _SUFFIX[suf])
    if name == "cpu":
        x *= 1000
    import math
    return int(math.ceil(x - 1e-9))


def _reqs(c):
    res = c.get("resources") or {}
    out = {}
    for k, v in (res.get("limits") or {}).items():
        out[k] = qty(k, v)
    for k, v in (res.get("requests") or {}).items():
        out[k] = qty(k, v)
    return out


def pod_requests(spec):
    total = {}
    for c in spec.get("containers") or []:
        for k, v in _reqs(c).items():
            total[k] = total.get(k, 0) + v
    side = {}
    peak = {}
    for c in spec.get("initContainers") or []:
        r = _reqs(c)
        if c.get("restartPolicy") == "Always":
            for k, v in r.items():
                total[k] = total.get(k, 0) + v
                side[k] = side.get(k, 0) + v
            cur = dict(side)
        else:
            cur = dict(r)
            for k, v in side.items():
                cur[k] = cur.get(k, 0) + v
        for k, v in cur.items():
            peak[k] = max(peak.get(k, 0), v)
    for k, v in peak.items():
        total[k] = max(total.get(k, 0), v)
    for k, v in (spec.get("overhead") or {}).items():
        total[k] = total.get(k, 0) + qty(k, v)
    total["pods"] = 1
    return total


def now_rfc3339():
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


# metav1.Time parses as RFC 3339 (Go's time.RFC3339 accepts a fraction of 1-9 digits);
# metav1.MicroTime as RFC3339Micro: exactly six fractional digits. Both must end in Z or an offset.
_TIME_RE = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})")
_MICRO_RE = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}(Z|[+-]\d{2}:\d{2})")


def bad_time(v, micro):
    """None when `v` is null or a valid metav1.Time (or MicroTime); else why not, as the real server says it."""
    if v is None:
        return None
    rx = _MICRO_RE if micro else _TIME_RE
    if not isinstance(v, str) or not rx.fullmatch(v):
        layout = "2006-01-02T15:04:05.000000Z07:00" if micro else "2006-01-02T15:04:05Z07:00"
        return 'parsing time "%s" as "%s": cannot parse' % (v, layout)
    return None


# Which fields of which objects hold a Time (False) or a MicroTime (True).
_TIME_FIELDS = {
    "events": [("firstTimestamp", False), ("lastTimestamp", False), ("eventTime", True)],
    "leases": [("spec.acquireTime", True), ("spec.renewTime", True)],
}


def _field(obj, dotted):
    for k in dotted.split("."):
        if not isinstance(obj, dict):
            return None
        obj = obj.get(k)
    return obj


def time_errors(kind, obj):
    """Why a real API server would refuse the object's timestamps (pods: their conditions'), or None."""
    fields = list(_TIME_FIELDS.get(kind, []))
    for f, micro in fields:
        why = bad_time(_field(obj, f), micro)
        if why:
            return "%s: Invalid value: %s" % (f, why)
    if kind == "pods":
        for i, c in enumerate(((obj.get("status") or {}).get("conditions")) or []):
            for f in ("lastProbeTime", "lastTransitionTime"):
                why = bad_time(c.get(f), False)
                if why:
                    return "status.conditions[%d].%s: Invalid value: %s" % (i, f, why)
    return None


_NATIVE = ("cpu", "memory", "ephemeral-storage", "pods", "storage")


def extended_errors(spec):
    """A real server refuses a container that requests an extended resource (a
    domain-qualified name outside kubernetes.io, like nvidia.com/gpu) without
    an equal limit."""
    for kind in ("containers", "initContainers"):
        for i, c in enumerate((spec or {}).get(kind) or []):
            res = c.get("resources") or {}
            req, lim = res.get("requests") or {}, res.get("limits") or {}
            for k, v in req.items():
                if k in _NATIVE or k.startswith("hugepages-") or "/" not in k or \
                        k.split("/")[0].endswith("kubernetes.io"):
                    continue
                if k not in lim:
                    return "spec.%s[%d].resources.limits: Required value: Limit must be set for non " \
                           "overcommitable resources" % (kind, i)
                if qty(k, lim[k]) != qty(k, v):
                    return "spec.%s[%d].resources.requests[%s]: Invalid value: %r: must be equal to %s limit" \
                           % (kind, i, k, v, k)
    return None


def status_obj(code, reason, message):
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": message,
            "reason": reason, "code": code}


# ---- the store ------------------------------------------------------------------------------------------------------

KINDS = {
    "nodes": ("Node", "v1", False),
    "pods": ("Pod", "v1", True),
    "podgroups": ("PodGroup", "scheduling.x-k8s.io/v1alpha1", True),
    "poddisruptionbudgets": ("PodDisruptionBudget", "policy/v1", True),  # served as stored: no disruption controller
    "leases": ("Lease", "coordination.k8s.io/v1", True),
    "events": ("Event", "v1", True),
}


class Store:
    def __init__(self, history, bookmark_interval):
        self.cv = threading.Condition()
        self.rv = 1
        self.objs = {k: {} for k in KINDS}
        self.history = []  # (rv, kind, line bytes)
        self.hist_rvs = []  # the rvs of history, for bisect
        self.history_max = history
        self.compacted = 1  # events with rv <= compacted are gone
        self.stream_epoch = 0  # bumped to cut every stream
        self.bookmark_interval = bookmark_interval
        self.faults = {}
        self.counters = {}
        self.bindings = []  # (t, ns, name, node)
        self.created = {}  # (ns, name) -> time the ADDED event was recorded
        self.violations = []
        self.templates = {}  # (ns, name) -> original pod for the Job controller
        self.kubelet_pending = {}  # (ns, name) -> bound at
        self.bind_fail_counts = {}
        self.node_pods = {}  # node -> keys of the pods bound to it
        self.req_cache = {}  # pod uid -> its requests

    def count(self, key):
        self.counters[key] = self.counters.get(key, 0) + 1

    def _emit(self, kind, etype, obj):
        """Record an event; `obj` is serialized at once (callers hold the lock)."""
        self.rv += 1
        obj["metadata"]["resourceVersion"] = str(self.rv)
        line = json.dumps({"type": etype, "object": obj}, separators=(",", ":")).encode() + b"\n"
        self.history.append((self.rv, kind, line))
        self.hist_rvs.append(self.rv)
        if len(self.history) > self.history_max:
            drop = len(self.history) - self.history_max
            self.compacted = self.history[drop - 1][0]
            del self.history[:drop]
            del self.hist_rvs[:drop]
        self.cv.notify_all()

    def put(self, kind, obj, etype):
        ns = obj["metadata"].get("namespace", "")
        key = (ns, obj["metadata"]["name"])
        self.objs[kind][key] = obj
        self._emit(kind, etype, obj)
        if kind == "pods":
            if etype == "ADDED":
                self.created[key] = time.time()
            node = obj["spec"].get("nodeName")
            if node:
                self.node_pods.setdefault(node, set()).add(key)

    def delete(self, kind, key):
        obj = self.objs[kind].pop(key, None)
        if obj is not None:
            self._emit(kind, "DELETED", obj)
            if kind == "pods" and obj["spec"].get("nodeName"):
                self.node_pods.get(obj["spec"]["nodeName"], set()).discard(key)
        return obj

    # capacity of a node against every bound, non-terminal pod on it
    def usage(self, node):
        used = {}
        for key in self.node_pods.get(node, ()):
            p = self.objs["pods"].get(key)
            if not p or p["spec"].get("nodeName") != node or \
                    p.get("status", {}).get("phase") in ("Succeeded", "Failed"):
                continue
            uid = p["metadata"]["uid"]
            r = self.req_cache.get(uid)
            if r is None:
                r = self.req_cache[uid] = pod_requests(p["spec"])
            for k, v in r.items():
                used[k] = used.get(k, 0) + v
        return used

    def over(self, node):
        n = self.objs["nodes"].get(("", node))
        if not n:
            return None
        alloc = {k: qty(k, v) for k, v in (n.get("status", {}).get("allocatable") or {}).items()}
        for k, v in self.usage(node).items():
            if k == "pods" and "pods" not in alloc:
                continue
            if v > alloc.get(k, 0):
                return k
        return None


STORE = None

# ---- HTTP -------------------------------------------------------------------------------------------------------------

PATH_RE = re.compile(
    r"^/(?:api/(?P<core>v1)|apis/(?P<group>[^/]+)/(?P<version>[^/]+))"
    r"(?:/namespaces/(?P<ns>[^/]+))?/(?P<kind>[a-z]+)(?:/(?P<name>[^/]+))?(?:/(?P<sub>[a-z]+))?$")


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "kube-emulator/1"

    def log_message(self, fmt, *args):
        pass

    def setup(self):
        super().setup()
        # small answers go out at once (no Nagle wait on a delayed ACK)
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    # -- helpers
    def _send(self, code, obj, headers=None):
        body = obj if isinstance(obj, bytes) else json.dumps(obj, separators=(",", ":")).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def _err(self, code, reason, msg, headers=None):
        self._send(code, status_obj(code, reason, msg), headers)

    def _body(self):
        return json.loads(self._raw) if self._raw else {}

    def _auth(self):
        tok = self.server.token
        if not tok:
            return True
        if self.headers.get("Authorization") == "Bearer " + tok:
            return True
        self._err(401, "Unauthorized", "Unauthorized")
        return False

    def _faults_gate(self, method, path):
        """429s and latency, as configured."""
        f = STORE.faults
        if f.get("latency"):
            time.sleep(f["latency"])
        t = f.get("throttle")
        if t and (not t.get("method") or t["method"] == method) and re.search(t.get("path_re", ""), path):
            with STORE.cv:
                STORE.count("throttle_seen")
                n = STORE.counters["throttle_seen"]
            if n % max(1, int(t.get("every", 2))) == 0:
                with STORE.cv:
                    STORE.count("throttled")
                self._err(429, "TooManyRequests", "the server has received too many requests",
                          {"Retry-After": str(t.get("retry_after", 1))})
                return False
        return True

    def do_GET(self):
        self._dispatch("GET")

    def do_POST(self):
        self._dispatch("POST")

    def do_PUT(self):
        self._dispatch("PUT")

    def do_PATCH(self):
        self._dispatch("PATCH")

    def do_DELETE(self):
        self._dispatch("DELETE")

    def _dispatch(self, method):
        # read the whole body first: an early answer must not leave it in the stream
        n = int(self.headers.get("Content-Length") or 0)
        self._raw = self.rfile.read(n) if n else b""
        u = urlparse(self.path)
        q = {k: v[-1] for k, v in parse_qs(u.query).items()}
        try:
            if u.path.startswith("/emu/"):
                return self._emu(method, u.path, q)
            if not self._auth():
                return
            with STORE.cv:
                STORE.count("%s %s" % (method, "watch" if q.get("watch") else "req"))
            if not q.get("watch") and not self._faults_gate(method, u.path):
                return
            m = PATH_RE.match(u.path)
            if not m or m.group("kind") not in KINDS:
                return self._err(404, "NotFound", "the server could not find the requested resource")
            kind, ns, name, sub = m.group("kind"), m.group("ns"), m.group("name"), m.group("sub")
            if method == "GET" and not name:
                if q.get("watch") in ("1", "true"):
                    return self._watch(kind, ns, q)
                return self._list(kind, ns, q)
            if method == "GET":
                return self._get(kind, ns, name)
            if method == "POST" and sub == "binding":
                return self._bind(ns, name, self._body())
            if method == "POST" and sub == "eviction":
                return self._evict(ns, name, self._body())
            if method == "POST" and not name:
                return self._create(kind, ns, self._body())
            if method == "PUT":
                return self._update(kind, ns, name, self._body())
            if method == "PATCH":
                return self._patch(kind, ns, name, sub, self._body())
            if method == "DELETE":
                return self._delete(kind, ns, name, self._body())
            return self._err(405, "MethodNotAllowed", "method not allowed")
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True
        except (ValueError, KeyError, TypeError) as e:
            try:
                self._err(400, "BadRequest", "bad request: %s" % e)
            except OSError:
                self.close_connection = True

    # -- reads
    def _list(self, kind, ns, q):
        limit = int(q.get("limit") or 0)
        start = int(q.get("continue") or 0)
        with STORE.cv:
            items = [o for (ons, _), o in sorted(STORE.objs[kind].items()) if not ns or ons == ns]
            rv = str(STORE.rv)
            page = items[start:start + limit] if limit else items[start:]
            more = bool(limit) and start + limit < len(items)
            body = json.dumps({"kind": KINDS[kind][0] + "List", "apiVersion": KINDS[kind][1],
                               "metadata": {"resourceVersion": rv, "continue": str(start + limit) if more else ""},
                               "items": page}, separators=(",", ":")).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _get(self, kind, ns, name):
        with STORE.cv:
            o = STORE.objs[kind].get((ns or "", name))
            o = json.dumps(o, separators=(",", ":")).encode() if o else None
        if not o:
            return self._err(404, "NotFound", '%s "%s" not found' % (kind, name))
        self._send(200, o)

    def _chunk(self, data):
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def _watch(self, kind, ns, q):
        rv = int(q.get("resourceVersion") or 0)
        timeout = float(q.get("timeoutSeconds") or 1800)
        bookmarks = q.get("allowWatchBookmarks") in ("true", "1")
        with STORE.cv:
            gone = rv and rv < STORE.compacted
            epoch = STORE.stream_epoch
            STORE.count("watch " + kind)
        if gone and STORE.faults.get("gone_as_http"):
            with STORE.cv:
                STORE.count("gone")
            return self._err(410, "Expired", "too old resource version: %d (%d)" % (rv, STORE.compacted))
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        werr = STORE.faults.get("watch_error")
        if werr and not gone:
            self._chunk(json.dumps({"type": "ERROR", "object": status_obj(
                int(werr), "InternalError", "injected watch error")}).encode() + b"\n")
            self._chunk(b"")
            return
        if gone:
            with STORE.cv:
                STORE.count("gone")
            self._chunk(json.dumps({"type": "ERROR", "object": status_obj(
                410, "Expired", "too old resource version: %d (%d)" % (rv, STORE.compacted))}).encode() + b"\n")
            self._chunk(b"")
            return
        t0 = time.time()
        last_bm = time.time()
        pos = rv
        while True:
            lines = []
            with STORE.cv:
                if STORE.stream_epoch != epoch:
                    break
                if pos < STORE.compacted:
                    break  # fell behind the history: cut; the client's next watch gets 410
                for erv, ekind, line in STORE.history[bisect.bisect_right(STORE.hist_rvs, pos):]:
                    if ekind == kind:
                        lines.append(line)
                if STORE.history and STORE.history[-1][0] > pos:
                    pos = STORE.history[-1][0]
                if not lines:
                    STORE.cv.wait(0.2)  # what came meanwhile is read on the next turn
            if ns:
                lines = [l for l in lines if json.loads(l)["object"]["metadata"].get("namespace") == ns]
            if lines:
                self._chunk(b"".join(lines))
            elif bookmarks and time.time() - last_bm >= STORE.bookmark_interval:
                last_bm = time.time()
                self._chunk(json.dumps({"type": "BOOKMARK", "object": {
                    "kind": KINDS[kind][0], "apiVersion": KINDS[kind][1],
                    "metadata": {"resourceVersion": str(pos)}}}).encode() + b"\n")
            if time.time() - t0 >= timeout:
                self._chunk(b"")
                return
            drop = STORE.faults.get("drop_watch_after")
            if drop and time.time() - t0 >= drop:
                with STORE.cv:
                    STORE.count("dropped")
                break
        # cut: no final chunk, the connection goes away
        self.close_connection = True
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    # -- writes
    def _create(self, kind, ns, obj):
        md = obj.setdefault("metadata", {})
        if kind != "nodes":
            md["namespace"] = ns or md.get("namespace") or "default"
        if not md.get("name") and md.get("generateName"):
            md["name"] = md["generateName"] + "".join(random.choice(string.ascii_lowercase) for _ in range(6))
        if not md.get("name"):
            return self._err(422, "Invalid", "metadata.name: Required value")
        why = time_errors(kind, obj)
        if why:  # a timestamp that does not decode is refused before validation, as a 400
            return self._err(400, "BadRequest", "%s in body is invalid: %s" % (KINDS[kind][0], why))
        why = extended_errors(obj.get("spec")) if kind == "pods" else None
        if why:
            return self._err(422, "Invalid", 'Pod "%s" is invalid: %s' % (md["name"], why))
        with STORE.cv:
            key = (md.get("namespace", ""), md["name"])
            if key in STORE.objs[kind]:
                return self._err(409, "AlreadyExists", '%s "%s" already exists' % (kind, md["name"]))
            md["uid"] = str(uuid.uuid4())
            md["creationTimestamp"] = now_rfc3339()
            obj["kind"], obj["apiVersion"] = KINDS[kind][0], KINDS[kind][1]
            if kind == "pods":
                obj.setdefault("spec", {}).setdefault("schedulerName", "default-scheduler")
                obj.setdefault("status", {}).setdefault("phase", "Pending")
                STORE.templates[key] = copy.deepcopy(obj)
                if obj["spec"].get("nodeName"):
                    STORE.kubelet_pending[key] = time.time()
            STORE.put(kind, obj, "ADDED")
            out = json.dumps(obj, separators=(",", ":")).encode()
        self._send(201, out)

    def _update(self, kind, ns, name, obj):
        with STORE.cv:
            key = (ns or "", name)
            cur = STORE.objs[kind].get(key)
            if not cur:
                return self._err(404, "NotFound", '%s "%s" not found' % (kind, name))
            why = time_errors(kind, obj)
            if why:
                return self._err(400, "BadRequest", "%s in body is invalid: %s" % (KINDS[kind][0], why))
            want = obj.get("metadata", {}).get("resourceVersion")
            if want and want != cur["metadata"]["resourceVersion"]:
                return self._err(409, "Conflict", 'Operation cannot be fulfilled on %s "%s": the object has been '
                                 'modified; please apply your changes to the latest version and try again'
                                 % (kind, name))
            obj["metadata"]["uid"] = cur["metadata"]["uid"]
            obj["metadata"]["namespace"] = cur["metadata"].get("namespace", "")
            obj["metadata"]["name"] = name
            obj["kind"], obj["apiVersion"] = KINDS[kind][0], KINDS[kind][1]
            STORE.put(kind, obj, "MODIFIED")
            out = json.dumps(obj, separators=(",", ":")).encode()
        self._send(200, out)

    @staticmethod
    def _merge(dst, patch, strategic):
        for k, v in patch.items():
            if v is None:
                dst.pop(k, None)
            elif k == "conditions" and strategic and isinstance(v, list):
                conds = dst.setdefault("conditions", [])
                for c in v:
                    for i, old in enumerate(conds):
                        if old.get("type") == c.get("type"):
                            conds[i] = {**old, **c}
                            break
                    else:
                        conds.append(c)
            elif isinstance(v, dict) and isinstance(dst.get(k), dict):
                Handler._merge(dst[k], v, strategic)
            else:
                dst[k] = copy.deepcopy(v)

    def _patch(self, kind, ns, name, sub, patch):
        strategic = "strategic" in (self.headers.get("Content-Type") or "")
        with STORE.cv:
            key = (ns or "", name)
            cur = STORE.objs[kind].get(key)
            if not cur:
                return self._err(404, "NotFound", '%s "%s" not found' % (kind, name))
            uid = (patch.get("metadata") or {}).get("uid")
            if uid and uid != cur["metadata"]["uid"]:
                return self._err(409, "Conflict", "Precondition failed: UID in precondition: %s, UID in object "
                                 "meta: %s" % (uid, cur["metadata"]["uid"]))
            if sub == "status":
                patch = {"status": patch.get("status", {})}
            else:
                patch = {k: v for k, v in patch.items() if k != "status"}
            # what is stored is valid already: the patch's own timestamps are what may not be
            why = time_errors(kind, patch)
            if why:
                return self._err(422, "Invalid", '%s "%s" is invalid: %s' % (KINDS[kind][0], name, why))
            self._merge(cur, patch, strategic)
            STORE.put(kind, cur, "MODIFIED")
            STORE.count("patch " + (sub or kind))
            out = json.dumps(cur, separators=(",", ":")).encode()
        self._send(200, out)

    def _bind(self, ns, name, binding):
        with STORE.cv:
            key = (ns, name)
            f = STORE.faults.get("bind_fail") or {}
            fail = None
            for rx, spec in f.items():
                if re.search(rx, name):
                    n = STORE.bind_fail_counts.get((rx, name), 0)
                    times = spec.get("times", -1)
                    if times < 0 or n < times:
                        STORE.bind_fail_counts[(rx, name)] = n + 1
                        STORE.count("bind_injected_%d" % spec.get("status", 500))
                        code = spec.get("status", 500)
                        hdr = {"Retry-After": str(spec["retry_after"])} if "retry_after" in spec else None
                        fail = (code, "InternalError" if code >= 500 else "Injected",
                                "injected failure for %s" % name, hdr)
                        if not spec.get("apply"):
                            return self._err(*fail)
                        break
            pod = STORE.objs["pods"].get(key)
            bmeta = binding.get("metadata") or {}
            if bmeta.get("name") != name:  # as the real server: BindingREST.Create
                return self._err(400, "BadRequest", "name in URL does not match name in Binding object")
            # v1.20 ignores the Binding's metadata.uid (verified against kube-apiserver v1.20.2: a wrong uid
            # gets 201 and binds the pod of that name); --check-binding-uid (or RF_EMU_CHECK_BINDING_UID=1)
            # acts like a server that checks it (409)
            uid = bmeta.get("uid") if CHECK_BINDING_UID else None
            if fail and (not pod or pod["spec"].get("nodeName") or pod["metadata"].get("deletionTimestamp")
                         or uid not in (None, pod["metadata"]["uid"])):
                return self._err(*fail)  # nothing to apply: just the failure
            if not pod:
                return self._err(404, "NotFound", 'pods "%s" not found' % name)
            if uid and uid != pod["metadata"]["uid"]:
                return self._err(409, "Conflict", "Operation cannot be fulfilled on pods/binding \"%s\": "
                                 "Precondition failed: UID in precondition: %s, UID in object meta: %s"
                                 % (name, uid, pod["metadata"]["uid"]))
            if pod["metadata"].get("deletionTimestamp"):
                return self._err(409, "Conflict", "pod %s is being deleted, cannot be assigned to a host" % name)
            if pod["spec"].get("nodeName"):
                return self._err(409, "Conflict", 'pod %s is already assigned to node "%s"'
                                 % (name, pod["spec"]["nodeName"]))
            node = binding["target"]["name"]
            pod["spec"]["nodeName"] = node
            anns = (binding.get("metadata") or {}).get("annotations")
            if anns:
                pod["metadata"].setdefault("annotations", {}).update(anns)
            conds = pod.setdefault("status", {}).setdefault("conditions", [])
            conds[:] = [c for c in conds if c.get("type") != "PodScheduled"]
            conds.append({"type": "PodScheduled", "status": "True", "lastTransitionTime": now_rfc3339()})
            STORE.put("pods", pod, "MODIFIED")
            t = time.time()
            STORE.bindings.append((t, ns, name, node))
            STORE.kubelet_pending[key] = t
            STORE.count("bound")
            res = STORE.over(node)
            if res:
                STORE.violations.append({"node": node, "resource": res, "pod": "%s/%s" % (ns, name)})
            if fail:
                STORE.count("bind_applied_then_failed")
                return self._err(*fail)
        self._send(201, {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201})

    def _evict(self, ns, name, ev):
        if ev.get("kind") != "Eviction" or ev.get("apiVersion") not in ("policy/v1", "policy/v1beta1"):
            return self._err(400, "BadRequest", "the body is not a policy/v1 or policy/v1beta1 Eviction")
        with STORE.cv:
            key = (ns, name)
            cur = STORE.objs["pods"].get(key)
            if not cur:
                return self._err(404, "NotFound", 'pods "%s" not found' % name)
            for rx, n in list((STORE.faults.get("evict_refuse") or {}).items()):
                if re.search(rx, name) and n > 0:
                    STORE.faults["evict_refuse"][rx] = n - 1
                    STORE.count("evictions_refused")
                    return self._err(429, "TooManyRequests", "Cannot evict pod as it would violate the pod's "
                                     "disruption budget.")
            uid = ((ev.get("deleteOptions") or {}).get("preconditions") or {}).get("uid")
            if uid and uid != cur["metadata"]["uid"]:
                return self._err(409, "Conflict", "Precondition failed: UID in precondition: %s, UID in object "
                                 "meta: %s" % (uid, cur["metadata"]["uid"]))
            STORE.count("evicted")
            conds = cur.setdefault("status", {}).setdefault("conditions", [])
            conds[:] = [c for c in conds if c.get("type") != "DisruptionTarget"]
            conds.append({"type": "DisruptionTarget", "status": "True", "reason": "EvictionByEvictionAPI",
                          "lastTransitionTime": now_rfc3339()})
        self._delete("pods", ns, name, {"preconditions": {"uid": cur["metadata"]["uid"]}}, evicted=True)

    def _delete(self, kind, ns, name, opts, evicted=False):
        with STORE.cv:
            key = (ns or "", name)
            cur = STORE.objs[kind].get(key)
            if not cur:
                return self._err(404, "NotFound", '%s "%s" not found' % (kind, name))
            uid = (opts.get("preconditions") or {}).get("uid")
            if uid and uid != cur["metadata"]["uid"]:
                return self._err(409, "Conflict", "Precondition failed: UID in precondition: %s, UID in object "
                                 "meta: %s" % (uid, cur["metadata"]["uid"]))
            STORE.count("delete " + kind)
            running = kind == "pods" and cur["spec"].get("nodeName") and \
                cur.get("status", {}).get("phase") not in ("Succeeded", "Failed")
            if running:
                if not cur["metadata"].get("deletionTimestamp"):
                    cur["metadata"]["deletionTimestamp"] = now_rfc3339()
                    cur["metadata"]["deletionGracePeriodSeconds"] = 0
                    STORE.put(kind, cur, "MODIFIED")
                    threading.Timer(STORE.faults.get("grace", 0.2), finish_delete, (key, cur["metadata"]["uid"])
                                    ).start()
            else:
                STORE.delete(kind, key)
                if kind == "pods":
                    recreate_later(key)
            out = json.dumps(cur, separators=(",", ":")).encode()
        if evicted:
            return self._send(201, {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
                                    "code": 201})
        self._send(200, out)

    # -- control
    def _emu(self, method, path, q):
        if path == "/emu/faults" and method == "POST":
            f = self._body()
            with STORE.cv:
                STORE.faults.update(f)
                for k in [k for k, v in f.items() if v is None]:
                    STORE.faults.pop(k)
                STORE.bind_fail_counts.clear()
            return self._send(200, STORE.faults)
        if path == "/emu/compact" and method == "POST":
            with STORE.cv:
                # every version seen so far is gone: watchers resuming from theirs get 410
                STORE.rv += 1
                STORE.compacted = STORE.rv
                STORE.history.clear()
                STORE.hist_rvs.clear()
                STORE.stream_epoch += 1
                STORE.count("compactions")
                STORE.cv.notify_all()
            return self._send(200, {"compacted": STORE.compacted})
        if path == "/emu/reset-log" and method == "POST":
            with STORE.cv:
                STORE.bindings.clear()
                STORE.created.clear()
            return self._send(200, {})
        if path == "/emu/state":
            with STORE.cv:
                st = {"rv": STORE.rv, "counters": dict(STORE.counters), "violations": list(STORE.violations),
                      "bindings": [{"t": t, "ns": n, "name": p, "node": nd} for t, n, p, nd in STORE.bindings],
                      "created": [{"ns": k[0], "name": k[1], "t": v} for k, v in STORE.created.items()]}
            return self._send(200, st)
        return self._err(404, "NotFound", "no such control endpoint")


def finish_delete(key, uid):
    with STORE.cv:
        cur = STORE.objs["pods"].get(key)
        if cur and cur["metadata"]["uid"] == uid:
            STORE.delete("pods", key)
            recreate_later(key)


def recreate_later(key):
    """The Job controller's part: a pod labelled emu/recreate=true comes back with a new uid."""
    tmpl = STORE.templates.get(key)
    if not tmpl or (tmpl["metadata"].get("labels") or {}).get("emu/recreate") != "true":
        return

    def again():
        with STORE.cv:
            if key in STORE.objs["pods"]:
                return
            obj = copy.deepcopy(tmpl)
            obj["metadata"]["uid"] = str(uuid.uuid4())
            obj["metadata"]["creationTimestamp"] = now_rfc3339()
            obj["status"] = {"phase": "Pending"}
            obj["spec"].pop("nodeName", None)
            STORE.count("recreated")
            STORE.put("pods", obj, "ADDED")
    threading.Timer(STORE.faults.get("recreate_after", 0.1), again).start()


def kubelet_loop():
    """Admit bound pods after kubelet_delay (Running, startTime), or reject them (Failed, OutOf<res>)."""
    while True:
        time.sleep(0.02)
        with STORE.cv:
            delay = STORE.faults.get("kubelet_delay", 0.05)
            rej = STORE.faults.get("kubelet_reject") or {}
            t = time.time()
            for key, since in list(STORE.kubelet_pending.items()):
                if t - since < delay:
                    continue
                del STORE.kubelet_pending[key]
                pod = STORE.objs["pods"].get(key)
                if not pod or not pod["spec"].get("nodeName") or pod["metadata"].get("deletionTimestamp"):
                    continue
                reason = None
                for rx, r in rej.items():
                    if re.search(rx, key[1]):
                        reason = r
                if not reason:
                    res = STORE.over(pod["spec"]["nodeName"])
                    if res:
                        reason = "OutOf" + res
                st = pod.setdefault("status", {})
                if reason:
                    st.update({"phase": "Failed", "reason": reason,
                               "message": "Pod was rejected: Node didn't have enough resource: " + reason[5:]})
                    STORE.count("kubelet_rejected")
                elif STORE.faults.get("succeed") and re.search(STORE.faults["succeed"], key[1]):
                    st.update({"phase": "Succeeded", "startTime": now_rfc3339()})
                    STORE.count("kubelet_succeeded")
                else:
                    st.update({"phase": "Running", "startTime": now_rfc3339()})
                    ready = not (STORE.faults.get("never_ready") and re.search(STORE.faults["never_ready"], key[1]))
                    conds = st.setdefault("conditions", [])
                    conds[:] = [c for c in conds if c.get("type") != "Ready"]
                    conds.append({"type": "Ready", "status": "True" if ready else "False",
                                  "lastTransitionTime": now_rfc3339()})
                    STORE.count("kubelet_admitted")
                STORE.put("pods", pod, "MODIFIED")


class Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 256


CHECK_BINDING_UID = False


def main():
    global STORE
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--token", default="")
    ap.add_argument("--tls-cert")
    ap.add_argument("--tls-key")
    ap.add_argument("--bookmark-interval", type=float, default=1.0)
    ap.add_argument("--history", type=int, default=200000)
    ap.add_argument("--check-binding-uid", action="store_true",
                    help="refuse (409) a Binding whose metadata.uid is not the pod's, as newer servers may; "
                         "by default it is ignored, as kube-apiserver v1.20 does (also RF_EMU_CHECK_BINDING_UID=1)")
    a = ap.parse_args()
    global CHECK_BINDING_UID
    CHECK_BINDING_UID = a.check_binding_uid or os.environ.get("RF_EMU_CHECK_BINDING_UID", "") == "1"
    STORE = Store(a.history, a.bookmark_interval)
    srv = Server(("127.0.0.1", a.port), Handler)
    srv.token = a.token
    if a.tls_cert:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(a.tls_cert, a.tls_key)
        srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    threading.Thread(target=kubelet_loop, daemon=True).start()
    print("listening on %d" % srv.server_address[1], flush=True)
    try:
        srv.serve_forever(poll_interval=0.1)
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
