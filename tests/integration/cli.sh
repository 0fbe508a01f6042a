#!/usr/bin/env bash
# tests/integration/cli.sh: the `rackfit` CLI end to end.
#
#   bash cli.sh BIN_DIR SOURCE_DIR        (ctest runs it so)
#
# - solves every problem in models/*.json (files whose name contains
#   "answer" are skipped: they are answers, not problems) and a tiny problem
#   of its own, in each mode, and checks each answer with `rackfit check`;
#   a mode the build does not support yet (`not supported`) is skipped;
# - feeds it bad input (missing file, broken JSON, contract violations,
#   limits, bad flags, an infeasible answer) and wants exit 2 (1 for the
#   infeasible answer), a `rackfit: FILE: PATH: ...` line on stderr naming the
#   field, and never a crash (exit status < 128).
# Ends with `N passed, N failed, N skipped`; exits non-zero on any failure.
set -uo pipefail

bin_dir=${1:?usage: cli.sh BIN_DIR SOURCE_DIR}
src_dir=${2:?usage: cli.sh BIN_DIR SOURCE_DIR}
rf="$bin_dir/rackfit"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rackfit-cli.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

passed=0
failed=0
skipped=0
pass() {
    passed=$((passed + 1))
    echo "ok    $*"
}
fail() {
    failed=$((failed + 1))
    echo "FAIL  $*"
}
skip() {
    skipped=$((skipped + 1))
    echo "skip  $*"
}

if [[ ! -x "$rf" ]]; then
    echo "FAIL  $rf is not built"
    echo "0 passed, 1 failed"
    exit 1
fi

# run NAME -- CMD...: runs CMD (bounded in time), output in $tmp/NAME.{out,err}
# and status in $rc.
rc=0
run() {
    local name=$1
    shift 2
    timeout 300 "$@" >"$tmp/$name.out" 2>"$tmp/$name.err" </dev/null
    rc=$?
}
show_err() {
    sed 's/^/      | /' "$tmp/$1.err" | head -20
}

# expect_error NAME WANT_RC PATTERN -- CMD...: CMD exits WANT_RC and its
# stderr matches PATTERN (fixed string).
expect_error() {
    local name=$1 want=$2 pattern=$3
    shift 3
    run "$name" "$@"
    if ((rc >= 128)); then
        fail "$name: crashed (exit $rc)"
        show_err "$name"
    elif ((rc != want)); then
        fail "$name: exit $rc, wanted $want"
        show_err "$name"
    elif ! grep -qF -- "$pattern" "$tmp/$name.err"; then
        fail "$name: stderr does not mention '$pattern'"
        show_err "$name"
    elif ! grep -q '^rackfit: ' "$tmp/$name.err"; then
        fail "$name: stderr has no 'rackfit: ' line"
        show_err "$name"
    else
        pass "$name"
    fi
}

# solve_and_check LABEL PROBLEM MODE [FLAGS...]
solve_and_check() {
    local label=$1 problem=$2 mode=$3
    shift 3
    local name="solve-$label-$mode"
    run "$name" -- "$rf" solve "$problem" --mode "$mode" "$@"
    if ((rc != 0)) && grep -qiE 'not supported|unsupported' "$tmp/$name.err"; then
        skip "$name: mode $mode not supported by this build"
        return
    fi
    if ((rc != 0)); then
        fail "$name: exit $rc"
        show_err "$name"
        return
    fi
    if [[ ! -s "$tmp/$name.out" ]]; then
        fail "$name: no answer on stdout"
        return
    fi
    pass "$name"
    run "check-$label-$mode" -- "$rf" check "$problem" "$tmp/$name.out"
    if ((rc != 0)); then
        fail "check-$label-$mode: exit $rc"
        sed 's/^/      | /' "$tmp/check-$label-$mode.out" | head -20
        show_err "check-$label-$mode"
    elif ! grep -q '^feasible' "$tmp/check-$label-$mode.out"; then
        fail "check-$label-$mode: report does not say feasible"
    else
        pass "check-$label-$mode"
    fi
}

# ---- the programs answer at all ---------------------------------------------
run version -- "$rf" version
if ((rc == 0)) && grep -q '^rackfit [0-9]' "$tmp/version.out"; then pass version; else fail "version: exit $rc"; fi
run help -- "$rf" help
if ((rc == 0)) && grep -q 'rackfit solve' "$tmp/help.out"; then pass help; else fail "help: exit $rc"; fi

# ---- a tiny problem of our own ---------------------------------------------
# Two hosts; h2 has 4 of its 8 GPUs in use. One gang of 2 pods x 4 GPUs.
cat >"$tmp/tiny.json" <<'JSON'
{"cluster": {"levels": ["kubernetes.io/hostname"],
  "nodes": [
    {"name": "h1", "labels": {"kubernetes.io/hostname": "h1"}, "allocatable": {"nvidia.com/gpu": 8}},
    {"name": "h2", "labels": {"kubernetes.io/hostname": "h2"}, "allocatable": {"nvidia.com/gpu": 8},
     "used": {"nvidia.com/gpu": 4}}]},
 "gangs": [{"name": "g", "pod_sets": [{"name": "w", "count": 2, "requests": {"nvidia.com/gpu": 4}}]}],
 "options": {"value_resource": "nvidia.com/gpu"}}
JSON
for mode in greedy ilp auto; do
    solve_and_check tiny "$tmp/tiny.json" "$mode" --time-limit 2000
