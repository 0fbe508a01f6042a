/* solver/mip.c: building an rf__mip_t, what both backends share, and the
 * choice between them.
 *
 * The program is built here in our own terms (solver/mip.h); rf__mip_solve
 * hands it to the backend the options name: GLPK (solver/mip_glpk.c, the
 * default) or CBC (solver/mip_cbc.c, when built with it). Both solve the same
 * lexicographic stages and report through the same rf__mip_result_t; what
 * they share (the check of a given incumbent, the grain of a stage's
 * objective, row scaling, and how a stage's value, bound and proof are
 * recorded) is here, so the two cannot drift apart. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mip.h"
#include "mip_backend.h"

/* ---------------------------------------------------------------- building */

void rf__mip_init(rf__mip_t *mip)
{
    memset(mip, 0, sizeof *mip);
}

void rf__mip_fini(rf__mip_t *mip)
{
    free(mip->lb);
    free(mip->ub);
    free(mip->is_int);
    free(mip->prio);
    free(mip->row_lo);
    free(mip->row_hi);
    free(mip->ti);
    free(mip->tj);
    free(mip->tv);
    memset(mip, 0, sizeof *mip);
}

static bool s_grow(void **p, int64_t *cap, int64_t need, size_t size)
{
    if (need <= *cap)
        return true;
    int64_t nc = *cap ? *cap * 2 : 64;
    while (nc < need)
        nc *= 2;
    void *q = realloc(*p, (size_t)nc * size);
    if (!q)
        return false;
    *p = q;
    *cap = nc;
    return true;
}

int32_t rf__mip_col(rf__mip_t *mip, double lb, double ub, bool is_int)
{
    if (mip->failed)
        return -1;
    if (mip->n_cols == mip->cap_cols) {
        int64_t c1 = mip->cap_cols, c2 = c1, c3 = c1, c4 = c1;
        bool ok = s_grow((void **)&mip->lb, &c1, mip->n_cols + 1, sizeof(double)) &&
                  s_grow((void **)&mip->ub, &c2, mip->n_cols + 1, sizeof(double)) &&
                  s_grow((void **)&mip->is_int, &c3, mip->n_cols + 1, 1) &&
                  s_grow((void **)&mip->prio, &c4, mip->n_cols + 1, 1);
        if (!ok || c1 != c2 || c2 != c3 || c3 != c4) {
            mip->failed = true;
            return -1;
        }
        mip->cap_cols = (int32_t)c1;
    }
    mip->lb[mip->n_cols] = lb;
    mip->ub[mip->n_cols] = ub;
    mip->is_int[mip->n_cols] = is_int;
    mip->prio[mip->n_cols] = 0;
    return mip->n_cols++;
}

void rf__mip_prio(rf__mip_t *mip, int32_t col, uint8_t prio)
{
    if (!mip->failed && col >= 0 && col < mip->n_cols)
        mip->prio[col] = prio;
}

int32_t rf__mip_row(rf__mip_t *mip, double lo, double hi)
{
    if (mip->failed)
        return -1;
    if (mip->n_rows == mip->cap_rows) {
        int64_t c1 = mip->cap_rows, c2 = c1;
        bool ok = s_grow((void **)&mip->row_lo, &c1, mip->n_rows + 1, sizeof(double)) &&
                  s_grow((void **)&mip->row_hi, &c2, mip->n_rows + 1, sizeof(double));
        if (!ok || c1 != c2) {
            mip->failed = true;
            return -1;
        }
        mip->cap_rows = (int32_t)c1;
    }
    mip->row_lo[mip->n_rows] = lo;
    mip->row_hi[mip->n_rows] = hi;
    return mip->n_rows++;
}

void rf__mip_coef(rf__mip_t *mip, int32_t row, int32_t col, double val)
{
    if (mip->failed || row < 0 || col < 0 || val == 0)
        return;
    if (mip->nnz == mip->cap_nnz) {
        int64_t c1 = mip->cap_nnz, c2 = c1, c3 = c1;
        bool ok = s_grow((void **)&mip->ti, &c1, mip->nnz + 1, sizeof(int32_t)) &&
                  s_grow((void **)&mip->tj, &c2, mip->nnz + 1, sizeof(int32_t)) &&
                  s_grow((void **)&mip->tv, &c3, mip->nnz + 1, sizeof(double));
        if (!ok || c1 != c2 || c2 != c3) {
            mip->failed = true;
            return;
        }
        mip->cap_nnz = c1;
    }
    mip->ti[mip->nnz] = row;
    mip->tj[mip->nnz] = col;
    mip->tv[mip->nnz] = val;
    mip->nnz++;
}

void rf__mip_result_fini(rf__mip_result_t *res)
{
    free(res->x);
    memset(res, 0, sizeof *res);
}

/* ---------------------------------------------------------------- shared by the backends */

bool rf__mip_feasible(const rf__mip_t *mip, const double *x)
{
    const double tol = 1e-6;
    for (int32_t j = 0; j < mip->n_cols; j++)
        if (x[j] < mip->lb[j] - tol || x[j] > mip->ub[j] + tol || (mip->is_int[j] && fabs(x[j] - round(x[j])) > tol))
            return false;
    double *act = calloc((size_t)mip->n_rows + 1, sizeof *act);
    if (!act)
        return false;
    for (int64_t k = 0; k < mip->nnz; k++)
        act[mip->ti[k]] += mip->tv[k] * x[mip->tj[k]];
    bool ok = true;
    for (int32_t i = 0; i < mip->n_rows && ok; i++)
        ok = act[i] >= mip->row_lo[i] - tol && act[i] <= mip->row_hi[i] + tol;
    free(act);
    return ok;
}

