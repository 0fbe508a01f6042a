/* solver/ilp_strategy.c: the strategy "ilp" (docs/ilp.md, "Solving it"),
 * and the clock it shares with "auto" (solver/auto.c).
 *
 * It starts from the greedy: up to three polished passes (larger gangs
 * first; queue order with Kueue's own choices; queue order), the best kept.
 * That answer is the incumbent; it is returned as it is whenever nothing
 * better is found, so the mode is never worse than the greedy, and an
 * answer is always there when the time limit strikes. Then:
 * - a batch small enough for one program: rf__ilp_whole (solver/ilp_search.c);
 * - a larger batch: the neighbourhood search (rf__ilp_lns) for 75 % of the
 *   time left;
 * then, unless the values are proven, the fill (rf__greedy_fill: rejected
 * gangs that fit, elastic gangs grown), and the bounds (solver/ilp_lagrange.c,
 * solver/ilp_bound.c).
 *
 * Time: the limit counts from the solve's start_ms (when the problem was
 * received). Work is started only when the time it is expected to take
 * (measured on the greedy pass and on earlier steps) fits before the
 * deadline less a margin (3 % of the limit, at least 2 ms) kept for
 * finishing the answer; every MIP solve (GLPK, or CBC: docs/ilp.md,
 * "Backends") has the time left as its limit. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "greedy.h"
#include "ilp_bound.h"
#include "ilp_search.h"
#include "rackfit/check.h"
#include "strategy.h"

/* Batches whose exact (node-level) program stays this small get it. */
#define S_EXACT_COLS 4000
/* Programs up to this many linking rows get one per (x, domain). */
#define S_TIGHT_ROWS 200000
/* Batches whose node-level program would pass this many columns are
 * improved region by region (the neighbourhood search). */
#define S_WHOLE_COLS 200000
/* The share of the time left that the neighbourhood search gets; the rest
 * proves bounds. */
#define S_SEARCH_SHARE 0.75
/* The Lagrangian bound's share of what the search leaves (the contention LP
 * and the per-gang bounds get the rest). */
#define S_LAGR_SHARE 0.6

/* ---------------------------------------------------------------- the clock */

void rf__ilp_clock_init(rf__ilp_clock_t *ck, const rf_solve_opts_t *opts)
{
    double start = opts->start_ms > 0 ? opts->start_ms : rf_now_ms();
    double limit = (double)(opts->time_limit_ms >= 0 ? opts->time_limit_ms : 0);
    ck->deadline = start + limit - fmax(2.0, 0.03 * limit);
    ck->greedy_ms = 0;
    ck->step_ms = 0;
    ck->mip = (rf_mip_backend)opts->mip;
}

double rf__ilp_left(const rf__ilp_clock_t *ck)
{
    return ck->deadline - rf_now_ms();
}

bool rf__ilp_time_for(const rf__ilp_clock_t *ck, double cost)
{
    return rf__ilp_left(ck) > cost + RF__ILP_MIN_SLICE_MS;
}

void rf__ilp_note_step(rf__ilp_clock_t *ck, const rf__ilp_stats_t *st)
{
    double ms = st->build_ms + st->decode_ms;
    if (ms > ck->step_ms)
        ck->step_ms = ms;
}

/* ---------------------------------------------------------------- the start */

/* Greedy pass `order` (polished): the new best in *out, the old best or the
 * pass itself the runner-up in *other when better than it. */
static rf_status s_greedy_more(const rf_solve_ctx_t *ctx, rf__greedy_order order, rf_answer_t *out, rf_answer_t **other,
                               rf_error_t *err)
{
    const rf_problem_t *pb = rf_solve_ctx_problem(ctx);
    rf_answer_t *b = rf_answer_new(pb);
    if (!b)
        return rf_error_set(err, RF_ENOMEM, "", "out of memory");
    rf_status rc = rf__greedy_run(ctx, order, true, b, NULL, err);
    if (rc != RF_OK) {
        rf_answer_destroy(&b);
        return rc;
    }
    if (rf_answer_compare(b, out) < 0) {
        /* b is the new best; the old best becomes the runner-up */
        rf_answer_t *tmp = rf_answer_new(pb);
        if (!tmp || rf_answer_copy(tmp, out) != RF_OK || rf_answer_copy(out, b) != RF_OK) {
            rf_answer_destroy(&tmp);
            rf_answer_destroy(&b);
            return rf_error_set(err, RF_ENOMEM, "", "out of memory");
        }
        rf_answer_destroy(&b);
        b = tmp;
    }
    if (!*other || rf_answer_compare(b, *other) < 0) {
        rf_answer_destroy(other);
        *other = b;
    } else {
        rf_answer_destroy(&b);
    }
    return RF_OK;
}

