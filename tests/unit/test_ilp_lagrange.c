/* tests/unit/test_ilp_lagrange.c: the Lagrangian penalty bound
 * (solver/ilp_lagrange.c, rf__ilp_lagrange_bound).
 *
 * - validity: on random tiny problems (every contract feature, running gangs
 *   included), the exhaustive optimum (tests/support/exhaust.c) laid out as
 *   an answer; the bound for its values is never above its penalty (1e-6),
 *   and meets it on some (the bound is not vacuous); none where the answer
 *   preempts;
 * - the three batches of tests/data/ilp/misses-* against their known optima
 *   (from an independent exact solver);
 * - strength: the hand-made batch of test_ilp_bound where each gang alone
 *   fits one rack but together one of them must span two (penalty 16): the
 *   bound reaches 16; and a required level, which the dynamic program keeps
 *   (one domain at that level), on a cluster where no rack can hold the gang
 *   whole;
 * - the deadline: one elastic gang of 100,000 one-CPU pods on 40 racks of 20
 *   hosts (a dynamic program of seconds per step); given 100 ms the bound
 *   abandons its pass and returns none, in far less than the step would take
 *   (the review measured 1.8 s before the clock was looked at inside a step;
 *   the check allows ten times the deadline for a loaded machine). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "../support/exhaust.h"
#include "../support/leak.h"
#include "../support/randprob.h"
#include "../support/testutil.h"
#include "clock.h"
#include "ilp_bound.h"
#include "jw.h"
#include "rackfit/rackfit.h"

/* One random tiny problem: -1 out of scope or preempting, else 1 when the
 * bound meets the optimum, 0 when below. Fails when it is above. */
static int s_check(uint64_t seed, const rf_randprob_opts_t *o, int *above_lp)
{
    char *json = rf_randprob(seed, o);
    rf_problem_t *pb = rf_test_parse(json);
    free(json);
    int r = -1;
    rf_exhaust_t ex;
    rf_answer_t *opt = NULL;
    if (rf_exhaust_supported(pb, NULL) && rf_exhaust_solve(pb, &ex) == RF_OK &&
        rf_exhaust_to_answer(pb, &ex, &opt) == RF_OK && rf_answer_finish(opt) == RF_OK) {
        rf__ilp_lagr_stats_t st;
        double b = rf__ilp_lagrange_bound(pb, opt, rf_now_ms() + 5000, 1 + (int32_t)(seed % 2), &st);
        bool preempts = opt->summary.preempted > 0;
        cr_assert(!preempts || b < 0, "seed %llu: a bound %g for an answer that preempts", (unsigned long long)seed, b);
        cr_assert_leq(b, opt->summary.penalty + 1e-6, "seed %llu: bound %g above the optimum %g (L %g, %d steps)",
                      (unsigned long long)seed, b, opt->summary.penalty, st.lagrangian, st.iterations);
        double kept = rf_answer_kept_penalty(opt);
        if (!preempts && opt->summary.penalty > kept) {
            cr_assert_geq(b, 0, "seed %llu: no bound (penalty %g)", (unsigned long long)seed, opt->summary.penalty);
            r = b >= opt->summary.penalty - 1e-6;
            double lp = rf__ilp_lp_bound(pb, opt, false, rf_now_ms() + 10000, NULL);
            *above_lp += b > lp + 1e-6;
        }
    }
    rf_answer_destroy(&opt);
    rf_problem_destroy(&pb);
    return r;
}

static void s_scan(const rf_randprob_opts_t *o, uint64_t from, uint64_t to, const char *what)
{
    int checked = 0, met = 0, above_lp = 0;
    for (uint64_t seed = from; seed <= to; seed++) {
        int r = s_check(seed, o, &above_lp);
        checked += r >= 0;
        met += r > 0;
    }
    cr_log_info("%s: %d problems with a penalty, the bound meets the optimum on %d, is above the LP on %d", what,
                checked, met, above_lp);
    cr_assert_gt(checked, 30, "%s: too few problems in scope", what);
    cr_assert_gt(met, 0, "%s: the bound never meets the optimum", what);
}

