/* tests/unit/test_watch_gangs.c: gang assembly (watcher/gangs.c) and the
 * typed objects it reads (watcher/kobj.c): usage from bound, terminating and
 * nominated pods; NotReady and cordoned nodes; PodGroup and Kueue groups;
 * waiting, gated, refused gangs; pod sets, ranks, min_count, Kueue topology
 * annotations; required node affinity as a synthetic label. Every problem
 * built is read back by librackfit's reader. */
#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "../support/leak.h"
#include "arena.h"
#include "gangs.h"
#include "json.h"
#include "rackfit/problem.h"

static const char *const s_levels[] = {"block", "rack", "kubernetes.io/hostname"};

static rf_doc_t *s_doc(rf__arena_t *arena, const char *text)
{
    rf_limits_t lim;
    rf_limits_default(&lim);
    lim.max_string = 1 << 20;
    rf_doc_t *doc = NULL;
    rf_error_t err;
    rf_error_clear(&err);
    cr_assert_eq(rf__json_parse(text, strlen(text), &lim, arena, &doc, &err), RF_OK, "%s\n%s", err.message, text);
    return doc;
}

static void s_node(rf__cache_t *c, const char *name, const char *block, const char *rack, const char *extra)
{
    char buf[2048];
    snprintf(buf, sizeof buf,
             "{\"metadata\":{\"name\":\"%s\",\"labels\":{\"block\":\"%s\",\"rack\":\"%s\",\"kubernetes.io/"
             "hostname\":\"%s\"}},\"spec\":{%s},\"status\":{\"allocatable\":{\"cpu\":\"8\",\"memory\":\"32Gi\","
             "\"pods\":\"110\",\"nvidia.com/gpu\":\"8\"},\"conditions\":[{\"type\":\"Ready\",\"status\":\"%s\"}]}}",
             name, block, rack, name, extra ? extra : "", extra && strstr(extra, "\"notready\"") ? "False" : "True");
    rf__arena_t *a = rf__arena_new(0);
    rf__knode_t *n = NULL;
    rf_error_t err;
    cr_assert_eq(rf__knode_from_doc(s_doc(a, buf), &n, &err), RF_OK, "%s", err.message);
    cr_assert_eq(rf__cache_put(c, RF_KIND_NODE, n), RF_OK);
    rf__arena_destroy(&a);
}

/* A pod: labels and annotations as JSON map bodies, spec extras, node or "". */
static void s_pod(rf__cache_t *c, const char *name, const char *labels, const char *annotations, const char *gpu,
                  const char *node, const char *extra)
{
    char buf[4096];
    snprintf(buf, sizeof buf,
             "{\"metadata\":{\"namespace\":\"ns\",\"name\":\"%s\",\"uid\":\"uid-%s\",\"labels\":{%s},"
             "\"annotations\":{%s}},\"spec\":{\"schedulerName\":\"rackfit\",%s%s%s\"containers\":[{\"name\":\"c\","
             "\"resources\":{\"requests\":{\"cpu\":\"1\",\"nvidia.com/gpu\":\"%s\"}}}]%s},\"status\":{\"phase\":"
             "\"%s\"}}",
             name, name, labels ? labels : "", annotations ? annotations : "", node && *node ? "\"nodeName\":\"" : "",
             node && *node ? node : "", node && *node ? "\"," : "", gpu, extra ? extra : "",
             node && *node ? "Running" : "Pending");
    rf__arena_t *a = rf__arena_new(0);
    rf__kpod_t *p = NULL;
    rf_error_t err;
    cr_assert_eq(rf__kpod_from_doc(s_doc(a, buf), &p, &err), RF_OK, "%s", err.message);
    cr_assert_eq(rf__cache_put(c, RF_KIND_POD, p), RF_OK);
    rf__arena_destroy(&a);
}

static void s_podgroup(rf__cache_t *c, const char *name, int min)
{
    char buf[512];
    snprintf(buf, sizeof buf, "{\"metadata\":{\"namespace\":\"ns\",\"name\":\"%s\"},\"spec\":{\"minMember\":%d}}", name,
             min);
    rf__arena_t *a = rf__arena_new(0);
    rf__kpodgroup_t *g = NULL;
    rf_error_t err;
    cr_assert_eq(rf__kpodgroup_from_doc(s_doc(a, buf), &g, &err), RF_OK);
    cr_assert_eq(rf__cache_put(c, RF_KIND_PODGROUP, g), RF_OK);
    rf__arena_destroy(&a);
}

