/* tests/unit/test_watch_plan_json.c: a decided plan written once as the
 * contract's JSON (watcher/plan_json.c, rf__plan_write). The spec is built by
 * hand here (no gang assembly) so that every field the writer reads is known;
 * the JSON must be read by librackfit's own reader (rf_problem_from_json) with
 * the counts, min_count, bound ranks, topology, slice, synthetic affinity
 * labels, node usage, running gangs and options as planned. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../support/leak.h"
#include "arena.h"
#include "json.h"
#include "plan.h"
#include "rackfit/problem.h"

static const char *const s_levels[] = {"block", "rack", "kubernetes.io/hostname"};

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

static rf__knode_t *s_node(rf__arena_t *a, const char *name, const char *rack, bool ready)
{
    char buf[1024];
    snprintf(buf, sizeof buf,
             "{\"metadata\":{\"name\":\"%s\",\"labels\":{\"block\":\"b1\",\"rack\":\"%s\",\"kubernetes.io/"
             "hostname\":\"%s\",\"rackfit.io/affinity-9\":\"stale\"}},\"spec\":{\"taints\":[{\"key\":\"gpu\","
             "\"effect\":\"NoSchedule\"}]},\"status\":{\"allocatable\":{\"cpu\":\"8\",\"pods\":\"110\","
             "\"nvidia.com/gpu\":\"8\"},\"conditions\":[{\"type\":\"Ready\",\"status\":\"%s\"}]}}",
             name, rack, name, ready ? "True" : "False");
    rf__knode_t *n = NULL;
    rf_error_t err;
    cr_assert_eq(rf__knode_from_doc(s_doc(a, buf), &n, &err), RF_OK, "%s", err.message);
    return n;
}

static rf__kpod_t *s_pod(rf__arena_t *a, const char *spec_extra)
{
    char buf[2048];
    snprintf(buf, sizeof buf,
             "{\"metadata\":{\"namespace\":\"ns\",\"name\":\"p\"},\"spec\":{%s\"tolerations\":[{\"key\":\"gpu\","
             "\"operator\":\"Exists\",\"effect\":\"NoSchedule\"}],\"containers\":[{\"name\":\"c\",\"resources\":{"
             "\"requests\":{\"cpu\":\"500m\",\"nvidia.com/gpu\":\"2\"}}}]}}",
             spec_extra);
    rf__kpod_t *p = NULL;
    rf_error_t err;
    cr_assert_eq(rf__kpod_from_doc(s_doc(a, buf), &p, &err), RF_OK, "%s", err.message);
    return p;
}

static int64_t s_req(const rf_problem_t *p, const int64_t *req, const char *name)
{
    for (int32_t r = 0; r < p->n_resources; r++)
        if (strcmp(p->resources[r], name) == 0)
            return req[r];
    return -1;
}

static bool s_has_label(const rf_node_t *n, const char *key, const char *value)
{
    for (int32_t i = 0; i < n->n_labels; i++)
        if (strcmp(n->labels[i].key, key) == 0)
            return value == NULL || strcmp(n->labels[i].value, value) == 0;
    return false;
}

Test(watch_plan_json, plan_is_contract_json)
{
    rf__arena_t *a = rf__arena_new(0);
    rf__knode_t *nodes[3] = {s_node(a, "h1", "r1", true), s_node(a, "h2", "r1", true), s_node(a, "h3", "r2", false)};
    rf__kpod_t *pod = s_pod(a, "\"affinity\":{\"nodeAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":{"
                               "\"nodeSelectorTerms\":[{\"matchExpressions\":[{\"key\":\"rack\",\"operator\":\"In\","
                               "\"values\":[\"r1\"]}]}]}}},");
    rf__kpod_t *rpod = s_pod(a, "");
    char *used_names[] = {"cpu", "nvidia.com/gpu"};
    int64_t used_vals[] = {2000, 8}; /* the 2 bound workers and the 2 running pods */
    rf__res_t used[3] = {{used_names, used_vals, 2}, {NULL, NULL, 0}, {NULL, NULL, 0}};
    int64_t used_pods[3] = {4, 0, 0};

    rf__gang_opts_t opts = {.scheduler_name = "rackfit",
                            .levels = s_levels,
                            .n_levels = 3,
                            .mode = "greedy",
                            .time_limit_ms = 250,
                            .preemption = true};
    rf__pbound_t bound[2] = {{"h1", 0}, {"h1", 1}};
    rf__gset_t gsets[2] = {{.name = "worker", .count = 4}, {.name = "launcher", .count = 1}};
    rf__pset_spec_t psets[2] = {{.pod = pod,
                                 .required = "rack",
                                 .preferred = "kubernetes.io/hostname",
                                 .min_count = 2,
                                 .bound = bound,
                                 .n_bound = 2},
                                {.pod = rpod, .slice_level = "rack", .slice = 1, .min_count = 1}};
    /* gang 0 waits (not sent), gang 1 is sent */
    rf__pgang_t gangs[2] = {{.name = "ns/waiting", .n_sets = 0}, {.name = "ns/train", .sets = gsets, .n_sets = 2}};
    rf__pgang_spec_t gspecs[2] = {{0}, {.priority = 5, .bandwidth = 0.5, .sets = psets}};
    int32_t sent[1] = {1};
    rf__pbound_t at[1] = {{"h1", 2}};
    rf__prun_set_t rsets[1] = {{.name = "set-0", .pod = rpod, .at = at, .n_at = 1}};
    rf__prun_spec_t rspecs[1] = {{.bandwidth = 1.0, .preemptible = false, .sets = rsets, .n_sets = 1}};
    rf__prun_t running[1] = {{.name = "ns/old", .priority = 1}};
    rf__plan_spec_t spec = {.opts = &opts,
                            .nodes = nodes,
                            .n_nodes = 3,
                            .used = used,
                            .used_pods = used_pods,
                            .gangs = gspecs,
                            .running = rspecs};
    rf__plan_t plan = {.gangs = gangs, .n_gangs = 2, .sent = sent, .n_sent = 1, .running = running, .n_running = 1};
    rf_error_t err;
    rf_error_clear(&err);
    cr_assert_eq(rf__plan_write(&spec, &plan, &err), RF_OK, "%s", err.message);
    cr_assert_not_null(plan.json);
    cr_assert_eq(strlen(plan.json), plan.len);

    rf_problem_t *p = NULL;
    cr_assert_eq(rf_problem_from_json(plan.json, plan.len, NULL, &p, &err), RF_OK, "%s: %s\n%s", err.path, err.message,
                 plan.json);
    cr_assert_eq(p->n_levels, 3);
    cr_assert_str_eq(p->levels[1], "rack");
    cr_assert_eq(p->n_nodes, 3);
    int32_t h1 = rf_problem_node(p, "h1"), h2 = rf_problem_node(p, "h2"), h3 = rf_problem_node(p, "h3");
    cr_assert(h1 >= 0 && h2 >= 0 && h3 >= 0);
    /* the synthetic affinity label: numbered from 0 by need, stale ones dropped, on matching nodes only */
    cr_assert(s_has_label(&p->nodes[h1], RF_AFFINITY_LABEL_PREFIX "0", "true"));
    cr_assert(s_has_label(&p->nodes[h2], RF_AFFINITY_LABEL_PREFIX "0", "true"));
    cr_assert(!s_has_label(&p->nodes[h3], RF_AFFINITY_LABEL_PREFIX "0", NULL));
    cr_assert(!s_has_label(&p->nodes[h1], RF_AFFINITY_LABEL_PREFIX "9", NULL));
    cr_assert_eq(s_req(p, p->nodes[h1].allocatable, "cpu"), 8000);
    cr_assert_eq(s_req(p, p->nodes[h1].allocatable, "nvidia.com/gpu"), 8);
    cr_assert_eq(s_req(p, p->nodes[h1].allocatable, "pods"), 110);
    cr_assert_eq(s_req(p, p->nodes[h1].used, "cpu"), 2000);
    cr_assert_eq(s_req(p, p->nodes[h1].used, "nvidia.com/gpu"), 8);
    cr_assert_eq(s_req(p, p->nodes[h1].used, "pods"), 4);
    cr_assert_eq(s_req(p, p->nodes[h2].used, "cpu"), 0);
    cr_assert(!p->nodes[h1].unschedulable);
    cr_assert(p->nodes[h3].unschedulable, "a NotReady node is sent unschedulable");
    cr_assert_eq(p->nodes[h1].n_taints, 1);

    /* only the sent gang */
    cr_assert_eq(p->n_gangs, 1);
    const rf_gang_t *g = &p->gangs[0];
    cr_assert_str_eq(g->name, "ns/train");
    cr_assert_eq(g->priority, 5);
    cr_assert_float_eq(g->bandwidth, 0.5, 1e-12);
    cr_assert_eq(g->n_pod_sets, 2);
    const rf_pod_set_t *w = &g->pod_sets[0], *l = &g->pod_sets[1];
    cr_assert_str_eq(w->name, "worker");
    cr_assert_eq(w->count, 4);
    cr_assert_eq(w->min_count, 2);
    cr_assert_eq(s_req(p, w->requests, "cpu"), 500);
    cr_assert_eq(s_req(p, w->requests, "nvidia.com/gpu"), 2);
    cr_assert_eq(w->n_tolerations, 1);
    cr_assert_eq(w->n_node_selector, 1);
    cr_assert_str_eq(w->node_selector[0].key, RF_AFFINITY_LABEL_PREFIX "0");
    cr_assert_eq(w->topology.required, 1);
    cr_assert_eq(w->topology.preferred, 2);
    cr_assert_eq(w->n_bound, 1);
    cr_assert_eq(w->bound[0].node, h1);
    cr_assert_eq(w->bound[0].count, 2);
    cr_assert_not_null(w->bound[0].ranks);
    cr_assert_eq(w->bound[0].ranks[0], 0);
    cr_assert_eq(w->bound[0].ranks[1], 1);
    cr_assert_str_eq(l->name, "launcher");
    cr_assert_eq(l->count, 1);
    cr_assert_eq(l->n_node_selector, 0, "a pod without affinity gets no synthetic label");
    cr_assert_eq(l->slice.size, 1);
    cr_assert_eq(l->slice.level, 1);
    cr_assert_eq(l->n_bound, 0);

    cr_assert_eq(p->n_running, 1);
    cr_assert_str_eq(p->running[0].name, "ns/old");
    cr_assert_eq(p->running[0].priority, 1);
    cr_assert(!p->running[0].preemptible);
    cr_assert_eq(p->running[0].n_pod_sets, 1);
    cr_assert_eq(p->running[0].pod_sets[0].n_placements, 1);
    cr_assert_eq(p->running[0].pod_sets[0].placements[0].node, h1);
    cr_assert_eq(p->running[0].pod_sets[0].placements[0].count, 2);

    cr_assert_eq(p->options.time_limit_ms, 250);
    cr_assert_eq(p->options.mode, RF_MODE_GREEDY);
    cr_assert_eq(p->options.preemption, RF_PREEMPT_LOWER_PRIORITY);

    rf_problem_destroy(&p);
    free(plan.json);
    rf__kpod_destroy(&pod);
    rf__kpod_destroy(&rpod);
    for (int i = 0; i < 3; i++)
        rf__knode_destroy(&nodes[i]);
    rf__arena_destroy(&a);
    rf_test_no_leaks();
}

