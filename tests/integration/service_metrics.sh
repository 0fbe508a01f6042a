#!/usr/bin/env bash
# tests/integration/service_metrics.sh: rackfitd with --metrics-listen:
# /metrics parsed by python3-prometheus-client's text parser while the test
# drives the server (service_metrics.py), /healthz, /readyz, and the address
# refused when it cannot be served (exit 2).
#   bash service_metrics.sh BIN_DIR SOURCE_DIR
source "$(dirname "$0")/service_lib.bash" || { echo "0 passed, 1 failed"; exit 1; }

if ! "$py" -c 'import prometheus_client.parser' 2>/dev/null; then
    echo "python3-prometheus-client is missing (scripts/bootstrap.sh installs it)"
    fail "python3-prometheus-client"
    svc_finish
fi
"$bin_dir/rackfitd" --listen tcp://127.0.0.1:0 --metrics-listen 127.0.0.1:99999 2>"$work/badport.log"
rc=$?
if ((rc == 2)) && grep -q 'metrics' "$work/badport.log"; then
    pass "--metrics-listen with a bad port: exit 2, named"
else
    fail "--metrics-listen 127.0.0.1:99999: exit $rc"
fi
mport=$("$py" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
svc_start --metrics-listen "127.0.0.1:$mport" --solver-queue 1 --solver-workers 1
out="$work/metrics.out"
timeout 300 "$py" "$src_dir/tests/integration/service_metrics.py" "$endpoint" "127.0.0.1:$mport" >"$out" 2>&1
grep -v ' passed, .* failed$' "$out"
line=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$out" | tail -1)
if [[ -z "$line" ]]; then
    fail "service_metrics.py ended without a summary"
else
    p=${line%% passed*}
    f=${line#*passed, }
    f=${f%% failed*}
    passed=$((passed + p))
    failed=$((failed + f))
fi
svc_stop
svc_finish
