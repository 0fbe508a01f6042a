/* tests/unit/test_mip.c: the MIP boundary (solver/mip.h) with each backend
 * built in, GLPK (solver/mip_glpk.c) and CBC (solver/mip_cbc.c): a tiny
 * knapsack with a known optimum, a lexicographic two-stage objective, a
 * proven-infeasible program, and a stop flag set before the solve, each
 * solved by every backend; then, on a program too hard to finish (market
 * split), a stop flag set by another thread during the solve and a short
 * time limit must each end the solve at once, with the incumbent kept and
 * nothing claimed proven. Invariant checked throughout: `x` satisfies every
 * row and bound. */
#include <criterion/criterion.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../support/leak.h"
#include "clock.h"
#include "mip.h"

/* The backends of this build, for tests that loop over them. */
static int s_backends(rf_mip_backend out[2])
{
    int n = 0;
    out[n++] = RF_MIP_GLPK;
    if (rf_mip_backend_available(RF_MIP_CBC))
        out[n++] = RF_MIP_CBC;
    return n;
}

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

Test(mip, knapsack_optimum)
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
    rf_mip_backend bk[2];
    for (int b = 0, nb = s_backends(bk); b < nb; b++) {
        rf__mip_opts_t o = {.time_limit_ms = 5000, .mip_gap = 0, .backend = bk[b]};
        rf__mip_result_t res;
        rf_error_t err;
        cr_assert_eq(rf__mip_solve(&mip, &st, 1, &o, &res, &err), RF_OK, "%s", err.message);
        cr_assert_eq(res.status, RF_MIP_OPTIMAL, "%s", rf_mip_backend_name(bk[b]));
        cr_assert_eq(res.n_stages_done, 1);
        cr_assert(res.proven[0]);
        cr_assert_float_eq(res.obj[0], best, 1e-6);
        cr_assert(res.bound[0] >= res.obj[0] - 1e-6 && res.bound[0] <= best + 1e-6, "bound %g", res.bound[0]);
        assert_feasible(&mip, res.x);
        cr_assert_float_eq(5 * res.x[0] + 4 * res.x[1] + 3 * res.x[2], best, 1e-6);
        rf__mip_result_fini(&res);
    }
    rf__mip_fini(&mip);
    rf_test_no_leaks();
}

/* Stage 1 maximises a + b (both optima, a or b, are worth 1 under a + b <= 1);
 * stage 2 minimises a, so the lexicographic answer is b = 1, a = 0. */
Test(mip, lexicographic_stages_keep_earlier_value)
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
    rf_mip_backend bk[2];
    for (int b = 0, nb = s_backends(bk); b < nb; b++) {
        rf__mip_opts_t o = {.time_limit_ms = 5000, .backend = bk[b]};
        rf__mip_result_t res;
        rf_error_t err;
        cr_assert_eq(rf__mip_solve(&mip, st, 2, &o, &res, &err), RF_OK, "%s", err.message);
        cr_assert_eq(res.status, RF_MIP_OPTIMAL, "%s", rf_mip_backend_name(bk[b]));
        cr_assert_eq(res.n_stages_done, 2);
        cr_assert_float_eq(res.obj[0], 1, 1e-6);
        cr_assert_float_eq(res.obj[1], 0, 1e-6);
        cr_assert_float_eq(res.x[0], 0, 1e-6);
        cr_assert_float_eq(res.x[1], 1, 1e-6);
        rf__mip_result_fini(&res);
    }
    rf__mip_fini(&mip);
    rf_test_no_leaks();
}

/* x + y >= 3 with x, y binary has no solution: proven infeasible, no x. */
Test(mip, infeasible_program)
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
    rf_mip_backend bk[2];
    for (int b = 0, nb = s_backends(bk); b < nb; b++) {
        rf__mip_opts_t o = {.time_limit_ms = 5000, .backend = bk[b]};
        rf__mip_result_t res;
        rf_error_t err;
        cr_assert_eq(rf__mip_solve(&mip, &st, 1, &o, &res, &err), RF_OK, "%s", err.message);
        cr_assert(res.status == RF_MIP_INFEASIBLE || res.status == RF_MIP_NOSOLUTION, "%s: status %d",
                  rf_mip_backend_name(bk[b]), res.status);
        cr_assert_null(res.x);
        rf__mip_result_fini(&res);
    }
    rf__mip_fini(&mip);
    rf_test_no_leaks();
}

/* A stop flag already set: no stage runs, and the caller's incumbent (b = 1
 * alone, value 4) comes back as the solution (obj[] is only filled for the
 * stages done, so the value is computed from x). */
