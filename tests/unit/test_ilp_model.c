/* tests/unit/test_ilp_model.c: the integer program as built
 * (solver/ilp_model.c, through rf__ilp_open): units, the running gangs'
 * columns and rows (docs/ilp.md rows 8 and 9), their objective terms.
 *
 * On the 8-node, 2-rack fixture of tests/support/testutil.h (8 GPUs a node,
 * no pod limit): identical nodes of a rack merge into one unit; nodes
 * holding a running gang that may be preempted are units of their own, and
 * only then; the victim's column frees its room in one capacity row per
 * node and higher priority (and not for its own); one preemptor row; the
 * value and penalty stages carry its value and penalty negated; an isolated
 * gang's program has the column without either. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "../support/leak.h"
#include "../support/testutil.h"
#include "greedy.h"
#include "ilp_internal.h"
#include "rackfit/rackfit.h"

/* A running gang of one pod set, 4 GPUs a pod, one pod on h-0 and one on
 * h-1 (the fixture's used must hold them). */
#define VICTIM(prio, extra)                                                                                            \
    "{\"name\":\"v\",\"priority\":" #prio extra ",\"pod_sets\":[{\"name\":\"w\",\"requests\":{\"nvidia.com/gpu\":4},"  \
    "\"placements\":[{\"node\":\"h-0\",\"count\":1},{\"node\":\"h-1\",\"count\":1}]}]}"
#define GANG(name, prio)                                                                                               \
    "{\"name\":\"" name "\",\"priority\":" #prio                                                                       \
    ",\"pod_sets\":[{\"name\":\"w\",\"count\":1,\"requests\":{\"nvidia.com/gpu\":8}}]}"

static const int s_half[8] = {4, 4, 4, 4, 4, 4, 4, 4};

typedef struct {
    rf_problem_t *pb;
    rf_answer_t *inc;
    rf__ilp_t s;
} s_built_t;

/* The program for the fixture from the greedy's answer (opts: aggregate,
 * isolate as given; no time limit matters: nothing is solved). */
static void s_open(s_built_t *b, const int *used, const char *running, const char *gangs, const char *options,
                   bool aggregate, int32_t isolate)
{
    char *json = rf_test_preempt_json(used, running, gangs, options);
    b->pb = rf_test_parse(json);
    free(json);
    b->inc = rf_answer_new(b->pb);
    rf_error_t err;
    cr_assert_eq(rf__greedy_solve(b->pb, RF__ORDER_VALUE, b->inc, &err), RF_OK, "%s", err.message);
    rf__ilp_opts_t io = {.isolate = isolate, .deadline_ms = 1e18, .aggregate = aggregate, .tight = true};
    bool skip = true;
    cr_assert_eq(rf__ilp_open(&b->s, b->pb, b->inc, &io, &skip, &err), RF_OK, "%s", err.message);
    cr_assert(!skip, "the program has something to model");
}

static void s_close(s_built_t *b)
{
    rf__ilp_fini(&b->s);
    rf_answer_destroy(&b->inc);
    rf_problem_destroy(&b->pb);
}

/* Rows where column col has a coefficient (sign > 0: positive, < 0:
 * negative); the coefficients' values into vals (up to cap). */
static int s_rows_with(const rf__mip_t *mip, int32_t col, int sign, double *vals, int cap)
{
    int n = 0;
    for (int64_t k = 0; k < mip->nnz; k++)
        if (mip->tj[k] == col && (sign > 0 ? mip->tv[k] > 0 : mip->tv[k] < 0)) {
            if (n < cap)
                vals[n] = mip->tv[k];
            n++;
        }
    return n;
}

/* The coefficient of col in stage k's objective (0 when absent). */
static double s_stage_coef(const rf__ilp_t *s, int32_t k, int32_t col)
{
    double v = 0;
    for (int64_t i = 0; i < s->stage_n[k]; i++)
        if (s->stage_cols[k][i] == col)
            v += s->stage_vals[k][i];
    return v;
}

Test(ilp_model, identical_nodes_of_a_rack_are_one_unit)
{
    s_built_t b;
    s_open(&b, NULL, "[]", "[" GANG("g", 0) "]", NULL, true, -1);
    cr_expect_eq(b.s.n_units, 2, "one unit per rack, got %d", b.s.n_units);
    for (int32_t u = 0; u < b.s.n_units; u++)
        cr_expect_eq(b.s.units[u].count, 4);
    s_close(&b);
    s_open(&b, NULL, "[]", "[" GANG("g", 0) "]", NULL, false, -1);
    cr_expect_eq(b.s.n_units, 8, "without aggregation every node is a unit");
    s_close(&b);
    rf_test_no_leaks();
}

