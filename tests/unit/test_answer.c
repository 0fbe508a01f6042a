/* tests/unit/test_answer.c: answers (solver/answer.c, solver/answer_json.c):
 * building, rf_answer_finish's domains/penalty/value, rf_answer_compare's
 * lexicographic objective, and the JSON round trip and reader errors. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../support/leak.h"
#include "../support/testutil.h"
#include "doc.h"
#include "rackfit/rackfit.h"

/* ------------------------------------------------------------------ */
/* Helpers                                                              */

static rf_problem_t *s_problem(const char *json)
{
    rf_limits_t lim;
    rf_limits_default(&lim);
    rf_problem_t *p = NULL;
    rf_error_t err;
    rf_error_clear(&err);
    rf_status rc = rf_problem_from_json(json, strlen(json), &lim, &p, &err);
    cr_assert_eq(rc, RF_OK, "problem: %s: %s", err.path, err.message);
    cr_assert_not_null(p);
    return p;
}

/* A cluster of `n` hosts h-<i>, `per_rack` per rack, `racks_per_block`
 * racks per block, 8 GPUs each, then `gangs` (a JSON array) and `options`
 * (a JSON map or NULL). malloc'ed. */
static char *s_json(int n, int per_rack, int racks_per_block, const char *gangs, const char *options)
{
    size_t cap = (size_t)n * 300 + strlen(gangs) + 1024;
    char *b = malloc(cap);
    cr_assert_not_null(b);
    size_t len = (size_t)snprintf(b, cap,
                                  "{\"cluster\":{\"levels\":[\"example.com/block\",\"example.com/rack\","
                                  "\"kubernetes.io/hostname\"],\"level_costs\":[100,10,1],\"nodes\":[");
    for (int i = 0; i < n; i++) {
        int rack = i / per_rack, block = rack / racks_per_block;
        len += (size_t)snprintf(b + len, cap - len,
                                "%s{\"name\":\"h-%d\",\"labels\":{\"example.com/block\":\"b%d\","
                                "\"example.com/rack\":\"r%d\",\"kubernetes.io/hostname\":\"h-%d\"},"
                                "\"allocatable\":{\"nvidia.com/gpu\":8,\"cpu\":\"96\",\"pods\":110}}",
                                i ? "," : "", i, block, rack, i);
    }
    len += (size_t)snprintf(b + len, cap - len, "]},\"gangs\":%s%s%s}", gangs, options ? ",\"options\":" : "",
                            options ? options : "");
    cr_assert_lt(len, cap);
    return b;
}

static rf_problem_t *s_problem_gen(int n, int per_rack, int racks_per_block, const char *gangs)
{
    char *j = s_json(n, per_rack, racks_per_block, gangs, NULL);
    rf_problem_t *p = s_problem(j);
    free(j);
    return p;
}

static int32_t s_node(const rf_problem_t *p, const char *name)
{
    int32_t n = rf_problem_node(p, name);
    cr_assert_geq(n, 0, "node %s", name);
    return n;
}

static void s_add(rf_answer_t *a, int32_t g, int32_t j, const char *node, int32_t count)
{
    cr_assert_eq(rf_answer_add(a, g, j, s_node(a->problem, node), count), RF_OK);
}

static rf_why_t s_no_why(void)
{
    rf_why_t w = {-1, -1, -1, -1};
    return w;
}

/* ------------------------------------------------------------------ */
/* Building                                                             */

Test(answer, new_admits_nothing)
{
    rf_problem_t *p =
        s_problem_gen(4, 4, 1,
                      "[{\"name\":\"a\",\"pod_sets\":[{\"name\":\"w\",\"count\":2}]},{\"name\":\"b\",\"priority\":3,"
                      "\"pod_sets\":[{\"name\":\"w\",\"count\":1}]}]");
    rf_answer_t *a = rf_answer_new(p);
    cr_assert_not_null(a);
    cr_assert_eq(a->n_gangs, 2);
    cr_assert(!a->gangs[0].admitted && !a->gangs[1].admitted);
    cr_assert_eq(a->summary.n_value, 2);
    cr_assert_eq(a->summary.value[0].priority, 3);
    cr_assert_eq(a->summary.value[1].priority, 0);
    cr_assert_eq(a->summary.penalty_bound, 0.0);
    cr_assert(!a->summary.optimal);
    rf_answer_destroy(&a);
    cr_assert_null(a);
    rf_answer_destroy(&a); /* NULL-safe */
    rf_problem_destroy(&p);
    rf_test_no_leaks();
}

Test(answer, add_merges_with_last_and_admits)
{
    rf_problem_t *p = s_problem_gen(4, 4, 1, "[{\"name\":\"a\",\"pod_sets\":[{\"name\":\"w\",\"count\":8}]}]");
    rf_answer_t *a = rf_answer_new(p);
    s_add(a, 0, 0, "h-0", 2);
    s_add(a, 0, 0, "h-0", 1);
    s_add(a, 0, 0, "h-1", 1);
    s_add(a, 0, 0, "h-0", 1); /* not last: a new entry */
    cr_assert(a->gangs[0].admitted);
    const rf_pod_set_answer_t *ps = &a->gangs[0].pod_sets[0];
    cr_assert_eq(ps->n_placements, 3);
    cr_assert_eq(ps->placements[0].count, 3);
    cr_assert_eq(ps->placements[1].count, 1);
    cr_assert_eq(ps->placements[2].node, s_node(p, "h-0"));
    cr_assert_eq(rf_answer_add(a, 0, 0, 0, 0), RF_OK); /* no-op */
    cr_assert_eq(ps->n_placements, 3);
    cr_assert_eq(rf_answer_add(a, 0, 1, 0, 1), RF_EINVAL);
    cr_assert_eq(rf_answer_add(a, 1, 0, 0, 1), RF_EINVAL);
    cr_assert_eq(rf_answer_add(a, 0, 0, 99, 1), RF_EINVAL);
    cr_assert_eq(rf_answer_add(a, 0, 0, 0, -1), RF_EINVAL);
    /* reject drops placements and keeps the reason */
    rf_why_t why = {1, -1, 3, 8};
    cr_assert_eq(rf_answer_reject(a, 0, why, "rack %s fits %d of %d", "r0", 3, 8), RF_OK);
    cr_assert(!a->gangs[0].admitted);
    cr_assert_eq(ps->n_placements, 0);
    cr_assert_str_eq(a->gangs[0].reason, "rack r0 fits 3 of 8");
    cr_assert_eq(a->gangs[0].why.needs, 8);
    /* adding again admits and clears the reason */
    s_add(a, 0, 0, "h-2", 1);
    cr_assert(a->gangs[0].admitted);
    cr_assert_null(a->gangs[0].reason);
    cr_assert_eq(a->gangs[0].why.level, -1);
    rf_answer_gang_reset(a, 0);
    cr_assert(!a->gangs[0].admitted);
    cr_assert_eq(ps->n_placements, 0);
    rf_answer_destroy(&a);
    rf_problem_destroy(&p);
    rf_test_no_leaks();
}

