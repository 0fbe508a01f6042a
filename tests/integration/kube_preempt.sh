#!/usr/bin/env bash
# tests/integration/kube_preempt.sh: topology-aware preemption (issue 14)
# against a REAL kube-apiserver (v1.20.2, RBAC on, deploy/'s RBAC; see
# kube_lib.bash), with a real rackfitd. Two racks of 4 x 8 GPUs, each full of
# a lower-priority gang bound by the watcher (PriorityClasses: a real server
# refuses a pod that sets spec.priority itself); one gang is protected
# (rackfit.io/preemptible: "false"). A high-priority gang that needs a whole
# rack arrives. What a user would see:
# - exactly the unprotected gang is evicted, whole, through the Eviction API
#   (the audit log: every pod of it, no other pod), with a `Preempted` Event
#   on each victim naming the preemptor; the protected gang is never touched;
# - while the victims terminate (the test's kubelet holds them Terminating,
#   still using their room, until the test ends them) the preemptor's pods
#   stay pending with status.nominatedNodeName on the victims' nodes, and are
#   not bound;
# - once the victims are gone the preemptor is bound whole in that rack;
# - a gang whose PodDisruptionBudget allows no disruption (its status written
#   as the disruption controller would: the test server has none) is never a
#   victim: no eviction of it is even attempted; the other rack's gang is
#   preempted instead, though it is the dearer victim;
# - no node is over capacity at any moment: a monitor samples every node's
#   usage from the pods (terminating ones included) at every pod change; it
#   must still be running at the end and have sampled every binding of the
#   last preemptor (a monitor that died early would pass unobserved).
#   bash kube_preempt.sh BIN_DIR SOURCE_DIR     (skipped, exit 77, when no kube-apiserver could be built)
source "$(dirname "$0")/kube_lib.bash"

t_start=$SECONDS
racks_of() { k nodes-of default "$1" | awk '{print $2}' | sed 's/-h[0-9]*$//' | sort -u | tr '\n' ' '; }
names() { # names GANG N: "default/GANG-0 ... default/GANG-(N-1)", sorted
    local i
    for ((i = 0; i < $2; i++)); do echo "default/$1-$i"; done | sort | tr '\n' ' '
}
# the pods the watcher asked to evict (any answer), or only those evicted (201)
evict_asked() { k audit-names "$KUBE_DIR/audit.log" "$KUBE_WATCH_USER" eviction | awk '{print $1}' | sort -u | tr '\n' ' '; }
evicted() { k audit-names "$KUBE_DIR/audit.log" "$KUBE_WATCH_USER" eviction | awk '$3 == 201 {print $1}' | sort -u | tr '\n' ' '; }
preempted_events() { k events default --reason Preempted | grep -F "make room for default/$1" | awk '{print "default/" $1}' | sort -u | tr '\n' ' '; }
same() { [[ "$1" == "$2" ]] || { echo "got:      $1"; echo "expected: $2"; return 1; }; }

# evicted pods stay Terminating (holding their room) until the test ends them
kubelet_flags=(--hold '^(lowa|lowd)-')
kube_up
expect "PriorityClasses are accepted" k apply "$src_dir/tests/kube/priorityclasses.yaml"
rfd_start
k nodes --blocks 1 --racks 2 --hosts 4 --gpu 8 >/dev/null # two racks of 4 x 8 GPUs
bg "$py" "$src_dir/tests/kube/kctl.py" monitor --log "$work/monitor.log"
monitor_pid=${bg_pids[-1]}
watch_start a --qps 200 --burst 100

gang() { # gang NAME CLASS [flags...]: 4 pods of 8 GPUs, all in one rack
    local name=$1 class=$2
    shift 2
    k gang "$name" --pods 4 --gpu 8 --podgroup 4 --required example.com/rack \
        --extra "{\"priorityClassName\": \"$class\"}" "$@" >/dev/null
}

# ---- preemption: exactly one rack, whole gangs, the protected one never -------------------------------------------
gang lowa rf-low
expect "a low-priority gang runs (bound by the watcher)" k wait-phase default lowa Running 4 --timeout 30
gang lowb rf-low --annotation rackfit.io/preemptible=false
expect "a protected low-priority gang runs in the other rack" k wait-phase default lowb Running 4 --timeout 30
rack_a=$(racks_of lowa)
before_b=$(k nodes-of default lowb)
expect "the two gangs hold one rack each" eval '[[ -n "$rack_a" && "$(racks_of lowb)" != "$rack_a" ]]'

gang high rf-high
expect "the high-priority gang preempts the unprotected gang, with a Preempted Event naming it" \
    k wait-event default "to make room for default/high" --reason Preempted --timeout 30
expect "... its pods stay pending, nominated to nodes (status.nominatedNodeName)" k nominated default high 4 --timeout 20
nominated_pairs=$(k nominated default high 4 --timeout 0 | tr ' ' '\n' | grep = | sort | tr '\n' ' ') # POD=NODE ...
nominated_racks=$(echo "$nominated_pairs" | tr ' ' '\n' | grep = | sed 's/.*=//; s/-h[0-9]*$//' | sort -u | tr '\n' ' ')
expect "... in the victim's rack ($rack_a)" same "$nominated_racks" "$rack_a"
expect "every pod of the victim, and no other, was evicted through the Eviction API (201)" \
    wait_for 20 eval 'same "$(evicted)" "$(names lowa 4)"'
