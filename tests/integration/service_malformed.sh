#!/usr/bin/env bash
# tests/integration/service_malformed.sh: rackfitd against bad input: the
# corpora tests/data/msgpack/{pass,fail}/ (bombs, deep nesting, huge
# strings, wrong types, bin/ext, duplicate keys...), every prefix of a valid
# request, byte flips, and a message over the socket's size cap; each gets
# an error reply (the last: dropped by ZeroMQ) and the server lives on;
# keys with NUL bytes, the default element budget, and `busy` replies that
# keep the id of a message above big_message_bytes.
#   bash service_malformed.sh BIN_DIR SOURCE_DIR
source "$(dirname "$0")/service_lib.bash" || { echo "0 passed, 1 failed"; exit 1; }

svc_start --max-message-bytes 67108864
svc_scenario malformed
# inline checks: "KIND ok|FAIL what" lines from python, one per check
svc_inline() {
    local line
    while IFS= read -r line; do
        case "$line" in
        ok\ *) pass "${line#ok }" ;;
        *) fail "${line#FAIL }" ;;
        esac
    done < <(timeout 120 "$py" - "$endpoint" "$@" 2>&1)
}
# A key with a NUL byte is not a known key; the default element budget
# (4,000,000) refuses a message of more empty arrays without decoding it.
svc_inline <<'PY'
import sys, zmq, msgpack
c = zmq.Context().socket(zmq.REQ); c.RCVTIMEO = 20000; c.connect(sys.argv[1])
def ask(b):
    c.send(b); return msgpack.unpackb(c.recv(), raw=False)
r = ask(msgpack.packb({"op": "ping", "id": 1, "op\x00x": "ping"}))
print(("ok" if r.get("error", {}).get("code") == "bad_problem" and r.get("id") == 1 else "FAIL") +
      " a key with a NUL byte (\"op\\0x\") is an unknown key: %r" % r)
n = 4500000
r = ask(b"\x82\xa2id\x07\xa1x\xdd" + n.to_bytes(4, "big") + b"\x90" * n)
print(("ok" if r.get("error", {}).get("code") == "limit_exceeded" else "FAIL") +
      " 4,500,000 empty arrays: limit_exceeded by the default element budget: %r" % r)
PY
svc_stop

# `busy` replies keep the request's id, also for messages above
# big_message_bytes (pre-scanned only on the busy path).
svc_start --solver-queue 1 --solver-workers 1 --big-message-bytes 16
svc_inline "$src_dir" <<'PY'
import sys, json, os, zmq, msgpack
c = zmq.Context().socket(zmq.DEALER); c.RCVTIMEO = 60000; c.connect(sys.argv[1])
with open(os.path.join(sys.argv[2], "models", "tutorial.json")) as f:
    tut = json.load(f)
n = 200
for k in range(n):
    c.send_multipart([b"", msgpack.packb(dict(tut, id="r%d" % k, options={"mode": "ilp"}))])
busy = ids = 0
for _ in range(n):
    r = msgpack.unpackb(c.recv_multipart()[-1], raw=False)
    ids += str(r.get("id", "")).startswith("r")
    busy += r.get("error", {}).get("code") == "busy"
print(("ok" if ids == n else "FAIL") + " every reply (%d busy) to a message above big_message_bytes has its id (%d of %d)" % (busy, ids, n))
print(("ok" if busy > 0 else "FAIL") + " a full solver lane answers busy (%d of %d)" % (busy, n))
PY
svc_stop
svc_finish
