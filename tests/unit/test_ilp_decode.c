/* tests/unit/test_ilp_decode.c: between answers and the program's vectors
 * (solver/ilp_decode.c): rf__ilp_map_incumbent and rf__ilp_decode.
 *
 * On the 8-node, 2-rack fixture of tests/support/testutil.h: an answer
 * mapped to a vector and decoded again is the same answer (placements,
 * victims); a solution set by hand (a gang on a victim's node, the victim
 * preempted) decodes to exactly that, with the victim's preemptor in `by`
 * and rf_check satisfied; demands a unit cannot hold make decoding fail
 * instead of overfilling a node; the greedy's answers, with their victims,
 * map to vectors that meet every row and bound of the program (so GLPK
 * starts from them), used above allocatable included. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../support/leak.h"
#include "../support/randprob.h"
#include "../support/testutil.h"
#include "greedy.h"
#include "ilp_internal.h"
#include "rackfit/rackfit.h"

#define RUN1(name, prio, node)                                                                                         \
    "{\"name\":\"" name "\",\"priority\":" #prio ",\"pod_sets\":[{\"name\":\"w\",\"requests\":{\"nvidia.com/gpu\":8}," \
    "\"placements\":[{\"node\":\"" node "\",\"count\":1}]}]}"
#define GANG(name, prio, count)                                                                                        \
    "{\"name\":\"" name "\",\"priority\":" #prio ",\"pod_sets\":[{\"name\":\"w\",\"count\":" #count                    \
    ",\"min_count\":1,\"requests\":{\"nvidia.com/gpu\":8}}]}"

static const int s_full[8] = {8, 8, 8, 8, 8, 8, 8, 8};

/* An answer that rejects every gang, finished. */
static rf_answer_t *s_nothing(const rf_problem_t *pb)
{
    rf_answer_t *a = rf_answer_new(pb);
    rf_why_t why = {.level = -1, .resource = -1, .fits = -1, .needs = -1};
    for (int32_t g = 0; g < pb->n_gangs; g++)
        cr_assert_eq(rf_answer_reject(a, g, why, "not placed yet"), RF_OK);
    cr_assert_eq(rf_answer_finish(a), RF_OK);
    return a;
}

static void s_open(rf__ilp_t *s, const rf_problem_t *pb, const rf_answer_t *inc, bool aggregate)
{
    rf__ilp_opts_t io = {.isolate = -1, .deadline_ms = 1e18, .aggregate = aggregate, .tight = true};
    bool skip = true;
    rf_error_t err;
    cr_assert_eq(rf__ilp_open(s, pb, inc, &io, &skip, &err), RF_OK, "%s", err.message);
    cr_assert(!skip);
}

/* The x column of gang g's pod set 0 on the unit of node n, -1 if none. */
static int32_t s_xcol(const rf__ilp_t *s, int32_t g, int32_t n)
{
    int32_t fp = s->ps0[g];
    for (int64_t i = s->xs_start[fp]; i < s->xs_start[fp + 1]; i++)
        if (s->xs[i].unit == s->node_unit[n])
            return s->xs[i].col;
    return -1;
}

Test(ilp_decode, an_answer_mapped_and_decoded_is_the_same_answer)
{
    /* r1 full of one-pod victims at priority 0, r2 empty: the greedy's
     * answer places a rack gang in r2 and a second gang by preemption */
    const int used[8] = {8, 8, 8, 8, 0, 0, 0, 0};
    char *json = rf_test_preempt_json(
        used, "[" RUN1("a", 0, "h-0") "," RUN1("b", 0, "h-1") "," RUN1("c", 0, "h-2") "," RUN1("d", 0, "h-3") "]",
        "[" GANG("big", 10, 4) "," GANG("more", 10, 2) "]", NULL);
    rf_problem_t *pb = rf_test_parse(json);
    free(json);
    rf_answer_t *inc = rf_answer_new(pb);
    rf_error_t err;
    cr_assert_eq(rf__greedy_solve(pb, RF__ORDER_VALUE, inc, &err), RF_OK, "%s", err.message);
    cr_assert(inc->summary.preempted > 0, "the fixture should make the greedy preempt");
    for (int aggregate = 0; aggregate < 2; aggregate++) {
        rf__ilp_t s;
        s_open(&s, pb, inc, aggregate);
        double *x = calloc((size_t)s.mip.n_cols + 1, sizeof *x);
        cr_assert(rf__ilp_map_incumbent(&s, inc, x), "the incumbent maps onto the columns");
        for (int32_t i = 0; i < pb->n_running; i++)
            cr_expect_eq(x[s.qcol[i]], inc->running[i].preempted ? 1.0 : 0.0, "q of %s", pb->running[i].name);
        rf_answer_t *ans = rf_answer_new(pb);
        bool oom = false;
        cr_assert(rf__ilp_decode(&s, x, inc, ans, &oom), "decodes");
        cr_assert(!oom);
        cr_assert_eq(rf_answer_finish(ans), RF_OK);
        rf_test_assert_feasible(pb, ans, "decoded");
        cr_expect_eq(rf_answer_compare(ans, inc), 0, "aggregate %d: the same objective", aggregate);
        for (int32_t i = 0; i < pb->n_running; i++)
            cr_expect_eq(ans->running[i].preempted, inc->running[i].preempted, "victim %s", pb->running[i].name);
        for (int32_t g = 0; g < pb->n_gangs; g++)
            cr_expect_eq(ans->gangs[g].admitted, inc->gangs[g].admitted);
        rf_answer_destroy(&ans);
        free(x);
        rf__ilp_fini(&s);
    }
    rf_answer_destroy(&inc);
    rf_problem_destroy(&pb);
    rf_test_no_leaks();
}

