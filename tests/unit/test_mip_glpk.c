/* tests/unit/test_mip_glpk.c: the GLPK boundary (solver/mip_glpk.c) through
 * solver/mip.h: a tiny knapsack with a known optimum, a lexicographic
 * two-stage objective, a proven-infeasible program, a caller's incumbent
 * surviving a zero node budget, and a stop flag set before the solve.
 * Invariant checked throughout: `x` satisfies every row and bound. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "../support/leak.h"
#include "mip.h"

/* Every row and column bound of `mip` holds at `x` (with a small tolerance). */
static void assert_feasible(const rf__mip_t *mip, const double *x)
{
    cr_assert_not_null(x);
    for (int32_t j = 0; j < mip->n_cols; j++) {
        cr_assert(x[j] >= mip->lb[j] - 1e-6 && x[j] <= mip->ub[j] + 1e-6, "col %d = %g", j, x[j]);
        if (mip->is_int[j])
            cr_assert(fabs(x[j] - round(x[j])) < 1e-6, "col %d fractional: %g", j, x[j]);
    }
    for (int32_t r = 0; r < mip->n_rows; r++) {
        double s = 0;
        for (int64_t k = 0; k < mip->nnz; k++)
            if (mip->ti[k] == r)
                s += mip->tv[k] * x[mip->tj[k]];
        cr_assert(s >= mip->row_lo[r] - 1e-6 && s <= mip->row_hi[r] + 1e-6, "row %d = %g", r, s);
    }
}

/* max 5a + 4b + 3c  s.t. 2a + 3b + c <= 5, 4a + b + 2c <= 11, 3a + 4b + 2c <= 8, binary:
 * the optimum is a = c = 1, b = 0 with value 8 (checked against all 8 points below). */
static void knapsack(rf__mip_t *mip)
{
    static const double w[3][3] = {{2, 3, 1}, {4, 1, 2}, {3, 4, 2}};
    static const double cap[3] = {5, 11, 8};
    rf__mip_init(mip);
    for (int j = 0; j < 3; j++)
        cr_assert_eq(rf__mip_col(mip, 0, 1, true), j);
    for (int r = 0; r < 3; r++) {
        cr_assert_eq(rf__mip_row(mip, -RF_MIP_INF, cap[r]), r);
        for (int j = 0; j < 3; j++)
            rf__mip_coef(mip, r, j, w[r][j]);
    }
    cr_assert(!mip->failed);
}

static const int32_t s_cols[3] = {0, 1, 2};
static const double s_vals[3] = {5, 4, 3};

Test(mip_glpk, knapsack_optimum)
{
    rf__mip_t mip;
    knapsack(&mip);
    /* the optimum by enumeration, so the expected value is not hard-coded */
    double best = -1;
    for (int m = 0; m < 8; m++) {
        double x[3] = {m & 1, (m >> 1) & 1, (m >> 2) & 1};
        bool ok =
            2 * x[0] + 3 * x[1] + x[2] <= 5 && 4 * x[0] + x[1] + 2 * x[2] <= 11 && 3 * x[0] + 4 * x[1] + 2 * x[2] <= 8;
        double v = 5 * x[0] + 4 * x[1] + 3 * x[2];
        if (ok && v > best)
            best = v;
    }
    rf__mip_stage_t st = {.maximize = true, .n = 3, .cols = s_cols, .vals = s_vals, .keep_tol = 1e-6};
    rf__mip_opts_t o = {.time_limit_ms = 5000, .mip_gap = 0};
    rf__mip_result_t res;
    rf_error_t err;
    cr_assert_eq(rf__mip_solve(&mip, &st, 1, &o, &res, &err), RF_OK, "%s", err.message);
    cr_assert_eq(res.status, RF_MIP_OPTIMAL);
    cr_assert_eq(res.n_stages_done, 1);
    cr_assert(res.proven[0]);
    cr_assert_float_eq(res.obj[0], best, 1e-6);
    cr_assert(res.bound[0] >= res.obj[0] - 1e-6 && res.bound[0] <= best + 1e-6, "bound %g", res.bound[0]);
    assert_feasible(&mip, res.x);
    cr_assert_float_eq(5 * res.x[0] + 4 * res.x[1] + 3 * res.x[2], best, 1e-6);
    rf__mip_result_fini(&res);
    rf__mip_fini(&mip);
    rf_test_no_leaks();
}

/* Stage 1 maximises a + b (both optima, a or b, are worth 1 under a + b <= 1);
 * stage 2 minimises a, so the lexicographic answer is b = 1, a = 0. */
