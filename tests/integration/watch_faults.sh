#!/usr/bin/env bash
# tests/integration/watch_faults.sh: rackfit-watch survives what the API
# server does to it, and never leaves a gang partly bound:
# - bindings failing for a passing reason (503, 429 with Retry-After) are
#   retried and the gang is bound whole;
# - a binding that keeps failing mid-gang rolls the gang back (the bound pods
#   are deleted with a uid precondition, their controller recreates them) and
#   the gang is bound whole on a later attempt, after a backoff;
# - a binding applied by the server but answered with a 5xx is found bound
#   (GET) and rolled back with the others;
# - a pod the kubelet rejects (OutOfcpu) rolls its gang back the same way;
# - a watch ending with an ERROR event (not 410) is backed off, not retried
#   in a tight loop;
# - watch streams cut mid-way, and resourceVersions compacted away (410 Gone,
#   as an ERROR event and as an HTTP status), are survived: gangs created
#   afterwards are still bound;
# - the emulator's binding subresource answers as kube-apiserver v1.20.2:
#   a Binding named otherwise than its URL's pod is refused (400), one with
#   a wrong metadata.uid binds all the same (201); with
#   RF_EMU_CHECK_BINDING_UID=1 it acts like a server that checks it (409);
# - at the end: no node over capacity, no partial gang.
#   bash watch_faults.sh BIN_DIR SOURCE_DIR
source "$(dirname "$0")/watch_lib.bash"

counter() { ctl state | "$py" -c "import json,sys; print(json.load(sys.stdin)['counters'].get('$1', 0))"; }
at_least() { (($(counter "$1") >= $2)); }
in_log() { grep -q "$1" "$work/watch.a.log"; }
wait_for() { # wait_for SECONDS CMD...
    local end=$((SECONDS + $1))
    shift
    while ((SECONDS < end)); do "$@" && return 0; sleep 0.2; done
    "$@"
}

emu_start --bookmark-interval 0.5
rfd_start
ctl nodes --blocks 2 --racks 2 --hosts 4 --gpu 8 >/dev/null
watch_start a --backoff-base-s 0.3 --backoff-cap-s 2 --max-retries 3 --qps 500 --burst 100

# passing failures: retried
ctl faults '{"bind_fail": {"^tr-3$": {"status": 503, "times": 2}}}' >/dev/null
ctl gang tr --pods 4 --gpu 1 --podgroup 4 --recreate >/dev/null
expect "503s on a binding are retried: the gang is bound" ctl wait-bound default tr 4 --timeout 20
expect "... after the 2 injected failures" at_least bind_injected_503 2
ctl faults '{"bind_fail": null, "throttle": {"every": 3, "retry_after": 0.2, "path_re": "binding$", "method": "POST"}}' >/dev/null
ctl gang thr --pods 16 --gpu 1 --podgroup 16 --recreate >/dev/null
expect "429s with Retry-After are waited out: the gang is bound" ctl wait-bound default thr 16 --timeout 20
expect "... after being throttled" at_least throttled 3
ctl faults '{"throttle": null}' >/dev/null

# a failure that outlasts the retries: rollback, then a later attempt binds it whole
ctl faults '{"bind_fail": {"^bad-5$": {"status": 500, "times": 4}}}' >/dev/null
ctl gang bad --pods 8 --gpu 2 --podgroup 8 --recreate >/dev/null
expect "a binding failing mid-gang: the bound pods are deleted" wait_for 20 at_least "delete pods" 7
expect "... and recreated by their controller" wait_for 20 at_least recreated 7
expect "... and the gang is bound whole on a later attempt" ctl wait-bound default bad 8 --timeout 30
expect "... the watcher logged the rollback" in_log "gang default/bad: rolled back"
ctl faults '{"bind_fail": null}' >/dev/null

# a binding the server applied but answered 500 (as a timed-out answer looks): the watcher asks the
# server, finds the pod bound, and the rollback deletes it with the others (never a partial gang)
ctl faults '{"bind_fail": {"^ap-2$": {"status": 500, "times": 5, "apply": true}, "^ap-3$": {"status": 500, "times": 4}}}' >/dev/null
ctl gang ap --pods 4 --gpu 1 --podgroup 4 --recreate >/dev/null
expect "a binding applied but answered 500 is found bound" wait_for 20 in_log "pod default/ap-2 was bound although its binding failed"
expect "... it is rolled back with the others" wait_for 20 in_log "gang default/ap: rolled back: deleted 3 bound pods"
expect "... and the gang is bound whole on a later attempt" ctl wait-bound default ap 4 --timeout 30
ctl faults '{"bind_fail": null}' >/dev/null

