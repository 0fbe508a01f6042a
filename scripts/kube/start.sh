#!/usr/bin/env bash
# scripts/kube/start.sh: start a real etcd + kube-apiserver (built by
# scripts/kube/build.sh) on 127.0.0.1, for tests and by hand.
#
#   scripts/kube/start.sh [DIR]                  start both; DIR (made if absent; default
#                                                $RACKFIT_KUBE_DIR, else a new /tmp/rackfit-kube.XXXXXX)
#                                                holds the PKI, tokens, kubeconfigs, logs, pids, etcd data
#   scripts/kube/start.sh --restart-apiserver DIR   stop the API server and start it again, same port
#                                                and flags (etcd keeps running): watches end, and a
#                                                client resuming from an old resourceVersion gets 410
#   source DIR/env                               KUBE_API, KUBE_CA, KUBE_ADMIN_TOKEN, KUBE_WATCH_TOKEN,
#                                                KUBE_WATCH_USER, KUBECONFIG_ADMIN, KUBECONFIG_WATCH,
#                                                KUBE_ETCD, KUBE_DIR
#   scripts/kube/stop.sh DIR                     stop both (by their pids) and remove DIR
#
# The server: TLS with a CA made here by openssl (server certificate for
# 127.0.0.1 and localhost), static bearer tokens (--token-auth-file) for an
# admin (group system:masters) and for deploy/'s ServiceAccount identity
# (system:serviceaccount:NS:NAME, read from deploy/serviceaccount.yaml; override
# with RACKFIT_KUBE_SA=NS:NAME), --authorization-mode=Node,RBAC, no insecure
# port, anonymous auth off, and the admission plugins ServiceAccount and
# TaintNodesByCondition off (there is no controller-manager to make service
# account tokens, and no node lifecycle controller). No kubelet, no
# controllers: tests create nodes with their status and play kubelet through
# pods/status. Every request of the watcher's identity, and the admin's pod
# creations, are audited (metadata level) to DIR/audit.log. Prints the `export` lines of DIR/env when ready.
# Limits: RACKFIT_KUBE_START_TIMEOUT seconds (default 90) for readiness.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
timeout_s=${RACKFIT_KUBE_START_TIMEOUT:-90}

die() {
    echo "kube/start: error: $*" >&2
    exit 1
}

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

start_apiserver() {
    local dir=$1
    # shellcheck disable=SC1091
    source "$dir/env"
    local bin
    bin="$(bash "$here/build.sh" --print)/bin/kube-apiserver"
    [[ -x "$bin" ]] || die "no kube-apiserver at $bin: run scripts/kube/build.sh first"
    local port=${KUBE_API##*:}
    "$bin" \
        --etcd-servers="$KUBE_ETCD" \
        --bind-address=127.0.0.1 --advertise-address=127.0.0.1 --secure-port="$port" --insecure-port=0 \
        --tls-cert-file="$dir/pki/server.crt" --tls-private-key-file="$dir/pki/server.key" \
        --client-ca-file="$dir/pki/ca.crt" \
        --token-auth-file="$dir/tokens.csv" --anonymous-auth=false \
        --authorization-mode=Node,RBAC \
        --disable-admission-plugins=ServiceAccount,TaintNodesByCondition \
        --service-account-issuer=https://kubernetes.default.svc.cluster.local \
        --service-account-key-file="$dir/pki/sa.pub" --service-account-signing-key-file="$dir/pki/sa.key" \
        --service-cluster-ip-range=10.96.0.0/24 --endpoint-reconciler-type=none \
        --audit-policy-file="$dir/audit-policy.yaml" --audit-log-path="$dir/audit.log" --audit-log-format=json \
        --cert-dir="$dir/pki/apiserver" --profiling=false --logtostderr=true --v=1 \
        </dev/null >>"$dir/apiserver.log" 2>&1 &
    echo $! >"$dir/apiserver.pid"
    wait_ready "$dir" "$!"
}

wait_ready() {
    local dir=$1 pid=$2 deadline=$((SECONDS + timeout_s)) code
    while ((SECONDS < deadline)); do
        kill -0 "$pid" 2>/dev/null || {
            tail -30 "$dir/apiserver.log" >&2
            die "kube-apiserver exited (log: $dir/apiserver.log)"
        }
        code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 --cacert "$KUBE_CA" \
            -H "Authorization: Bearer $KUBE_ADMIN_TOKEN" "$KUBE_API/readyz" || true)
        [[ "$code" == 200 ]] && return 0
        sleep 0.3
    done
    tail -30 "$dir/apiserver.log" >&2
    die "kube-apiserver not ready within $timeout_s s (log: $dir/apiserver.log)"
}

