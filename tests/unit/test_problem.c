/* tests/unit/test_problem.c: the problem model and its strict reader
 * (solver/problem.c, solver/problem_read.c).
 *
 * The example of PLACEMENT-MODEL.md section 1 must land field by field; every
 * class of broken problem must fail with the exact contract path and a
 * recognisable message; defaults must be filled; builders must get the same
 * validation as the readers. Every test ends with a leak check. */
#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../support/leak.h"
#include "../support/testutil.h"
#include "arena.h"
#include "doc.h"
#include "json.h"
#include "rackfit/problem.h"
#include "rackfit/quantity.h"

/* ------------------------------------------------------------ fixtures */

/* The example problem of PLACEMENT-MODEL.md section 1, verbatim. */
static const char *const s_example =
    "{\n"
    "  \"cluster\": {\n"
    "    \"levels\": [\"example.com/block\", \"example.com/rack\", \"kubernetes.io/hostname\"],\n"
    "    \"level_costs\": [100, 10, 1],\n"
    "    \"nodes\": [\n"
    "      { \"name\": \"h-0001\",\n"
    "        \"labels\": { \"example.com/block\": \"b1\", \"example.com/rack\": \"r07\",\n"
    "                    \"kubernetes.io/hostname\": \"h-0001\", \"nvidia.com/gpu.product\": \"H100\" },\n"
    "        \"allocatable\": { \"nvidia.com/gpu\": 8, \"cpu\": \"96\", \"memory\": \"1Ti\", \"pods\": 110 },\n"
    "        \"used\":        { \"nvidia.com/gpu\": 8, \"cpu\": \"42500m\", \"memory\": \"264Gi\", \"pods\": 4 },\n"
    "        \"taints\": [ { \"key\": \"nvidia.com/gpu\", \"value\": \"present\", \"effect\": \"NoSchedule\" } ],\n"
    "        \"unschedulable\": false }\n"
    "    ]\n"
    "  },\n"
    "  \"gangs\": [\n"
    "    { \"name\": \"team-a/llama-pretrain\",\n"
    "      \"priority\": 100,\n"
    "      \"bandwidth\": 1.0,\n"
    "      \"topology\": { \"required\": \"example.com/block\", \"preferred\": \"example.com/rack\" },\n"
    "      \"pod_sets\": [\n"
    "        { \"name\": \"workers\", \"count\": 16, \"min_count\": 16,\n"
    "          \"requests\": { \"nvidia.com/gpu\": 8, \"cpu\": \"32\", \"memory\": \"200Gi\" },\n"
    "          \"node_selector\": { \"nvidia.com/gpu.product\": \"H100\" },\n"
    "          \"tolerations\": [ { \"key\": \"nvidia.com/gpu\", \"operator\": \"Exists\", \"effect\": "
    "\"NoSchedule\" } ],\n"
    "          \"slice\": { \"size\": 4, \"required\": \"example.com/rack\" },\n"
    "          \"bound\": [ { \"node\": \"h-0001\", \"count\": 1 } ] }\n"
    "      ] }\n"
    "  ],\n"
    "  \"options\": { \"mode\": \"auto\", \"time_limit_ms\": 1000, \"threads\": 0,\n"
    "               \"admission\": \"value\", \"value_resource\": \"nvidia.com/gpu\" }\n"
    "}\n";

/* A small valid problem, written so tests can break one field at a time. */
#define LEVELS "\"levels\":[\"b\",\"r\",\"kubernetes.io/hostname\"]"
#define NODE(n, b, r)                                                                                                  \
    "{\"name\":\"" n "\",\"labels\":{\"b\":\"" b "\",\"r\":\"" r "\",\"kubernetes.io/hostname\":\"" n "\"},"           \
    "\"allocatable\":{\"nvidia.com/gpu\":8,\"cpu\":\"96\",\"memory\":\"1Ti\"}}"
#define NODES          "\"nodes\":[" NODE("n1", "b1", "r1") "," NODE("n2", "b1", "r2") "," NODE("n3", "b2", "r1") "]"
#define CLUSTER        "\"cluster\":{" LEVELS "," NODES "}"
#define PS(extra)      "{\"name\":\"w\",\"count\":4,\"requests\":{\"nvidia.com/gpu\":1}" extra "}"
#define GANG(extra)    "{\"name\":\"g\",\"pod_sets\":[" PS("") "]" extra "}"
#define GANG_PS(extra) "{\"name\":\"g\",\"pod_sets\":[" PS(extra) "]}"
#define PROBLEM(gangs) "{" CLUSTER ",\"gangs\":[" gangs "]}"

static rf_problem_t *s_read_ok(const char *json, const rf_limits_t *limits)
{
    rf_problem_t *p = NULL;
    rf_error_t err;
    rf_status st = rf_problem_from_json(json, strlen(json), limits, &p, &err);
    cr_assert_eq(st, RF_OK, "expected success, got %s at '%s': %s", rf_status_code(st), err.path, err.message);
    cr_assert_not_null(p);
    return p;
}

static void s_fails_lim(const char *json, const rf_limits_t *limits, rf_status code, const char *path,
                        const char *fragment)
{
    rf_problem_t *p = NULL;
    rf_error_t err;
    rf_status st = rf_problem_from_json(json, strlen(json), limits, &p, &err);
    cr_assert_eq(st, code, "expected %s, got %s at '%s': %s", rf_status_code(code), rf_status_code(st), err.path,
                 err.message);
    cr_assert_null(p);
    cr_assert_eq(err.code, code);
    cr_assert_str_eq(err.path, path, "path '%s' (message: %s), expected '%s'", err.path, err.message, path);
    cr_assert(strstr(err.message, fragment) != NULL, "message '%s' lacks '%s'", err.message, fragment);
}

static void s_fails(const char *json, const char *path, const char *fragment)
{
    s_fails_lim(json, NULL, RF_ESCHEMA, path, fragment);
}

/* ------------------------------------------------------ the example */

Test(problem, example_lands_field_by_field)
{
    rf_problem_t *p = s_read_ok(s_example, NULL);

    cr_assert_eq(p->n_levels, 3);
    cr_assert_str_eq(p->levels[0], "example.com/block");
    cr_assert_str_eq(p->levels[2], "kubernetes.io/hostname");
    cr_assert_eq(p->level_costs[0], 100.0);
    cr_assert_eq(p->level_costs[1], 10.0);
    cr_assert_eq(p->level_costs[2], 1.0);

    /* resources: pods first, then in order of first mention */
    cr_assert_str_eq(p->resources[RF_RES_PODS], "pods");
    int32_t gpu = rf_problem_resource(p, "nvidia.com/gpu");
    int32_t cpu = rf_problem_resource(p, "cpu");
    int32_t mem = rf_problem_resource(p, "memory");
    cr_assert_eq(p->n_resources, 4);
    cr_assert(gpu > 0 && cpu > 0 && mem > 0);

    cr_assert_eq(p->n_nodes, 1);
    const rf_node_t *n = &p->nodes[0];
    cr_assert_str_eq(n->name, "h-0001");
    cr_assert_eq(n->n_labels, 4);
    for (int32_t i = 1; i < n->n_labels; i++)
        cr_assert(strcmp(n->labels[i - 1].key, n->labels[i].key) < 0, "labels sorted by key");
    cr_assert_str_eq(n->labels[0].key, "example.com/block");
    cr_assert_str_eq(n->labels[0].value, "b1");
    cr_assert_eq(n->allocatable[gpu], 8);
    cr_assert_eq(n->allocatable[cpu], 96000);
    cr_assert_eq(n->allocatable[mem], INT64_C(1) << 40);
    cr_assert_eq(n->allocatable[RF_RES_PODS], 110);
    cr_assert_eq(n->used[gpu], 8);
    cr_assert_eq(n->used[cpu], 42500);
    cr_assert_eq(n->used[mem], INT64_C(264) << 30);
    cr_assert_eq(n->used[RF_RES_PODS], 4);
    cr_assert_eq(n->n_taints, 1);
    cr_assert_str_eq(n->taints[0].key, "nvidia.com/gpu");
    cr_assert_str_eq(n->taints[0].value, "present");
    cr_assert_eq(n->taints[0].effect, RF_EFFECT_NO_SCHEDULE);
    cr_assert_eq(n->unschedulable, false);

    cr_assert_eq(p->n_gangs, 1);
    const rf_gang_t *g = &p->gangs[0];
    cr_assert_str_eq(g->name, "team-a/llama-pretrain");
    cr_assert_eq(g->priority, 100);
    cr_assert_eq(g->bandwidth, 1.0);
    cr_assert_eq(g->topology.required, 0);
    cr_assert_eq(g->topology.preferred, 1);
    cr_assert_eq(g->n_pod_sets, 1);
    const rf_pod_set_t *ps = &g->pod_sets[0];
    cr_assert_str_eq(ps->name, "workers");
    cr_assert_eq(ps->count, 16);
    cr_assert_eq(ps->min_count, 16);
    cr_assert_eq(ps->requests[RF_RES_PODS], 1);
    cr_assert_eq(ps->requests[gpu], 8);
    cr_assert_eq(ps->requests[cpu], 32000);
    cr_assert_eq(ps->requests[mem], INT64_C(200) << 30);
    cr_assert_eq(ps->n_node_selector, 1);
    cr_assert_str_eq(ps->node_selector[0].key, "nvidia.com/gpu.product");
    cr_assert_str_eq(ps->node_selector[0].value, "H100");
    cr_assert_eq(ps->n_tolerations, 1);
    cr_assert_str_eq(ps->tolerations[0].key, "nvidia.com/gpu");
    cr_assert_eq(ps->tolerations[0].op, RF_TOL_EXISTS);
    cr_assert_str_eq(ps->tolerations[0].value, "");
    cr_assert_eq(ps->tolerations[0].effect, RF_EFFECT_NO_SCHEDULE);
    cr_assert_eq(ps->topology.required, -1);
    cr_assert_eq(ps->topology.preferred, -1);
    cr_assert_eq(ps->slice.size, 4);
    cr_assert_eq(ps->slice.level, 1);
    cr_assert_eq(ps->n_bound, 1);
    cr_assert_eq(ps->bound[0].node, 0);
    cr_assert_eq(ps->bound[0].count, 1);
    cr_assert_null(ps->bound[0].ranks);
    cr_assert_eq(ps->n_bound_pods, 1);

    cr_assert_eq(p->options.mode, RF_MODE_AUTO);
    cr_assert_eq(p->options.time_limit_ms, 1000);
    cr_assert_eq(p->options.threads, 0);
    cr_assert_eq(p->options.admission, RF_ADMIT_VALUE);
    cr_assert_str_eq(p->options.value_resource_name, "nvidia.com/gpu");
    cr_assert_eq(p->options.value_resource, gpu);

    cr_assert_eq(rf_problem_node(p, "h-0001"), 0);
    cr_assert_eq(rf_problem_node(p, "h-0002"), -1);
    cr_assert_eq(rf_problem_level(p, "example.com/rack"), 1);
    cr_assert_eq(rf_problem_level(p, "nope"), -1);

    rf_problem_destroy(&p);
    cr_assert_null(p);
    rf_problem_destroy(&p); /* NULL-safe */
    rf_test_no_leaks();
}

