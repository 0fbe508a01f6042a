/* solver/mip_cbc.c: the CBC boundary, the only file that includes CBC's C
 * interface (Debian's coinor-libcbc-dev, COIN-OR CBC 2.10). Built only with
 * RF_CBC (CMake), chosen per solve by rf_solve_opts_t.mip.
 *
 * It solves an rf__mip_t (solver/mip.h) in the same lexicographic stages as
 * solver/mip_glpk.c:
 * - one Cbc_Model per stage, loaded from the program (rows scaled as for
 *   GLPK) with one row per earlier stage keeping its value, solved and
 *   deleted by the calling thread;
 * - the best solution known is the stage's MIP start; CBC's cuts and
 *   heuristics stay at their defaults; time limit in elapsed
 *   seconds (90 % of the time left, divided by how far past its limit CBC
 *   has run before in this process: its root does not look at the limit;
 *   and no stage begins with less time left than the shortest stage so far
 *   took), the relative gap, the node budget and the thread count are CBC
 *   parameters; its output is off;
 * - a solution CBC returns is rounded, checked against every row of the
 *   program and every kept stage (rf__mip_feasible) and taken only when it
 *   is no worse than the best known, so a numerically loose answer never
 *   reaches the decoder;
 * - CBC's command-line layer (CbcMain1, behind Cbc_solve) keeps global
 *   state: one solve at a time in the process, under a lock, with CBC's own
 *   threads for parallelism instead;
 * - preprocessing is off: CglPreProcess::postProcess crashed (SIGSEGV) on
 *   two of the three batches of tests/data/ilp/misses-* given a MIP start;
 * - CBC has no C call to end a search from another thread: a cut
 *   generator of ours (s_stop_cb) looks at `stop` at every node it cuts
 *   and, once set, makes every open node infeasible, which ends the search
 *   with the best solution found; that search then proves nothing;
 * - CBC reports failure by C++ exceptions its C interface does not catch;
 *   there is no memory limit. Those are the reasons it is not the default
 *   (docs/ilp.md, "Backends"). */
#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "mip.h"
#include "mip_backend.h"

#ifdef RF_HAVE_CBC
#include <Cbc_C_Interface.h>

#include "rackfit/solve.h"

/* The share of the time left CBC is given as its own limit (docs/ilp.md,
 * "Backends": the root runs on past it). */
#define S_TIME_SHARE 0.9

static pthread_mutex_t s_lock = PTHREAD_MUTEX_INITIALIZER;
/* How far past its limit CBC has run (taken / given, at least 1), over the
 * stages that ended on their limit in this process: the next stages are
 * given that much less. Raised at once, lowered slowly. Under s_lock. */
static double s_overrun = 1.0;

bool rf__mip_cbc_thread_safe(void)
{
    return false;
}

/* The program in compressed columns, rows scaled, with room for one row
 * per stage at the end. */
typedef struct {
    int32_t n, m;       /* columns, rows of the program */
    int *start, *index; /* [n + 1], [nnz + n * stages] */
    double *value;      /* as index */
    double *rlo, *rhi;  /* [m + stages] */
    double *lb, *ub;    /* [n] */
    double *obj;        /* [n] */
    int32_t *keep_n;    /* [stages] columns of each kept stage's row */
    int32_t **keep_col; /* [stages][n] */
    double **keep_val;  /* [stages][n] */
    int32_t n_keep;
    double *x, *best; /* [n] a candidate, the best known */
    int32_t stop_col; /* an integer column with a finite upper bound (for s_stop_cb), or -1 */
    double stop_at;   /* above its upper bound */
} s_cbc_t;

/* Ending a search from another thread, or at the deadline: CBC calls this
 * cut generator at every node it cuts; once `stop` is set or the deadline
 * has passed (CBC's own time limit is not looked at everywhere: a stage
 * overran it by 800 ms in a sanitizer build) it returns a cut no point
 * meets (the column above its upper bound), so every open node is pruned
 * and CBC ends with the best solution it has. The search is then no proof:
 * its bound and any "optimal" or "infeasible" are ignored. */
typedef struct {
    const volatile int *stop; /* or NULL */
    double deadline;          /* rf_now_ms() by which the search must end */
    int32_t n_cols;           /* the program's columns (a sub-problem of CBC's own is left alone) */
    int32_t col;
    double at;
    int stopped; /* atomic: CBC's threads call the generator */
} s_stopper_t;