Test(answer, copy_is_deep_and_equal)
{
    rf_problem_t *p =
        s_problem_gen(8, 4, 1,
                      "[{\"name\":\"a\",\"pod_sets\":[{\"name\":\"w\",\"count\":4}]},"
                      "{\"name\":\"b\",\"pod_sets\":[{\"name\":\"x\",\"count\":1},{\"name\":\"y\",\"count\":1}]}]");
    rf_answer_t *a = rf_answer_new(p), *b = rf_answer_new(p);
    s_add(a, 0, 0, "h-0", 2);
    s_add(a, 0, 0, "h-5", 2);
    cr_assert_eq(rf_answer_reject(a, 1, s_no_why(), "no room"), RF_OK);
    s_add(b, 1, 0, "h-1", 1); /* to be overwritten */
    cr_assert_eq(rf_answer_finish(a), RF_OK);
    a->summary.mode_used = "greedy";
    cr_assert_eq(rf_answer_copy(b, a), RF_OK);
    cr_assert(b->gangs[0].admitted && !b->gangs[1].admitted);
    cr_assert_eq(b->gangs[0].pod_sets[0].n_placements, 2);
    cr_assert_eq(b->gangs[1].pod_sets[0].n_placements, 0);
    cr_assert_str_eq(b->gangs[1].reason, "no room");
    cr_assert_neq(b->gangs[1].reason, a->gangs[1].reason);
    cr_assert_eq(rf_answer_compare(a, b), 0);
    cr_assert_float_eq(b->summary.penalty, a->summary.penalty, 1e-12);
    cr_assert_str_eq(b->summary.mode_used, "greedy");
    rf_answer_destroy(&a);
    rf_answer_destroy(&b);
    rf_problem_destroy(&p);
    rf_test_no_leaks();
}

/* ------------------------------------------------------------------ */
/* Finish                                                               */

Test(answer, finish_worked_example_one_rack)
{
    /* 16 pods on 16 hosts of one rack in one block: domains [1,1,16],
     * penalty 15 at costs [100,10,1] */
    rf_problem_t *p = s_problem_gen(16, 16, 1,
                                    "[{\"name\":\"team-a/llama\",\"priority\":100,\"pod_sets\":[{\"name\":\"workers\","
                                    "\"count\":16,\"requests\":{\"nvidia.com/gpu\":8}}]}]");
    rf_answer_t *a = rf_answer_new(p);
    for (int i = 0; i < 16; i++) {
        char name[16];
        snprintf(name, sizeof name, "h-%d", i);
        s_add(a, 0, 0, name, 1);
    }
    cr_assert_eq(rf_answer_finish(a), RF_OK);
    const rf_gang_answer_t *g = &a->gangs[0];
    cr_assert_eq(g->domains[0], 1);
    cr_assert_eq(g->domains[1], 1);
    cr_assert_eq(g->domains[2], 16);
    cr_assert_float_eq(g->penalty, 15.0, 1e-12);
    cr_assert(g->has_domains && g->has_penalty);
    cr_assert_eq(a->summary.admitted, 1);
    cr_assert_eq(a->summary.rejected, 0);
    cr_assert_eq(a->summary.n_value, 1);
    cr_assert_eq(a->summary.value[0].priority, 100);
    cr_assert_eq(a->summary.value[0].units, 128);
    cr_assert_eq(a->summary.value[0].pods, 16);
    cr_assert_float_eq(a->summary.penalty, 15.0, 1e-12);
    rf_answer_destroy(&a);
    rf_problem_destroy(&p);
    rf_test_no_leaks();
}

Test(answer, finish_spread_bandwidth_and_bound_pods)
{
    /* 4 hosts per rack, 2 racks per block: h-0..3 r0 b0, h-4..7 r1 b0,
     * h-8..11 r2 b1. Bound pods count toward domains and value. */
    rf_problem_t *p = s_problem_gen(12, 4, 2,
                                    "[{\"name\":\"g\",\"priority\":5,\"bandwidth\":2.5,\"pod_sets\":["
                                    "{\"name\":\"w\",\"count\":4,\"requests\":{\"nvidia.com/gpu\":2},"
                                    "\"bound\":[{\"node\":\"h-8\",\"count\":1}]},"
                                    "{\"name\":\"ps\",\"count\":2,\"requests\":{\"cpu\":\"1\"}}]}]");
    rf_answer_t *a = rf_answer_new(p);
    s_add(a, 0, 0, "h-0", 2);
    s_add(a, 0, 0, "h-4", 1);
    s_add(a, 0, 1, "h-0", 2);
    cr_assert_eq(rf_answer_finish(a), RF_OK);
    const rf_gang_answer_t *g = &a->gangs[0];
    /* blocks {b0,b1}, racks {r0,r1,r2}, hosts {h-0,h-4,h-8} */
    cr_assert_eq(g->domains[0], 2);
    cr_assert_eq(g->domains[1], 3);
    cr_assert_eq(g->domains[2], 3);
    cr_assert_float_eq(g->penalty, 2.5 * (100 + 20 + 2), 1e-9);
    cr_assert_eq(a->summary.value[0].units, 4 * 2); /* 3 new + 1 bound, 2 GPUs each; the cpu pods add none */
    cr_assert_eq(a->summary.value[0].pods, 6);
    rf_answer_destroy(&a);
    rf_problem_destroy(&p);
    rf_test_no_leaks();
}

