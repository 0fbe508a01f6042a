#!/usr/bin/env bash
# tests/integration/probe_deploy.sh: deploy/probe/ holds together, offline:
# - deploy/kustomization.yaml lists deploy/probe/'s three files, and
#   `kubectl kustomize deploy/` (when kubectl is installed) renders them;
# - the ClusterRole grants exactly `patch` on core `nodes` and is bound to
#   the DaemonSet's own ServiceAccount (not rackfit-watch's);
# - the DaemonSet passes the node name from the downward API, tolerates
#   every taint, mounts the lldpd socket and /dev/infiniband;
# - rackfit-probe accepts the DaemonSet's arguments (checked with --dry-run and --interval-s 0,
#   which reads no credentials).
#   bash probe_deploy.sh BIN_DIR SOURCE_DIR
set -uo pipefail
bin_dir=${1:?usage: $0 BIN_DIR SOURCE_DIR}
src_dir=${2:?usage: $0 BIN_DIR SOURCE_DIR}
py=/usr/bin/python3
work=$(mktemp -d "${TMPDIR:-/tmp}/rackfit-probe-deploy.XXXXXX")
trap 'rm -rf "$work"' EXIT

rendered=
if command -v kubectl >/dev/null && kubectl kustomize "$src_dir/deploy" >"$work/rendered.yaml" 2>"$work/err"; then
    rendered="$work/rendered.yaml"
else
    echo "note  kubectl kustomize is not available: reading deploy/probe/ directly"
fi

"$py" - "$src_dir/deploy" "$rendered" >"$work/check.out" <<'PY'
import os, sys, yaml
deploy, rendered = sys.argv[1], sys.argv[2]
ok = fail = 0
def check(cond, what):
    global ok, fail
    if cond:
        ok += 1; print("ok    " + what)
    else:
        fail += 1; print("FAIL  " + what)
kust = yaml.safe_load(open(os.path.join(deploy, "kustomization.yaml")))
files = ["probe/serviceaccount.yaml", "probe/rbac.yaml", "probe/daemonset.yaml"]
check(all(f in kust["resources"] for f in files), "deploy/kustomization.yaml lists deploy/probe/'s files")
if rendered:
    docs = [d for d in yaml.safe_load_all(open(rendered)) if d]
    check(True, "kubectl kustomize deploy/ renders")
else:
    docs = [d for f in files for d in yaml.safe_load_all(open(os.path.join(deploy, f))) if d]
mine = {d["kind"]: d for d in docs if d["metadata"]["name"] == "rackfit-probe"}
for k in ("ServiceAccount", "ClusterRole", "ClusterRoleBinding", "DaemonSet"):
    check(k in mine, "renders the %s rackfit-probe" % k)
rules = mine["ClusterRole"]["rules"]
check(rules == [{"apiGroups": [""], "resources": ["nodes"], "verbs": ["patch"]}],
      "the ClusterRole grants patch on nodes and nothing else")
b = mine["ClusterRoleBinding"]
check(b["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "rackfit-probe"}
      and b["subjects"] == [{"kind": "ServiceAccount", "name": "rackfit-probe", "namespace": "rackfit-system"}],
      "the ClusterRoleBinding binds it to rackfit-system/rackfit-probe only")
ds = mine["DaemonSet"]
pod = ds["spec"]["template"]["spec"]
check(pod["serviceAccountName"] == "rackfit-probe", "the DaemonSet runs as rackfit-probe")
check(ds["metadata"].get("namespace", "rackfit-system") == "rackfit-system", "the DaemonSet is in rackfit-system")
check({"operator": "Exists"} in [{k: v for k, v in t.items() if k == "operator"} for t in pod.get("tolerations", [])],
      "the DaemonSet tolerates every taint")
c = pod["containers"][0]
env = {e["name"]: e for e in c.get("env", [])}
check(env.get("NODE_NAME", {}).get("valueFrom", {}).get("fieldRef", {}).get("fieldPath") == "spec.nodeName",
      "NODE_NAME comes from spec.nodeName")
mounts = {m["mountPath"] for m in c.get("volumeMounts", [])}
check({"/run/lldpd.socket", "/dev/infiniband"} <= mounts, "the lldpd socket and /dev/infiniband are mounted")
check(ds["spec"]["selector"]["matchLabels"].items() <= ds["spec"]["template"]["metadata"]["labels"].items(),
      "the selector matches the pod template")
print("%d passed, %d failed" % (ok, fail))
sys.exit(1 if fail else 0)
PY
rc=$?
cat "$work/check.out"
passed=$(grep -c '^ok' "$work/check.out")
failed=$(grep -c '^FAIL' "$work/check.out")
((rc == 0 || failed > 0)) || failed=$((failed + 1))

# The DaemonSet's arguments, as the container gets them, plus --dry-run (no credentials read).
mapfile -t args < <("$py" -c '
import sys, yaml
d = yaml.safe_load(open(sys.argv[1]))
print("\n".join(a.replace("$(NODE_NAME)", "node-a") for a in d["spec"]["template"]["spec"]["containers"][0]["args"]))' \
    "$src_dir/deploy/probe/daemonset.yaml")
if out=$("$bin_dir/rackfit-probe" "${args[@]}" --interval-s 0 --no-ib --no-lldp --no-nvml --dry-run 2>"$work/err") &&
    "$py" -c 'import json,sys; r=json.load(sys.stdin); sys.exit(r["node"] != "node-a")' <<<"$out"; then
    echo "ok    rackfit-probe accepts the DaemonSet's arguments (${args[*]})"
    passed=$((passed + 1))
else
    echo "FAIL  rackfit-probe refuses the DaemonSet's arguments (${args[*]}): $(cat "$work/err")"
    failed=$((failed + 1))
fi
echo "$passed passed, $failed failed (in all)"
((failed == 0))
