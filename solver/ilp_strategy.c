/* solver/ilp_strategy.c: the strategies "ilp" and "auto".
 *
 * Both start from the greedy: two passes (larger gangs first, then queue
 * order), the better kept. That answer is the incumbent; it is returned as
 * it is whenever nothing better is found, so neither mode is ever worse than
 * the greedy, and an answer is always there when the time limit strikes.
 *
 * ilp:  spend the time limit on the integer program (solver/ilp.c). With
 *       several threads, competing programs run at once (OpenMP, one GLPK
 *       problem per thread): the aggregated program from the best greedy
 *       answer, and the exact node-level program (small problems) or the
 *       aggregated one from the other greedy answer; the best result wins,
 *       ties to the lower thread index, so the answer does not depend on
 *       timing when no time limit cuts a search.
 * auto: answer at greedy speed when the greedy is proven optimal (every gang
 *       admitted and the penalty at its lower bound) or the time limit is
 *       too short to gain; otherwise run as ilp within the limit.
 *
 * Time: the limit counts from opts->start_ms (when the problem was
 * received). The program must end by the deadline less a margin for decoding
 * and checking the answer (5 % of the limit, at least 2 ms). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "greedy.h"
#include "ilp.h"
#include "mip.h"
#include "rackfit/machine.h"
#include "rackfit/solve.h"
#include "strategy.h"

#ifdef RF_HAVE_OPENMP
#include <omp.h>
#endif

/* Problems whose exact (node-level) program stays this small get it. */
#define S_EXACT_COLS 4000
/* Programs up to this many linking rows get one per (x, domain). */
#define S_TIGHT_ROWS 200000
/* The limit below which auto does not start a program. */
#define S_AUTO_MIN_MS 20.0

typedef struct {
    rf_answer_t *answer;
    rf__ilp_stats_t stats;
    rf_status rc;
    rf_error_t err;
} s_run_t;

static double s_limit_ms(const rf_problem_t *pb, const rf_solve_opts_t *opts)
{
    return (double)(opts && opts->time_limit_ms >= 0 ? opts->time_limit_ms : pb->options.time_limit_ms);
}

static int32_t s_threads(const rf_problem_t *pb, const rf_solve_opts_t *opts)
{
    int32_t t = opts && opts->threads >= 0 ? opts->threads : pb->options.threads;
    return rf_machine_threads(t);
}

/* The better of the two greedy passes (the value order on ties). */
static rf_status s_greedy_best(const rf_problem_t *pb, rf_answer_t *out, rf_answer_t **other, rf_error_t *err)
{
    *other = NULL;
    RF_CALL(rf__greedy_solve(pb, RF__ORDER_VALUE, out, err));
    if (out->summary.optimal || pb->options.admission == RF_ADMIT_ORDERED)
        return RF_OK;
    rf_answer_t *b = rf_answer_new(pb);
    if (!b)
        return rf_error_set(err, RF_ENOMEM, "", "out of memory");
    rf_status rc = rf__greedy_solve(pb, RF__ORDER_QUEUE, b, err);
    if (rc != RF_OK) {
        rf_answer_destroy(&b);
        return rc;
    }
    if (rf_answer_compare(b, out) < 0) {
        /* keep the queue-order answer; the value-order one becomes "other" */
        rf_answer_t *tmp = rf_answer_new(pb);
        if (!tmp || rf_answer_copy(tmp, out) != RF_OK || rf_answer_copy(out, b) != RF_OK) {
            rf_answer_destroy(&tmp);
            rf_answer_destroy(&b);
            return rf_error_set(err, RF_ENOMEM, "", "out of memory");
        }
        rf_answer_destroy(&b);
        b = tmp;
    }
    *other = b;
    return RF_OK;
}