Test(problem, defaults_applied)
{
    rf_problem_t *p = s_read_ok("{\"cluster\":{\"levels\":[\"b\",\"r\",\"kubernetes.io/hostname\"],"
                                "\"nodes\":[{\"name\":\"n1\"}]},"
                                "\"gangs\":[{\"name\":\"g\",\"pod_sets\":[{\"name\":\"w\",\"count\":6}]}]}",
                                NULL);
    cr_assert_eq(p->level_costs[0], 100.0);
    cr_assert_eq(p->level_costs[1], 10.0);
    cr_assert_eq(p->level_costs[2], 1.0);
    cr_assert_eq(p->n_resources, 1, "only pods");
    const rf_node_t *n = &p->nodes[0];
    cr_assert_eq(n->allocatable[RF_RES_PODS], RF_QTY_UNLIMITED);
    cr_assert_eq(n->used[RF_RES_PODS], 0);
    cr_assert_eq(n->n_labels, 0);
    cr_assert_eq(n->n_taints, 0);
    cr_assert_eq(n->unschedulable, false);
    const rf_gang_t *g = &p->gangs[0];
    cr_assert_eq(g->priority, 0);
    cr_assert_eq(g->bandwidth, 1.0);
    cr_assert_eq(g->topology.required, -1);
    cr_assert_eq(g->topology.preferred, -1);
    const rf_pod_set_t *ps = &g->pod_sets[0];
    cr_assert_eq(ps->min_count, 6);
    cr_assert_eq(ps->requests[RF_RES_PODS], 1);
    cr_assert_eq(ps->slice.size, 0);
    cr_assert_eq(ps->slice.level, -1);
    cr_assert_eq(ps->n_bound, 0);
    cr_assert_eq(ps->n_bound_pods, 0);
    cr_assert_eq(ps->n_node_selector, 0);
    cr_assert_eq(ps->n_tolerations, 0);
    cr_assert_eq(p->options.mode, RF_MODE_AUTO);
    cr_assert_eq(p->options.time_limit_ms, 1000);
    cr_assert_eq(p->options.admission, RF_ADMIT_VALUE);
    cr_assert_str_eq(p->options.value_resource_name, "nvidia.com/gpu");
    cr_assert_eq(p->options.value_resource, -1, "nobody mentions GPUs");
    rf_problem_destroy(&p);
    rf_test_no_leaks();
}

Test(problem, level_costs_default_one_level_and_four)
{
    rf_problem_t *p =
        s_read_ok("{\"cluster\":{\"levels\":[\"kubernetes.io/hostname\"],\"nodes\":[]},\"gangs\":[]}", NULL);
    cr_assert_eq(p->n_levels, 1);
    cr_assert_eq(p->level_costs[0], 1.0);
    rf_problem_destroy(&p);
    p = s_read_ok("{\"cluster\":{\"levels\":[\"a\",\"b\",\"c\",\"d\"],\"nodes\":[]},\"gangs\":[]}", NULL);
    cr_assert_eq(p->level_costs[0], 1000.0);
    cr_assert_eq(p->level_costs[3], 1.0);
    rf_problem_destroy(&p);
    rf_test_no_leaks();
}

Test(problem, nulls_read_as_absent_and_options_parsed)
{
    rf_problem_t *p =
        s_read_ok("{" CLUSTER ",\"gangs\":[{\"name\":\"g\",\"priority\":-5,\"bandwidth\":2.5,\"topology\":null,"
                  "\"pod_sets\":[{\"name\":\"w\",\"count\":4,\"min_count\":0,\"requests\":{\"cpu\":\"0.1m\"},"
                  "\"tolerations\":[{\"operator\":\"Exists\"}],\"bound\":[{\"node\":\"n2\",\"ranks\":[3,1]}]}]}],"
                  "\"options\":{\"mode\":\"ilp\",\"time_limit_ms\":0,\"threads\":8,\"admission\":\"ordered\","
                  "\"value_resource\":\"cpu\"}}",
                  NULL);
    const rf_gang_t *g = &p->gangs[0];
    cr_assert_eq(g->priority, -5);
    cr_assert_eq(g->bandwidth, 2.5);
    cr_assert_eq(g->topology.required, -1);
    const rf_pod_set_t *ps = &g->pod_sets[0];
    cr_assert_eq(ps->min_count, 0);
    cr_assert_eq(ps->requests[rf_problem_resource(p, "cpu")], 1, "0.1m rounds up to 1 millicore");
    cr_assert_eq(ps->tolerations[0].op, RF_TOL_EXISTS);
    cr_assert_str_eq(ps->tolerations[0].key, "");
    cr_assert_eq(ps->tolerations[0].effect, RF_EFFECT_NONE);
    cr_assert_eq(ps->bound[0].node, 1);
    cr_assert_eq(ps->bound[0].count, 2);
    cr_assert_eq(ps->bound[0].ranks[0], 3);
    cr_assert_eq(ps->bound[0].ranks[1], 1);
    cr_assert_eq(p->options.mode, RF_MODE_ILP);
    cr_assert_eq(p->options.time_limit_ms, 0);
    cr_assert_eq(p->options.threads, 8);
    cr_assert_eq(p->options.admission, RF_ADMIT_ORDERED);
    cr_assert_eq(p->options.value_resource, rf_problem_resource(p, "cpu"));
    rf_problem_destroy(&p);
    rf_test_no_leaks();
}

/* ------------------------------------------------------ unknown keys */

