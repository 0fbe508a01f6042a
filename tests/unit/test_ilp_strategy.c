/* tests/unit/test_ilp_strategy.c: the strategy "ilp" (solver/ilp_strategy.c,
 * docs/ilp.md "Solving it").
 *
 * - Registered as "ilp" (rf_strategy_find, rf_strategies()[RF_MODE_ILP]).
 * - On random small problems (with and without running gangs): every answer
 *   passes rf_check, is never worse than the greedy strategy's
 *   (rf_answer_compare), keeps penalty_bound <= penalty, claims `optimal`
 *   only when penalty meets the bound (and then it is the exhaustive
 *   optimum where that search applies); mode_used is "greedy" exactly when
 *   the greedy start proved itself optimal (every pod of every gang placed,
 *   nothing preempted, penalty at its bound), else "ilp".
 * - A batch the greedy solves optimally comes back at once, optimal, from
 *   the greedy.
 * - Tight time limits (10-30 ms) are kept within a generous margin, and the
 *   answer is still feasible and no worse than the greedy's; a limit already
 *   spent (start_ms in the past) returns the greedy start. */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../support/exhaust.h"
#include "../support/leak.h"
#include "../support/randprob.h"
#include "../support/testutil.h"
#include "rackfit/rackfit.h"

/* Every pod of every gang placed and nothing preempted. */
static bool s_all_placed(const rf_problem_t *pb, const rf_answer_t *a)
{
    if (a->summary.preempted > 0)
        return false;
    for (int32_t g = 0; g < pb->n_gangs; g++) {
        if (!a->gangs[g].admitted)
            return false;
        for (int32_t p = 0; p < pb->gangs[g].n_pod_sets; p++) {
            int64_t pods = pb->gangs[g].pod_sets[p].n_bound_pods;
            for (int32_t i = 0; i < a->gangs[g].pod_sets[p].n_placements; i++)
                pods += a->gangs[g].pod_sets[p].placements[i].count;
            if (pods < pb->gangs[g].pod_sets[p].count)
                return false;
        }
    }
    return true;
}

/* What every ilp answer must satisfy, whatever the time limit. */
static void s_check_summary(const rf_problem_t *pb, const rf_answer_t *a, const rf_answer_t *greedy, const char *what)
{
    rf_test_assert_feasible(pb, a, what);
    const rf_summary_t *s = &a->summary;
    cr_assert_not_null(s->mode_used, "%s: no mode_used", what);
    cr_assert(strcmp(s->mode_used, "ilp") == 0 || strcmp(s->mode_used, "greedy") == 0, "%s: mode_used %s", what,
              s->mode_used);
    cr_assert_leq(s->penalty_bound, s->penalty + 1e-6, "%s: bound %g above penalty %g", what, s->penalty_bound,
                  s->penalty);
    if (s->penalty > s->penalty_bound + 1e-6)
        cr_assert_not(s->optimal, "%s: optimal with penalty %g above bound %g", what, s->penalty, s->penalty_bound);
    if (greedy)
        cr_assert_leq(rf_answer_compare(a, greedy), 0,
                      "%s: ilp worse than greedy (admitted %d vs %d, penalty %g vs %g)", what, s->admitted,
                      greedy->summary.admitted, s->penalty, greedy->summary.penalty);
}

Test(ilp_strategy, registered_as_ilp)
{
    const rf_strategy_t *st = rf_strategy_find("ilp");
    cr_assert_not_null(st);
    cr_assert_str_eq(st->name, "ilp");
    cr_assert_not_null(st->solve);
    cr_assert_eq(rf_strategies()[RF_MODE_ILP], st, "indexed by rf_mode");

    char *json = rf_randprob(3, &(rf_randprob_opts_t){.max_nodes = 6,
                                                      .max_gangs = 4,
                                                      .max_pods = 4,
                                                      .max_pod_sets = 2,
                                                      .bound_percent = 15,
                                                      .slice_bound = true});
    rf_problem_t *pb = rf_test_parse(json);
    free(json);
    rf_solve_opts_t o;
    rf_solve_opts_default(&o);
    o.threads = 1;
    o.time_limit_ms = 5000;
    rf_answer_t *a = NULL;
    rf_error_t err;
    cr_assert_eq(rf_solve_with(st, pb, &o, &a, &err), RF_OK, "%s", err.message);
    rf_answer_t *g = rf_test_solve(pb, RF_MODE_GREEDY, 1, 5000);
    s_check_summary(pb, a, g, "rf_solve_with(ilp)");
    cr_assert_gt(a->summary.solve_ms, 0);
    rf_answer_destroy(&a);
    rf_answer_destroy(&g);
    rf_problem_destroy(&pb);
    rf_test_no_leaks();
}

