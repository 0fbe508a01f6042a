#!/usr/bin/env bash
# tests/integration/watch_preempt_others.sh: other schedulers' pods and
# preemption (issue 14, `--preempt-others`), against the API server emulator
# and a real rackfitd. Rack r0 is full of priority-0 pods of another
# scheduler (bound by it), rack r1 of a protected gang of ours. A
# priority-100 gang that needs a whole rack: by default (no flag) nothing
# is evicted — other schedulers' pods are never victims — and the gang is
# told it does not fit; a watcher started with `--preempt-others true`
# evicts the other scheduler's pods (through the Eviction API, with
# `Preempted` Events) and binds the gang whole in r0, never over capacity.
#   bash watch_preempt_others.sh BIN_DIR SOURCE_DIR
source "$(dirname "$0")/watch_lib.bash"

counter() { ctl state | "$py" -c "import json,sys; print(json.load(sys.stdin)[\"counters\"].get(\"$1\", 0))"; }
racks_of() { ctl nodes-of default "$1" | awk '{print $2}' | sed 's/-h[0-9]*$//' | sort -u | tr '\n' ' '; }

emu_start --bookmark-interval 0.5
rfd_start
ctl nodes --blocks 1 --racks 2 --hosts 4 --gpu 8 >/dev/null # two racks of 4 x 8 GPUs
ctl faults '{"grace": 0.5}' >/dev/null
for h in 0 1 2 3; do # another scheduler's pods, bound by it, fill rack r0
    ctl gang "kube-$h" --pods 1 --gpu 8 --scheduler default-scheduler \
        --extra "{\"priority\": 0, \"nodeName\": \"b0-r0-h$h\"}" >/dev/null
done
watch_start a --qps 500 --burst 100
ctl gang lowb --pods 4 --gpu 8 --podgroup 4 --required example.com/rack --extra '{"priority": 0}' \
    --annotation rackfit.io/preemptible=false >/dev/null
expect "our protected gang runs in the other rack" ctl wait-phase default lowb Running 4 --timeout 20
before=$(for h in 0 1 2 3; do ctl nodes-of default "kube-$h"; done)

ctl gang high --pods 4 --gpu 8 --podgroup 4 --required example.com/rack --extra '{"priority": 100}' >/dev/null
expect "by default the high-priority gang is told it does not fit" \
    ctl wait-event default "gang default/high" --reason FailedScheduling --timeout 20
sleep 1
expect "... and nothing was evicted: other schedulers' pods are never victims" eval '(($(counter evicted) == 0))'
expect "... the other scheduler's pods are untouched" \
    eval '[[ "$(for h in 0 1 2 3; do ctl nodes-of default kube-$h; done)" == "$before" ]]'
watch_stop a

watch_start b --qps 500 --burst 100 --preempt-others true
expect "with --preempt-others the other scheduler's pods are preempted, with Events" \
    ctl wait-event default "to make room for default/high" --reason Preempted --timeout 30
expect "... the gang is bound whole" ctl wait-bound default high 4 --timeout 40
expect "... in the rack they freed (b0-r0)" eval '[[ "$(racks_of high)" == "b0-r0 " ]]'
expect "... the 4 pods went through the Eviction API" eval '(($(counter evicted) == 4))'
expect "no node over capacity at any moment, no partial gang" ctl check
watch_stop b
finish
