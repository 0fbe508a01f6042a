#!/usr/bin/env bash
# scripts/kube/build.sh: build a real kube-apiserver (v1.20.2) for the
# real-server integration tests (tests/integration/kube_*.sh), once per
# machine, into a cache outside the clone; later runs only check the cache.
#
# Where: $RACKFIT_KUBE_CACHE, else /var/cache/rackfit/kube-apiserver-1.20.2 when
# that is writable (root), else ${XDG_CACHE_HOME:-~/.cache}/rackfit/kube-apiserver-1.20.2.
# The binary is $cache/bin/kube-apiserver; `build.sh --print` prints $cache.
#
# How (docs/kube-apiserver.md): Debian bookworm's SOURCE package `kubernetes`
# (1.20.5+really1.20.2-1.1+deb12u1, the upstream v1.20.2 tree with vendor/) is
# fetched with `apt-get source` through a private APT_CONFIG holding deb-src
# twins of the machine's own Debian entries (/etc/apt is never touched), the
# vendored github.com/modern-go/reflect2 v1.0.1 (which crashes Go >= 1.18
# binaries on the first object with labels) is replaced by Debian's v1.0.2
# (golang-github-modern-go-reflect2-dev), and Kubernetes' own
# `make WHAT=cmd/kube-apiserver` builds it with golang-1.19-go in GOPATH mode
# (GO111MODULE=off). The 2.5 GB tree and Go caches are removed afterwards.
# It also installs what starting and testing the server needs: etcd-server
# (3.4.23), openssl, curl (the tests talk to the server with curl, not kubectl).
#
# Invariants: a cache holds a binary only once it has printed its version
# (written to a temporary name, then renamed); concurrent runs serialize on
# $cache/.lock. Exit 0 when the binary is there, 1 when it cannot be built
# (the real-server tests then skip, saying why).
set -euo pipefail

k8s_version=1.20.2
src_version=1.20.5+really1.20.2-1.1+deb12u1
packages=(golang-1.19-go rsync golang-github-modern-go-reflect2-dev dpkg-dev
    etcd-server openssl curl)

say() { echo "kube/build: $*"; }
die() {
    echo "kube/build: error: $*" >&2
    exit 1
}

cache_dir() {
    if [[ -n "${RACKFIT_KUBE_CACHE:-}" ]]; then
        echo "$RACKFIT_KUBE_CACHE"
    elif mkdir -p /var/cache/rackfit 2>/dev/null && [[ -w /var/cache/rackfit ]]; then
        echo "/var/cache/rackfit/kube-apiserver-$k8s_version"
    else
        echo "${XDG_CACHE_HOME:-$HOME/.cache}/rackfit/kube-apiserver-$k8s_version"
    fi
}
cache=$(cache_dir)
if [[ "${1:-}" == --print ]]; then
    echo "$cache"
    exit 0
