#!/usr/bin/env bash
# tests/integration/probe_kube.sh: rackfit-probe against a REAL kube-apiserver
# (v1.20.2, RBAC on, TLS; scripts/kube/ via kube_lib.bash), running as
# deploy/probe/'s ServiceAccount (rackfit-system:rackfit-probe) with
# deploy/probe/rbac.yaml applied. Inputs are the shared samples (offline
# mode), so the labels are known:
# - the first run writes tier-0, the opt-in locality set and the ownership
#   annotation in one patch; labels it does not own are untouched;
# - a second run with the same facts writes nothing (resourceVersion kept);
# - InfiniBand input gives the leaf as tier-0;
# - what it cannot establish (a nameless LLDP neighbour, a truncated XML) is
#   left alone; what it owns and is no longer true (locality on a NIC-less
#   node) is removed; what someone else set by hand is never removed;
# - a missing node is reported (exit 1);
# - deploy/probe/rbac.yaml is exactly enough: the server never refused the
#   probe, every rule was used, and access reviews over kctl.py's matrix of
#   resources x verbs allow nothing else; the probe's token cannot get or
#   list nodes, nor read pods or secrets.
#   bash probe_kube.sh BIN_DIR SOURCE_DIR    (skipped, exit 77, when no kube-apiserver could be built)
export RACKFIT_KUBE_SA=rackfit-system:rackfit-probe
source "$(dirname "$0")/kube_lib.bash"

probe="$bin_dir/rackfit-probe"
hw="$src_dir/../shared/data/hwloc"
ll="$src_dir/../shared/data/lldp"
ib="$src_dir/../shared/data/ib"

kube_up
if ! out=$(k apply "$src_dir/deploy/probe/serviceaccount.yaml" "$src_dir/deploy/probe/rbac.yaml" 2>&1); then
    fail "deploy/probe/'s ServiceAccount and RBAC are accepted by the real server"
    echo "$out" | sed 's/^/      | /'
    finish
fi
pass "deploy/probe/'s ServiceAccount and RBAC are accepted by the real server"
k nodes --blocks 1 --racks 1 --hosts 3 --prefix p- >/dev/null # p-b0-r0-h0 .. h2

# The Node as the admin sees it.
node_json() { curl -sf --cacert "$KUBE_CA" -H "Authorization: Bearer $KUBE_ADMIN_TOKEN" "$KUBE_API/api/v1/nodes/$1"; }
# $1 node, $2 python expression over m (metadata), l (labels), a (annotations)
meta() {
    node_json "$1" | "$py" -c '
import json, sys
m = json.load(sys.stdin)["metadata"]; l = m.get("labels", {}); a = m.get("annotations", {})
print(eval("(" + sys.argv[1] + ")"))' "$2"
}
run_probe() { # $1 node, rest: flags
    local node=$1
    shift
    "$probe" --kubeconfig "$KUBECONFIG_WATCH" --node "$node" --locality-prefix rackfit.io/ "$@" \
        2>>"$work/probe.log"
}
# Pass when the python expression (over m, l, a) is true for the node.
check_meta() {
    local name=$1 node=$2 expr=$3 got
    got=$(meta "$node" "$expr")
    if [[ $got == True ]]; then pass "$name"; else
        fail "$name"
        meta "$node" 'json.dumps({"labels": l, "annotations": a})' | sed 's/^/      | /'
        tail -5 "$work/probe.log" | sed 's/^/      | /'
    fi
}
T0=fabric.topograph.run/tier-0
OWN=rackfit.io/probe-labels

# 1. First run: Pascal (both GPUs PIX to mlx5_0) under a switch-like LLDP peer.
n=p-b0-r0-h0
rv0=$(meta $n 'm["resourceVersion"]')
run_probe $n --hwloc-xml "$hw/mpibind-cts1-pascal.xml" --lldp-json "$ll/lldpcli-json0-switchlike-peer.json"
check_meta "first run: tier-0, the locality set and the ownership annotation, one patch" $n \
    "l.get('$T0') == 'leaf07.r07.pod1' and l.get('rackfit.io/gpu-nic-path') == 'pix' and
     l.get('rackfit.io/gpu-nic-pix') == '2' and '$T0' in a.get('$OWN', '').split(',') and
     'accelerator.topograph.run/domain' not in l and int(m['resourceVersion']) > $rv0"
check_meta "labels the probe does not own are untouched" $n \
    "l.get('example.com/rack') == 'b0-r0' and l.get('kubernetes.io/hostname') == '$n'"
[[ $(grep -c "node $n patched" "$work/probe.log") == 1 ]] && pass "the first run logged exactly one patch" ||
    fail "the first run logged $(grep -c "node $n patched" "$work/probe.log") patches"

# 2. Same facts again: no write at all.
rv1=$(meta $n 'm["resourceVersion"]')
run_probe $n --hwloc-xml "$hw/mpibind-cts1-pascal.xml" --lldp-json "$ll/lldpcli-json0-switchlike-peer.json"
rv2=$(meta $n 'm["resourceVersion"]')
[[ $rv1 == "$rv2" ]] && grep -q "node $n: labels already up to date" "$work/probe.log" &&
    pass "a second run with the same facts writes nothing (resourceVersion $rv1 kept)" ||
    fail "a second run wrote: resourceVersion $rv1 -> $rv2"