static rf__gang_opts_t s_opts(void)
{
    return (rf__gang_opts_t){
        .scheduler_name = "rackfit", .levels = s_levels, .n_levels = 3, .mode = "greedy", .time_limit_ms = 500};
}

static const rf__pgang_t *s_gang(const rf__plan_t *plan, const char *name)
{
    for (int32_t i = 0; i < plan->n_gangs; i++)
        if (strcmp(plan->gangs[i].name, name) == 0)
            return &plan->gangs[i];
    cr_assert_fail("no gang %s", name);
    return NULL;
}

static rf_problem_t *s_problem(const rf__plan_t *plan)
{
    rf_problem_t *prob = NULL;
    rf_error_t err;
    cr_assert_not_null(plan->json);
    cr_assert_eq(rf_problem_from_json(plan->json, plan->len, NULL, &prob, &err), RF_OK, "%s: %s", err.path,
                 err.message);
    return prob;
}

static const rf_gang_t *s_pgang(const rf_problem_t *p, const char *name)
{
    for (int32_t i = 0; i < p->n_gangs; i++)
        if (strcmp(p->gangs[i].name, name) == 0)
            return &p->gangs[i];
    cr_assert_fail("no problem gang %s", name);
    return NULL;
}

Test(watch_gangs, usage_and_nodes)
{
    rf__cache_t *c = rf__cache_new(7);
    s_node(c, "h1", "b1", "r1", NULL);
    s_node(c, "h2", "b1", "r1", "\"unschedulable\":true");
    s_node(c, "h3", "b1", "r2", "\"notready\":1,\"taints\":[{\"key\":\"gpu\",\"effect\":\"NoSchedule\"}]");
    s_pod(c, "run", NULL, NULL, "2", "h1", NULL);
    s_pod(c, "done", NULL, NULL, "4", "h1", NULL);
    /* a finished pod frees its node */
    rf__kpod_t *done = rf__cache_get(c, RF_KIND_POD, "ns/done");
    free(done->phase);
    done->phase = strdup("Succeeded");
    s_pod(c, "term", NULL, NULL, "1", "h1", NULL);
    ((rf__kpod_t *)rf__cache_get(c, RF_KIND_POD, "ns/term"))->deleting = true;
    /* another scheduler's preemptor, nominated to h1 */
    s_pod(c, "nom", NULL, NULL, "3", "", NULL);
    rf__kpod_t *nom = rf__cache_get(c, RF_KIND_POD, "ns/nom");
    free(nom->scheduler_name);
    nom->scheduler_name = strdup("default-scheduler");
    nom->nominated = strdup("h1");
    s_pod(c, "solo", NULL, NULL, "1", "", NULL);
    rf__gang_opts_t o = s_opts();
    rf__plan_t plan;
    rf_error_t err;
    cr_assert_eq(rf__plan_build(c, &o, NULL, NULL, &plan, &err), RF_OK, "%s", err.message);
    rf_problem_t *p = s_problem(&plan);
    int32_t h1 = rf_problem_node(p, "h1"), h2 = rf_problem_node(p, "h2"), h3 = rf_problem_node(p, "h3");
    int32_t gpu = -1;
    for (int32_t r = 0; r < p->n_resources; r++)
        if (strcmp(p->resources[r], "nvidia.com/gpu") == 0)
            gpu = r;
    cr_assert_eq(p->nodes[h1].used[gpu], 2 + 1 + 3, "running + terminating + nominated");
    cr_assert_eq(p->nodes[h1].used[RF_RES_PODS], 3);
    cr_assert_eq(p->nodes[h1].allocatable[RF_RES_PODS], 110);
    cr_assert(!p->nodes[h1].unschedulable);
    cr_assert(p->nodes[h2].unschedulable, "cordoned");
    cr_assert(p->nodes[h3].unschedulable, "NotReady");
    cr_assert_eq(p->nodes[h3].n_taints, 1);
    cr_assert_eq(p->n_gangs, 1);
    cr_assert_str_eq(p->gangs[0].name, "ns/pod:solo");
    cr_assert_eq(plan.gangs[plan.sent[0]].sets[0].n_pending, 1);
    rf_problem_destroy(&p);
    rf__plan_fini(&plan);
    rf__cache_destroy(&c);
    rf_test_no_leaks();
}