make_pki() {
    local p=$1/pki
    mkdir -p "$p/apiserver"
    openssl req -x509 -newkey rsa:2048 -nodes -days 30 -subj "/CN=rackfit-test-ca" \
        -keyout "$p/ca.key" -out "$p/ca.crt" 2>/dev/null
    openssl req -newkey rsa:2048 -nodes -subj "/CN=kube-apiserver" \
        -keyout "$p/server.key" -out "$p/server.csr" 2>/dev/null
    printf 'subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:kubernetes.default.svc\nextendedKeyUsage=serverAuth\n' >"$p/ext"
    openssl x509 -req -in "$p/server.csr" -CA "$p/ca.crt" -CAkey "$p/ca.key" -CAcreateserial -days 30 \
        -extfile "$p/ext" -out "$p/server.crt" 2>/dev/null
    openssl genrsa -out "$p/sa.key" 2048 2>/dev/null
    openssl rsa -in "$p/sa.key" -pubout -out "$p/sa.pub" 2>/dev/null
    [[ -s "$p/server.crt" && -s "$p/sa.pub" ]] || die "openssl could not make the PKI in $p"
}

write_kubeconfig() {
    local file=$1 user=$2 token=$3
    cat >"$file" <<KC
apiVersion: v1
kind: Config
current-context: $user
contexts:
- name: $user
  context: {cluster: rackfit-kube, user: $user, namespace: $4}
clusters:
- name: rackfit-kube
  cluster: {server: "$KUBE_API", certificate-authority: "$KUBE_CA"}
users:
- name: $user
  user: {token: "$token"}
KC
}

# deploy/serviceaccount.yaml's namespace:name, unless RACKFIT_KUBE_SA says otherwise
sa_identity() {
    if [[ -n "${RACKFIT_KUBE_SA:-}" ]]; then
        echo "$RACKFIT_KUBE_SA"
        return
    fi
    python3 - "$root/deploy/serviceaccount.yaml" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
name = re.search(r"^\s+name:\s*(\S+)", text, re.M)
ns = re.search(r"^\s+namespace:\s*(\S+)", text, re.M)
if not (name and ns):
    sys.exit("no metadata.name/namespace in " + sys.argv[1])
print("%s:%s" % (ns.group(1), name.group(1)))
PY
}

