/* solver/mip_glpk.c: the GLPK boundary, the only file that includes <glpk.h>.
 *
 * It solves an rf__mip_t (solver/mip.h) in lexicographic stages:
 * - one glp_prob per call, built, solved and deleted by the calling thread;
 * - the LP relaxation by glp_simplex first (no MIP presolver: the incumbent
 *   given through glp_ios_heur_sol must be in the original columns), then
 *   glp_intopt with msg_lev off, tm_lim and mip_gap always set, and a
 *   callback that hands GLPK the incumbent, records the best bound and ends
 *   the search when the node budget is spent;
 * - glp_error_hook turns a GLPK failure (it would abort the process) into a
 *   longjmp back here, glp_free_env() cleans up, and the caller gets
 *   RF_ESOLVER with the best solution found before;
 * - glp_mem_limit bounds GLPK's memory; the environment is freed at the end
 *   of every call, so no thread leaves GLPK memory behind.
 * GLPK without thread-local storage (glp_config("TLS") == NULL) is used by one
 * thread at a time. */
#include <glpk.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mip.h"
#include "mip_backend.h"
#include "rackfit/solve.h"

bool rf__mip_glpk_thread_safe(void)
{
    return glp_config("TLS") != NULL;
}

/* ---------------------------------------------------------------- solving */

static pthread_mutex_t s_lock = PTHREAD_MUTEX_INITIALIZER;

typedef struct {
    jmp_buf jump;
} s_guard_t;

static void s_error_hook(void *info)
{
    s_guard_t *guard = info;
    longjmp(guard->jump, 1);
}

static int s_quiet(void *info, const char *s)
{
    (void)info;
    return 1; /* swallow GLPK's terminal output */
}

typedef struct {
    const rf__mip_t *mip;
    bool use_prio;    /* some column has a branching priority */
    const double *x1; /* incumbent, 1-based, or NULL */
    bool given;
    int64_t budget;
    const volatile int *stop;
    double deadline; /* rf_now_ms(): the stage's end */
    int64_t nodes;
    bool have_bound;
    double bound;
} s_cb_t;

static void s_callback(glp_tree *tree, void *info)
{
    s_cb_t *cb = info;
    if (glp_ios_reason(tree) == GLP_IHEUR && cb->x1 && !cb->given) {
        glp_ios_heur_sol(tree, cb->x1);
        cb->given = true;
    }
    if (glp_ios_reason(tree) == GLP_IBRANCH && cb->use_prio) {
        /* the fractional column of the highest priority, the most fractional among them */
        const rf__mip_t *mip = cb->mip;
        int pick = 0;
        uint8_t pick_prio = 0;
        double pick_frac = 0;
        for (int32_t j = 0; j < mip->n_cols; j++) {
            if (mip->prio[j] == 0 || mip->prio[j] < pick_prio || !glp_ios_can_branch(tree, j + 1))
                continue;
            double v = glp_get_col_prim(glp_ios_get_prob(tree), j + 1);
            double f = fmin(v - floor(v), ceil(v) - v);
            if (mip->prio[j] > pick_prio || f > pick_frac) {
                pick = j + 1;
                pick_prio = mip->prio[j];
                pick_frac = f;
            }
        }
        if (pick > 0)
            glp_ios_branch_upon(tree, pick, GLP_UP_BRNCH);
    }
    int best = glp_ios_best_node(tree);
    if (best != 0) {
        cb->bound = glp_ios_node_bound(tree, best);
        cb->have_bound = true;
    }
    int a_cnt, n_cnt, t_cnt;
    glp_ios_tree_size(tree, &a_cnt, &n_cnt, &t_cnt);
    cb->nodes = t_cnt;
    /* the deadline too, at every call: GLPK looks at tm_lim between nodes,
     * and a node's cut rounds ran up to 9 ms past it on the simulator's
     * rounds (bench/RESULTS.md, "The time limit with many running gangs") */
    if ((cb->budget > 0 && t_cnt > cb->budget) || (cb->stop && __atomic_load_n(cb->stop, __ATOMIC_RELAXED)) ||
        rf_now_ms() > cb->deadline)
        glp_ios_terminate(tree);
}

