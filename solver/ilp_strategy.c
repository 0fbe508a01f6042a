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
#include "rackfit/check.h"
#include "rackfit/machine.h"
#include "rackfit/solve.h"
#include "strategy.h"
#include "tree.h"

#ifdef RF_HAVE_OPENMP
#include <omp.h>
#endif

/* Problems whose exact (node-level) program stays this small get it. */
#define S_EXACT_COLS 4000
/* Programs up to this many linking rows get one per (x, domain). */
#define S_TIGHT_ROWS 200000
/* Batches whose node-level program would pass this many columns are
 * improved region by region (the neighbourhood search). */
#define S_WHOLE_COLS 200000
/* Region sizes for the neighbourhood search, in nodes. */
#define S_REGION_NODES 128
#define S_REGION_MAX   1100
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

/* Copy gang g's decision (placements or reason) from `src` into `dst`. */
static rf_status s_copy_gang(rf_answer_t *dst, const rf_answer_t *src, int32_t g)
{
    const rf_gang_answer_t *sg = &src->gangs[g];
    if (!sg->admitted) {
        return rf_answer_reject(dst, g, sg->why, "%s", sg->reason ? sg->reason : "");
    }
    rf_answer_gang_reset(dst, g);
    for (int32_t p = 0; p < src->problem->gangs[g].n_pod_sets; p++)
        for (int32_t i = 0; i < sg->pod_sets[p].n_placements; i++)
            RF_CALL(rf_answer_add(dst, g, p, sg->pod_sets[p].placements[i].node, sg->pod_sets[p].placements[i].count));
    dst->gangs[g].admitted = true;
    return RF_OK;
}

typedef struct {
    int32_t first, last; /* positions in the tree's node order */
} s_region_t;

/* Regions for the neighbourhood search: the top-level domains when there
 * are several of a workable size, else runs of consecutive deepest-z-level
 * domains of about S_REGION_NODES nodes (tree order keeps them close). */
static int32_t s_regions(const rf__tree_t *t, int32_t zl, s_region_t *out, int32_t cap)
{
    int32_t n = 0;
    int32_t tops = t->level_start[1] - t->level_start[0];
    if (zl >= 1 && tops >= 2) {
        bool fit = true;
        for (int32_t d = t->level_start[0]; d < t->level_start[1]; d++)
            fit &= t->node_end[d] - t->node_start[d] <= S_REGION_MAX;
        if (fit) {
            for (int32_t d = t->level_start[0]; d < t->level_start[1] && n < cap; d++)
                out[n++] = (s_region_t){t->node_start[d], t->node_end[d]};
            return n;
        }
    }
    int32_t lz = zl >= 1 ? zl - 1 : -1;
    int32_t a = 0;
    if (lz < 0) {
        for (int32_t i = 0; i < t->n_in_tree && n < cap; i += S_REGION_NODES)
            out[n++] = (s_region_t){i, i + S_REGION_NODES < t->n_in_tree ? i + S_REGION_NODES : t->n_in_tree};
        return n;
    }
    for (int32_t d = t->level_start[lz]; d < t->level_start[lz + 1] && n < cap; d++)
        if (t->node_end[d] - a >= S_REGION_NODES || d + 1 == t->level_start[lz + 1]) {
            out[n++] = (s_region_t){a, t->node_end[d]};
            a = t->node_end[d];
        }
    return n;
}

/* Large neighbourhood search: free the gangs of one region at a time (and a
 * share of the rejected gangs), keep every other gang, and let the program
 * re-place them within the region; `threads` disjoint regions at once, their
 * improvements merged. Until the deadline, or until a whole pass proves
 * every region optimal. */