Test(watch_gangs, podgroup_waiting_then_sent)
{
    rf__cache_t *c = rf__cache_new(7);
    s_node(c, "h1", "b1", "r1", NULL);
    const char *lab = "\"scheduling.x-k8s.io/pod-group\":\"train\"";
    char name[32], labels[256];
    for (int i = 0; i < 3; i++) {
        snprintf(name, sizeof name, "train-%d", i);
        snprintf(labels, sizeof labels, "%s,\"batch.kubernetes.io/job-completion-index\":\"%d\"", lab, 3 - i);
        s_pod(c, name, labels, NULL, "1", "", NULL);
    }
    rf__gang_opts_t o = s_opts();
    rf__plan_t plan;
    rf_error_t err;
    /* no PodGroup yet: waits */
    cr_assert_eq(rf__plan_build(c, &o, NULL, NULL, &plan, &err), RF_OK);
    cr_assert_eq(s_gang(&plan, "ns/train")->state, RF_GANG_WAITING);
    cr_assert_null(plan.json);
    rf__plan_fini(&plan);
    /* minMember 4, 3 pods: waits */
    s_podgroup(c, "train", 4);
    cr_assert_eq(rf__plan_build(c, &o, NULL, NULL, &plan, &err), RF_OK);
    cr_assert_eq(s_gang(&plan, "ns/train")->state, RF_GANG_WAITING);
    cr_assert(strstr(s_gang(&plan, "ns/train")->why, "3 of 4") != NULL);
    rf__plan_fini(&plan);
    /* the 4th pod is gated: still waits */
    snprintf(labels, sizeof labels, "%s,\"batch.kubernetes.io/job-completion-index\":\"0\"", lab);
    s_pod(c, "train-3", labels, NULL, "1", "", ",\"schedulingGates\":[{\"name\":\"kueue.x-k8s.io/admission\"}]");
    cr_assert_eq(rf__plan_build(c, &o, NULL, NULL, &plan, &err), RF_OK);
    cr_assert_eq(s_gang(&plan, "ns/train")->state, RF_GANG_WAITING);
    rf__plan_fini(&plan);
    /* the gate is lifted with a node selector added (as Kueue does): sent, selector honoured */
    s_pod(c, "train-3", labels, NULL, "1", "", ",\"nodeSelector\":{\"rack\":\"r1\"}");
    cr_assert_eq(rf__plan_build(c, &o, NULL, NULL, &plan, &err), RF_OK);
    const rf__pgang_t *g = s_gang(&plan, "ns/train");
    cr_assert_eq(g->state, RF_GANG_SENT);
    cr_assert_eq(g->n_sets, 2, "the selector makes train-3 its own pod set");
    rf_problem_t *p = s_problem(&plan);
    cr_assert_eq(p->n_gangs, 1);
    rf__plan_fini(&plan);
    rf_problem_destroy(&p);
    /* all four alike: one pod set, ranks by completion index */
    s_pod(c, "train-3", labels, NULL, "1", "", NULL);
    cr_assert_eq(rf__plan_build(c, &o, NULL, NULL, &plan, &err), RF_OK);
    g = s_gang(&plan, "ns/train");
    cr_assert_eq(g->n_sets, 1);
    cr_assert_eq(g->sets[0].n_pending, 4);
    cr_assert_str_eq(g->sets[0].pending[0].name, "train-3"); /* index 0 */
    cr_assert_str_eq(g->sets[0].pending[3].name, "train-0"); /* index 3 */
    cr_assert_eq(g->sets[0].pending[2].rank, 2);
    rf__plan_fini(&plan);
    rf__kpod_t *a = rf__cache_get(c, RF_KIND_POD, "ns/train-0"), *b = rf__cache_get(c, RF_KIND_POD, "ns/train-1");
    cr_assert_gt(rf__pod_rank_cmp(a, b), 0, "completion index 3 after 2");
    rf__cache_destroy(&c);
    rf_test_no_leaks();
}

