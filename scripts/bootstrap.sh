#!/usr/bin/env bash
# scripts/bootstrap.sh: install the Debian 12 packages that rackfit needs to
# build, test and fuzz everything (the CLI, the service, the watcher, the
# benchmarks). Idempotent: when every package is already installed it only
# checks (dpkg-query) and returns in well under a second; otherwise, as root,
# it runs `apt-get update` once and installs what is missing. Both README
# commands (scripts/build-and-run.sh, scripts/test.sh) start with it.
set -euo pipefail

packages=(
    build-essential      # gcc, make, libc headers
    cmake                # the build (>= 3.25)
    pkg-config           # finds jansson, criterion, ...
    clang                # libFuzzer builds (RF_FUZZ=ON)
    libclang-rt-14-dev   # clang's sanitizer and libFuzzer runtimes
    libomp-dev           # OpenMP for clang builds
    clang-format         # the house format (.clang-format)
    libjansson-dev       # JSON reader (base/json.c)
    libcriterion-dev     # unit tests
    libglpk-dev          # the ILP (integer program)
    glpk-utils           # glpsol, to run models/*.mod by hand
    coinor-cbc           # cbc, the independent exact reference of the ILP tests
    coinor-libcbc-dev    # CBC's C interface: the second MIP backend (solver/mip_cbc.c)
    libzmq3-dev          # rackfitd's transport
    libmsgpack-dev       # rackfitd's wire format
    libhwloc-dev         # machine topology (thread placement)
    libcurl4-openssl-dev # the watcher's Kubernetes API client
    libyaml-dev          # the watcher's config file and the kubeconfig
    libmicrohttpd-dev    # /metrics, /healthz, /readyz of both daemons (base/httpd.c)
    python3              # test helpers
    python3-zmq          # service integration tests
    python3-msgpack      # service integration tests
    python3-prometheus-client # the metrics tests parse /metrics with its text parser
    python3-yaml         # the watcher's deploy/ test (manifests rendered and checked)
    openssl              # the watcher's TLS test makes its own CA (it fails without it)
    libibmad-dev         # rackfit-probe: directed-route SMPs (probe/ibmad.c; pulls libibumad-dev)
    libibumad-dev        # rackfit-probe: local InfiniBand ports
    ibsim-utils          # rackfit-probe's InfiniBand test: a simulated fabric (ibsim, libumad2sim)
    infiniband-diags     # rackfit-probe's InfiniBand test: smpquery against the simulated fabric
    lldpd                # rackfit-probe: lldpcli (live LLDP) and its tests
    gnuplot-nox          # rackfit-bench sim's plots (PNG and SVG; without it the report has tables only)
)

missing=()
for pkg in "${packages[@]}"; do
    status=$(dpkg-query -W -f='${db:Status-Status}' "$pkg" 2>/dev/null || true)
    if [[ "$status" != installed ]]; then
        missing+=("$pkg")
    fi
done

if ((${#missing[@]} == 0)); then
    echo "bootstrap: all ${#packages[@]} packages are installed"
    exit 0
fi

if [[ "$(id -u)" -ne 0 ]]; then
    {
        echo "bootstrap: error: these Debian packages are missing: ${missing[*]}"
        echo "bootstrap: run this script as root, or install them with:"
        echo "    sudo apt-get update && sudo apt-get install -y --no-install-recommends ${missing[*]}"
    } >&2
    exit 1
fi

echo "bootstrap: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt_opts=(-o DPkg::Lock::Timeout=600 -o Dpkg::Use-Pty=0)
if ! apt-get "${apt_opts[@]}" update -q; then
    echo "bootstrap: error: apt-get update failed" >&2
    exit 1
fi
if ! apt-get "${apt_opts[@]}" install -y -q --no-install-recommends "${missing[@]}"; then
    echo "bootstrap: error: apt-get install failed for: ${missing[*]}" >&2
    exit 1
fi
echo "bootstrap: done"