static rf_status s_lns(const rf_problem_t *pb, rf_answer_t *best, double deadline, int32_t threads, bool tight,
                       rf_error_t *err)
{
    rf__tree_t tree;
    RF_CALL(rf__tree_build(pb, &tree, err));
    const int32_t L = pb->n_levels, N = pb->n_nodes, G = pb->n_gangs;
    bool host_level = strcmp(pb->levels[L - 1], RF_HOSTNAME_LABEL) == 0;
    int32_t zl = host_level ? L - 1 : L;
    int32_t cap = tree.n_in_tree / 8 + 16;
    s_region_t *regions = malloc((size_t)cap * sizeof *regions);
    int32_t *region_of = malloc((size_t)(N + 1) * sizeof *region_of);
    uint8_t *masks = calloc((size_t)threads * (size_t)N + 1, 1);
    bool *keeps = malloc((size_t)threads * (size_t)(G + 1) * sizeof *keeps);
    s_run_t *runs = calloc((size_t)threads, sizeof *runs);
    rf_answer_t *merged = rf_answer_new(pb);
    rf_status rc = RF_OK;
    if (!regions || !region_of || !masks || !keeps || !runs || !merged) {
        rc = rf_error_set(err, RF_ENOMEM, "", "out of memory");
        goto done;
    }
    int32_t n_regions = s_regions(&tree, zl, regions, cap);
    for (int32_t n = 0; n < N; n++)
        region_of[n] = -1;
    for (int32_t r = 0; r < n_regions; r++)
        for (int32_t i = regions[r].first; i < regions[r].last; i++)
            region_of[tree.node_order[i]] = r;
    for (int32_t pass = 0; rf_now_ms() < deadline; pass++) {
        bool improved_pass = false, all_proven = true;
        for (int32_t r0 = 0; r0 < n_regions && rf_now_ms() < deadline; r0 += threads) {
            int32_t batch = n_regions - r0 < threads ? n_regions - r0 : threads;
            int32_t batches_left = (n_regions - r0 + threads - 1) / threads;
            double slice_end = rf_now_ms() + (deadline - rf_now_ms()) / batches_left;
            /* which gangs each run frees */
            int32_t rejected_seen = 0;
            for (int32_t k = 0; k < batch; k++) {
                bool *keep = &keeps[(size_t)k * (G + 1)];
                uint8_t *mask = &masks[(size_t)k * N];
                memset(mask, 0, (size_t)N);
                for (int32_t i = regions[r0 + k].first; i < regions[r0 + k].last; i++)
                    mask[tree.node_order[i]] = 1;
                for (int32_t g = 0; g < G; g++)
                    keep[g] = true;
            }
            for (int32_t g = 0; g < G; g++) {
                const rf_gang_answer_t *ga = &best->gangs[g];
                if (!ga->admitted) {
                    keeps[(size_t)((rejected_seen++ + pass) % batch) * (G + 1) + g] = false;
                    continue;
                }
                /* admitted: free it where all its pods (new and bound) are in one region */
                int32_t home = -2;
                const rf_gang_t *gg = &pb->gangs[g];
                for (int32_t p = 0; p < gg->n_pod_sets && home != -1; p++) {
                    for (int32_t i = 0; i < ga->pod_sets[p].n_placements && home != -1; i++) {
                        int32_t r = region_of[ga->pod_sets[p].placements[i].node];
                        home = home == -2 || home == r ? r : -1;
                    }
                    for (int32_t i = 0; i < gg->pod_sets[p].n_bound && home != -1; i++) {
                        int32_t r = region_of[gg->pod_sets[p].bound[i].node];
                        home = home == -2 || home == r ? r : -1;
                    }
                }
                if (home >= r0 && home < r0 + batch)
                    keeps[(size_t)(home - r0) * (G + 1) + g] = false;
            }
#ifdef RF_HAVE_OPENMP
#pragma omp parallel for num_threads(batch) schedule(static, 1) if (batch > 1 && rf__mip_thread_safe()) default(none)  \
    shared(runs, pb, best, keeps, masks, slice_end, tight, batch, G, N)
#endif
            for (int32_t k = 0; k < batch; k++) {
                rf_machine_bind_thread(k);
                rf__ilp_opts_t io = {.deadline_ms = slice_end,
                                     .mip_gap = 1e-9,
                                     .aggregate = true,
                                     .tight = tight,
                                     .keep = &keeps[(size_t)k * (G + 1)],
                                     .node_allowed = &masks[(size_t)k * N]};
                runs[k].rc = rf__ilp_improve(pb, best, &io, &runs[k].answer, &runs[k].stats, &runs[k].err);
            }
            /* merge what improved: regions and freed gangs are disjoint */
            bool any = false;
            for (int32_t k = 0; k < batch; k++) {
                if (runs[k].rc == RF_ENOMEM) {
                    rc = RF_ENOMEM;
                    if (err)
                        *err = runs[k].err;
                }
                all_proven &= runs[k].stats.values_proven && runs[k].stats.penalty_proven;
                any |= runs[k].answer != NULL;
            }
            if (any && rc == RF_OK) {
                rc = rf_answer_copy(merged, best);
                for (int32_t k = 0; k < batch && rc == RF_OK; k++)
                    for (int32_t g = 0; g < G && runs[k].answer && rc == RF_OK; g++)
                        if (!keeps[(size_t)k * (G + 1) + g])
                            rc = s_copy_gang(merged, runs[k].answer, g);
                if (rc == RF_OK)
                    rc = rf_answer_finish(merged);
                if (rc == RF_OK) {
                    rf_check_report_t rep;
                    memset(&rep, 0, sizeof rep);
                    rf_error_t cerr;
                    bool ok = rf_check(pb, merged, &rep, &cerr) == RF_OK && rep.feasible;
                    rf_check_report_fini(&rep);
                    if (ok && rf_answer_compare(merged, best) < 0) {
                        rc = rf_answer_copy(best, merged);
                        improved_pass = true;
                    }
                }
            }
            for (int32_t k = 0; k < batch; k++)
                rf_answer_destroy(&runs[k].answer);
            if (rc != RF_OK)
                goto done;
        }
        if (!improved_pass && all_proven)
            break; /* every region is as good as it gets on its own */
    }
done:
    rf_answer_destroy(&merged);
    free(regions);
    free(region_of);
    free(masks);
    free(keeps);
    free(runs);
    rf__tree_fini(&tree);
    return rc;
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
    if (!small && exact_cols > S_WHOLE_COLS) {
        /* too large for one program: the neighbourhood search */
        rf_status rc = s_lns(pb, ans, deadline, threads, true, err);
        rf_answer_destroy(&other);
        if (rc != RF_OK)
            return rc;
        double lb = 0;
        rf__greedy_gang_bounds(pb, ans, &lb);
        ans->summary.penalty_bound = fmin(lb, ans->summary.penalty);
        ans->summary.optimal = false;
        ans->summary.mode_used = mode_name;
        return RF_OK;
    }
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