# the kubelet rejects a pod: rollback
ctl faults '{"kubelet_reject": {"^kr-2$": "OutOfcpu"}}' >/dev/null
ctl gang kr --pods 4 --gpu 1 --podgroup 4 --recreate >/dev/null
expect "a pod the kubelet rejects rolls its gang back" wait_for 20 in_log "the kubelet rejected pod default/kr-2: OutOfcpu"
ctl faults '{"kubelet_reject": null}' >/dev/null
expect "... and the gang is admitted on a later attempt" ctl wait-phase default kr Running 4 --timeout 30

# watch streams cut every 0.7 s
ctl faults '{"drop_watch_after": 0.7}' >/dev/null
sleep 1.5
ctl gang dr --pods 8 --gpu 1 --podgroup 8 --recreate >/dev/null
expect "with watch streams cut, a new gang is still bound" ctl wait-bound default dr 8 --timeout 20
expect "... streams were cut" at_least dropped 3
ctl faults '{"drop_watch_after": null}' >/dev/null

# a watch that answers with an ERROR event (not 410) and ends: backed off, not a tight loop
w0=$(counter "GET watch")
ctl faults '{"watch_error": 500, "drop_watch_after": 0.1}' >/dev/null # the streams open now are cut
sleep 3
ctl faults '{"watch_error": null, "drop_watch_after": null}' >/dev/null
nw=$(($(counter "GET watch") - w0))
if ((nw >= 3 && nw <= 40)); then pass "ERROR events on the watch are backed off ($nw watches in 3 s)"; else
    fail "ERROR events on the watch are backed off ($nw watches in 3 s)"
fi
ctl gang we --pods 4 --gpu 1 --podgroup 4 --recreate >/dev/null
expect "... and a gang created afterwards is bound" ctl wait-bound default we 4 --timeout 20

# 410 Gone: history compacted, streams cut
ctl compact >/dev/null
expect "410 Gone (ERROR event): the watcher lists again" wait_for 20 in_log "is gone (410): listing again"
ctl gang gn --pods 4 --gpu 1 --podgroup 4 --recreate >/dev/null
expect "... and binds a gang created afterwards" ctl wait-bound default gn 4 --timeout 20
ctl faults '{"gone_as_http": true}' >/dev/null
n410=$(counter gone)
ctl compact >/dev/null
expect "410 Gone (HTTP status): survived too" wait_for 20 at_least gone $((n410 + 1))
ctl gang gh --pods 4 --gpu 1 --podgroup 4 --recreate >/dev/null
expect "... and a gang created afterwards is bound" ctl wait-bound default gh 4 --timeout 20

# the binding subresource, as v1.20.2 answers it (a pod of another scheduler, asking nothing)
ctl gang ub --pods 1 --gpu 0 --scheduler other >/dev/null
expect "a Binding named otherwise than its URL's pod: 400" test "$(ctl bind default ub b0-r0-h0 --binding-name x)" = 400
expect "a Binding with a wrong uid binds all the same: 201 (v1.20 ignores it)" \
    test "$(ctl bind default ub b0-r0-h0 --uid wrong)" = 201
port2=$(free_port)
RF_EMU_CHECK_BINDING_UID=1 "$py" "$src_dir/tests/emulator/kube_emulator.py" --port "$port2" --token "$token" \
    >"$work/emu2.log" 2>&1 &
emu2_pid=$!
for _ in $(seq 100); do grep -q listening "$work/emu2.log" 2>/dev/null && break; sleep 0.1; done
ctl2() { "$py" "$src_dir/tests/emulator/emuctl.py" "http://127.0.0.1:$port2" --token "$token" "$@"; }
ctl2 nodes >/dev/null
ctl2 gang ub --pods 1 --gpu 0 --scheduler other >/dev/null
expect "RF_EMU_CHECK_BINDING_UID=1: a wrong uid is refused (409)" \
    test "$(ctl2 bind default ub b0-r0-h0 --uid wrong)" = 409
expect "... and the right one binds (201)" test "$(ctl2 bind default ub b0-r0-h0)" = 201
kill "$emu2_pid" 2>/dev/null
wait "$emu2_pid" 2>/dev/null

sleep 1
expect "no node over capacity, no partial gang" ctl check
watch_stop a
finish