Test(ilp_strategy, never_worse_than_greedy_on_random_problems, .timeout = 400)
{
    int by_ilp = 0, by_greedy = 0, better = 0, proven = 0, exact = 0;
    for (uint64_t seed = 1; seed <= 50; seed++) {
        rf_randprob_opts_t o;
        rf_randprob_default(&o);
        o.max_nodes = seed % 3 ? 6 : 10; /* a third too large for the exhaustive search */
        o.max_gangs = seed % 3 ? 4 : 6;
        o.max_pods = 4;
        o.slice_bound = false;
        o.max_running = seed % 2 ? 0 : 3; /* every other problem with running gangs */
        char *json = rf_randprob(seed, &o);
        rf_problem_t *pb = rf_test_parse(json);
        char what[64];
        snprintf(what, sizeof what, "seed %llu", (unsigned long long)seed);
        rf_answer_t *g = rf_test_solve(pb, RF_MODE_GREEDY, 1, 20000);
        rf_test_assert_feasible(pb, g, what);
        rf_answer_t *a = rf_test_solve(pb, RF_MODE_ILP, 1, 20000);
        s_check_summary(pb, a, g, what);
        const rf_summary_t *s = &a->summary;
        if (strcmp(s->mode_used, "greedy") == 0) {
            /* with time to spare the greedy start is returned only when it proved itself */
            cr_assert(s->optimal, "%s: the greedy answer returned without a proof", what);
            cr_assert(s_all_placed(pb, a), "%s: greedy 'optimal' with a pod left out or a victim", what);
            cr_assert_leq(s->penalty, s->penalty_bound + 1e-6, "%s", what);
            by_greedy++;
        } else {
            by_ilp++;
        }
        if (s->optimal && rf_exhaust_supported(pb, NULL)) {
            cr_assert_eq(rf_exhaust_compare(pb, a), 0, "%s: claims optimal, the exhaustive search disagrees\n%s", what,
                         json);
            exact++;
        }
        better += rf_answer_compare(a, g) < 0;
        proven += s->optimal;
        rf_answer_destroy(&g);
        rf_answer_destroy(&a);
        rf_problem_destroy(&pb);
        free(json);
    }
    cr_log_info("ilp strategy: %d by the program, %d by the greedy start, %d better than greedy, %d proven (%d checked "
                "exhaustively)",
                by_ilp, by_greedy, better, proven, exact);
    cr_assert_gt(by_ilp, 0, "some problems need the program");
    cr_assert_gt(by_greedy, 0, "some problems are solved by the greedy start");
    cr_assert_gt(better, 0, "the program improves on the greedy somewhere");
    cr_assert_gt(exact, 0);
    rf_test_no_leaks();
}

/* Two racks of two 8-GPU hosts, one gang of two 4-GPU pods: the greedy puts
 * both on one host, the least penalty there is. */
Test(ilp_strategy, a_batch_the_greedy_solves_optimally_returns_at_once)
{
    rf_problem_t *pb = rf_test_parse(
        "{\"cluster\":{\"levels\":[\"example.com/rack\",\"kubernetes.io/hostname\"],\"level_costs\":[10,1],"
        "\"nodes\":["
        "{\"name\":\"h-0\",\"labels\":{\"example.com/rack\":\"r1\",\"kubernetes.io/hostname\":\"h-0\"},"
        "\"allocatable\":{\"nvidia.com/gpu\":8}},"
        "{\"name\":\"h-1\",\"labels\":{\"example.com/rack\":\"r1\",\"kubernetes.io/hostname\":\"h-1\"},"
        "\"allocatable\":{\"nvidia.com/gpu\":8}},"
        "{\"name\":\"h-2\",\"labels\":{\"example.com/rack\":\"r2\",\"kubernetes.io/hostname\":\"h-2\"},"
        "\"allocatable\":{\"nvidia.com/gpu\":8}},"
        "{\"name\":\"h-3\",\"labels\":{\"example.com/rack\":\"r2\",\"kubernetes.io/hostname\":\"h-3\"},"
        "\"allocatable\":{\"nvidia.com/gpu\":8}}]},"
        "\"gangs\":[{\"name\":\"g\",\"pod_sets\":[{\"name\":\"w\",\"count\":2,"
        "\"requests\":{\"nvidia.com/gpu\":4}}]}]}");
    double t0 = rf_now_ms();
    rf_answer_t *a = rf_test_solve(pb, RF_MODE_ILP, 1, 30000);
    double ms = rf_now_ms() - t0;
    rf_answer_t *g = rf_test_solve(pb, RF_MODE_GREEDY, 1, 30000);
    s_check_summary(pb, a, g, "greedy-optimal batch");
    cr_assert(a->summary.optimal, "the greedy's answer is optimal and proven so");
    cr_assert_str_eq(a->summary.mode_used, "greedy", "no program when the greedy proved itself");
    cr_assert_eq(a->summary.admitted, 1);
    cr_assert_eq(a->gangs[0].pod_sets[0].n_placements, 1, "both pods on one host");
    cr_assert_eq(a->summary.penalty, a->summary.penalty_bound);
    cr_assert_eq(rf_answer_compare(a, g), 0);
    cr_assert_lt(ms, 2000, "returned in %.1f ms of a 30 s limit", ms);
    cr_assert_lt(a->summary.solve_ms, 2000);
    rf_answer_destroy(&a);
    rf_answer_destroy(&g);
    rf_problem_destroy(&pb);
    rf_test_no_leaks();
}

