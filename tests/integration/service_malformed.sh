#!/usr/bin/env bash
# tests/integration/service_malformed.sh: rackfitd against bad input: the
# corpora tests/data/msgpack/{pass,fail}/ (bombs, deep nesting, huge
# strings, wrong types, bin/ext, duplicate keys...), every prefix of a valid
# request, byte flips, and a message over the socket's size cap; each gets
# an error reply (the last: dropped by ZeroMQ) and the server lives on.
#   bash service_malformed.sh BIN_DIR SOURCE_DIR
source "$(dirname "$0")/service_lib.bash" || { echo "0 passed, 1 failed"; exit 1; }

svc_start --max-message-bytes 67108864
svc_scenario malformed
svc_stop
svc_finish
