/* tests/unit/test_watch_kobj.c: the typed Kubernetes objects (watcher/kobj.c)
 * extracted from decoded JSON documents: nodes (labels sorted, allocatable in
 * base units, taints, cordon, Ready), pods (binding, phase, gates, priority,
 * tolerations, node selector, required node affinity and its matching, the
 * signature that groups pods into pod sets, unsupported specs), PodGroups
 * (minMember, annotations); malformed fields rejected with the field's path. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "../support/leak.h"
#include "arena.h"
#include "json.h"
#include "kobj.h"

static rf_doc_t *s_doc(rf__arena_t *arena, const char *text)
{
    rf_limits_t lim;
    rf_limits_default(&lim);
    rf_doc_t *doc = NULL;
    rf_error_t err;
    rf_error_clear(&err);
    cr_assert_eq(rf__json_parse(text, strlen(text), &lim, arena, &doc, &err), RF_OK, "%s\n%s", err.message, text);
    return doc;
}

static int64_t s_res(const rf__res_t *r, const char *name)
{
    for (int32_t i = 0; i < r->n; i++)
        if (strcmp(r->names[i], name) == 0)
            return r->vals[i];
    return -1;
}

static const char s_node_json[] =
    "{\"metadata\":{\"name\":\"n1\",\"uid\":\"u1\",\"labels\":{\"rack\":\"r1\",\"block\":\"b1\","
    "\"kubernetes.io/hostname\":\"n1\"}},\"spec\":{\"unschedulable\":true,\"taints\":[{\"key\":\"gpu\","
    "\"value\":\"yes\",\"effect\":\"NoSchedule\"}]},\"status\":{\"allocatable\":{\"cpu\":\"8\",\"memory\":\"1Gi\","
    "\"pods\":\"110\",\"nvidia.com/gpu\":\"8\"},\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]}}";

Test(watch_kobj, node_fields)
{
    rf__arena_t *a = rf__arena_new(0);
    rf__knode_t *n = NULL;
    rf_error_t err;
    rf_error_clear(&err);
    cr_assert_eq(rf__knode_from_doc(s_doc(a, s_node_json), &n, &err), RF_OK, "%s", err.message);
    cr_assert_str_eq(n->name, "n1");
    cr_assert_str_eq(n->uid, "u1");
    cr_assert_eq(n->labels.n, 3);
    /* sorted by key */
    cr_assert_str_eq(n->labels.v[0].key, "block");
    cr_assert_str_eq(n->labels.v[1].key, "kubernetes.io/hostname");
    cr_assert_str_eq(n->labels.v[2].key, "rack");
    cr_assert_str_eq(rf__kvs_get(&n->labels, "rack"), "r1");
    cr_assert_null(rf__kvs_get(&n->labels, "zone"));
    cr_assert_eq(s_res(&n->alloc, "memory"), 1073741824LL);
    cr_assert_eq(s_res(&n->alloc, "nvidia.com/gpu"), 8);
    cr_assert_eq(s_res(&n->alloc, "pods"), 110);
    cr_assert_eq(s_res(&n->alloc, "cpu"), 8000, "cpu is held in millicores");
    cr_assert_eq(n->n_taints, 1);
    cr_assert_str_eq(n->taints[0].key, "gpu");
    cr_assert_str_eq(n->taints[0].value, "yes");
    cr_assert_str_eq(n->taints[0].effect, "NoSchedule");
    cr_assert(n->unschedulable);
    cr_assert(n->ready);
    rf__knode_destroy(&n);
    cr_assert_null(n);
    rf__knode_destroy(&n); /* NULL-safe */
    rf__arena_destroy(&a);
    rf_test_no_leaks();
}

Test(watch_kobj, node_not_ready_and_bad_fields)
{
    rf__arena_t *a = rf__arena_new(0);
    rf__knode_t *n = NULL;
    rf_error_t err;
    rf_error_clear(&err);
    cr_assert_eq(rf__knode_from_doc(s_doc(a, "{\"metadata\":{\"name\":\"n2\"},\"status\":{\"conditions\":[{\"type\":"
                                             "\"Ready\",\"status\":\"Unknown\"}]}}"),
                                    &n, &err),
                 RF_OK, "%s", err.message);
    cr_assert(!n->ready);
    cr_assert(!n->unschedulable);
    cr_assert_eq(n->labels.n, 0);
    rf__knode_destroy(&n);

    cr_assert_eq(rf__knode_from_doc(s_doc(a, "{\"metadata\":{\"labels\":{}}}"), &n, &err), RF_ESCHEMA);
    cr_assert_null(n);
    cr_assert_str_eq(err.path, "metadata.name");

    rf_error_clear(&err);
    cr_assert_eq(rf__knode_from_doc(s_doc(a, "{\"metadata\":{\"name\":\"n\",\"labels\":{\"a\":3}}}"), &n, &err),
                 RF_ESCHEMA);
    cr_assert_str_eq(err.path, "metadata.labels");
    cr_assert(strstr(err.message, "\"a\"") && strstr(err.message, "string"), "%s", err.message);

    rf_error_clear(&err);
    cr_assert_eq(rf__knode_from_doc(s_doc(a, "{\"metadata\":{\"name\":\"n\"},\"spec\":{\"taints\":{}}}"), &n, &err),
                 RF_ESCHEMA);
    cr_assert_str_eq(err.path, "spec.taints");

    rf_error_clear(&err);
    cr_assert_eq(
        rf__knode_from_doc(s_doc(a, "{\"metadata\":{\"name\":\"n\"},\"status\":{\"allocatable\":{\"cpu\":\"lots\"}}}"),
                           &n, &err),
        RF_ESCHEMA);
    cr_assert(strstr(err.path, "status.allocatable"), "%s", err.path);
    cr_assert(strstr(err.message, "cpu"), "%s", err.message);
    cr_assert_null(n);
    rf__arena_destroy(&a);
    rf_test_no_leaks();
}

