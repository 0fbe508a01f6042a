#!/usr/bin/env bash
# tests/integration/watch_binders.sh: a binder per gang, off the cycle thread,
# under one shared rate limit; and rackfit-watch's /metrics.
# - a 256-pod gang bound at --qps 25 (256 bindings, each carrying its intent:
#   about 10 s) does not hold up a 2-pod gang created after it: the small one
#   is bound while the big one is still binding;
# - the rate limit is shared and honoured: both gangs' requests together take
#   at least (requests - burst) / qps seconds;
# - /metrics (--metrics-listen) parses with Prometheus' own text parser
#   (python3-prometheus-client) and its families move: pending gangs by state
#   (binding while the big gang binds), gangs bound, the bind latency
#   histogram, API requests by verb and code, retries and 429s, watch restarts,
#   the Lease held;
# - the bindings of a held gang (its pods bound where they were assumed)
#   make the cycle rebuild no plan.
#   bash watch_binders.sh BIN_DIR SOURCE_DIR
source "$(dirname "$0")/watch_lib.bash"

wait_for() { # wait_for SECONDS CMD...
    local end=$((SECONDS + $1))
    shift
    while ((SECONDS < end)); do "$@" && return 0; sleep 0.2; done
    "$@"
}
mport=$(free_port)
# scrape: print `NAME{labels} VALUE` for every sample, parsed by prometheus_client's text parser
scrape() {
    "$py" - "$mport" <<'PY'
import sys, urllib.request
from prometheus_client.parser import text_string_to_metric_families
text = urllib.request.urlopen("http://127.0.0.1:%s/metrics" % sys.argv[1], timeout=5).read().decode()
for fam in text_string_to_metric_families(text):
    for s in fam.samples:
        labels = ",".join('%s="%s"' % kv for kv in sorted(s.labels.items()))
        print("%s{%s} %s" % (s.name, labels, s.value))
PY
}
# metric NAME LABELS: the sample's value (0 when absent)
metric() { scrape | awk -v k="$1{$2}" '$1 == k {print $2; found=1} END {if (!found) print 0}'; }
ge() { "$py" -c 'import sys; sys.exit(0 if float(sys.argv[1]) >= float(sys.argv[2]) else 1)' "$1" "$2"; }

emu_start --bookmark-interval 0.5
rfd_start
ctl nodes --blocks 2 --racks 2 --hosts 16 --gpu 8 >/dev/null # 64 nodes, 512 GPUs
watch_start a --qps 25 --burst 10 --binders 4 --concurrency 16 --metrics-listen "127.0.0.1:$mport"
expect "/metrics answers and parses" wait_for 10 eval 'scrape >/dev/null'
expect "... the Lease is held" wait_for 10 eval '[[ $(metric rackfit_watch_lease_held "") == 1.0 ]]'

ctl gang big --pods 256 --gpu 1 --podgroup 256 >/dev/null
sleep 1
ctl gang small --pods 2 --gpu 1 --podgroup 2 >/dev/null
expect "while the big gang binds, it shows as binding" \
    wait_for 10 eval 'ge "$(metric rackfit_watch_pending_gangs "state=\"binding\"")" 1'
expect "a small gang created after a big one is bound" ctl wait-bound default small 2 --timeout 15
expect "... while the big one is still binding" eval '(($(ctl nodes-of default big | wc -l) < 256))'
expect "the big gang is bound whole" ctl wait-bound default big 256 --timeout 60
expect "... and while it was bound, its pods' bindings rebuilt no plan (only a held gang changed, in place)" \
    grep -q "cycle: plan not rebuilt: only pods of held gangs changed" "$work/watch.a.log"
span=$(ctl state-bindings | "$py" -c '
import json, sys
b = json.load(sys.stdin)
big = [x["t"] for x in b if x["name"].startswith("big-")]
small = [x["t"] for x in b if x["name"].startswith("small-")]
print("%.1f %.1f" % (max(big) - min(big), max(big) - max(small)))')
read -r big_s small_before <<<"$span"
# 258 bindings (the intent rides on each, no request of its own) at 25/s with a burst of 10: >= 9.9 s from
# the first request; the big gang's own 256 span at least (256 - 10) / 25 = 9.8 s
expect "the shared rate limit is honoured (the big gang's bindings span $big_s s)" ge "$big_s" 9.5
expect "... and the small gang was bound $small_before s before the big one finished" ge "$small_before" 3

expect "gangs bound: 2" wait_for 10 eval 'ge "$(metric rackfit_watch_gangs_bound_total "")" 2'
expect "the bind latency histogram has both gangs" eval 'ge "$(metric rackfit_watch_bind_latency_seconds_count "")" 2'
expect "... the big one's above 5 s (256 bindings at 25/s), the small one's below" eval '
    [[ $(metric rackfit_watch_bind_latency_seconds_bucket "le=\"5.12\"") == 1.0 ]] &&
    [[ $(metric rackfit_watch_bind_latency_seconds_bucket "le=\"20.48\"") == 2.0 ]]'
expect "API requests by verb and code: 201 bindings" \
    eval 'ge "$(metric rackfit_watch_api_requests_total "code=\"201\",verb=\"POST\"")" 258'
expect "... and no intent patches (the intent rides on the binding)" \
    eval '[[ $(metric rackfit_watch_api_requests_total "code=\"200\",verb=\"PATCH\"") =~ ^0(\.0)?$ ]]'
expect "... every pod of the big gang bound with its attempt's intent naming its node and the gang's size" \
    eval '[[ $(ctl nodes-of default big --annotation rackfit.io/bind-intent |
        awk "\$4 == \$2 && \$5 == 256 {n++} END {print n + 0}") == 256 ]]'
expect "... and the watch streams" eval 'ge "$(metric rackfit_watch_api_requests_total "code=\"200\",verb=\"WATCH\"")" 0'
ctl faults '{"throttle": {"every": 2, "retry_after": 0.2, "path_re": "binding$", "method": "POST"}}' >/dev/null
ctl gang thr --pods 8 --gpu 1 --podgroup 8 >/dev/null
expect "a throttled gang is bound" ctl wait-bound default thr 8 --timeout 30
expect "... and the 429s and retries are counted" eval 'ge "$(metric rackfit_watch_api_throttled_total "")" 3 &&
    ge "$(metric rackfit_watch_api_retries_total "")" 3 &&
    ge "$(metric rackfit_watch_api_requests_total "code=\"429\",verb=\"POST\"")" 3'
ctl faults '{"throttle": null}' >/dev/null
ctl compact >/dev/null
expect "410 Gone after a compaction: relists and watch restarts are counted" \
    wait_for 10 eval 'ge "$(metric rackfit_watch_relists_total "kind=\"pods\"")" 1 &&
    ge "$(metric rackfit_watch_watch_restarts_total "kind=\"pods\"")" 1'
expect "no pending gang left" eval '[[ $(metric rackfit_watch_pending_gangs "state=\"waiting_for_capacity\"") == 0.0 ]]'

expect "no node over capacity, no partial gang" ctl check
watch_stop a
finish