static void s_set_bounds(glp_prob *P, bool row, int idx, double lo, double hi)
{
    int type;
    bool has_lo = lo > -RF_MIP_INF / 2, has_hi = hi < RF_MIP_INF / 2;
    if (has_lo && has_hi)
        type = lo == hi ? GLP_FX : GLP_DB;
    else if (has_lo)
        type = GLP_LO;
    else if (has_hi)
        type = GLP_UP;
    else
        type = GLP_FR;
    if (row)
        glp_set_row_bnds(P, idx, type, has_lo ? lo : 0, has_hi ? hi : 0);
    else
        glp_set_col_bnds(P, idx, type, has_lo ? lo : 0, has_hi ? hi : 0);
}

/* The body, between setjmp and the error hook: everything it allocates with
 * malloc is listed in `own` so the caller frees it on every path. */
typedef struct {
    int *ia, *ja;
    double *ar;
    double *x1;   /* 1-based incumbent */
    double *best; /* 0-based best solution */
    int *row_ind; /* for stage rows */
    double *row_val;
    double *rscale; /* row scale factors while loading */
} s_own_t;

/* A row keeping stage st's value `val` (within keep_tol) for the later
 * stages; own->x1 is a zeroed dense accumulator here, and left zeroed. */
static void s_keep_stage(glp_prob *P, const rf__mip_stage_t *st, double val, s_own_t *own)
{
    /* merge repeated columns: GLPK refuses duplicates in a row */
    int row = glp_add_rows(P, 1);
    int len = 0;
    for (int32_t i = 0; i < st->n; i++) {
        int j = st->cols[i] + 1;
        if (own->x1[j] == 0) /* x1 doubles as a dense accumulator here */
            own->row_ind[++len] = j;
        own->x1[j] += st->vals[i];
    }
    int kept = 0;
    for (int t = 1; t <= len; t++) {
        int j = own->row_ind[t];
        if (own->x1[j] != 0) {
            own->row_ind[++kept] = j;
            own->row_val[kept] = own->x1[j];
        }
        own->x1[j] = 0;
    }
    glp_set_mat_row(P, row, kept, own->row_ind, own->row_val);
    if (st->maximize)
        glp_set_row_bnds(P, row, GLP_LO, val - st->keep_tol, 0);
    else
        glp_set_row_bnds(P, row, GLP_UP, 0, val + st->keep_tol);
}

/* The program as a glp_prob, rows scaled so their largest coefficient is
 * 1; NULL on ENOMEM. */
static glp_prob *s_load(const rf__mip_t *mip, s_own_t *own)
{
    const int32_t n = mip->n_cols;
    glp_prob *P = glp_create_prob();
    glp_set_obj_dir(P, GLP_MIN);
    if (mip->n_rows > 0)
        glp_add_rows(P, mip->n_rows);
    if (n > 0)
        glp_add_cols(P, n);
    /* rows are scaled so their largest coefficient is 1: resource rows in
     * bytes (1Ti = 2^40) otherwise wreck the simplex's numerics */
    double *rscale = own->rscale = rf__mip_row_scales(mip);
    if (!rscale) {
        glp_delete_prob(P);
        return NULL;
    }
    for (int32_t i = 0; i < mip->n_rows; i++) {
        double sc = rscale[i];
        double lo = mip->row_lo[i] > -RF_MIP_INF / 2 ? mip->row_lo[i] * sc : mip->row_lo[i];
        double hi = mip->row_hi[i] < RF_MIP_INF / 2 ? mip->row_hi[i] * sc : mip->row_hi[i];
        s_set_bounds(P, true, i + 1, lo, hi);
    }
    for (int32_t j = 0; j < n; j++) {
        s_set_bounds(P, false, j + 1, mip->lb[j], mip->ub[j]);
        glp_set_col_kind(P, j + 1, mip->is_int[j] ? GLP_IV : GLP_CV);
    }
    own->ia = malloc((size_t)(mip->nnz + 1) * sizeof *own->ia);
    own->ja = malloc((size_t)(mip->nnz + 1) * sizeof *own->ja);
    own->ar = malloc((size_t)(mip->nnz + 1) * sizeof *own->ar);
    own->x1 = calloc((size_t)n + 1, sizeof *own->x1);
    own->row_ind = malloc((size_t)(n + 1) * sizeof *own->row_ind);
    own->row_val = malloc((size_t)(n + 1) * sizeof *own->row_val);
    if (!own->ia || !own->ja || !own->ar || !own->x1 || !own->row_ind || !own->row_val) {
        glp_delete_prob(P);
        return NULL;
    }
    for (int64_t k = 0; k < mip->nnz; k++) {
        own->ia[k + 1] = mip->ti[k] + 1;
        own->ja[k + 1] = mip->tj[k] + 1;
        own->ar[k + 1] = mip->tv[k] * rscale[mip->ti[k]];
    }
    free(rscale);
    own->rscale = NULL;
    if (mip->nnz > 0)
        glp_load_matrix(P, (int)mip->nnz, own->ia, own->ja, own->ar);
    glp_scale_prob(P, GLP_SF_AUTO);
    return P;
}