Test(ilp_model, nodes_of_a_possible_victim_are_units_of_their_own)
{
    s_built_t b;
    s_open(&b, s_half, "[" VICTIM(0, "") "]", "[" GANG("g", 10) "]", NULL, true, -1);
    /* r1: h-0, h-1 alone, h-2 and h-3 together; r2: one unit */
    cr_expect_eq(b.s.n_units, 4, "got %d units", b.s.n_units);
    cr_expect(b.s.vnode[0] && b.s.vnode[1] && !b.s.vnode[2] && !b.s.vnode[4]);
    cr_expect_neq(b.s.node_unit[0], b.s.node_unit[1]);
    cr_expect_eq(b.s.node_unit[2], b.s.node_unit[3]);
    cr_expect_geq(b.s.qcol[0], 0, "a column for the victim");
    s_close(&b);
    /* no preemption: no column, the nodes merge as before */
    s_open(&b, s_half, "[" VICTIM(0, "") "]", "[" GANG("g", 10) "]", "{\"preemption\":\"never\"}", true, -1);
    cr_expect_eq(b.s.n_units, 2, "got %d units", b.s.n_units);
    cr_expect_eq(b.s.qcol[0], -1);
    cr_expect(!b.s.vnode[0] && !b.s.vnode[1]);
    s_close(&b);
    /* not preemptible, or not below any gang: the same */
    s_open(&b, s_half, "[" VICTIM(0, ",\"preemptible\":false") "]", "[" GANG("g", 10) "]", NULL, true, -1);
    cr_expect_eq(b.s.qcol[0], -1);
    cr_expect_eq(b.s.n_units, 2);
    s_close(&b);
    s_open(&b, s_half, "[" VICTIM(10, "") "]", "[" GANG("g", 10) "]", NULL, true, -1);
    cr_expect_eq(b.s.qcol[0], -1, "a gang of the preemptor's own priority is never a victim");
    s_close(&b);
    rf_test_no_leaks();
}

Test(ilp_model, the_victim_frees_room_per_node_and_higher_priority)
{
    s_built_t b;
    double vals[16];
    /* gangs at 5 and 10, victim at 0: its 4 GPUs on h-0 and h-1 are freed in
     * the rows of both priorities, on both nodes */
    s_open(&b, s_half, "[" VICTIM(0, "") "]", "[" GANG("a", 5) "," GANG("b", 10) "]", NULL, true, -1);
    int32_t q = b.s.qcol[0];
    cr_assert_geq(q, 0);
    int n = s_rows_with(&b.s.mip, q, -1, vals, 16);
    cr_expect_eq(n, 4, "2 nodes x 2 priorities, got %d rows", n);
    for (int i = 0; i < n && i < 16; i++)
        cr_expect_eq(vals[i], -4.0, "frees 4 GPUs, got %g", vals[i]);
    cr_expect_eq(s_rows_with(&b.s.mip, q, +1, vals, 16), 1, "one preemptor row");
    s_close(&b);
    /* victim at 5: only the priority-10 rows get its room */
    s_open(&b, s_half, "[" VICTIM(5, "") "]", "[" GANG("a", 5) "," GANG("b", 10) "]", NULL, true, -1);
    n = s_rows_with(&b.s.mip, b.s.qcol[0], -1, vals, 16);
    cr_expect_eq(n, 2, "2 nodes x priority 10, got %d rows", n);
    s_close(&b);
    rf_test_no_leaks();
}

Test(ilp_model, a_kept_running_gang_counts_in_value_and_penalty)
{
    s_built_t b;
    s_open(&b, s_half, "[" VICTIM(0, "") "]", "[" GANG("g", 10) "]", NULL, true, -1);
    int32_t q = b.s.qcol[0];
    /* stages: 10 units, 10 pods, 0 units, 0 pods, penalty */
    cr_assert_eq(b.s.n_stages, 5);
    cr_expect_eq(s_stage_coef(&b.s, 0, q), 0.0);
    cr_expect_eq(s_stage_coef(&b.s, 2, q), -8.0, "units: 2 pods of 4 GPUs");
    cr_expect_eq(s_stage_coef(&b.s, 3, q), -2.0, "pods");
    cr_expect_eq(s_stage_coef(&b.s, 4, q), -1.0, "penalty: two hosts of one rack");
    cr_expect_eq(b.s.run_const, 1.0);
    s_close(&b);
    /* isolated (the per-gang bound): the column is a relaxation, no terms, no
     * preemptor row */
    s_open(&b, s_half, "[" VICTIM(0, "") "]", "[" GANG("g", 10) "]", NULL, true, 0);
    q = b.s.qcol[0];
    cr_assert_geq(q, 0);
    for (int32_t k = 0; k < b.s.n_stages; k++)
        cr_expect_eq(s_stage_coef(&b.s, k, q), 0.0, "stage %d", k);
    double vals[4];
    cr_expect_eq(s_rows_with(&b.s.mip, q, +1, vals, 4), 0, "no preemptor row when isolated");
    cr_expect_eq(b.s.run_const, 0.0);
    s_close(&b);
    rf_test_no_leaks();
}