static void COINLINKAGE_CB s_stop_cb(void *osi, void *cuts, void *info)
{
    s_stopper_t *sp = info;
    if (!__atomic_load_n(&sp->stopped, __ATOMIC_RELAXED) &&
        !(sp->stop && __atomic_load_n(sp->stop, __ATOMIC_RELAXED)) && rf_now_ms() < sp->deadline)
        return;
    if (Osi_getNumCols(osi) != sp->n_cols || Osi_getColUpper(osi)[sp->col] >= sp->at)
        return; /* not the program as loaded: a heuristic's sub-problem */
    __atomic_store_n(&sp->stopped, 1, __ATOMIC_RELAXED);
    int idx = sp->col;
    double one = 1;
    OsiCuts_addRowCut(cuts, 1, &idx, &one, 'G', sp->at);
}

static void s_fini(s_cbc_t *c, int32_t n_stages)
{
    free(c->start);
    free(c->index);
    free(c->value);
    free(c->rlo);
    free(c->rhi);
    free(c->lb);
    free(c->ub);
    free(c->obj);
    for (int32_t k = 0; k < n_stages; k++) {
        if (c->keep_col)
            free(c->keep_col[k]);
        if (c->keep_val)
            free(c->keep_val[k]);
    }
    free(c->keep_col);
    free(c->keep_val);
    free(c->keep_n);
    free(c->x);
    free(c->best);
}

static bool s_init(s_cbc_t *c, const rf__mip_t *mip, int32_t n_stages)
{
    memset(c, 0, sizeof *c);
    const int32_t n = mip->n_cols, m = mip->n_rows;
    c->n = n;
    c->m = m;
    int64_t cap = mip->nnz + (int64_t)n * n_stages;
    if (cap > 2000000000)
        return false;
    c->start = calloc((size_t)n + 2, sizeof *c->start);
    c->index = malloc((size_t)cap * sizeof *c->index + 1);
    c->value = malloc((size_t)cap * sizeof *c->value + 1);
    c->rlo = malloc((size_t)(m + n_stages) * sizeof *c->rlo + 1);
    c->rhi = malloc((size_t)(m + n_stages) * sizeof *c->rhi + 1);
    c->lb = malloc((size_t)n * sizeof *c->lb + 1);
    c->ub = malloc((size_t)n * sizeof *c->ub + 1);
    c->obj = malloc((size_t)n * sizeof *c->obj + 1);
    c->keep_n = calloc((size_t)n_stages + 1, sizeof *c->keep_n);
    c->keep_col = calloc((size_t)n_stages + 1, sizeof *c->keep_col);
    c->keep_val = calloc((size_t)n_stages + 1, sizeof *c->keep_val);
    c->x = malloc((size_t)n * sizeof *c->x + 1);
    c->best = malloc((size_t)n * sizeof *c->best + 1);
    if (!c->start || !c->index || !c->value || !c->rlo || !c->rhi || !c->lb || !c->ub || !c->obj || !c->keep_n ||
        !c->keep_col || !c->keep_val || !c->x || !c->best)
        return false;
    double *sc = rf__mip_row_scales(mip);
    if (!sc)
        return false;
    for (int32_t i = 0; i < m; i++) {
        c->rlo[i] = mip->row_lo[i] > -RF_MIP_INF / 2 ? mip->row_lo[i] * sc[i] : -DBL_MAX;
        c->rhi[i] = mip->row_hi[i] < RF_MIP_INF / 2 ? mip->row_hi[i] * sc[i] : DBL_MAX;
    }
    c->stop_col = -1;
    for (int32_t j = 0; j < n; j++) {
        c->lb[j] = mip->lb[j] > -RF_MIP_INF / 2 ? mip->lb[j] : -DBL_MAX;
        c->ub[j] = mip->ub[j] < RF_MIP_INF / 2 ? mip->ub[j] : DBL_MAX;
        if (c->stop_col < 0 && mip->is_int[j] && c->ub[j] < DBL_MAX) {
            c->stop_col = j;
            c->stop_at = c->ub[j] + 1;
        }
    }
    /* the program's coefficients by column (counted, then placed) */
    for (int64_t k = 0; k < mip->nnz; k++)
        c->start[mip->tj[k] + 1]++;
    for (int32_t j = 0; j < n; j++)
        c->start[j + 1] += c->start[j];
    int *fill = malloc((size_t)n * sizeof *fill + 1);
    if (!fill) {
        free(sc);
        return false;
    }
    memcpy(fill, c->start, (size_t)n * sizeof *fill);
    for (int64_t k = 0; k < mip->nnz; k++) {
        int at = fill[mip->tj[k]]++;
        c->index[at] = mip->ti[k];
        c->value[at] = mip->tv[k] * sc[mip->ti[k]];
    }
    free(fill);
    free(sc);
    return true;
}