Test(problem, unknown_key_at_every_depth)
{
    s_fails("{" CLUSTER ",\"gangs\":[],\"extra\":1}", "extra", "unknown key");
    s_fails("{\"cluster\":{" LEVELS "," NODES ",\"zones\":[]},\"gangs\":[]}", "cluster.zones", "unknown key");
    s_fails("{\"cluster\":{" LEVELS ",\"nodes\":[{\"name\":\"n1\",\"capacity\":{}}]},\"gangs\":[]}",
            "cluster.nodes[0].capacity", "unknown key");
    s_fails("{\"cluster\":{" LEVELS ",\"nodes\":[{\"name\":\"n1\",\"taints\":[{\"key\":\"k\",\"effect\":"
            "\"NoSchedule\",\"timeAdded\":\"x\"}]}]},\"gangs\":[]}",
            "cluster.nodes[0].taints[0].timeAdded", "unknown key");
    s_fails(PROBLEM(GANG(",\"queue\":\"q\"")), "gangs[0].queue", "unknown key");
    s_fails(PROBLEM(GANG(",\"topology\":{\"required\":\"b\",\"mode\":\"x\"}")), "gangs[0].topology.mode",
            "unknown key");
    s_fails(PROBLEM(GANG_PS(",\"replicas\":4")), "gangs[0].pod_sets[0].replicas", "unknown key");
    s_fails(PROBLEM(GANG_PS(",\"tolerations\":[{\"key\":\"k\",\"tolerationSeconds\":5}]")),
            "gangs[0].pod_sets[0].tolerations[0].tolerationSeconds", "unknown key");
    s_fails(PROBLEM(GANG_PS(",\"slice\":{\"size\":2,\"required\":\"r\",\"x-y\":1}")),
            "gangs[0].pod_sets[0].slice[\"x-y\"]", "unknown key");
    s_fails(PROBLEM(GANG_PS(",\"bound\":[{\"node\":\"n1\",\"count\":1,\"rank\":0}]")),
            "gangs[0].pod_sets[0].bound[0].rank", "unknown key");
    s_fails("{" CLUSTER ",\"gangs\":[],\"options\":{\"verbose\":true}}", "options.verbose", "unknown key");
    rf_test_no_leaks();
}

Test(problem, extra_root_keys_allowed_when_listed)
{
    /* rackfitd's envelope keys pass through rf_problem_from_doc's list. */
    rf_problem_t *p = NULL;
    rf_error_t err;
    const char *json = "{" CLUSTER ",\"gangs\":[],\"v\":1}";
    cr_assert_eq(rf_problem_from_json(json, strlen(json), NULL, &p, &err), RF_ESCHEMA);
    cr_assert_str_eq(err.path, "v");
    rf_doc_t pods = {.type = RF_DOC_STR, .offset = -1, .u.s = "kubernetes.io/hostname"};
    pods.len = (uint32_t)strlen(pods.u.s);
    rf_doc_t levels = {.type = RF_DOC_ARRAY, .len = 1, .offset = -1, .u.items = &pods};
    rf_doc_t nodes = {.type = RF_DOC_ARRAY, .len = 0, .offset = -1, .u.items = NULL};
    rf_doc_kv_t ckv[2] = {{"levels", 6, levels}, {"nodes", 5, nodes}};
    rf_doc_t cluster = {.type = RF_DOC_MAP, .len = 2, .offset = -1, .u.pairs = ckv};
    rf_doc_t gangs = {.type = RF_DOC_ARRAY, .len = 0, .offset = -1, .u.items = NULL};
    rf_doc_t one = {.type = RF_DOC_INT, .offset = -1, .u.i = 1};
    rf_doc_kv_t rkv[3] = {{"v", 1, one}, {"cluster", 7, cluster}, {"gangs", 5, gangs}};
    rf_doc_t root = {.type = RF_DOC_MAP, .len = 3, .offset = -1, .u.pairs = rkv};
    const char *const extra[] = {"v", "op", "id", NULL};
    cr_assert_eq(rf_problem_from_doc(&root, extra, NULL, &p, &err), RF_OK, "%s: %s", err.path, err.message);
    cr_assert_eq(p->n_levels, 1);
    rf_problem_destroy(&p);
    cr_assert_eq(rf_problem_from_doc(&root, NULL, NULL, &p, &err), RF_ESCHEMA);
    cr_assert_str_eq(err.path, "v");
    cr_assert_null(p);
    rf_test_no_leaks();
}

/* ------------------------------------------------ types and presence */

Test(problem, wrong_types)
{
    s_fails("[]", "", "must be a map, not an array");
    s_fails("{\"cluster\":{\"levels\":\"b\"," NODES "},\"gangs\":[]}", "cluster.levels",
            "must be an array, not a string");
    s_fails("{\"cluster\":{\"levels\":[\"b\",3]," NODES "},\"gangs\":[]}", "cluster.levels[1]",
            "must be a string, not an integer");
    s_fails("{\"cluster\":{" LEVELS ",\"nodes\":[{\"name\":[\"n\"]}]},\"gangs\":[]}", "cluster.nodes[0].name",
            "must be a string, not an array");
    s_fails("{\"cluster\":{" LEVELS ",\"nodes\":[{\"name\":\"n\",\"unschedulable\":\"yes\"}]},\"gangs\":[]}",
            "cluster.nodes[0].unschedulable", "must be a boolean, not a string");
    s_fails("{\"cluster\":{" LEVELS ",\"nodes\":[{\"name\":\"n\",\"labels\":{\"a\":1}}]},\"gangs\":[]}",
            "cluster.nodes[0].labels.a", "must be a string, not an integer");
    s_fails("{\"cluster\":{" LEVELS ",\"nodes\":[{\"name\":\"n\",\"allocatable\":{\"cpu\":[1]}}]},\"gangs\":[]}",
            "cluster.nodes[0].allocatable.cpu", "must be a quantity");
    s_fails(PROBLEM("{\"name\":\"g\",\"pod_sets\":[{\"name\":\"w\",\"count\":4.5}]}"), "gangs[0].pod_sets[0].count",
            "must be an integer, not a number");
    s_fails(PROBLEM("{\"name\":\"g\",\"pod_sets\":[{\"name\":\"w\",\"count\":\"4\"}]}"), "gangs[0].pod_sets[0].count",
            "must be an integer, not a string");
    s_fails(PROBLEM(GANG(",\"priority\":1.5")), "gangs[0].priority", "must be an integer");
    s_fails(PROBLEM(GANG(",\"bandwidth\":\"1\"")), "gangs[0].bandwidth", "must be a number, not a string");
    s_fails(PROBLEM(GANG(",\"bandwidth\":-1")), "gangs[0].bandwidth", ">= 0");
    s_fails(PROBLEM("{\"name\":\"g\",\"pod_sets\":{}}"), "gangs[0].pod_sets", "must be an array, not a map");
    s_fails("{" CLUSTER ",\"gangs\":{}}", "gangs", "must be an array, not a map");
    s_fails("{" CLUSTER ",\"gangs\":[],\"options\":{\"time_limit_ms\":-1}}", "options.time_limit_ms", ">= 0");
    s_fails("{" CLUSTER ",\"gangs\":[],\"options\":{\"threads\":1.0}}", "options.threads", "must be an integer");
    s_fails("{" CLUSTER ",\"gangs\":[],\"options\":{\"value_resource\":7}}", "options.value_resource",
            "must be a string");
    rf_test_no_leaks();
}

Test(problem, missing_required_fields)
{
    s_fails("{\"gangs\":[]}", "cluster", "is required");
    s_fails("{" CLUSTER "}", "gangs", "is required");
    s_fails("{\"cluster\":{" NODES "},\"gangs\":[]}", "cluster.levels", "is required");
    s_fails("{\"cluster\":{" LEVELS "},\"gangs\":[]}", "cluster.nodes", "is required");
    s_fails("{\"cluster\":{" LEVELS ",\"nodes\":[{\"labels\":{}}]},\"gangs\":[]}", "cluster.nodes[0].name",
            "is required");
    s_fails("{\"cluster\":{" LEVELS ",\"nodes\":[{\"name\":\"\"}]},\"gangs\":[]}", "cluster.nodes[0].name",
            "must not be empty");
    s_fails(PROBLEM("{\"pod_sets\":[" PS("") "]}"), "gangs[0].name", "is required");
    s_fails(PROBLEM("{\"name\":\"g\"}"), "gangs[0].pod_sets", "is required");
    s_fails(PROBLEM("{\"name\":\"g\",\"pod_sets\":[]}"), "gangs[0].pod_sets", "at least one pod set");
    s_fails(PROBLEM("{\"name\":\"g\",\"pod_sets\":[{\"count\":4}]}"), "gangs[0].pod_sets[0].name", "is required");
    s_fails(PROBLEM("{\"name\":\"g\",\"pod_sets\":[{\"name\":\"w\"}]}"), "gangs[0].pod_sets[0].count", "is required");
    s_fails(PROBLEM("{\"name\":\"g\",\"pod_sets\":[{\"name\":\"w\",\"count\":null}]}"), "gangs[0].pod_sets[0].count",
            "is required");
    s_fails(PROBLEM(GANG_PS(",\"slice\":{\"size\":2}")), "gangs[0].pod_sets[0].slice.required", "is required");
    s_fails(PROBLEM(GANG_PS(",\"bound\":[{\"count\":1}]")), "gangs[0].pod_sets[0].bound[0].node", "is required");
    s_fails(PROBLEM(GANG_PS(",\"bound\":[{\"node\":\"n1\"}]")), "gangs[0].pod_sets[0].bound[0]",
            "needs count or ranks");
    s_fails("{\"cluster\":{" LEVELS ",\"nodes\":[{\"name\":\"n\",\"taints\":[{\"key\":\"k\"}]}]},\"gangs\":[]}",
            "cluster.nodes[0].taints[0].effect", "is required");
    rf_test_no_leaks();
}