static rf__kpod_t *s_pod(rf__arena_t *a, const char *text)
{
    rf__kpod_t *p = NULL;
    rf_error_t err;
    rf_error_clear(&err);
    cr_assert_eq(rf__kpod_from_doc(s_doc(a, text), &p, &err), RF_OK, "%s: %s", err.path, err.message);
    return p;
}

#define POD(NAME, LABELS, SPEC, STATUS)                                                                                \
    "{\"metadata\":{\"namespace\":\"ns\",\"name\":\"" NAME "\",\"uid\":\"uid-" NAME "\",\"labels\":{" LABELS           \
    "}},\"spec\":{" SPEC "\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"1\","                 \
    "\"nvidia.com/gpu\":\"2\"}}}]},\"status\":{" STATUS "}}"

Test(watch_kobj, pod_fields)
{
    rf__arena_t *a = rf__arena_new(0);
    rf__kpod_t *p =
        s_pod(a, POD("p0", "\"rackfit.io/pod-set\":\"worker\"",
                     "\"schedulerName\":\"rackfit\",\"nodeName\":\"n1\",\"priority\":7,\"schedulingGates\":[{\"name\":"
                     "\"g\"}],\"nodeSelector\":{\"rack\":\"r1\"},\"tolerations\":[{\"key\":\"gpu\",\"operator\":"
                     "\"Exists\",\"effect\":\"NoSchedule\"}],",
                     "\"phase\":\"Running\",\"startTime\":\"2026-01-01T00:00:00Z\",\"nominatedNodeName\":\"n2\","
                     "\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"},{\"type\":\"PodScheduled\",\"status\":"
                     "\"False\",\"reason\":\"Unschedulable\",\"message\":\"no fit\"}]"));
    cr_assert_str_eq(p->ns, "ns");
    cr_assert_str_eq(p->name, "p0");
    cr_assert_str_eq(p->uid, "uid-p0");
    cr_assert_str_eq(p->node_name, "n1");
    cr_assert_str_eq(p->scheduler_name, "rackfit");
    cr_assert_str_eq(p->phase, "Running");
    cr_assert_str_eq(p->nominated, "n2");
    cr_assert_eq(p->priority, 7);
    cr_assert(p->gated);
    cr_assert(p->started);
    cr_assert(p->ready);
    cr_assert(!p->deleting);
    cr_assert_str_eq(p->sched_reason, "Unschedulable");
    cr_assert_str_eq(p->sched_message, "no fit");
    cr_assert_str_eq(rf__kvs_get(&p->node_selector, "rack"), "r1");
    cr_assert_eq(p->n_tols, 1);
    cr_assert_str_eq(p->tols[0].op, "Exists");
    cr_assert_eq(s_res(&p->requests, "nvidia.com/gpu"), 2);
    cr_assert_eq(s_res(&p->requests, "pods"), -1, "`pods` is not part of the requests");
    cr_assert_null(p->unsupported);
    cr_assert(strstr(p->sig, "role=worker;"), "%s", p->sig);
    cr_assert(strstr(p->sig, "s:rack=r1;"), "%s", p->sig);
    cr_assert(!rf__kpod_terminal(p));
    rf__kpod_destroy(&p);
    cr_assert_null(p);

    /* defaults: no scheduler, no node, no status */
    p = s_pod(a, POD("p1", "", "", ""));
    cr_assert_str_eq(p->scheduler_name, "default-scheduler");
    cr_assert_null(p->node_name);
    cr_assert_null(p->nominated);
    cr_assert_str_eq(p->phase, "");
    cr_assert_eq(p->priority, 0);
    cr_assert(!p->gated && !p->started && !p->ready);
    cr_assert_null(p->sched_reason);
    rf__kpod_destroy(&p);

    p = s_pod(a, POD("p2", "", "", "\"phase\":\"Succeeded\""));
    cr_assert(rf__kpod_terminal(p));
    rf__kpod_destroy(&p);
    p = s_pod(a, POD("p3", "", "", "\"phase\":\"Failed\""));
    cr_assert(rf__kpod_terminal(p));
    rf__kpod_destroy(&p);
    rf__arena_destroy(&a);
    rf_test_no_leaks();
}