/* Stage st's objective row, kept from now on at `val` (within keep_tol),
 * merged by column and scaled so its largest coefficient is 1. */
static bool s_keep(s_cbc_t *c, const rf__mip_stage_t *st, double val)
{
    int32_t k = c->n_keep;
    double *dense = calloc((size_t)c->n + 1, sizeof *dense);
    c->keep_col[k] = malloc((size_t)c->n * sizeof **c->keep_col + 1);
    c->keep_val[k] = malloc((size_t)c->n * sizeof **c->keep_val + 1);
    if (!dense || !c->keep_col[k] || !c->keep_val[k]) {
        free(dense);
        return false;
    }
    for (int32_t i = 0; i < st->n; i++)
        dense[st->cols[i]] += st->vals[i];
    double big = 0;
    int32_t len = 0;
    for (int32_t j = 0; j < c->n; j++)
        if (dense[j] != 0) {
            c->keep_col[k][len] = j;
            c->keep_val[k][len++] = dense[j];
            big = fmax(big, fabs(dense[j]));
        }
    free(dense);
    double s = big > 0 ? 1.0 / big : 1.0;
    for (int32_t i = 0; i < len; i++)
        c->keep_val[k][i] *= s;
    c->keep_n[k] = len;
    c->rlo[c->m + k] = st->maximize ? (val - st->keep_tol) * s : -DBL_MAX;
    c->rhi[c->m + k] = st->maximize ? DBL_MAX : (val + st->keep_tol) * s;
    c->n_keep++;
    return true;
}

/* The program with the kept rows, columns in order: the kept rows' entries
 * go after each column's own (rows m.. of the model). */
static Cbc_Model *s_model(s_cbc_t *c, const rf__mip_t *mip)
{
    const int32_t n = c->n;
    int64_t total = c->start[n];
    for (int32_t k = 0; k < c->n_keep; k++)
        total += c->keep_n[k];
    int *start = malloc((size_t)(n + 1) * sizeof *start);
    int *index = malloc((size_t)total * sizeof *index + 1);
    double *value = malloc((size_t)total * sizeof *value + 1);
    int32_t *pos = calloc((size_t)c->n_keep + 1, sizeof *pos);
    Cbc_Model *model = NULL;
    if (!start || !index || !value || !pos)
        goto done;
    int at = 0;
    for (int32_t j = 0; j < n; j++) {
        start[j] = at;
        for (int p = c->start[j]; p < c->start[j + 1]; p++) {
            index[at] = c->index[p];
            value[at++] = c->value[p];
        }
        for (int32_t k = 0; k < c->n_keep; k++) /* keep rows list columns in ascending order */
            if (pos[k] < c->keep_n[k] && c->keep_col[k][pos[k]] == j) {
                index[at] = c->m + k;
                value[at++] = c->keep_val[k][pos[k]++];
            }
    }
    start[n] = at;
    model = Cbc_newModel();
    if (!model)
        goto done;
    Cbc_loadProblem(model, n, c->m + c->n_keep, start, index, value, c->lb, c->ub, c->obj, c->rlo, c->rhi);
    for (int32_t j = 0; j < n; j++)
        if (mip->is_int[j])
            Cbc_setInteger(model, j);
done:
    free(start);
    free(index);
    free(value);
    free(pos);
    return model;
}

/* Is x, rounded where integer, feasible for the program and every kept
 * stage? Rounds x in place. */
static bool s_acceptable(const rf__mip_t *mip, const rf__mip_stage_t *stages, const rf__mip_result_t *res, int32_t k,
                         double *x)
{
    for (int32_t j = 0; j < mip->n_cols; j++)
        if (mip->is_int[j])
            x[j] = round(x[j]);
    if (!rf__mip_feasible(mip, x))
        return false;
    for (int32_t e = 0; e < k; e++) {
        double v = rf__mip_stage_value(&stages[e], x), tol = stages[e].keep_tol + 1e-6 * fmax(1, fabs(res->obj[e]));
        if (stages[e].maximize ? v < res->obj[e] - tol : v > res->obj[e] + tol)
            return false;
    }
    return true;
}

static void s_param(Cbc_Model *model, const char *name, double v)
{
    char buf[64];
    snprintf(buf, sizeof buf, "%.6g", v);
    Cbc_setParameter(model, name, buf);
}

static void s_param_int(Cbc_Model *model, const char *name, int64_t v)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%lld", (long long)v);
    Cbc_setParameter(model, name, buf);
}

