# tests/integration/watch_lib.bash: shared by watch_*.sh (sourced; not a test
# itself). Starts the API server emulator (tests/emulator/kube_emulator.py),
# rackfitd and rackfit-watch on free loopback ports, and stops them all on
# exit (by their pids).
#   emu_start [emulator flags...]   sets $api (http://127.0.0.1:PORT), $emu_pid
#   rfd_start                       sets $endpoint, $rfd_pid
#   kubeconfig_write FILE [token]   a kubeconfig for $api with a bearer token
#   watch_start NAME [flags...]     starts rackfit-watch, pid in watch_pids[NAME], log $work/watch.NAME.log
#   watch_stop NAME [SIGNAL]        stops it (TERM by default) and checks its log for sanitizer reports
#   ctl ARGS...                     tests/emulator/emuctl.py $api ARGS...
#   expect NAME CMD...              pass when CMD exits 0, else fail (with its output)
#   finish                          prints `N passed, N failed`, exits
set -uo pipefail
bin_dir=${1:?usage: $0 BIN_DIR SOURCE_DIR}
src_dir=${2:?usage: $0 BIN_DIR SOURCE_DIR}
bin_dir=$(cd "$bin_dir" && pwd)
src_dir=$(cd "$src_dir" && pwd)
py=/usr/bin/python3
work=$(mktemp -d "${TMPDIR:-/tmp}/rackfit-watch-test.XXXXXX")
passed=0
failed=0
emu_pid=
rfd_pid=
declare -A watch_pids=()
token=t0ken-$RANDOM
levels=example.com/block,example.com/rack,kubernetes.io/hostname

cleanup() {
    local p
    for p in "${watch_pids[@]}"; do kill -KILL "$p" 2>/dev/null; done
    [[ -n "$rfd_pid" ]] && kill -KILL "$rfd_pid" 2>/dev/null
    [[ -n "$emu_pid" ]] && kill -KILL "$emu_pid" 2>/dev/null
    wait 2>/dev/null
    [[ -n "${KEEP:-}" ]] || rm -rf "$work"
}
trap cleanup EXIT

pass() { passed=$((passed + 1)); echo "ok    $*"; }
fail() { failed=$((failed + 1)); echo "FAIL  $*"; }

free_port() { "$py" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

emu_start() {
    local port
    port=$(free_port)
    api="http://127.0.0.1:$port"
    "$py" "$src_dir/tests/emulator/kube_emulator.py" --port "$port" --token "$token" "$@" >"$work/emu.log" 2>&1 &
    emu_pid=$!
    for _ in $(seq 100); do
        grep -q 'listening' "$work/emu.log" 2>/dev/null && return 0
        sleep 0.1
    done
    fail "the emulator did not start"
    cat "$work/emu.log"
    finish
}

rfd_start() {
    local port
    port=$(free_port)
    endpoint="tcp://127.0.0.1:$port"
    "$bin_dir/rackfitd" --listen "$endpoint" 2>"$work/rackfitd.log" &
    rfd_pid=$!
    for _ in $(seq 100); do
        grep -q 'ready' "$work/rackfitd.log" 2>/dev/null && return 0
        kill -0 "$rfd_pid" 2>/dev/null || break
        sleep 0.1
    done
    fail "rackfitd did not start"
    tail -20 "$work/rackfitd.log"
    finish
}

kubeconfig_write() {
    cat >"$1" <<KC
apiVersion: v1
kind: Config
current-context: emu
contexts:
- name: emu
  context: {cluster: emu, user: emu, namespace: rackfit-system}
clusters:
- name: emu
  cluster: {server: "${3:-$api}"}
users:
- name: emu
  user: {token: "${2:-$token}"}
KC
}

watch_start() {
    local name=$1
    shift
    [[ -f "$work/kubeconfig" ]] || kubeconfig_write "$work/kubeconfig"
    "$bin_dir/rackfit-watch" --kubeconfig "$work/kubeconfig" --solver "$endpoint" --scheduler-name rackfit \
        --levels "$levels" --identity "watch-$name" --time-limit-ms 300 --log-level debug "$@" \
        2>"$work/watch.$name.log" &
    watch_pids[$name]=$!
}

watch_stop() {
    local name=$1 sig=${2:-TERM}
    local pid=${watch_pids[$name]}
    kill -"$sig" "$pid" 2>/dev/null
    local rc=0
    wait "$pid" || rc=$?
    unset "watch_pids[$name]"
    if [[ $sig == TERM ]]; then
        if ((rc == 0)); then pass "watcher $name stopped cleanly on SIGTERM"; else
            fail "watcher $name exited $rc on SIGTERM"
            tail -20 "$work/watch.$name.log" | sed 's/^/      | /'
        fi
    fi
    if grep -Eiq 'ERROR: AddressSanitizer|runtime error|LeakSanitizer' "$work/watch.$name.log"; then
        fail "watcher $name's log has a sanitizer report"
        grep -A30 -Ei 'AddressSanitizer|runtime error|LeakSanitizer' "$work/watch.$name.log" | head -50 |
            sed 's/^/      | /'
    fi
}

ctl() { "$py" "$src_dir/tests/emulator/emuctl.py" "$api" --token "$token" "$@"; }

expect() {
    local name=$1
    shift
    local out
    if out=$("$@" 2>&1); then
        pass "$name"
    else
        fail "$name"
        echo "$out" | tail -15 | sed 's/^/      | /'
    fi
}

# Pass when CMD fails (exit non-zero).
expect_not() {
    local name=$1
    shift
    local out
    if out=$("$@" 2>&1); then
        fail "$name"
        echo "$out" | tail -15 | sed 's/^/      | /'
    else
        pass "$name"
    fi
}

show_logs() {
    local f
    for f in "$work"/watch.*.log; do
        echo "---- $f (last 30 lines)"
        grep -v ' waits: ' "$f" | tail -30 | sed 's/^/      | /'
    done
}

finish() {
    ((failed > 0)) && show_logs
    echo "$passed passed, $failed failed"
    ((failed == 0)) && exit 0
    exit 1
}