/* ------------------------------------------------------------ names */

Test(problem, duplicate_names)
{
    s_fails("{\"cluster\":{" LEVELS ",\"nodes\":[" NODE("n1", "b1", "r1") "," NODE("n2", "b1", "r1") "," NODE(
                "n1", "b1", "r1") "]},\"gangs\":[]}",
            "cluster.nodes[2].name", "duplicate name \"n1\" (also cluster.nodes[0])");
    s_fails(PROBLEM(GANG("") "," GANG("")), "gangs[1].name", "duplicate name \"g\" (also gangs[0])");
    s_fails(PROBLEM("{\"name\":\"g\",\"pod_sets\":[" PS("") "," PS("") "]}"), "gangs[0].pod_sets[1].name",
            "duplicate name \"w\"");
    s_fails("{\"cluster\":{\"levels\":[\"b\",\"r\",\"b\"]," NODES "},\"gangs\":[]}", "cluster.levels[2]",
            "duplicate level");
    rf_test_no_leaks();
}

/* ------------------------------------------------------------ levels */

Test(problem, unknown_levels)
{
    s_fails(PROBLEM(GANG(",\"topology\":{\"required\":\"zone\"}")), "gangs[0].topology.required",
            "unknown level \"zone\"");
    s_fails(PROBLEM(GANG(",\"topology\":{\"preferred\":\"zone\"}")), "gangs[0].topology.preferred",
            "unknown level \"zone\"");
    s_fails(PROBLEM(GANG_PS(",\"topology\":{\"required\":\"zone\"}")), "gangs[0].pod_sets[0].topology.required",
            "unknown level \"zone\"");
    s_fails(PROBLEM(GANG_PS(",\"slice\":{\"size\":2,\"required\":\"zone\"}")), "gangs[0].pod_sets[0].slice.required",
            "unknown level \"zone\"");
    rf_test_no_leaks();
}

Test(problem, preferred_coarser_than_required)
{
    s_fails(PROBLEM(GANG(",\"topology\":{\"required\":\"r\",\"preferred\":\"b\"}")), "gangs[0].topology.preferred",
            "coarser than the required level");
    s_fails(PROBLEM(GANG_PS(",\"topology\":{\"required\":\"kubernetes.io/hostname\",\"preferred\":\"r\"}")),
            "gangs[0].pod_sets[0].topology.preferred", "coarser");
    /* equal or finer is fine */
    rf_problem_t *p = s_read_ok(PROBLEM(GANG(",\"topology\":{\"required\":\"b\",\"preferred\":\"b\"}")), NULL);
    rf_problem_destroy(&p);
    rf_test_no_leaks();
}

Test(problem, pod_set_required_above_gang)
{
    s_fails(PROBLEM("{\"name\":\"g\",\"topology\":{\"required\":\"r\"},\"pod_sets\":[" PS(
                ",\"topology\":{\"required\":\"b\"}") "]}"),
            "gangs[0].pod_sets[0].topology.required", "above the gang's required level \"r\"");
    rf_problem_t *p = s_read_ok(PROBLEM("{\"name\":\"g\",\"topology\":{\"required\":\"b\"},\"pod_sets\":[" PS(
                                    ",\"topology\":{\"required\":\"r\"}") "]}"),
                                NULL);
    cr_assert_eq(p->gangs[0].topology.required, 0);
    cr_assert_eq(p->gangs[0].pod_sets[0].topology.required, 1);
    rf_problem_destroy(&p);
    rf_test_no_leaks();
}

Test(problem, min_count_above_count)
{
    s_fails(PROBLEM(GANG_PS(",\"min_count\":5")), "gangs[0].pod_sets[0].min_count", "5 is more than count (4)");
    s_fails(PROBLEM(GANG_PS(",\"min_count\":-1")), "gangs[0].pod_sets[0].min_count", ">= 0");
    rf_test_no_leaks();
}

Test(problem, slice_rules)
{
    s_fails(PROBLEM(GANG_PS(",\"slice\":{\"size\":3,\"required\":\"r\"}")), "gangs[0].pod_sets[0].slice.size",
            "3 does not divide count (4)");
    s_fails(PROBLEM(GANG_PS(",\"min_count\":2,\"slice\":{\"size\":4,\"required\":\"r\"}")),
            "gangs[0].pod_sets[0].slice.size", "4 does not divide min_count (2)");
    s_fails(PROBLEM(GANG_PS(",\"slice\":{\"size\":0,\"required\":\"r\"}")), "gangs[0].pod_sets[0].slice.size",
            "must be > 0");
    s_fails(PROBLEM("{\"name\":\"g\",\"topology\":{\"required\":\"r\"},\"pod_sets\":[" PS(
                ",\"slice\":{\"size\":2,\"required\":\"b\"}") "]}"),
            "gangs[0].pod_sets[0].slice.required", "above the gang's required level");
    s_fails(PROBLEM(GANG_PS(",\"topology\":{\"required\":\"r\"},\"slice\":{\"size\":2,\"required\":\"b\"}")),
            "gangs[0].pod_sets[0].slice.required", "above the pod set's required level");
    rf_problem_t *p = s_read_ok(PROBLEM(GANG_PS(",\"min_count\":2,\"slice\":{\"size\":2,\"required\":\"r\"}")), NULL);
    cr_assert_eq(p->gangs[0].pod_sets[0].slice.size, 2);
    rf_problem_destroy(&p);
    rf_test_no_leaks();
}

Test(problem, levels_shape)
{
    s_fails("{\"cluster\":{\"levels\":[\"kubernetes.io/hostname\",\"r\"]," NODES "},\"gangs\":[]}", "cluster.levels[0]",
            "must be the last level");
    s_fails("{\"cluster\":{\"levels\":[\"a\",\"b\",\"c\",\"d\",\"e\",\"f\",\"g\",\"h\",\"i\",\"j\",\"k\",\"l\",\"m\","
            "\"n\",\"o\",\"p\",\"q\"],\"nodes\":[]},\"gangs\":[]}",
            "cluster.levels", "1 to 16 levels, not 17");
    s_fails("{\"cluster\":{\"levels\":[],\"nodes\":[]},\"gangs\":[]}", "cluster.levels", "1 to 16 levels, not 0");
    s_fails("{\"cluster\":{\"levels\":[\"\"],\"nodes\":[]},\"gangs\":[]}", "cluster.levels[0]", "must not be empty");
    s_fails("{\"cluster\":{" LEVELS ",\"level_costs\":[10,1]," NODES "},\"gangs\":[]}", "cluster.level_costs",
            "has 2 entries, but there are 3 levels");
    s_fails("{\"cluster\":{" LEVELS ",\"level_costs\":[10,-1,1]," NODES "},\"gangs\":[]}", "cluster.level_costs[1]",
            ">= 0");
    /* 16 levels are fine */
    rf_problem_t *p = s_read_ok("{\"cluster\":{\"levels\":[\"a\",\"b\",\"c\",\"d\",\"e\",\"f\",\"g\",\"h\",\"i\","
                                "\"j\",\"k\",\"l\",\"m\",\"n\",\"o\",\"p\"],\"nodes\":[]},\"gangs\":[]}",
                                NULL);
    cr_assert_eq(p->n_levels, 16);
    cr_assert_eq(p->level_costs[15], 1.0);
    cr_assert_eq(p->level_costs[0], 1e15);
    rf_problem_destroy(&p);
    rf_test_no_leaks();
}

/* -------------------------------------------------------- quantities */

