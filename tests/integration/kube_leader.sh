#!/usr/bin/env bash
# tests/integration/kube_leader.sh: leader election on a REAL kube-apiserver
# (coordination.k8s.io/v1 Lease, deploy/'s Role for it): two rackfit-watch
# replicas as deploy/'s ServiceAccount; one holds the Lease and binds, the
# other waits; after the leader is SIGKILLed the other takes the Lease over
# (once it expires) and binds the next gang; a SIGTERMed leader releases it.
#   bash kube_leader.sh BIN_DIR SOURCE_DIR      (skipped, exit 77, when no kube-apiserver could be built)
source "$(dirname "$0")/kube_lib.bash"

kube_up
rfd_start
k nodes --blocks 1 --racks 2 --hosts 4 --gpu 8 >/dev/null
lease_flags=(--lease-duration-s 4 --renew-deadline-s 3 --retry-period-s 1)
watch_start a "${lease_flags[@]}"
for _ in $(seq 50); do
    [[ "$(k lease rackfit-system rackfit-watch 2>/dev/null)" == watch-a ]] && break
    sleep 0.2
done
expect "the first watcher takes the Lease" test "$(k lease rackfit-system rackfit-watch)" == watch-a
watch_start b "${lease_flags[@]}"
sleep 2
k gang g1 --pods 4 --gpu 2 --podgroup 4 --required example.com/rack >/dev/null
expect "the leader binds a gang" k wait-bound default g1 4 --timeout 30
expect "the Lease still names the first watcher" test "$(k lease rackfit-system rackfit-watch)" == watch-a
expect_not "the second watcher bound nothing while it waited" grep -E 'gang .*: bound [0-9]+ pods' "$work/watch.b.log"

start=$SECONDS
watch_stop a KILL
for _ in $(seq 100); do
    [[ "$(k lease rackfit-system rackfit-watch 2>/dev/null)" == watch-b ]] && break
    sleep 0.2
done
expect "after a SIGKILL the second watcher takes the Lease over" test "$(k lease rackfit-system rackfit-watch)" == watch-b
echo "      (takeover after $((SECONDS - start)) s; lease duration 4 s)"
k gang g2 --pods 4 --gpu 2 --podgroup 4 --required example.com/rack >/dev/null
expect "the new leader binds the next gang" k wait-bound default g2 4 --timeout 30
expect "no node over capacity, no partial gang" k check
watch_stop b
expect "a SIGTERMed leader releases the Lease (empty holder)" test -z "$(k lease rackfit-system rackfit-watch)"
expect_no_refusals
finish
