#!/usr/bin/env bash
# tests/integration/kube_restart.sh: watch resume and relist against a REAL
# kube-apiserver. The API server is restarted under a running rackfit-watch
# (etcd keeps running): its streams break, and the resourceVersions it
# resumes from are older than the new server's watch cache, which answers 410
# "too old resource version" as a real server does. The watcher must list
# again and go on binding with its cache right: a gang force-deleted while it
# reconnects is gone from its cache (a gang that needs that rack is bound),
# nothing is bound twice or over capacity. While the new server starts, before
# its RBAC caches are filled, it answers 403: no other refusal is allowed.
#   bash kube_restart.sh BIN_DIR SOURCE_DIR     (skipped, exit 77, when no kube-apiserver could be built)
source "$(dirname "$0")/kube_lib.bash"

kube_up
rfd_start
k nodes --blocks 1 --racks 2 --hosts 2 --gpu 8 >/dev/null # 2 racks of 2 nodes, 16 GPUs a rack
# a Lease long enough to outlive the restart (about 10 s on 2 cores)
watch_start a --lease-duration-s 60 --renew-deadline-s 50
k gang g1 --pods 4 --gpu 4 --podgroup 4 --required example.com/rack >/dev/null
expect "a gang is bound before the restart (one whole rack)" k wait-bound default g1 4 --timeout 30
expect "... and started" k wait-phase default g1 Running 4 --timeout 20

start=$SECONDS
t0=$(date +%s.%N)
if bash "$src_dir/scripts/kube/start.sh" --restart-apiserver "$KUBE_DIR" >"$work/restart.log" 2>&1; then
    pass "the API server restarted ($((SECONDS - start)) s)"
else
    fail "the API server restarted"
    tail -20 "$work/restart.log" | sed 's/^/      | /'
    finish
fi
# a real server starting up answers before its RBAC caches are filled:
# requests in that window may get 403 (the watcher backs off and resumes);
# the 2 s after readiness are part of the window too
audit_window="$t0,$(date -d '+2 seconds' +%s.%N)"
k delete-gang default g1 >/dev/null # force (grace 0), as soon as the server is back
k gang g2 --pods 4 --gpu 4 --podgroup 4 --required example.com/rack >/dev/null
k gang g3 --pods 4 --gpu 4 --podgroup 4 --required example.com/rack >/dev/null
expect "after the restart, a new gang is bound" k wait-bound default g2 4 --timeout 40
expect "... and one in the rack g1 held (its deletion reached the watcher's cache)" k wait-bound default g3 4 --timeout 30
expect "the watcher's streams got 410 and it listed again" \
    grep -E 'is gone \(410\): listing again' "$work/watch.a.log"
expect "no node over capacity, no partial gang, required domains kept" k check
expect "the watcher still holds the Lease" test "$(k lease rackfit-system rackfit-watch)" == watch-a
expect_no_refusals
watch_stop a
finish
