#!/usr/bin/env bash
# tests/integration/glpsol.sh: the ILP against the MathProg model, solved by
# glpsol (STRICT: any disagreement fails).
#
#   bash glpsol.sh BIN_DIR SOURCE_DIR        (ctest runs it so)
#
# For every tests/data/glpsol/X.json (small hand-written problems: slices,
# required levels, priorities, elastic gangs, ordered admission, bound pods,
# eligibility, quantities):
#   1. scripts/problem2dat.py X.json > X.dat, then
#      glpsol -m models/placement.mod -d X.dat, which must end with
#      "INTEGER OPTIMAL SOLUTION FOUND" and print `RF value PRIO UNITS PODS`
#      per priority and `RF penalty P` (the model's post-solve section);
#   2. the model's optimum must equal X.expect (the same lines, without
#      "RF "), which the exhaustive search also checks (tests/unit/test_exhaust.c):
#      that keeps the model, the data converter and the reference honest;
#   3. BIN_DIR/rackfit solve X.json --mode ilp must report the same
#      summary.value (every priority: units and pods) and summary.penalty
#      (within 1e-6), and `rackfit check` must find its answer feasible.
# Until the ILP strategy exists `--mode ilp` runs the greedy, so problems the
# greedy does not solve optimally FAIL here on purpose: they list what the
# ILP must fix. Ends with `N passed, N failed`; exits non-zero on any failure.
set -uo pipefail

bin_dir=${1:?usage: glpsol.sh BIN_DIR SOURCE_DIR}
src_dir=${2:?usage: glpsol.sh BIN_DIR SOURCE_DIR}
rf="$bin_dir/rackfit"
model="$src_dir/models/placement.mod"
conv="$src_dir/scripts/problem2dat.py"
data="$src_dir/tests/data/glpsol"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rackfit-glpsol.XXXXXX")
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

for tool in glpsol python3; do
    if ! command -v "$tool" >/dev/null; then
        echo "FAIL  $tool is not installed (scripts/bootstrap.sh installs it)"
        echo "0 passed, 1 failed"
        exit 1
    fi
done
if [[ ! -x "$rf" ]]; then
    echo "FAIL  $rf is not built"
    echo "0 passed, 1 failed"
    exit 1
fi

# The answer's summary in the model's words: `value PRIO UNITS PODS` lines,
# then `penalty P`.
summary_of_answer() {
    python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))["summary"]
for prio, units, pods in s["value"]:
    print("value %d %d %d" % (prio, units, pods))
print("penalty %.9g" % s["penalty"])
' "$1"
}

# same PATH_A PATH_B: the two summaries agree (values exactly, penalties
# within 1e-6, relative above 1); prints the difference otherwise.
same() {
    python3 -c '
import sys
def read(path):
    values, pen = {}, None
    for line in open(path):
        f = line.split()
        if f and f[0] == "value":
            values[int(f[1])] = (int(f[2]), int(f[3]))
        elif f and f[0] == "penalty":
            pen = float(f[1])
    return values, pen
(va, pa), (vb, pb) = read(sys.argv[1]), read(sys.argv[2])
ok = va == vb and pa is not None and pb is not None and abs(pa - pb) <= 1e-6 * max(1.0, abs(pa), abs(pb))
if not ok:
    for prio in sorted(set(va) | set(vb), reverse=True):
        a, b = va.get(prio), vb.get(prio)
        mark = "" if a == b else "   <--"
        print("      priority %d: units/pods %s vs %s%s" % (prio, a, b, mark))
    print("      penalty %s vs %s" % (pa, pb))
sys.exit(0 if ok else 1)
' "$1" "$2"
}

shopt -s nullglob
files=("$data"/*.json)
if ((${#files[@]} == 0)); then
    fail "no problems in $data"
fi
for json in "${files[@]}"; do
    name=$(basename "$json" .json)
    if ! python3 "$conv" "$json" >"$tmp/$name.dat" 2>"$tmp/$name.conv.err"; then
        fail "$name: problem2dat.py: $(head -1 "$tmp/$name.conv.err")"
        continue
    fi
    timeout 300 glpsol -m "$model" -d "$tmp/$name.dat" >"$tmp/$name.glpsol" 2>&1
    if ! grep -q "INTEGER OPTIMAL SOLUTION FOUND" "$tmp/$name.glpsol"; then
        fail "$name: glpsol found no optimum"
        grep -i "error\|infeasible\|undefined" "$tmp/$name.glpsol" | head -5 | sed 's/^/      | /'
        continue
    fi
    sed -n 's/^RF \(value\|penalty\) /\1 /p' "$tmp/$name.glpsol" >"$tmp/$name.model"
    if [[ -f "$data/$name.expect" ]] && ! same "$tmp/$name.model" "$data/$name.expect" >"$tmp/$name.diff"; then
        fail "$name: the model's optimum (left) is not $name.expect (right)"
        cat "$tmp/$name.diff"
        continue
    fi
    timeout 300 "$rf" solve "$json" --mode ilp >"$tmp/$name.answer" 2>"$tmp/$name.err" </dev/null
    rc=$?
    if ((rc != 0)); then
        fail "$name: rackfit solve --mode ilp exited $rc: $(head -1 "$tmp/$name.err")"
        continue
    fi
    timeout 300 "$rf" check "$json" "$tmp/$name.answer" >"$tmp/$name.check" 2>&1 </dev/null
    rc=$?
    if ((rc != 0)); then
        fail "$name: rackfit check refuses the ilp answer (exit $rc)"
        head -5 "$tmp/$name.check" | sed 's/^/      | /'
        continue
    fi
    mode_used=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["summary"].get("mode_used"))' \
        "$tmp/$name.answer")
    summary_of_answer "$tmp/$name.answer" >"$tmp/$name.ilp"
    if same "$tmp/$name.model" "$tmp/$name.ilp" >"$tmp/$name.diff"; then
        pass "$name (mode_used $mode_used)"
    else
        fail "$name: glpsol's optimum (left) and rackfit --mode ilp (right, mode_used $mode_used) disagree"
        cat "$tmp/$name.diff"
    fi
done

echo "$passed passed, $failed failed"
((failed == 0))