static rf_status s_solve_body(const rf__mip_t *mip, const rf__mip_stage_t *stages, int32_t n_stages,
                              const rf__mip_opts_t *opts, rf__mip_result_t *res, s_own_t *own, double deadline,
                              rf_error_t *err)
{
    const int32_t n = mip->n_cols;
    glp_prob *P = s_load(mip, own);
    if (!P)
        return rf_error_set(err, RF_ENOMEM, "", "out of memory building the integer program");
    bool have_x = false;
    if (opts->incumbent && rf__mip_feasible(mip, opts->incumbent)) {
        own->best = malloc((size_t)(n + 1) * sizeof *own->best);
        if (own->best) {
            memcpy(own->best, opts->incumbent, (size_t)n * sizeof *own->best);
            have_x = true;
        }
    }
    res->status = RF_MIP_OPTIMAL;
    for (int32_t k = 0; k < n_stages && k < RF_MIP_MAX_STAGES; k++) {
        const rf__mip_stage_t *st = &stages[k];
        double now = rf_now_ms();
        if (now >= deadline || (opts->stop && __atomic_load_n(opts->stop, __ATOMIC_RELAXED))) {
            res->status = have_x ? RF_MIP_FEASIBLE : RF_MIP_NOSOLUTION;
            break;
        }
        for (int32_t j = 1; j <= n; j++)
            glp_set_obj_coef(P, j, 0.0);
        for (int32_t i = 0; i < st->n; i++)
            glp_set_obj_coef(P, st->cols[i] + 1, glp_get_obj_coef(P, st->cols[i] + 1) + st->vals[i]);
        glp_set_obj_dir(P, st->maximize ? GLP_MAX : GLP_MIN);

        glp_smcp sm;
        glp_init_smcp(&sm);
        sm.msg_lev = GLP_MSG_OFF;
        sm.tm_lim = (int)fmin(INT_MAX, fmax(1, deadline - now));
        int rc = glp_simplex(P, &sm);
        int lp = glp_get_status(P);
        if (rc != 0 || lp != GLP_OPT) {
            if (lp == GLP_NOFEAS && rc == 0) {
                res->status = RF_MIP_INFEASIBLE;
                break;
            }
            res->status = have_x ? RF_MIP_FEASIBLE : RF_MIP_NOSOLUTION; /* time ran out in the LP */
            break;
        }
        double lp_bound = glp_get_obj_val(P);

        glp_iocp io;
        glp_init_iocp(&io);
        io.msg_lev = GLP_MSG_OFF;
        io.presolve = GLP_OFF;
        io.tm_lim = (int)fmin(INT_MAX, fmax(1, deadline - rf_now_ms()));
        io.mip_gap = opts->mip_gap;
        io.tol_obj = 1e-9; /* prune finer than GLPK's 1e-7: one pod must count in large value stages */
        /* an objective in whole grains: prune every branch that cannot gain
         * a grain (GLPK prunes within tol_obj * (1 + |incumbent|), and the
         * incumbent never passes the root LP's bound) */
        double grain = rf__mip_stage_grain(mip, st);
        double inc_val = have_x ? rf__mip_stage_value(st, own->best) : 0;
        double scale = 1 + fmax(fabs(lp_bound), fabs(inc_val));
        if (grain > 0 && (st->maximize || have_x))
            io.tol_obj = fmax(io.tol_obj, fmin(0.5, 0.9 * grain / scale)); /* GLPK wants it below 1 */
        io.gmi_cuts = GLP_ON;
        io.mir_cuts = GLP_ON;
        /* the feasibility pump only looks for a first solution, and it does
         * not watch tm_lim (on the 1,024-node preemption batch it overran a
         * 100 ms limit by 300 ms at the root): off when one is known, and on
         * every stage under a time limit (an incumbent that fails
         * s_feasible, or none, must not let a stage overrun its limit) */
        io.fp_heur = have_x || isfinite(opts->time_limit_ms) ? GLP_OFF : GLP_ON;
        s_cb_t cb = {.mip = mip, .x1 = NULL, .budget = opts->node_budget, .stop = opts->stop, .deadline = deadline};
        for (int32_t j = 0; j < n && !cb.use_prio; j++)
            cb.use_prio = mip->prio[j] > 0;
        if (have_x) {
            own->x1[0] = 0;
            for (int32_t j = 0; j < n; j++)
                own->x1[j + 1] = mip->is_int[j] ? round(own->best[j]) : own->best[j];
            cb.x1 = own->x1;
        }
        io.cb_func = s_callback;
        io.cb_info = &cb;
        rc = glp_intopt(P, &io);
        memset(own->x1, 0, (size_t)(n + 1) * sizeof *own->x1); /* free for use as an accumulator */
        res->nodes += cb.nodes;
        int ms = glp_mip_status(P);
        if (ms == GLP_OPT || ms == GLP_FEAS) {
            if (!own->best)
                own->best = malloc((size_t)(n + 1) * sizeof *own->best);
            if (!own->best) {
                glp_delete_prob(P);
                return rf_error_set(err, RF_ENOMEM, "", "out of memory");
            }
            for (int32_t j = 0; j < n; j++)
                own->best[j] = glp_mip_col_val(P, j + 1);
            have_x = true;
        } else if (ms == GLP_NOFEAS) {
            res->status = RF_MIP_INFEASIBLE;
            break;
        }
        if (!have_x) {
            res->status = RF_MIP_NOSOLUTION;
            break;
        }
        /* the stage's value at the best solution, and its proven bound */
        double val = rf__mip_stage_value(st, own->best);
        bool proven = ms == GLP_OPT && (rc == 0 || rc == GLP_EMIPGAP);
        double bound = proven ? glp_mip_obj_val(P) : cb.have_bound ? cb.bound : lp_bound;
        rf__mip_stage_done(mip, st, opts, k, own->best, proven, !(rc == GLP_EFAIL || ms == GLP_UNDEF), bound, res);
        if (rc == GLP_ETMLIM || rc == GLP_ESTOP)
            break;
        /* keep this stage's value for the next ones */
        if (k + 1 < n_stages) {
            s_keep_stage(P, st, val, own);
        }
    }
    glp_delete_prob(P);
    if (have_x) {
        res->x = own->best;
        own->best = NULL;
    } else if (res->status == RF_MIP_OPTIMAL) {
        res->status = RF_MIP_NOSOLUTION;
    }
    return RF_OK;
}

