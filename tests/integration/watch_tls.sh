#!/usr/bin/env bash
# tests/integration/watch_tls.sh: rackfit-watch over TLS, verified against the
# cluster CA: the emulator serves HTTPS with a certificate signed by a CA made
# here (openssl); a kubeconfig with that CA (certificate-authority-data)
# binds a gang; one with another CA binds nothing and logs the certificate
# problem. Without openssl it exits 77 (skipped, saying why), which
# scripts/test.sh counts as a failure: bootstrap.sh installs openssl.
#   bash watch_tls.sh BIN_DIR SOURCE_DIR
source "$(dirname "$0")/watch_lib.bash"

if ! command -v openssl >/dev/null; then
    echo "skip  openssl is not installed: TLS not tested (scripts/bootstrap.sh installs it)"
    exit 77
fi
cd "$work" || exit 1
mk_ca() { openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=$1" -keyout "$1.key" -out "$1.pem" 2>/dev/null; }
mk_ca ca
mk_ca other-ca
openssl req -newkey rsa:2048 -nodes -subj "/CN=127.0.0.1" -keyout server.key -out server.csr 2>/dev/null
printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\n' >san.ext
openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 -extfile san.ext \
    -out server.pem 2>/dev/null
[[ -s server.pem ]] || { fail "openssl could not make the certificates"; finish; }

emu_start --tls-cert "$work/server.pem" --tls-key "$work/server.key"
api_https=${api/http:/https:}
rfd_start

tls_kubeconfig() { # FILE CA_PEM
    cat >"$1" <<KC
apiVersion: v1
kind: Config
current-context: emu
contexts:
- name: emu
  context: {cluster: emu, user: emu, namespace: rackfit-system}
clusters:
- name: emu
  cluster:
    server: "$api_https"
    certificate-authority-data: $(base64 -w0 <"$2")
users:
- name: emu
  user: {token: "$token"}
KC
}
tls_kubeconfig "$work/kubeconfig" "$work/ca.pem"
tls_kubeconfig "$work/kubeconfig-other" "$work/other-ca.pem"

# seed the cluster through a plain client that trusts the CA (python)
"$py" - "$api_https" "$token" "$work/ca.pem" <<'PY'
import http.client, json, ssl, sys
from urllib.parse import urlparse
u = urlparse(sys.argv[1])
ctx = ssl.create_default_context(cafile=sys.argv[3])
c = http.client.HTTPSConnection(u.hostname, u.port, context=ctx)
h = {"Authorization": "Bearer " + sys.argv[2], "Content-Type": "application/json"}
for i in range(4):
    n = {"metadata": {"name": "n%d" % i, "labels": {"example.com/block": "b0", "example.com/rack": "r0",
         "kubernetes.io/hostname": "n%d" % i}}, "status": {"allocatable": {"cpu": "8", "nvidia.com/gpu": "8",
         "pods": "110"}, "conditions": [{"type": "Ready", "status": "True"}]}}
    c.request("POST", "/api/v1/nodes", json.dumps(n), h); c.getresponse().read()
c.request("POST", "/apis/scheduling.x-k8s.io/v1alpha1/namespaces/default/podgroups",
          json.dumps({"metadata": {"name": "t", "namespace": "default"}, "spec": {"minMember": 4}}), h)
c.getresponse().read()
for i in range(4):
    p = {"metadata": {"name": "t-%d" % i, "namespace": "default", "labels": {"scheduling.x-k8s.io/pod-group": "t"}},
         "spec": {"schedulerName": "rackfit", "containers": [{"name": "m", "resources": {"requests": {"nvidia.com/gpu": "2"},
         "limits": {"nvidia.com/gpu": "2"}}}]}}
    c.request("POST", "/api/v1/namespaces/default/pods", json.dumps(p), h); c.getresponse().read()
PY

# the wrong CA first: nothing is bound, the log says why
cp "$work/kubeconfig-other" "$work/kubeconfig"
watch_start other
sleep 2
expect "with another CA the watcher does not trust the server" grep -qi "certificate" "$work/watch.other.log"
watch_stop other
tls_kubeconfig "$work/kubeconfig" "$work/ca.pem"
watch_start good
ok=0
for _ in $(seq 100); do
    "$py" - "$api_https" "$token" "$work/ca.pem" <<'PY' && { ok=1; break; }
import http.client, json, ssl, sys
from urllib.parse import urlparse
u = urlparse(sys.argv[1])
c = http.client.HTTPSConnection(u.hostname, u.port, context=ssl.create_default_context(cafile=sys.argv[3]))
c.request("GET", "/api/v1/namespaces/default/pods", headers={"Authorization": "Bearer " + sys.argv[2]})
pods = json.loads(c.getresponse().read())["items"]
sys.exit(0 if sum(1 for p in pods if p["spec"].get("nodeName")) == 4 else 1)
PY
    sleep 0.2
done
if ((ok)); then pass "over TLS with the cluster CA the gang is bound"; else fail "over TLS with the cluster CA the gang is bound"; fi
watch_stop good
finish