Test(watch_kobj, pod_signature_groups_equal_specs)
{
    rf__arena_t *a = rf__arena_new(0);
    rf__kpod_t *w0 = s_pod(a, POD("w0", "\"rackfit.io/pod-set\":\"worker\"", "", ""));
    rf__kpod_t *w1 = s_pod(a, POD("w1", "\"rackfit.io/pod-set\":\"worker\",\"app\":\"x\"", "", ""));
    rf__kpod_t *l0 = s_pod(a, POD("l0", "\"rackfit.io/pod-set\":\"launcher\"", "", ""));
    rf__kpod_t *s0 =
        s_pod(a, POD("s0", "\"rackfit.io/pod-set\":\"worker\"", "\"nodeSelector\":{\"rack\":\"r1\"},", ""));
    cr_assert_str_eq(w0->sig, w1->sig, "labels other than roles do not split pod sets");
    cr_assert_str_neq(w0->sig, l0->sig, "different roles are different pod sets");
    cr_assert_str_neq(w0->sig, s0->sig, "a node selector is part of the spec");
    rf__kpod_destroy(&w0);
    rf__kpod_destroy(&w1);
    rf__kpod_destroy(&l0);
    rf__kpod_destroy(&s0);
    rf__arena_destroy(&a);
    rf_test_no_leaks();
}

