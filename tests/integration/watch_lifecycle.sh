#!/usr/bin/env bash
# tests/integration/watch_lifecycle.sh: the life of a gang after it is bound
# (docs/watcher.md), against the API server emulator and a real rackfitd:
# - a gang whose pods all become Ready is left alone; a pod that finished
#   (Succeeded) is not "not ready";
# - a gang not ready within its ready timeout (the pods' annotation
#   rackfit.io/ready-timeout overrides --ready-timeout-s) is evicted whole
#   through the Eviction API with an Event saying why; its recreated pods
#   wait the requeue backoff (base, then doubled) before they are bound
#   again, and carry the requeue count and next try (annotation on the pods
#   and the PodGroup); past --requeue-limit the gang is told it failed and
#   stays pending;
# - a gang that loses a pod to someone else while starting is evicted whole;
# - an eviction a PodDisruptionBudget refuses (429) is retried;
# - a node lost under a running gang: the replacement pod is placed in the
#   survivors' rack (their ranks kept), and when the rack has no room left
#   the replacement is told why;
# - at the end: no node over capacity, no partial gang.
#   bash watch_lifecycle.sh BIN_DIR SOURCE_DIR
source "$(dirname "$0")/watch_lib.bash"

in_log() { grep -q "$1" "$work/watch.a.log"; }
wait_for() { # wait_for SECONDS CMD...
    local end=$((SECONDS + $1))
    shift
    while ((SECONDS < end)); do "$@" && return 0; sleep 0.2; done
    "$@"
}
counter() { ctl state | "$py" -c "import json,sys; print(json.load(sys.stdin)['counters'].get('$1', 0))"; }
annotation_is() { [[ "$(ctl annotation "$1" "$2" rackfit.io/requeue)" == $3 ]]; }
bound_count() { ctl nodes-of default "$1" | wc -l; }
# the gaps between the gang's attempts: seconds between the first binding of each attempt (from the emulator)
attempt_gaps() {
    ctl state-bindings | "$py" -c '
import json, sys
b = sorted(x["t"] for x in json.load(sys.stdin) if x["name"] == sys.argv[1])
print(" ".join("%.1f" % (b[i + 1] - b[i]) for i in range(len(b) - 1)))' "$1"
}

emu_start --bookmark-interval 0.5
rfd_start
ctl nodes --blocks 2 --racks 2 --hosts 4 --gpu 8 >/dev/null
# a rack of its own for the node-loss case (its gang selects it)
ctl nodes --prefix nl- --racks 1 --hosts 4 --gpu 8 --label example.com/block=bnl --label example.com/rack=rnl \
    --label pool=nl >/dev/null
watch_start a --ready-timeout-s 30 --requeue-base-s 1 --requeue-cap-s 8 --requeue-limit 2 --qps 500 --burst 100

# ready, and finished-is-ready
ctl faults '{"succeed": "^fin-0$"}' >/dev/null
ctl gang ok --pods 4 --gpu 1 --podgroup 4 >/dev/null
ctl gang fin --pods 4 --gpu 1 --podgroup 4 >/dev/null
expect "a gang whose pods become Ready is followed to the end" wait_for 20 in_log "gang default/ok: every pod ready"
expect "a Succeeded pod counts as ready" wait_for 20 in_log "gang default/fin: every pod ready"

# not ready in time (the pods' annotation overrides the 30 s default): evicted whole, requeued with backoff,
# failed past the limit
ctl faults '{"never_ready": "^slow-", "evict_refuse": {"^slow-1$": 2}}' >/dev/null
ctl gang slow --pods 4 --gpu 1 --podgroup 4 --recreate --annotation rackfit.io/ready-timeout=2s >/dev/null
expect "a gang not ready within its ready timeout is evicted with an Event saying why" \
    ctl wait-event default "gang default/slow: 4 of 4 pods not ready within 2 s of binding" --reason GangEvicted \
    --timeout 20
expect "... through the Eviction API, every pod (a PDB's 429 retried)" wait_for 10 eval '(($(counter evicted) >= 4))'
expect "... the PDB refusals were seen" eval '(($(counter evictions_refused) == 2))'
expect "... the PodGroup carries the requeue count and next try" wait_for 10 annotation_is default slow '[12] 20*Z'
expect "... its recreated pods are told they were requeued" \
    ctl wait-event default "gang default/slow: requeued 1 times" --reason GangRequeued --timeout 20
expect "... evicted again after its backoff (requeue 2)" \
    ctl wait-event default "requeue 2, next try at" --reason GangEvicted --timeout 30
expect "... past the requeue limit the gang has failed" \
    ctl wait-event default "the gang has failed and is not placed again" --reason GangFailed --timeout 40
expect "... its recreated pods are told so" \
    ctl wait-event default "gang default/slow: failed: evicted 3 times (requeue limit 2)" --reason GangFailed --timeout 20
expect "... and the annotation says failed" wait_for 10 annotation_is default slow '3 failed'
sleep 2
expect "... and they stay pending" eval '(($(bound_count slow) == 0))'
gaps=$(attempt_gaps slow-0)
# attempt 1 -> 2: the 2 s timeout plus 1 s backoff; 2 -> 3: 2 s plus 2 s (doubled)
expect "... the backoff doubles between attempts (gaps: $gaps s)" "$py" -c '
import sys
g = [float(x) for x in sys.argv[1].split()]
sys.exit(0 if len(g) == 2 and 2.9 <= g[0] < g[1] and g[1] >= 3.9 else 1)' "$gaps"
ctl faults '{"never_ready": null}' >/dev/null

# a pod lost to someone else while the gang is starting: the rest is evicted too
ctl faults '{"never_ready": "^brk-"}' >/dev/null
ctl gang brk --pods 4 --gpu 1 --podgroup 4 --recreate --annotation rackfit.io/ready-timeout=60s >/dev/null
ctl wait-bound default brk 4 --timeout 20 >/dev/null
sleep 0.5
ctl delete-pod default brk-2 >/dev/null
expect "a gang that loses a pod while starting is evicted whole" \
    ctl wait-event default "pod default/brk-2 went away while the gang was starting" --reason GangEvicted --timeout 20
ctl faults '{"never_ready": null}' >/dev/null

# a node lost under a running gang
sel='{"nodeSelector": {"pool": "nl"}}'
ctl gang nl --pods 3 --gpu 8 --podgroup 3 --required example.com/rack --recreate --extra "$sel" >/dev/null
expect "a running gang" wait_for 20 in_log "gang default/nl: every pod ready"
first=$(ctl nodes-of default nl | head -1 | cut -d' ' -f2)
ctl node-lost "$first" >/dev/null
expect "the replacement of a pod on a lost node is bound" wait_for 20 eval '(($(bound_count nl) == 3))'
expect "... inside the survivors' rack, next to them" ctl check
expect "... on the one free node left (not the lost one)" eval '! ctl nodes-of default nl | grep -q " $first\$"'
second=$(ctl nodes-of default nl | head -1 | cut -d' ' -f2)
ctl node-lost "$second" --gone >/dev/null
expect "with no room left in the rack, the replacement is told why" \
    ctl wait-event default "gang default/nl" --timeout 20
expect "... and the survivors are kept" eval '(($(bound_count nl) == 2))'

expect "no node over capacity, no partial gang (but the one that lost its nodes)" ctl check --partial-ok nl
watch_stop a
finish
