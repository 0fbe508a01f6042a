/* solver/ilp.c: one run of the integer program of docs/ilp.md, started
 * from an incumbent answer (the greedy's): rf__ilp_improve.
 *
 * Given a problem, an incumbent and a set of gangs to keep as they are, it
 * builds the program over the other ("free") gangs and the capacity the
 * kept ones leave (solver/ilp_model.c), hands the incumbent to the MIP
 * boundary (solver/mip.h) as its first solution (solver/ilp_decode.c),
 * solves it in lexicographic stages, decodes the solution and returns it
 * only when it is feasible (checked by rf_check, which shares no code with
 * the program) and better by the contract's objective; otherwise the
 * incumbent stands. What to free and how long to spend is the search's
 * (solver/ilp_search.c, ilp_strategy.c). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "ilp.h"
#include "ilp_internal.h"
#include "rackfit/check.h"
#include "rackfit/quantity.h"
#include "rackfit/solve.h"

/* The backend's load of a program (GLPK: glp_load_matrix, glp_scale_prob),
 * which no time limit interrupts, in ms per nonzero: 0.57-0.90 us on the
 * simulator's preemption rounds (136,000-278,000 nonzeros, 78-249 ms),
 * where 50 ms rounds ran up to 723 ms (bench/RESULTS.md, "The time limit
 * with many running gangs"). Per nonzero rather than per ms of our build:
 * a sanitizer slows our build, not Debian's GLPK. */
#define S_LOAD_MS_PER_NNZ 1e-3

void rf__ilp_fini(rf__ilp_t *s)
{
    if (s->tree_owned)
        rf__tree_fini(&s->tree);
    free(s->free);
    free(s->vfree);
    free(s->vnode);
    free(s->qcol);
    free(s->qfix);
    free(s->qkept);
    free(s->kept_on_v);
    free(s->deltas);
    free(s->keep_buf);
    free(s->kept_adm_buf);
    free(s->own_unit);
    free(s->units);
    free(s->unit_nodes);
    free(s->node_unit);
    free(s->ps0);
    free(s->xs_start);
    free(s->xs);
    free(s->hs_start);
    free(s->hs);
    free(s->ycol);
    free(s->acol);
    free(s->zs_start);
    free(s->zs);
    free(s->ps_dom_start);
    free(s->ps_dom);
    free(s->sl_start);
    free(s->sl);
    for (int32_t k = 0; k < RF_MIP_MAX_STAGES; k++) {
        free(s->stage_cols[k]);
        free(s->stage_vals[k]);
    }
    rf__mip_fini(&s->mip);
}

/* The run's own arrays, besides s. */
typedef struct {
    double *xinc;
} s_run_own_t;

/* Which gangs are kept: opts->keep, everything but the isolated gang, and
 * what the program does not model (slices whose ranks bound pods hold,
 * bound pods outside the tree), which stays as the incumbent has it. */
static void s_keep(rf__ilp_t *s, const rf_answer_t *inc, const rf__ilp_opts_t *opts)
{
    const rf_problem_t *pb = s->pb;
    s->n_ps = 0;
    for (int32_t g = 0; g < pb->n_gangs; g++) {
        s->ps0[g] = s->n_ps;
        s->n_ps += pb->gangs[g].n_pod_sets;
        const rf_gang_t *gg = &pb->gangs[g];
        s->keep_buf[g] = opts->isolate >= 0 ? g != opts->isolate : opts->keep ? opts->keep[g] : false;
        bool unmodelled = false;
        for (int32_t p = 0; p < gg->n_pod_sets; p++) {
            const rf_pod_set_t *ps = &gg->pod_sets[p];
            if (ps->slice.size > 1 && ps->n_bound > 0)
                unmodelled = true;
            for (int32_t i = 0; i < ps->n_bound; i++)
                if (rf__tree_node_dom(&s->tree, ps->bound[i].node, s->L - 1) < 0)
                    unmodelled = true;
        }
        s->keep_buf[g] |= unmodelled;
        /* the batch's program (nothing kept by the caller) would otherwise
         * prove its values and penalty with that gang fixed as the
         * incumbent has it: trivially so when no free gang is left */
        s->unmodelled |= unmodelled && opts->isolate < 0 && !opts->keep;
        s->kept_adm_buf[g] = opts->isolate >= 0 ? false : inc->gangs[g].admitted; /* isolated: the others are absent */
    }
    s->ps0[pb->n_gangs] = s->n_ps;
    s->keep = s->keep_buf;
    s->kept_admitted = s->kept_adm_buf;
}