Test(mip, stop_flag_keeps_incumbent)
{
    rf__mip_t mip;
    knapsack(&mip);
    const double inc[3] = {0, 1, 0};
    volatile int stop = 1;
    rf__mip_stage_t st = {.maximize = true, .n = 3, .cols = s_cols, .vals = s_vals, .keep_tol = 1e-6};
    rf_mip_backend bk[2];
    for (int b = 0, nb = s_backends(bk); b < nb; b++) {
        rf__mip_opts_t o = {.time_limit_ms = 5000, .incumbent = inc, .stop = &stop, .backend = bk[b]};
        rf__mip_result_t res;
        rf_error_t err;
        rf_status s = rf__mip_solve(&mip, &st, 1, &o, &res, &err);
        cr_assert_eq(s, RF_OK, "%s", err.message);
        cr_assert(res.status == RF_MIP_FEASIBLE || res.status == RF_MIP_OPTIMAL, "status %d", res.status);
        assert_feasible(&mip, res.x);
        cr_assert_eq(res.n_stages_done, 0, "%s: a stage ran after the stop", rf_mip_backend_name(bk[b]));
        double v = 5 * res.x[0] + 4 * res.x[1] + 3 * res.x[2];
        cr_assert(v >= 4 - 1e-6, "worse than the incumbent: %g", v);
        rf__mip_result_fini(&res);
    }
    rf__mip_fini(&mip);
    rf_test_no_leaks();
}

/* A column/row index from each builder call, growing past any initial capacity. */
Test(mip, builder_grows)
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

/* A market split program (Cornuejols and Dawande): 4 rows of 32 binaries
 * with coefficients drawn from [0, 100) (a fixed LCG, so the same program
 * every run) and each row's right-hand side half its sum, maximising the
 * sum of x. Branch and bound cannot finish it in seconds. The incumbent is
 * all zeros with each row relaxed by a slack column paid -1000 in the
 * objective (so it is feasible and far from optimal). */
#define S_MS_ROWS 4
#define S_MS_COLS 32
static void market_split(rf__mip_t *mip, int32_t *cols, double *vals, double *inc)
{
    uint32_t seed = 12345;
    rf__mip_init(mip);
    for (int j = 0; j < S_MS_COLS; j++)
        rf__mip_col(mip, 0, 1, true);
    for (int r = 0; r < S_MS_ROWS; r++) {
        int32_t sp = rf__mip_col(mip, 0, 1000, false), sm = rf__mip_col(mip, 0, 1000, false);
        double sum = 0, a[S_MS_COLS];
        for (int j = 0; j < S_MS_COLS; j++) {
            seed = seed * 1103515245u + 12345u;
            a[j] = (double)((seed >> 16) % 100);
            sum += a[j];
        }
        double rhs = floor(sum / 2);
        int32_t row = rf__mip_row(mip, rhs, rhs);
        for (int j = 0; j < S_MS_COLS; j++)
            rf__mip_coef(mip, row, j, a[j]);
        rf__mip_coef(mip, row, sp, 1);
        rf__mip_coef(mip, row, sm, -1);
        inc[sp] = rhs;
        inc[sm] = 0;
    }
    for (int j = 0; j < mip->n_cols; j++) {
        cols[j] = j;
        vals[j] = j < S_MS_COLS ? 1 : -1000;
        if (j < S_MS_COLS)
            inc[j] = 0;
    }
    cr_assert(!mip->failed);
}

typedef struct {
    volatile int *stop;
    int after_ms;
} s_stopper_t;

