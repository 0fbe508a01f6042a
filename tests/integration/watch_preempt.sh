#!/usr/bin/env bash
# tests/integration/watch_preempt.sh: topology-aware preemption, the
# watcher's part (issue 14), against the API server emulator and a real
# rackfitd: two racks full of lower-priority gangs, one of them protected
# (rackfit.io/preemptible: "false"); a higher-priority gang that needs a
# whole rack frees exactly one rack — the unprotected gang, evicted whole
# through the Eviction API with a `Preempted` Event — its pods are nominated
# to their nodes while the victims terminate, and it is bound whole in that
# rack once they are gone, with no node over capacity at any moment (the
# emulator checks every binding against the terminating pods too).
#   bash watch_preempt.sh BIN_DIR SOURCE_DIR
source "$(dirname "$0")/watch_lib.bash"

in_log() { grep -q "$1" "$work/watch.a.log"; }
wait_for() { # wait_for SECONDS CMD...
    local end=$((SECONDS + $1))
    shift
    while ((SECONDS < end)); do "$@" && return 0; sleep 0.2; done
    "$@"
}
racks_of() { ctl nodes-of default "$1" | awk '{print $2}' | sed 's/-h[0-9]*$//' | sort -u | tr '\n' ' '; }

emu_start --bookmark-interval 0.5
rfd_start
ctl nodes --blocks 1 --racks 2 --hosts 4 --gpu 8 >/dev/null # two racks of 4 x 8 GPUs
watch_start a --qps 500 --burst 100
ctl faults '{"grace": 1.0}' >/dev/null # terminating pods hold their room for a second

ctl gang lowa --pods 4 --gpu 8 --podgroup 4 --required example.com/rack --recreate --extra '{"priority": 0}' >/dev/null
expect "a low-priority gang runs" wait_for 20 in_log "gang default/lowa: every pod ready"
ctl gang lowb --pods 4 --gpu 8 --podgroup 4 --required example.com/rack --recreate --extra '{"priority": 0}' \
    --annotation rackfit.io/preemptible=false >/dev/null
expect "a protected low-priority gang runs in the other rack" wait_for 20 in_log "gang default/lowb: every pod ready"
rack_a=$(racks_of lowa)
before_b=$(ctl nodes-of default lowb)

ctl gang high --pods 4 --gpu 8 --podgroup 4 --required example.com/rack --extra '{"priority": 100}' >/dev/null
expect "the high-priority gang preempts the unprotected one, whole, with an Event naming it" \
    ctl wait-event default "to make room for default/high" --reason Preempted --timeout 20
expect "... its pods wait, nominated to their nodes" wait_for 10 in_log "gang default/high: waits for its victims"
expect "... and are bound whole once the victims are gone" ctl wait-bound default high 4 --timeout 30
expect "... in the rack the victim freed ($rack_a)" eval '[[ "$(racks_of high)" == "$rack_a" ]]'
expect "... the victims were evicted through the Eviction API" eval '(($(ctl state | "$py" -c "import json,sys; print(json.load(sys.stdin)[\"counters\"].get(\"evicted\", 0))") == 4))'
expect "the protected gang was never touched" eval '[[ "$(ctl nodes-of default lowb)" == "$before_b" ]]'
expect "no node over capacity at any moment, no partial gang" ctl check
watch_stop a
finish
