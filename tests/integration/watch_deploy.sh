#!/usr/bin/env bash
# tests/integration/watch_deploy.sh: deploy/ renders offline and holds
# together:
# - `kubectl kustomize deploy/` when kubectl is installed (Debian 12 does not
#   package it; this machine may have one from elsewhere); otherwise our own
#   renderer (a walk of kustomization.yaml's resources and configMapGenerator,
#   with its namespace applied): the test says which one it used;
# - every object parses, namespaced ones land in rackfit-system, the
#   Deployment mounts the generated ConfigMap, runs both containers with
#   probes, and its service account is bound to the ClusterRole and the
#   Lease Role; the ClusterRole grants what the watcher uses and no more
#   (no wildcards, no secrets);
# - rackfit-watch accepts deploy/watch.yaml (every key known);
# - the Containerfile builds the three programs the manifests run.
#   bash watch_deploy.sh BIN_DIR SOURCE_DIR
set -uo pipefail
bin_dir=${1:?usage: $0 BIN_DIR SOURCE_DIR}
src_dir=${2:?usage: $0 BIN_DIR SOURCE_DIR}
py=/usr/bin/python3
work=$(mktemp -d "${TMPDIR:-/tmp}/rackfit-deploy-test.XXXXXX")
trap 'rm -rf "$work"' EXIT
passed=0
failed=0
pass() { passed=$((passed + 1)); echo "ok    $*"; }
fail() { failed=$((failed + 1)); echo "FAIL  $*"; }

if [[ -z "${RF_NO_KUBECTL:-}" ]] && command -v kubectl >/dev/null && kubectl kustomize "$src_dir/deploy" >"$work/rendered.yaml" 2>"$work/err"; then
    pass "kubectl kustomize deploy/ renders ($(kubectl version --client 2>/dev/null | tr '\n' ' '))"
    renderer=kubectl
else
    [[ -s "$work/err" ]] && cat "$work/err"
    echo "note  kubectl is not available: rendering with the test's own kustomization walk"
    renderer=own
fi

cat >"$work/check.py" <<'PY'
import os, sys, yaml, hashlib, json
deploy, rendered, renderer = sys.argv[1:4]
ok = fail = 0
def check(cond, what):
    global ok, fail
    if cond:
        ok += 1; print("ok    " + what)
    else:
        fail += 1; print("FAIL  " + what)