static rf_status s_body(const rf__mip_t *mip, const rf__mip_stage_t *stages, int32_t n_stages,
                        const rf__mip_opts_t *opts, rf__mip_result_t *res, s_cbc_t *c, double deadline, rf_error_t *err)
{
    const int32_t n = mip->n_cols;
    if (!s_init(c, mip, n_stages))
        return rf_error_set(err, RF_ENOMEM, "", "out of memory building the integer program for CBC");
    bool have_x = false;
    if (opts->incumbent && rf__mip_feasible(mip, opts->incumbent)) {
        memcpy(c->best, opts->incumbent, (size_t)n * sizeof *c->best);
        have_x = true;
    }
    int *all = malloc((size_t)n * sizeof *all + 1);
    if (!all)
        return rf_error_set(err, RF_ENOMEM, "", "out of memory");
    for (int32_t j = 0; j < n; j++)
        all[j] = j;
    rf_status rc = RF_OK;
    res->status = RF_MIP_OPTIMAL;
    /* the shortest a stage took: CBC's root does not look at its limit, so
     * a stage is not begun with less time left than that */
    double shortest = 0;
    for (int32_t k = 0; k < n_stages && k < RF_MIP_MAX_STAGES; k++) {
        const rf__mip_stage_t *st = &stages[k];
        double left = deadline - rf_now_ms();
        if (left < 1 || left < shortest || (opts->stop && __atomic_load_n(opts->stop, __ATOMIC_RELAXED))) {
            res->status = have_x ? RF_MIP_FEASIBLE : RF_MIP_NOSOLUTION;
            break;
        }
        memset(c->obj, 0, (size_t)n * sizeof *c->obj);
        for (int32_t i = 0; i < st->n; i++)
            c->obj[st->cols[i]] += st->vals[i];
        double grain = rf__mip_stage_grain(mip, st);
        double bound = st->maximize ? INFINITY : -INFINITY;
        bool optimal = false, sound = true, infeasible = false;
        s_stopper_t stopper = {
            .stop = opts->stop, .deadline = deadline, .n_cols = n, .col = c->stop_col, .at = c->stop_at, .stopped = 0};
        do { /* one CBC search for the stage */
            Cbc_Model *model = s_model(c, mip);
            if (!model) {
                rc = rf_error_set(err, RF_ENOMEM, "", "out of memory loading the integer program into CBC");
                break;
            }
            Cbc_setObjSense(model, st->maximize ? -1 : 1);
            Cbc_setLogLevel(model, 0);
            Cbc_setParameter(model, "log", "0");
            Cbc_setParameter(model, "slog", "0");
            /* CglPreProcess::postProcess crashed (SIGSEGV) on two of the
             * three batches of tests/data/ilp/misses-* with a MIP start */
            Cbc_setParameter(model, "preprocess", "off");
            Cbc_setParameter(model, "timeMode", "elapsed");
            /* CBC's root does not look at its limit (under AddressSanitizer
             * a stage given 800 ms took 1,600; in Release 2,191 ms at 2 s):
             * it gets S_TIME_SHARE of what is left, divided by how far past
             * its limit it has run before */
            double given = S_TIME_SHARE * left / s_overrun;
            s_param(model, "seconds", fmax(0.001, given / 1000.0));
            s_param(model, "ratioGap", opts->mip_gap);
            if (grain > 0)
                s_param(model, "allowableGap", 0.5 * grain); /* values come in whole grains */
            else
                s_param(model, "increment", 1e-7); /* prune no answer better by more than that (CBC's 1e-5) */
            if (opts->node_budget > 0)
                s_param_int(model, "maxNodes", opts->node_budget > INT32_MAX ? INT32_MAX : opts->node_budget);
            if (opts->threads > 1) /* 100 + n: CBC's deterministic parallel search */
                s_param_int(model, "threads", 100 + (opts->threads < 64 ? opts->threads : 64));
            if (have_x)
                Cbc_setMIPStartI(model, n, all, c->best);
            if (stopper.col >= 0)
                Cbc_addCutCallback(model, s_stop_cb, "rackfit-stop", &stopper);
            double t0 = rf_now_ms();
            Cbc_solve(model);
            double spent = rf_now_ms() - t0;
            shortest = shortest > 0 ? fmin(shortest, spent) : spent;
            int status = Cbc_status(model);
            if (status == 1 && given >= 20) {
                double r = fmax(1.0, spent / given);
                s_overrun = r > s_overrun ? r : 0.9 * s_overrun + 0.1 * r;
            }
            infeasible = Cbc_isProvenInfeasible(model) && !have_x;
            double b = Cbc_getBestPossibleObjValue(model);
            const double *sol = Cbc_bestSolution(model);
            res->nodes += Cbc_getNodeCount(model);
            bool took = false;
            if (sol) {
                memcpy(c->x, sol, (size_t)n * sizeof *c->x);
                if (s_acceptable(mip, stages, res, k, c->x) &&
                    (!have_x || (st->maximize ? rf__mip_stage_value(st, c->x) >= rf__mip_stage_value(st, c->best)
                                              : rf__mip_stage_value(st, c->x) <= rf__mip_stage_value(st, c->best)))) {
                    memcpy(c->best, c->x, (size_t)n * sizeof *c->best);
                    have_x = true;
                    took = true;
                }
            }
            /* CBC's bound is sound when it ended normally or on a limit
             * (status 0 or 1); a proof holds for the solution it returned */
            bool stopped = __atomic_load_n(&stopper.stopped, __ATOMIC_RELAXED);
            bool ok = (status == 0 || status == 1) && isfinite(b) && fabs(b) < 1e299 && !stopped;
            sound &= (status == 0 || status == 1) && !stopped;
            if (ok)
                bound = st->maximize ? fmin(bound, b) : fmax(bound, b);
            optimal = Cbc_isProvenOptimal(model) && took && !stopped;
            infeasible &= !stopped;
            Cbc_deleteModel(model);
        } while (0);
        if (rc != RF_OK)
            break;
        if (infeasible) {
            res->status = RF_MIP_INFEASIBLE;
            break;
        }
        if (!have_x) {
            res->status = RF_MIP_NOSOLUTION;
            break;
        }
        rf__mip_stage_done(mip, st, opts, k, c->best, optimal, sound, bound, res);
        if (!res->proven[k] &&
            (rf_now_ms() >= deadline || (opts->stop && __atomic_load_n(opts->stop, __ATOMIC_RELAXED))))
            break;
        if (k + 1 < n_stages && !s_keep(c, st, res->obj[k])) {
            rc = rf_error_set(err, RF_ENOMEM, "", "out of memory");
            break;
        }
    }
    free(all);
    if (have_x) {
        res->x = c->best;
        c->best = NULL;
    } else if (res->status == RF_MIP_OPTIMAL) {
        res->status = RF_MIP_NOSOLUTION;
    }
    return rc;
}

