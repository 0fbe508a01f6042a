#!/usr/bin/env bash
# scripts/kube/bench.sh: how fast rackfit-watch binds one gang against the REAL
# kube-apiserver (scripts/kube/start.sh), the real-server twin of
# `rackfit-bench watch` (bench/watch.c, which measures the emulator).
#
#   scripts/kube/bench.sh BIN_DIR [--size N] [--runs R] [--qps Q] [--burst B] [--concurrency C]
#
# Starts the server, applies deploy/'s RBAC and the PodGroup CRD, creates the
# bench's cluster (3 blocks x 8 racks x 16 hosts = 384 nodes, 8 GPUs each),
# rackfitd and rackfit-watch (deploy/'s ServiceAccount, mode greedy, the given
# client limits), then for each run creates a PodGroup of N pods (1 GPU each,
# required topology: the block) one by one, waits until all are bound, and
# reads from the API server's audit log the figure: the last pod's creation
# (answered 201) -> the last binding answered 201. It covers the watch event's
# way to the watcher, the debounce, the problem, the solve and the bindings
# (each carrying its intent; watchers before that patched every pod's intent
# first, counted in the patches column), as the emulator's figure does. The pods are force-deleted
# between runs. The audit log (blocking mode) costs the server a little per
# request. Prints one markdown row per run and a summary line.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
bin_dir=${1:?usage: $0 BIN_DIR [--size N] [--runs R] [--qps Q] [--burst B] [--concurrency C]}
bin_dir=$(cd "$bin_dir" && pwd)
shift
size=1024 runs=3 qps=5000 burst=1000 conc=64
while (($#)); do
    case "$1" in
    --size) size=$2 ;;
    --runs) runs=$2 ;;
    --qps) qps=$2 ;;
    --burst) burst=$2 ;;
    --concurrency) conc=$2 ;;
    *)
        echo "bench: unknown option $1" >&2
        exit 2
        ;;
    esac
    shift 2
done
k() { python3 "$root/tests/kube/kctl.py" "$@"; }
work=$(mktemp -d "${TMPDIR:-/tmp}/rackfit-kube-bench.XXXXXX")
rfd_pid= watch_pid=
cleanup() {
    [[ -n "$watch_pid" ]] && kill -TERM "$watch_pid" 2>/dev/null && wait "$watch_pid" 2>/dev/null
    [[ -n "$rfd_pid" ]] && kill -KILL "$rfd_pid" 2>/dev/null
    bash "$here/stop.sh" "$work/kube" >/dev/null 2>&1
    rm -rf "$work"
}
trap cleanup EXIT

bash "$here/start.sh" "$work/kube" >/dev/null
# shellcheck disable=SC1091
source "$work/kube/env"
k apply "$root/deploy/namespace.yaml" "$root/deploy/serviceaccount.yaml" "$root/deploy/rbac.yaml" \
    "$root/tests/kube/podgroup-crd.yaml" >/dev/null
k nodes --blocks 3 --racks 8 --hosts 16 --gpu 8 >/dev/null
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$bin_dir/rackfitd" --listen "tcp://127.0.0.1:$port" 2>"$work/rackfitd.log" &
rfd_pid=$!
sleep 1
"$bin_dir/rackfit-watch" --kubeconfig "$KUBECONFIG_WATCH" --solver "tcp://127.0.0.1:$port" --scheduler-name rackfit \
    --levels example.com/block,example.com/rack,kubernetes.io/hostname --mode greedy --identity bench \
    --qps "$qps" --burst "$burst" --concurrency "$conc" 2>"$work/watch.log" &
watch_pid=$!
sleep 2

echo "| run | gang | last pod created -> last binding (ms) | requests (patches + bindings) | watcher: bindings | client limit |"
echo "| --- | ---: | ---: | ---: | --- | --- |"
figures=()
for r in $(seq 1 "$runs"); do
    g=g$r
    k gang "$g" --pods "$size" --gpu 1 --podgroup "$size" --required example.com/block >/dev/null
    if ! k wait-bound default "$g" "$size" --timeout 300 >/dev/null; then
        echo "bench: run $r: the gang was not bound within 300 s" >&2
        tail -20 "$work/watch.log" >&2
        exit 1
    fi
    sleep 1 # the audit log's last lines
    read -r ms patches binds < <(k bind-time "$KUBE_DIR/audit.log" default "$g")
    phases=$(grep -E "gang default/$g: bound $size pods" "$work/watch.log" | tail -1 | grep -Eo '(intents [0-9.]+ ms, )?bindings [0-9.]+ ms' || echo "?")
    echo "| $r | $size | $ms | $patches + $binds | $phases | $qps/s, burst $burst, $conc in flight |"
    figures+=("$ms")
    k delete-gang default "$g" >/dev/null
    k wait-gone default "$g" --timeout 120 >/dev/null
    sleep 2
done
sorted=$(printf '%s\n' "${figures[@]}" | sort -n)
echo
echo "bench: size $size, $runs runs: median $(echo "$sorted" | sed -n "$(((runs + 1) / 2))p") ms," \
    "min $(echo "$sorted" | head -1) ms, max $(echo "$sorted" | tail -1) ms ($(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg))"