Test(ilp_decode, a_hand_set_solution_preempts_and_places_exactly_there)
{
    /* everything full; v (priority 0) alone on h-5, a protected wall
     * elsewhere is just usage; one gang of priority 10 and one pod */
    char *json = rf_test_preempt_json(s_full, "[" RUN1("v", 0, "h-5") "]", "[" GANG("one", 10, 1) "]", NULL);
    rf_problem_t *pb = rf_test_parse(json);
    free(json);
    rf_answer_t *inc = s_nothing(pb);
    rf__ilp_t s;
    s_open(&s, pb, inc, true);
    cr_assert(s.vnode[5]);
    int32_t xc = s_xcol(&s, 0, 5);
    cr_assert_geq(xc, 0, "a column on the victim's node (its room counts for the fit)");
    cr_expect_eq(s_xcol(&s, 0, 0), -1, "no column where nothing can be freed");
    double *x = calloc((size_t)s.mip.n_cols + 1, sizeof *x);
    x[s.ycol[0]] = 1;
    x[xc] = 1;
    x[s.qcol[0]] = 1;
    rf_answer_t *ans = rf_answer_new(pb);
    bool oom = false;
    cr_assert(rf__ilp_decode(&s, x, inc, ans, &oom));
    cr_assert_eq(rf_answer_finish(ans), RF_OK);
    cr_assert(ans->gangs[0].admitted);
    cr_assert_eq(ans->gangs[0].pod_sets[0].n_placements, 1);
    cr_expect_eq(ans->gangs[0].pod_sets[0].placements[0].node, 5, "exactly on the victim's node");
    cr_expect(ans->running[0].preempted);
    cr_assert_eq(ans->running[0].n_by, 1);
    cr_expect_eq(ans->running[0].by[0], 0, "the gang is its preemptor");
    rf_test_assert_feasible(pb, ans, "hand-set");
    /* the same placement with the victim kept decodes (the program would
     * never offer it) and rf_check refuses it: decoding does not check */
    x[s.qcol[0]] = 0;
    rf_answer_t *kept = rf_answer_new(pb);
    cr_assert(rf__ilp_decode(&s, x, inc, kept, &oom));
    cr_assert_eq(rf_answer_finish(kept), RF_OK);
    cr_expect(!kept->running[0].preempted);
    rf_check_report_t rep;
    rf_error_t err;
    cr_assert_eq(rf_check(pb, kept, &rep, &err), RF_OK);
    cr_expect(!rep.feasible, "a node over its capacity");
    rf_check_report_fini(&rep);
    rf_answer_destroy(&kept);
    rf_answer_destroy(&ans);
    free(x);
    rf__ilp_fini(&s);
    rf_answer_destroy(&inc);
    rf_problem_destroy(&pb);
    rf_test_no_leaks();
}

