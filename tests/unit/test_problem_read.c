/* tests/unit/test_problem_read.c: the strict schema reader
 * (solver/problem_read.c) on its own: for each kind of field (required,
 * optional, list, enum, level, node reference, count, quantity map) the
 * status, the contract path and the message of its errors; null read as
 * absent; the reader's limits (max_gangs, max_string, max_resources,
 * including options.value_resource); rf_problem_from_doc_on's fast path
 * (the stored cluster's nodes lent) and rare path (copied), leaving the
 * cluster untouched; and the argument errors of the entry points.
 * Whole-problem rules (rf_problem_validate) are test_problem's. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../support/leak.h"
#include "arena.h"
#include "doc.h"
#include "json.h"
#include "rackfit/rackfit.h"

/* Two hosts in one rack, then `gangs` and `rest` (more root keys, with
 * their leading comma, or ""). The cluster's nodes take `node_extra`
 * (keys with a leading comma, or "") on h0. */
static char *s_json3(const char *node_extra, const char *gangs, const char *rest)
{
    size_t cap = strlen(node_extra) + strlen(gangs) + strlen(rest) + 1024;
    char *b = malloc(cap);
    cr_assert_not_null(b);
    int n = snprintf(b, cap,
                     "{\"cluster\":{\"levels\":[\"rack\",\"host\"],\"nodes\":["
                     "{\"name\":\"h0\",\"labels\":{\"rack\":\"r0\",\"host\":\"h0\"},"
                     "\"allocatable\":{\"nvidia.com/gpu\":8,\"cpu\":\"64\"}%s},"
                     "{\"name\":\"h1\",\"labels\":{\"rack\":\"r0\",\"host\":\"h1\"},"
                     "\"allocatable\":{\"nvidia.com/gpu\":8,\"cpu\":\"64\"}}]},"
                     "\"gangs\":%s%s}",
                     node_extra, gangs, rest);
    cr_assert(n > 0 && (size_t)n < cap);
    return b;
}

static char *s_json(const char *gangs, const char *rest)
{
    return s_json3("", gangs, rest);
}

/* A gang `g` with one pod set `w` of `count` pods and `ps_extra` keys. */
#define GANG1(ps_extra) "[{\"name\":\"g\",\"pod_sets\":[{\"name\":\"w\",\"count\":2" ps_extra "}]}]"

static rf_status s_read(const char *json, const rf_limits_t *lim, rf_problem_t **p, rf_error_t *err)
{
    *p = NULL;
    return rf_problem_from_json(json, strlen(json), lim, p, err);
}

/* The problem fails with `code` at `path`, its message holding `msg`. */
static void s_fails(char *json, const rf_limits_t *lim, rf_status code, const char *path, const char *msg)
{
    rf_problem_t *p = NULL;
    rf_error_t err;
    rf_status st = s_read(json, lim, &p, &err);
    cr_assert_eq(st, code, "%s: got %d at %s: %s", json, (int)st, err.path, err.message);
    cr_assert_eq(err.code, code);
    cr_assert_str_eq(err.path, path, "%s: message %s", json, err.message);
    cr_assert(strstr(err.message, msg), "%s: at %s: \"%s\" lacks \"%s\"", json, err.path, err.message, msg);
    cr_assert_null(p);
    free(json);
}

static rf_problem_t *s_reads(char *json)
{
    rf_problem_t *p = NULL;
    rf_error_t err;
    cr_assert_eq(s_read(json, NULL, &p, &err), RF_OK, "%s: %s: %s", json, err.path, err.message);
    free(json);
    return p;
}

