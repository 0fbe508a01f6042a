#!/usr/bin/env bash
# tests/integration/service_basic.sh: rackfitd end to end over TCP loopback:
# ping, inline solves checked by `rackfit check`, stored clusters (put,
# commits, confirmation by patch, release, stale versions), DEALER framing,
# stats, the C client via `rackfit solve --endpoint`, plain mode refused off
# loopback, and a clean SIGTERM.
#   bash service_basic.sh BIN_DIR SOURCE_DIR
source "$(dirname "$0")/service_lib.bash" || { echo "0 passed, 1 failed"; exit 1; }

"$bin_dir/rackfitd" --listen tcp://0.0.0.0:0 2>"$work/insecure.log"
rc=$?
if ((rc == 2)) && grep -q 'not loopback' "$work/insecure.log"; then
    pass "plain mode on a non-loopback endpoint is refused without --allow-insecure"
else
    fail "plain mode on tcp://0.0.0.0: exit $rc"
fi
svc_start --log-level debug
svc_scenario basic
svc_scenario preempt
svc_stop
svc_finish
