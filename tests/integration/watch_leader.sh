#!/usr/bin/env bash
# tests/integration/watch_leader.sh: one active watcher, and taking over.
# - two watchers, one Lease: only the holder binds;
# - the holder is killed (SIGKILL, no release): the other takes the Lease
#   once it expires and binds the next gang;
# - a watcher killed (SIGKILL) in the middle of a gang's bindings leaves
#   some pods bound, each with the intent its Binding carried: the watcher
#   that takes over finds the attempt from those alone (fewer bound than its
#   size), rolls it back, and binds the gang whole;
# - likewise for intents written by hand: two bound of the intent's four, the
#   others recreated without it; and two bound, two pending with the intent
#   (what watchers that patched the intent before binding left behind);
# - a watcher whose Lease is taken from it stops binding and exits 1;
# - a watcher whose renewals do not come back in time counts the Lease as
#   lost at the renew deadline and exits 1;
# - a watcher with a wrong token binds nothing (401s) and says so.
#   bash watch_leader.sh BIN_DIR SOURCE_DIR
source "$(dirname "$0")/watch_lib.bash"

lease=(--lease-duration-s 2 --renew-deadline-s 1.5 --retry-period-s 0.25 --backoff-base-s 0.3 --request-timeout-ms 2000)
in_log() { grep -q "$2" "$work/watch.$1.log"; }
wait_for() {
    local end=$((SECONDS + $1))
    shift
    while ((SECONDS < end)); do "$@" && return 0; sleep 0.2; done
    "$@"
}

emu_start
rfd_start
ctl nodes --blocks 1 --racks 2 --hosts 4 --gpu 8 >/dev/null

watch_start a "${lease[@]}"
expect "watcher a takes the Lease" wait_for 10 in_log a "leading: lease"
watch_start b "${lease[@]}"
sleep 1
ctl gang g1 --pods 8 --gpu 2 --podgroup 8 >/dev/null
expect "the leader binds a gang" ctl wait-bound default g1 8 --timeout 20
expect "... watcher a bound it" in_log a "gang default/g1: bound 8 pods"
expect_not "... watcher b, not leading, bound nothing" in_log b "bound [0-9]* pods"

watch_stop a KILL
ctl gang g2 --pods 4 --gpu 2 --podgroup 4 >/dev/null
expect "when the leader dies, the other takes the Lease" wait_for 15 in_log b "leading: lease"
expect "... knowing it expired (the intents are read a request timeout later)" \
    in_log b "taken over from watch-a, whose lease expired"
expect "... and binds the next gang" ctl wait-bound default g2 4 --timeout 20
watch_stop b

# a leader killed in the middle of a gang's bindings (5 per second: 20 pods take 4 s)
watch_start k "${lease[@]}" --qps 5 --burst 1
expect "watcher k takes the Lease" wait_for 15 in_log k "leading: lease"
ctl gang pz --pods 20 --gpu 1 --podgroup 20 --recreate >/dev/null
expect "... starts binding a 20-pod gang" wait_for 15 eval '(($(ctl nodes-of default pz | wc -l) >= 3))'
watch_stop k KILL
nk=$(ctl nodes-of default pz | wc -l)
expect "... and is killed with $nk of 20 bound" eval '((nk > 0 && nk < 20))'
# every bound pod: "POD NODE ATTEMPT NODE 20", one attempt of watcher k, the intent naming the pod's own node
intents_ok() {
    ctl nodes-of default pz --annotation rackfit.io/bind-intent | awk '
        $3 !~ /^watch-k\.[0-9]+\.[0-9]+$/ || $4 != $2 || $5 != 20 {bad++} {att[$3] = 1; n++}
        END {k = 0; for (x in att) k++; exit !(n > 0 && !bad && k == 1)}'
}
expect "... every bound pod carrying its attempt's intent (the Binding's annotation)" intents_ok

# an attempt left half done by a crashed leader of an earlier version (intent patched before binding):
# 2 pods bound, 2 pending, one intent
ctl nodes --prefix spare- --gpu 8 >/dev/null # room for the half-bound gang, whatever the others took
node=spare-b0-r0-h0
ctl gang px --pods 2 --gpu 1 --podgroup 4 --recreate --annotation "rackfit.io/bind-intent=dead.1 $node 4" \
    --extra "{\"nodeName\": \"$node\"}" >/dev/null