start_all() {
    local dir=$1
    mkdir -p "$dir"
    dir=$(cd "$dir" && pwd)
    [[ ! -f "$dir/apiserver.pid" ]] || die "$dir already holds a server (scripts/kube/stop.sh $dir first)"
    command -v etcd >/dev/null || die "no etcd (Debian's etcd-server): run scripts/kube/build.sh"
    command -v openssl >/dev/null || die "no openssl: run scripts/kube/build.sh"
    local sa ns name admin_token watch_token etcd_port peer_port api_port
    sa=$(sa_identity) || die "cannot read the ServiceAccount from deploy/serviceaccount.yaml"
    ns=${sa%%:*}
    name=${sa#*:}
    make_pki "$dir"
    admin_token=admin-$(openssl rand -hex 16)
    watch_token=watch-$(openssl rand -hex 16)
    cat >"$dir/tokens.csv" <<T
$admin_token,rackfit-admin,uid-admin,"system:masters"
$watch_token,system:serviceaccount:$ns:$name,uid-sa-$name,"system:serviceaccounts,system:serviceaccounts:$ns"
T
    etcd_port=$(free_port)
    peer_port=$(free_port)
    api_port=$(free_port)
    cat >"$dir/env" <<E
export KUBE_DIR="$dir"
export KUBE_API="https://127.0.0.1:$api_port"
export KUBE_CA="$dir/pki/ca.crt"
export KUBE_ADMIN_TOKEN="$admin_token"
export KUBE_WATCH_TOKEN="$watch_token"
export KUBE_WATCH_USER="system:serviceaccount:$ns:$name"
export KUBE_WATCH_NAMESPACE="$ns"
export KUBECONFIG_ADMIN="$dir/admin.kubeconfig"
export KUBECONFIG_WATCH="$dir/watch.kubeconfig"
export KUBE_ETCD="http://127.0.0.1:$etcd_port"
E
    # shellcheck disable=SC1091
    source "$dir/env"
    # every request of the watcher's identity (metadata only) to DIR/audit.log:
    # the tests read which verbs it used, and whether any was refused
    cat >"$dir/audit-policy.yaml" <<P
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
  - level: Metadata
    users: ["system:serviceaccount:$ns:$name"]
  # the admin's pod creations: when a gang's last pod arrived (scripts/kube/bench.sh)
  - level: Metadata
    users: ["rackfit-admin"]
    verbs: ["create"]
    resources: [{group: "", resources: ["pods"]}]
  - level: None
P
    write_kubeconfig "$KUBECONFIG_ADMIN" rackfit-admin "$admin_token" default
    write_kubeconfig "$KUBECONFIG_WATCH" "$name" "$watch_token" "$ns"
    etcd --name rackfit --data-dir "$dir/etcd" \
        --listen-client-urls "$KUBE_ETCD" --advertise-client-urls "$KUBE_ETCD" \
        --listen-peer-urls "http://127.0.0.1:$peer_port" --initial-advertise-peer-urls "http://127.0.0.1:$peer_port" \
        --initial-cluster "rackfit=http://127.0.0.1:$peer_port" --log-level warn --logger zap \
        </dev/null >"$dir/etcd.log" 2>&1 &
    echo $! >"$dir/etcd.pid"
    local deadline=$((SECONDS + timeout_s))
    until curl -sf --max-time 2 "$KUBE_ETCD/health" >/dev/null; do
        kill -0 "$(cat "$dir/etcd.pid")" 2>/dev/null || {
            tail -20 "$dir/etcd.log" >&2
            die "etcd exited (log: $dir/etcd.log)"
        }
        ((SECONDS < deadline)) || die "etcd not healthy within $timeout_s s"
        sleep 0.2
    done
    start_apiserver "$dir"
    cat "$dir/env"
}

restart_apiserver() {
    local dir=$1 pid
    [[ -f "$dir/apiserver.pid" ]] || die "no API server recorded in $dir"
    pid=$(cat "$dir/apiserver.pid")
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 150); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    kill -KILL "$pid" 2>/dev/null || true
    echo "---- restarted $(date -u +%FT%TZ)" >>"$dir/apiserver.log"
    start_apiserver "$dir"
}

case "${1:-}" in
--restart-apiserver)
    [[ $# -eq 2 ]] || die "usage: $0 --restart-apiserver DIR"
    restart_apiserver "$2"
    ;;
-h | --help) sed -n '2,30p' "$0" ;;
*)
    [[ $# -le 1 ]] || die "usage: $0 [DIR] | --restart-apiserver DIR"
    dir=${1:-${RACKFIT_KUBE_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/rackfit-kube.XXXXXX")}}
    start_all "$dir"
    ;;
esac