Test(ilp_lagrange, never_above_the_exhaustive_optimum, .timeout = 300)
{
    rf_randprob_opts_t o;
    rf_exhaust_randprob_opts(&o);
    s_scan(&o, 1, 300, "pending gangs");
    o.max_running = 3;
    s_scan(&o, 1001, 1200, "with running gangs");
    rf_test_no_leaks();
}

/* Racks r1 (4 hosts), r2 and r3 (2 hosts each), 8 GPUs a host; gangs A and
 * B of 4 pods of 8 GPUs. Alone, each fits r1 (penalty 3); together one takes
 * r1 and the other r2 and r3: 3 + 3 + 10 = 16. With `required: rack` on B,
 * B cannot be admitted beside A in r1, so the batch's best admits one: 3. */
#define S_NODE(n, r)                                                                                                   \
    "{\"name\":\"" n "\",\"labels\":{\"rack\":\"" r "\",\"kubernetes.io/hostname\":\"" n "\"},"                        \
    "\"allocatable\":{\"nvidia.com/gpu\":8}}"
#define S_CLUSTER                                                                                                                      \
    "{\"cluster\":{\"levels\":[\"rack\",\"kubernetes.io/hostname\"],\"level_costs\":[10,1],\"nodes\":[" S_NODE("a1", "r1") "," S_NODE( \
        "a2",                                                                                                                          \
        "r1") "," S_NODE("a3",                                                                                                         \
                         "r1") "," S_NODE("a4",                                                                                        \
                                          "r1") "," S_NODE("b1",                                                                       \
                                                           "r2") "," S_NODE("b2",                                                      \
                                                                            "r2") "," S_NODE("c1",                                     \
                                                                                             "r3") "," S_NODE("c2",                    \
                                                                                                              "r3") "]},"

Test(ilp_lagrange, sees_what_gangs_take_from_each_other)
{
    rf_problem_t *pb = rf_test_parse(
        S_CLUSTER "\"gangs\":[{\"name\":\"A\",\"pod_sets\":[{\"name\":\"w\",\"count\":4,\"requests\":{\"nvidia.com/"
                  "gpu\":8}}]},{\"name\":\"B\",\"pod_sets\":[{\"name\":\"w\",\"count\":4,\"requests\":{\"nvidia.com/"
                  "gpu\":8}}]}]}");
    rf_answer_t *g = rf_test_solve(pb, RF_MODE_GREEDY, 1, 1000);
    rf_test_assert_feasible(pb, g, "greedy");
    cr_assert_float_eq(g->summary.penalty, 16, 1e-9, "greedy penalty %g", g->summary.penalty);
    for (int32_t threads = 1; threads <= 2; threads++) {
        rf__ilp_lagr_stats_t st;
        double b = rf__ilp_lagrange_bound(pb, g, rf_now_ms() + 10000, threads, &st);
        cr_assert_float_eq(b, 16, 1e-9, "threads %d: bound %g (L %g, %d steps), want 16", threads, b, st.lagrangian,
                           st.iterations);
    }
    rf_answer_destroy(&g);
    rf_problem_destroy(&pb);
    rf_test_no_leaks();
}

Test(ilp_lagrange, keeps_required_levels)
{
    /* one gang of 6 hosts, required in one rack: no rack has 6, so it is
     * rejected; a second gang of 4 hosts takes r1 (penalty 3). A bound that
     * dropped the required level would still be valid; this checks the
     * program with it reaches the optimum 3 and never above. */
    rf_problem_t *pb = rf_test_parse(
        S_CLUSTER "\"gangs\":[{\"name\":\"A\",\"topology\":{\"required\":\"rack\"},\"pod_sets\":[{\"name\":\"w\","
                  "\"count\":6,\"requests\":{\"nvidia.com/gpu\":8}}]},{\"name\":\"B\",\"pod_sets\":[{\"name\":\"w\","
                  "\"count\":4,\"requests\":{\"nvidia.com/gpu\":8}}]}]}");
    rf_answer_t *g = rf_test_solve(pb, RF_MODE_ILP, 1, 2000);
    rf_test_assert_feasible(pb, g, "ilp");
    cr_assert_float_eq(g->summary.penalty, 3, 1e-9, "penalty %g", g->summary.penalty);
    rf__ilp_lagr_stats_t st;
    double b = rf__ilp_lagrange_bound(pb, g, rf_now_ms() + 10000, 1, &st);
    cr_assert_float_eq(b, 3, 1e-9, "bound %g (L %g, %d steps), want 3", b, st.lagrangian, st.iterations);
    rf_answer_destroy(&g);
    rf_problem_destroy(&pb);
    rf_test_no_leaks();
}

