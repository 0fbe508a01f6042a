#!/usr/bin/python3
"""tests/integration/service_check.py: the scenarios behind service_*.sh.

    service_check.py SCENARIO ENDPOINT BIN_DIR SOURCE_DIR WORK_DIR [options]

Talks to a running rackfitd with Debian's python3-zmq and python3-msgpack
(an implementation independent of the server's libzmq/msgpack-c use) via
examples/python/rackfit_client.py. Prints one `ok`/`FAIL` line per check and
a last line `N passed, N failed`; exits 1 on any failure.
"""
import json
import os
import subprocess
import sys
import threading
import time

import msgpack
import zmq

SCENARIO, ENDPOINT, BIN, SRC, WORK = sys.argv[1:6]
EXTRA = sys.argv[6:]
sys.path.insert(0, os.path.join(SRC, "examples", "python"))
from rackfit_client import Client  # noqa: E402

passed = 0
failed = 0
lock = threading.Lock()


def check(ok, what, detail=""):
    global passed, failed
    with lock:
        if ok:
            passed += 1
            print("ok    " + what)
        else:
            failed += 1
            print("FAIL  " + what + (": " + str(detail)[:400] if detail else ""))
    return ok


def pk(obj):
    return msgpack.packb(obj, use_bin_type=True)


def client(timeout=20000, **kw):
    return Client(ENDPOINT, timeout, **kw)


def rackfit_check(problem, answer, name):
    """`rackfit check` on a problem (dict) and an answer (dict)."""
    p = os.path.join(WORK, name + ".problem.json")
    a = os.path.join(WORK, name + ".answer.json")
    with open(p, "w") as f:
        json.dump(problem, f)
    with open(a, "w") as f:
        json.dump({k: v for k, v in answer.items() if k not in ("id", "cluster")}, f)
    r = subprocess.run([os.path.join(BIN, "rackfit"), "check", p, a], capture_output=True, text=True, timeout=120)
    return r.returncode == 0, r.stdout + r.stderr


def alive(c=None):
    c = c or client(5000)
    try:
        r = c.request({"op": "ping", "id": "alive"})
        return r.get("id") == "alive" and r.get("v") == 1
    except zmq.Again:
        return False