fi
[[ $# -eq 0 ]] || die "usage: $0 [--print]"

have_binary() {
    [[ -x "$cache/bin/kube-apiserver" ]] &&
        "$cache/bin/kube-apiserver" --version 2>/dev/null | grep -q "v$k8s_version"
}

install_packages() {
    local missing=() pkg status
    for pkg in "${packages[@]}"; do
        status=$(dpkg-query -W -f='${db:Status-Status}' "$pkg" 2>/dev/null || true)
        [[ "$status" == installed ]] || missing+=("$pkg")
    done
    ((${#missing[@]} == 0)) && return 0
    if [[ "$(id -u)" -ne 0 ]]; then
        die "missing Debian packages: ${missing[*]} (run as root, or: sudo apt-get install -y --no-install-recommends ${missing[*]})"
    fi
    say "installing ${missing[*]}"
    local opts=(-o DPkg::Lock::Timeout=600 -o Dpkg::Use-Pty=0)
    DEBIAN_FRONTEND=noninteractive apt-get "${opts[@]}" install -y -q --no-install-recommends "${missing[@]}" ||
        { DEBIAN_FRONTEND=noninteractive apt-get "${opts[@]}" update -q &&
            DEBIAN_FRONTEND=noninteractive apt-get "${opts[@]}" install -y -q --no-install-recommends "${missing[@]}"; } ||
        die "apt-get install failed for: ${missing[*]}"
}

# deb-src twins of the machine's Debian entries for this release (one-line
# sources.list and deb822 *.sources alike); third-party entries are left out.
write_src_list() {
    local codename=$1 out=$2
    python3 - "$codename" "$out" <<'PY'
import glob, re, sys
codename, out = sys.argv[1], sys.argv[2]
suite_ok = re.compile(r"^%s(-updates|-security)?$" % re.escape(codename))
lines = []
for path in ["/etc/apt/sources.list"] + sorted(glob.glob("/etc/apt/sources.list.d/*.list")):
    try:
        text = open(path).read()
    except OSError:
        continue
    for line in text.splitlines():
        m = re.match(r"^\s*deb\s+(\[[^\]]*\]\s+)?(\S+)\s+(\S+)\s+(.*)$", line)
        if m and suite_ok.match(m.group(3)):
            lines.append("deb-src %s%s %s %s" % (m.group(1) or "", m.group(2), m.group(3), m.group(4)))
for path in sorted(glob.glob("/etc/apt/sources.list.d/*.sources")):
    for stanza in re.split(r"\n\s*\n", open(path).read()):
        fields = {}
        for line in stanza.splitlines():
            if ":" in line and not line.startswith(("#", " ")):
                k, v = line.split(":", 1)
                fields[k.strip().lower()] = v.strip()
        if "deb" not in fields.get("types", "").split():
            continue
        suites = [s for s in fields.get("suites", "").split() if suite_ok.match(s)]
        if not suites:
            continue
        opts = " signed-by=%s" % fields["signed-by"] if "signed-by" in fields else ""
        for uri in fields.get("uris", "").split():
            for s in suites:
                lines.append("deb-src [%s] %s %s %s" % (opts.strip(), uri, s, fields.get("components", "main")))
lines = [l.replace("[] ", "") for l in lines]
if not lines:
    sys.exit("no Debian entries for %s in /etc/apt" % codename)
open(out, "w").write("\n".join(lines) + "\n")
PY
}

build() {
    local work=$1 codename
    codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
    [[ "$codename" == bookworm ]] || say "warning: this is '$codename', not bookworm; trying anyway"

    # 1. the source package, through a private apt configuration
    mkdir -p "$work/apt/lists/partial" "$work/apt/cache/archives/partial" "$work/apt/parts" "$work/src"
    write_src_list "$codename" "$work/apt/sources.list" || die "cannot derive deb-src entries from /etc/apt"
    cat >"$work/apt/apt.conf" <<CONF
Dir::Etc::sourcelist "$work/apt/sources.list";
Dir::Etc::sourceparts "$work/apt/parts";
Dir::State::lists "$work/apt/lists";
Dir::Cache "$work/apt/cache";
APT::Sandbox::User "root";
CONF
    export APT_CONFIG=$work/apt/apt.conf
    say "apt-get update (deb-src only, private lists)"
    apt-get -q update >"$work/apt-update.log" 2>&1 || { cat "$work/apt-update.log" >&2; die "apt-get update (deb-src) failed"; }
    say "apt-get source kubernetes=$src_version"
    (cd "$work/src" && apt-get -q source "kubernetes=$src_version" >"$work/apt-source.log" 2>&1) ||
        { tail -20 "$work/apt-source.log" >&2; die "apt-get source kubernetes=$src_version failed"; }
    unset APT_CONFIG
    local tree
    tree=$(find "$work/src" -mindepth 1 -maxdepth 1 -type d -name 'kubernetes-*' | head -1)
    [[ -n "$tree" && -f "$tree/cmd/kube-apiserver/apiserver.go" ]] || die "no kube-apiserver source in $work/src"

    # 2. reflect2 v1.0.1 -> Debian's v1.0.2
    local r2=/usr/share/gocode/src/github.com/modern-go/reflect2
    [[ -f "$r2/reflect2.go" ]] || die "$r2 is missing (golang-github-modern-go-reflect2-dev)"
    rm -rf "$tree/vendor/github.com/modern-go/reflect2"
    cp -r "$r2" "$tree/vendor/github.com/modern-go/reflect2"

    # 3. Kubernetes' own make, GOPATH mode
    say "make WHAT=cmd/kube-apiserver (a few minutes on 2 cores)"
    local start=$SECONDS
    (
        cd "$tree"
        export PATH=/usr/lib/go-1.19/bin:$PATH GO111MODULE=off GOFLAGS= GOCACHE=$work/gocache
        export GOPATH=$work/gopath HOME=$work/home KUBE_BUILD_PLATFORMS=linux/amd64
        export KUBE_GIT_VERSION=v$k8s_version KUBE_GIT_MAJOR=1 KUBE_GIT_MINOR=20 KUBE_GIT_TREE_STATE=archive
        mkdir -p "$HOME"
        nice make WHAT=cmd/kube-apiserver
    ) >"$work/make.log" 2>&1 || { tail -40 "$work/make.log" >&2; die "make WHAT=cmd/kube-apiserver failed (log above)"; }
    local out
    out=$(find "$tree/_output" -type f -name kube-apiserver -perm -u+x | head -1)
    [[ -n "$out" ]] || die "make succeeded but left no kube-apiserver under _output/"
    mkdir -p "$cache/bin"
    cp "$out" "$cache/bin/kube-apiserver.tmp"
    "$cache/bin/kube-apiserver.tmp" --version | grep -q "v$k8s_version" ||
        die "the built binary does not report v$k8s_version"
    mv "$cache/bin/kube-apiserver.tmp" "$cache/bin/kube-apiserver"
    printf 'kube-apiserver v%s from Debian source %s, reflect2 %s, built %s in %d s\n' \
        "$k8s_version" "$src_version" "$(dpkg-query -W -f='${Version}' golang-github-modern-go-reflect2-dev)" \
        "$(date -u +%FT%TZ)" $((SECONDS - start)) >"$cache/BUILD-INFO"
    say "built in $((SECONDS - start)) s: $cache/bin/kube-apiserver"
}

install_packages
mkdir -p "$cache" || die "cannot create $cache"
exec 9>"$cache/.lock"
flock 9
if have_binary; then
    say "cached: $cache/bin/kube-apiserver ($("$cache/bin/kube-apiserver" --version))"
    exit 0
fi
work=$(mktemp -d "${TMPDIR:-/var/tmp}/rackfit-kube-build.XXXXXX")
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
build "$work"
