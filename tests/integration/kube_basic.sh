#!/usr/bin/env bash
# tests/integration/kube_basic.sh: rackfit-watch against a REAL kube-apiserver
# (v1.20.2, RBAC on, TLS, deploy/'s RBAC applied; scripts/kube/), with a real
# rackfitd, running as deploy/'s ServiceAccount. What a user would see:
# - a PodGroup gang (the real CRD), a Kueue pod group with slices and a pod
#   alone are bound whole, inside their required domains, within capacity;
# - each bound pod carries its attempt's intent, which the real server
#   copied from the Binding's annotations (no patch of the pod before it);
# - an unschedulable gang gets PodScheduled=False/Unschedulable on its pods
#   and a FailedScheduling Event, readable as core/v1 and events.k8s.io/v1;
# - a gang one of whose pods the kubelet rejects is rolled back: its bound
#   pods deleted with uid preconditions, which the real server honours;
# - a gang whose pods never become Ready within its rackfit.io/ready-timeout
#   is evicted whole through the Eviction API; its replacements wait with the
#   requeue annotation on them;
# - pods of another scheduler are left alone;
# - the server never refused (403) nor rejected as invalid (400/422) any
#   request of the watcher (its audit log), and deploy/'s RBAC is exactly
#   enough: every permission it grants was used (or is excused in
#   tests/kube/rbac-unexercised.txt), and access reviews over a matrix of
#   resources and verbs allow nothing else.
#   bash kube_basic.sh BIN_DIR SOURCE_DIR       (skipped, exit 77, when no kube-apiserver could be built)
source "$(dirname "$0")/kube_lib.bash"

kubelet_flags=(--reject '^rej-3$=OutOfnvidia.com/gpu' --not-ready '^slow-')
kube_up
rfd_start
k nodes --blocks 2 --racks 2 --hosts 4 --gpu 8 >/dev/null # 16 nodes, 128 GPUs
watch_start a

k gang rack8 --pods 8 --gpu 4 --podgroup 8 --required example.com/rack >/dev/null
expect "a PodGroup gang of 8 is bound (real CRD)" k wait-bound default rack8 8 --timeout 30
# the intent rides on the Binding: the real server copies its annotations onto the pod with the node
expect "... every pod with its attempt's intent (\"ATTEMPT NODE 8\", one attempt), from the Binding" eval '
    k nodes-of default rack8 --annotation rackfit.io/bind-intent | awk "
        \$5 != \$2 || \$6 != 8 {bad++} {att[\$4] = 1; n++}
        END {k = 0; for (x in att) k++; exit !(n == 8 && !bad && k == 1)}"'
expect "... and none of its pods patched on the way (the audit log: 0 patches, 8 bindings)" \
    eval '[[ $(k bind-time "$KUBE_DIR/audit.log" default rack8 | cut -d" " -f2-) == "0 8" ]]'
k gang kq --pods 8 --gpu 2 --kueue --required example.com/block --slice-level example.com/rack --slice-size 4 >/dev/null
expect "a Kueue pod group with slices is bound" k wait-bound default kq 8 --timeout 30
k gang solo --pods 1 --gpu 1 >/dev/null
expect "a pod alone is bound" k wait-bound default solo 1 --timeout 30
expect "the kubelet (the test's) started the bound pods" k wait-phase default rack8 Running 8 --timeout 20

# cannot fit: 40 pods of 8 GPUs on 16 nodes
k gang huge --pods 40 --gpu 8 --podgroup 40 >/dev/null
expect "an unschedulable gang gets a FailedScheduling Event (core/v1)" k wait-event default huge --timeout 30
expect "... the same Event read through events.k8s.io/v1" k wait-event default huge --api events --timeout 5
expect "... and PodScheduled=False/Unschedulable on its pods" k condition default huge-0
expect_not "... and none of its pods is bound" k wait-bound default huge 1 --timeout 0

# a kubelet rejection: the gang is rolled back (its bound pods deleted, uid preconditions)
k gang rej --pods 4 --gpu 1 --podgroup 4 >/dev/null
expect "a gang whose pod the kubelet rejects is rolled back whole (all deleted)" k wait-gone default rej --timeout 40
if grep -q 'finish delete default/rej-' "$work/kubelet.log"; then
    pass "... its bound pods went through graceful deletion (the kubelet finished them)"
else
    fail "... its bound pods went through graceful deletion (the kubelet finished them)"
fi
if audit_used | grep -E '^delete core pods - 200 ' >/dev/null; then
    pass "... and the deletes with uid preconditions were accepted (200)"
else
    fail "... and the deletes with uid preconditions were accepted (200)"
    audit_used | grep delete | sed 's/^/      | /'
fi

# readiness: a gang whose pods run but never become Ready within its
# rackfit.io/ready-timeout is evicted whole (the Eviction API), with an Event
k gang slow --pods 2 --gpu 1 --podgroup 2 --annotation rackfit.io/ready-timeout=3s >/dev/null
expect "a gang never Ready within its ready-timeout is evicted whole (Eviction API)" k wait-gone default slow --timeout 40
if audit_used | grep -E '^create core pods eviction 201 ' >/dev/null; then
    pass "... through pods/eviction, accepted (201)"
else
    fail "... through pods/eviction, accepted (201)"
    audit_used | grep -E 'eviction|podgroups' | sed 's/^/      | /'
fi
# its controller's replacements (the test plays it: new names, the same PodGroup) wait out the requeue backoff,
# told so on the pods themselves: the requeue annotation is a merge patch of pod metadata (`patch pods`)
k gang slow --pods 2 --start 2 --gpu 1 --podgroup 2 --annotation rackfit.io/ready-timeout=3s >/dev/null
expect "... its replacements carry the requeue annotation (\"1 NEXT-TRY\") while they wait" \
    eval '[[ $(k wait-annotation default slow rackfit.io/requeue --timeout 20) =~ ^1\ [0-9]{4}- ]]'
k delete-gang default slow >/dev/null

# another scheduler's pods are not ours
k gang other --pods 2 --gpu 1 --podgroup 2 --scheduler default-scheduler >/dev/null
sleep 2
expect_not "pods of another scheduler are left alone" k wait-bound default other 1 --timeout 0

# fill what is left with single pods: never over capacity
for i in $(seq 1 10); do k gang fill$i --pods 1 --gpu 8 >/dev/null; done
sleep 4
expect "no node over capacity, no partial gang, required domains kept" k check
expect_no_refusals
watch_stop a
expect "deploy/'s RBAC is exactly enough: all granted is used, nothing else allowed (access reviews)" \
    k rbac-check "$src_dir/deploy/rbac.yaml" "$KUBE_DIR/audit.log" "$src_dir/tests/kube/rbac-unexercised.txt" \
    "$KUBE_WATCH_USER" "system:serviceaccounts,system:serviceaccounts:$KUBE_WATCH_NAMESPACE"
echo "---- the watcher's requests (verb group resource subresource code count)"
audit_used | sed 's/^/      /'
finish