/* The residual capacity (free minus the kept gangs' new pods) and the
 * nodes holding bound pods of free gangs. */
static void s_residual(rf__ilp_t *s, const rf_answer_t *inc)
{
    const rf_problem_t *pb = s->pb;
    for (int32_t n = 0; n < s->N; n++)
        for (int32_t r = 0; r < s->R; r++) {
            int64_t a = pb->nodes[n].allocatable[r], u = pb->nodes[n].used[r];
            s->free[(int64_t)n * s->R + r] = a == RF_QTY_UNLIMITED ? RF_QTY_UNLIMITED : (a > u ? a - u : 0);
        }
    for (int32_t g = 0; g < pb->n_gangs; g++) {
        const rf_gang_t *gg = &pb->gangs[g];
        for (int32_t p = 0; p < gg->n_pod_sets; p++) {
            if (!s->keep[g])
                for (int32_t i = 0; i < gg->pod_sets[p].n_bound; i++)
                    s->own_unit[gg->pod_sets[p].bound[i].node] = true;
            if (!s->keep[g] || !s->kept_adm_buf[g])
                continue;
            const rf_pod_set_answer_t *pa = &inc->gangs[g].pod_sets[p];
            for (int32_t i = 0; i < pa->n_placements; i++)
                for (int32_t r = 0; r < s->R; r++) {
                    int64_t *f = &s->free[(int64_t)pa->placements[i].node * s->R + r];
                    if (*f != RF_QTY_UNLIMITED)
                        *f -= (int64_t)pa->placements[i].count * gg->pod_sets[p].requests[r];
                }
        }
    }
    for (int32_t n = 0; n < s->N; n++)
        s->node_unit[n] = -1;
}

bool rf__ilp_running_inside(const rf_running_t *run, const uint8_t *allowed)
{
    for (int32_t j = 0; j < run->n_pod_sets; j++)
        for (int32_t k = 0; k < run->pod_sets[j].n_placements; k++)
            if (!allowed[run->pod_sets[j].placements[k].node])
                return false;
    return true;
}

/* The running gangs' decisions (docs/ilp.md, "Running gangs and
 * preemption"): a column (qcol -2 here, made by the build) for each
 * preemptable one below the highest priority that could preempt it, when
 * the run decides it (the whole batch, one gang isolated, or a region that
 * holds every pod of it: regions are disjoint, so no two runs decide one
 * gang); otherwise the incumbent's decision, fixed. Marks their nodes
 * (vnode, units of their own) and bounds the room there (vfree). */
static void s_running(rf__ilp_t *s, const rf_answer_t *inc, const rf__ilp_opts_t *opts)
{
    const rf_problem_t *pb = s->pb;
    bool decide_all = opts->isolate >= 0 || !opts->node_allowed;
    int64_t top = INT64_MIN; /* the highest priority of a gang that may place new pods */
    for (int32_t g = 0; g < pb->n_gangs; g++)
        if ((!s->keep[g] || s->kept_admitted[g]) && pb->gangs[g].priority > top)
            top = pb->gangs[g].priority;
    s->run_link = opts->isolate < 0;
    s->run_const = 0;
    memcpy(s->vfree, s->free, (size_t)s->N * (size_t)s->R * sizeof *s->vfree);
    for (int32_t i = 0; i < pb->n_running; i++) {
        const rf_running_t *run = &pb->running[i];
        bool may = pb->options.preemption != RF_PREEMPT_NEVER && run->preemptible && run->priority < top;
        bool decide = decide_all || rf__ilp_running_inside(run, opts->node_allowed);
        s->qcol[i] = decide && may ? -2 : -1;
        s->qfix[i] = opts->isolate < 0 && s->qcol[i] == -1 && inc->running[i].preempted;
        if (s->run_link && !s->qfix[i])
            s->run_const += run->penalty;
        if (s->qcol[i] == -1 && !s->qfix[i])
            continue;
        for (int32_t j = 0; j < run->n_pod_sets; j++)
            for (int32_t k = 0; k < run->pod_sets[j].n_placements; k++) {
                const rf_run_placement_t *pl = &run->pod_sets[j].placements[k];
                s->vnode[pl->node] = 1;
                s->own_unit[pl->node] = true; /* a unit of its own */
                for (int32_t r = 0; r < s->R; r++) {
                    int64_t *f = &s->vfree[(int64_t)pl->node * s->R + r];
                    if (*f != RF_QTY_UNLIMITED)
                        *f += (int64_t)pl->count * run->pod_sets[j].requests[r];
                }
            }
    }
}