Test(watch_kobj, pod_affinity_matches)
{
    rf__arena_t *a = rf__arena_new(0);
    rf__knode_t *n1 = NULL, *n2 = NULL;
    rf_error_t err;
    cr_assert_eq(rf__knode_from_doc(s_doc(a, s_node_json), &n1, &err), RF_OK);
    cr_assert_eq(
        rf__knode_from_doc(s_doc(a, "{\"metadata\":{\"name\":\"n2\",\"labels\":{\"rack\":\"r2\"}}}"), &n2, &err),
        RF_OK);
    rf__kpod_t *p =
        s_pod(a, POD("p", "",
                     "\"affinity\":{\"nodeAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":{"
                     "\"nodeSelectorTerms\":[{\"matchExpressions\":[{\"key\":\"rack\",\"operator\":\"In\",\"values\":["
                     "\"r1\",\"r3\"]}]}]}}},",
                     ""));
    cr_assert_eq(p->n_affinity, 1);
    cr_assert_eq(p->affinity[0].n_exprs, 1);
    cr_assert_str_eq(p->affinity[0].exprs[0].key, "rack");
    cr_assert_str_eq(p->affinity[0].exprs[0].op, "In");
    cr_assert_eq(p->affinity[0].exprs[0].n_values, 2);
    cr_assert(strstr(p->sig, "a:("), "%s", p->sig);
    cr_assert(rf__kpod_affinity_matches(p, n1));
    cr_assert(!rf__kpod_affinity_matches(p, n2));
    rf__kpod_destroy(&p);

    /* matchFields on metadata.name, ORed with a NotIn term */
    p = s_pod(a, POD("q", "",
                     "\"affinity\":{\"nodeAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":{"
                     "\"nodeSelectorTerms\":[{\"matchFields\":[{\"key\":\"metadata.name\",\"operator\":\"In\","
                     "\"values\":[\"n2\"]}]}]}}},",
                     ""));
    cr_assert(!rf__kpod_affinity_matches(p, n1));
    cr_assert(rf__kpod_affinity_matches(p, n2));
    rf__kpod_destroy(&p);

    /* a node selector alone */
    p = s_pod(a, POD("s", "", "\"nodeSelector\":{\"rack\":\"r2\"},", ""));
    cr_assert(!rf__kpod_affinity_matches(p, n1));
    cr_assert(rf__kpod_affinity_matches(p, n2));
    rf__kpod_destroy(&p);
    rf__knode_destroy(&n1);
    rf__knode_destroy(&n2);
    rf__arena_destroy(&a);
    rf_test_no_leaks();
}

Test(watch_kobj, pod_bad_fields)
{
    rf__arena_t *a = rf__arena_new(0);
    rf__kpod_t *p = NULL;
    rf_error_t err;
    rf_error_clear(&err);
    cr_assert_eq(rf__kpod_from_doc(s_doc(a, "{\"metadata\":{\"name\":\"x\"},\"spec\":{}}"), &p, &err), RF_ESCHEMA);
    cr_assert_str_eq(err.path, "metadata");
    cr_assert(strstr(err.message, "namespace"), "%s", err.message);
    cr_assert_null(p);

    rf_error_clear(&err);
    cr_assert_eq(rf__kpod_from_doc(s_doc(a, "{\"metadata\":{\"namespace\":\"ns\",\"name\":\"x\"}}"), &p, &err),
                 RF_ESCHEMA);
    cr_assert_str_eq(err.path, "spec");

    rf_error_clear(&err);
    cr_assert_eq(rf__kpod_from_doc(s_doc(a, "{\"metadata\":{\"namespace\":\"ns\",\"name\":\"x\"},\"spec\":{"
                                            "\"tolerations\":[\"oops\"]}}"),
                                   &p, &err),
                 RF_ESCHEMA);
    cr_assert_str_eq(err.path, "spec.tolerations");
    cr_assert(strstr(err.message, "[0]"), "%s", err.message);

    rf_error_clear(&err);
    cr_assert_eq(rf__kpod_from_doc(s_doc(a, "{\"metadata\":{\"namespace\":\"ns\",\"name\":\"x\"},\"spec\":{"
                                            "\"affinity\":{\"nodeAffinity\":{"
                                            "\"requiredDuringSchedulingIgnoredDuringExecution\":{"
                                            "\"nodeSelectorTerms\":{}}}}}}"),
                                   &p, &err),
                 RF_ESCHEMA);
    cr_assert_str_eq(err.path, "spec.affinity.nodeAffinity");
    cr_assert(strstr(err.message, "nodeSelectorTerms"), "%s", err.message);
    cr_assert_null(p);

    /* a request that cannot be read is not an error: the pod is kept, marked unsupported */
    p = s_pod(a, "{\"metadata\":{\"namespace\":\"ns\",\"name\":\"u\"},\"spec\":{\"containers\":[{\"name\":\"c\","
                 "\"resources\":{\"requests\":{\"cpu\":\"much\"}}}]}}");
    cr_assert_not_null(p->unsupported);
    cr_assert(strstr(p->unsupported, "cpu"), "%s", p->unsupported);
    rf__kpod_destroy(&p);

    p = s_pod(a, "{\"metadata\":{\"namespace\":\"ns\",\"name\":\"h\"},\"spec\":{\"containers\":[{\"name\":\"c\","
                 "\"ports\":[{\"containerPort\":80,\"hostPort\":8080}]}]}}");
    cr_assert_not_null(p->unsupported);
    cr_assert(strstr(p->unsupported, "host port"), "%s", p->unsupported);
    rf__kpod_destroy(&p);
    rf__arena_destroy(&a);
    rf_test_no_leaks();
}

Test(watch_kobj, podgroup)
{
    rf__arena_t *a = rf__arena_new(0);
    rf__kpodgroup_t *pg = NULL;
    rf_error_t err;
    rf_error_clear(&err);
    cr_assert_eq(rf__kpodgroup_from_doc(s_doc(a, "{\"metadata\":{\"namespace\":\"ns\",\"name\":\"g\","
                                                 "\"annotations\":{\"rackfit.io/requeue\":\"3\"}},\"spec\":{"
                                                 "\"minMember\":4}}"),
                                        &pg, &err),
                 RF_OK, "%s", err.message);
    cr_assert_str_eq(pg->ns, "ns");
    cr_assert_str_eq(pg->name, "g");
    cr_assert_eq(pg->min_member, 4);
    cr_assert_str_eq(rf__kvs_get(&pg->annotations, "rackfit.io/requeue"), "3");
    rf__kpodgroup_destroy(&pg);
    cr_assert_null(pg);

    cr_assert_eq(
        rf__kpodgroup_from_doc(
            s_doc(a, "{\"metadata\":{\"namespace\":\"ns\",\"name\":\"g\"},\"spec\":{\"minMember\":-2}}"), &pg, &err),
        RF_OK);
    cr_assert_eq(pg->min_member, 0, "a negative minMember counts as none");
    rf__kpodgroup_destroy(&pg);

    rf_error_clear(&err);
    cr_assert_eq(rf__kpodgroup_from_doc(s_doc(a, "{\"metadata\":{\"name\":\"g\"}}"), &pg, &err), RF_ESCHEMA);
    cr_assert_str_eq(err.path, "metadata");
    cr_assert_null(pg);

    rf_error_clear(&err);
    cr_assert_eq(rf__kpodgroup_from_doc(s_doc(a, "{\"metadata\":{\"namespace\":\"ns\",\"name\":\"g\","
                                                 "\"annotations\":[]}}"),
                                        &pg, &err),
                 RF_ESCHEMA);
    cr_assert_str_eq(err.path, "metadata.annotations");
    cr_assert_null(pg);
    rf__arena_destroy(&a);
    rf_test_no_leaks();
}
