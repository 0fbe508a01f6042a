#!/usr/bin/python3
"""examples/python/rackfit_client.py: a short client for rackfitd.

Uses Debian's python3-zmq and python3-msgpack (run it with /usr/bin/python3:
another python3 earlier on PATH may not see them). It is also the second,
independent MessagePack and ZeroMQ implementation the integration tests use
to check the wire format (tests/integration/service_*.sh).

    rackfit_client.py ENDPOINT ping
    rackfit_client.py ENDPOINT stats
    rackfit_client.py ENDPOINT solve PROBLEM.json          # the answer as JSON
    rackfit_client.py ENDPOINT put NAME CLUSTER.json       # stores problem["cluster"]
    rackfit_client.py ENDPOINT request REQUEST.json        # any request map
Options: --server-key Z85 --public-key Z85 --secret-key Z85 (CURVE),
         --timeout MS (default 60000).
Exit status: 0 a reply that is not an error, 1 an error reply, 2 usage,
3 no reply (timeout or transport).
"""
import json
import sys

import msgpack
import zmq


class Client:
    """One REQ connection to rackfitd; request() sends a dict, returns a dict."""

    def __init__(self, endpoint, timeout_ms=60000, server_key=None, public_key=None, secret_key=None):
        self.ctx = zmq.Context.instance()
        self.sock = self.ctx.socket(zmq.REQ)
        self.sock.setsockopt(zmq.REQ_RELAXED, 1)
        self.sock.setsockopt(zmq.REQ_CORRELATE, 1)
        self.sock.setsockopt(zmq.LINGER, 0)
        self.sock.setsockopt(zmq.RCVTIMEO, timeout_ms)
        self.sock.setsockopt(zmq.SNDTIMEO, timeout_ms)
        if server_key:
            if not (public_key and secret_key):
                public_key, secret_key = zmq.curve_keypair()
            self.sock.curve_serverkey = server_key.encode() if isinstance(server_key, str) else server_key
            self.sock.curve_publickey = public_key.encode() if isinstance(public_key, str) else public_key
            self.sock.curve_secretkey = secret_key.encode() if isinstance(secret_key, str) else secret_key
        self.sock.connect(endpoint)

    def request_raw(self, payload: bytes) -> bytes:
        self.sock.send(payload)
        return self.sock.recv()

    def request(self, req: dict) -> dict:
        return msgpack.unpackb(self.request_raw(msgpack.packb(req, use_bin_type=True)), raw=False)

    def close(self):
        self.sock.close(0)


def main(argv):
    args, opts = [], {"timeout": 60000}
    i = 1
    while i < len(argv):
        a = argv[i]
        if a in ("--server-key", "--public-key", "--secret-key", "--timeout") and i + 1 < len(argv):
            opts[a[2:].replace("-", "_")] = argv[i + 1]
            i += 2
            continue
        args.append(a)
        i += 1
    if len(args) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    endpoint, cmd = args[0], args[1]
    if cmd in ("ping", "stats"):
        req = {"op": cmd}
    elif cmd == "solve" and len(args) == 3:
        with open(args[2]) as f:
            req = json.load(f)
    elif cmd == "put" and len(args) == 4:
        with open(args[3]) as f:
            req = {"op": "cluster.put", "name": args[2], "cluster": json.load(f)["cluster"]}
    elif cmd == "request" and len(args) == 3:
        with open(args[2]) as f:
            req = json.load(f)
    else:
        print(__doc__, file=sys.stderr)
        return 2
    c = Client(endpoint, int(opts["timeout"]), opts.get("server_key"), opts.get("public_key"),
               opts.get("secret_key"))
    try:
        reply = c.request(req)
    except zmq.Again:
        print("rackfit_client: no reply (timed out)", file=sys.stderr)
        return 3
    finally:
        c.close()
    json.dump(reply, sys.stdout)
    sys.stdout.write("\n")
    return 1 if "error" in reply else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
