#!/usr/bin/env bash
# tests/integration/watch_basic.sh: rackfit-watch end to end against the API
# server emulator and a real rackfitd:
# - gangs (PodGroup, Kueue pod group, alone) are bound whole, inside their
#   required domain, slices included, never over a node's capacity;
# - a gang whose PodGroup asks for more pods than exist waits, and is bound
#   when the last one comes;
# - a gang that cannot fit gets PodScheduled=False/Unschedulable with the
#   solver's reason, and a FailedScheduling Event;
# - a gang with what the contract cannot express (pod anti-affinity) is
#   refused with an Event; pods of other schedulers are left alone.
#   bash watch_basic.sh BIN_DIR SOURCE_DIR
source "$(dirname "$0")/watch_lib.bash"

emu_start
rfd_start
ctl nodes --blocks 2 --racks 2 --hosts 4 --gpu 8 >/dev/null # 16 nodes, 128 GPUs
watch_start a

ctl gang rack8 --pods 8 --gpu 4 --podgroup 8 --required example.com/rack >/dev/null
expect "a PodGroup gang of 8 is bound" ctl wait-bound default rack8 8 --timeout 20
ctl gang kq --pods 8 --gpu 2 --kueue --required example.com/block --slice-level example.com/rack \
    --slice-size 4 >/dev/null
expect "a Kueue pod group with slices is bound" ctl wait-bound default kq 8 --timeout 20
ctl gang solo --pods 1 --gpu 1 >/dev/null
expect "a pod alone is bound" ctl wait-bound default solo 1 --timeout 20

# waits for its last pod
ctl gang late --pods 3 --gpu 1 --podgroup 4 >/dev/null
sleep 1.5
expect_not "a gang short of its minMember is not bound" ctl wait-bound default late 1 --timeout 0
ctl gang late-x --pods 1 --gpu 1 --extra '{}' >/dev/null # another pod, alone, to trigger cycles
# the 4th member of `late`
"$py" -c '
import sys, json, http.client
from urllib.parse import urlparse
u = urlparse(sys.argv[1])
c = http.client.HTTPConnection(u.hostname, u.port)
pod = {"metadata": {"name": "late-3", "namespace": "default", "labels": {"scheduling.x-k8s.io/pod-group": "late",
       "batch.kubernetes.io/job-completion-index": "3"}},
       "spec": {"schedulerName": "rackfit", "containers": [{"name": "m", "resources": {"requests": {"nvidia.com/gpu": "1"},
       "limits": {"nvidia.com/gpu": "1"}}}]}}
c.request("POST", "/api/v1/namespaces/default/pods", json.dumps(pod), {"Authorization": "Bearer " + sys.argv[2]})
r = c.getresponse(); print(r.status); sys.exit(0 if r.status == 201 else 1)' "$api" "$token" >/dev/null
expect "the gang is bound once its last pod exists" ctl wait-bound default late 4 --timeout 20

# cannot fit: 40 pods of 8 GPUs on 16 nodes
ctl gang huge --pods 40 --gpu 8 --podgroup 40 >/dev/null
expect "an unschedulable gang gets a FailedScheduling event" ctl wait-event default "huge" --timeout 20
expect "... and PodScheduled=False/Unschedulable on its pods" "$py" -c '
import sys, json, http.client
from urllib.parse import urlparse
u = urlparse(sys.argv[1])
c = http.client.HTTPConnection(u.hostname, u.port)
c.request("GET", "/api/v1/namespaces/default/pods/huge-0", headers={"Authorization": "Bearer " + sys.argv[2]})
p = json.loads(c.getresponse().read())
conds = [x for x in p["status"].get("conditions", []) if x["type"] == "PodScheduled"]
print(conds)
sys.exit(0 if conds and conds[0]["status"] == "False" and conds[0]["reason"] == "Unschedulable" and conds[0]["message"] else 1)
' "$api" "$token"
expect_not "... and none of its pods is bound" ctl wait-bound default huge 1 --timeout 0

# refused: required pod anti-affinity
ctl gang anti --pods 2 --gpu 1 --podgroup 2 --extra '{"affinity": {"podAntiAffinity":
    {"requiredDuringSchedulingIgnoredDuringExecution": [{"topologyKey": "kubernetes.io/hostname",
    "labelSelector": {"matchLabels": {"a": "b"}}}]}}}' >/dev/null
expect "a gang with pod anti-affinity is refused with an event" ctl wait-event default "anti-affinity" --timeout 20
expect_not "... and not bound" ctl wait-bound default anti 1 --timeout 0

# another scheduler's pods are not ours
ctl gang other --pods 2 --gpu 1 --podgroup 2 --scheduler default-scheduler >/dev/null
sleep 1
expect_not "pods of another scheduler are left alone" ctl wait-bound default other 1 --timeout 0

# fill the cluster with single pods: never over capacity
for i in $(seq 1 12); do ctl gang fill$i --pods 1 --gpu 8 >/dev/null; done
sleep 3
expect "no node over capacity, no partial gang, required domains kept" ctl check
expect "the kubelet admitted the bound pods" ctl wait-phase default rack8 Running 8 --timeout 10
watch_stop a
finish
