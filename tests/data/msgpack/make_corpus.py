#!/usr/bin/python3
"""tests/data/msgpack/make_corpus.py: writes the MessagePack request corpora.

    /usr/bin/python3 tests/data/msgpack/make_corpus.py

pass/*.msgpack must be answered without an error; fail/*.msgpack must be
answered with an error (and the server must live on). Both are replayed by
tests/integration/service_malformed.sh and seed the fuzz target
(tests/data/fuzz/fuzz_codec/). Written with python3-msgpack, an encoder
independent of the msgpack-c the server decodes with.
"""
import json
import os
import struct

import msgpack

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", "..", ".."))


def pk(obj):
    return msgpack.packb(obj, use_bin_type=True)


def write(kind, name, data):
    os.makedirs(os.path.join(HERE, kind), exist_ok=True)
    with open(os.path.join(HERE, kind, name + ".msgpack"), "wb") as f:
        f.write(data)


tiny_cluster = {
    "levels": ["rack", "kubernetes.io/hostname"],
    "nodes": [{"name": "n%d" % i, "labels": {"rack": "r%d" % (i // 2), "kubernetes.io/hostname": "n%d" % i},
               "allocatable": {"nvidia.com/gpu": 8, "cpu": "32", "pods": 110}} for i in range(4)],
}
gang = {"name": "g1", "pod_sets": [{"name": "w", "count": 2, "requests": {"nvidia.com/gpu": 4}}]}
with open(os.path.join(ROOT, "models", "tutorial.json")) as f:
    tutorial = json.load(f)

# ---- pass
write("pass", "ping", pk({"op": "ping"}))
write("pass", "ping_v1_id", pk({"v": 1, "op": "ping", "id": "abc"}))
write("pass", "ping_int_id", pk({"op": "ping", "id": 42}))
write("pass", "stats", pk({"op": "stats", "id": 7}))
write("pass", "solve_tiny", pk({"cluster": tiny_cluster, "gangs": [gang], "options": {"mode": "greedy"}}))
write("pass", "solve_tutorial", pk(dict(tutorial, id="t")))
write("pass", "solve_float32_cost", b"\x83" + pk("cluster")[0:0] + pk("cluster") +
      pk(dict(tiny_cluster))[0:0] + pk(tiny_cluster) + pk("gangs") + pk([gang]) + pk("id") + pk(1))
write("pass", "put", pk({"op": "cluster.put", "name": "corpus", "cluster": tiny_cluster}))

# ---- fail
write("fail", "empty", b"")
write("fail", "array_bomb", bytes.fromhex("ddff000000"))
write("fail", "map_bomb", bytes.fromhex("dfffffffff"))
write("fail", "str_bomb", bytes.fromhex("dbffffffff") + b"abc")
write("fail", "nested_bombs", bytes.fromhex("81a16cdd7fffffff"))
write("fail", "deep_arrays", b"\x91" * 100000 + b"\xc0")
write("fail", "deep_maps", b"\x81\xa1k" * 40 + b"\xc0")
write("fail", "not_a_map", pk([1, 2, 3]))
write("fail", "scalar", pk(5))
write("fail", "nil", b"\xc0")
write("fail", "reserved_c1", b"\xc1")
write("fail", "bin_value", b"\x81\xa2op" + b"\xc4\x04ping")
write("fail", "ext_value", b"\x81\xa2op" + b"\xd4\x01\x00")
write("fail", "int_key", b"\x81\x01\xa4ping")
write("fail", "dup_key", b"\x82\xa2op\xa4ping\xa2op\xa4ping")
write("fail", "trailing", pk({"op": "ping"}) + b"\x00")
write("fail", "uint64_big", pk({"op": "ping", "id": 2**64 - 1}))
write("fail", "huge_string", pk({"op": "ping", "id": "x" * 100000}))
write("fail", "bad_version", pk({"v": 2, "op": "ping"}))
write("fail", "unknown_op", pk({"op": "reboot"}))
write("fail", "op_not_string", pk({"op": 3}))
write("fail", "id_float", pk({"op": "ping", "id": 1.5}))
write("fail", "unknown_key", pk({"op": "ping", "verbose": True}))
write("fail", "solve_missing_gangs", pk({"cluster": tiny_cluster}))
write("fail", "solve_wrong_type", pk({"cluster": tiny_cluster, "gangs": [{"name": "g", "pod_sets": [
    {"name": "w", "count": "two"}]}]}))
write("fail", "solve_unknown_deep_key", pk({"cluster": tiny_cluster, "gangs": [dict(gang, colour="red")]}))
write("fail", "solve_unknown_cluster", pk({"cluster_name": "nope", "gangs": [gang]}))
write("fail", "truncated_header", bytes.fromhex("de00"))
write("fail", "truncated_float", bytes.fromhex("81a178cb0000"))
write("fail", "patch_no_version", pk({"op": "cluster.patch", "name": "x"}))
write("fail", "fixarray_overclaim", b"\x9f\x01")
write("fail", "map_of_arrays_overclaim", b"\x81\xa1a" + b"\xdc\xff\xff" + b"\x00" * 100)