static void *s_stop_later(void *arg)
{
    s_stopper_t *st = arg;
    struct timespec ts = {.tv_sec = st->after_ms / 1000, .tv_nsec = (long)(st->after_ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
    __atomic_store_n(st->stop, 1, __ATOMIC_RELAXED);
    return NULL;
}

/* Another thread sets the stop flag 200 ms into a 60 s solve: each backend
 * ends within a second of it, keeps a solution at least as good as the
 * incumbent, and proves nothing. */
Test(mip, stop_flag_ends_a_running_search, .timeout = 120)
{
    rf__mip_t mip;
    int32_t cols[S_MS_COLS + 2 * S_MS_ROWS];
    double vals[S_MS_COLS + 2 * S_MS_ROWS], inc[S_MS_COLS + 2 * S_MS_ROWS];
    market_split(&mip, cols, vals, inc);
    rf__mip_stage_t st = {.maximize = true, .n = mip.n_cols, .cols = cols, .vals = vals, .keep_tol = 1e-6};
    double inc_val = 0;
    for (int j = 0; j < mip.n_cols; j++)
        inc_val += vals[j] * inc[j];
    rf_mip_backend bk[2];
    for (int b = 0, nb = s_backends(bk); b < nb; b++) {
        volatile int stop = 0;
        s_stopper_t sp = {.stop = &stop, .after_ms = 200};
        pthread_t th;
        cr_assert_eq(pthread_create(&th, NULL, s_stop_later, &sp), 0);
        rf__mip_opts_t o = {.time_limit_ms = 60000, .mip_gap = 0, .incumbent = inc, .stop = &stop, .backend = bk[b]};
        rf__mip_result_t res;
        rf_error_t err;
        double t0 = rf_now_ms();
        cr_assert_eq(rf__mip_solve(&mip, &st, 1, &o, &res, &err), RF_OK, "%s", err.message);
        double ms = rf_now_ms() - t0;
        pthread_join(th, NULL);
        const char *name = rf_mip_backend_name(bk[b]);
        cr_assert_lt(ms, 1200, "%s: %.0f ms after a stop at 200 ms", name, ms);
        cr_assert_eq(res.status, RF_MIP_FEASIBLE, "%s: status %d", name, res.status);
        cr_assert(res.n_stages_done == 0 || !res.proven[0], "%s: a stopped search proved its stage", name);
        assert_feasible(&mip, res.x);
        double v = 0;
        for (int j = 0; j < mip.n_cols; j++)
            v += vals[j] * res.x[j];
        cr_assert_geq(v, inc_val - 1e-6, "%s: %g, worse than the incumbent's %g", name, v, inc_val);
        if (res.n_stages_done == 1)
            cr_assert_geq(res.bound[0], v - 1e-6, "%s: bound %g below the solution %g", name, res.bound[0], v);
        rf__mip_result_fini(&res);
    }
    rf__mip_fini(&mip);
    rf_test_no_leaks();
}

/* The same program with a 300 ms limit and no stop flag: each backend
 * returns, unproven, with its bound above its value, within the limit and a slack (the slack is generous for
 * sanitizer builds on a shared machine; bench/RESULTS.md measures it). */
Test(mip, time_limit_ends_a_running_search, .timeout = 120)
{
    rf__mip_t mip;
    int32_t cols[S_MS_COLS + 2 * S_MS_ROWS];
    double vals[S_MS_COLS + 2 * S_MS_ROWS], inc[S_MS_COLS + 2 * S_MS_ROWS];
    market_split(&mip, cols, vals, inc);
    rf__mip_stage_t st = {.maximize = true, .n = mip.n_cols, .cols = cols, .vals = vals, .keep_tol = 1e-6};
    rf_mip_backend bk[2];
    for (int b = 0, nb = s_backends(bk); b < nb; b++) {
        rf__mip_opts_t o = {.time_limit_ms = 300, .mip_gap = 0, .incumbent = inc, .backend = bk[b]};
        rf__mip_result_t res;
        rf_error_t err;
        double t0 = rf_now_ms();
        cr_assert_eq(rf__mip_solve(&mip, &st, 1, &o, &res, &err), RF_OK, "%s", err.message);
        double ms = rf_now_ms() - t0;
        const char *name = rf_mip_backend_name(bk[b]);
        cr_assert_lt(ms, 300 + 700, "%s: %.0f ms against a 300 ms limit", name, ms);
        cr_assert_eq(res.status, RF_MIP_FEASIBLE, "%s: status %d", name, res.status);
        assert_feasible(&mip, res.x);
        /* a maximising stage cut by its limit: its bound lies above what was
         * found (market split's LP is far from any integer point), and
         * nothing is proven: a bound of the wrong sense would be clamped to
         * the value and read as a proof */
        if (res.n_stages_done == 1) {
            cr_assert(!res.proven[0], "%s: a search cut at 300 ms proved market split", name);
            cr_assert_gt(res.bound[0], res.obj[0] + 0.5, "%s: bound %g, found %g", name, res.bound[0], res.obj[0]);
        }
        rf__mip_result_fini(&res);
    }
    rf__mip_fini(&mip);
    rf_test_no_leaks();
}

/* The names, and a backend this build lacks refused by the solve. */
Test(mip, backend_names_and_refusal)
{
    rf_mip_backend b;
    cr_assert_eq(rf_mip_backend_parse("auto", &b), 0);
    cr_assert_eq(b, RF_MIP_AUTO);
    cr_assert_eq(rf_mip_backend_parse("glpk", &b), 0);
    cr_assert_eq(b, RF_MIP_GLPK);
    cr_assert_eq(rf_mip_backend_parse("cbc", &b), 0);
    cr_assert_eq(b, RF_MIP_CBC);
    cr_assert_eq(rf_mip_backend_parse("gurobi", &b), -1);
    cr_assert_str_eq(rf_mip_backend_name(RF_MIP_CBC), "cbc");
    cr_assert(rf_mip_backend_available(RF_MIP_AUTO) && rf_mip_backend_available(RF_MIP_GLPK));
    rf__mip_t mip;
    knapsack(&mip);
    rf__mip_stage_t st = {.maximize = true, .n = 3, .cols = s_cols, .vals = s_vals, .keep_tol = 1e-6};
    rf__mip_opts_t o = {.time_limit_ms = 5000, .backend = (rf_mip_backend)7};
    rf__mip_result_t res;
    rf_error_t err;
    cr_assert_eq(rf__mip_solve(&mip, &st, 1, &o, &res, &err), RF_EINVAL);
    cr_assert(strstr(err.message, "backend") != NULL, "%s", err.message);
    rf__mip_result_fini(&res);
    rf__mip_fini(&mip);
    rf_test_no_leaks();
}