/* The best of three greedy passes (larger gangs first; queue order with
 * Kueue's own choices; queue order; after a first pass in Kueue's order,
 * queue order and then larger gangs first), each polished, earlier passes
 * winning ties; the runner-up in *other when more than one ran. The queue-order
 * pass runs only while time allows one more; the Kueue-order pass after a
 * value-order first pass runs next, whenever one more pass fits before the
 * deadline, without the slack the other steps keep (it is the greedy
 * strategy's second pass: so ilp is not behind the greedy unless the limit
 * is shorter than the greedy's own passes). The first pass is `first` when
 * given (its gang bounds in first_lb), else run here; gang_lb[n_gangs] gets
 * each gang's own bound. Starting from the Kueue-style pass makes ilp and
 * auto never worse than Kueue's placer on the whole batch, not only gang by
 * gang. */
static rf_status s_greedy_best(const rf_solve_ctx_t *ctx, rf__ilp_clock_t *ck, const rf_answer_t *first,
                               const double *first_lb, double first_ms, rf_answer_t *out, rf_answer_t **other,
                               double *gang_lb, rf_error_t *err)
{
    const rf_problem_t *pb = rf_solve_ctx_problem(ctx);
    *other = NULL;
    if (first) {
        RF_CALL(rf_answer_copy(out, first));
        memcpy(gang_lb, first_lb, (size_t)pb->n_gangs * sizeof *gang_lb);
        ck->greedy_ms = first_ms;
    } else {
        double t0 = rf_now_ms();
        RF_CALL(rf__greedy_run(ctx, rf__greedy_first_order(ctx), true, out, gang_lb, err));
        ck->greedy_ms = rf_now_ms() - t0;
    }
    if (out->summary.optimal)
        return RF_OK;
    /* the orders the first pass did not take (auto's first pass is in
     * rf__greedy_first_order's too); after a value-order first pass, the
     * owed Kueue-order pass before the optional queue-order one, which
     * could otherwise take the time it needs */
    bool kueue_first = rf__greedy_first_order(ctx) == RF__ORDER_KUEUE;
    const rf__greedy_order more_k[] = {RF__ORDER_QUEUE, RF__ORDER_VALUE};
    const rf__greedy_order more_v[] = {RF__ORDER_KUEUE, RF__ORDER_QUEUE};
    const rf__greedy_order *more = kueue_first ? more_k : more_v;
    for (size_t i = 0; i < 2; i++) {
        /* the greedy strategy's own second pass (Kueue's, after the value
         * order) runs whenever it fits, without the slack: without it ilp
         * could end behind the greedy when a loaded machine leaves little
         * time (seen: test_ilp_strategy at 10 ms beside another test) */
        bool owed = !kueue_first && more[i] == RF__ORDER_KUEUE && rf__ilp_left(ck) > ck->greedy_ms;
        if ((!owed && !rf__ilp_time_for(ck, ck->greedy_ms)) ||
            (pb->options.admission == RF_ADMIT_ORDERED && more[i] == RF__ORDER_QUEUE))
            continue; /* ordered admission: the value order already is the queue order */
        RF_CALL(s_greedy_more(ctx, more[i], out, other, err));
    }
    return RF_OK;
}

/* ---------------------------------------------------------------- the strategy */

/* rf__greedy_fill on a copy of `ans`, kept when rf_check accepts it and it
 * ranks above `ans`; *more says so. */
static rf_status s_fill(const rf_solve_ctx_t *ctx, rf_answer_t *ans, double deadline, bool *more, rf_error_t *err)
{
    const rf_problem_t *pb = rf_solve_ctx_problem(ctx);
    *more = false;
    rf_answer_t *f = rf_answer_new(pb);
    if (!f || rf_answer_copy(f, ans) != RF_OK) {
        rf_answer_destroy(&f);
        return rf_error_set(err, RF_ENOMEM, "", "out of memory");
    }
    bool added = false;
    rf_error_t ferr;
    rf_status rc = rf__greedy_fill(ctx, f, deadline, &added, &ferr);
    if (rc == RF_ENOMEM) {
        rf_answer_destroy(&f);
        if (err)
            *err = ferr;
        return rc;
    }
    if (rc == RF_OK && added && rf_answer_compare(f, ans) < 0) {
        rf_check_report_t rep;
        memset(&rep, 0, sizeof rep);
        rf_error_t cerr;
        if (rf_check(pb, f, &rep, &cerr) == RF_OK && rep.feasible) {
            rc = rf_answer_copy(ans, f);
            *more = rc == RF_OK;
        }
        rf_check_report_fini(&rep);
    }
    rf_answer_destroy(&f);
    return rc == RF_ENOMEM ? rf_error_set(err, RF_ENOMEM, "", "out of memory") : RF_OK;
}