Test(problem_read, required_fields_say_is_required_at_their_path)
{
    s_fails(strdup("{\"gangs\":[]}"), NULL, RF_ESCHEMA, "cluster", "is required");
    s_fails(strdup("{\"cluster\":{\"nodes\":[]},\"gangs\":[]}"), NULL, RF_ESCHEMA, "cluster.levels", "is required");
    s_fails(strdup("{\"cluster\":{\"levels\":[\"host\"]},\"gangs\":[]}"), NULL, RF_ESCHEMA, "cluster.nodes",
            "is required");
    s_fails(strdup("{\"cluster\":{\"levels\":[\"host\"],\"nodes\":[]}}"), NULL, RF_ESCHEMA, "gangs", "is required");
    s_fails(s_json("[{\"pod_sets\":[]}]", ""), NULL, RF_ESCHEMA, "gangs[0].name", "is required");
    s_fails(s_json("[{\"name\":\"g\"}]", ""), NULL, RF_ESCHEMA, "gangs[0].pod_sets", "is required");
    s_fails(s_json("[{\"name\":\"g\",\"pod_sets\":[{\"name\":\"w\"}]}]", ""), NULL, RF_ESCHEMA,
            "gangs[0].pod_sets[0].count", "is required");
    s_fails(s_json(GANG1(",\"slice\":{\"size\":2}"), ""), NULL, RF_ESCHEMA, "gangs[0].pod_sets[0].slice.required",
            "is required");
    s_fails(s_json3(",\"taints\":[{\"key\":\"k\"}]", "[]", ""), NULL, RF_ESCHEMA, "cluster.nodes[0].taints[0].effect",
            "is required");
    s_fails(s_json(GANG1(",\"bound\":[{\"count\":1}]"), ""), NULL, RF_ESCHEMA, "gangs[0].pod_sets[0].bound[0].node",
            "is required");
    rf_test_no_leaks();
}

Test(problem_read, lists_empty_or_too_long)
{
    s_fails(s_json("[{\"name\":\"g\",\"pod_sets\":[]}]", ""), NULL, RF_ESCHEMA, "gangs[0].pod_sets",
            "must list at least one pod set");
    s_fails(s_json("[]", ",\"running\":[{\"name\":\"r\",\"pod_sets\":[{\"name\":\"w\",\"placements\":[]}]}]"), NULL,
            RF_ESCHEMA, "running[0].pod_sets[0].placements", "must list at least one placement");
    s_fails(s_json("[]", ",\"running\":[{\"name\":\"r\",\"pod_sets\":[]}]"), NULL, RF_ESCHEMA, "running[0].pod_sets",
            "must list at least one pod set");
    s_fails(strdup("{\"cluster\":{\"levels\":[],\"nodes\":[]},\"gangs\":[]}"), NULL, RF_ESCHEMA, "cluster.levels",
            "must list 1 to 16 levels, not 0");
    s_fails(s_json("{}", ""), NULL, RF_ESCHEMA, "gangs", "must be an array, not a map");

    rf_limits_t lim;
    rf_limits_default(&lim);
    lim.max_gangs = 1;
    s_fails(s_json("[{\"name\":\"a\",\"pod_sets\":[{\"name\":\"w\",\"count\":1}]},"
                   "{\"name\":\"b\",\"pod_sets\":[{\"name\":\"w\",\"count\":1}]}]",
                   ""),
            &lim, RF_ELIMIT, "gangs", "has 2 entries, more than max_gangs (1)");
    rf_limits_default(&lim);
    lim.max_taints = 1;
    s_fails(s_json(GANG1(",\"tolerations\":[{\"key\":\"a\"},{\"key\":\"b\"}]"), ""), &lim, RF_ELIMIT,
            "gangs[0].pod_sets[0].tolerations", "more than max_taints (1)");
    rf_test_no_leaks();
}