double rf__mip_stage_grain(const rf__mip_t *mip, const rf__mip_stage_t *st)
{
    int64_t g = 0;
    for (int32_t i = 0; i < st->n; i++) {
        double v = fabs(st->vals[i]);
        if (!mip->is_int[st->cols[i]] || v > 1e12 || fabs(v - round(v)) > 1e-9)
            return 0;
        int64_t a = (int64_t)llround(v), b = g;
        while (b != 0) {
            int64_t t = a % b;
            a = b;
            b = t;
        }
        g = a;
    }
    return (double)g;
}

double *rf__mip_row_scales(const rf__mip_t *mip)
{
    double *sc = calloc((size_t)mip->n_rows + 1, sizeof *sc);
    if (!sc)
        return NULL;
    for (int64_t k = 0; k < mip->nnz; k++)
        sc[mip->ti[k]] = fmax(sc[mip->ti[k]], fabs(mip->tv[k]));
    for (int32_t i = 0; i < mip->n_rows; i++)
        sc[i] = sc[i] > 0 ? 1.0 / sc[i] : 1.0;
    return sc;
}

double rf__mip_stage_value(const rf__mip_stage_t *st, const double *x)
{
    double val = 0;
    for (int32_t i = 0; i < st->n; i++)
        val += st->vals[i] * x[st->cols[i]];
    return val;
}

void rf__mip_stage_done(const rf__mip_t *mip, const rf__mip_stage_t *st, const rf__mip_opts_t *opts, int32_t k,
                        const double *x, bool proven, bool whole_grains, double bound, rf__mip_result_t *res)
{
    double val = rf__mip_stage_value(st, x);
    double grain = rf__mip_stage_grain(mip, st);
    if (grain > 0) /* no solution lies between grains */
        bound = st->maximize ? floor(bound / grain + 1e-6) * grain : ceil(bound / grain - 1e-6) * grain;
    if (st->maximize ? bound < val : bound > val)
        bound = val; /* the bound never claims worse than what is found */
    res->obj[k] = val;
    res->bound[k] = bound;
    if (grain > 0 && fabs(bound - val) < 0.5 * grain && whole_grains)
        proven = true; /* the search's own bound, in whole grains, meets the solution */
    res->proven[k] = proven && fabs(bound - val) <= fmax(opts->mip_gap, 1e-9) * fmax(1, fabs(val)) + 1e-6;
    res->n_stages_done = k + 1;
    if (!res->proven[k])
        res->status = RF_MIP_FEASIBLE;
}

/* ---------------------------------------------------------------- the choice */

const char *rf_mip_backend_name(rf_mip_backend b)
{
    return b == RF_MIP_CBC ? "cbc" : b == RF_MIP_GLPK ? "glpk" : "auto";
}

int rf_mip_backend_parse(const char *name, rf_mip_backend *out)
{
    if (strcmp(name, "auto") == 0)
        *out = RF_MIP_AUTO;
    else if (strcmp(name, "glpk") == 0)
        *out = RF_MIP_GLPK;
    else if (strcmp(name, "cbc") == 0)
        *out = RF_MIP_CBC;
    else
        return -1;
    return 0;
}

bool rf_mip_backend_available(rf_mip_backend b)
{
#ifdef RF_HAVE_CBC
    return b == RF_MIP_AUTO || b == RF_MIP_GLPK || b == RF_MIP_CBC;
#else
    return b == RF_MIP_AUTO || b == RF_MIP_GLPK;
#endif
}

bool rf__mip_thread_safe(rf_mip_backend b)
{
    return b == RF_MIP_CBC ? rf__mip_cbc_thread_safe() : rf__mip_glpk_thread_safe();
}

rf_status rf__mip_solve(const rf__mip_t *mip, const rf__mip_stage_t *stages, int32_t n_stages,
                        const rf__mip_opts_t *opts, rf__mip_result_t *res, rf_error_t *err)
{
    memset(res, 0, sizeof *res);
    if (mip->failed)
        return rf_error_set(err, RF_ENOMEM, "", "out of memory building the integer program");
    if (opts->backend != RF_MIP_AUTO && opts->backend != RF_MIP_GLPK && opts->backend != RF_MIP_CBC)
        return rf_error_set(err, RF_EINVAL, "mip", "unknown MIP backend %d", (int)opts->backend);
    if (!rf_mip_backend_available(opts->backend))
        return rf_error_set(err, RF_EINVAL, "mip", "this rackfit was built without the %s backend",
                            rf_mip_backend_name(opts->backend));
    if (opts->backend == RF_MIP_CBC) /* RF_MIP_AUTO here: GLPK (the strategies pick CBC where they use it) */
        return rf__mip_solve_cbc(mip, stages, n_stages, opts, res, err);
    return rf__mip_solve_glpk(mip, stages, n_stages, opts, res, err);
}