ctl gang px --pods 2 --start 2 --gpu 1 --podgroup 4 --recreate \
    --annotation "rackfit.io/bind-intent=dead.1 $node 4" >/dev/null
# and one whose pending pods were recreated without the intent: 2 bound of the intent's 4
ctl gang py --pods 2 --gpu 1 --podgroup 4 --recreate --annotation "rackfit.io/bind-intent=dead.2 $node 4" \
    --extra "{\"nodeName\": \"$node\"}" >/dev/null
ctl gang py --pods 2 --start 2 --gpu 1 --podgroup 4 --recreate >/dev/null
watch_start c "${lease[@]}"
expect "a watcher taking over rolls back the killed leader's attempt from its bound pods alone" \
    wait_for 15 in_log c "attempt watch-k\.[0-9.]* was left partly bound ([0-9]* of 20 bound, 0 pending)"
expect "... and then binds that gang whole" ctl wait-bound default pz 20 --timeout 30
expect "a watcher taking over rolls back an attempt left partly bound" wait_for 15 in_log c "attempt dead.1 was left partly bound"
expect "... and then binds the gang whole" ctl wait-bound default px 4 --timeout 20
expect "... also when fewer than the intent's size are bound, with no partner pending" \
    in_log c "attempt dead.2 was left partly bound (2 of 4 bound, 0 pending)"
expect "... and then binds that gang whole" ctl wait-bound default py 4 --timeout 20
sleep 1
expect "no node over capacity, no partial gang" ctl check

# the Lease taken away: binding stops, the watcher exits 1
expect "the Lease can be taken from watcher c" ctl lease-steal rackfit-system rackfit-watch intruder
rc=0
for _ in $(seq 50); do kill -0 "${watch_pids[c]}" 2>/dev/null || break; sleep 0.2; done
wait "${watch_pids[c]}" || rc=$?
unset "watch_pids[c]"
if ((rc == 1)) && in_log c "lost the lease"; then pass "a watcher that loses its Lease stops and exits 1"; else
    fail "a watcher that loses its Lease stops and exits 1 (exit $rc)"
fi
ctl gang after --pods 2 --gpu 1 --podgroup 2 >/dev/null
sleep 1
expect_not "... and binds nothing afterwards" ctl wait-bound default after 1 --timeout 0

# renewals that do not come back in time (every request slowed past the renew deadline): the
# Lease counts as lost when the deadline passes, not after the slow requests return
watch_start e "${lease[@]}"
expect "watcher e takes the Lease" wait_for 15 in_log e "leading: lease"
ctl faults '{"latency": 4}' >/dev/null
t0=$SECONDS
rc=0
for _ in $(seq 60); do kill -0 "${watch_pids[e]}" 2>/dev/null || break; sleep 0.1; done
wait "${watch_pids[e]}" || rc=$?
unset "watch_pids[e]"
ctl faults '{"latency": null}' >/dev/null
if ((rc == 1 && SECONDS - t0 <= 4)) && in_log e "not renewed within the renew deadline\|not renewed in time"; then
    pass "a Lease not renewed within the deadline is lost at the deadline (exit 1)"
else
    fail "a Lease not renewed within the deadline is lost at the deadline (exit $rc after $((SECONDS - t0)) s)"
fi

# a wrong token: 401s, nothing bound, the reason in the log
kubeconfig_write "$work/bad-kubeconfig" wrong-token
"$bin_dir/rackfit-watch" --kubeconfig "$work/bad-kubeconfig" --solver "$endpoint" --scheduler-name rackfit \
    --levels "$levels" --identity watch-d --leader-elect false 2>"$work/watch.d.log" &
watch_pids[d]=$!
expect "with a wrong token the watcher reports the 401" wait_for 10 in_log d "HTTP 401"
expect_not "... and binds nothing" ctl wait-bound default after 1 --timeout 1
watch_stop d
finish