Test(watch_plan_json, defaults_and_no_preemption)
{
    rf__arena_t *a = rf__arena_new(0);
    rf__knode_t *nodes[1] = {s_node(a, "h1", "r1", true)};
    rf__kpod_t *pod = s_pod(a, "");
    rf__res_t used[1] = {{NULL, NULL, 0}};
    int64_t used_pods[1] = {0};
    const double costs[3] = {4, 2, 1};
    rf__gang_opts_t opts = {
        .levels = s_levels, .n_levels = 3, .level_costs = costs, .value_resource = "nvidia.com/gpu"};
    rf__gset_t gsets[1] = {{.name = "set-0", .count = 3}};
    rf__pset_spec_t psets[1] = {{.pod = pod, .min_count = 3}};
    rf__pgang_t gangs[1] = {{.name = "ns/pod:solo", .sets = gsets, .n_sets = 1}};
    rf__pgang_spec_t gspecs[1] = {{.priority = 0, .bandwidth = 0, .sets = psets}};
    int32_t sent[1] = {0};
    rf__plan_spec_t spec = {
        .opts = &opts, .nodes = nodes, .n_nodes = 1, .used = used, .used_pods = used_pods, .gangs = gspecs};
    rf__plan_t plan = {.gangs = gangs, .n_gangs = 1, .sent = sent, .n_sent = 1};
    rf_error_t err;
    rf_error_clear(&err);
    cr_assert_eq(rf__plan_write(&spec, &plan, &err), RF_OK, "%s", err.message);
    cr_assert_null(strstr(plan.json, "\"running\""), "no running gangs, no `running`: %s", plan.json);
    rf_problem_t *p = NULL;
    cr_assert_eq(rf_problem_from_json(plan.json, plan.len, NULL, &p, &err), RF_OK, "%s: %s\n%s", err.path, err.message,
                 plan.json);
    cr_assert_eq(p->options.preemption, RF_PREEMPT_NEVER);
    cr_assert_eq(p->options.mode, RF_MODE_AUTO);
    cr_assert_eq(p->options.time_limit_ms, 1000, "time_limit_ms 0 means the default 1000");
    cr_assert_str_eq(p->options.value_resource_name, "nvidia.com/gpu");
    cr_assert_float_eq(p->level_costs[0], 4.0, 1e-12);
    cr_assert_float_eq(p->level_costs[2], 1.0, 1e-12);
    cr_assert_eq(p->n_gangs, 1);
    cr_assert_eq(p->gangs[0].pod_sets[0].count, 3);
    cr_assert_eq(p->gangs[0].pod_sets[0].min_count, 3);
    cr_assert_eq(p->gangs[0].pod_sets[0].topology.required, -1);
    cr_assert_eq(p->gangs[0].pod_sets[0].slice.size, 0);
    cr_assert_eq(p->n_running, 0);
    rf_problem_destroy(&p);
    free(plan.json);
    rf__kpod_destroy(&pod);
    rf__knode_destroy(&nodes[0]);
    rf__arena_destroy(&a);
    rf_test_no_leaks();
}