/* The kept gangs' new pods on vnodes (constants of the per-priority
 * capacity rows), and which running gangs a kept gang already preempts
 * (qkept: one of higher priority with new pods on its nodes). False on
 * ENOMEM. */
static bool s_kept_on_vnodes(rf__ilp_t *s, const rf_answer_t *inc)
{
    const rf_problem_t *pb = s->pb;
    int64_t n = 0, cap = 0;
    for (int32_t pass = 0; pass < 2; pass++) {
        n = 0;
        for (int32_t g = 0; g < pb->n_gangs; g++) {
            if (!s->keep[g] || !s->kept_admitted[g])
                continue;
            for (int32_t p = 0; p < pb->gangs[g].n_pod_sets; p++) {
                const rf_pod_set_answer_t *pa = &inc->gangs[g].pod_sets[p];
                for (int32_t i = 0; i < pa->n_placements; i++)
                    if (s->vnode[pa->placements[i].node] && pa->placements[i].count > 0) {
                        if (pass == 1)
                            s->kept_on_v[n] = (rf__ilp_kept_t){pa->placements[i].node, g, p, pa->placements[i].count};
                        n++;
                    }
            }
        }
        if (pass == 0) {
            cap = n;
            s->kept_on_v = malloc((size_t)(cap + 1) * sizeof *s->kept_on_v);
            if (!s->kept_on_v)
                return false;
        }
    }
    s->n_kept_on_v = n;
    for (int32_t i = 0; i < pb->n_running; i++) {
        const rf_running_t *run = &pb->running[i];
        for (int64_t k = 0; k < n && !s->qkept[i]; k++) {
            if (pb->gangs[s->kept_on_v[k].gang].priority <= run->priority)
                continue;
            for (int32_t j = 0; j < run->n_pod_sets && !s->qkept[i]; j++)
                for (int32_t m = 0; m < run->pod_sets[j].n_placements; m++)
                    s->qkept[i] |= run->pod_sets[j].placements[m].node == s->kept_on_v[k].node;
        }
    }
    return true;
}

/* s ready for the build: the tree, the kept gangs, the residual capacity,
 * the units. RF_OK with *skip when the run has nothing to do (an isolated
 * gang the program does not model). */