Test(answer, finish_lists_every_priority_highest_first)
{
    rf_problem_t *p = s_problem_gen(4, 4, 1,
                                    "[{\"name\":\"low\",\"priority\":-3,\"pod_sets\":[{\"name\":\"w\",\"count\":1,"
                                    "\"requests\":{\"nvidia.com/gpu\":1}}]},"
                                    "{\"name\":\"high\",\"priority\":100,\"pod_sets\":[{\"name\":\"w\",\"count\":1,"
                                    "\"requests\":{\"nvidia.com/gpu\":4}}]},"
                                    "{\"name\":\"mid\",\"priority\":7,\"pod_sets\":[{\"name\":\"w\",\"count\":1}]},"
                                    "{\"name\":\"high2\",\"priority\":100,\"pod_sets\":[{\"name\":\"w\",\"count\":2,"
                                    "\"requests\":{\"nvidia.com/gpu\":1}}]}]");
    rf_answer_t *a = rf_answer_new(p);
    s_add(a, 0, 0, "h-0", 1);
    s_add(a, 1, 0, "h-1", 1);
    s_add(a, 3, 0, "h-2", 2);
    cr_assert_eq(rf_answer_reject(a, 2, s_no_why(), "no"), RF_OK);
    cr_assert_eq(rf_answer_finish(a), RF_OK);
    const rf_summary_t *s = &a->summary;
    cr_assert_eq(s->n_value, 3);
    cr_assert_eq(s->value[0].priority, 100);
    cr_assert_eq(s->value[0].units, 6);
    cr_assert_eq(s->value[0].pods, 3);
    cr_assert_eq(s->value[1].priority, 7);
    cr_assert_eq(s->value[1].units, 0);
    cr_assert_eq(s->value[1].pods, 0);
    cr_assert_eq(s->value[2].priority, -3);
    cr_assert_eq(s->value[2].units, 1);
    cr_assert_eq(s->admitted, 3);
    cr_assert_eq(s->rejected, 1);
    cr_assert_eq(a->gangs[2].domains[0], 0);
    cr_assert_eq(a->gangs[2].penalty, 0.0);
    rf_answer_destroy(&a);
    rf_problem_destroy(&p);
    rf_test_no_leaks();
}

Test(answer, finish_domains_are_label_paths)
{
    /* rack r1 in block b1 and rack r1 in block b2 are two racks; a node
     * without a rack label is alone at the rack level and below, even if its
     * hostname label equals another's. */
    const char *json = "{\"cluster\":{\"levels\":[\"block\",\"rack\",\"host\"],\"nodes\":["
                       "{\"name\":\"a\",\"labels\":{\"block\":\"b1\",\"rack\":\"r1\",\"host\":\"x\"}},"
                       "{\"name\":\"b\",\"labels\":{\"block\":\"b2\",\"rack\":\"r1\",\"host\":\"x\"}},"
                       "{\"name\":\"c\",\"labels\":{\"block\":\"b1\",\"host\":\"y\"}},"
                       "{\"name\":\"d\",\"labels\":{\"block\":\"b1\",\"host\":\"y\"}},"
                       "{\"name\":\"e\",\"labels\":{\"block\":\"b1\",\"rack\":\"r1\",\"host\":\"x\"}}]},"
                       "\"gangs\":[{\"name\":\"g1\",\"pod_sets\":[{\"name\":\"w\",\"count\":2}]},"
                       "{\"name\":\"g2\",\"pod_sets\":[{\"name\":\"w\",\"count\":2}]},"
                       "{\"name\":\"g3\",\"pod_sets\":[{\"name\":\"w\",\"count\":2}]}]}";
    rf_problem_t *p = s_problem(json);
    cr_assert_float_eq(p->level_costs[0], 100.0, 1e-12); /* the default costs */
    rf_answer_t *a = rf_answer_new(p);
    s_add(a, 0, 0, "a", 1);
    s_add(a, 0, 0, "b", 1);
    s_add(a, 1, 0, "c", 1);
    s_add(a, 1, 0, "d", 1);
    s_add(a, 2, 0, "a", 1);
    s_add(a, 2, 0, "e", 1); /* same path b1/r1/x as a: one host domain */
    cr_assert_eq(rf_answer_finish(a), RF_OK);
    int32_t want[3][3] = {{2, 2, 2}, {1, 2, 2}, {1, 1, 1}};
    for (int g = 0; g < 3; g++)
        for (int l = 0; l < 3; l++)
            cr_assert_eq(a->gangs[g].domains[l], want[g][l], "gang %d level %d: %d", g, l, a->gangs[g].domains[l]);
    cr_assert_float_eq(a->gangs[0].penalty, 111.0, 1e-12);
    cr_assert_float_eq(a->gangs[1].penalty, 11.0, 1e-12);
    cr_assert_float_eq(a->gangs[2].penalty, 0.0, 1e-12);
    rf_answer_destroy(&a);
    rf_problem_destroy(&p);
    rf_test_no_leaks();
}

Test(answer, finish_leaves_solver_fields_alone)
{
    rf_problem_t *p = s_problem_gen(2, 2, 1, "[{\"name\":\"a\",\"pod_sets\":[{\"name\":\"w\",\"count\":2}]}]");
    rf_answer_t *a = rf_answer_new(p);
    s_add(a, 0, 0, "h-0", 1);
    s_add(a, 0, 0, "h-1", 1);
    a->summary.penalty_bound = 0.5;
    a->summary.optimal = true;
    a->summary.mode_used = "ilp";
    a->summary.solve_ms = 3.25;
    cr_assert_eq(rf_answer_finish(a), RF_OK);
    cr_assert_float_eq(a->summary.penalty, 1.0, 1e-12);
    cr_assert_eq(a->summary.penalty_bound, 0.5);
    cr_assert(a->summary.optimal);
    cr_assert_str_eq(a->summary.mode_used, "ilp");
    cr_assert_eq(a->summary.solve_ms, 3.25);
    /* a gang admitted on bound pods alone, with no new placement */
    rf_answer_gang_reset(a, 0);
    a->gangs[0].admitted = true;
    cr_assert_eq(rf_answer_finish(a), RF_OK);
    cr_assert_eq(a->gangs[0].domains[0], 0);
    cr_assert_eq(a->gangs[0].penalty, 0.0);
    cr_assert_eq(a->summary.admitted, 1);
    rf_answer_destroy(&a);
    rf_problem_destroy(&p);
    rf_test_no_leaks();
}