kust = yaml.safe_load(open(os.path.join(deploy, "kustomization.yaml")))
if renderer == "own":
    docs = []
    for r in kust["resources"]:
        docs += [d for d in yaml.safe_load_all(open(os.path.join(deploy, r))) if d]
    for g in kust.get("configMapGenerator", []):
        data = {os.path.basename(f): open(os.path.join(deploy, f)).read() for f in g["files"]}
        h = hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:10]
        docs.append({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": g["name"] + "-" + h}, "data": data})
        for d in docs:  # name references, as kustomize rewrites them
            if d["kind"] == "Deployment":
                for v in d["spec"]["template"]["spec"].get("volumes", []):
                    if v.get("configMap", {}).get("name") == g["name"]:
                        v["configMap"]["name"] = g["name"] + "-" + h
    cluster_scoped = {"Namespace", "ClusterRole", "ClusterRoleBinding"}
    for d in docs:
        if d["kind"] not in cluster_scoped:
            d["metadata"]["namespace"] = kust["namespace"]
else:
    docs = [d for d in yaml.safe_load_all(open(rendered)) if d]
check(all(isinstance(d, dict) and d.get("kind") and d.get("apiVersion") for d in docs), "every object parses")
kinds = {}
for d in docs:  # deploy/probe/'s objects (rackfit-probe) are checked by tests/integration/probe_deploy.sh
    if d["metadata"]["name"] != "rackfit-probe":
        kinds.setdefault(d["kind"], []).append(d)
for k in ["Namespace", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding", "ConfigMap",
          "Deployment"]:
    check(k in kinds, "renders a %s" % k)
ns = kust["namespace"]
check(all(d["metadata"].get("namespace") == ns for d in docs
          if d["kind"] not in ("Namespace", "ClusterRole", "ClusterRoleBinding")),
      "namespaced objects are in %s" % ns)
dep = kinds["Deployment"][0]
pod = dep["spec"]["template"]["spec"]
names = [c["name"] for c in pod["containers"]]
check(names == ["rackfitd", "rackfit-watch"], "the Deployment runs rackfitd and rackfit-watch side by side")
check(all(c.get("livenessProbe") and c.get("readinessProbe") for c in pod["containers"]),
      "both containers have liveness and readiness probes")
cm = kinds["ConfigMap"][0]
vol = [v for v in pod["volumes"] if "configMap" in v][0]
check(vol["configMap"]["name"] == cm["metadata"]["name"], "the Deployment mounts the generated ConfigMap (%s)"
      % cm["metadata"]["name"])
check("watch.yaml" in cm["data"] and "probe.json" in cm["data"], "the ConfigMap holds watch.yaml and probe.json")
sa = pod["serviceAccountName"]
for kind, role in (("ClusterRoleBinding", "ClusterRole"), ("RoleBinding", "Role")):
    b = kinds[kind][0]
    check(b["roleRef"]["kind"] == role and any(s["name"] == sa and s.get("namespace") == ns for s in b["subjects"]),
          "%s binds %s to the service account %s" % (kind, role, sa))
rules = kinds["ClusterRole"][0]["rules"]
granted = {(g, r, v) for rule in rules for g in rule["apiGroups"] for r in rule["resources"] for v in rule["verbs"]}
need = {("", "nodes", "list"), ("", "nodes", "watch"), ("", "pods", "list"), ("", "pods", "watch"),
        ("", "pods", "patch"), ("", "pods", "delete"), ("", "pods/binding", "create"), ("", "pods/status", "patch"),
        ("", "events", "create"), ("", "pods/eviction", "create"), ("scheduling.x-k8s.io", "podgroups", "watch"),
        ("scheduling.x-k8s.io", "podgroups", "patch"), ("policy", "poddisruptionbudgets", "list"),
        ("policy", "poddisruptionbudgets", "watch")}
check(need <= granted, "the ClusterRole grants what the watcher uses")
check(not any("*" in (g, r, v) for g, r, v in granted) and not any(r in ("secrets", "configmaps") for _, r, _ in granted),
      "... and no wildcards, no secrets or configmaps")
lease = kinds["Role"][0]["rules"]
check(any("update" in r["verbs"] and r.get("resourceNames") == ["rackfit-watch"] for r in lease),
      "the Lease Role updates only the rackfit-watch Lease")
open(os.path.join(os.path.dirname(rendered), "watch.yaml"), "w").write(cm["data"]["watch.yaml"])
print("%d passed, %d failed" % (ok, fail))
PY
out=$("$py" "$work/check.py" "$src_dir/deploy" "$work/rendered.yaml" "$renderer" 2>&1)
grep -Ev '^[0-9]+ passed, [0-9]+ failed$' <<<"$out"
p=$(echo "$out" | grep -E '^[0-9]+ passed' | sed 's/ passed.*//')
f=$(echo "$out" | grep -E '^[0-9]+ passed' | sed 's/.* passed, //; s/ failed//')
passed=$((passed + ${p:-0}))
failed=$((failed + ${f:-1}))

# rackfit-watch reads watch.yaml (an unknown key would stop it with exit 2 naming the key)
if [[ -x "$bin_dir/rackfit-watch" ]]; then
    err=$("$bin_dir/rackfit-watch" --config "$work/watch.yaml" --kubeconfig /nonexistent --solver tcp://127.0.0.1:1 2>&1)
    if grep -q "/nonexistent" <<<"$err"; then pass "rackfit-watch accepts deploy/watch.yaml"; else
        fail "rackfit-watch accepts deploy/watch.yaml: $err"
    fi
else
    fail "rackfit-watch is not built"
fi
for prog in rackfitd rackfit-watch rackfit-cli; do
    if grep -q "$prog" "$src_dir/deploy/Containerfile"; then pass "the Containerfile builds $prog"; else
        fail "the Containerfile builds $prog"
    fi
done
echo "$passed passed, $failed failed"
((failed == 0))
