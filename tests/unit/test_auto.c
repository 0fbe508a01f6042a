/* tests/unit/test_auto.c: the strategy "auto" (solver/auto.c), the policy
 * between the greedy and the integer program.
 *
 * - No room: when the greedy pass admits every pod of every gang, preempts
 *   nothing and meets its own penalty bound, auto returns that pass
 *   (mode_used "greedy").
 * - A greedy pass that preempts is never taken as it is: the program runs
 *   (mode_used "ilp") and picks the cheaper victims.
 * - On random problems auto is feasible, never worse than the greedy, and
 *   either the exhaustive optimum or a greedy answer that the rule above
 *   allowed (every pod placed, no preemption, penalty within 1 % of its
 *   bound).
 * - With no time for a program, the greedy answer comes back, feasible. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../support/exhaust.h"
#include "../support/leak.h"
#include "../support/randprob.h"
#include "../support/testutil.h"
#include "rackfit/rackfit.h"

#define RUN(name, prio, pl)                                                                                            \
    "{\"name\":\"" name "\",\"priority\":" #prio ",\"pod_sets\":[{\"name\":\"w\","                                     \
    "\"requests\":{\"nvidia.com/gpu\":8},\"placements\":[" pl "]}]}"
#define AT(n) "{\"node\":\"h-" #n "\",\"count\":1}"
#define RACK_GANG(name, prio, count)                                                                                   \
    "{\"name\":\"" name "\",\"priority\":" #prio ",\"topology\":{\"required\":\"example.com/rack\"},"                  \
    "\"pod_sets\":[{\"name\":\"w\",\"count\":" #count ",\"requests\":{\"nvidia.com/gpu\":8}}]}"

/* Every pod of every gang placed, nothing preempted, penalty within 1 % of
 * the bound: the answers auto may return without a program. */
static bool s_no_room(const rf_problem_t *pb, const rf_answer_t *a)
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
    double pen = a->summary.penalty, lb = a->summary.penalty_bound;
    return pen - lb <= (1e-6 > 0.01 * pen ? 1e-6 : 0.01 * pen);
}

Test(auto, no_room_returns_the_greedy_pass)
{
    char *json = rf_test_preempt_json(NULL, "[]", "[" RACK_GANG("t", 0, 4) "]", NULL);
    rf_problem_t *pb = rf_test_parse(json);
    free(json);
    rf_answer_t *a = rf_test_solve(pb, RF_MODE_AUTO, 1, 60000);
    rf_test_assert_feasible(pb, a, "auto");
    cr_expect_str_eq(a->summary.mode_used, "greedy", "one rack, four hosts: nothing to improve");
    cr_expect(a->summary.optimal);
    rf_answer_destroy(&a);
    rf_problem_destroy(&pb);
    rf_test_no_leaks();
}

Test(auto, a_greedy_pass_that_preempts_runs_the_program)
{
    /* r1: one 4-pod gang (32 GPUs); r2: a 2-pod gang (16) and two free
     * nodes. The gang is admitted whole either way; only the program can
     * say which rack costs less */
    const int used[8] = {8, 8, 8, 8, 8, 8, 0, 0};
    char *json = rf_test_preempt_json(
        used, "[" RUN("big", 0, AT(0) "," AT(1) "," AT(2) "," AT(3)) "," RUN("x", 0, AT(4) "," AT(5)) "]",
        "[" RACK_GANG("train", 100, 4) "]", NULL);
    rf_problem_t *pb = rf_test_parse(json);
    free(json);
    rf_answer_t *a = rf_test_solve(pb, RF_MODE_AUTO, 1, 60000);
    rf_test_assert_feasible(pb, a, "auto");
    cr_expect_str_eq(a->summary.mode_used, "ilp");
    cr_expect(a->gangs[0].admitted);
    cr_expect(!a->running[0].preempted && a->running[1].preempted, "the cheaper rack is freed");
    rf_answer_destroy(&a);
    rf_problem_destroy(&pb);
    rf_test_no_leaks();
}

Test(auto, optimal_or_a_greedy_answer_with_no_room, .timeout = 300)
{
    rf_randprob_opts_t o;
    rf_randprob_default(&o);
    o.max_nodes = 5;
    o.max_gangs = 4;
    o.max_pods = 4;
    o.slice_bound = false;
    o.max_running = 4;
    int compared = 0, ran_program = 0, stopped = 0;
    for (uint64_t seed = 1; seed <= 150; seed++) {
        char *json = rf_randprob(seed, &o);
        rf_problem_t *pb = rf_test_parse(json);
        if (!rf_exhaust_supported(pb, NULL)) {
            rf_problem_destroy(&pb);
            free(json);
            continue;
        }
        char what[64];
        snprintf(what, sizeof what, "seed %llu", (unsigned long long)seed);
        rf_answer_t *g = rf_test_solve(pb, RF_MODE_GREEDY, 1, 60000);
        rf_answer_t *a = rf_test_solve(pb, RF_MODE_AUTO, 1, 60000);
        rf_test_assert_feasible(pb, a, what);
        cr_expect_leq(rf_answer_compare(a, g), 0, "%s: auto worse than greedy", what);
        bool ilp = strcmp(a->summary.mode_used, "ilp") == 0;
        ran_program += ilp;
        if (rf_exhaust_compare(pb, a) != 0) {
            stopped++;
            cr_expect(!ilp && s_no_room(pb, a), "%s: auto is not optimal, and the rule did not allow stopping", what);
        }
        compared++;
        rf_answer_destroy(&g);
        rf_answer_destroy(&a);
        rf_problem_destroy(&pb);
        free(json);
    }
    cr_log_info("auto: %d problems, the program ran on %d, stopped at a non-optimal greedy answer on %d", compared,
                ran_program, stopped);
    cr_assert_geq(compared, 80);
    cr_assert_gt(ran_program, 0);
    rf_test_no_leaks();
}

Test(auto, no_time_returns_the_greedy_answer)
{
    char *json = rf_randprob(11, &(rf_randprob_opts_t){.max_nodes = 40,
                                                       .max_gangs = 12,
                                                       .max_pods = 8,
                                                       .max_pod_sets = 2,
                                                       .bound_percent = 15,
                                                       .slice_bound = false,
                                                       .max_running = 8});
    rf_problem_t *pb = rf_test_parse(json);
    free(json);
    rf_answer_t *a = rf_test_solve(pb, RF_MODE_AUTO, 1, 1);
    rf_test_assert_feasible(pb, a, "auto, 1 ms");
    cr_expect_str_eq(a->summary.mode_used, "greedy");
    rf_answer_destroy(&a);
    rf_problem_destroy(&pb);
    rf_test_no_leaks();
}