/* ------------------------------------------------------------------ */
/* Compare                                                              */

Test(answer, compare_is_lexicographic)
{
    rf_problem_t *p = s_problem_gen(16, 4, 2,
                                    "[{\"name\":\"hi\",\"priority\":10,\"pod_sets\":[{\"name\":\"w\",\"count\":4,"
                                    "\"min_count\":1,\"requests\":{\"nvidia.com/gpu\":8}}]},"
                                    "{\"name\":\"lo\",\"priority\":1,\"pod_sets\":[{\"name\":\"w\",\"count\":8,"
                                    "\"min_count\":1,\"requests\":{\"nvidia.com/gpu\":1}}]},"
                                    "{\"name\":\"cpu\",\"priority\":1,\"pod_sets\":[{\"name\":\"w\",\"count\":4,"
                                    "\"min_count\":1}]}]");
    rf_answer_t *a = rf_answer_new(p), *b = rf_answer_new(p);

    /* higher-priority value beats any penalty: a spreads "hi" over blocks */
    s_add(a, 0, 0, "h-0", 1);
    s_add(a, 0, 0, "h-8", 1);
    s_add(b, 0, 0, "h-0", 1);
    s_add(b, 1, 0, "h-1", 8);
    cr_assert_eq(rf_answer_finish(a), RF_OK);
    cr_assert_eq(rf_answer_finish(b), RF_OK);
    cr_assert_gt(a->summary.penalty, b->summary.penalty);
    cr_assert_lt(rf_answer_compare(a, b), 0);
    cr_assert_gt(rf_answer_compare(b, a), 0);

    /* same high value; at priority 1, units beat pods */
    rf_answer_gang_reset(a, 0);
    s_add(a, 0, 0, "h-8", 1);
    rf_answer_gang_reset(b, 0);
    s_add(b, 0, 0, "h-0", 1);
    rf_answer_gang_reset(b, 1);
    s_add(a, 1, 0, "h-2", 2); /* 2 units, 2 pods */
    s_add(b, 2, 0, "h-3", 4); /* 0 units, 4 pods */
    cr_assert_eq(rf_answer_finish(a), RF_OK);
    cr_assert_eq(rf_answer_finish(b), RF_OK);
    cr_assert_lt(rf_answer_compare(a, b), 0);

    /* equal units: more pods is better */
    rf_answer_gang_reset(b, 2);
    s_add(b, 1, 0, "h-2", 2);
    s_add(b, 2, 0, "h-3", 1);
    cr_assert_eq(rf_answer_finish(b), RF_OK);
    cr_assert_gt(rf_answer_compare(a, b), 0);

    /* equal value: less penalty is better; equal penalty compares 0 */
    rf_answer_gang_reset(a, 1);
    s_add(a, 1, 0, "h-2", 1);
    s_add(a, 1, 0, "h-4", 1); /* two racks: penalty 11 */
    s_add(a, 2, 0, "h-3", 1);
    cr_assert_eq(rf_answer_finish(a), RF_OK);
    cr_assert_gt(a->summary.penalty, b->summary.penalty);
    cr_assert_gt(rf_answer_compare(a, b), 0);
    cr_assert_lt(rf_answer_compare(b, a), 0);
    cr_assert_eq(rf_answer_compare(a, a), 0);
    double keep = a->summary.penalty;
    a->summary.penalty = b->summary.penalty + 1e-12;
    cr_assert_eq(rf_answer_compare(a, b), 0);
    a->summary.penalty = keep;
    rf_answer_destroy(&a);
    rf_answer_destroy(&b);
    rf_problem_destroy(&p);
    rf_test_no_leaks();
}

/* ------------------------------------------------------------------ */
/* JSON                                                                 */

static rf_answer_t *s_from_json(const rf_problem_t *p, const char *text, rf_status want, const char *want_path)
{
    rf_answer_t *a = NULL;
    rf_error_t err;
    rf_error_clear(&err);
    rf_status rc = rf_answer_from_json(p, text, strlen(text), &a, &err);
    cr_assert_eq(rc, want, "rc %d: %s: %s", rc, err.path, err.message);
    if (want_path)
        cr_assert_str_eq(err.path, want_path, "path %s (%s)", err.path, err.message);
    if (rc != RF_OK)
        cr_assert_null(a);
    return a;
}

