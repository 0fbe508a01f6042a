# tests/integration/service_lib.bash: shared by service_*.sh (sourced; not a
# test itself). Starts rackfitd on a free loopback port, runs a scenario of
# service_check.py against it, stops it with SIGTERM and wants exit 0.
#   svc_start [rackfitd flags...]   sets $endpoint, $svc_pid, $svc_log
#   svc_scenario NAME [args...]     runs service_check.py, counts its results
#   svc_stop                        SIGTERM, wait, exit status 0 wanted
#   svc_finish                      prints `N passed, N failed`, exits
set -uo pipefail
bin_dir=${1:?usage: $0 BIN_DIR SOURCE_DIR}
src_dir=${2:?usage: $0 BIN_DIR SOURCE_DIR}
py=/usr/bin/python3 # Debian's python3-zmq and python3-msgpack belong to it
work=$(mktemp -d "${TMPDIR:-/tmp}/rackfitd-test.XXXXXX")
passed=0
failed=0
svc_pid=
trap '[[ -n "$svc_pid" ]] && kill -KILL "$svc_pid" 2>/dev/null; rm -rf "$work"' EXIT

pass() { passed=$((passed + 1)); echo "ok    $*"; }
fail() { failed=$((failed + 1)); echo "FAIL  $*"; }

svc_start() {
    local port
    port=$("$py" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    endpoint="tcp://127.0.0.1:$port"
    svc_log="$work/rackfitd.$port.log"
    "$bin_dir/rackfitd" --listen "$endpoint" "$@" 2>"$svc_log" &
    svc_pid=$!
    for _ in $(seq 100); do
        grep -q 'ready' "$svc_log" 2>/dev/null && return 0
        kill -0 "$svc_pid" 2>/dev/null || break
        sleep 0.1
    done
    fail "rackfitd did not start"
    sed 's/^/      | /' "$svc_log" | tail -20
    svc_finish
}

svc_scenario() {
    local name=$1
    shift
    local out="$work/scenario.$name.out"
    timeout 600 "$py" "$src_dir/tests/integration/service_check.py" "$name" "$endpoint" "$bin_dir" "$src_dir" \
        "$work" "$@" >"$out" 2>&1
    local rc=$?
    grep -v ' passed, .* failed$' "$out"
    local line p f
    line=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$out" | tail -1)
    if [[ -z "$line" ]]; then
        fail "scenario $name ended without a summary (exit $rc)"
        return
    fi
    p=${line%% passed*}
    f=${line#*passed, }
    f=${f%% failed*}
    passed=$((passed + p))
    failed=$((failed + f))
}

svc_stop() {
    kill -TERM "$svc_pid"
    local rc=0
    wait "$svc_pid" || rc=$?
    svc_pid=
    if ((rc == 0)) && grep -q 'stopped cleanly' "$svc_log"; then
        pass "SIGTERM: rackfitd finished and exited 0"
    else
        fail "SIGTERM: rackfitd exited $rc"
        sed 's/^/      | /' "$svc_log" | tail -20
    fi
    if grep -Eiq 'ERROR: AddressSanitizer|runtime error|LeakSanitizer' "$svc_log"; then
        fail "rackfitd's log has a sanitizer report"
        grep -A20 -Ei 'AddressSanitizer|runtime error|LeakSanitizer' "$svc_log" | head -40 | sed 's/^/      | /'
    fi
}

svc_finish() {
    echo "$passed passed, $failed failed"
    ((failed == 0)) && exit 0
    exit 1
}
