#!/usr/bin/env bash
# tests/integration/service_curve.sh: CURVE encryption and the ZAP handler:
# keys from `rackfitd --keygen`; the allowed client is served, an unknown
# client and a plain client get nothing; no key in the log.
#   bash service_curve.sh BIN_DIR SOURCE_DIR
source "$(dirname "$0")/service_lib.bash" || { echo "0 passed, 1 failed"; exit 1; }

"$bin_dir/rackfitd" --keygen >"$work/server.keys" || fail "rackfitd --keygen"
"$bin_dir/rackfitd" --keygen >"$work/client.keys" || fail "rackfitd --keygen (client)"
server_pub=$(sed -n 's/^public = //p' "$work/server.keys")
server_sec=$(sed -n 's/^secret = //p' "$work/server.keys")
client_pub=$(sed -n 's/^public = //p' "$work/client.keys")
client_sec=$(sed -n 's/^secret = //p' "$work/client.keys")
if ((${#server_pub} == 40 && ${#server_sec} == 40)); then pass "--keygen prints Z85 keys"; else fail "--keygen output"; fi
echo "$server_sec" >"$work/server.secret"
chmod 600 "$work/server.secret"
cat >"$work/rackfitd.conf" <<CONF
# rackfitd test config
curve_secret_key_file = $work/server.secret
curve_allowed_key = $client_pub
log_level = debug
CONF
svc_start --config "$work/rackfitd.conf"
svc_scenario curve "$server_pub" "$client_pub" "$client_sec"
svc_stop
if grep -qF -e "$server_sec" -e "$client_sec" -e "$client_pub" "$svc_log"; then
    fail "a key appears in rackfitd's log"
else
    pass "no key in rackfitd's log"
fi
svc_finish