Test(ilp_decode, demands_a_unit_cannot_hold_fail_to_decode)
{
    /* r1 empty (one unit of 4 nodes), r2 full: 5 pods of 8 GPUs set on r1's
     * unit cannot be packed, and nothing spills into a full rack */
    const int used[8] = {0, 0, 0, 0, 8, 8, 8, 8};
    char *json = rf_test_preempt_json(used, "[]", "[" GANG("g", 0, 8) "]", NULL);
    rf_problem_t *pb = rf_test_parse(json);
    free(json);
    rf_answer_t *inc = s_nothing(pb);
    rf__ilp_t s;
    s_open(&s, pb, inc, true);
    int32_t xc = s_xcol(&s, 0, 0);
    cr_assert_geq(xc, 0);
    cr_assert_eq(s.units[s.node_unit[0]].count, 4, "r1 is one unit");
    double *x = calloc((size_t)s.mip.n_cols + 1, sizeof *x);
    x[s.ycol[0]] = 1;
    x[xc] = 4;
    rf_answer_t *ans = rf_answer_new(pb);
    bool oom = false;
    cr_assert(rf__ilp_decode(&s, x, inc, ans, &oom), "4 pods: one a node");
    cr_assert_eq(rf_answer_finish(ans), RF_OK);
    cr_expect_eq(ans->gangs[0].pod_sets[0].n_placements, 4);
    rf_answer_destroy(&ans);
    x[xc] = 5;
    ans = rf_answer_new(pb);
    cr_expect(!rf__ilp_decode(&s, x, inc, ans, &oom), "5 pods do not fit in 4 nodes");
    cr_expect(!oom);
    rf_answer_destroy(&ans);
    free(x);
    rf__ilp_fini(&s);
    rf_answer_destroy(&inc);
    rf_problem_destroy(&pb);
    rf_test_no_leaks();
}

/* Does x meet every bound and row of the program (within 1e-6)? The first
 * violation into why. */
static bool s_meets(const rf__mip_t *mip, const double *x, char *why, size_t cap)
{
    for (int32_t j = 0; j < mip->n_cols; j++)
        if (x[j] < mip->lb[j] - 1e-6 || x[j] > mip->ub[j] + 1e-6) {
            snprintf(why, cap, "column %d = %g outside [%g, %g]", j, x[j], mip->lb[j], mip->ub[j]);
            return false;
        }
    double *act = calloc((size_t)mip->n_rows + 1, sizeof *act);
    cr_assert_not_null(act);
    for (int64_t k = 0; k < mip->nnz; k++)
        act[mip->ti[k]] += mip->tv[k] * x[mip->tj[k]];
    bool ok = true;
    for (int32_t i = 0; i < mip->n_rows && ok; i++)
        if (act[i] < mip->row_lo[i] - 1e-6 || act[i] > mip->row_hi[i] + 1e-6) {
            snprintf(why, cap, "row %d = %g outside [%g, %g]", i, act[i], mip->row_lo[i], mip->row_hi[i]);
            ok = false;
        }
    free(act);
    return ok;
}

Test(ilp_decode, the_greedy_answer_maps_to_a_feasible_vector, .timeout = 300)
{
    rf_randprob_opts_t o;
    rf_randprob_default(&o);
    o.max_nodes = 5;
    o.max_gangs = 4;
    o.max_pods = 4;
    o.slice_bound = false;
    o.max_running = 4;
    int mapped = 0, preempting = 0, gated = 0;
    for (uint64_t seed = 0; seed <= 300; seed++) {
        rf_problem_t *pb = NULL;
        if (seed == 0) { /* pods used above the limit on a victim's node */
            rf_error_t err;
            const char *file = RF_SOURCE_DIR "/tests/data/glpsol/33_preempt_overcommitted_pods_seed400.json";
            cr_assert_eq(rf_problem_from_json_file(file, NULL, &pb, &err), RF_OK, "%s", err.message);
        } else {
            char *json = rf_randprob(seed, &o);
            pb = rf_test_parse(json);
            free(json);
        }
        rf_answer_t *inc = rf_test_solve(pb, RF_MODE_GREEDY, 1, 60000);
        for (int aggregate = 0; aggregate < 2; aggregate++) {
            rf__ilp_opts_t io = {.isolate = -1, .deadline_ms = 1e18, .aggregate = aggregate, .tight = true};
            bool skip = true;
            rf_error_t err;
            rf__ilp_t s;
            cr_assert_eq(rf__ilp_open(&s, pb, inc, &io, &skip, &err), RF_OK, "%s", err.message);
            if (!skip) {
                double *x = calloc((size_t)s.mip.n_cols + 1, sizeof *x);
                char why[160] = "";
                if (rf__ilp_map_incumbent(&s, inc, x)) {
                    cr_expect(s_meets(&s.mip, x, why, sizeof why), "seed %llu, aggregate %d: %s",
                              (unsigned long long)seed, aggregate, why);
                    mapped++;
                    preempting += inc->summary.preempted > 0;
                    gated += s.n_deltas > 0;
                }
                free(x);
            }
            rf__ilp_fini(&s);
        }
        rf_answer_destroy(&inc);
        rf_problem_destroy(&pb);
    }
    cr_log_info("%d incumbents mapped, %d preempting, %d with indicators", mapped, preempting, gated);
    cr_assert_geq(mapped, 400);
    cr_assert_gt(preempting, 0);
    cr_assert_gt(gated, 0, "some program should have used above allocatable on a victim's node");
    rf_test_no_leaks();
}