Test(problem, quantities)
{
    s_fails("{\"cluster\":{" LEVELS ",\"nodes\":[{\"name\":\"n\",\"allocatable\":{\"memory\":-1}}]},\"gangs\":[]}",
            "cluster.nodes[0].allocatable.memory", "negative");
    s_fails("{\"cluster\":{" LEVELS ",\"nodes\":[{\"name\":\"n\",\"used\":{\"cpu\":\"-500m\"}}]},\"gangs\":[]}",
            "cluster.nodes[0].used.cpu", "negative");
    s_fails(PROBLEM("{\"name\":\"g\",\"pod_sets\":[{\"name\":\"w\",\"count\":1,\"requests\":{\"nvidia.com/gpu\":"
                    "\"0.5\"}}]}"),
            "gangs[0].pod_sets[0].requests[\"nvidia.com/gpu\"]", "fractional");
    s_fails(PROBLEM("{\"name\":\"g\",\"pod_sets\":[{\"name\":\"w\",\"count\":1,\"requests\":{\"nvidia.com/gpu\":"
                    "0.5}}]}"),
            "gangs[0].pod_sets[0].requests[\"nvidia.com/gpu\"]", "fractional");
    s_fails(PROBLEM("{\"name\":\"g\",\"pod_sets\":[{\"name\":\"w\",\"count\":1,\"requests\":{\"cpu\":\"lots\"}}]}"),
            "gangs[0].pod_sets[0].requests.cpu", "not a valid quantity");
    s_fails(PROBLEM("{\"name\":\"g\",\"pod_sets\":[{\"name\":\"w\",\"count\":1,\"requests\":{\"memory\":\"9Ei\"}}]}"),
            "gangs[0].pod_sets[0].requests.memory", "2^62");
    rf_test_no_leaks();
}

Test(problem, error_offset_points_into_the_text)
{
    const char *json = PROBLEM(GANG(",\"queue\":\"q\""));
    rf_problem_t *p = NULL;
    rf_error_t err;
    cr_assert_eq(rf_problem_from_json(json, strlen(json), NULL, &p, &err), RF_ESCHEMA);
    /* -1 when the JSON boundary does not record offsets; else inside the text */
    cr_assert(err.offset == -1 || (err.offset >= 0 && (size_t)err.offset < strlen(json)));
    rf_test_no_leaks();
}

Test(problem, pods_in_requests)
{
    s_fails(PROBLEM("{\"name\":\"g\",\"pod_sets\":[{\"name\":\"w\",\"count\":1,\"requests\":{\"pods\":1}}]}"),
            "gangs[0].pod_sets[0].requests.pods", "every pod uses pods: 1");
    /* but nodes may list pods */
    rf_problem_t *p = s_read_ok("{\"cluster\":{" LEVELS ",\"nodes\":[{\"name\":\"n\",\"allocatable\":{\"pods\":"
                                "\"110\"},\"used\":{\"pods\":3}}]},\"gangs\":[]}",
                                NULL);
    cr_assert_eq(p->nodes[0].allocatable[RF_RES_PODS], 110);
    cr_assert_eq(p->nodes[0].used[RF_RES_PODS], 3);
    rf_problem_destroy(&p);
    rf_test_no_leaks();
}

/* ------------------------------------------------------------ bound */

Test(problem, bound_rules)
{
    s_fails(PROBLEM(GANG_PS(",\"bound\":[{\"node\":\"n9\",\"count\":1}]")), "gangs[0].pod_sets[0].bound[0].node",
            "unknown node \"n9\"");
    s_fails(PROBLEM(GANG_PS(",\"bound\":[{\"node\":\"n1\",\"count\":0}]")), "gangs[0].pod_sets[0].bound[0].count",
            "must be > 0");
    s_fails(PROBLEM(GANG_PS(",\"bound\":[{\"node\":\"n1\",\"ranks\":[0,4]}]")),
            "gangs[0].pod_sets[0].bound[0].ranks[1]", "rank 4 is out of range");
    s_fails(PROBLEM(GANG_PS(",\"bound\":[{\"node\":\"n1\",\"ranks\":[-1]}]")), "gangs[0].pod_sets[0].bound[0].ranks[0]",
            ">= 0");
    s_fails(PROBLEM(GANG_PS(",\"bound\":[{\"node\":\"n1\",\"ranks\":[1,2]},{\"node\":\"n2\",\"ranks\":[3,2]}]")),
            "gangs[0].pod_sets[0].bound[1].ranks[1]", "rank 2 is listed twice");
    s_fails(PROBLEM(GANG_PS(",\"bound\":[{\"node\":\"n1\",\"ranks\":[1,1]}]")),
            "gangs[0].pod_sets[0].bound[0].ranks[1]", "listed twice");
    s_fails(PROBLEM(GANG_PS(",\"bound\":[{\"node\":\"n1\",\"count\":3,\"ranks\":[0,1]}]")),
            "gangs[0].pod_sets[0].bound[0].ranks", "lists 2 ranks, but count is 3");
    s_fails(PROBLEM(GANG_PS(",\"bound\":[{\"node\":\"n1\",\"ranks\":[]}]")), "gangs[0].pod_sets[0].bound[0].ranks",
            "must not be empty");
    s_fails(PROBLEM(GANG_PS(",\"bound\":[{\"node\":\"n1\",\"count\":3},{\"node\":\"n2\",\"count\":2}]")),
            "gangs[0].pod_sets[0].bound", "5 bound pods, more than count (4)");
    s_fails(PROBLEM(GANG_PS(",\"bound\":[{\"node\":\"n1\",\"count\":1},{\"node\":\"n1\",\"count\":1}]")),
            "gangs[0].pod_sets[0].bound[1].node", "already listed");
    s_fails(PROBLEM(GANG_PS(",\"bound\":[{\"node\":\"n1\",\"count\":1},{\"node\":\"n2\",\"ranks\":[3]}]")),
            "gangs[0].pod_sets[0].bound", "every entry gives its ranks or none");
    /* bound above min_count is fine; count and ranks agreeing is fine */
    rf_problem_t *p = s_read_ok(
        PROBLEM(GANG_PS(",\"min_count\":2,\"bound\":[{\"node\":\"n1\",\"count\":2,\"ranks\":[0,3]},{\"node\":\"n3\","
                        "\"ranks\":[2]}]")),
        NULL);
    cr_assert_eq(p->gangs[0].pod_sets[0].n_bound_pods, 3);
    cr_assert_eq(p->gangs[0].pod_sets[0].bound[1].node, 2);
    rf_problem_destroy(&p);
    rf_test_no_leaks();
}

/* ----------------------------------------------------------- limits */

Test(problem, limits)
{
    rf_limits_t lim;
    rf_limits_default(&lim);
    cr_assert_eq(lim.max_nodes, 100000);
    cr_assert_eq(lim.max_gangs, 20000);
    cr_assert_eq(lim.max_pod_sets, 64);
    cr_assert_eq(lim.max_pods, 100000);
    cr_assert_eq(lim.max_labels, 256);
    cr_assert_eq(lim.max_taints, 64);
    cr_assert_eq(lim.max_resources, 64);
    cr_assert_eq(lim.max_bound, 100000);
    cr_assert_eq(lim.max_string, 4096);
    cr_assert_eq(lim.max_depth, 64);
    cr_assert_eq(lim.max_input_bytes, INT64_C(512) << 20);

    rf_limits_t l = lim;
    l.max_nodes = 2;
    s_fails_lim(PROBLEM(GANG("")), &l, RF_ELIMIT, "cluster.nodes", "more than max_nodes (2)");
    l = lim;
    l.max_gangs = 1;
    s_fails_lim(PROBLEM(GANG("") ",{\"name\":\"h\",\"pod_sets\":[" PS("") "]}"), &l, RF_ELIMIT, "gangs", "max_gangs");
    l = lim;
    l.max_pod_sets = 1;
    s_fails_lim(PROBLEM("{\"name\":\"g\",\"pod_sets\":[" PS("") ",{\"name\":\"x\",\"count\":1}]}"), &l, RF_ELIMIT,
                "gangs[0].pod_sets", "max_pod_sets");
    l = lim;
    l.max_pods = 3;
    s_fails_lim(PROBLEM(GANG("")), &l, RF_ELIMIT, "gangs[0].pod_sets[0].count", "max_pods (3)");
    l = lim;
    l.max_labels = 2;
    s_fails_lim(PROBLEM(GANG("")), &l, RF_ELIMIT, "cluster.nodes[0].labels", "max_labels");
    l = lim;
    l.max_taints = 0;
    s_fails_lim(PROBLEM(GANG_PS(",\"tolerations\":[{\"operator\":\"Exists\"}]")), &l, RF_ELIMIT,
                "gangs[0].pod_sets[0].tolerations", "max_taints");
    l = lim;
    l.max_resources = 3; /* pods, nvidia.com/gpu, cpu: memory is the fourth */
    s_fails_lim(PROBLEM(GANG("")), &l, RF_ELIMIT, "cluster.nodes[0].allocatable.memory", "max_resources (3)");
    l = lim;
    l.max_bound = 1;
    s_fails_lim(PROBLEM(GANG_PS(",\"bound\":[{\"node\":\"n1\",\"count\":1},{\"node\":\"n2\",\"count\":1}]")), &l,
                RF_ELIMIT, "gangs[0].pod_sets[0].bound", "max_bound");
    l = lim;
    l.max_string = 8;
    s_fails_lim("{\"cluster\":{\"levels\":[\"b\"],\"nodes\":[{\"name\":\"long-node-name\"}]},\"gangs\":[]}", &l,
                RF_ELIMIT, "cluster.nodes[0].name", "longer than");
    rf_test_no_leaks();
}