# 3. InfiniBand: the leaf of the saved smpquery/iblinkinfo output.
run_probe p-b0-r0-h1 --ib-file "$ib/ibsim-iblinkinfo-smpquery.txt"
check_meta "InfiniBand input: tier-0 is the leaf A09-P1-IBLEAF-04-04" p-b0-r0-h1 "l.get('$T0') == 'A09-P1-IBLEAF-04-04'"

# 4. What cannot be established is left alone; what it owns and no longer holds is removed.
run_probe $n --hwloc-xml "$hw/hwloc-nvidiaDGX2.xml" --lldp-json "$ll/lldpcli-json0-sg200-connectx.json"
check_meta "nameless LLDP neighbours: tier-0 left as it was; NIC-less topology: owned locality labels removed" $n \
    "l.get('$T0') == 'leaf07.r07.pod1' and not any(k.startswith('rackfit.io/gpu-nic') for k in l) and
     a.get('$OWN') == '$T0'"
rv3=$(meta $n 'm["resourceVersion"]')
printf '<?xml version="1.0"?>\n<topology version="2.0">\n  <object type="Machine"' >"$work/cut.xml"
run_probe $n --hwloc-xml "$work/cut.xml" --lldp-json "$ll/lldpcli-json0-switchlike-peer.json"
[[ $(meta $n 'm["resourceVersion"]') == "$rv3" ]] && grep -q "truncated" "$work/probe.log" &&
    pass "a truncated XML is reported and nothing is written" || fail "a truncated XML changed the node"

# 5. Labels set by hand under the probe's keys: never removed, replaced only by an established value.
curl -sf --cacert "$KUBE_CA" -H "Authorization: Bearer $KUBE_ADMIN_TOKEN" -X PATCH \
    -H "Content-Type: application/merge-patch+json" "$KUBE_API/api/v1/nodes/p-b0-r0-h2" \
    -d '{"metadata":{"labels":{"'$T0'":"by-hand","rackfit.io/gpu-nic-path":"hand"}}}' >/dev/null
run_probe p-b0-r0-h2 --hwloc-xml "$hw/hwloc-nvidiaDGX2.xml" --lldp-json "$ll/lldpcli-json0-sg200-connectx.json"
check_meta "hand-set labels under the probe's keys are not removed when the probe cannot or need not" p-b0-r0-h2 \
    "l.get('$T0') == 'by-hand' and l.get('rackfit.io/gpu-nic-path') == 'hand' and '$OWN' not in a"

# 6. A node that does not exist.
run_probe p-nope --hwloc-xml "$hw/mpibind-cts1-pascal.xml"
rc=$?
((rc == 1)) && grep -q "p-nope.*404" "$work/probe.log" && pass "a missing node: exit 1, HTTP 404 reported" ||
    fail "a missing node: exit $rc"

# 7. Least privilege.
bad=$(audit_used | awk '$5 == 401 || $5 == 403 || $5 == 400 || $5 == 422')
[[ -z $bad ]] && pass "the server never refused (401/403) or rejected (400/422) a request of the probe" ||
    fail "refused requests: $bad"
: >"$work/no-exceptions.txt"
expect "deploy/probe/rbac.yaml is exactly enough: patch nodes used, nothing else allowed (access reviews)" \
    k rbac-check "$src_dir/deploy/probe/rbac.yaml" "$KUBE_DIR/audit.log" "$work/no-exceptions.txt" \
    "$KUBE_WATCH_USER" "system:serviceaccounts,system:serviceaccounts:$KUBE_WATCH_NAMESPACE"
as_probe() { curl -s -o /dev/null -w '%{http_code}' --cacert "$KUBE_CA" -H "Authorization: Bearer $KUBE_WATCH_TOKEN" "$@"; }
codes="get-node=$(as_probe "$KUBE_API/api/v1/nodes/$n") list-nodes=$(as_probe "$KUBE_API/api/v1/nodes")"
codes+=" list-pods=$(as_probe "$KUBE_API/api/v1/pods") secrets=$(as_probe "$KUBE_API/api/v1/namespaces/rackfit-system/secrets")"
codes+=" delete-node=$(as_probe -X DELETE "$KUBE_API/api/v1/nodes/$n")"
codes+=" node-status=$(as_probe -X PATCH -H 'Content-Type: application/merge-patch+json' -d '{}' \
    "$KUBE_API/api/v1/nodes/$n/status")"
[[ $codes != *=[^4]* && $(grep -o '=403' <<<"$codes" | wc -l) == 6 ]] &&
    pass "the probe's token is refused everything else: $codes" || fail "the probe's token: $codes"
grep -Eiq 'ERROR: AddressSanitizer|runtime error|LeakSanitizer' "$work/probe.log" &&
    fail "the probe's log has a sanitizer report" || pass "no sanitizer report in the probe's log"
echo "---- the probe's requests (verb group resource subresource code count)"
audit_used | sed 's/^/      /'
finish
