#!/usr/bin/env bash
# tests/integration/probe_ib.sh: rackfit-probe's InfiniBand path against
# Debian's ibsim serving the saved fabric
# (../shared/data/ib/topograph-ibnetdiscover-example.out: 40 switches, 119
# DGX hosts, rail-optimised), with the probe's own libibmad code
# LD_PRELOADed onto libumad2sim (ibsim-run), as notes/topology-discovery.md
# 3.4 describes:
# - live: one SMP per port names the leaf (hosts c01 and c02 of one leaf
#   group get the same tier-0, a host of another group a different one);
# - saved: smpquery transcripts of all four rails of a host, taken under
#   ibsim with infiniband-diags, read with --ib-file: the smallest-GUID
#   leaf, equal across the group, different across groups;
# - faults: NodeInfo dropped by the simulator (ibsim `Error ... 17`) is a
#   reported SMP timeout and no label; no InfiniBand on this machine is
#   reported and no label.
# Without ibsim, or when it does not start, it exits 77 (skipped, saying
# why), which scripts/test.sh counts as a failure.
#   bash probe_ib.sh BIN_DIR SOURCE_DIR
set -uo pipefail

bin_dir=${1:?usage: $0 BIN_DIR SOURCE_DIR}
src_dir=$(cd "${2:?usage: $0 BIN_DIR SOURCE_DIR}" && pwd)
probe="$(cd "$bin_dir" && pwd)/rackfit-probe"
fabric="$src_dir/../shared/data/ib/topograph-ibnetdiscover-example.out"
passed=0
failed=0
pass() { passed=$((passed + 1)); echo "ok    $*"; }
fail() { failed=$((failed + 1)); echo "FAIL  $*"; }

if ! command -v ibsim >/dev/null || ! command -v ibsim-run >/dev/null || ! command -v smpquery >/dev/null; then
    echo "skip  ibsim, ibsim-run or smpquery is not installed (scripts/bootstrap.sh installs them)"
    exit 77
fi
[[ -f "$fabric" ]] || {
    echo "FAIL  the saved fabric $fabric is missing"
    exit 1
}