/* ------------------------------------------------------------ enums */

Test(problem, bad_enum_strings)
{
    s_fails("{" CLUSTER ",\"gangs\":[],\"options\":{\"mode\":\"fast\"}}", "options.mode",
            "must be greedy, ilp or auto, not \"fast\"");
    s_fails("{" CLUSTER ",\"gangs\":[],\"options\":{\"admission\":\"fifo\"}}", "options.admission",
            "must be value or ordered");
    s_fails(PROBLEM(GANG_PS(",\"tolerations\":[{\"key\":\"k\",\"operator\":\"In\"}]")),
            "gangs[0].pod_sets[0].tolerations[0].operator", "must be Equal or Exists, not \"In\"");
    s_fails(PROBLEM(GANG_PS(",\"tolerations\":[{\"key\":\"k\",\"effect\":\"NoRun\"}]")),
            "gangs[0].pod_sets[0].tolerations[0].effect", "NoSchedule");
    s_fails("{\"cluster\":{" LEVELS ",\"nodes\":[{\"name\":\"n\",\"taints\":[{\"key\":\"k\",\"effect\":\"\"}]}]},"
            "\"gangs\":[]}",
            "cluster.nodes[0].taints[0].effect", "must be NoSchedule, PreferNoSchedule or NoExecute");
    s_fails("{\"cluster\":{" LEVELS ",\"nodes\":[{\"name\":\"n\",\"taints\":[{\"key\":\"k\",\"effect\":\"noschedule\""
            "}]}]},\"gangs\":[]}",
            "cluster.nodes[0].taints[0].effect", "not \"noschedule\"");
    s_fails(PROBLEM(GANG_PS(",\"tolerations\":[{\"key\":\"k\",\"operator\":\"Exists\",\"value\":\"v\"}]")),
            "gangs[0].pod_sets[0].tolerations[0].value", "must be empty when operator is Exists");
    s_fails(PROBLEM(GANG_PS(",\"tolerations\":[{\"value\":\"v\"}]")), "gangs[0].pod_sets[0].tolerations[0].key",
            "must not be empty when operator is Equal");
    rf_test_no_leaks();
}

/* ---------------------------------------------------- parse failures */

Test(problem, not_json)
{
    rf_problem_t *p = NULL;
    rf_error_t err;
    cr_assert_eq(rf_problem_from_json("{\"cluster\":", 11, NULL, &p, &err), RF_EPARSE);
    cr_assert_null(p);
    cr_assert_eq(rf_problem_from_json_file("/nonexistent/problem.json", NULL, &p, &err), RF_EIO);
    cr_assert_null(p);
    rf_test_no_leaks();
}

Test(problem, from_file)
{
    char path[] = "/tmp/rf_test_problem_XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fputs(s_example, f);
    fclose(f);
    rf_problem_t *p = NULL;
    rf_error_t err;
    cr_assert_eq(rf_problem_from_json_file(path, NULL, &p, &err), RF_OK, "%s: %s", err.path, err.message);
    cr_assert_eq(p->gangs[0].pod_sets[0].count, 16);
    rf_problem_destroy(&p);
    remove(path);
    rf_test_no_leaks();
}

/* Strings checked by the reader itself (MessagePack has no JSON boundary
 * in front of it): embedded NUL bytes and max_string. */
Test(problem, doc_strings_checked_by_the_reader)
{
    rf_doc_t level = {.type = RF_DOC_STR, .len = 1, .offset = -1, .u.s = "b"};
    rf_doc_t levels = {.type = RF_DOC_ARRAY, .len = 1, .offset = -1, .u.items = &level};
    rf_doc_t name = {.type = RF_DOC_STR, .len = 3, .offset = 42, .u.s = "n\0x"};
    rf_doc_kv_t nkv[1] = {{"name", 4, name}};
    rf_doc_t node = {.type = RF_DOC_MAP, .len = 1, .offset = -1, .u.pairs = nkv};
    rf_doc_t nodes = {.type = RF_DOC_ARRAY, .len = 1, .offset = -1, .u.items = &node};
    rf_doc_kv_t ckv[2] = {{"levels", 6, levels}, {"nodes", 5, nodes}};
    rf_doc_t cluster = {.type = RF_DOC_MAP, .len = 2, .offset = -1, .u.pairs = ckv};
    rf_doc_t gangs = {.type = RF_DOC_ARRAY, .len = 0, .offset = -1, .u.items = NULL};
    rf_doc_kv_t rkv[2] = {{"cluster", 7, cluster}, {"gangs", 5, gangs}};
    rf_doc_t root = {.type = RF_DOC_MAP, .len = 2, .offset = -1, .u.pairs = rkv};
    rf_problem_t *p = NULL;
    rf_error_t err;
    cr_assert_eq(rf_problem_from_doc(&root, NULL, NULL, &p, &err), RF_ESCHEMA);
    cr_assert_str_eq(err.path, "cluster.nodes[0].name");
    cr_assert(strstr(err.message, "NUL"), "%s", err.message);
    cr_assert_eq(err.offset, 42, "the document's offset is passed on");
    nkv[0].value.u.s = "node-name";
    nkv[0].value.len = 9;
    rf_limits_t lim;
    rf_limits_default(&lim);
    lim.max_string = 8;
    cr_assert_eq(rf_problem_from_doc(&root, NULL, &lim, &p, &err), RF_ELIMIT);
    cr_assert_str_eq(err.path, "cluster.nodes[0].name");
    cr_assert(strstr(err.message, "max_string (8)"), "%s", err.message);
    lim.max_string = 9;
    cr_assert_eq(rf_problem_from_doc(&root, NULL, &lim, &p, &err), RF_OK, "%s", err.message);
    cr_assert_str_eq(p->nodes[0].name, "node-name");
    rf_problem_destroy(&p);
    rf_test_no_leaks();
}

/* ---------------------------------------------------------- builders */