Test(watch_gangs, kueue_group_topology_bound_min_count)
{
    rf__cache_t *c = rf__cache_new(7);
    s_node(c, "h1", "b1", "r1", NULL);
    s_node(c, "h2", "b1", "r2", NULL);
    const char *lab = "\"kueue.x-k8s.io/pod-group-name\":\"g\"";
    const char *ann = "\"kueue.x-k8s.io/pod-group-total-count\":\"6\","
                      "\"kueue.x-k8s.io/podset-required-topology\":\"block\","
                      "\"kueue.x-k8s.io/podset-preferred-topology\":\"rack\","
                      "\"kueue.x-k8s.io/podset-slice-required-topology\":\"rack\","
                      "\"kueue.x-k8s.io/podset-slice-size\":\"2\",\"rackfit.io/bandwidth\":\"2.5\"";
    s_pod(c, "w-0", lab, ann, "1", "h1", NULL); /* running member */
    s_pod(c, "w-1", lab, ann, "1", "h1", NULL);
    for (int i = 2; i < 6; i++) {
        char name[16];
        snprintf(name, sizeof name, "w-%d", i);
        s_pod(c, name, lab, ann, "1", "", ",\"priority\":7");
    }
    rf__gang_opts_t o = s_opts();
    rf__plan_t plan;
    rf_error_t err;
    cr_assert_eq(rf__plan_build(c, &o, NULL, NULL, &plan, &err), RF_OK, "%s", err.message);
    cr_assert_eq(s_gang(&plan, "ns/g")->state, RF_GANG_SENT, "%s", s_gang(&plan, "ns/g")->why);
    rf_problem_t *p = s_problem(&plan);
    const rf_gang_t *g = s_pgang(p, "ns/g");
    cr_assert_eq(g->priority, 7);
    cr_assert_float_eq(g->bandwidth, 2.5, 1e-9);
    cr_assert_eq(g->n_pod_sets, 1);
    const rf_pod_set_t *ps = &g->pod_sets[0];
    cr_assert_eq(ps->count, 6);
    cr_assert_eq(ps->min_count, 6);
    cr_assert_eq(ps->topology.required, 0);
    cr_assert_eq(ps->topology.preferred, 1);
    cr_assert_eq(ps->slice.size, 2);
    cr_assert_eq(ps->slice.level, 1);
    cr_assert_eq(ps->n_bound_pods, 2);
    cr_assert_eq(ps->n_bound, 1, "one entry per node");
    cr_assert_eq(ps->bound[0].count, 2);
    cr_assert_eq(ps->bound[0].ranks[0], 0);
    cr_assert_eq(ps->bound[0].ranks[1], 1);
    const rf__pgang_t *pg = s_gang(&plan, "ns/g");
    cr_assert_eq(pg->sets[0].n_pending, 4);
    cr_assert_eq(pg->sets[0].pending[0].rank, 2);
    rf_problem_destroy(&p);
    rf__plan_fini(&plan);
    rf__cache_destroy(&c);
    rf_test_no_leaks();
}

Test(watch_gangs, min_member_lowers_largest_set)
{
    rf__cache_t *c = rf__cache_new(7);
    s_node(c, "h1", "b1", "r1", NULL);
    s_podgroup(c, "e", 5);
    const char *lab = "\"scheduling.x-k8s.io/pod-group\":\"e\"";
    s_pod(c, "launcher", "\"scheduling.x-k8s.io/pod-group\":\"e\",\"rackfit.io/pod-set\":\"launcher\"", NULL, "0", "",
          NULL);
    for (int i = 0; i < 7; i++) {
        char name[16];
        snprintf(name, sizeof name, "w-%d", i);
        s_pod(c, name, lab, NULL, "1", "", NULL);
    }
    rf__gang_opts_t o = s_opts();
    rf__plan_t plan;
    rf_error_t err;
    cr_assert_eq(rf__plan_build(c, &o, NULL, NULL, &plan, &err), RF_OK, "%s", err.message);
    rf_problem_t *p = s_problem(&plan);
    const rf_gang_t *g = s_pgang(p, "ns/e");
    cr_assert_eq(g->n_pod_sets, 2);
    for (int32_t i = 0; i < 2; i++) {
        const rf_pod_set_t *ps = &g->pod_sets[i];
        if (strcmp(ps->name, "launcher") == 0) {
            cr_assert_eq(ps->count, 1);
            cr_assert_eq(ps->min_count, 1);
        } else {
            cr_assert_eq(ps->count, 7);
            cr_assert_eq(ps->min_count, 4, "8 pods, minMember 5: the workers may lose 3");
        }
    }
    rf_problem_destroy(&p);
    rf__plan_fini(&plan);
    rf__cache_destroy(&c);
    rf_test_no_leaks();
}

