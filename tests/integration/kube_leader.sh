#!/usr/bin/env bash
# tests/integration/kube_leader.sh: leader election on a REAL kube-apiserver
# (coordination.k8s.io/v1 Lease, deploy/'s Role for it): two rackfit-watch
# replicas as deploy/'s ServiceAccount; one holds the Lease and binds, the
# other waits; after the leader is SIGKILLed the other takes the Lease over
# (once it expires) and binds the next gang; a SIGTERMed leader releases it;
# a leader killed in the middle of a gang's bindings leaves every pod it
# bound with the attempt's intent (copied by the server from the Binding),
# and the next leader rolls the attempt back from those alone.
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

# a leader killed in the middle of a gang's bindings (5 per second: 20 pods take 4 s): every pod it bound carries
# the attempt's intent (the real server copies the Binding's annotations), and the next leader rolls the attempt
# back from those pods alone
watch_start k "${lease_flags[@]}" --qps 5 --burst 1
k gang pz --pods 20 --gpu 1 --podgroup 20 >/dev/null
expect "a leader starts binding a 20-pod gang" wait_for 30 eval '(($(k nodes-of default pz | wc -l) >= 3))'
watch_stop k KILL
nk=$(k nodes-of default pz | wc -l)
expect "... and is killed with $nk of 20 bound" eval '((nk > 0 && nk < 20))'
expect "... every bound pod carrying its attempt's intent (\"watch-k.* NODE 20\", one attempt)" eval '
    k nodes-of default pz --annotation rackfit.io/bind-intent | awk "
        \$4 !~ /^watch-k\\./ || \$5 != \$2 || \$6 != 20 {bad++} {att[\$4] = 1; n++}
        END {k = 0; for (x in att) k++; exit !(n > 0 && !bad && k == 1)}"'
watch_start c "${lease_flags[@]}"
expect "the next leader rolls the attempt back from its bound pods (fewer than its size)" \
    wait_for 30 in_log "attempt watch-k\.[0-9.]* was left partly bound ([0-9]* of 20 bound, 0 pending)" c
expect "... none of the gang's pods is left bound" wait_for 40 eval '(($(k nodes-of default pz | wc -l) == 0))'
# the test plays the Job controller: the gang again (its PodGroup and pods, once the old ones are gone)
k delete-gang default pz >/dev/null
k wait-gone default pz --timeout 60 >/dev/null
k gang pz --pods 20 --gpu 1 --podgroup 20 >/dev/null
expect "... and then binds the gang whole" k wait-bound default pz 20 --timeout 60
expect "no node over capacity, no partial gang" k check
watch_stop c
expect_no_refusals
finish
