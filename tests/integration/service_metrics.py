#!/usr/bin/env python3
"""tests/integration/service_metrics.py: rackfitd's /metrics, /healthz and
/readyz (service_metrics.sh starts the server). Every scrape is parsed with
python3-prometheus-client's text parser (a real Prometheus text-format
parser), and the families of docs/operating-rackfitd.md are checked to move
as the test drives the server: requests by op and outcome, busy replies per
lane, queue depth and bytes per lane, solve latency per mode, gap and time
used, stored clusters, versions, open and expired commits, placement quality.

    service_metrics.py ENDPOINT METRICS_HOSTPORT
"""
import sys
import time
import urllib.error
import urllib.request

import msgpack
import zmq
from prometheus_client.parser import text_string_to_metric_families

endpoint, hostport = sys.argv[1], sys.argv[2]
passed = failed = 0


def check(cond, what):
    global passed, failed
    if cond:
        passed += 1
        print("ok    " + what)
    else:
        failed += 1
        print("FAIL  " + what)


def get(path):
    try:
        with urllib.request.urlopen("http://%s%s" % (hostport, path), timeout=10) as r:
            return r.status, r.headers.get("Content-Type", ""), r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.headers.get("Content-Type", ""), e.read().decode()


def scrape():
    """{(name, frozenset(labels)): value} for every sample, and the families."""
    status, ctype, text = get("/metrics")
    assert status == 200, status
    samples, families = {}, {}
    for fam in text_string_to_metric_families(text):
        families[fam.name] = fam
        for s in fam.samples:
            samples[(s.name, frozenset(s.labels.items()))] = s.value
    return samples, families, ctype


def val(samples, name, **labels):
    return samples.get((name, frozenset(labels.items())), 0.0)


ctx = zmq.Context()
sock = ctx.socket(zmq.REQ)
sock.setsockopt(zmq.RCVTIMEO, 60000)
sock.connect(endpoint)


def call(req):
    sock.send(msgpack.packb(req))
    return msgpack.unpackb(sock.recv())


status, _, body = get("/healthz")
check(status == 200 and body.strip() == "ok", "/healthz is 200 ok")
status, _, body = get("/readyz")
check(status == 200 and "ready" in body, "/readyz is 200 once every endpoint is bound")
status, _, _ = get("/nope")
check(status == 404, "an unknown path is 404")

before, families, ctype = scrape()
check(ctype.startswith("text/plain; version=0.0.4"), "the text format's content type: " + ctype)
for fam in ("rackfit_requests", "rackfit_busy", "rackfit_queue_depth", "rackfit_queue_bytes",
            "rackfit_request_duration_seconds", "rackfit_solve_duration_seconds", "rackfit_solve_gap_ratio",
            "rackfit_solve_time_used_ratio", "rackfit_stored_clusters", "rackfit_commits",
            "rackfit_commits_expired", "rackfit_gang_domains", "rackfit_gang_penalty", "rackfit_solver_threads"):
    check(fam in families, "family %s is exposed" % fam)
check(families["rackfit_requests"].type == "counter", "rackfit_requests_total is a counter")
check(families["rackfit_solve_duration_seconds"].type == "histogram", "solve latency is a histogram")

# drive: pings, a bad request, a stored cluster, commits and a release
for _ in range(5):
    call({"op": "ping"})
call({"op": "ping", "extra": 1})
nodes = [{"name": h, "labels": {"rack": r, "kubernetes.io/hostname": h},
          "allocatable": {"nvidia.com/gpu": 8}}
         for r, hs in (("r1", ["h1", "h2"]), ("r2", ["h3", "h4"])) for h in hs]
call({"op": "cluster.put", "name": "prod",
      "cluster": {"levels": ["rack", "kubernetes.io/hostname"], "nodes": nodes}})
gang = {"name": "a", "topology": {"required": "rack"},
        "pod_sets": [{"name": "w", "count": 2, "requests": {"nvidia.com/gpu": 8}}]}
r = call({"cluster_name": "prod", "options": {"mode": "greedy"}, "commit": True, "gangs": [gang],
          "commit_ttl_ms": 300})
check(r["cluster"]["committed"], "a greedy commit")
big = {"name": "big", "topology": {"required": "rack"},
       "pod_sets": [{"name": "w", "count": 3, "requests": {"nvidia.com/gpu": 8}}]}