static bool s_skip_held(void *ctx, const char *gang)
{
    (void)ctx;
    return strcmp(gang, "ns/pod:held") == 0;
}

Test(watch_gangs, refused_and_held)
{
    rf__cache_t *c = rf__cache_new(7);
    s_node(c, "h1", "b1", "r1", NULL);
    s_pod(c, "aff", NULL, NULL, "1", "",
          ",\"affinity\":{\"podAntiAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":[{"
          "\"topologyKey\":\"kubernetes.io/hostname\"}]}}");
    s_pod(c, "pvc", NULL, NULL, "1", "",
          ",\"volumes\":[{\"name\":\"d\",\"persistentVolumeClaim\":{\"claimName\":\"x\"}}]");
    s_pod(c, "spread", NULL, NULL, "1", "",
          ",\"topologySpreadConstraints\":[{\"maxSkew\":1,\"topologyKey\":\"rack\",\"whenUnsatisfiable\":"
          "\"DoNotSchedule\"}]");
    s_pod(c, "lvl", NULL, "\"kueue.x-k8s.io/podset-required-topology\":\"zone\"", "1", "", NULL);
    s_pod(c, "ok", NULL, NULL, "1", "", NULL);
    s_pod(c, "held", NULL, NULL, "1", "", NULL);
    rf__gang_opts_t o = s_opts();
    rf__plan_t plan;
    rf_error_t err;
    cr_assert_eq(rf__plan_build(c, &o, s_skip_held, NULL, &plan, &err), RF_OK);
    cr_assert_eq(s_gang(&plan, "ns/pod:aff")->state, RF_GANG_REFUSED);
    cr_assert(strstr(s_gang(&plan, "ns/pod:aff")->why, "anti-affinity") != NULL);
    cr_assert_eq(s_gang(&plan, "ns/pod:pvc")->state, RF_GANG_REFUSED);
    cr_assert_eq(s_gang(&plan, "ns/pod:spread")->state, RF_GANG_REFUSED);
    cr_assert_eq(s_gang(&plan, "ns/pod:lvl")->state, RF_GANG_REFUSED);
    cr_assert_eq(s_gang(&plan, "ns/pod:held")->state, RF_GANG_HELD);
    cr_assert_eq(s_gang(&plan, "ns/pod:ok")->state, RF_GANG_SENT);
    cr_assert_eq(plan.n_sent, 1);
    rf__plan_fini(&plan);
    rf__cache_destroy(&c);
    rf_test_no_leaks();
}

Test(watch_gangs, node_affinity_label)
{
    rf__cache_t *c = rf__cache_new(7);
    s_node(c, "h1", "b1", "r1", NULL);
    s_node(c, "h2", "b1", "r2", NULL);
    s_node(c, "h3", "b2", "r1", NULL);
    s_pod(c, "a", NULL, NULL, "1", "",
          ",\"affinity\":{\"nodeAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":{"
          "\"nodeSelectorTerms\":[{\"matchExpressions\":[{\"key\":\"rack\",\"operator\":\"In\",\"values\":[\"r1\"]},"
          "{\"key\":\"block\",\"operator\":\"NotIn\",\"values\":[\"b2\"]}]},{\"matchFields\":[{\"key\":"
          "\"metadata.name\",\"operator\":\"In\",\"values\":[\"h2\"]}]}]}}}");
    rf__gang_opts_t o = s_opts();
    rf__plan_t plan;
    rf_error_t err;
    cr_assert_eq(rf__plan_build(c, &o, NULL, NULL, &plan, &err), RF_OK, "%s", err.message);
    rf_problem_t *p = s_problem(&plan);
    const rf_pod_set_t *ps = &s_pgang(p, "ns/pod:a")->pod_sets[0];
    cr_assert_eq(ps->n_node_selector, 1);
    const char *key = ps->node_selector[0].key;
    cr_assert(strncmp(key, RF_AFFINITY_LABEL_PREFIX, strlen(RF_AFFINITY_LABEL_PREFIX)) == 0);
    bool has[3] = {false, false, false};
    for (int i = 0; i < 3; i++) {
        const rf_node_t *n = &p->nodes[rf_problem_node(p, i == 0 ? "h1" : i == 1 ? "h2" : "h3")];
        for (int32_t l = 0; l < n->n_labels; l++)
            has[i] |= strcmp(n->labels[l].key, key) == 0;
    }
    cr_assert(has[0] && has[1] && !has[2], "h1 by expressions, h2 by name, not h3");
    rf_problem_destroy(&p);
    rf__plan_fini(&plan);
    rf__cache_destroy(&c);
    rf_test_no_leaks();
}

Test(watch_gangs, kueue_group_without_total_is_told)
{
    /* refused, and its pending pods are listed, so the binder tells them why */
    rf__cache_t *c = rf__cache_new(7);
    s_node(c, "h1", "b1", "r1", NULL);
    const char *lab = "\"kueue.x-k8s.io/pod-group-name\":\"nt\"";
    s_pod(c, "nt-0", lab, NULL, "1", "", NULL);
    s_pod(c, "nt-1", lab, NULL, "1", "", NULL);
    rf__gang_opts_t o = s_opts();
    rf__plan_t plan;
    rf_error_t err;
    cr_assert_eq(rf__plan_build(c, &o, NULL, NULL, &plan, &err), RF_OK);
    cr_assert_eq(plan.n_gangs, 1);
    const rf__pgang_t *g = &plan.gangs[0];
    cr_assert_eq(g->state, RF_GANG_REFUSED);
    cr_assert(strstr(g->why, "pod-group-total-count") != NULL, "%s", g->why);
    cr_assert_eq(g->n_sets, 1);
    cr_assert_eq(g->sets[0].n_pending, 2);
    cr_assert_eq(plan.n_sent, 0);
    rf__plan_fini(&plan);
    rf__cache_destroy(&c);
    rf_test_no_leaks();
}

Test(watch_gangs, nonmembers_make_no_pod_set)
{
    /* a gated pod and a pod being deleted, each with a spec of its own: no pod set of 0 */
    rf__cache_t *c = rf__cache_new(7);
    s_node(c, "h1", "b1", "r1", NULL);
    const char *lab = "\"scheduling.x-k8s.io/pod-group\":\"nm\"";
    s_podgroup(c, "nm", 2);
    s_pod(c, "nm-0", lab, NULL, "1", "", NULL);
    s_pod(c, "nm-1", lab, NULL, "1", "", NULL);
    s_pod(c, "nm-2", lab, NULL, "2", "", ",\"schedulingGates\":[{\"name\":\"x\"}]");
    rf__arena_t *a = rf__arena_new(0);
    rf__kpod_t *p = NULL;
    rf_error_t err;
    const char *del = "{\"metadata\":{\"namespace\":\"ns\",\"name\":\"nm-3\",\"uid\":\"uid-nm-3\",\"labels\":{"
                      "\"scheduling.x-k8s.io/pod-group\":\"nm\"},\"deletionTimestamp\":\"2026-01-01T00:00:00Z\"},"
                      "\"spec\":{\"schedulerName\":\"rackfit\",\"containers\":[{\"name\":\"c\",\"resources\":{"
                      "\"requests\":{\"cpu\":\"3\"}}}]},\"status\":{\"phase\":\"Pending\"}}";
    cr_assert_eq(rf__kpod_from_doc(s_doc(a, del), &p, &err), RF_OK, "%s", err.message);
    cr_assert(p->deleting);
    cr_assert_eq(rf__cache_put(c, RF_KIND_POD, p), RF_OK);
    rf__arena_destroy(&a);
    rf__gang_opts_t o = s_opts();
    rf__plan_t plan;
    cr_assert_eq(rf__plan_build(c, &o, NULL, NULL, &plan, &err), RF_OK);
    const rf__pgang_t *g = s_gang(&plan, "ns/nm");
    cr_assert_eq(g->state, RF_GANG_SENT, "%s", g->why ? g->why : "");
    cr_assert_eq(g->n_sets, 1);
    cr_assert_eq(g->sets[0].count, 2);
    rf_problem_t *prob = s_problem(&plan);
    cr_assert_eq(s_pgang(prob, "ns/nm")->n_pod_sets, 1);
    rf_problem_destroy(&prob);
    rf__plan_fini(&plan);
    rf__cache_destroy(&c);
    rf_test_no_leaks();
}