rf_status rf__mip_solve_cbc(const rf__mip_t *mip, const rf__mip_stage_t *stages, int32_t n_stages,
                            const rf__mip_opts_t *opts, rf__mip_result_t *res, rf_error_t *err)
{
    double deadline = rf_now_ms() + opts->time_limit_ms;
    /* another solve's CBC may hold the lock: wait for it only while there
     * is time and no stop; otherwise the incumbent is the answer */
    while (pthread_mutex_trylock(&s_lock) != 0) {
        if (rf_now_ms() >= deadline || (opts->stop && __atomic_load_n(opts->stop, __ATOMIC_RELAXED))) {
            res->status = RF_MIP_NOSOLUTION;
            if (opts->incumbent && rf__mip_feasible(mip, opts->incumbent)) {
                res->x = malloc((size_t)mip->n_cols * sizeof *res->x + 1);
                if (!res->x)
                    return rf_error_set(err, RF_ENOMEM, "", "out of memory");
                memcpy(res->x, opts->incumbent, (size_t)mip->n_cols * sizeof *res->x);
                res->status = RF_MIP_FEASIBLE;
            }
            return RF_OK;
        }
        struct timespec ts = {.tv_sec = 0, .tv_nsec = 1000000}; /* 1 ms */
        nanosleep(&ts, NULL);
    }
    s_cbc_t c;
    rf_status rc = s_body(mip, stages, n_stages, opts, res, &c, deadline, err);
    pthread_mutex_unlock(&s_lock);
    s_fini(&c, n_stages);
    return rc;
}

#else /* built without CBC: rf__mip_solve refuses the backend before this */

bool rf__mip_cbc_thread_safe(void)
{
    return false;
}

rf_status rf__mip_solve_cbc(const rf__mip_t *mip, const rf__mip_stage_t *stages, int32_t n_stages,
                            const rf__mip_opts_t *opts, rf__mip_result_t *res, rf_error_t *err)
{
    (void)mip;
    (void)stages;
    (void)n_stages;
    (void)opts;
    (void)res;
    return rf_error_set(err, RF_EINVAL, "mip", "this rackfit was built without CBC");
}

#endif