Test(problem, builder_validates_like_the_reader)
{
    rf_problem_t *p = rf_problem_new();
    cr_assert_not_null(p);
    cr_assert_eq(p->n_resources, 1);
    cr_assert_str_eq(p->resources[0], "pods");
    cr_assert_eq(rf_problem_resource(p, "pods"), 0);
    /* interning grows past the first chunk and keeps indices stable */
    char name[32];
    for (int i = 1; i <= 40; i++) {
        snprintf(name, sizeof name, "example.com/r%d", i);
        cr_assert_eq(rf_problem_resource(p, name), i);
    }
    for (int i = 1; i <= 40; i++) {
        snprintf(name, sizeof name, "example.com/r%d", i);
        cr_assert_eq(rf_problem_resource(p, name), i);
        cr_assert_str_eq(p->resources[i], name);
    }
    int32_t gpu = rf_problem_resource(p, "nvidia.com/gpu");

    p->levels = rf_problem_alloc(p, 2 * sizeof *p->levels);
    p->levels[0] = rf_problem_strdup(p, "rack", 4);
    p->levels[1] = RF_HOSTNAME_LABEL;
    p->n_levels = 2;
    p->nodes = rf_problem_alloc(p, 3 * sizeof *p->nodes);
    p->n_nodes = 3;
    const char *names[] = {"c", "a", "b"};
    for (int i = 0; i < 3; i++)
        p->nodes[i].name = names[i];
    p->gangs = rf_problem_alloc(p, sizeof *p->gangs);
    p->n_gangs = 1;
    rf_gang_init(&p->gangs[0]);
    p->gangs[0].name = "g";
    p->gangs[0].pod_sets = rf_problem_alloc(p, sizeof *p->gangs[0].pod_sets);
    p->gangs[0].n_pod_sets = 1;
    rf_pod_set_t *ps = &p->gangs[0].pod_sets[0];
    rf_pod_set_init(ps);
    ps->name = "w";
    ps->count = 2;
    ps->requests = rf_problem_alloc(p, (size_t)p->n_resources * sizeof(int64_t));
    ps->requests[gpu] = 4;

    rf_error_t err;
    cr_assert_eq(rf_problem_validate(p, NULL, &err), RF_OK, "%s: %s", err.path, err.message);
    cr_assert_eq(ps->min_count, 2);
    cr_assert_eq(ps->requests[RF_RES_PODS], 1);
    cr_assert_eq(p->level_costs[0], 10.0);
    cr_assert_eq(p->level_costs[1], 1.0);
    cr_assert_eq(p->nodes[0].allocatable[RF_RES_PODS], RF_QTY_UNLIMITED);
    cr_assert_eq(p->options.value_resource, gpu);
    cr_assert_eq(rf_problem_node(p, "a"), 1);
    cr_assert_eq(rf_problem_node(p, "b"), 2);
    cr_assert_eq(rf_problem_node(p, "c"), 0);
    cr_assert_eq(rf_problem_node(p, "d"), -1);
    cr_assert_eq(rf_problem_node(p, ""), -1);

    /* a bad index from a builder gets a path too */
    ps->topology.required = 5;
    cr_assert_eq(rf_problem_validate(p, NULL, &err), RF_ESCHEMA);
    cr_assert_str_eq(err.path, "gangs[0].pod_sets[0].topology.required");
    ps->topology.required = -1;
    ps->requests[gpu] = -4;
    cr_assert_eq(rf_problem_validate(p, NULL, &err), RF_ESCHEMA);
    cr_assert_str_eq(err.path, "gangs[0].pod_sets[0].requests[\"nvidia.com/gpu\"]");
    cr_assert(strstr(err.message, "negative"));
    ps->requests[gpu] = 4;
    p->nodes[2].name = "a";
    cr_assert_eq(rf_problem_validate(p, NULL, &err), RF_ESCHEMA);
    cr_assert_str_eq(err.path, "cluster.nodes[2].name");
    p->nodes[2].name = "b";
    p->levels[0] = RF_HOSTNAME_LABEL;
    p->levels[1] = "rack";
    cr_assert_eq(rf_problem_validate(p, NULL, &err), RF_ESCHEMA);
    cr_assert_str_eq(err.path, "cluster.levels[0]");

    rf_problem_destroy(&p);
    rf_test_no_leaks();
}

Test(problem, builder_label_rules)
{
    rf_problem_t *p = rf_problem_new();
    p->levels = rf_problem_alloc(p, sizeof *p->levels);
    p->levels[0] = RF_HOSTNAME_LABEL;
    p->n_levels = 1;
    p->nodes = rf_problem_alloc(p, sizeof *p->nodes);
    p->n_nodes = 1;
    p->nodes[0].name = "n";
    rf_label_t labels[3] = {{"z", "1"}, {"a", "2"}, {"m", "3"}};
    p->nodes[0].labels = labels;
    p->nodes[0].n_labels = 3;
    rf_error_t err;
    cr_assert_eq(rf_problem_validate(p, NULL, &err), RF_OK, "%s: %s", err.path, err.message);
    cr_assert_str_eq(labels[0].key, "a");
    cr_assert_str_eq(labels[2].key, "z");
    labels[1].key = "a";
    cr_assert_eq(rf_problem_validate(p, NULL, &err), RF_ESCHEMA);
    cr_assert_str_eq(err.path, "cluster.nodes[0].labels.a");
    cr_assert(strstr(err.message, "duplicate key"));
    rf_problem_destroy(&p);
    rf_test_no_leaks();
}

/* Distinct pod shapes times nodes is bounded (the search keeps a table per
 * shape and node): with 3 nodes and max_shape_cells 7, two shapes pass and
 * the third distinct one is refused, naming its pod set; repeats are free. */
Test(problem, shape_cells_limit)
{
    rf_limits_t lim;
    rf_limits_default(&lim);
    lim.max_shape_cells = 7;
#define GPU_PS(n)  "{\"name\":\"w\",\"count\":1,\"requests\":{\"nvidia.com/gpu\":" #n "}}"
#define G(name, n) "{\"name\":\"" name "\",\"pod_sets\":[" GPU_PS(n) "]}"
    rf_problem_t *p = s_read_ok(PROBLEM(G("a", 1) "," G("b", 2) "," G("c", 1) "," G("d", 2)), &lim);
    rf_problem_destroy(&p);
    s_fails_lim(PROBLEM(G("a", 1) "," G("b", 2) "," G("c", 1) "," G("d", 3)), &lim, RF_ELIMIT, "gangs[3].pod_sets[0]",
                "max_shape_cells");
#undef G
#undef GPU_PS
    rf_test_no_leaks();
}

/* ------------------------------------------- running gangs and preemption */

/* A running gang of 8-GPU pods named `name`, priority `prio`, on `nodes` (a
 * JSON placement list). */
#define RUN(name, prio, extra, placements)                                                                             \
    "{\"name\":\"" name "\",\"priority\":" #prio extra ",\"pod_sets\":[{\"name\":\"w\","                               \
    "\"requests\":{\"nvidia.com/gpu\":8},\"placements\":[" placements "]}]}"
#define AT(node, n) "{\"node\":\"" node "\",\"count\":" #n "}"
#define ONE_GANG    "[{\"name\":\"g\",\"priority\":9,\"pod_sets\":[{\"name\":\"w\",\"count\":1}]}]"

static const int s_full4[8] = {8, 8, 8, 8, 0, 0, 0, 0};

/* Reads `running` over the fixture (h-0..h-3 fully used) and expects an
 * error at `path` whose message holds `fragment`. */
static void s_running_fails(const int *used, const char *running, const char *options, const char *path,
                            const char *fragment)
{
    char *json = rf_test_preempt_json(used ? used : s_full4, running, ONE_GANG, options);
    s_fails(json, path, fragment);
    free(json);
}

Test(problem, running_gangs_land_with_defaults_and_constants)
{
    char *json = rf_test_preempt_json(
        s_full4,
        "[" RUN("low", 0, "", AT("h-0", 1) "," AT("h-1", 1)) "," RUN(
            "prot", 3, ",\"preemptible\":false,\"bandwidth\":2", AT("h-2", 1) "," AT("h-3", 1)) "]",
        ONE_GANG, NULL);
    rf_problem_t *p = s_read_ok(json, NULL);
    free(json);
    cr_assert_eq(p->n_running, 2);
    cr_assert_eq(p->options.preemption, RF_PREEMPT_LOWER_PRIORITY);
    const rf_running_t *low = &p->running[0], *prot = &p->running[1];
    cr_assert_str_eq(low->name, "low");
    cr_assert_eq(low->priority, 0);
    cr_assert_float_eq(low->bandwidth, 1.0, 1e-12);
    cr_assert(low->preemptible);
    cr_assert_eq(low->n_pod_sets, 1);
    cr_assert_eq(low->pod_sets[0].n_placements, 2);
    cr_assert_eq(low->pod_sets[0].placements[1].node, rf_problem_node(p, "h-1"));
    cr_assert_eq(low->pod_sets[0].n_pods, 2);
    cr_assert_eq(low->pod_sets[0].requests[RF_RES_PODS], 1);
    /* constants: 16 GPUs, 2 pods, one rack and two hosts: penalty 1 */
    cr_assert_eq(low->units, 16);
    cr_assert_eq(low->pods, 2);
    cr_assert_eq(low->domains[0], 1);
    cr_assert_eq(low->domains[1], 2);
    cr_assert_float_eq(low->penalty, 1.0, 1e-12);
    cr_assert_eq(prot->priority, 3);
    cr_assert(!prot->preemptible);
    cr_assert_float_eq(prot->penalty, 2.0, 1e-12); /* bandwidth 2 */
    rf_problem_destroy(&p);

    /* across racks: 2 racks, 2 hosts: 10 + 1 */
    int used[8] = {8, 0, 0, 0, 8, 0, 0, 0};
    json = rf_test_preempt_json(used, "[" RUN("x", 0, "", AT("h-0", 1) "," AT("h-4", 1)) "]", ONE_GANG,
                                "{\"preemption\":\"never\"}");
    p = s_read_ok(json, NULL);
    free(json);
    cr_assert_float_eq(p->running[0].penalty, 11.0, 1e-12);
    cr_assert_eq(p->options.preemption, RF_PREEMPT_NEVER);
    rf_problem_destroy(&p);
    rf_test_no_leaks();
}