Test(problem_read, scalars_by_type_and_range)
{
    s_fails(s_json("[{\"name\":\"\",\"pod_sets\":[{\"name\":\"w\",\"count\":1}]}]", ""), NULL, RF_ESCHEMA,
            "gangs[0].name", "must not be empty");
    s_fails(s_json("[{\"name\":\"g\",\"priority\":\"high\",\"pod_sets\":[{\"name\":\"w\",\"count\":1}]}]", ""), NULL,
            RF_ESCHEMA, "gangs[0].priority", "must be an integer, not a string");
    s_fails(s_json("[{\"name\":\"g\",\"bandwidth\":-1,\"pod_sets\":[{\"name\":\"w\",\"count\":1}]}]", ""), NULL,
            RF_ESCHEMA, "gangs[0].bandwidth", "must be a finite number >= 0");
    s_fails(s_json("[{\"name\":\"g\",\"pod_sets\":[{\"name\":\"w\",\"count\":0}]}]", ""), NULL, RF_ESCHEMA,
            "gangs[0].pod_sets[0].count", "must be >= 1");
    s_fails(s_json(GANG1(",\"min_count\":-1"), ""), NULL, RF_ESCHEMA, "gangs[0].pod_sets[0].min_count", "must be >= 0");
    s_fails(s_json(GANG1(",\"slice\":{\"size\":0,\"required\":\"host\"}"), ""), NULL, RF_ESCHEMA,
            "gangs[0].pod_sets[0].slice.size", "must be > 0");
    s_fails(s_json3(",\"unschedulable\":1", "[]", ""), NULL, RF_ESCHEMA, "cluster.nodes[0].unschedulable",
            "must be a boolean, not an integer");
    s_fails(s_json("[]", ",\"options\":{\"threads\":-1}"), NULL, RF_ESCHEMA, "options.threads", "must be >= 0");
    s_fails(s_json("[]", ",\"options\":{\"threads\":4294967296}"), NULL, RF_ESCHEMA, "options.threads",
            "must be <= 2147483647");
    s_fails(s_json("[]", ",\"options\":{\"value_resource\":\"\"}"), NULL, RF_ESCHEMA, "options.value_resource",
            "must not be empty");
    rf_test_no_leaks();
}

Test(problem_read, enums_levels_and_node_references)
{
    s_fails(s_json("[]", ",\"options\":{\"mode\":\"fast\"}"), NULL, RF_ESCHEMA, "options.mode",
            "must be greedy, ilp or auto, not \"fast\"");
    s_fails(s_json("[]", ",\"options\":{\"preemption\":\"always\"}"), NULL, RF_ESCHEMA, "options.preemption",
            "must be lower_priority or never");
    s_fails(s_json(GANG1(",\"tolerations\":[{\"operator\":\"Maybe\"}]"), ""), NULL, RF_ESCHEMA,
            "gangs[0].pod_sets[0].tolerations[0].operator", "must be Equal or Exists, not \"Maybe\"");
    s_fails(s_json3(",\"taints\":[{\"key\":\"k\",\"effect\":\"\"}]", "[]", ""), NULL, RF_ESCHEMA,
            "cluster.nodes[0].taints[0].effect", "must be NoSchedule, PreferNoSchedule or NoExecute, not \"\"");
    s_fails(
        s_json("[{\"name\":\"g\",\"topology\":{\"required\":\"zone\"},\"pod_sets\":[{\"name\":\"w\",\"count\":1}]}]",
               ""),
        NULL, RF_ESCHEMA, "gangs[0].topology.required", "unknown level \"zone\" (not in cluster.levels)");
    s_fails(s_json(GANG1(",\"bound\":[{\"node\":\"h9\",\"count\":1}]"), ""), NULL, RF_ESCHEMA,
            "gangs[0].pod_sets[0].bound[0].node", "unknown node \"h9\" (not in cluster.nodes)");
    s_fails(s_json("[]", ",\"running\":[{\"name\":\"r\",\"pod_sets\":[{\"name\":\"w\",\"placements\":"
                         "[{\"node\":\"h9\",\"count\":1}]}]}]"),
            NULL, RF_ESCHEMA, "running[0].pod_sets[0].placements[0].node", "unknown node \"h9\"");
    s_fails(s_json("[]", ",\"running\":[{\"name\":\"r\",\"pod_sets\":[{\"name\":\"w\",\"placements\":"
                         "[{\"node\":\"h0\",\"count\":0}]}]}]"),
            NULL, RF_ESCHEMA, "running[0].pod_sets[0].placements[0].count", "must be >= 1");
    rf_test_no_leaks();
}