rf_status rf__ilp_run(const rf_solve_ctx_t *ctx, const rf_answer_t *first, const double *first_lb, double first_ms,
                      rf_answer_t *ans, rf_error_t *err)
{
    const rf_problem_t *pb = rf_solve_ctx_problem(ctx);
    rf__ilp_clock_t ck;
    rf__ilp_clock_init(&ck, rf_solve_ctx_opts(ctx));
    rf_answer_t *other = NULL;
    double *gang_lb = calloc((size_t)pb->n_gangs + 1, sizeof *gang_lb);
    if (!gang_lb)
        return rf_error_set(err, RF_ENOMEM, "", "out of memory");
    rf_status rc = s_greedy_best(ctx, &ck, first, first_lb, first_ms, ans, &other, gang_lb, err);
    /* proven optimal, or no time for more (running gangs and preemption are
     * in the program: docs/ilp.md, "Running gangs and preemption") */
    if (rc != RF_OK || ans->summary.optimal || !rf__ilp_time_for(&ck, ck.greedy_ms))
        goto done;
    int32_t threads = rf_solve_ctx_threads(ctx);
    int64_t exact_cols = 0, tight_rows = 0;
    for (int32_t g = 0; g < pb->n_gangs; g++) {
        exact_cols += (int64_t)pb->gangs[g].n_pod_sets * pb->n_nodes * 2;
        tight_rows += (int64_t)pb->gangs[g].n_pod_sets * pb->n_nodes * pb->n_levels;
    }
    bool small = exact_cols <= S_EXACT_COLS;
    rf__ilp_lp_memo_t lpm; /* the contention bound for the start's values */
    rf__ilp_lp_early(pb, ans, &ck, &lpm);
    double bound = ans->summary.penalty_bound;
    bool proven = false; /* the answer's values are proven the most there is */
    if (small || exact_cols <= S_WHOLE_COLS) {
        rc = rf__ilp_whole(pb, &ck, ans, other, threads, small, tight_rows <= S_TIGHT_ROWS, &bound, &proven, err);
    } else {
        double end = rf_now_ms() + rf__ilp_left(&ck) * S_SEARCH_SHARE;
        rc = rf__ilp_lns(pb, &ck, ans, end, threads, err);
    }
    if (rc != RF_OK)
        goto done;
    /* the rejected gangs placed greedily around the search's answer: a
     * search cut by its limit in an early stage never reached the later
     * ones, where a gang that simply fits may be waiting (issue 10: seeds of
     * the reference scan missed pods at the lowest priority). It runs in the
     * margin kept for finishing when the search used the time, and stops a
     * greedy pass before the limit. */
    if (!proven && ans->summary.rejected > 0 && rf_now_ms() + 2 * ck.greedy_ms < rf_solve_ctx_deadline_ms(ctx)) {
        bool more = false;
        /* it stops a greedy pass before the limit: the check and the copy need about one */
        if ((rc = s_fill(ctx, ans, rf_solve_ctx_deadline_ms(ctx) - ck.greedy_ms, &more, err)) != RF_OK)
            goto done;
        if (more)
            bound = 0; /* other values: the search's bound speaks of the old ones; the bounds below are redone */
    }
    /* the Lagrangian bound (issue 10), anytime once its classes and entries
     * are built, which its clock does not interrupt: about 7 ns per node x
     * pod set on an idle core (1.5 ms on gpu-1024, 113 ms on fabric-16384);
     * twice 10 ns must fit */
    double lagr_setup_ms = 1 + 1e-5 * (double)exact_cols / 2;
    if (ans->summary.penalty > bound + 1e-6 &&
        S_LAGR_SHARE * rf__ilp_left(&ck) > 2 * lagr_setup_ms + RF__ILP_MIN_SLICE_MS)
        bound =
            fmax(bound, rf__ilp_lagrange_bound(pb, ans, rf_now_ms() + S_LAGR_SHARE * rf__ilp_left(&ck), threads, NULL));
    if (ans->summary.penalty > bound + 1e-6) /* the contention LP (issue 10) */
        bound = fmax(bound, rf__ilp_lp_late(&lpm, pb, ans, &ck));
    if (ans->summary.penalty > bound + 1e-6)
        bound = fmax(bound, rf__ilp_gang_bounds(pb, &ck, ans, gang_lb, threads));
    ans->summary.penalty_bound = fmin(bound, ans->summary.penalty);
    if (ans->summary.penalty - ans->summary.penalty_bound <= 1e-6)
        ans->summary.penalty_bound = ans->summary.penalty; /* GLPK's bound to within 1e-6 */
    ans->summary.optimal =
        proven && ans->summary.penalty <= ans->summary.penalty_bound + 1e-6 && rf__ilp_models_all(pb);
    ans->summary.mode_used = "ilp";
done:
    free(gang_lb);
    rf_answer_destroy(&other);
    return rc;
}

static rf_status s_ilp_solve(const rf_solve_ctx_t *ctx, rf_answer_t *ans, rf_error_t *err)
{
    return rf__ilp_run(ctx, NULL, NULL, 0, ans, err);
}

const rf_strategy_t rf__strategy_ilp = {
    .name = "ilp",
    .description =
        "the integer program of docs/ilp.md, solved in stages from the greedy answer (GLPK; CBC beside it on "
        "small batches when built in), then a greedy fill",
    .solve = s_ilp_solve,
};
