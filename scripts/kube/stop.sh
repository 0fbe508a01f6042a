#!/usr/bin/env bash
# scripts/kube/stop.sh: stop the etcd and kube-apiserver that
# scripts/kube/start.sh started in DIR (by the pids it recorded there: TERM,
# then KILL after 10 s) and remove DIR (--keep leaves it, logs and all).
#   scripts/kube/stop.sh [--keep] DIR
set -uo pipefail

keep=
if [[ "${1:-}" == --keep ]]; then
    keep=1
    shift
fi
dir=${1:?usage: $0 [--keep] DIR}
[[ -d "$dir" ]] || {
    echo "kube/stop: no such directory: $dir" >&2
    exit 1
}
for what in apiserver etcd; do
    f="$dir/$what.pid"
    [[ -f "$f" ]] || continue
    pid=$(cat "$f")
    if kill -TERM "$pid" 2>/dev/null; then
        for _ in $(seq 100); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.1
        done
        kill -KILL "$pid" 2>/dev/null
    fi
    rm -f "$f"
done
[[ -n "$keep" ]] || rm -rf "$dir"
exit 0