Test(ilp_strategy, tight_time_limits_are_kept, .timeout = 300)
{
    /* generous: sanitizers, two shared cores, GLPK's first factorisation
     * (which its time limit does not interrupt) */
    const double margin_ms = 150;
    const int64_t limits[] = {10, 20, 30};
    int ran = 0;
    for (uint64_t seed = 1; seed <= 6; seed++) {
        rf_randprob_opts_t o;
        rf_randprob_default(&o);
        o.max_nodes = 40;
        o.max_gangs = 16;
        o.max_pods = 8;
        o.slice_bound = false;
        o.max_running = seed % 2 ? 6 : 0;
        char *json = rf_randprob(seed + 100, &o);
        rf_problem_t *pb = rf_test_parse(json);
        free(json);
        rf_answer_t *g = rf_test_solve(pb, RF_MODE_GREEDY, 1, 20000);
        for (size_t i = 0; i < sizeof limits / sizeof *limits; i++) {
            char what[64];
            snprintf(what, sizeof what, "seed %llu, %lld ms", (unsigned long long)seed + 100, (long long)limits[i]);
            double t0 = rf_now_ms();
            rf_answer_t *a = rf_test_solve(pb, RF_MODE_ILP, 1, limits[i]);
            double ms = rf_now_ms() - t0;
            cr_log_info("%s: %.1f ms, mode %s, optimal %d", what, ms, a->summary.mode_used, a->summary.optimal);
            s_check_summary(pb, a, g, what);
            cr_assert_leq(ms, (double)limits[i] + margin_ms, "%s: took %.1f ms", what, ms);
            rf_answer_destroy(&a);
            ran++;
        }
        rf_answer_destroy(&g);
        rf_problem_destroy(&pb);
    }
    cr_assert_eq(ran, 18);
    rf_test_no_leaks();
}

/* The limit counts from start_ms: with it already spent, no program runs
 * and the greedy start comes back, feasible (docs/ilp.md, "Time"). */
Test(ilp_strategy, a_spent_limit_returns_the_greedy_start)
{
    char *json = rf_randprob(11, &(rf_randprob_opts_t){.max_nodes = 30,
                                                       .max_gangs = 12,
                                                       .max_pods = 8,
                                                       .max_pod_sets = 2,
                                                       .bound_percent = 15,
                                                       .slice_bound = false,
                                                       .max_running = 6});
    rf_problem_t *pb = rf_test_parse(json);
    free(json);
    rf_solve_opts_t o;
    rf_solve_opts_default(&o);
    o.mode = RF_MODE_ILP;
    o.threads = 1;
    o.time_limit_ms = 1000;
    o.start_ms = rf_now_ms() - 5000; /* received five seconds ago */
    rf_answer_t *a = NULL;
    rf_error_t err;
    double t0 = rf_now_ms();
    cr_assert_eq(rf_solve(pb, &o, &a, &err), RF_OK, "%s", err.message);
    double ms = rf_now_ms() - t0;
    s_check_summary(pb, a, NULL, "spent limit");
    cr_assert_str_eq(a->summary.mode_used, "greedy");
    cr_assert_lt(ms, 1000, "no search after the deadline (%.1f ms)", ms);
    rf_answer_destroy(&a);
    rf_problem_destroy(&pb);
    rf_test_no_leaks();
}
