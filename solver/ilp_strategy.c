/* solver/ilp_strategy.c: the strategies "ilp" and "auto".
 *
 * Both start from the greedy: up to three polished passes (larger gangs
 * first; queue order; queue order with Kueue's own choices), the best kept.
 * That answer is the incumbent; it is returned as
 * it is whenever nothing better is found, so neither mode is ever worse than
 * the greedy, and an answer is always there when the time limit strikes.
 *
 * ilp:  spend the time limit on the integer program (solver/ilp.c):
 *       - a batch small enough for one program: competing programs at once
 *         (OpenMP, one GLPK problem per thread): the exact node-level one and
 *         the one over units (small batches), or the two linking
 *         formulations from the two greedy answers; the best wins, ties to
 *         the lower thread, so the answer does not depend on timing when no
 *         time limit cuts a search;
 *       - a larger batch: a neighbourhood search, one region of the cluster
 *         at a time (`threads` disjoint regions at once), then the rest of
 *         the time proving each admitted gang's own least penalty.
 * auto: answer at greedy speed when the bound shows no room (every gang
 *       got every pod and the penalty is within 1 % of its bound) or too
 *       little time is left; otherwise run as ilp within the limit.
 *
 * Time: the limit counts from opts->start_ms (when the problem was
 * received). Work is started only when the time it is expected to take
 * (measured on the greedy pass and on earlier steps) fits before the
 * deadline less a margin (3 % of the limit, at least 2 ms) kept for
 * finishing the answer; every GLPK call has the time left as tm_lim. */
#include <math.h>
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
/* Rejected gangs one region's program may try at once. */
#define S_LNS_REJECTED 256
/* Region sizes for the neighbourhood search, in nodes. */
#define S_REGION_NODES 64
#define S_REGION_MAX   1100
/* auto stops at the greedy when its penalty is within this share of its bound. */
#define S_AUTO_GAP 0.01
/* The shortest slice of GLPK time worth starting a program for. */
#define S_MIN_SLICE_MS 5.0

typedef struct {
    rf_answer_t *answer;
    rf__ilp_stats_t stats;
    rf_status rc;
    rf_error_t err;
} s_run_t;

/* One solve's clock: the deadline for work, and what steps cost so far. */
typedef struct {
    double deadline;  /* start + limit - margin */
    double greedy_ms; /* one greedy pass */
    double step_ms;   /* the most a program's build, decode and check took */
} s_clock_t;

static double s_left(const s_clock_t *ck)
{
    return ck->deadline - rf_now_ms();
}

/* Is there time for a step expected to take `cost` ms, plus a useful slice? */
static bool s_time_for(const s_clock_t *ck, double cost)
{
    return s_left(ck) > cost + S_MIN_SLICE_MS;
}

static void s_clock_init(s_clock_t *ck, const rf_problem_t *pb, const rf_solve_opts_t *opts)
{
    double start = opts && opts->start_ms > 0 ? opts->start_ms : rf_now_ms();
    double limit = (double)(opts && opts->time_limit_ms >= 0 ? opts->time_limit_ms : pb->options.time_limit_ms);
    ck->deadline = start + limit - fmax(2.0, 0.03 * limit);
    ck->greedy_ms = 0;
    ck->step_ms = 0;
}

static int32_t s_threads(const rf_problem_t *pb, const rf_solve_opts_t *opts)
{
    int32_t t = opts && opts->threads >= 0 ? opts->threads : pb->options.threads;
    return rf_machine_threads(t);
}

/* The best of three greedy passes (larger gangs first; queue order; queue
 * order with Kueue's own choices), each polished, earlier passes winning
 * ties; the runner-up in *other when more than one ran. Later passes run
 * only while time allows one more. gang_lb[n_gangs] gets each gang's own
 * bound. Starting from the Kueue-style pass makes ilp and auto never worse
 * than Kueue's placer on the whole batch, not only gang by gang. */