work=$(mktemp -d "${TMPDIR:-/tmp}/rackfit-probe-ib.XXXXXX")
sim_pid=
cleanup() {
    exec 7>&- 2>/dev/null
    [[ -n "$sim_pid" ]] && kill "$sim_pid" 2>/dev/null && wait "$sim_pid" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT

# libumad2sim's read() copies past its own buffer (a simulator bug AddressSanitizer
# sees in sanitizer builds); the suppression names that library only.
echo "interceptor_via_lib:libumad2sim.so" >"$work/asan.supp"
export ASAN_OPTIONS="verify_asan_link_order=0:detect_leaks=0:suppressions=$work/asan.supp"

# ibsim binds fixed socket names: run it in its own folder, commands on a FIFO.
mkfifo "$work/ctl"
(cd "$work" && exec ibsim -s "$fabric" <"$work/ctl" >"$work/ibsim.log" 2>&1) &
sim_pid=$!
exec 7>"$work/ctl"
for _ in $(seq 100); do
    grep -q "Network simulator ready" "$work/ibsim.log" 2>/dev/null && break
    sleep 0.2
done
if ! grep -q "Network simulator ready" "$work/ibsim.log"; then
    echo "skip  ibsim did not start here: $(grep -v ibwarn "$work/ibsim.log" | tail -2)"
    exit 77
fi

# $1 host CA ("a08-p1-dgx-04-c01 mlx5_5"), rest: probe flags; prints the JSON report.
as_host() {
    local host=$1
    shift
    SIM_HOST="$host" ibsim-run "$probe" --no-lldp --no-nvml --dry-run "$@" 2>>"$work/probe.err"
}
field() { python3 -c "import json,sys; r=json.load(sys.stdin); print(eval(sys.argv[1]))" "$1"; }
tier0='r["labels"]["fabric.topograph.run/tier-0"]'

out=$(as_host "a08-p1-dgx-04-c01 mlx5_5")
if [[ $(field "$tier0['value']" <<<"$out") == A09-P1-IBLEAF-04-04 &&
    $(field 'r["ib"][0]["peer_guid"]' <<<"$out") == 0x2c5eab0300b87b40 &&
    $(field 'r["ib"][0]["peer_port"]' <<<"$out") == 1 ]]; then
    pass "live SMP from c01 mlx5_5: leaf A09-P1-IBLEAF-04-04 (0x2c5eab0300b87b40), switch port 1"
else
    fail "live SMP from c01 mlx5_5: $out $(tail -3 "$work/probe.err")"
fi
out=$(as_host "a08-p1-dgx-04-c02 mlx5_5")
[[ $(field "$tier0['value']" <<<"$out") == A09-P1-IBLEAF-04-04 && $(field 'r["ib"][0]["peer_port"]' <<<"$out") == 2 ]] &&
    pass "live SMP from c02 mlx5_5: the same leaf, switch port 2" || fail "live SMP from c02: $out"

# Another leaf group: an HCA cabled to none of c01's four leaves.
other=$(python3 - "$fabric" <<'PY'
import re, sys
lines = open(sys.argv[1]).read().split("\n")
for i, line in enumerate(lines[:-1]):
    m = re.match(r'^Ca\s.*# "(\S+ \S+)"', line)  # "<host> <device>": a compute HCA
    n = re.match(r'^\[1\]\(\w+\)\s+"S-(\w+)"', lines[i + 1])
    c01 = {"2c5eab0300b87b40", "2c5eab0300c262c0", "2c5eab0300c26340", "2c5eab0300c260c0"}
    if m and n and n.group(1) not in c01:
        print(m.group(1))
        break
PY
)
if [[ -n "$other" ]]; then
    out=$(as_host "$other")
    v=$(field "$tier0['value']" <<<"$out")
    [[ -n "$v" && "$v" != A09-P1-IBLEAF-04-04 && "$v" == *IBLEAF* ]] &&
        pass "live SMP from \"$other\": another leaf ($v)" || fail "live SMP from \"$other\": $out"
else
    fail "no host of another leaf group found in the saved fabric"
fi

# Saved transcripts: every rail of a host, as smpquery prints them under ibsim.
transcript() { # $1 host: smpquery nodeinfo + nodedesc for each of its CAs
    local host=$1 ca
    for ca in $(grep -oE "\"$host (mlx5_[0-9]+)\"" "$fabric" | sort -u | sed -E 's/.* (mlx5_[0-9]+)"/\1/'); do
        echo "\$ smpquery -C $ca -D nodeinfo 0,1"
        SIM_HOST="$host $ca" ibsim-run smpquery -D nodeinfo 0,1 2>/dev/null
        echo "\$ smpquery -C $ca -D nodedesc 0,1"
        SIM_HOST="$host $ca" ibsim-run smpquery -D nodedesc 0,1 2>/dev/null
    done
}
for h in a08-p1-dgx-04-c01 a08-p1-dgx-04-c02; do
    transcript "$h" >"$work/$h.txt"
done
n_rails=$(grep -c '^\$ smpquery -C .* nodeinfo' "$work/a08-p1-dgx-04-c01.txt")
r1=$("$probe" --ib-file "$work/a08-p1-dgx-04-c01.txt" --dry-run)
r2=$("$probe" --ib-file "$work/a08-p1-dgx-04-c02.txt" --dry-run)
v1=$(field "$tier0['value']" <<<"$r1")
v2=$(field "$tier0['value']" <<<"$r2")
leaves=$(field 'len({p["peer_guid"] for p in r["ib"] if p["peer_type"] == "switch"})' <<<"$r1")
[[ $n_rails -ge 3 && $leaves == "$n_rails" && $v1 == A09-P1-IBLEAF-04-04 && $v1 == "$v2" ]] &&
    pass "saved transcripts: c01 has $n_rails rails on $leaves leaves; tier-0 $v1, the same for c02" ||
    fail "saved transcripts: rails=$n_rails leaves=$leaves c01=$v1 c02=$v2"
r3=$("$probe" --ib-file "$work/a08-p1-dgx-04-c01.txt" --ib-rail mlx5_0 --dry-run)
[[ $(field "$tier0['value']" <<<"$r3") == A09-P1-IBLEAF-01-04 ]] &&
    pass "--ib-rail mlx5_0 takes that rail's leaf (A09-P1-IBLEAF-01-04)" || fail "--ib-rail mlx5_0: $r3"

# Fault: the leaf drops NodeInfo on the cable's port -> an SMP timeout, no label.
echo 'Error "S-2c5eab0300b87b40"[1] 100 17' >&7
sleep 1
out=$(as_host "a08-p1-dgx-04-c01 mlx5_5" --ib-timeout-ms 200 --ib-retries 1)
if [[ $(field "$tier0['action']" <<<"$out") == leave && $(field 'r["ib"][0].get("error", "")' <<<"$out") == *"no answer"* ]]; then
    pass "dropped NodeInfo: reported ($(field 'r["ib"][0]["error"]' <<<"$out")), tier-0 left alone"
else
    fail "dropped NodeInfo: $out"
fi
echo 'Error "S-2c5eab0300b87b40"[1] 0' >&7

# Fault: no InfiniBand here at all (outside ibsim).
out=$("$probe" --no-lldp --no-nvml --dry-run --tier0-source ib 2>/dev/null)
[[ $(field "$tier0['action']" <<<"$out") == leave && $(field "$tier0['reason']" <<<"$out") == *InfiniBand* ]] &&
    pass "no InfiniBand on this machine: $(field "$tier0['reason']" <<<"$out")" || fail "no InfiniBand: $out"

echo "$passed passed, $failed failed"
((failed == 0))