expect "... every victim pod has a Preempted Event naming the preemptor" \
    wait_for 10 eval 'same "$(preempted_events high)" "$(names lowa 4)"'
expect "... and the preemptor stays unbound for 4 s while the victims terminate (they hold their room)" \
    k stays-unbound default high 4 --for 4
expect "... (the victims were Terminating all that time)" eval '(($(k nodes-of default lowa | wc -l) == 4))'
k finish default lowa >/dev/null
expect "once the victims are gone the preemptor is bound whole" k wait-bound default high 4 --timeout 30
expect "... in the rack they freed" eval 'same "$(racks_of high)" "$rack_a"'
bound_pairs() { k nodes-of default "$1" | awk '{print $1 "=" $2}' | sort | tr '\n' ' '; }
expect "... each on the node it was nominated to ($nominated_pairs)" eval 'same "$(bound_pairs high)" "$nominated_pairs"'
k nodes-of default high | sed 's/^/      | bound (pod node nominated): /'
expect "the protected gang was never touched (no eviction asked, same nodes)" \
    eval '[[ "$(evict_asked)" != *lowb* && "$(k nodes-of default lowb)" == "$before_b" ]]'
expect "no node over capacity, no partial gang, required domains kept" k check
t_preempt=$((SECONDS - t_start))

# ---- a PodDisruptionBudget is read before victims are chosen -------------------------------------------------------
k delete-gang default high >/dev/null
k delete-gang default lowb >/dev/null
expect "the first round's gangs are deleted" k wait-gone default lowb --timeout 20
gang lowc rf-low # the cheaper victim (lowest priority)...
expect "a low-priority gang runs" k wait-phase default lowc Running 4 --timeout 30
k pdb default lowc-budget --match scheduling.x-k8s.io/pod-group=lowc --allowed 0 >/dev/null
gang lowd rf-mid
expect "a mid-priority gang runs in the other rack" k wait-phase default lowd Running 4 --timeout 30
rack_d=$(racks_of lowd)
before_c=$(k nodes-of default lowc)
log_mark=$(wc -l <"$work/watch.a.log") # the log's lines from before high2 exists prove nothing about it
in_log_since_mark() { tail -n +$((log_mark + 1)) "$work/watch.a.log" | grep -q "$1"; }
gang high2 rf-high
expect "... but lowc's PodDisruptionBudget allows no disruption (policy/v1beta1 on this server): not preemptible" \
    wait_for 20 in_log_since_mark "gang default/lowc: not preemptible: evicting its 4 pods would take 4 disruptions from the PodDisruptionBudget default/lowc-budget (0 allowed)"
expect "the dearer gang (lowd) is preempted instead, with a Preempted Event naming the preemptor" \
    k wait-event default "to make room for default/high2" --reason Preempted --timeout 30
expect "... all its pods evicted (201), and no eviction of lowc was even attempted" \
    wait_for 20 eval 'same "$(evicted)" "$(names lowa 4)$(names lowd 4)" && [[ "$(evict_asked)" != *lowc* ]]'
expect "... the preemptor nominated while lowd's pods terminate" k nominated default high2 4 --timeout 20
k finish default lowd >/dev/null
expect "... and bound whole once they are gone" k wait-bound default high2 4 --timeout 30
expect "... in the rack lowd freed" eval 'same "$(racks_of high2)" "$rack_d"'
expect "... and still no eviction of lowc was attempted, now that high2 is bound" \
    eval '[[ "$(evict_asked)" != *lowc* ]]'
expect "the budget's gang was never touched" eval 'same "$(k nodes-of default lowc)" "$before_c"'
expect "no node over capacity, no partial gang, required domains kept (after the budget case)" k check

# the monitor saw every binding of high2 (the last of the test), so it sampled after them
monitor_saw_high2() {
    local n
    n=$(grep -oE '^sample [0-9]+ \(MODIFIED default/high2-[0-9]+ node=' "$work/monitor.log" | sed 's/.*default\///; s/ node=//' | sort -u | wc -l)
    ((n == 4))
}
finish_monitor() {
    local n v alive=0 saw=0
    kill -0 "$monitor_pid" 2>/dev/null && alive=1
    wait_for 20 monitor_saw_high2 && saw=1
    n=$(grep -c '^sample' "$work/monitor.log")
    v=$(grep -c '^violation' "$work/monitor.log")
    if ((n > 20 && v == 0 && alive && saw)); then
        pass "no node over capacity at any moment ($n samples of every node's usage, one per pod change)"
    else
        fail "no node over capacity at any moment ($n samples, $v violations, monitor running: $alive, saw high2's bindings: $saw)"
        grep '^monitor' "$work/monitor.log" | tail -5 | sed 's/^/      | /'
        grep '^violation' "$work/monitor.log" | head -10 | sed 's/^/      | /'
    fi
}
finish_monitor
expect_no_refusals
watch_stop a
echo "---- kube_preempt.sh: the preemption case took ${t_preempt} s, all cases $((SECONDS - t_start)) s"
finish