static rf_status s_setup(rf__ilp_t *s, const rf_problem_t *pb, const rf_answer_t *inc, const rf__ilp_opts_t *opts,
                         bool *skip, rf_error_t *err)
{
    *skip = false;
    s->pb = pb;
    s->L = pb->n_levels;
    s->N = pb->n_nodes;
    s->R = pb->n_resources;
    s->host_level = strcmp(pb->levels[s->L - 1], RF_HOSTNAME_LABEL) == 0;
    s->zl = s->host_level ? s->L - 1 : s->L;
    s->tight = opts->tight;
    s->node_allowed = opts->node_allowed;
    s->isolating = opts->isolate >= 0;
    s->build_deadline = opts->deadline_ms;
    RF_CALL(rf__tree_of(pb, &s->tree, &s->tree_owned, err));
    const size_t G1 = (size_t)pb->n_gangs + 1, N1 = (size_t)s->N + 1;
    s->keep_buf = calloc(G1, sizeof *s->keep_buf);
    s->kept_adm_buf = calloc(G1, sizeof *s->kept_adm_buf);
    s->own_unit = calloc(N1, sizeof *s->own_unit);
    s->free = malloc(((size_t)s->N * (size_t)s->R + 1) * sizeof *s->free);
    s->vfree = malloc(((size_t)s->N * (size_t)s->R + 1) * sizeof *s->vfree);
    s->vnode = calloc(N1, sizeof *s->vnode);
    s->qcol = malloc(((size_t)pb->n_running + 1) * sizeof *s->qcol);
    s->qfix = calloc((size_t)pb->n_running + 1, sizeof *s->qfix);
    s->qkept = calloc((size_t)pb->n_running + 1, sizeof *s->qkept);
    s->unit_nodes = malloc(N1 * sizeof *s->unit_nodes);
    s->node_unit = malloc(N1 * sizeof *s->node_unit);
    s->ps0 = malloc(G1 * sizeof *s->ps0);
    s->ycol = malloc(G1 * sizeof *s->ycol);
    s->acol = malloc(G1 * sizeof *s->acol);
    s->hs_start = calloc(G1, sizeof *s->hs_start);
    s->zs_start = calloc(G1, sizeof *s->zs_start);
    if (!s->keep_buf || !s->kept_adm_buf || !s->own_unit || !s->free || !s->vfree || !s->vnode || !s->qcol ||
        !s->qfix || !s->qkept || !s->unit_nodes || !s->node_unit || !s->ps0 || !s->ycol || !s->acol || !s->hs_start ||
        !s->zs_start)
        return rf_error_set(err, RF_ENOMEM, "", "out of memory in the integer program");
    s_keep(s, inc, opts);
    if (opts->isolate >= 0 && s->keep_buf[opts->isolate]) {
        *skip = true; /* a gang the program does not model */
        return RF_OK;
    }
    s->xs_start = calloc((size_t)s->n_ps + 1, sizeof *s->xs_start);
    s->ps_dom_start = calloc((size_t)s->n_ps + 1, sizeof *s->ps_dom_start);
    s->sl_start = calloc((size_t)s->n_ps + 1, sizeof *s->sl_start);
    if (!s->xs_start || !s->ps_dom_start || !s->sl_start)
        return rf_error_set(err, RF_ENOMEM, "", "out of memory in the integer program");
    s_residual(s, inc);
    s_running(s, inc, opts);
    if (!s_kept_on_vnodes(s, inc))
        return rf_error_set(err, RF_ENOMEM, "", "out of memory in the integer program");
    if (rf__ilp_units(s, opts->aggregate, s->own_unit) != RF_OK)
        return rf_error_set(err, RF_ENOMEM, "", "out of memory in the integer program");
    return RF_OK;
}

/* What the solve proved, into stats. */
static void s_proofs(const rf__ilp_t *s, const rf__mip_result_t *res, const double *xinc, bool have_inc,
                     int32_t n_stages, rf__ilp_stats_t *stats)
{
    stats->values_proven = res->n_stages_done >= n_stages - 1;
    for (int32_t k = 0; k + 1 < n_stages && k < res->n_stages_done; k++)
        stats->values_proven &= res->proven[k];
    stats->penalty_proven = stats->values_proven && res->n_stages_done == n_stages && res->proven[n_stages - 1];
    /* GLPK prunes within a relative tolerance (tol_obj, 1e-9 here): with a
     * value stage so large that one unit falls below it, nothing is proven */
    for (int32_t k = 0; k + 1 < n_stages; k++) {
        double most = 0;
        for (int64_t i = 0; i < s->stage_n[k]; i++)
            most += fabs(s->stage_vals[k][i]) * s->mip.ub[s->stage_cols[k][i]];
        if (most > 1e8)
            stats->values_proven = stats->penalty_proven = false;
    }
    /* a gang kept as the incumbent has it because the program cannot model
     * it: the program's optimum and bound hold only with that gang so */
    if (s->unmodelled)
        stats->values_proven = stats->penalty_proven = false;
    /* do the program's values equal the incumbent's? (then its bounds hold for it) */
    if (have_inc) {
        stats->values_match_incumbent = true;
        for (int32_t k = 0; k + 1 < n_stages && k < res->n_stages_done; k++) {
            double v = 0;
            for (int64_t i = 0; i < s->stage_n[k]; i++)
                v += s->stage_vals[k][i] * xinc[s->stage_cols[k][i]];
            stats->values_match_incumbent &= fabs(v - res->obj[k]) < 0.5;
        }
    }
    if (res->n_stages_done == n_stages && !s->unmodelled)
        stats->penalty_bound = fmax(0, res->bound[n_stages - 1] + s->run_const);
}