Test(answer, json_round_trip)
{
    const char *json =
        "{\"cluster\":{\"levels\":[\"example.com/block\",\"example.com/rack\",\"kubernetes.io/hostname\"],"
        "\"nodes\":["
        "{\"name\":\"h-0\",\"labels\":{\"example.com/block\":\"b\",\"example.com/rack\":\"r0\","
        "\"kubernetes.io/hostname\":\"h-0\"},\"allocatable\":{\"nvidia.com/gpu\":8}},"
        "{\"name\":\"h\\\"1\\\\\",\"labels\":{\"example.com/block\":\"b\",\"example.com/rack\":\"r1\","
        "\"kubernetes.io/hostname\":\"h1\"},\"allocatable\":{\"nvidia.com/gpu\":8}}]},"
        "\"gangs\":[{\"name\":\"team-a/\\u00e9l\\\"an\\n\",\"priority\":9,\"bandwidth\":0.1,\"pod_sets\":["
        "{\"name\":\"w\",\"count\":3,\"requests\":{\"nvidia.com/gpu\":1}},{\"name\":\"ps\",\"count\":1}]},"
        "{\"name\":\"b\",\"pod_sets\":[{\"name\":\"w\",\"count\":1,\"requests\":{\"nvidia.com/gpu\":9}}]},"
        "{\"name\":\"c\",\"pod_sets\":[{\"name\":\"w\",\"count\":1}]}]}";
    rf_problem_t *p = s_problem(json);
    rf_answer_t *a = rf_answer_new(p);
    s_add(a, 0, 0, "h-0", 2);
    s_add(a, 0, 0, "h\"1\\", 1);
    s_add(a, 0, 1, "h-0", 1);
    rf_why_t why = {1, rf_problem_resource(p, "nvidia.com/gpu"), 8, 9};
    cr_assert_geq(why.resource, 0);
    cr_assert_eq(rf_answer_reject(a, 1, why, "needs 9 \"GPUs\"\tper pod"), RF_OK);
    cr_assert_eq(rf_answer_reject(a, 2, s_no_why(), "plain"), RF_OK);
    cr_assert_eq(rf_answer_finish(a), RF_OK);
    a->summary.penalty_bound = 0.1;
    a->summary.optimal = true;
    a->summary.mode_used = "ilp";
    a->summary.solve_ms = 3.1;

    char *text = NULL;
    size_t len = 0;
    rf_error_t err;
    rf_error_clear(&err);
    cr_assert_eq(rf_answer_to_json(a, &text, &len, &err), RF_OK);
    cr_assert_eq(strlen(text), len);
    cr_assert_not_null(strstr(text, "\"domains\":[1,2,2]"), "%s", text);
    cr_assert_not_null(strstr(text, "\"why\":{\"level\":\"example.com/rack\",\"resource\":\"nvidia.com/gpu\","
                                    "\"fits\":8,\"needs\":9}"),
                       "%s", text);
    cr_assert_not_null(strstr(text, "\"why\":{}"), "%s", text);
    cr_assert_not_null(strstr(text, "\"solve_ms\":3.1,") || strstr(text, "\"solve_ms\":3.1}"), "%s", text);
    cr_assert_not_null(strstr(text, "\"value\":[[9,3,4],[0,0,0]]"), "%s", text);

    rf_answer_t *b = s_from_json(p, text, RF_OK, NULL);
    cr_assert(b->gangs[0].admitted && !b->gangs[1].admitted && !b->gangs[2].admitted);
    cr_assert_eq(b->gangs[0].pod_sets[0].n_placements, 2);
    cr_assert_eq(b->gangs[0].pod_sets[0].placements[1].node, s_node(p, "h\"1\\"));
    cr_assert_eq(b->gangs[0].pod_sets[0].placements[0].count, 2);
    cr_assert_eq(b->gangs[0].pod_sets[1].n_placements, 1);
    cr_assert(b->gangs[0].has_domains && b->gangs[0].has_penalty);
    cr_assert_eq(b->gangs[0].penalty, a->gangs[0].penalty); /* exact: shortest round-trip doubles */
    cr_assert_str_eq(b->gangs[1].reason, a->gangs[1].reason);
    cr_assert_eq(b->gangs[1].why.level, 1);
    cr_assert_eq(b->gangs[1].why.resource, why.resource);
    cr_assert_eq(b->gangs[1].why.fits, 8);
    cr_assert_eq(b->gangs[1].why.needs, 9);
    cr_assert_eq(b->gangs[2].why.level, -1);
    cr_assert(b->summary.has_counts && b->summary.has_value && b->summary.has_penalty);
    cr_assert_eq(b->summary.admitted, 1);
    cr_assert_eq(b->summary.rejected, 2);
    cr_assert_eq(b->summary.penalty, a->summary.penalty);
    cr_assert_eq(b->summary.penalty_bound, 0.1);
    cr_assert(b->summary.optimal);
    cr_assert_str_eq(b->summary.mode_used, "ilp");
    cr_assert_eq(b->summary.solve_ms, 3.1);
    cr_assert_eq(rf_answer_compare(a, b), 0);

    /* and the text of the read answer is the same text; so is a copy's */
    char *text2 = NULL;
    cr_assert_eq(rf_answer_to_json(b, &text2, NULL, &err), RF_OK);
    cr_assert_str_eq(text2, text);
    rf_answer_t *c = rf_answer_new(p);
    cr_assert_eq(rf_answer_copy(c, b), RF_OK);
    rf_answer_destroy(&b);
    char *text3 = NULL;
    cr_assert_eq(rf_answer_to_json(c, &text3, NULL, &err), RF_OK);
    cr_assert_str_eq(text3, text);
    free(text);
    free(text2);
    free(text3);
    rf_answer_destroy(&a);
    rf_answer_destroy(&c);
    rf_problem_destroy(&p);
    rf_test_no_leaks();
}

Test(answer, json_doubles_round_trip_exactly)
{
    rf_problem_t *p = s_problem_gen(1, 1, 1, "[]");
    rf_answer_t *a = rf_answer_new(p);
    double vals[] = {0.1, 1.0 / 3.0, 1e-300, 123456789.125, 25.0, 5e-324, 1.7976931348623157e308};
    for (size_t i = 0; i < sizeof vals / sizeof *vals; i++) {
        a->summary.solve_ms = vals[i];
        char *text = NULL;
        cr_assert_eq(rf_answer_to_json(a, &text, NULL, NULL), RF_OK);
        rf_answer_t *b = s_from_json(p, text, RF_OK, NULL);
        cr_assert_eq(b->summary.solve_ms, vals[i], "%.17g -> %s", vals[i], text);
        rf_answer_destroy(&b);
        free(text);
    }
    rf_answer_destroy(&a);
    rf_problem_destroy(&p);
    rf_test_no_leaks();
}

Test(answer, json_hand_written_minimal)
{
    rf_problem_t *p = s_problem_gen(
        4, 2, 1,
        "[{\"name\":\"a\",\"pod_sets\":[{\"name\":\"x\",\"count\":2},{\"name\":\"y\",\"count\":1}]},{\"name\":\"b\","
        "\"pod_sets\":[{\"name\":\"w\",\"count\":1}]}]");
    /* no summary, no domains/penalty; pod sets by name in any order; a node
     * listed twice stays twice (for the checker to see) */
    rf_answer_t *a =
        s_from_json(p,
                    "{\"gangs\":[{\"name\":\"a\",\"admitted\":true,\"pod_sets\":["
                    "{\"name\":\"y\",\"placements\":[{\"node\":\"h-3\",\"count\":1}]},"
                    "{\"name\":\"x\",\"placements\":[{\"count\":1,\"node\":\"h-0\"},{\"node\":\"h-0\",\"count\":1}]}]},"
                    "{\"name\":\"b\",\"admitted\":false}]}",
                    RF_OK, NULL);
    cr_assert(!a->gangs[0].has_domains && !a->gangs[0].has_penalty);
    cr_assert(!a->summary.has_counts && !a->summary.has_value && !a->summary.has_penalty);
    cr_assert_eq(a->summary.admitted, 1);
    cr_assert_eq(a->summary.rejected, 1);
    cr_assert_eq(a->gangs[0].pod_sets[0].n_placements, 2);
    cr_assert_eq(a->gangs[0].pod_sets[1].n_placements, 1);
    cr_assert_eq(a->gangs[0].pod_sets[1].placements[0].node, s_node(p, "h-3"));
    cr_assert_null(a->gangs[1].reason);
    rf_answer_destroy(&a);
    rf_problem_destroy(&p);
    rf_test_no_leaks();
}