def tiny_cluster(n=8, gpus=8):
    return {
        "levels": ["example.com/rack", "kubernetes.io/hostname"],
        "nodes": [{"name": "n%02d" % i,
                   "labels": {"example.com/rack": "r%d" % (i // 4), "kubernetes.io/hostname": "n%02d" % i},
                   "allocatable": {"nvidia.com/gpu": gpus, "cpu": "32", "pods": 110}} for i in range(n)],
    }


def gang(name, pods, gpus=4, rack=True):
    g = {"name": name, "pod_sets": [{"name": "w", "count": pods, "requests": {"nvidia.com/gpu": gpus}}]}
    if rack:
        g["topology"] = {"required": "example.com/rack"}
    return g


# --------------------------------------------------------------------- basic

def scenario_basic():
    c = client()
    r = c.request({"op": "ping", "id": 5})
    check(r.get("id") == 5 and r.get("v") == 1 and "solve" in r.get("ops", []), "ping: version, ops, id echoed", r)
    r = c.request({"v": 1, "op": "ping", "id": "s"})
    check(r.get("id") == "s", "ping: a string id is echoed verbatim", r)
    with open(os.path.join(SRC, "models", "tutorial.json")) as f:
        tutorial = json.load(f)
    r = c.request(dict(tutorial, id="tut"))
    ok, out = rackfit_check(tutorial, r, "tutorial")
    check("gangs" in r and r.get("id") == "tut", "solve inline: an answer with its id", r.get("error"))
    check(ok, "solve inline: rackfit check says feasible", out)
    r = c.request({"op": "ping", "extra": 1})
    check(r.get("error", {}).get("code") == "bad_problem" and r["error"].get("path") == "extra",
          "unknown key: bad_problem with its path", r)
    bad = dict(tutorial)
    bad["gangs"] = [dict(tutorial["gangs"][0], colour="red")]
    r = c.request(bad)
    check(r.get("error", {}).get("path") == "gangs[0].colour", "unknown key deep in a problem: its path", r)
    long = dict(tutorial)
    long["options"] = dict(tutorial.get("options", {}), time_limit_ms=10 ** 9)
    r = c.request(long)
    check(r.get("error", {}).get("code") == "limit_exceeded" and r["error"].get("path") == "options.time_limit_ms",
          "a time limit above max_time_limit_ms: limit_exceeded at options.time_limit_ms", r)

    # stored clusters
    cl = tiny_cluster()
    r = c.request({"op": "cluster.put", "name": "t", "cluster": cl, "id": 1})
    check(r.get("version") == 1 and r.get("name") == "t", "cluster.put: version 1", r)
    r = c.request({"op": "cluster.put", "name": "t", "cluster": cl, "version": 0})
    check(r.get("error", {}).get("code") == "stale_version", "cluster.put version 0 on an existing name: stale", r)
    r = c.request({"cluster_name": "t", "gangs": [gang("a/g1", 2)], "options": {"mode": "greedy"}, "commit": True})
    check(r.get("gangs", [{}])[0].get("admitted") and r.get("cluster", {}).get("version") == 2,
          "solve by name with commit: admitted, version 2", r)
    full = {"cluster": dict(cl), "gangs": [gang("a/g1", 2)]}
    check(rackfit_check(full, r, "stored1")[0], "stored solve: feasible on the stored cluster")
    placed = r["gangs"][0]["pod_sets"][0]["placements"]
    # Fill the rest: 8 nodes x 8 GPUs = 64 GPUs = 16 pods of 4; g1 holds 2.
    r = c.request({"cluster_name": "t", "gangs": [gang("a/g2", 14, rack=False)], "options": {"mode": "greedy"},
                   "commit": True})
    check(r.get("gangs", [{}])[0].get("admitted"), "commit a second gang on the rest", r)
    r = c.request({"cluster_name": "t", "gangs": [gang("a/g3", 1, rack=False)], "options": {"mode": "greedy"}})
    check(r.get("gangs", [{}])[0].get("admitted") is False, "commits are counted: no GPU left for a third gang", r)
    r = c.request({"cluster_name": "t", "cluster_version": 1, "gangs": [gang("a/g3", 1)]})
    check(r.get("error", {}).get("code") == "stale_version", "solve on a stale version: stale_version", r)
    info = c.request({"op": "cluster.info", "name": "t"})
    check(info.get("commits", 0) >= 2 and info.get("commit_pods") == 16, "cluster.info counts the commits", info)
    # The watcher confirms g1: node(s) of g1 now use its GPUs, and the patch says so.
    used = []
    for p in placed:
        used.append({"node": p["node"], "used": {"nvidia.com/gpu": 4 * p["count"], "pods": p["count"]},
                     "includes": ["a/g1"]})
    r = c.request({"op": "cluster.patch", "name": "t", "version": 1, "used": used})
    check(r.get("error", {}).get("code") == "stale_version", "patch on a stale version: stale_version", r)
    r = c.request({"op": "cluster.patch", "name": "t", "version": info["version"], "used": used})
    check(r.get("version") == info["version"] + 1, "patch that confirms g1: new version", r)
    info2 = c.request({"op": "cluster.info", "name": "t"})
    check(info2.get("commit_pods") == 14, "g1's commit dropped once confirmed, g2's kept", info2)
    r = c.request({"cluster_name": "t", "gangs": [gang("a/g3", 1, rack=False)], "options": {"mode": "greedy"}})
    check(r.get("gangs", [{}])[0].get("admitted") is False, "confirmed pods are not counted twice or lost", r)
    r = c.request({"op": "cluster.release", "name": "t", "gangs": ["a/g2"]})
    check(r.get("released", 0) >= 1, "cluster.release drops g2's commits", r)
    r = c.request({"cluster_name": "t", "gangs": [gang("a/g3", 1, rack=False)], "options": {"mode": "greedy"}})
    check(r.get("gangs", [{}])[0].get("admitted") is True, "after the release the GPUs are free again", r)
    r = c.request({"op": "cluster.patch", "name": "t", "version": r["cluster"]["version"],
                   "upsert": [{"name": "n99", "labels": {"example.com/rack": "r9", "kubernetes.io/hostname": "n99"},
                               "allocatable": {"nvidia.com/gpu": 8}}], "remove": ["n00"]})
    check("version" in r, "patch: upsert a node and remove one", r)
    info3 = c.request({"op": "cluster.info", "name": "t"})
    check(info3.get("nodes") == 8, "the patched cluster has 8 nodes", info3)
    r = c.request({"op": "cluster.patch", "name": "t", "version": info3["version"],
                   "upsert": [{"name": "n98", "allocatable": {"cpu": "nope"}}]})
    check(r.get("error", {}).get("path") == 'upsert[0].allocatable.cpu', "patch errors name the patch's field", r)
    r = c.request({"op": "cluster.delete", "name": "t"})
    check(r.get("deleted") is True, "cluster.delete", r)
    # the C client through the CLI
    out = os.path.join(WORK, "cli_answer.json")
    with open(out, "w") as f:
        rc = subprocess.run([os.path.join(BIN, "rackfit"), "solve", "--endpoint", ENDPOINT,
                             os.path.join(SRC, "models", "tutorial.json")], stdout=f, timeout=120).returncode
    check(rc == 0, "rackfit solve --endpoint: exit 0")
    r = subprocess.run([os.path.join(BIN, "rackfit"), "check", os.path.join(SRC, "models", "tutorial.json"), out],
                       capture_output=True, text=True, timeout=120)
    check(r.returncode == 0, "rackfit solve --endpoint: its answer checks", r.stdout + r.stderr)
    # DEALER with the empty delimiter
    d = zmq.Context.instance().socket(zmq.DEALER)
    d.setsockopt(zmq.LINGER, 0)
    d.setsockopt(zmq.RCVTIMEO, 10000)
    d.connect(ENDPOINT)
    for i in range(3):
        d.send_multipart([b"", pk({"op": "ping", "id": i})])
    got = sorted(msgpack.unpackb(d.recv_multipart()[1])["id"] for _ in range(3))
    check(got == [0, 1, 2], "DEALER: three pipelined requests, three replies", got)
    d.send_multipart([pk({"op": "ping"})])  # no delimiter
    frames = d.recv_multipart()
    check(len(frames) == 2 and "error" in msgpack.unpackb(frames[1]), "DEALER without a delimiter: an error reply")
    d.close()
    st = c.request({"op": "stats"})
    check(st.get("requests", 0) > 10 and "greedy" in st.get("by_mode", {}) and st.get("cores", 0) >= 1,
          "stats: requests, per mode, cores", st)


# ----------------------------------------------------------------- malformed

def scenario_malformed():
    c = client(10000)
    for kind in ("pass", "fail"):
        d = os.path.join(SRC, "tests", "data", "msgpack", kind)
        for name in sorted(os.listdir(d)):
            if not name.endswith(".msgpack"):
                continue
            with open(os.path.join(d, name), "rb") as f:
                data = f.read()
            try:
                r = msgpack.unpackb(c.request_raw(data), raw=False)
            except zmq.Again:
                check(False, "%s/%s: no reply" % (kind, name))
                c = client(10000)
                continue
            is_err = isinstance(r, dict) and "error" in r and {"code", "message", "path"} <= set(r["error"])
            check(is_err == (kind == "fail"), "%s/%s: %s" % (kind, name, r["error"]["code"] if is_err else "answer"),
                  r)
    # every prefix of a valid request
    with open(os.path.join(SRC, "models", "tutorial.json")) as f:
        data = pk(json.load(f))
    errors = 0
    for k in range(len(data)):
        r = msgpack.unpackb(c.request_raw(data[:k]), raw=False)
        errors += 1 if "error" in r else 0
    check(errors == len(data), "every one of the %d prefixes of a valid request: an error reply" % len(data))
    # wrong types everywhere, by flipping one byte at a time (bounded sample)
    replies = 0
    for k in range(0, len(data), max(1, len(data) // 300)):
        mutated = bytearray(data)
        mutated[k] ^= 0xFF
        r = msgpack.unpackb(c.request_raw(bytes(mutated)), raw=False)
        replies += isinstance(r, dict)
    check(replies > 0, "single-byte mutations: every one got a map reply (%d)" % replies)
    # oversized message: the socket's ZMQ_MAXMSGSIZE drops the connection; the server lives on
    big = Client(ENDPOINT, 3000)
    try:
        big.request_raw(b"\x81\xa1x\xdb" + (70 * 1024 * 1024).to_bytes(4, "big") + b"x" * (70 * 1024 * 1024))
        check(False, "a message over the socket's size cap got a reply")
    except zmq.Again:
        check(True, "a message over the socket's size cap: dropped by ZMQ_MAXMSGSIZE")
    big.close()
    check(alive(), "the server is alive after all of it")


# ---------------------------------------------------------------------- load

def scenario_load(n_clients=16, n_requests=500):
    n_clients = int(EXTRA[0]) if EXTRA else n_clients
    n_requests = int(EXTRA[1]) if len(EXTRA) > 1 else n_requests
    # a few distinct problems: answers are deterministic, so checking each
    # distinct (problem, answer) once checks every reply that equals it
    problems = []
    for k in range(6):
        cl = tiny_cluster(8 + 4 * k)
        gangs = [gang("ns/g%d-%d" % (k, j), 1 + (j + k) % 4, rack=(j % 2 == 0)) for j in range(3 + k)]
        problems.append({"cluster": cl, "gangs": gangs, "options": {"mode": "greedy" if k % 2 else "auto"}})
    seen = {}
    errors = []
    mismatched = []

    def run(ci):
        c = client(60000)
        for i in range(n_requests):
            k = (ci + i) % len(problems)
            rid = "c%d-%d" % (ci, i)
            r = c.request(dict(problems[k], id=rid))
            if r.get("id") != rid:
                mismatched.append((rid, r.get("id")))
                continue
            if "error" in r:
                errors.append(r["error"])
                continue
            body = json.dumps({kk: v for kk, v in r.items() if kk not in ("id",)}, sort_keys=True)
            key = (k, json.dumps([[p["pod_sets"] if p["admitted"] else None] for p in r["gangs"]], sort_keys=True))
            with lock:
                seen.setdefault(key, body)
        c.close()

    t0 = time.time()
    threads = [threading.Thread(target=run, args=(ci,)) for ci in range(n_clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    dt = time.time() - t0
    total = n_clients * n_requests
    check(not mismatched, "%d replies matched to their requests by id" % total, mismatched[:3])
    check(not errors, "no error replies", errors[:3])
    print("      %d requests in %.1f s (%.0f/s)" % (total, dt, total / dt))
    bad = 0
    for (k, _), body in seen.items():
        ok, out = rackfit_check(problems[k], json.loads(body), "load%d" % k)
        if not ok:
            bad += 1
            print(out)
    check(bad == 0, "every distinct answer (%d) is feasible under rackfit check" % len(seen))
    check(len({k for k, _ in seen}) == len(problems), "each problem always got the same placements",
          sorted(k for k, _ in seen))


# --------------------------------------------------------------------- curve

def scenario_curve():
    server_pub, allowed_pub, allowed_sec = EXTRA[0], EXTRA[1], EXTRA[2]
    c = Client(ENDPOINT, 10000, server_key=server_pub, public_key=allowed_pub, secret_key=allowed_sec)
    check(alive(c), "CURVE: the allowed client is served")
    c.close()
    stranger = Client(ENDPOINT, 2000, server_key=server_pub)  # a fresh key pair, not allowed
    try:
        stranger.request({"op": "ping"})
        check(False, "CURVE: an unknown client got a reply")
    except zmq.Again:
        check(True, "CURVE: an unknown client gets nothing")
    stranger.close()
    plain = Client(ENDPOINT, 2000)
    try:
        plain.request({"op": "ping"})
        check(False, "CURVE: a plain client got a reply")
    except zmq.Again:
        check(True, "CURVE: a plain client gets nothing")
    plain.close()
    c = Client(ENDPOINT, 10000, server_key=server_pub, public_key=allowed_pub, secret_key=allowed_sec)
    check(alive(c), "CURVE: the allowed client is still served after the refusals")
    c.close()


# ------------------------------------------------------------------ preempt

def scenario_preempt():
    """Issue 14: running gangs stored with the cluster, a committed preemption, its confirm."""
    c = client()
    cl = tiny_cluster(n=8, gpus=8)
    for nd in cl["nodes"]:
        nd["used"] = {"nvidia.com/gpu": 8, "pods": 1}
    def rg(name, nodes, preemptible=True):
        return {"name": name, "priority": 0, "preemptible": preemptible,
                "pod_sets": [{"name": "w", "requests": {"nvidia.com/gpu": 8},
                              "placements": [{"node": n, "count": 1} for n in nodes]}]}
    run = [rg("low", ["n00", "n01", "n02", "n03"]), rg("keep", ["n04", "n05", "n06", "n07"], False)]
    r = c.request({"op": "cluster.put", "name": "p", "cluster": cl, "running": run})
    check(r.get("version") == 1, "cluster.put with running gangs", r)
    bad = [rg("ghost", ["nope"])]
    r = c.request({"op": "cluster.put", "name": "p2", "cluster": cl, "running": bad})
    check(r.get("error", {}).get("path", "").startswith("running[0]"), "a bad stored running gang: path-named", r)
    hi = gang("hi", 4, gpus=8)
    hi["priority"] = 10
    r = c.request({"cluster_name": "p", "gangs": [hi], "commit": True, "options": {"mode": "greedy"}})
    ok = r.get("gangs", [{}])[0].get("admitted") and [x.get("preempted") for x in r.get("running", [])] == [True, False]
    check(ok, "the stored running gangs are in the solve: hi preempts low, not keep", r)
    info = c.request({"op": "cluster.info", "name": "p"})
    check(info.get("running") == 2 and info.get("preempting") == 1, "victim still stored until confirm", info)
    placed = [p["node"] for p in r["gangs"][0]["pod_sets"][0]["placements"]]
    used = [{"node": n, "used": {"nvidia.com/gpu": 8, "pods": 1}, "includes": ["hi"]} for n in placed]
    r = c.request({"op": "cluster.patch", "name": "p", "version": info["version"], "used": used})
    check("version" in r, "the watcher's confirm", r)
    info = c.request({"op": "cluster.info", "name": "p"})
    check(info.get("running") == 1 and info.get("preempting") == 0 and info.get("commits") == 0,
          "confirmed: low removed from the stored cluster", info)
    r = c.request({"cluster_name": "p", "gangs": [gang("more", 1, gpus=8, rack=False)], "options": {"mode": "greedy"}})
    check(r.get("gangs", [{}])[0].get("admitted") is False and len(r.get("running", [])) == 1,
          "hi's pods are usage; only keep is listed", r)


{"basic": scenario_basic, "preempt": scenario_preempt, "malformed": scenario_malformed, "load": scenario_load,
 "curve": scenario_curve}[SCENARIO]()
print("%d passed, %d failed" % (passed, failed))
sys.exit(1 if failed else 0)