Test(problem_read, bound_count_and_ranks)
{
    s_fails(s_json(GANG1(",\"bound\":[{\"node\":\"h0\"}]"), ""), NULL, RF_ESCHEMA, "gangs[0].pod_sets[0].bound[0]",
            "needs count or ranks");
    s_fails(s_json(GANG1(",\"bound\":[{\"node\":\"h0\",\"count\":0}]"), ""), NULL, RF_ESCHEMA,
            "gangs[0].pod_sets[0].bound[0].count", "must be > 0");
    s_fails(s_json(GANG1(",\"bound\":[{\"node\":\"h0\",\"count\":3,\"ranks\":[0,1]}]"), ""), NULL, RF_ESCHEMA,
            "gangs[0].pod_sets[0].bound[0].ranks", "lists 2 ranks, but count is 3");
    s_fails(s_json(GANG1(",\"bound\":[{\"node\":\"h0\",\"ranks\":[]}]"), ""), NULL, RF_ESCHEMA,
            "gangs[0].pod_sets[0].bound[0].ranks", "must not be empty");
    s_fails(s_json(GANG1(",\"bound\":[{\"node\":\"h0\",\"ranks\":[1,-1]}]"), ""), NULL, RF_ESCHEMA,
            "gangs[0].pod_sets[0].bound[0].ranks[1]", "must be >= 0");

    /* ranks alone give the count; both agree when both are given */
    rf_problem_t *p = s_reads(s_json(GANG1(",\"bound\":[{\"node\":\"h1\",\"ranks\":[1,0]}]"), ""));
    const rf_bound_t *b = &p->gangs[0].pod_sets[0].bound[0];
    cr_assert_eq(b->node, 1);
    cr_assert_eq(b->count, 2);
    cr_assert_eq(b->ranks[0], 1);
    cr_assert_eq(b->ranks[1], 0);
    rf_problem_destroy(&p);
    p = s_reads(s_json(GANG1(",\"bound\":[{\"node\":\"h0\",\"count\":1,\"ranks\":[1]}]"), ""));
    cr_assert_eq(p->gangs[0].pod_sets[0].bound[0].count, 1);
    rf_problem_destroy(&p);
    rf_test_no_leaks();
}

Test(problem_read, quantities_and_requests)
{
    s_fails(s_json(GANG1(",\"requests\":{\"pods\":1}"), ""), NULL, RF_ESCHEMA, "gangs[0].pod_sets[0].requests.pods",
            "must not be given: every pod uses pods: 1");
    s_fails(s_json(GANG1(",\"requests\":{\"cpu\":true}"), ""), NULL, RF_ESCHEMA, "gangs[0].pod_sets[0].requests.cpu",
            "must be a quantity (a number or a string), not a boolean");
    s_fails(s_json3(",\"used\":{\"\":1}", "[]", ""), NULL, RF_ESCHEMA, "cluster.nodes[0].used[\"\"]",
            "a resource name must not be empty");
    s_fails(s_json(GANG1(",\"node_selector\":{\"\":\"x\"}"), ""), NULL, RF_ESCHEMA,
            "gangs[0].pod_sets[0].node_selector[\"\"]", "a label key must not be empty");

    /* requests: pods is 1, the named ones read, others 0; running pod sets alike */
    rf_problem_t *p = s_reads(s_json3(
        ",\"used\":{\"nvidia.com/gpu\":2,\"pods\":1}", GANG1(",\"requests\":{\"nvidia.com/gpu\":4,\"cpu\":\"500m\"}"),
        ",\"running\":[{\"name\":\"r\",\"pod_sets\":[{\"name\":\"w\",\"requests\":{\"nvidia.com/gpu\":2},"
        "\"placements\":[{\"node\":\"h0\",\"count\":1}]}]}]"));
    int32_t gpu = -1, cpu = -1;
    for (int32_t k = 0; k < p->n_resources; k++) {
        if (strcmp(p->resources[k], "nvidia.com/gpu") == 0)
            gpu = k;
        if (strcmp(p->resources[k], "cpu") == 0)
            cpu = k;
    }
    cr_assert(gpu > 0 && cpu > 0);
    const int64_t *q = p->gangs[0].pod_sets[0].requests;
    cr_assert_eq(q[RF_RES_PODS], 1);
    cr_assert_eq(q[gpu], 4);
    cr_assert_eq(q[cpu], 500); /* cpu in millicores */
    const int64_t *rq = p->running[0].pod_sets[0].requests;
    cr_assert_eq(rq[RF_RES_PODS], 1);
    cr_assert_eq(rq[gpu], 2);
    cr_assert_eq(rq[cpu], 0);
    cr_assert_eq(p->nodes[0].allocatable[RF_RES_PODS], RF_QTY_UNLIMITED);
    rf_problem_destroy(&p);
    rf_test_no_leaks();
}

