#!/usr/bin/env bash
# tests/integration/service_load.sh: 16 clients x 500 requests at once over
# TCP loopback; every reply matched to its request by id, no errors, every
# distinct answer feasible under `rackfit check`; then SIGTERM.
#   bash service_load.sh BIN_DIR SOURCE_DIR
source "$(dirname "$0")/service_lib.bash" || { echo "0 passed, 1 failed"; exit 1; }

svc_start --fast-queue 4096 --solver-queue 4096
svc_scenario load 16 500
svc_stop
svc_finish