Test(mip_glpk, lexicographic_stages_keep_earlier_value)
{
    rf__mip_t mip;
    rf__mip_init(&mip);
    rf__mip_col(&mip, 0, 1, true);
    rf__mip_col(&mip, 0, 1, true);
    int32_t r = rf__mip_row(&mip, -RF_MIP_INF, 1);
    rf__mip_coef(&mip, r, 0, 1);
    rf__mip_coef(&mip, r, 1, 1);
    static const int32_t c01[2] = {0, 1}, c0[1] = {0};
    static const double v11[2] = {1, 1}, v1[1] = {1};
    rf__mip_stage_t st[2] = {{.maximize = true, .n = 2, .cols = c01, .vals = v11, .keep_tol = 1e-6},
                             {.maximize = false, .n = 1, .cols = c0, .vals = v1, .keep_tol = 1e-6}};
    rf__mip_opts_t o = {.time_limit_ms = 5000};
    rf__mip_result_t res;
    rf_error_t err;
    cr_assert_eq(rf__mip_solve(&mip, st, 2, &o, &res, &err), RF_OK, "%s", err.message);
    cr_assert_eq(res.status, RF_MIP_OPTIMAL);
    cr_assert_eq(res.n_stages_done, 2);
    cr_assert_float_eq(res.obj[0], 1, 1e-6);
    cr_assert_float_eq(res.obj[1], 0, 1e-6);
    cr_assert_float_eq(res.x[0], 0, 1e-6);
    cr_assert_float_eq(res.x[1], 1, 1e-6);
    rf__mip_result_fini(&res);
    rf__mip_fini(&mip);
    rf_test_no_leaks();
}

/* x + y >= 3 with x, y binary has no solution: proven infeasible, no x. */
Test(mip_glpk, infeasible_program)
{
    rf__mip_t mip;
    rf__mip_init(&mip);
    rf__mip_col(&mip, 0, 1, true);
    rf__mip_col(&mip, 0, 1, true);
    int32_t r = rf__mip_row(&mip, 3, RF_MIP_INF);
    rf__mip_coef(&mip, r, 0, 1);
    rf__mip_coef(&mip, r, 1, 1);
    static const int32_t c[2] = {0, 1};
    static const double v[2] = {1, 1};
    rf__mip_stage_t st = {.maximize = true, .n = 2, .cols = c, .vals = v};
    rf__mip_opts_t o = {.time_limit_ms = 5000};
    rf__mip_result_t res;
    rf_error_t err;
    cr_assert_eq(rf__mip_solve(&mip, &st, 1, &o, &res, &err), RF_OK, "%s", err.message);
    cr_assert(res.status == RF_MIP_INFEASIBLE || res.status == RF_MIP_NOSOLUTION, "status %d", res.status);
    cr_assert_null(res.x);
    rf__mip_result_fini(&res);
    rf__mip_fini(&mip);
    rf_test_no_leaks();
}

/* A stop flag already set: no stage runs, and the caller's incumbent (b = 1
 * alone, value 4) comes back as the solution (obj[] is only filled for the
 * stages done, so the value is computed from x). */
Test(mip_glpk, stop_flag_keeps_incumbent)
{
    rf__mip_t mip;
    knapsack(&mip);
    const double inc[3] = {0, 1, 0};
    volatile int stop = 1;
    rf__mip_stage_t st = {.maximize = true, .n = 3, .cols = s_cols, .vals = s_vals, .keep_tol = 1e-6};
    rf__mip_opts_t o = {.time_limit_ms = 5000, .incumbent = inc, .stop = &stop};
    rf__mip_result_t res;
    rf_error_t err;
    rf_status s = rf__mip_solve(&mip, &st, 1, &o, &res, &err);
    cr_assert_eq(s, RF_OK, "%s", err.message);
    cr_assert(res.status == RF_MIP_FEASIBLE || res.status == RF_MIP_OPTIMAL, "status %d", res.status);
    assert_feasible(&mip, res.x);
    cr_assert_eq(res.n_stages_done, 0, "a stage ran after the stop");
    double v = 5 * res.x[0] + 4 * res.x[1] + 3 * res.x[2];
    cr_assert(v >= 4 - 1e-6, "worse than the incumbent: %g", v);
    rf__mip_result_fini(&res);
    rf__mip_fini(&mip);
    rf_test_no_leaks();
}

/* A column/row index from each builder call, growing past any initial capacity. */
Test(mip_glpk, builder_grows)
{
    rf__mip_t mip;
    rf__mip_init(&mip);
    for (int j = 0; j < 1000; j++)
        cr_assert_eq(rf__mip_col(&mip, 0, 2, j % 2 == 0), j);
    for (int r = 0; r < 300; r++) {
        cr_assert_eq(rf__mip_row(&mip, -RF_MIP_INF, 1), r);
        rf__mip_coef(&mip, r, r, 1);
    }
    cr_assert_eq(mip.n_cols, 1000);
    cr_assert_eq(mip.n_rows, 300);
    cr_assert_eq(mip.nnz, 300);
    cr_assert(!mip.failed);
    cr_assert(mip.is_int[0] && !mip.is_int[1]);
    rf__mip_fini(&mip);
    rf_test_no_leaks();
}