/* Decode the solution, check it and keep it in *out when it is better than
 * the incumbent. RF_ENOMEM only; a failed packing or check is in stats. */
static rf_status s_judge(const rf__ilp_t *s, const rf__mip_result_t *res, const rf_answer_t *inc, int32_t n_stages,
                         rf_answer_t **out, rf__ilp_stats_t *stats)
{
    const rf_problem_t *pb = s->pb;
    rf_answer_t *ans = rf_answer_new(pb);
    if (!ans)
        return RF_ENOMEM;
    bool oom = false;
    bool decoded = rf__ilp_decode(s, res->x, inc, ans, &oom);
    if (oom) {
        rf_answer_destroy(&ans);
        return RF_ENOMEM;
    }
    stats->decode_failed = !decoded;
    if (!decoded)
        stats->penalty_proven = false; /* no answer reaches the relaxation's optimum; its bounds stand */
    if (decoded && rf_answer_finish(ans) == RF_OK) {
        /* packing may need more hosts than the program counted: the bound
         * stays valid, but the optimum is proven only when they agree */
        double free_pen = 0; /* the penalty stage's value: free gangs, less the preempted gangs' */
        for (int32_t g = 0; g < pb->n_gangs; g++)
            if (!s->keep[g] && ans->gangs[g].admitted)
                free_pen += ans->gangs[g].penalty;
        for (int32_t i = 0; s->run_link && i < pb->n_running; i++)
            if (s->qcol[i] >= 0 && ans->running[i].preempted)
                free_pen -= pb->running[i].penalty;
        if (res->n_stages_done == n_stages && fabs(free_pen - res->obj[n_stages - 1]) > 1e-6)
            stats->penalty_proven = false;
        rf_check_report_t rep;
        memset(&rep, 0, sizeof rep);
        rf_error_t cerr;
        bool feasible = rf_check(pb, ans, &rep, &cerr) == RF_OK && rep.feasible;
        rf_check_report_fini(&rep);
        if (feasible && rf_answer_compare(ans, inc) < 0) {
            stats->improved = true;
            *out = ans;
            ans = NULL;
        } else if (!feasible) {
            stats->decode_failed = true;
            stats->penalty_proven = false;
        }
    }
    rf_answer_destroy(&ans);
    return RF_OK;
}