done

# The same problem from stdin, pretty-printed.
name=solve-stdin
timeout 300 "$rf" solve - --mode greedy --pretty <"$tmp/tiny.json" >"$tmp/$name.out" 2>"$tmp/$name.err"
rc=$?
if ((rc == 0)) && grep -q '^  "gangs": \[' "$tmp/$name.out"; then
    pass "$name"
    run check-stdin-answer -- "$rf" check "$tmp/tiny.json" "$tmp/$name.out"
    if ((rc == 0)); then pass check-stdin-answer; else fail "check-stdin-answer: exit $rc"; fi
else
    fail "$name: exit $rc"
    show_err "$name"
fi

# An infeasible answer: both pods on h2, which has room for one.
cat >"$tmp/infeasible-answer.json" <<'JSON'
{"gangs": [{"name": "g", "admitted": true,
   "pod_sets": [{"name": "w", "placements": [{"node": "h2", "count": 2}]}],
   "domains": [1], "penalty": 0.0}],
 "summary": {"admitted": 1, "rejected": 0, "value": [[0, 8, 2]], "penalty": 0.0,
   "penalty_bound": 0.0, "optimal": true, "mode_used": "greedy", "solve_ms": 0.1}}
JSON
run check-infeasible -- "$rf" check "$tmp/tiny.json" "$tmp/infeasible-answer.json"
if ((rc == 1)) && grep -q '^infeasible' "$tmp/check-infeasible.out"; then
    pass check-infeasible
else
    fail "check-infeasible: exit $rc, wanted 1 and an 'infeasible' report"
    sed 's/^/      | /' "$tmp/check-infeasible.out" | head
    show_err check-infeasible
fi

# ---- every example problem in models/ ---------------------------------------
shopt -s nullglob
models=("$src_dir"/models/*.json)
shopt -u nullglob
n_models=0
for model in "${models[@]}"; do
    base=$(basename "$model" .json)
    [[ "$base" == *answer* ]] && continue
    n_models=$((n_models + 1))
    for mode in greedy ilp auto; do
        solve_and_check "$base" "$model" "$mode" --time-limit 5000
    done
done
if ((n_models == 0)); then
    skip "models: no models/*.json yet"
fi

# ---- bad input --------------------------------------------------------------
expect_error missing-file 2 "$tmp/no-such-file.json" -- "$rf" solve "$tmp/no-such-file.json"

printf '{"cluster": {"levels": [' >"$tmp/truncated.json"
expect_error invalid-json 2 "truncated.json" -- "$rf" solve "$tmp/truncated.json"

printf '\x89PNG\r\n\x1a\n\0\0\0\rIHDR\xff\xfe{"\xc3' >"$tmp/binary.json"
run binary-input -- "$rf" solve "$tmp/binary.json"
if ((rc == 2)); then pass binary-input; else fail "binary-input: exit $rc, wanted 2"; fi

cat >"$tmp/bad-count.json" <<'JSON'
{"cluster": {"levels": ["kubernetes.io/hostname"],
  "nodes": [{"name": "h1", "labels": {"kubernetes.io/hostname": "h1"}}]},
 "gangs": [{"name": "g", "pod_sets": [{"name": "w", "count": "two"}]}]}
JSON
expect_error wrong-type 2 'gangs[0].pod_sets[0].count' -- "$rf" solve "$tmp/bad-count.json"

cat >"$tmp/bad-quantity.json" <<'JSON'
{"cluster": {"levels": ["kubernetes.io/hostname"],
  "nodes": [{"name": "h1", "labels": {"kubernetes.io/hostname": "h1"}}]},
 "gangs": [{"name": "g", "pod_sets": [{"name": "w", "count": 1, "requests": {"nvidia.com/gpu": "-1"}}]}]}
JSON
expect_error negative-quantity 2 'gangs[0].pod_sets[0].requests["nvidia.com/gpu"]' -- "$rf" solve "$tmp/bad-quantity.json"

cat >"$tmp/bad-level.json" <<'JSON'
{"cluster": {"levels": ["kubernetes.io/hostname"],
  "nodes": [{"name": "h1", "labels": {"kubernetes.io/hostname": "h1"}}]},
 "gangs": [{"name": "g", "topology": {"required": "example.com/rack"},
            "pod_sets": [{"name": "w", "count": 1}]}]}
JSON
expect_error unknown-level 2 'gangs[0].topology.required' -- "$rf" solve "$tmp/bad-level.json"

expect_error limit-nodes 2 'cluster.nodes' -- "$rf" solve "$tmp/tiny.json" --limit max_nodes=1
expect_error check-bad-answer 2 'bad-count.json' -- "$rf" check "$tmp/tiny.json" "$tmp/bad-count.json"
expect_error bad-mode 2 'fast' -- "$rf" solve "$tmp/tiny.json" --mode fast
expect_error bad-limit-name 2 'no_such_limit' -- "$rf" solve "$tmp/tiny.json" --limit no_such_limit=3
expect_error bad-time-limit 2 'time-limit' -- "$rf" solve "$tmp/tiny.json" --time-limit -5
expect_error no-file 2 'PROBLEM' -- "$rf" solve
expect_error unknown-command 2 'frobnicate' -- "$rf" frobnicate

echo "$passed passed, $failed failed, $skipped skipped"
((failed == 0))