Test(answer, json_reader_errors_have_paths)
{
    rf_problem_t *p =
        s_problem_gen(4, 2, 1,
                      "[{\"name\":\"a\",\"pod_sets\":[{\"name\":\"w\",\"count\":8}]},{\"name\":\"b\","
                      "\"pod_sets\":[{\"name\":\"w\",\"count\":1}]},{\"name\":\"c\",\"pod_sets\":[{\"name\":\"w\","
                      "\"count\":8}]}]");
    const char *ok_ab = "{\"name\":\"a\",\"admitted\":false},{\"name\":\"b\",\"admitted\":false},";
    char buf[2048];
    struct {
        const char *gang_c;
        const char *path;
    } cases[] = {
        {"{\"name\":\"c\",\"admitted\":true,\"pod_sets\":[{\"name\":\"w\",\"placements\":["
         "{\"node\":\"h-0\",\"count\":1},{\"node\":\"h-1\",\"count\":1},{\"node\":\"h-2\",\"count\":1},"
         "{\"node\":\"h-3\",\"count\":1},{\"node\":\"h-2\",\"count\":1},{\"node\":\"nope\",\"count\":1}]}]}",
         "gangs[2].pod_sets[0].placements[5].node"},
        {"{\"name\":\"c\",\"admitted\":true,\"pod_sets\":[{\"name\":\"w\",\"placements\":["
         "{\"node\":\"h-0\",\"count\":0}]}]}",
         "gangs[2].pod_sets[0].placements[0].count"},
        {"{\"name\":\"c\",\"admitted\":true,\"pod_sets\":[{\"name\":\"w\",\"placements\":["
         "{\"node\":\"h-0\",\"count\":1.5}]}]}",
         "gangs[2].pod_sets[0].placements[0].count"},
        {"{\"name\":\"c\",\"admitted\":true,\"pod_sets\":[{\"name\":\"w\",\"placements\":["
         "{\"node\":\"h-0\",\"count\":1,\"rank\":3}]}]}",
         "gangs[2].pod_sets[0].placements[0].rank"},
        {"{\"name\":\"c\",\"admitted\":true,\"pod_sets\":[{\"name\":\"v\",\"placements\":[]}]}",
         "gangs[2].pod_sets[0].name"},
        {"{\"name\":\"c\",\"admitted\":true,\"pod_sets\":[{\"name\":\"w\"},{\"name\":\"w\"}]}",
         "gangs[2].pod_sets[1].name"},
        {"{\"name\":\"c\",\"admitted\":true,\"domains\":[1,1]}", "gangs[2].domains"},
        {"{\"name\":\"c\",\"admitted\":true,\"domains\":[1,-1,1]}", "gangs[2].domains[1]"},
        {"{\"name\":\"c\",\"admitted\":\"yes\"}", "gangs[2].admitted"},
        {"{\"name\":\"c\",\"admitted\":false,\"why\":{\"level\":\"example.com/row\"}}", "gangs[2].why.level"},
        {"{\"name\":\"c\",\"admitted\":false,\"nvidia.com/x\":1}", "gangs[2][\"nvidia.com/x\"]"},
        {"{\"name\":\"d\",\"admitted\":false}", "gangs[2].name"},
        {"{\"name\":\"c\"}", "gangs[2]"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        snprintf(buf, sizeof buf, "{\"gangs\":[%s%s]}", ok_ab, cases[i].gang_c);
        s_from_json(p, buf, RF_ESCHEMA, cases[i].path);
    }
    /* gangs out of order, too few; root and summary keys */
    s_from_json(p,
                "{\"gangs\":[{\"name\":\"b\",\"admitted\":false},{\"name\":\"a\",\"admitted\":false},"
                "{\"name\":\"c\",\"admitted\":false}]}",
                RF_ESCHEMA, "gangs[0].name");
    s_from_json(p, "{\"gangs\":[{\"name\":\"a\",\"admitted\":false}]}", RF_ESCHEMA, "gangs");
    snprintf(buf, sizeof buf, "{\"gangs\":[%s{\"name\":\"c\",\"admitted\":false}],\"extra\":1}", ok_ab);
    s_from_json(p, buf, RF_ESCHEMA, "extra");
    snprintf(buf, sizeof buf, "{\"gangs\":[%s{\"name\":\"c\",\"admitted\":false}],\"summary\":{\"value\":[[1,2]]}}",
             ok_ab);
    s_from_json(p, buf, RF_ESCHEMA, "summary.value[0]");
    snprintf(buf, sizeof buf, "{\"gangs\":[%s{\"name\":\"c\",\"admitted\":false}],\"summary\":{\"speed\":1}}", ok_ab);
    s_from_json(p, buf, RF_ESCHEMA, "summary.speed");
    s_from_json(p, "{\"summary\":{}}", RF_ESCHEMA, "");
    s_from_json(p, "[]", RF_ESCHEMA, "");
    s_from_json(p, "{\"gangs\":[", RF_EPARSE, NULL);
    /* every prefix of a valid answer fails cleanly */
    snprintf(buf, sizeof buf,
             "{\"gangs\":[%s{\"name\":\"c\",\"admitted\":true,\"pod_sets\":[{\"name\":\"w\",\"placements\":"
             "[{\"node\":\"h-1\",\"count\":8}]}],\"domains\":[1,1,1],\"penalty\":0.0}],\"summary\":{\"admitted\":1,"
             "\"rejected\":2,\"value\":[[0,0,8]],\"penalty\":0.0,\"penalty_bound\":0.0,\"optimal\":false,"
             "\"mode_used\":\"greedy\",\"solve_ms\":1.0}}",
             ok_ab);
    rf_answer_t *a = s_from_json(p, buf, RF_OK, NULL);
    rf_answer_destroy(&a);
    size_t n = strlen(buf);
    for (size_t k = 0; k + 1 < n; k++) {
        rf_error_t err;
        rf_error_clear(&err);
        cr_assert_neq(rf_answer_from_json(p, buf, k, &a, &err), RF_OK, "prefix %zu", k);
        cr_assert_null(a);
    }
    rf_problem_destroy(&p);
    rf_test_no_leaks();
}

/* ------------------------------------------------------------------ */
/* Speed                                                                */

static double s_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

Test(answer, finish_is_fast_at_16k_nodes_1k_gangs, .timeout = 120)
{
    /* 16,384 nodes (16 per rack, 32 racks per block), 1,000 gangs of 16
     * pods, each gang spread over 16 nodes */
    enum { N = 16384, G = 1000 };
    size_t cap = (size_t)G * 160 + 16;
    char *gangs = malloc(cap);
    cr_assert_not_null(gangs);
    size_t len = 0;
    gangs[len++] = '[';
    for (int g = 0; g < G; g++)
        len += (size_t)snprintf(gangs + len, cap - len,
                                "%s{\"name\":\"g%d\",\"priority\":%d,\"pod_sets\":[{\"name\":\"w\",\"count\":16,"
                                "\"requests\":{\"nvidia.com/gpu\":1}}]}",
                                g ? "," : "", g, g % 3);
    len += (size_t)snprintf(gangs + len, cap - len, "]");
    char *json = s_json(N, 16, 32, gangs, NULL);
    rf_problem_t *p = s_problem(json);
    free(json);
    free(gangs);
    rf_answer_t *a = rf_answer_new(p);
    for (int g = 0; g < G; g++)
        for (int k = 0; k < 16; k++)
            cr_assert_eq(rf_answer_add(a, g, 0, (g * 16 + k * 7) % N, 1), RF_OK);
    double best = 1e9;
    for (int rep = 0; rep < 5; rep++) {
        double t0 = s_ms();
        cr_assert_eq(rf_answer_finish(a), RF_OK);
        double t = s_ms() - t0;
        if (t < best)
            best = t;
    }
    cr_log_info("rf_answer_finish: %.3f ms for %d nodes x %d gangs", best, N, G);
    fprintf(stderr, "rf_answer_finish: %.3f ms for %d nodes x %d gangs\n", best, N, G);
    cr_assert_eq(a->summary.admitted, G);
    /* generous: sanitizer builds are several times slower than release */
    cr_assert_lt(best, 100.0, "finish took %.3f ms", best);
    rf_answer_destroy(&a);
    rf_problem_destroy(&p);
    rf_test_no_leaks();
}

/* ------------------------------------------------------ running gangs */

#define RUN_PS(pl) "[{\"name\":\"w\",\"requests\":{\"nvidia.com/gpu\":8},\"placements\":[" pl "]}]"
#define AT(node)   "{\"node\":\"" node "\",\"count\":1}"

/* low (0) on h-0, h-1; hi (3, bandwidth 2) on h-2, h-4; gangs a (9) and b (1). */
static rf_problem_t *s_running_problem(void)
{
    static const int used[8] = {8, 8, 8, 0, 8, 0, 0, 0};
    char *json =
        rf_test_preempt_json(used,
                             "[{\"name\":\"low\",\"pod_sets\":" RUN_PS(AT("h-0") "," AT(
                                 "h-1")) "},"
                                         "{\"name\":\"hi\",\"priority\":3,\"bandwidth\":2,\"pod_sets\":" RUN_PS(
                                             AT("h-2") "," AT("h-4")) "}]",
                             "[{\"name\":\"a\",\"priority\":9,\"pod_sets\":[{\"name\":\"w\",\"count\":1,\"requests\":{"
                             "\"nvidia.com/gpu\":8}}]},"
                             "{\"name\":\"b\",\"priority\":1,\"pod_sets\":[{\"name\":\"w\",\"count\":1,\"requests\":{"
                             "\"nvidia.com/gpu\":8}}]}]",
                             NULL);
    rf_problem_t *p = s_problem(json);
    free(json);
    return p;
}

Test(answer, finish_counts_kept_running_gangs_and_fills_by)
{
    rf_problem_t *p = s_running_problem();
    rf_answer_t *a = rf_answer_new(p);
    cr_assert_eq(a->n_running, 2);
    cr_assert_eq(rf_answer_finish(a), RF_OK);
    /* all kept: priorities 9, 3, 1, 0; hi 16 GPUs, penalty 2 * (10 + 1) */
    cr_assert_eq(a->summary.n_value, 4);
    cr_assert_eq(a->summary.value[1].priority, 3);
    cr_assert_eq(a->summary.value[1].units, 16);
    cr_assert_eq(a->summary.value[3].units, 16);
    cr_assert_eq(a->summary.value[3].pods, 2);
    cr_assert_float_eq(a->summary.penalty, 22.0 + 1.0, 1e-9);
    cr_assert_eq(a->summary.preempted, 0);
    /* a on h-1 preempts low; b (1) on h-0 is above low (0) too: both in by */
    s_add(a, 0, 0, "h-1", 1);
    s_add(a, 1, 0, "h-0", 1);
    cr_assert_eq(rf_answer_preempt(a, 0, true), RF_OK);
    cr_assert_eq(rf_answer_preempt(a, 5, true), RF_EINVAL);
    cr_assert_eq(rf_answer_finish(a), RF_OK);
    cr_assert_eq(a->summary.preempted, 1);
    cr_assert_eq(a->running[0].n_by, 2);
    cr_assert_eq(a->running[0].by[0], 0);
    cr_assert_eq(a->running[0].by[1], 1);
    cr_assert_eq(a->running[1].n_by, 0);
    cr_assert_eq(a->summary.value[3].units, 0);
    cr_assert_float_eq(a->summary.penalty, 22.0, 1e-9);
    cr_assert_float_eq(rf_answer_kept_penalty(a), 22.0, 1e-9);
    /* a copy carries running and by */
    rf_answer_t *c = rf_answer_new(p);
    cr_assert_eq(rf_answer_copy(c, a), RF_OK);
    cr_assert(c->running[0].preempted);
    cr_assert_eq(c->running[0].n_by, 2);
    cr_assert_eq(c->summary.preempted, 1);
    cr_assert_eq(rf_answer_compare(a, c), 0);
    rf_answer_destroy(&c);
    rf_answer_destroy(&a);
    rf_problem_destroy(&p);
    rf_test_no_leaks();
}

Test(answer, json_round_trip_with_running_gangs)
{
    rf_problem_t *p = s_running_problem();
    rf_answer_t *a = rf_answer_new(p);
    s_add(a, 0, 0, "h-1", 1);
    cr_assert_eq(rf_answer_preempt(a, 0, true), RF_OK);
    cr_assert_eq(rf_answer_finish(a), RF_OK);
    char *text = NULL;
    size_t len = 0;
    cr_assert_eq(rf_answer_to_json(a, &text, &len, NULL), RF_OK);
    cr_assert(strstr(text, "\"running\":[\n{\"name\":\"low\",\"preempted\":true,\"by\":[\"a\"]},\n"
                           "{\"name\":\"hi\",\"preempted\":false}\n]"),
              "%s", text);
    cr_assert(strstr(text, "\"preempted\":1,"), "%s", text);
    rf_answer_t *b = s_from_json(p, text, RF_OK, NULL);
    cr_assert(b->has_running);
    cr_assert(b->running[0].preempted);
    cr_assert_eq(b->running[0].n_by, 1);
    cr_assert_eq(b->running[0].by[0], 0);
    cr_assert(!b->running[1].preempted);
    cr_assert(b->summary.has_preempted);
    cr_assert_eq(b->summary.preempted, 1);
    char *text2 = NULL;
    cr_assert_eq(rf_answer_to_json(b, &text2, NULL, NULL), RF_OK);
    cr_assert_str_eq(text, text2);
    free(text);
    free(text2);
    rf_answer_destroy(&b);
    rf_answer_destroy(&a);
    rf_problem_destroy(&p);
    rf_test_no_leaks();
}

Test(answer, json_reader_running_errors)
{
    rf_problem_t *p = s_running_problem();
#define GANGS "{\"gangs\":[{\"name\":\"a\",\"admitted\":false},{\"name\":\"b\",\"admitted\":false}]"
    rf_answer_t *a = s_from_json(p, GANGS "}", RF_ESCHEMA, "");
    cr_assert_null(a);
    s_from_json(p, GANGS ",\"running\":[{\"name\":\"low\",\"preempted\":false}]}", RF_ESCHEMA, "running");
    s_from_json(p, GANGS ",\"running\":[{\"name\":\"hi\",\"preempted\":false},{\"name\":\"low\",\"preempted\":false}]}",
                RF_ESCHEMA, "running[0].name");
    s_from_json(p, GANGS ",\"running\":[{\"name\":\"low\"},{\"name\":\"hi\",\"preempted\":false}]}", RF_ESCHEMA,
                "running[0]");
    /* whole gangs only: a running entry has no pod_sets to preempt in part */
    s_from_json(p,
                GANGS ",\"running\":[{\"name\":\"low\",\"preempted\":true,\"pod_sets\":[]},{\"name\":\"hi\","
                      "\"preempted\":false}]}",
                RF_ESCHEMA, "running[0].pod_sets");
    s_from_json(p,
                GANGS ",\"running\":[{\"name\":\"low\",\"preempted\":true,\"by\":[\"zz\"]},{\"name\":\"hi\","
                      "\"preempted\":false}]}",
                RF_ESCHEMA, "running[0].by[0]");
    s_from_json(p, GANGS ",\"running\":[{\"name\":\"low\",\"preempted\":1},{\"name\":\"hi\",\"preempted\":false}]}",
                RF_ESCHEMA, "running[0].preempted");
    s_from_json(p,
                GANGS ",\"running\":[{\"name\":\"low\",\"preempted\":false},{\"name\":\"hi\",\"preempted\":false}],"
                      "\"summary\":{\"preempted\":-1}}",
                RF_ESCHEMA, "summary.preempted");
#undef GANGS
    rf_problem_destroy(&p);
    rf_test_no_leaks();
}

/* The one encoder: the tree rf_answer_to_doc builds has the contract's keys
 * in order, and its strings are the problem's. */
Test(answer, doc_tree_shape)
{
    rf_problem_t *p = s_running_problem();
    rf_answer_t *a = rf_answer_new(p);
    s_add(a, 0, 0, "h-3", 1);
    cr_assert_eq(rf_answer_finish(a), RF_OK);
    rf_doc_t *doc = NULL;
    cr_assert_eq(rf_answer_to_doc(a, NULL, &doc, NULL), RF_OK); /* the problem's arena */
    cr_assert_eq(doc->type, RF_DOC_MAP);
    cr_assert_eq(doc->len, 3);
    cr_assert_str_eq(doc->u.pairs[0].key, "gangs");
    cr_assert_str_eq(doc->u.pairs[1].key, "running");
    cr_assert_str_eq(doc->u.pairs[2].key, "summary");
    const rf_doc_t *g0 = &doc->u.pairs[0].value.u.items[0];
    cr_assert_eq(g0->len, 5);
    cr_assert_eq(g0->u.pairs[0].value.u.s, p->gangs[0].name); /* borrowed */
    cr_assert_eq(g0->u.pairs[4].value.type, RF_DOC_FLOAT);
    const rf_doc_t *g1 = &doc->u.pairs[0].value.u.items[1];
    cr_assert_str_eq(g1->u.pairs[2].key, "reason");
    const rf_doc_t *sum = &doc->u.pairs[2].value;
    cr_assert_str_eq(sum->u.pairs[2].key, "preempted");
    cr_assert_eq(sum->len, 9);
    rf_answer_destroy(&a);
    rf_problem_destroy(&p);
    rf_test_no_leaks();
}