static rf_status s_greedy_best(const rf_solve_ctx_t *ctx, s_clock_t *ck, rf_answer_t *out, rf_answer_t **other,
                               double *gang_lb, rf_error_t *err)
{
    const rf_problem_t *pb = rf_solve_ctx_problem(ctx);
    *other = NULL;
    double t0 = rf_now_ms();
    RF_CALL(rf__greedy_run(ctx, RF__ORDER_VALUE, true, out, gang_lb, err));
    ck->greedy_ms = rf_now_ms() - t0;
    if (out->summary.optimal)
        return RF_OK;
    const rf__greedy_order more[] = {RF__ORDER_QUEUE, RF__ORDER_KUEUE};
    for (size_t i = 0; i < sizeof more / sizeof *more; i++) {
        if (!s_time_for(ck, ck->greedy_ms) || (pb->options.admission == RF_ADMIT_ORDERED && more[i] == RF__ORDER_QUEUE))
            continue; /* ordered admission: the value order already is the queue order */
        rf_answer_t *b = rf_answer_new(pb);
        if (!b)
            return rf_error_set(err, RF_ENOMEM, "", "out of memory");
        rf_status rc = rf__greedy_run(ctx, more[i], true, b, NULL, err);
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
    }
    return RF_OK;
}

static void s_note_step(s_clock_t *ck, const rf__ilp_stats_t *st)
{
    double ms = st->build_ms + st->decode_ms;
    if (ms > ck->step_ms)
        ck->step_ms = ms;
}

/* ---------------------------------------------------------------- one program for the batch */

static rf_status s_whole(const rf_problem_t *pb, s_clock_t *ck, rf_answer_t *ans, const rf_answer_t *other,
                         int32_t threads, bool small, bool tight, double *bound, bool *values_proven, rf_error_t *err)
{
    int32_t n_runs = threads > 1 ? 2 : 1;
    s_run_t runs[2];
    memset(runs, 0, sizeof runs);
    double deadline = ck->deadline;
    /* small batches: when the program over units proves its answer optimal
     * (it is a relaxation, so nothing beats it), the exact run stops and
     * that answer is taken, whatever the exact run had: the outcome does not
     * depend on which finished first */
    volatile int stop_exact = 0;
    bool units_won = false;
#ifdef RF_HAVE_OPENMP
#pragma omp parallel for num_threads(n_runs)                                                                           \
    schedule(static, 1) if (n_runs > 1 && rf__mip_thread_safe()) default(none)                                         \
        shared(runs, pb, ans, other, deadline, small, tight, n_runs, stop_exact, units_won)
#endif
    for (int32_t i = 0; i < n_runs; i++) {
        rf_machine_bind_team();
        /* small batches: run 0 exact (every node its own unit), run 1 over
         * units (often faster, sometimes not decodable); larger ones: both
         * over units, run 1 with the other linking formulation from the
         * other greedy answer */
        rf__ilp_opts_t io = {.isolate = -1,
                             .deadline_ms = deadline,
                             .mip_gap = 1e-9,
                             .aggregate = small ? i == 1 : true,
                             .tight = small ? true : (i == 0 ? tight : !tight),
                             .keep = NULL,
                             .node_allowed = NULL,
                             .stop = small && i == 0 && n_runs > 1 ? &stop_exact : NULL};
        const rf_answer_t *from = (i == 1 && !small && other) ? other : ans;
        runs[i].rc = rf__ilp_improve(pb, from, &io, &runs[i].answer, &runs[i].stats, &runs[i].err);
        if (small && i == 1 && runs[i].rc == RF_OK && runs[i].stats.values_proven && runs[i].stats.penalty_proven) {
            units_won = true;
            __atomic_store_n(&stop_exact, 1, __ATOMIC_RELAXED);
        }
    }
    rf_status rc = RF_OK;
    int32_t best = -1;
    for (int32_t i = 0; i < n_runs; i++) {
        s_note_step(ck, &runs[i].stats);
        if (runs[i].rc == RF_ENOMEM) {
            rc = RF_ENOMEM;
            if (err)
                *err = runs[i].err;
        }
        if (runs[i].answer && (best < 0 || rf_answer_compare(runs[i].answer, runs[best].answer) < 0))
            best = i;
    }
    if (units_won)
        best = runs[1].answer ? 1 : -1;
    /* the values the runs started from (a run without an answer ends at them) */
    rf_value_t start[RF_MIP_MAX_STAGES];
    int32_t n_start = ans->summary.n_value <= RF_MIP_MAX_STAGES ? ans->summary.n_value : -1;
    for (int32_t v = 0; v < n_start; v++)
        start[v] = ans->summary.value[v];
    if (best >= 0 && rf_answer_compare(runs[best].answer, ans) < 0 && rc == RF_OK)
        rc = rf_answer_copy(ans, runs[best].answer);
    bool same_values = n_start == ans->summary.n_value;
    for (int32_t v = 0; same_values && v < n_start; v++)
        same_values = start[v].priority == ans->summary.value[v].priority &&
                      start[v].units == ans->summary.value[v].units && start[v].pods == ans->summary.value[v].pods;
    /* a run proves a bound for the answer only when its program's values are
     * the answer's: its own answer equals the answer, or it returned none
     * (not better, or not decodable: the program over units is a relaxation)
     * while starting from this very answer, ending at its values, and the
     * answer kept them. A run whose values are proven and the answer's proves
     * the answer's values optimal; the penalty is then optimal where it meets
     * the bound. */
    for (int32_t i = 0; i < n_runs; i++) {
        const rf__ilp_stats_t *st = &runs[i].stats;
        bool from_ans = !(i == 1 && !small && other);
        bool own = runs[i].answer && rf_answer_compare(runs[i].answer, ans) == 0;
        bool matches = own || (!runs[i].answer && st->solved && st->values_match_incumbent && from_ans && same_values);
        if (!st->solved || !matches || st->penalty_bound < 0)
            continue;
        *bound = fmax(*bound, st->penalty_bound);
        *values_proven |= st->values_proven;
    }
    for (int32_t i = 0; i < n_runs; i++)
        rf_answer_destroy(&runs[i].answer);
    return rc;
}