/* Solve the built program from the incumbent, then judge what it found. */
static rf_status s_solve(rf__ilp_t *s, const rf_answer_t *inc, const rf__ilp_opts_t *opts, s_run_own_t *own,
                         rf_answer_t **out, rf__ilp_stats_t *stats, rf_error_t *err)
{
    own->xinc = malloc((size_t)(s->mip.n_cols + 1) * sizeof *own->xinc);
    if (!own->xinc)
        return rf_error_set(err, RF_ENOMEM, "", "out of memory in the integer program");
    bool have_inc = rf__ilp_map_incumbent(s, inc, own->xinc);
    int32_t n_stages = s->n_stages;
    rf__mip_stage_t stages[RF_MIP_MAX_STAGES];
    for (int32_t k = 0; k < n_stages; k++)
        stages[k] = (rf__mip_stage_t){.maximize = k + 1 < n_stages,
                                      .n = (int32_t)s->stage_n[k],
                                      .cols = s->stage_cols[k],
                                      .vals = s->stage_vals[k],
                                      .keep_tol = k + 1 < n_stages ? 0.5 : 1e-6};
    if (opts->isolate >= 0) {
        /* the gang alone, admitted: only its least penalty is asked */
        s->mip.lb[s->ycol[opts->isolate]] = 1;
        stages[0] = stages[n_stages - 1];
        n_stages = 1;
    }
    /* the backend's load of the program, which no time limit interrupts:
     * when it cannot fit, the incumbent stands */
    if (opts->deadline_ms - rf_now_ms() < fmax(1.0, S_LOAD_MS_PER_NNZ * (double)s->mip.nnz))
        return RF_OK;
    rf__mip_opts_t mo = {.time_limit_ms = opts->deadline_ms - rf_now_ms(),
                         .mip_gap = opts->mip_gap,
                         .node_budget = opts->node_budget,
                         .mem_limit_mb = opts->mem_limit_mb,
                         .incumbent = have_inc ? own->xinc : NULL,
                         .stop = opts->stop,
                         .backend = opts->mip,
                         .threads = opts->mip_threads};
    rf__mip_result_t res;
    memset(&res, 0, sizeof res);
    double t1 = rf_now_ms();
    rf_error_t merr;
    rf_status mrc = rf__mip_solve(&s->mip, stages, n_stages, &mo, &res, &merr);
    stats->solve_ms = rf_now_ms() - t1;
    stats->nodes = res.nodes;
    rf_status rc = RF_OK;
    if (mrc == RF_ENOMEM) {
        rc = rf_error_set(err, RF_ENOMEM, "", "%s", merr.message);
    } else {
        stats->glpk_failed = mrc != RF_OK;
        stats->solved = mrc == RF_OK && res.x != NULL;
        if (res.x) {
            s_proofs(s, &res, own->xinc, have_inc, n_stages, stats);
            if (opts->isolate < 0) { /* isolated: a bound is all that was asked */
                double t2 = rf_now_ms();
                if (s_judge(s, &res, inc, n_stages, out, stats) != RF_OK)
                    rc = rf_error_set(err, RF_ENOMEM, "", "out of memory in the integer program");
                stats->decode_ms = rf_now_ms() - t2;
            }
        }
    }
    rf__mip_result_fini(&res);
    return rc;
}

rf_status rf__ilp_open(rf__ilp_t *s, const rf_problem_t *pb, const rf_answer_t *inc, const rf__ilp_opts_t *opts,
                       bool *skip, rf_error_t *err)
{
    memset(s, 0, sizeof *s);
    rf__mip_init(&s->mip);
    RF_CALL(s_setup(s, pb, inc, opts, skip, err));
    if (*skip)
        return RF_OK;
    rf_status brc = rf__ilp_build(s);
    if (brc == RF_ENOMEM)
        return rf_error_set(err, RF_ENOMEM, "", "out of memory in the integer program");
    *skip = brc != RF_OK; /* RF_EINVAL: more priorities than stages, or the deadline passed in
                           * the build: the incumbent stands */
    return RF_OK;
}

rf_status rf__ilp_improve(const rf_problem_t *pb, const rf_answer_t *inc, const rf__ilp_opts_t *opts, rf_answer_t **out,
                          rf__ilp_stats_t *stats, rf_error_t *err)
{
    memset(stats, 0, sizeof *stats);
    stats->penalty_bound = -1;
    *out = NULL;
    double t0 = rf_now_ms();
    rf__ilp_t s;
    s_run_own_t own;
    memset(&own, 0, sizeof own);
    bool skip = false;
    rf_status rc = rf__ilp_open(&s, pb, inc, opts, &skip, err);
    stats->build_ms = rf_now_ms() - t0; /* a skipped build too: the step's cost */
    if (rc == RF_OK && !skip) {
        stats->n_units = s.n_units;
        stats->n_cols = s.mip.n_cols;
        stats->n_rows = s.mip.n_rows;
        stats->nnz = s.mip.nnz;
        rc = s_solve(&s, inc, opts, &own, out, stats, err);
    }
    free(own.xinc);
    rf__ilp_fini(&s);
    return rc;
}