Test(problem_read, null_is_absent_and_defaults_stay)
{
    rf_problem_t *p = s_reads(s_json3(",\"taints\":null,\"unschedulable\":null",
                                      "[{\"name\":\"g\",\"priority\":null,\"bandwidth\":null,\"topology\":null,"
                                      "\"pod_sets\":[{\"name\":\"w\",\"count\":3,\"min_count\":null,\"slice\":null,"
                                      "\"tolerations\":[{\"key\":null,\"operator\":\"Exists\",\"effect\":null}]}]}]",
                                      ",\"running\":null,\"options\":{\"mode\":null,\"threads\":2}"));
    const rf_gang_t *g = &p->gangs[0];
    cr_assert_eq(g->priority, 0);
    cr_assert_float_eq(g->bandwidth, 1.0, 0);
    cr_assert_eq(g->topology.required, -1);
    cr_assert_eq(g->pod_sets[0].count, 3);
    cr_assert_eq(g->pod_sets[0].min_count, 3); /* validate: absent means count */
    cr_assert_eq(g->pod_sets[0].slice.size, 0);
    cr_assert_eq(g->pod_sets[0].n_tolerations, 1);
    cr_assert_str_eq(g->pod_sets[0].tolerations[0].key, "");
    cr_assert_eq(g->pod_sets[0].tolerations[0].op, RF_TOL_EXISTS);
    cr_assert_eq(g->pod_sets[0].tolerations[0].effect, RF_EFFECT_NONE);
    cr_assert_eq(p->nodes[0].n_taints, 0);
    cr_assert(!p->nodes[0].unschedulable);
    cr_assert_eq(p->n_running, 0);
    cr_assert_eq(p->options.mode, RF_MODE_AUTO);
    cr_assert_eq(p->options.threads, 2);
    rf_problem_destroy(&p);
    rf_test_no_leaks();
}

Test(problem_read, running_gangs_refuse_pending_keys_with_the_reason)
{
    s_fails(s_json("[]", ",\"running\":[{\"name\":\"r\",\"topology\":{},\"pod_sets\":[]}]"), NULL, RF_ESCHEMA,
            "running[0].topology", "must not be given for a running gang");
    s_fails(s_json("[]", ",\"running\":[{\"name\":\"r\",\"pod_sets\":[{\"name\":\"w\",\"count\":1,"
                         "\"placements\":[{\"node\":\"h0\",\"count\":1}]}]}]"),
            NULL, RF_ESCHEMA, "running[0].pod_sets[0].count", "must not be given for a running gang");
    s_fails(s_json("[]", ",\"running\":[{\"name\":\"r\",\"pod_sets\":[{\"name\":\"w\","
                         "\"placements\":[{\"node\":\"h0\",\"count\":1,\"ranks\":[0]}]}]}]"),
            NULL, RF_ESCHEMA, "running[0].pod_sets[0].placements[0].ranks", "must not be given for a running gang");
    s_fails(s_json("[]", ",\"running\":[{\"name\":\"r\",\"colour\":1,\"pod_sets\":[]}]"), NULL, RF_ESCHEMA,
            "running[0].colour", "unknown key");
    s_fails(s_json("[]", ",\"running\":[{\"name\":\"r\",\"preemptible\":\"no\",\"pod_sets\":[]}]"), NULL, RF_ESCHEMA,
            "running[0].preemptible", "must be a boolean, not a string");
    rf_test_no_leaks();
}