/* ---------------------------------------------------------------- the neighbourhood search */

/* Copy gang g's decision (placements or reason) from `src` into `dst`. */
static rf_status s_copy_gang(rf_answer_t *dst, const rf_answer_t *src, int32_t g)
{
    const rf_gang_answer_t *sg = &src->gangs[g];
    if (!sg->admitted)
        return rf_answer_reject(dst, g, sg->why, "%s", sg->reason ? sg->reason : "");
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

/* Regions, in two grains that the passes alternate: fine, runs of
 * consecutive deepest-z-level domains (racks) of about S_REGION_NODES nodes
 * (tree order keeps them close), where programs finish fast; coarse, the
 * top-level domains when there are several of at most S_REGION_MAX nodes
 * (else runs four times as long), where gangs can move further. */
static int32_t s_regions(const rf__tree_t *t, int32_t zl, bool fine, s_region_t *out, int32_t cap)
{
    int32_t n = 0;
    int32_t tops = t->level_start[1] - t->level_start[0];
    if (!fine && zl >= 1 && tops >= 2) {
        bool fit = true;
        for (int32_t d = t->level_start[0]; d < t->level_start[1]; d++)
            fit &= t->node_end[d] - t->node_start[d] <= S_REGION_MAX;
        if (fit) {
            for (int32_t d = t->level_start[0]; d < t->level_start[1] && n < cap; d++)
                out[n++] = (s_region_t){t->node_start[d], t->node_end[d]};
            return n;
        }
    }
    int32_t size = fine ? S_REGION_NODES : 4 * S_REGION_NODES;
    int32_t lz = zl >= 1 ? zl - 1 : -1;
    if (lz < 0) {
        for (int32_t i = 0; i < t->n_in_tree && n < cap; i += size)
            out[n++] = (s_region_t){i, i + size < t->n_in_tree ? i + size : t->n_in_tree};
        return n;
    }
    int32_t a = 0;
    for (int32_t d = t->level_start[lz]; d < t->level_start[lz + 1] && n < cap; d++)
        if (t->node_end[d] - a >= size || d + 1 == t->level_start[lz + 1]) {
            out[n++] = (s_region_t){a, t->node_end[d]};
            a = t->node_end[d];
        }
    return n;
}

/* Free the gangs of one region at a time (and the rejected gangs), keep
 * every other gang, and let the program re-place them inside the region;
 * `threads` disjoint regions at once, their improvements merged and
 * checked; passes alternate fine and coarse regions. Until `end`, or until a
 * pass of each grain proves every region optimal on its own. */
static rf_status s_lns(const rf_problem_t *pb, s_clock_t *ck, rf_answer_t *best, double end, int32_t threads,
                       rf_error_t *err)
{
    rf__tree_t tree;
    bool tree_owned = false;
    RF_CALL(rf__tree_of(pb, &tree, &tree_owned, err));
    const int32_t L = pb->n_levels, N = pb->n_nodes, G = pb->n_gangs;
    bool host_level = strcmp(pb->levels[L - 1], RF_HOSTNAME_LABEL) == 0;
    int32_t zl = host_level ? L - 1 : L;
    int32_t cap = tree.n_in_tree + 16;
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
    /* a merge costs a finish and a check over the whole batch: about a greedy pass */
    double merge_ms = ck->greedy_ms;
    bool quiet[2] = {false, false}; /* a whole pass of that grain proved every region and changed nothing */
    for (int32_t pass = 0; rf_now_ms() < end && !(quiet[0] && quiet[1]); pass++) {
        bool fine = pass % 2 == 0;
        int32_t n_regions = s_regions(&tree, zl, fine, regions, cap);
        for (int32_t n = 0; n < N; n++)
            region_of[n] = -1;
        for (int32_t r = 0; r < n_regions; r++)
            for (int32_t i = regions[r].first; i < regions[r].last; i++)
                region_of[tree.node_order[i]] = r;
        bool improved_pass = false, all_proven = true;
        for (int32_t r0 = 0; r0 < n_regions; r0 += threads) {
            double left = end - rf_now_ms();
            if (left < ck->step_ms + merge_ms + S_MIN_SLICE_MS)
                goto done;
            int32_t batch = n_regions - r0 < threads ? n_regions - r0 : threads;
            int32_t batches_left = (n_regions - r0 + threads - 1) / threads;
            double slice_end = rf_now_ms() + (left - merge_ms) / batches_left;
            /* which gangs each run frees */
            for (int32_t k = 0; k < batch; k++) {
                uint8_t *mask = &masks[(size_t)k * N];
                memset(mask, 0, (size_t)N);
                for (int32_t i = regions[r0 + k].first; i < regions[r0 + k].last; i++)
                    mask[tree.node_order[i]] = 1;
                for (int32_t g = 0; g < G; g++)
                    keeps[(size_t)k * (G + 1) + g] = true;
            }
            int32_t n_rejected = 0;
            for (int32_t g = 0; g < G; g++)
                n_rejected += !best->gangs[g].admitted;
            int32_t rejected_seen = 0;
            for (int32_t g = 0; g < G; g++) {
                const rf_gang_answer_t *ga = &best->gangs[g];
                if (!ga->admitted) {
                    /* every run may try it, the merge admits it once; at most
                     * S_LNS_REJECTED of them per run (a window that moves with
                     * the pass), so a batch of thousands of rejected gangs
                     * cannot make one region's program huge */
                    int32_t pos = rejected_seen++;
                    int32_t from = n_rejected > S_LNS_REJECTED ? (pass * S_LNS_REJECTED) % n_rejected : 0;
                    int32_t rel = (pos - from + n_rejected) % (n_rejected ? n_rejected : 1);
                    if (rel < S_LNS_REJECTED)
                        for (int32_t k = 0; k < batch; k++)
                            keeps[(size_t)k * (G + 1) + g] = false;
                    continue;
                }
                /* an admitted gang is freed where all its pods (new and bound) are */
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
    shared(runs, pb, best, keeps, masks, slice_end, batch, G, N)
#endif
            for (int32_t k = 0; k < batch; k++) {
                rf_machine_bind_team();
                rf__ilp_opts_t io = {.isolate = -1,
                                     .deadline_ms = slice_end,
                                     .mip_gap = 1e-9,
                                     .aggregate = true,
                                     .tight = true,
                                     .keep = &keeps[(size_t)k * (G + 1)],
                                     .node_allowed = &masks[(size_t)k * N]};
                runs[k].rc = rf__ilp_improve(pb, best, &io, &runs[k].answer, &runs[k].stats, &runs[k].err);
            }
            /* merge what improved: the regions and the gangs freed are disjoint */
            bool any = false;
            for (int32_t k = 0; k < batch; k++) {
                s_note_step(ck, &runs[k].stats);
                if (runs[k].rc == RF_ENOMEM) {
                    rc = RF_ENOMEM;
                    if (err)
                        *err = runs[k].err;
                }
                all_proven &= runs[k].stats.values_proven && runs[k].stats.penalty_proven;
                any |= runs[k].answer != NULL;
            }
            if (any && rc == RF_OK) {
                double t0 = rf_now_ms();
                rc = rf_answer_copy(merged, best);
                /* a gang rejected in `best` that several runs admit is taken
                 * from the first: the others' placements only lose a gang,
                 * which frees capacity and keeps them feasible */
                for (int32_t k = 0; k < batch && rc == RF_OK; k++)
                    for (int32_t g = 0; g < G && runs[k].answer && rc == RF_OK; g++) {
                        if (keeps[(size_t)k * (G + 1) + g])
                            continue;
                        if (!best->gangs[g].admitted && merged->gangs[g].admitted)
                            continue; /* an earlier run admitted it */
                        if (!best->gangs[g].admitted && !runs[k].answer->gangs[g].admitted)
                            continue; /* still rejected: keep the first reason */
                        rc = s_copy_gang(merged, runs[k].answer, g);
                    }
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
                merge_ms = fmax(merge_ms, rf_now_ms() - t0);
            }
            for (int32_t k = 0; k < batch; k++)
                rf_answer_destroy(&runs[k].answer);
            if (rc != RF_OK)
                goto done;
        }
        quiet[fine ? 0 : 1] = !improved_pass && all_proven;
        if (improved_pass)
            quiet[fine ? 1 : 0] = false; /* the other grain may have room again */
    }
done:
    rf_answer_destroy(&merged);
    free(regions);
    free(region_of);
    free(masks);
    free(keeps);
    free(runs);
    if (tree_owned)
        rf__tree_fini(&tree);
    return rc;
}

/* ---------------------------------------------------------------- bounds */

/* The tightest penalty bound provable here for the gangs `ans` admits:
 * each gang's own least penalty alone on the cluster (a program per gang, in
 * parallel, while time lasts), or its counting bound (gang_lb) otherwise;
 * summed over the admitted gangs. Valid for any answer admitting the same
 * gangs: there each gang's placement is feasible alone too. */
static double s_gang_bounds(const rf_problem_t *pb, s_clock_t *ck, const rf_answer_t *ans, const double *gang_lb,
                            int32_t threads)
{
    const int32_t G = pb->n_gangs;
    double *each = malloc((size_t)(G + 1) * sizeof *each);
    int32_t *todo = malloc((size_t)(G + 1) * sizeof *todo);
    double total = 0;
    if (!each || !todo)
        goto done;
    int32_t n = 0;
    for (int32_t g = 0; g < G; g++) {
        each[g] = gang_lb[g];
        if (ans->gangs[g].admitted && ans->gangs[g].penalty > each[g] + 1e-9)
            todo[n++] = g; /* room between its bound and its penalty */
    }
    /* a program per gang costs about a build over the whole cluster */
    double cost = fmax(ck->step_ms, ck->greedy_ms);
    double deadline = ck->deadline;
#ifdef RF_HAVE_OPENMP
#pragma omp parallel for num_threads(threads)                                                                          \
    schedule(dynamic, 1) if (threads > 1 && rf__mip_thread_safe()) default(none)                                       \
        shared(pb, ans, each, todo, n, deadline, cost)
#endif
    for (int32_t i = 0; i < n; i++) {
        if (deadline - rf_now_ms() < cost + S_MIN_SLICE_MS)
            continue;
        int32_t g = todo[i];
        rf__ilp_opts_t io = {.isolate = g,
                             .deadline_ms = deadline - cost,
                             .mip_gap = 1e-9,
                             .aggregate = true,
                             .tight = true,
                             .keep = NULL,
                             .node_allowed = NULL};
        rf_answer_t *none = NULL;
        rf__ilp_stats_t st;
        rf_error_t e;
        if (rf__ilp_improve(pb, ans, &io, &none, &st, &e) == RF_OK && st.penalty_bound > each[g])
            each[g] = st.penalty_bound;
        rf_answer_destroy(&none);
    }
    for (int32_t g = 0; g < G; g++)
        if (ans->gangs[g].admitted)
            total += fmin(each[g], ans->gangs[g].penalty);
done:
    free(each);
    free(todo);
    return total;
}

/* ---------------------------------------------------------------- the strategies */

static rf_status s_run_ilp(const rf_solve_ctx_t *ctx, rf_answer_t *ans, rf_error_t *err)
{
    const rf_problem_t *pb = rf_solve_ctx_problem(ctx);
    const rf_solve_opts_t *opts = rf_solve_ctx_opts(ctx);
    s_clock_t ck;
    s_clock_init(&ck, pb, opts);
    rf_answer_t *other = NULL;
    double *gang_lb = calloc((size_t)pb->n_gangs + 1, sizeof *gang_lb);
    if (!gang_lb)
        return rf_error_set(err, RF_ENOMEM, "", "out of memory");
    rf_status rc = s_greedy_best(ctx, &ck, ans, &other, gang_lb, err);
    if (rc != RF_OK || ans->summary.optimal || !s_time_for(&ck, ck.greedy_ms))
        goto done; /* proven optimal, or no time for more */
    int32_t threads = s_threads(pb, opts);
    int64_t exact_cols = 0, tight_rows = 0;
    for (int32_t g = 0; g < pb->n_gangs; g++) {
        exact_cols += (int64_t)pb->gangs[g].n_pod_sets * pb->n_nodes * 2;
        tight_rows += (int64_t)pb->gangs[g].n_pod_sets * pb->n_nodes * pb->n_levels;
    }
    bool small = exact_cols <= S_EXACT_COLS;
    double bound = ans->summary.penalty_bound;
    bool proven = false; /* the answer's values are proven the most there is */
    if (small || exact_cols <= S_WHOLE_COLS) {
        rc = s_whole(pb, &ck, ans, other, threads, small, tight_rows <= S_TIGHT_ROWS, &bound, &proven, err);
    } else {
        double end = rf_now_ms() + s_left(&ck) * S_SEARCH_SHARE;
        rc = s_lns(pb, &ck, ans, end, threads, err);
    }
    if (rc != RF_OK)
        goto done;
    if (ans->summary.penalty > bound + 1e-6)
        bound = fmax(bound, s_gang_bounds(pb, &ck, ans, gang_lb, threads));
    ans->summary.penalty_bound = fmin(bound, ans->summary.penalty);
    if (ans->summary.penalty - ans->summary.penalty_bound <= 1e-6)
        ans->summary.penalty_bound = ans->summary.penalty; /* GLPK's bound to within 1e-6 */
    ans->summary.optimal = proven && ans->summary.penalty <= ans->summary.penalty_bound + 1e-6;
    ans->summary.mode_used = "ilp";
done:
    free(gang_lb);
    rf_answer_destroy(&other);
    return rc;
}

static rf_status s_ilp_solve(const rf_solve_ctx_t *ctx, rf_answer_t *ans, rf_error_t *err)
{
    return s_run_ilp(ctx, ans, err);
}

/* Is the greedy answer's value provably the most there is (every gang got
 * every pod) and its penalty within AUTO_GAP of its own bound? Then there is
 * no room worth a program. */
static bool s_no_room(const rf_problem_t *pb, const rf_answer_t *ans)
{
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

/* auto: the greedy when the bound shows no room (every gang got every pod
 * and the penalty is within 1 % of its bound; proven optimal included), or
 * when the time left would not fit another greedy pass and a program; else
 * ilp within the limit. */
static rf_status s_auto_solve(const rf_solve_ctx_t *ctx, rf_answer_t *ans, rf_error_t *err)
{
    const rf_problem_t *pb = rf_solve_ctx_problem(ctx);
    const rf_solve_opts_t *opts = rf_solve_ctx_opts(ctx);
    s_clock_t ck;
    s_clock_init(&ck, pb, opts);
    double t0 = rf_now_ms();
    RF_CALL(rf__greedy_run(ctx, RF__ORDER_VALUE, false, ans, NULL, err));
    ck.greedy_ms = rf_now_ms() - t0;
    if (ans->summary.optimal || s_no_room(pb, ans) || !s_time_for(&ck, 2 * ck.greedy_ms))
        return RF_OK;
    rf_answer_t *fresh = rf_answer_new(pb);
    if (!fresh)
        return rf_error_set(err, RF_ENOMEM, "", "out of memory");
    rf_status rc = s_run_ilp(ctx, fresh, err);
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