rf_status rf__mip_solve_glpk(const rf__mip_t *mip, const rf__mip_stage_t *stages, int32_t n_stages,
                             const rf__mip_opts_t *opts, rf__mip_result_t *res, rf_error_t *err)
{
    double deadline = rf_now_ms() + opts->time_limit_ms;
    bool locked = !rf__mip_glpk_thread_safe();
    if (locked)
        pthread_mutex_lock(&s_lock);
    /* volatile: read after a longjmp */
    s_own_t own_storage;
    memset(&own_storage, 0, sizeof own_storage);
    s_own_t *volatile own = &own_storage;
    volatile rf_status rc = RF_OK;
    s_guard_t guard;
    glp_term_hook(s_quiet, NULL);
    glp_error_hook(s_error_hook, &guard);
    if (setjmp(guard.jump) == 0) {
        if (opts->mem_limit_mb > 0)
            glp_mem_limit(opts->mem_limit_mb);
        rc = s_solve_body(mip, stages, n_stages, opts, res, own, deadline, err);
    } else {
        /* GLPK failed inside: its environment is unusable; free it all.
         * The best solution found before (in own->best) survives. */
        rc = rf_error_set(err, RF_ESOLVER, "",
                          "GLPK failed during the solve (out of its memory limit or an "
                          "internal error); the best answer found before is kept");
        if (own->best && !res->x) {
            res->x = own->best;
            own->best = NULL;
            res->status = RF_MIP_FEASIBLE;
        } else {
            res->status = RF_MIP_NOSOLUTION;
        }
    }
    glp_error_hook(NULL, NULL);
    glp_free_env();
    if (locked)
        pthread_mutex_unlock(&s_lock);
    free(own->ia);
    free(own->ja);
    free(own->ar);
    free(own->x1);
    free(own->best);
    free(own->row_ind);
    free(own->row_val);
    free(own->rscale);
    return rc;
}