/* The three contended batches of tests/data/ilp/misses-* with their optima
 * from an independent exact solver: the bound for the optimum's values is
 * never above the optimum's penalty. */
Test(ilp_lagrange, never_above_the_known_optima_of_the_missed_batches)
{
    for (int i = 0; i < RF_TEST_N_MISSES; i++) {
        const char *name = RF_TEST_MISSES[i];
        rf_problem_t *pb;
        rf_answer_t *opt;
        rf_test_missed_batch(name, &pb, &opt);
        rf__ilp_lagr_stats_t st;
        double b = rf__ilp_lagrange_bound(pb, opt, rf_now_ms() + 5000, 2, &st);
        cr_assert(b >= 0 && b <= opt->summary.penalty + 1e-6, "%s: bound %g, optimum %g", name, b,
                  opt->summary.penalty);
        double lp = rf__ilp_lp_bound(pb, opt, false, rf_now_ms() + 30000, NULL);
        cr_log_info("%s: Lagrangian bound %g (%d steps), LP bound %g, optimum %g", name, b, st.iterations, lp,
                    opt->summary.penalty);
        rf_answer_destroy(&opt);
        rf_problem_destroy(&pb);
    }
    rf_test_no_leaks();
}

Test(ilp_lagrange, abandons_a_pass_at_the_deadline)
{
    rf__jw_t j;
    rf__jw_init(&j);
    rf__jw_printf(&j, "{\"cluster\":{\"levels\":[\"rack\",\"kubernetes.io/hostname\"],\"level_costs\":[10,1],"
                      "\"nodes\":[");
    for (int r = 0; r < 40; r++)
        for (int h = 0; h < 20; h++)
            rf__jw_printf(&j,
                          "%s{\"name\":\"r%dh%d\",\"labels\":{\"rack\":\"r%d\",\"kubernetes.io/hostname\":"
                          "\"r%dh%d\"},\"allocatable\":{\"cpu\":\"96\"}}",
                          r || h ? "," : "", r, h, r, r, h);
    rf__jw_printf(&j, "]},\"gangs\":[{\"name\":\"A\",\"pod_sets\":[{\"name\":\"w\",\"count\":100000,"
                      "\"min_count\":1,\"requests\":{\"cpu\":\"1\"}}]}]}");
    cr_assert(!j.oom);
    rf_problem_t *pb = rf_test_parse(j.p);
    rf__jw_fini(&j);
    rf_answer_t *g = rf_test_solve(pb, RF_MODE_GREEDY, 1, 5000);
    rf_test_assert_feasible(pb, g, "greedy");
    cr_assert_gt(g->summary.penalty, 0);
    double t0 = rf_now_ms();
    rf__ilp_lagr_stats_t st;
    double b = rf__ilp_lagrange_bound(pb, g, t0 + 100, 2, &st);
    double took = rf_now_ms() - t0;
    cr_assert(b <= g->summary.penalty + 1e-6, "bound %g above the answer's penalty %g", b, g->summary.penalty);
    cr_assert_lt(took, 1000, "took %.0f ms against a 100 ms deadline (%d steps)", took, st.iterations);
    rf_answer_destroy(&g);
    rf_problem_destroy(&pb);
    rf_test_no_leaks();
}