Test(problem, running_strict_keys_and_shapes)
{
    s_running_fails(NULL, "[" RUN("a", 0, ",\"colour\":1", AT("h-0", 1)) "]", NULL, "running[0].colour", "unknown key");
    s_running_fails(NULL, "[" RUN("a", 0, ",\"topology\":{\"required\":\"example.com/rack\"}", AT("h-0", 1)) "]", NULL,
                    "running[0].topology", "running gang");
    const char *forbidden[] = {"count", "min_count", "node_selector", "tolerations", "topology", "slice", "bound"};
    for (size_t i = 0; i < sizeof forbidden / sizeof *forbidden; i++) {
        char running[512], path[128];
        snprintf(running, sizeof running,
                 "[{\"name\":\"a\",\"pod_sets\":[{\"name\":\"w\",\"%s\":1,\"placements\":[" AT("h-0", 1) "]}]}]",
                 forbidden[i]);
        snprintf(path, sizeof path, "running[0].pod_sets[0].%s", forbidden[i]);
        s_running_fails(NULL, running, NULL, path, "must not be given for a running gang");
    }
    s_running_fails(NULL, "[" RUN("a", 0, "", "{\"node\":\"h-0\",\"count\":1,\"ranks\":[0]}") "]", NULL,
                    "running[0].pod_sets[0].placements[0].ranks", "running gang");
    s_running_fails(NULL, "[" RUN("a", 0, "", "{\"node\":\"h-0\",\"count\":1,\"x\":0}") "]", NULL,
                    "running[0].pod_sets[0].placements[0].x", "unknown key");
    s_running_fails(NULL, "[" RUN("a", 0, ",\"preemptible\":\"no\"", AT("h-0", 1)) "]", NULL, "running[0].preemptible",
                    "boolean");
    s_running_fails(NULL, "[{\"pod_sets\":[]}]", NULL, "running[0].name", "is required");
    s_running_fails(NULL, "[{\"name\":\"a\",\"pod_sets\":[]}]", NULL, "running[0].pod_sets", "at least one pod set");
    s_running_fails(NULL, "[{\"name\":\"a\"}]", NULL, "running[0].pod_sets", "is required");
    s_running_fails(NULL, "[{\"name\":\"a\",\"pod_sets\":[{\"name\":\"w\",\"placements\":[]}]}]", NULL,
                    "running[0].pod_sets[0].placements", "at least one placement");
    s_running_fails(NULL, "[{\"name\":\"a\",\"pod_sets\":[{\"name\":\"w\"}]}]", NULL,
                    "running[0].pod_sets[0].placements", "is required");
    s_running_fails(NULL, "[" RUN("a", 0, "", AT("h-0", 0)) "]", NULL, "running[0].pod_sets[0].placements[0].count",
                    ">= 1");
    s_running_fails(NULL, "[" RUN("a", 0, "", "{\"node\":\"h-0\"}") "]", NULL,
                    "running[0].pod_sets[0].placements[0].count", "is required");
    s_running_fails(NULL, "[" RUN("a", 0, "", AT("h-9", 1)) "]", NULL, "running[0].pod_sets[0].placements[0].node",
                    "unknown node \"h-9\"");
    s_running_fails(NULL, "[" RUN("a", 0, "", AT("h-0", 1) "," AT("h-1", 1) "," AT("h-0", 1)) "]", NULL,
                    "running[0].pod_sets[0].placements[2].node", "already listed in placements[0]");
    s_running_fails(NULL,
                    "[{\"name\":\"a\",\"pod_sets\":[{\"name\":\"w\",\"requests\":{\"pods\":1},\"placements\":[" AT(
                        "h-0", 1) "]}]}]",
                    NULL, "running[0].pod_sets[0].requests.pods", "must not be given");
    s_running_fails(NULL, "{}", NULL, "running", "must be an array");
    s_running_fails(NULL, "[" RUN("a", 0, "", AT("h-0", 1)) "]", "{\"preemption\":\"always\"}", "options.preemption",
                    "lower_priority or never");
    rf_test_no_leaks();
}

Test(problem, running_names_unique_with_gangs)
{
    s_running_fails(NULL, "[" RUN("g", 0, "", AT("h-0", 1)) "]", NULL, "running[0].name", "also gangs[0]");
    s_running_fails(NULL, "[" RUN("a", 0, "", AT("h-0", 1)) "," RUN("a", 0, "", AT("h-1", 1)) "]", NULL,
                    "running[1].name", "also running[0]");
    s_running_fails(NULL,
                    "[{\"name\":\"a\",\"pod_sets\":[{\"name\":\"w\",\"placements\":[" AT(
                        "h-0", 1) "]},{\"name\":\"w\",\"placements\":[" AT("h-1", 1) "]}]}]",
                    NULL, "running[0].pod_sets[1].name", "duplicate name");
    rf_test_no_leaks();
}

/* `used` must hold the bound pods and the running gangs listed so far. */
Test(problem, running_gangs_must_fit_in_used)
{
    /* h-0 uses 8: one 8-GPU pod fits, a second running gang there does not */
    s_running_fails(NULL, "[" RUN("a", 0, "", AT("h-0", 1)) "," RUN("b", 0, "", AT("h-1", 1) "," AT("h-0", 1)) "]",
                    NULL, "running[1].pod_sets[0].placements[1]", "more than its used (8)");
    /* two pods on a node that uses 8 */
    s_running_fails(NULL, "[" RUN("a", 0, "", AT("h-2", 2)) "]", NULL, "running[0].pod_sets[0].placements[0]",
                    "nvidia.com/gpu 16");
    /* a node that uses nothing */
    s_running_fails(NULL, "[" RUN("a", 0, "", AT("h-5", 1)) "]", NULL, "running[0].pod_sets[0].placements[0]", "h-5");
    /* bound pods come first */
    char *json = rf_test_preempt_json(s_full4, "[" RUN("a", 0, "", AT("h-0", 1)) "]",
                                      "[{\"name\":\"g\",\"pod_sets\":[{\"name\":\"w\",\"count\":2,\"requests\":{"
                                      "\"nvidia.com/gpu\":4},\"bound\":[{\"node\":\"h-0\",\"count\":1}]}]}]",
                                      NULL);
    s_fails(json, "running[0].pod_sets[0].placements[0]", "bound pods");
    free(json);
    /* with room for both, it reads */
    int used[8] = {16, 8, 8, 8, 0, 0, 0, 0};
    json = rf_test_preempt_json(used, "[" RUN("a", 0, "", AT("h-0", 1)) "," RUN("b", 0, "", AT("h-0", 1)) "]", ONE_GANG,
                                NULL);
    rf_problem_t *p = s_read_ok(json, NULL);
    free(json);
    rf_problem_destroy(&p);
    rf_test_no_leaks();
}

/* A batch with running gangs against a stored cluster (rackfitd's path):
 * they name the cluster's nodes and must fit in its used; the cluster is
 * only read. */
Test(problem, running_gangs_in_a_batch_on_a_stored_cluster)
{
    char *json = rf_test_preempt_json(s_full4, "[]", "[]", NULL);
    rf_problem_t *cluster = s_read_ok(json, NULL);
    free(json);
    const char *batches[2] = {"{\"gangs\":" ONE_GANG ",\"running\":[" RUN(
                                  "a", 0, "", AT("h-0", 1) "," AT("h-3", 1)) "],"
                                                                             "\"options\":{\"preemption\":\"never\"}}",
                              "{\"gangs\":" ONE_GANG ",\"running\":[" RUN("a", 0, "", AT("h-4", 1)) "]}"};
    for (int i = 0; i < 2; i++) {
        rf__arena_t *arena = rf__arena_new(0);
        rf_doc_t *doc = NULL;
        rf_error_t err;
        cr_assert_eq(rf__json_parse(batches[i], strlen(batches[i]), NULL, arena, &doc, &err), RF_OK);
        rf_problem_t *p = NULL;
        rf_status st = rf_problem_from_doc_on(doc, NULL, cluster, NULL, &p, &err);
        if (i == 0) {
            cr_assert_eq(st, RF_OK, "%s: %s", err.path, err.message);
            cr_assert_eq(p->n_running, 1);
            cr_assert_eq(p->running[0].pod_sets[0].placements[1].node, rf_problem_node(cluster, "h-3"));
            cr_assert_eq(p->options.preemption, RF_PREEMPT_NEVER);
            cr_assert_float_eq(p->running[0].penalty, 1.0, 1e-12);
            rf_problem_destroy(&p);
        } else {
            cr_assert_eq(st, RF_ESCHEMA);
            cr_assert_str_eq(err.path, "running[0].pod_sets[0].placements[0]");
            cr_assert_null(p);
        }
        rf__arena_destroy(&arena);
    }
    cr_assert_eq(cluster->n_running, 0); /* untouched */
    rf_problem_destroy(&cluster);
    rf_test_no_leaks();
}