static rf_status s_run_ilp(const rf_problem_t *pb, const rf_solve_opts_t *opts, rf_answer_t *ans, rf_error_t *err,
                           const char *mode_name)
{
    rf_answer_t *other = NULL;
    RF_CALL(s_greedy_best(pb, ans, &other, err));
    double greedy_bound = ans->summary.penalty_bound;
    if (ans->summary.optimal) {
        rf_answer_destroy(&other);
        return RF_OK; /* the greedy answer is proven optimal */
    }
    double start = opts && opts->start_ms > 0 ? opts->start_ms : rf_now_ms();
    double limit = s_limit_ms(pb, opts);
    double margin = fmax(2.0, 0.05 * limit);
    double deadline = start + limit - margin;
    if (deadline - rf_now_ms() < 1.0) {
        rf_answer_destroy(&other);
        return RF_OK;
    }
    int32_t threads = s_threads(pb, opts);
    int64_t exact_cols = 0;
    for (int32_t g = 0; g < pb->n_gangs; g++)
        exact_cols += (int64_t)pb->gangs[g].n_pod_sets * pb->n_nodes * 2;
    bool small = exact_cols <= S_EXACT_COLS;
    int64_t tight_rows = 0; /* x columns times levels, at node granularity: an upper estimate */
    for (int32_t g = 0; g < pb->n_gangs; g++)
        tight_rows += (int64_t)pb->gangs[g].n_pod_sets * pb->n_nodes * pb->n_levels;
    bool tight = tight_rows <= S_TIGHT_ROWS;
    /* runs: 0 aggregated from the best answer; 1 exact (small) or from the other */
    int32_t n_runs = threads > 1 ? 2 : 1;
    s_run_t runs[2];
    memset(runs, 0, sizeof runs);
    bool thread_safe = rf__mip_thread_safe();
#ifdef RF_HAVE_OPENMP
#pragma omp parallel for num_threads(n_runs) schedule(static, 1) if (n_runs > 1 && thread_safe) default(none)          \
    shared(runs, pb, ans, other, deadline, small, tight, n_runs)
#endif
    for (int32_t i = 0; i < n_runs; i++) {
        rf_machine_bind_thread(i);
        /* small problems: run 0 exact (every node its own unit), run 1
         * with units (often faster, sometimes not decodable); larger ones:
         * run 0 with units from the best greedy answer, run 1 with the other
         * linking formulation from the other greedy answer */
        rf__ilp_opts_t io = {.deadline_ms = deadline,
                             .mip_gap = 1e-9,
                             .node_budget = 0,
                             .mem_limit_mb = 0,
                             .aggregate = small ? i == 1 : true,
                             .tight = small ? true : (i == 0 ? tight : !tight),
                             .keep = NULL};
        const rf_answer_t *from = (i == 1 && !small && other) ? other : ans;
        runs[i].rc = rf__ilp_improve(pb, from, &io, &runs[i].answer, &runs[i].stats, &runs[i].err);
    }
    (void)thread_safe;
    /* the best run by the objective; ties to the lower index */
    int32_t best = -1;
    for (int32_t i = 0; i < n_runs; i++) {
        if (runs[i].rc == RF_ENOMEM && err)
            *err = runs[i].err;
        if (!runs[i].answer)
            continue;
        if (best < 0 || rf_answer_compare(runs[i].answer, runs[best].answer) < 0)
            best = i;
    }
    double bound = greedy_bound;
    bool proven = false;
    if (best >= 0 && rf_answer_compare(runs[best].answer, ans) < 0) {
        rf_answer_copy(ans, runs[best].answer);
        bound = 0;
    }
    /* a run whose values match the answer's proves a bound for it */
    for (int32_t i = 0; i < n_runs; i++) {
        const rf__ilp_stats_t *st = &runs[i].stats;
        bool matches = runs[i].answer ? rf_answer_compare(runs[i].answer, ans) == 0 : st->solved;
        if (!st->solved || !matches || st->penalty_bound < 0)
            continue;
        if (st->penalty_bound > bound)
            bound = st->penalty_bound;
        proven |= st->values_proven && st->penalty_proven;
    }
    if (bound > ans->summary.penalty)
        bound = ans->summary.penalty;
    ans->summary.penalty_bound = bound;
    ans->summary.optimal = proven && ans->summary.penalty <= bound + 1e-6;
    ans->summary.mode_used = mode_name;
    for (int32_t i = 0; i < n_runs; i++)
        rf_answer_destroy(&runs[i].answer);
    rf_answer_destroy(&other);
    return RF_OK;
}

static rf_status s_ilp_solve(const rf_problem_t *pb, const rf_solve_opts_t *opts, rf_answer_t *ans, rf_error_t *err)
{
    return s_run_ilp(pb, opts, ans, err, "ilp");
}

static rf_status s_auto_solve(const rf_problem_t *pb, const rf_solve_opts_t *opts, rf_answer_t *ans, rf_error_t *err)
{
    RF_CALL(rf__greedy_solve(pb, RF__ORDER_VALUE, ans, err));
    if (ans->summary.optimal)
        return RF_OK; /* proven: every gang admitted, penalty at its bound */
    double start = opts && opts->start_ms > 0 ? opts->start_ms : rf_now_ms();
    double left = start + s_limit_ms(pb, opts) - rf_now_ms();
    if (left < S_AUTO_MIN_MS) {
        /* too little time for a program: the second greedy pass only */
        rf_answer_t *b = rf_answer_new(pb);
        if (!b)
            return rf_error_set(err, RF_ENOMEM, "", "out of memory");
        if (pb->options.admission != RF_ADMIT_ORDERED && rf__greedy_solve(pb, RF__ORDER_QUEUE, b, err) == RF_OK &&
            rf_answer_compare(b, ans) < 0)
            rf_answer_copy(ans, b);
        rf_answer_destroy(&b);
        return RF_OK;
    }
    rf_answer_t *fresh = rf_answer_new(pb);
    if (!fresh)
        return rf_error_set(err, RF_ENOMEM, "", "out of memory");
    rf_status rc = s_run_ilp(pb, opts, fresh, err, "ilp");
    if (rc == RF_OK && rf_answer_compare(fresh, ans) <= 0)
        rc = rf_answer_copy(ans, fresh);
    rf_answer_destroy(&fresh);
    return rc;
}

const rf_strategy_t rf__strategy_ilp = {
    .name = "ilp",
    .description = "the integer program of docs/ilp.md, solved with GLPK in stages from the greedy answer",
    .solve = s_ilp_solve,
};

const rf_strategy_t rf__strategy_auto = {
    .name = "auto",
    .description = "the greedy answer when it is proven optimal or time is short, else the integer program",
    .solve = s_auto_solve,
};
