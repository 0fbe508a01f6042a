/* solver/auto.c: the strategy "auto", the policy between the greedy and the
 * integer program (docs/ilp.md, "auto").
 *
 * One greedy pass (the greedy strategy's first order, polished, with each
 * gang's own bound: rf__greedy_first_order). A proven optimum is returned
 * as it is. When the bound shows no room (every gang got every pod with no
 * preemption, so the value cannot rise, and the penalty is within 1 % of its
 * bound), or when the time left would not fit another pass and a program,
 * the better of it and the greedy strategy's Kueue-order pass (when one
 * more pass fits the time left) is returned: auto is not behind the greedy
 * unless the limit is shorter than the greedy's own passes. Otherwise the
 * search of "ilp" runs from that very pass (rf__ilp_run with it as the
 * first pass): the greedy is never run twice. */
#include <math.h>
#include <stdlib.h>

#include "clock.h"
#include "greedy.h"
#include "ilp_search.h"
#include "strategy.h"

/* auto stops at the greedy when its penalty is within this share of its bound. */
#define S_AUTO_GAP 0.01

/* Is the answer's value provably the most there is (every gang got every
 * pod, and no running gang preempted: the greedy's victims may cost more
 * than the program's) and its penalty within S_AUTO_GAP of its own bound?
 * Then there is no room worth a program. */
static bool s_no_room(const rf_problem_t *pb, const rf_answer_t *ans)
{
    if (ans->summary.preempted > 0)
        return false;
    for (int32_t g = 0; g < pb->n_gangs; g++) {
        if (!ans->gangs[g].admitted)
            return false;
        for (int32_t p = 0; p < pb->gangs[g].n_pod_sets; p++) {
            const rf_pod_set_t *ps = &pb->gangs[g].pod_sets[p];
            int64_t pods = ps->n_bound_pods;
            for (int32_t i = 0; i < ans->gangs[g].pod_sets[p].n_placements; i++)
                pods += ans->gangs[g].pod_sets[p].placements[i].count;
            if (pods < ps->count)
                return false;
        }
    }
    double pen = ans->summary.penalty, lb = ans->summary.penalty_bound;
    return pen - lb <= fmax(1e-6, S_AUTO_GAP * pen);
}

static rf_status s_auto_solve(const rf_solve_ctx_t *ctx, rf_answer_t *ans, rf_error_t *err)
{
    const rf_problem_t *pb = rf_solve_ctx_problem(ctx);
    rf__ilp_clock_t ck;
    rf__ilp_clock_init(&ck, rf_solve_ctx_opts(ctx));
    double *gang_lb = calloc((size_t)pb->n_gangs + 1, sizeof *gang_lb);
    if (!gang_lb)
        return rf_error_set(err, RF_ENOMEM, "", "out of memory");
    double t0 = rf_now_ms();
    rf_status rc = rf__greedy_run(ctx, rf__greedy_first_order(ctx), true, ans, gang_lb, err);
    double greedy_ms = rf_now_ms() - t0;
    if (rc != RF_OK || ans->summary.optimal) {
        free(gang_lb);
        return rc;
    }
    if (s_no_room(pb, ans) || !rf__ilp_time_for(&ck, 2 * greedy_ms)) {
        /* no room worth a program, or no time for one: still the greedy
         * strategy's own second pass (Kueue's order after the value order),
         * so that auto is never behind the greedy (on a loaded machine, or
         * by the 1 % of penalty the room test allows) */
        if (rf__greedy_first_order(ctx) == RF__ORDER_VALUE && rf__ilp_left(&ck) > greedy_ms) {
            rf_answer_t *k = rf_answer_new(pb);
            rc = k ? rf__greedy_run(ctx, RF__ORDER_KUEUE, true, k, NULL, err)
                   : rf_error_set(err, RF_ENOMEM, "", "out of memory");
            if (rc == RF_OK && rf_answer_compare(k, ans) < 0)
                rc = rf_answer_copy(ans, k);
            rf_answer_destroy(&k);
        }
        free(gang_lb);
        return rc;
    }
    rf_answer_t *fresh = rf_answer_new(pb);
    if (!fresh) {
        free(gang_lb);
        return rf_error_set(err, RF_ENOMEM, "", "out of memory");
    }
    rc = rf__ilp_run(ctx, ans, gang_lb, greedy_ms, fresh, err);
    if (rc == RF_OK && rf_answer_compare(fresh, ans) <= 0)
        rc = rf_answer_copy(ans, fresh);
    rf_answer_destroy(&fresh);
    free(gang_lb);
    return rc;
}

const rf_strategy_t rf__strategy_auto = {
    .name = "auto",
    .description = "the greedy answer when its value cannot rise and its penalty is within 1 % of its bound, or "
                   "when time is short; else the integer program, started from that greedy pass",
    .solve = s_auto_solve,
};