Test(problem_read, string_and_resource_limits)
{
    rf_limits_t lim;
    rf_limits_default(&lim);
    lim.max_string = 14; /* read from a document parsed with the default limits */
    rf__arena_t *arena = rf__arena_new(0);
    rf_doc_t *doc = NULL;
    rf_error_t err;
    char *json = s_json("[{\"name\":\"a-fifteen-bytes\",\"pod_sets\":[{\"name\":\"w\",\"count\":1}]}]", "");
    cr_assert_eq(rf__json_parse(json, strlen(json), NULL, arena, &doc, &err), RF_OK);
    rf_problem_t *p = NULL;
    cr_assert_eq(rf_problem_from_doc(doc, NULL, &lim, &p, &err), RF_ELIMIT);
    cr_assert_str_eq(err.path, "gangs[0].name");
    cr_assert_str_eq(err.message, "is 15 bytes, longer than max_string (14)");
    rf__arena_destroy(&arena);
    free(json);

    /* resources: pods, nvidia.com/gpu, cpu in the nodes; a fourth only in options.value_resource */
    rf_limits_default(&lim);
    lim.max_resources = 2;
    s_fails(s_json("[]", ""), &lim, RF_ELIMIT, "cluster.nodes[0].allocatable.cpu",
            "is resource number 3, more than max_resources (2)");
    lim.max_resources = 3;
    s_fails(s_json("[]", ",\"options\":{\"value_resource\":\"example.com/npu\"}"), &lim, RF_ELIMIT,
            "options.value_resource", "is resource number 4, more than max_resources (3)");
    s_fails(s_json(GANG1(",\"requests\":{\"example.com/npu\":1}"), ""), &lim, RF_ELIMIT,
            "gangs[0].pod_sets[0].requests[\"example.com/npu\"]", "more than max_resources (3)");
    lim.max_resources = 4;
    json = s_json("[]", ",\"options\":{\"value_resource\":\"example.com/npu\"}");
    cr_assert_eq(s_read(json, &lim, &p, &err), RF_OK, "%s: %s", err.path, err.message);
    cr_assert_eq(p->n_resources, 4);
    cr_assert_str_eq(p->options.value_resource_name, "example.com/npu");
    free(json);
    rf_problem_destroy(&p);
    rf_test_no_leaks();
}

/* --------------------------------------------- documents and batches */

static rf_doc_t *s_doc(rf__arena_t *arena, const char *json)
{
    rf_doc_t *doc = NULL;
    rf_error_t err;
    cr_assert_eq(rf__json_parse(json, strlen(json), NULL, arena, &doc, &err), RF_OK, "%s", err.message);
    return doc;
}

Test(problem_read, from_doc_copies_every_string_out_of_the_document)
{
    rf__arena_t *arena = rf__arena_new(0);
    char *json = s_json(GANG1(""), ",\"v\":1");
    rf_doc_t *doc = s_doc(arena, json);
    static const char *const extra[] = {"v", NULL};
    rf_problem_t *p = NULL;
    rf_error_t err;
    cr_assert_eq(rf_problem_from_doc(doc, NULL, NULL, &p, &err), RF_ESCHEMA);
    cr_assert_str_eq(err.path, "v");
    cr_assert_eq(rf_problem_from_doc(doc, extra, NULL, &p, &err), RF_OK, "%s: %s", err.path, err.message);
    rf__arena_destroy(&arena); /* the document goes; the problem keeps its own copies */
    free(json);
    cr_assert_str_eq(p->gangs[0].name, "g");
    cr_assert_str_eq(p->nodes[1].name, "h1");
    cr_assert_str_eq(p->levels[1], "host");
    cr_assert_str_eq(rf_node_label(&p->nodes[0], "rack"), "r0");
    rf_problem_destroy(&p);

    cr_assert_eq(rf_problem_from_doc(NULL, NULL, NULL, &p, &err), RF_EINVAL);
    cr_assert_str_eq(err.message, "no document");
    rf_test_no_leaks();
}

