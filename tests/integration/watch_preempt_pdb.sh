#!/usr/bin/env bash
# tests/integration/watch_preempt_pdb.sh: a preemption victim whose eviction
# a PodDisruptionBudget refuses (issue 14), against the API server emulator
# and a real rackfitd. Two racks full of lower-priority gangs: `lowa`
# (priority 0, the cheaper victim, but every eviction of its pods answered
# 429 by the emulator's fault) and `lowb` (priority 5). A higher-priority gang
# that needs a whole rack first picks lowa; its first pod's eviction is
# refused, so none of lowa's other pods is evicted (it stays whole), the
# round is solved again with lowa sent as not preemptible, lowb is evicted
# whole instead, and the preemptor is bound in lowb's rack, with no node over
# capacity at any moment.
#   bash watch_preempt_pdb.sh BIN_DIR SOURCE_DIR
source "$(dirname "$0")/watch_lib.bash"

in_log() { grep -q "$1" "$work/watch.a.log"; }
wait_for() { # wait_for SECONDS CMD...
    local end=$((SECONDS + $1))
    shift
    while ((SECONDS < end)); do "$@" && return 0; sleep 0.2; done
    "$@"
}
racks_of() { ctl nodes-of default "$1" | awk '{print $2}' | sed 's/-h[0-9]*$//' | sort -u | tr '\n' ' '; }
counter() { ctl state | "$py" -c "import json,sys; print(json.load(sys.stdin)[\"counters\"].get(\"$1\", 0))"; }

emu_start --bookmark-interval 0.5
rfd_start
ctl nodes --blocks 1 --racks 2 --hosts 4 --gpu 8 >/dev/null # two racks of 4 x 8 GPUs
watch_start a --qps 500 --burst 100 --max-retries 1
ctl faults '{"grace": 0.5, "evict_refuse": {"^lowa-": 100000}}' >/dev/null # a PDB that never allows lowa to go

ctl gang lowa --pods 4 --gpu 8 --podgroup 4 --required example.com/rack --recreate --extra '{"priority": 0}' >/dev/null
expect "a priority-0 gang runs" wait_for 20 in_log "gang default/lowa: every pod ready"
ctl gang lowb --pods 4 --gpu 8 --podgroup 4 --required example.com/rack --recreate --extra '{"priority": 5}' >/dev/null
expect "a priority-5 gang runs in the other rack" wait_for 20 in_log "gang default/lowb: every pod ready"
before_a=$(ctl nodes-of default lowa)
rack_b=$(racks_of lowb)

ctl gang high --pods 4 --gpu 8 --podgroup 4 --required example.com/rack --extra '{"priority": 100}' >/dev/null
expect "the cheaper victim (lowa) is picked first" wait_for 20 in_log "gang default/lowa: preempted for"
expect "... its first pod's eviction is refused: lowa is kept whole" \
    wait_for 40 in_log "gang default/lowa: the eviction of its first pod was refused"
expect "... the preemptor is solved again without it" \
    wait_for 10 in_log "gang default/high: the eviction of a victim (default/lowa) was refused"
expect "... lowb is preempted instead, with an Event" \
    ctl wait-event default "to make room for default/high" --reason Preempted --timeout 30
expect "... and the preemptor is bound whole" ctl wait-bound default high 4 --timeout 40
expect "... in the rack lowb freed ($rack_b)" eval '[[ "$(racks_of high)" == "$rack_b" ]]'
expect "only lowb's 4 pods were evicted" eval '(($(counter evicted) == 4))'
expect "the refused eviction was retried (429s counted by the emulator)" \
    eval '(($(counter evictions_refused) >= 2))'
expect "lowa was never touched" eval '[[ "$(ctl nodes-of default lowa)" == "$before_a" ]]'
expect "no node over capacity at any moment, no partial gang" ctl check
watch_stop a
finish
