#!/usr/bin/env bash
# tests/integration/sim.sh: `rackfit-bench sim` end to end, in a few seconds.
#
#   bash sim.sh BIN_DIR SOURCE_DIR        (ctest runs it so)
#
# - a tiny simulation (the first 20 Tiresias jobs on the 64-GPU Tiresias
#   cluster, every policy, communication model on and off) writes every
#   output: summary.csv/.md, jobs.csv, the CSV of each plot, report.html
#   (with the plots inline when gnuplot is installed);
# - the same command twice gives the same summary (deterministic), and the
#   hand scenario's jobs end where tests/unit/test_sim.c says, with and
#   without preemption;
# - bad flags and inputs exit 2 (usage) or 1 (input) with a message naming
#   what is wrong, never a crash.
# Ends with `N passed, N failed`; exits non-zero on any failure.
set -uo pipefail

bin_dir=${1:?usage: sim.sh BIN_DIR SOURCE_DIR}
src_dir=${2:?usage: sim.sh BIN_DIR SOURCE_DIR}
b="$bin_dir/rackfit-bench"
traces="$src_dir/../shared/data/traces"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rackfit-sim.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

passed=0
failed=0
pass() {
    passed=$((passed + 1))
    echo "ok    $*"
}
fail() {
    failed=$((failed + 1))
    echo "FAIL  $*"
}

# The tiny trace: the committed extract when the shared traces are not there.
trace="$src_dir/tests/data/sim/tiresias-10.csv"
cluster="tiresias:$src_dir/tests/data/sim/n4g4.csv"
if [[ -f "$traces/tiresias-sim/60_job.csv" ]]; then
    head -21 "$traces/tiresias-sim/60_job.csv" >"$tmp/t20.csv"
    trace="$tmp/t20.csv"
    cluster="tiresias:$traces/tiresias-sim/cluster_spec.csv"
fi

run() { # run OUT: the tiny simulation into $tmp/OUT
    "$b" sim --trace "$trace" --cluster "$cluster" --policy all --out "$tmp/$1" --round-ms 50 --time-scale 4 \
        >"$tmp/$1.stdout" 2>"$tmp/$1.stderr"
}

if run a; then pass "tiny simulation, every policy"; else fail "tiny simulation: $(cat "$tmp/a.stderr")"; fi
for f in summary.csv summary.md jobs.csv util.csv jct_cdf.csv wait_cdf.csv spread.csv report.html; do
    if [[ -s "$tmp/a/$f" ]]; then pass "writes $f"; else fail "no $f"; fi
done
if [[ $(grep -c ',on,' "$tmp/a/summary.csv") == 5 && $(grep -c ',off,' "$tmp/a/summary.csv") == 5 ]]; then
    pass "summary: 5 policies x communication on/off"
else
    fail "summary rows: $(cat "$tmp/a/summary.csv")"
fi
if grep -q 'report: .*/report.html' "$tmp/a.stdout"; then pass "says where the report is"; else fail "no report line"; fi
if command -v gnuplot >/dev/null 2>&1; then
    if [[ -s "$tmp/a/util.png" && -s "$tmp/a/jct_cdf.svg" ]] && grep -q '<svg' "$tmp/a/report.html"; then
        pass "plots (PNG, SVG) and SVG inline in report.html"
    else
        fail "plots missing: $(cat "$tmp/a/plots.log" 2>/dev/null)"
    fi
fi
if ! grep -q '<img src="http' "$tmp/a/report.html"; then pass "report.html is self-contained"; else fail "remote images"; fi
# kube, kueue and greedy are deterministic (ilp/auto may depend on the clock at their limit)
run b
det() { grep -E '^(kube|kueue|greedy),' "$1" | cut -d, -f1-25; }
if [[ "$(det "$tmp/a/summary.csv")" == "$(det "$tmp/b/summary.csv")" ]]; then
    pass "deterministic"
else
    fail "two runs differ"
fi
# the hand scenario (tests/unit/test_sim.c): greedy runs X 0..10, Y 10..15, Z 1..3
"$b" sim --trace "$src_dir/tests/data/sim/hand.csv" --cluster fabric:1x2x2x4 --policy greedy --comm off \
    --out "$tmp/h" >/dev/null 2>&1
if [[ "$(grep '^greedy,off,' "$tmp/h/jobs.csv" | cut -d, -f3,10,11 | tr '\n' ' ')" == \
    "Y,10.000,15.000 X,0.000,10.000 Z,1.000,3.000 " ]]; then
    pass "hand scenario through the command line"
else
    fail "hand scenario: $(cat "$tmp/h/jobs.csv")"
fi

# preemption (tests/unit/test_sim.c): H (priority 100) preempts L at t=2 and runs 2..7; never with --no-preempt
for flag in "" --no-preempt; do
    "$b" sim --trace "$src_dir/tests/data/sim/preempt.csv" --cluster fabric:1x2x2x4 --policy greedy --comm off \
        --out "$tmp/p" $flag >/dev/null 2>&1
    want="H,2.000,7.000"
    [[ -n $flag ]] && want="H,10.000,15.000"
    if [[ "$(grep '^greedy,off,H,' "$tmp/p/jobs.csv" | cut -d, -f3,10,11)" == "$want" ]]; then
        pass "preemption ${flag:-on}"
    else
        fail "preemption ${flag:-on}: $(cat "$tmp/p/jobs.csv")"
    fi
done

expect_error() { # CODE PATTERN ARGS...: exit CODE, stderr matches PATTERN
    local code=$1 pat=$2
    shift 2
    "$b" sim "$@" >"$tmp/e.out" 2>"$tmp/e.err"
    local rc=$?
    if [[ $rc == "$code" ]] && grep -q -- "$pat" "$tmp/e.err"; then
        pass "error: $pat"
    else
        fail "wanted exit $code and '$pat', got $rc: $(cat "$tmp/e.err")"
    fi
}
expect_error 2 "are required" --trace "$trace"
expect_error 2 "unknown policy 'slurm'" --trace "$trace" --cluster "$cluster" --policy slurm --out "$tmp/x"
expect_error 2 "unknown flag --bogus" --trace "$trace" --cluster "$cluster" --policy kube --out "$tmp/x" --bogus 1
expect_error 2 "expected a number" --trace "$trace" --cluster "$cluster" --policy kube --out "$tmp/x" --hours x
expect_error 1 "nonexistent" --trace /nonexistent.csv --cluster "$cluster" --policy kube --out "$tmp/x"
expect_error 1 "fabric" --trace "$trace" --cluster fabric:0x1x1 --policy kube --out "$tmp/x"
printf 'a,b\n1,2\n' >"$tmp/bad.csv"
expect_error 1 "unknown trace format" --trace "$tmp/bad.csv" --cluster "$cluster" --policy kube --out "$tmp/x"
expect_error 1 "exceeds the largest host" --trace "$trace" --cluster "$cluster" --policy kube --out "$tmp/x" \
    --pod-gpus 64

echo "$passed passed, $failed failed"
((failed == 0))