Test(problem_read, batch_on_a_stored_cluster_borrows_or_copies_its_nodes)
{
    char *json = s_json("[]", "");
    rf_problem_t *cluster = s_reads(json);
    int64_t gpu0 = cluster->nodes[0].allocatable[1];
    rf__arena_t *arena = rf__arena_new(0);

    /* no bound pods, no new resource: the cluster's nodes are lent */
    rf_problem_t *p = NULL;
    rf_error_t err;
    rf_doc_t *doc = s_doc(arena, "{\"gangs\":" GANG1(",\"requests\":{\"nvidia.com/gpu\":1}") "}");
    cr_assert_eq(rf_problem_from_doc_on(doc, NULL, cluster, NULL, &p, &err), RF_OK, "%s: %s", err.path, err.message);
    cr_assert_eq(p->nodes, cluster->nodes);
    cr_assert_eq(p->n_nodes, 2);
    cr_assert_eq(p->n_resources, cluster->n_resources);
    rf_problem_destroy(&p);

    /* bound pods: the nodes are copied (validate may touch them) */
    doc = s_doc(arena, "{\"gangs\":" GANG1(",\"bound\":[{\"node\":\"h1\",\"count\":1}]") "}");
    cr_assert_eq(rf_problem_from_doc_on(doc, NULL, cluster, NULL, &p, &err), RF_OK, "%s: %s", err.path, err.message);
    cr_assert_neq(p->nodes, cluster->nodes);
    cr_assert_eq(p->gangs[0].pod_sets[0].bound[0].node, 1);
    cr_assert_eq(p->nodes[0].allocatable[1], gpu0);
    rf_problem_destroy(&p);

    /* a resource the cluster does not know: copied at the longer length */
    doc = s_doc(arena, "{\"gangs\":" GANG1(",\"requests\":{\"example.com/npu\":1}") "}");
    cr_assert_eq(rf_problem_from_doc_on(doc, NULL, cluster, NULL, &p, &err), RF_OK, "%s: %s", err.path, err.message);
    cr_assert_eq(p->n_resources, cluster->n_resources + 1);
    cr_assert_neq(p->nodes, cluster->nodes);
    cr_assert_eq(p->nodes[0].allocatable[p->n_resources - 1], 0);
    rf_problem_destroy(&p);

    /* a batch holds no cluster; errors carry the batch's paths */
    doc = s_doc(arena, "{\"cluster\":{},\"gangs\":[]}");
    cr_assert_eq(rf_problem_from_doc_on(doc, NULL, cluster, NULL, &p, &err), RF_ESCHEMA);
    cr_assert_str_eq(err.path, "cluster");
    cr_assert_str_eq(err.message, "unknown key");
    doc = s_doc(arena, "{\"gangs\":" GANG1(",\"bound\":[{\"node\":\"h7\",\"count\":1}]") "}");
    cr_assert_eq(rf_problem_from_doc_on(doc, NULL, cluster, NULL, &p, &err), RF_ESCHEMA);
    cr_assert_str_eq(err.path, "gangs[0].pod_sets[0].bound[0].node");
    cr_assert_null(p);
    cr_assert_eq(rf_problem_from_doc_on(doc, NULL, NULL, NULL, &p, &err), RF_EINVAL);

    cr_assert_eq(cluster->n_gangs, 0); /* untouched throughout */
    cr_assert_eq(cluster->nodes[0].allocatable[1], gpu0);
    rf__arena_destroy(&arena);
    rf_problem_destroy(&cluster);
    rf_test_no_leaks();
}

Test(problem_read, json_entry_points_argument_and_size_errors)
{
    rf_problem_t *p = (rf_problem_t *)&p; /* set to NULL on every failure */
    rf_error_t err;
    cr_assert_eq(rf_problem_from_json(NULL, 0, NULL, &p, &err), RF_EINVAL);
    cr_assert_null(p);
    cr_assert_str_eq(err.message, "no text");
    cr_assert_eq(rf_problem_from_json_file(NULL, NULL, &p, &err), RF_EINVAL);
    cr_assert_str_eq(err.message, "no path");
    cr_assert_eq(rf_problem_from_json("{", 1, NULL, &p, &err), RF_EPARSE);

    char path[] = "/tmp/rf_test_problem_read_XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    char *json = s_json(GANG1(""), "");
    size_t len = strlen(json);
    cr_assert_eq(write(fd, json, len), (ssize_t)len);
    close(fd);
    rf_limits_t lim;
    rf_limits_default(&lim);
    lim.max_input_bytes = (int64_t)len - 1;
    cr_assert_eq(rf_problem_from_json_file(path, &lim, &p, &err), RF_ELIMIT);
    cr_assert(strstr(err.message, path), "%s", err.message);
    lim.max_input_bytes = (int64_t)len;
    cr_assert_eq(rf_problem_from_json_file(path, &lim, &p, &err), RF_OK, "%s", err.message);
    cr_assert_eq(p->n_gangs, 1);
    rf_problem_destroy(&p);
    unlink(path);
    free(json);
    rf_test_no_leaks();
}
