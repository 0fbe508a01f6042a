# tests/integration/kube_lib.bash: shared by kube_*.sh (sourced; not a test
# itself): the real-server tests. Starts a real etcd + kube-apiserver
# (scripts/kube/start.sh, built once per machine by scripts/kube/build.sh),
# applies deploy/'s Namespace, ServiceAccount and RBAC and the PodGroup CRD
# (tests/kube/podgroup-crd.yaml), starts the test's kubelet (tests/kube/kctl.py
# kubelet), rackfitd and rackfit-watch (with deploy/'s ServiceAccount identity,
# so RBAC is deploy/'s), and stops them all on exit, by their pids.
# One server per test script, shared by its cases.
#   kube_up                       the server, deploy/'s objects, the CRD, the kubelet; exits 77 (skipped)
#                                 when no kube-apiserver could be built, saying why
#   rfd_start                     sets $endpoint
#   watch_start NAME [flags...]   rackfit-watch as the ServiceAccount, log $work/watch.NAME.log
#   watch_stop NAME [SIGNAL]
#   k ARGS...                     tests/kube/kctl.py ARGS... (admin token)
#   bg PROGRAM ARGS...            a helper process of the test (a monitor), killed on exit by its pid
#                                 (a program, not a shell function: a function would leave its child)
#   audit_used                    the watcher identity's requests: "verb group resource sub code count"
#   expect NAME CMD... / expect_not NAME CMD... / finish
#   wait_for SECONDS CMD...       CMD until it succeeds, every 0.2 s; at the end its last status
#   in_log TEXT [NAME]            watcher NAME's log (default a) has TEXT
set -uo pipefail
bin_dir=${1:?usage: $0 BIN_DIR SOURCE_DIR}
src_dir=${2:?usage: $0 BIN_DIR SOURCE_DIR}
bin_dir=$(cd "$bin_dir" && pwd)
src_dir=$(cd "$src_dir" && pwd)
py=/usr/bin/python3
work=$(mktemp -d "${TMPDIR:-/tmp}/rackfit-kube-test.XXXXXX")
passed=0
failed=0
rfd_pid=
kubelet_pid=
declare -A watch_pids=()
bg_pids=()
levels=example.com/block,example.com/rack,kubernetes.io/hostname

cleanup() {
    local p
    for p in "${watch_pids[@]}" "${bg_pids[@]}"; do kill -KILL "$p" 2>/dev/null; done
    [[ -n "$rfd_pid" ]] && kill -KILL "$rfd_pid" 2>/dev/null
    [[ -n "$kubelet_pid" ]] && kill -KILL "$kubelet_pid" 2>/dev/null
    [[ -f "$work/kube/apiserver.pid" || -f "$work/kube/etcd.pid" ]] && bash "$src_dir/scripts/kube/stop.sh" --keep "$work/kube"
    wait 2>/dev/null
    [[ -n "${KEEP:-}" ]] || rm -rf "$work"
}
trap cleanup EXIT

pass() { passed=$((passed + 1)); echo "ok    $*"; }
fail() { failed=$((failed + 1)); echo "FAIL  $*"; }

k() { "$py" "$src_dir/tests/kube/kctl.py" "$@"; }

kube_up() {
    local cache
    cache=$(bash "$src_dir/scripts/kube/build.sh" --print)
    if [[ ! -x "$cache/bin/kube-apiserver" ]] || ! command -v etcd >/dev/null; then
        echo "SKIP: no real kube-apiserver: $cache/bin/kube-apiserver (or etcd) is missing because"
        echo "      scripts/kube/build.sh could not build it here (scripts/test.sh runs it first; see its output)"
        exit 77
    fi
    if ! bash "$src_dir/scripts/kube/start.sh" "$work/kube" >"$work/kube-start.log" 2>&1; then
        fail "the real kube-apiserver did not start"
        sed 's/^/      | /' "$work/kube-start.log" | tail -30
        finish
    fi
    # shellcheck disable=SC1091
    source "$work/kube/env"
    local out
    if ! out=$(k apply "$src_dir/deploy/namespace.yaml" "$src_dir/deploy/serviceaccount.yaml" \
        "$src_dir/deploy/rbac.yaml" "$src_dir/tests/kube/podgroup-crd.yaml" 2>&1); then
        fail "deploy/'s RBAC and the PodGroup CRD are accepted by the real server"
        echo "$out" | sed 's/^/      | /'
        finish
    fi
    pass "deploy/'s Namespace, ServiceAccount, RBAC and the PodGroup CRD are accepted by the real server"
    "$py" "$src_dir/tests/kube/kctl.py" kubelet --log "$work/kubelet.log" "${kubelet_flags[@]}" &
    kubelet_pid=$!
}
kubelet_flags=()

bg() {
    "$@" &
    bg_pids+=($!)
}

free_port() { "$py" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

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

watch_start() {
    local name=$1
    shift
    "$bin_dir/rackfit-watch" --kubeconfig "$KUBECONFIG_WATCH" --solver "$endpoint" --scheduler-name rackfit \
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

# audit_used [--outside T0,T1]: leave out what was answered in that window
audit_used() { k audit "$KUBE_DIR/audit.log" "$KUBE_WATCH_USER" "$@"; }

# Pass when the watcher's identity was never refused (401/403) and never sent
# a request the server found invalid (400/422), from the API server's audit log
# (outside $audit_window, "T0,T1" in epoch seconds, when set).
expect_no_refusals() {
    local bad
    # one exception: an Eviction sent as policy/v1 is refused 400 by a v1.20
    # server (policy/v1beta1 only), and the watcher then sends it as v1beta1
    bad=$(audit_used ${audit_window:+--outside "$audit_window"} | awk '$5 == 400 || $5 == 401 || $5 == 403 || $5 == 422' | grep -v '^create core pods eviction 400 ')
    if [[ -z "$bad" ]]; then
        pass "${1:-no request of the watcher was refused (401/403) or invalid (400/422)}"
    else
        fail "${1:-no request of the watcher was refused (401/403) or invalid (400/422)}"
        echo "$bad" | sed 's/^/      | /'
    fi
}

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

wait_for() {
    local end=$((SECONDS + $1))
    shift
    while ((SECONDS < end)); do "$@" && return 0; sleep 0.2; done
    "$@"
}

in_log() { grep -q "$1" "$work/watch.${2:-a}.log"; }

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
    for f in "$work"/watch.*.log "$work/kubelet.log"; do
        [[ -f "$f" ]] || continue
        echo "---- $f (last 30 lines)"
        grep -v ' waits: ' "$f" | tail -30 | sed 's/^/      | /'
    done
    [[ -f "$work/kube/apiserver.log" ]] && {
        echo "---- kube-apiserver (last 10 error lines)"
        grep -E '^E[0-9]' "$work/kube/apiserver.log" | tail -10 | sed 's/^/      | /'
    }
}

finish() {
    ((failed > 0)) && show_logs
    echo "$passed passed, $failed failed"
    ((failed == 0)) && exit 0
    exit 1
}