r = call({"cluster_name": "prod", "options": {"mode": "ilp", "time_limit_ms": 200}, "gangs": [big]})
check(not r["gangs"][0]["admitted"], "an ilp solve that cannot admit the big gang")
r = call({"cluster_name": "prod", "options": {"mode": "greedy"}, "commit": True,
          "gangs": [dict(gang, name="b")]})
r = call({"op": "cluster.release", "name": "prod", "gangs": ["b"]})
check(r["released"] == 2, "a release")

after, _, _ = scrape()
check(val(after, "rackfit_requests_total", op="ping", outcome="ok") -
      val(before, "rackfit_requests_total", op="ping", outcome="ok") == 5, "ping ok moved by 5")
check(val(after, "rackfit_requests_total", op="ping", outcome="bad_problem") >= 1, "ping bad_problem counted")
check(val(after, "rackfit_requests_total", op="solve", outcome="ok") == 3, "three solves ok")
check(val(after, "rackfit_requests_total", op="cluster.release", outcome="ok") == 1, "one release")
check(val(after, "rackfit_solve_duration_seconds_count", mode="greedy") == 2, "greedy solve latency observed twice")
check(val(after, "rackfit_solve_duration_seconds_count", mode="ilp") == 1, "ilp solve latency observed")
check(val(after, "rackfit_solve_gap_ratio_count", mode="ilp") == 1, "ilp gap observed")
check(val(after, "rackfit_solve_time_used_ratio_count", mode="ilp") == 1, "ilp time used observed")
check(val(after, "rackfit_stored_clusters") == 1, "one stored cluster")
check(val(after, "rackfit_cluster_version", cluster="prod") == 4, "the cluster's version (put, 2 commits, release)")
check(val(after, "rackfit_commits_open", cluster="prod") == 2, "two commit entries open")
check(val(after, "rackfit_commits_total", outcome="committed") == 2, "two commits")
check(val(after, "rackfit_gang_domains_count", level="rack") == 2, "domains per level for each admitted gang")
check(val(after, "rackfit_gang_domains_bucket", level="rack", le="1") == 2, "both gangs in one rack")
check(val(after, "rackfit_cluster_free_gpus", cluster="prod") >= 0, "free GPUs of the cluster")
check(("rackfit_cluster_free_domains", frozenset({"cluster": "prod", "level": "rack"}.items())) in after,
      "whole free racks of the cluster")
check(val(after, "rackfit_queue_depth", lane="fast") == 0, "the fast lane is empty between requests")
check(val(after, "rackfit_queue_capacity_bytes", lane="solver") > 0, "the solver lane's byte budget")

# the commit of gang a expires (ttl 300 ms): counted at the next scrape
time.sleep(0.5)
later, _, _ = scrape()
check(val(later, "rackfit_commits_expired_total") >= 2, "expired commits counted")
check(val(later, "rackfit_commits_open", cluster="prod") == 0, "no commit left open")

# busy: the solver lane holds one request and has one worker (flags of the
# test); a burst of slow ilp solves from a DEALER gets some `busy` replies
d = ctx.socket(zmq.DEALER)
d.setsockopt(zmq.RCVTIMEO, 60000)
d.connect(endpoint)
for i in range(6):
    d.send_multipart([b"", msgpack.packb({"id": i, "cluster_name": "prod",
                                          "options": {"mode": "ilp", "time_limit_ms": 300},
                                          "gangs": [big]})])
mid, _, _ = scrape()
codes = []
for _ in range(6):
    rep = msgpack.unpackb(d.recv_multipart()[-1])
    codes.append(rep.get("error", {}).get("code", "ok"))
check("busy" in codes, "a burst beyond the solver lane gets busy: %s" % codes)
end, _, _ = scrape()
check(val(end, "rackfit_busy_total", lane="solver") == codes.count("busy"), "rackfit_busy_total{lane=solver}")
check(val(end, "rackfit_requests_total", op="unknown", outcome="busy") == codes.count("busy"),
      "busy replies counted among requests")
check(val(mid, "rackfit_queue_depth", lane="solver") <= 1, "the solver lane's depth stays within its cap")
print("%d passed, %d failed" % (passed, failed))
