/* solver/ilp_bound.c: the penalty bounds (docs/ilp.md, "Bounds").
 *
 * Two of them. The contention bound (rf__ilp_lp_bound, below): the LP
 * relaxation of the whole batch with the values fixed at the answer's, which
 * sees what the gangs take from each other. The per-gang bound
 * (rf__ilp_gang_bounds): each admitted gang's least penalty alone on the cluster, as a one-gang
 * program (rf__ilp_improve with `isolate`), run in parallel while time
 * lasts; a gang whose program does not finish keeps its counting bound
 * (the greedy's gang_lb). The sum is valid for any answer admitting the
 * same gangs: a gang's placement there is feasible for it alone too, and
 * the programs are relaxations of the real placement. Kept running gangs
 * add their constant penalty. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "ilp_bound.h"
#include "ilp_classes.h"
#include "ilp_search.h"
#include "mip.h"
#include "rackfit/quantity.h"
#include "tree.h"

#ifdef RF_HAVE_OPENMP
#include <omp.h>
#endif

/* The tightest penalty bound provable here for the gangs `ans` admits:
 * each gang's own least penalty alone on the cluster (a program per gang, in
 * parallel, while time lasts), or its counting bound (gang_lb) otherwise;
 * summed over the admitted gangs. Valid for any answer admitting the same
 * gangs: there each gang's placement is feasible alone too. */
double rf__ilp_gang_bounds(const rf_problem_t *pb, rf__ilp_clock_t *ck, const rf_answer_t *ans, const double *gang_lb,
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
    rf_mip_backend mip = ck->mip;
    /* one program at a time (CBC): with every thread its own */
    int32_t mip_threads = rf__mip_thread_safe(mip) ? 1 : threads;
#ifdef RF_HAVE_OPENMP
#pragma omp parallel for num_threads(threads)                                                                          \
    schedule(dynamic, 1) if (threads > 1 && rf__mip_thread_safe(mip)) default(none)                                    \
        shared(pb, ans, each, todo, n, deadline, cost, mip, mip_threads)
#endif
    for (int32_t i = 0; i < n; i++) {
        if (deadline - rf_now_ms() < cost + RF__ILP_MIN_SLICE_MS)
            continue;
        int32_t g = todo[i];
        rf__ilp_opts_t io = {.isolate = g,
                             .deadline_ms = deadline - cost,
                             .mip_gap = 1e-9,
                             .aggregate = true,
                             .tight = true,
                             .keep = NULL,
                             .node_allowed = NULL,
                             .mip = mip,
                             .mip_threads = mip_threads};
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
    total += rf_answer_kept_penalty(ans);
done:
    free(each);
    free(todo);
    return total;
}

/* ================================================================ the contention bound
 *
 * The LP relaxation of the whole batch (docs/ilp.md, "The contention
 * bound"), built here from the contract's rules over classes of identical
 * nodes ("units": same deepest non-host domain, same free capacity, same
 * eligibility for every pod set; a node holding bound pods is a unit of its
 * own). Columns, all continuous: y_g in [0,1] admitted; a_g presence (= y_g
 * unless the gang may be admitted with no pod); x_{p,u} new pods; z_{g,d}
 * gang uses domain d of a non-host level; h_{g,u} nodes of u that hold pods
 * of g (host level). Rows: counts, capacity per unit and resource, linking
 * per (pod set, domain) and per (pod set, unit), covering (each level needs
 * at least the domains the gang would need alone on the empty free
 * capacity), the gang's required level, bound pods' domains, and the values
 * per priority fixed at the answer's. Dropped, which only weakens it: slices,
 * pod-set required levels. Every feasible answer with those values gives a
 * point of this LP whose objective is its penalty, so the LP's optimum is a
 * lower bound on it. */

/* Beyond this many x columns the LP is not tried (GLPK's simplex would not
 * finish in a useful time). */
#define S_LP_MAX_X 400000

typedef struct {
    const rf_problem_t *pb;
    rf__ilp_classes_t c; /* the units: classes of identical nodes */
    bool tight;          /* a linking row per (x, domain) too: stronger, larger */
    rf__mip_t mip;
    /* x columns in creation order: unit, column, fit on one node, upper bound */
    int32_t *xu, *xc;
    int64_t *xfit;
    double *xub;
    int64_t nx, capx;
    /* the penalty objective */
    int32_t *ocol;
    double *oval;
    int64_t on, ocap;
    bool integral;          /* every bandwidth x level cost is whole: so is every penalty */
    int32_t *zmap, *hmap;   /* [n_domains], [n_units]: per gang, -1 when none */
    double *tmp;            /* [n_domains + N + 1] scratch capacities */
    int32_t *list;          /* [n_domains + n_units + 1] scratch ids */
    int32_t n_prio;         /* distinct priorities of the gangs */
    int64_t *prio;          /* [n_gangs] */
    int32_t *row_u, *row_p; /* [n_prio] value rows */
} s_lp_t;

static bool s_push_x(s_lp_t *s, int32_t u, int32_t col, int64_t fit, double ub)
{
    if (s->nx == s->capx) {
        int64_t nc = s->capx ? 2 * s->capx : 1024;
        int32_t *a = realloc(s->xu, (size_t)nc * sizeof *a);
        if (a)
            s->xu = a;
        int32_t *b = realloc(s->xc, (size_t)nc * sizeof *b);
        if (b)
            s->xc = b;
        int64_t *c = realloc(s->xfit, (size_t)nc * sizeof *c);
        if (c)
            s->xfit = c;
        double *d = realloc(s->xub, (size_t)nc * sizeof *d);
        if (d)
            s->xub = d;
        if (!a || !b || !c || !d)
            return false;
        s->capx = nc;
    }
    s->xu[s->nx] = u;
    s->xc[s->nx] = col;
    s->xfit[s->nx] = fit;
    s->xub[s->nx++] = ub;
    return true;
}

static void s_obj(s_lp_t *s, int32_t col, double v)
{
    if (s->on == s->ocap) {
        int64_t nc = s->ocap ? 2 * s->ocap : 1024;
        int32_t *a = realloc(s->ocol, (size_t)nc * sizeof *a);
        if (a)
            s->ocol = a;
        double *b = realloc(s->oval, (size_t)nc * sizeof *b);
        if (b)
            s->oval = b;
        if (!a || !b) {
            s->mip.failed = true;
            return;
        }
        s->ocap = nc;
    }
    s->ocol[s->on] = col;
    s->oval[s->on++] = v;
}

/* cy y + ca a in row r, once when a is y (GLPK refuses a repeated entry). */
static void s_coef_ya(rf__mip_t *m, int32_t r, int32_t y, double cy, int32_t a, double ca)
{
    if (a == y) {
        rf__mip_coef(m, r, y, cy + ca);
    } else {
        rf__mip_coef(m, r, y, cy);
        rf__mip_coef(m, r, a, ca);
    }
}

static int s_desc(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x < y) - (x > y);
}

/* The fewest of the capacities cap[0..n) (sorted here) that hold `need`. */
static int32_t s_cover(double *cap, int32_t n, int64_t need)
{
    qsort(cap, (size_t)n, sizeof *cap, s_desc);
    double got = 0;
    int32_t k = 0;
    while (k < n && got < (double)need - 0.5)
        got += cap[k++];
    return k;
}

/* Gang g's y, presence a (returned in *acol), x columns (pod set p's are
 * [pstart[p], pstart[p+1])), count rows, and its terms of the value and
 * capacity rows. Returns y. */
static int32_t s_gang_x(s_lp_t *s, int32_t g, int32_t k, const int32_t *caprow, int64_t *pstart, int32_t *acol)
{
    const rf_gang_t *gg = &s->pb->gangs[g];
    rf__mip_t *m = &s->mip;
    int32_t y = rf__mip_col(m, 0, 1, false), a = y, arow = -1;
    int64_t B = 0, mins = 0;
    for (int32_t p = 0; p < gg->n_pod_sets; p++) {
        B += gg->pod_sets[p].n_bound_pods;
        mins += gg->pod_sets[p].min_count;
    }
    if (B == 0 && mins == 0) { /* may be admitted with no pod: then no penalty */
        a = rf__mip_col(m, 0, 1, false);
        int32_t r = rf__mip_row(m, -RF_MIP_INF, 0);
        rf__mip_coef(m, r, a, 1);
        rf__mip_coef(m, r, y, -1);
        arow = rf__mip_row(m, -RF_MIP_INF, 0); /* a <= its pods */
        rf__mip_coef(m, arow, a, 1);
    }
    const int32_t vr = s->pb->options.value_resource;
    int64_t bu = 0;
    for (int32_t p = 0; p < gg->n_pod_sets; p++) {
        const rf_pod_set_t *ps = &gg->pod_sets[p];
        const int64_t Bp = ps->n_bound_pods, v = vr >= 0 ? ps->requests[vr] : 0;
        const int64_t lo = ps->min_count > Bp ? ps->min_count - Bp : 0, hi = ps->count > Bp ? ps->count - Bp : 0;
        bu += v * Bp; /* bound pods count when the gang is admitted */
        int32_t rlo = rf__mip_row(m, 0, RF_MIP_INF), rhi = rf__mip_row(m, -RF_MIP_INF, 0);
        rf__mip_coef(m, rlo, y, -(double)lo);
        rf__mip_coef(m, rhi, y, -(double)hi);
        pstart[p] = s->nx;
        const uint8_t *ok = s->c.elig.ok[s->c.elig.class_of[s->c.elig.gang_ps0[g] + p]];
        for (int32_t u = 0; u < s->c.n_units && hi > 0 && s->nx <= S_LP_MAX_X; u++) {
            int64_t fit = 0;
            double ub = 0;
            for (int32_t i = 0; i < s->c.u_count[u] && ok[s->c.u_node[u]]; i++) {
                int64_t f = rf__ilp_classes_fit(&s->c, ps, s->c.unodes[s->c.u_first[u] + i], hi);
                fit = f > fit ? f : fit;
                ub += (double)f;
            }
            if (fit <= 0)
                continue;
            ub = fmin((double)hi, ub);
            int32_t x = rf__mip_col(m, 0, ub, false);
            rf__mip_coef(m, rlo, x, 1);
            rf__mip_coef(m, rhi, x, 1);
            if (v)
                rf__mip_coef(m, s->row_u[k], x, (double)v);
            rf__mip_coef(m, s->row_p[k], x, 1);
            if (arow >= 0)
                rf__mip_coef(m, arow, x, -1);
            for (int32_t r = 0; r < s->c.R; r++)
                if (ps->requests[r] > 0 && caprow[(int64_t)u * s->c.R + r] >= 0)
                    rf__mip_coef(m, caprow[(int64_t)u * s->c.R + r], x, (double)ps->requests[r]);
            if (!s_push_x(s, u, x, fit, ub))
                m->failed = true;
        }
    }
    pstart[gg->n_pod_sets] = s->nx;
    rf__mip_coef(m, s->row_u[k], y, (double)bu);
    rf__mip_coef(m, s->row_p[k], y, (double)B);
    *acol = a;
    return y;
}

/* Gang g's z columns at non-host level l, their linking, covering and
 * required-level rows and its penalty terms there. */
static void s_gang_level(s_lp_t *s, int32_t g, int32_t l, int32_t y, int32_t a, const int64_t *pstart)
{
    const rf_gang_t *gg = &s->pb->gangs[g];
    rf__mip_t *m = &s->mip;
    const double w = gg->bandwidth * s->pb->level_costs[l];
    int32_t *list = s->list;
    int32_t nz = 0;
    for (int64_t i = pstart[0]; i < pstart[gg->n_pod_sets]; i++) {
        int32_t d = rf__tree_node_dom(&s->c.tree, s->c.u_node[s->xu[i]], l);
        if (s->zmap[d] < 0) {
            s->zmap[d] = rf__mip_col(m, 0, 1, false);
            list[nz++] = d;
        }
    }
    for (int32_t p = 0; p < gg->n_pod_sets; p++)
        for (int32_t b = 0; b < gg->pod_sets[p].n_bound; b++) {
            int32_t d = rf__tree_node_dom(&s->c.tree, gg->pod_sets[p].bound[b].node, l);
            if (s->zmap[d] < 0) {
                s->zmap[d] = rf__mip_col(m, 0, 1, false);
                list[nz++] = d;
            }
            int32_t r = rf__mip_row(m, 0, RF_MIP_INF); /* its bound pods are there when admitted */
            rf__mip_coef(m, r, s->zmap[d], 1);
            rf__mip_coef(m, r, y, -1);
        }
    int32_t cov = rf__mip_row(m, 0, RF_MIP_INF); /* sum z >= a */
    rf__mip_coef(m, cov, a, -1);
    int32_t req = gg->topology.required == l ? rf__mip_row(m, -RF_MIP_INF, 0) : -1;
    if (req >= 0)
        rf__mip_coef(m, req, y, -1);
    s_obj(s, a, -w);
    for (int32_t i = 0; i < nz; i++) {
        int32_t z = s->zmap[list[i]]; /* (z <= a is left out: minimising, z never wants more) */
        rf__mip_coef(m, cov, z, 1);
        if (req >= 0)
            rf__mip_coef(m, req, z, 1);
        s_obj(s, z, w);
    }
    int32_t kmax = 0;
    for (int32_t p = 0; p < gg->n_pod_sets; p++) {
        const rf_pod_set_t *ps = &gg->pod_sets[p];
        const int64_t lo = ps->min_count > ps->n_bound_pods ? ps->min_count - ps->n_bound_pods : 0;
        const int64_t hi = ps->count > ps->n_bound_pods ? ps->count - ps->n_bound_pods : 0;
        int32_t nd = 0;
        for (int64_t i = pstart[p]; i < pstart[p + 1];) {
            int32_t d = rf__tree_node_dom(&s->c.tree, s->c.u_node[s->xu[i]], l);
            int64_t j = i;
            double sum = 0;
            while (j < pstart[p + 1] && rf__tree_node_dom(&s->c.tree, s->c.u_node[s->xu[j]], l) == d)
                sum += s->xub[j++];
            double M = fmin((double)hi, sum);
            int32_t r = rf__mip_row(m, -RF_MIP_INF, 0); /* pods of p in d <= M z */
            for (int64_t t = i; t < j; t++) {
                rf__mip_coef(m, r, s->xc[t], 1);
                if (s->tight && j - i > 1) { /* and each unit's alone */
                    int32_t r1 = rf__mip_row(m, -RF_MIP_INF, 0);
                    rf__mip_coef(m, r1, s->xc[t], 1);
                    rf__mip_coef(m, r1, s->zmap[d], -s->xub[t]);
                }
            }
            rf__mip_coef(m, r, s->zmap[d], -M);
            s->tmp[nd++] = M;
            i = j;
        }
        int32_t k = lo > 0 ? s_cover(s->tmp, nd, lo) : 0;
        kmax = k > kmax ? k : kmax;
    }
    if (kmax > 1) { /* at least the domains it would need alone */
        int32_t r = rf__mip_row(m, 0, RF_MIP_INF);
        for (int32_t i = 0; i < nz; i++)
            rf__mip_coef(m, r, s->zmap[list[i]], 1);
        rf__mip_coef(m, r, y, -(double)kmax);
    }
    for (int32_t i = 0; i < nz; i++)
        s->zmap[list[i]] = -1;
}

/* s_gang_level for a gang of one pod set, without z columns: at level l it
 * uses D >= (its bound pods' domains) + sum over the other domains d of
 * x_d / M_d domains (each used domain holds at most M_d of its pods), and
 * D >= k when admitted (k: the domains it needs alone); its penalty there is
 * w t with t >= D - a, t >= 0. Equivalent to the z form for one pod set, with
 * a row per gang instead of one per (gang, domain). */
static void s_gang_level1(s_lp_t *s, int32_t g, int32_t l, int32_t y, int32_t a, const int64_t *pstart)
{
    const rf_gang_t *gg = &s->pb->gangs[g];
    const rf_pod_set_t *ps = &gg->pod_sets[0];
    rf__mip_t *m = &s->mip;
    const double w = gg->bandwidth * s->pb->level_costs[l];
    const int64_t lo = ps->min_count > ps->n_bound_pods ? ps->min_count - ps->n_bound_pods : 0;
    const int64_t hi = ps->count > ps->n_bound_pods ? ps->count - ps->n_bound_pods : 0;
    int32_t nbd = 0;
    for (int32_t b = 0; b < ps->n_bound; b++) {
        int32_t d = rf__tree_node_dom(&s->c.tree, ps->bound[b].node, l);
        if (s->zmap[d] == -1) {
            s->zmap[d] = -2;
            s->list[nbd++] = d;
        }
    }
    int32_t t = rf__mip_col(m, 0, RF_MIP_INF, false);
    s_obj(s, t, w);
    int32_t r = rf__mip_row(m, 0, RF_MIP_INF); /* t - sum x/M - nbd y + a >= 0 */
    rf__mip_coef(m, r, t, 1);
    s_coef_ya(m, r, y, -(double)nbd, a, 1);
    int32_t req = gg->topology.required == l ? rf__mip_row(m, -RF_MIP_INF, 0) : -1;
    if (req >= 0) /* sum x/M + nbd y <= y */
        rf__mip_coef(m, req, y, (double)nbd - 1);
    int32_t nd = 0;
    for (int64_t i = pstart[0]; i < pstart[1];) {
        int32_t d = rf__tree_node_dom(&s->c.tree, s->c.u_node[s->xu[i]], l);
        int64_t j = i;
        double sum = 0;
        while (j < pstart[1] && rf__tree_node_dom(&s->c.tree, s->c.u_node[s->xu[j]], l) == d)
            sum += s->xub[j++];
        double M = fmin((double)hi, sum);
        for (int64_t q = i; q < j && s->zmap[d] == -1 && M > 0; q++) {
            rf__mip_coef(m, r, s->xc[q], -1.0 / M);
            if (req >= 0)
                rf__mip_coef(m, req, s->xc[q], 1.0 / M);
        }
        s->tmp[nd++] = M;
        i = j;
    }
    int32_t k = lo > 0 ? s_cover(s->tmp, nd, lo) : 0;
    if (k > 1) { /* t >= (k - 1) y: a = y here, as the gang has pods */
        int32_t rk = rf__mip_row(m, 0, RF_MIP_INF);
        rf__mip_coef(m, rk, t, 1);
        rf__mip_coef(m, rk, y, -(double)(k - 1));
    }
    for (int32_t i = 0; i < nbd; i++)
        s->zmap[s->list[i]] = -1;
}

/* Gang g's h columns (host level), linking, covering and required-level
 * rows and its penalty terms there. Nodes holding its bound pods are
 * counted as constants (nbh y) and need no h. */
static void s_gang_hosts(s_lp_t *s, int32_t g, int32_t y, int32_t a, const int64_t *pstart)
{
    const rf_gang_t *gg = &s->pb->gangs[g];
    rf__mip_t *m = &s->mip;
    const int32_t l = s->c.L - 1;
    const double w = gg->bandwidth * s->pb->level_costs[l];
    int32_t nh = 0, nbh = 0;
    for (int32_t p = 0; p < gg->n_pod_sets; p++)
        for (int32_t b = 0; b < gg->pod_sets[p].n_bound; b++) {
            int32_t u = s->c.node_unit[gg->pod_sets[p].bound[b].node];
            if (s->hmap[u] == -1) {
                s->hmap[u] = -2;
                s->list[nh++] = u;
                nbh++;
            }
        }
    int32_t cov = rf__mip_row(m, 0, RF_MIP_INF); /* sum h + nbh y >= a */
    s_coef_ya(m, cov, y, (double)nbh, a, -1);
    s_obj(s, y, w * nbh);
    s_obj(s, a, -w);
    int32_t req = gg->topology.required == l ? rf__mip_row(m, -RF_MIP_INF, 0) : -1;
    if (req >= 0)
        rf__mip_coef(m, req, y, (double)nbh - 1);
    const bool one = gg->n_pod_sets == 1; /* then h = x / fit at the optimum: no h columns */
    for (int64_t i = pstart[0]; i < pstart[gg->n_pod_sets]; i++) {
        int32_t u = s->xu[i];
        if (one && s->hmap[u] == -1) {
            double f = 1.0 / (double)s->xfit[i]; /* x / fit nodes at least */
            rf__mip_coef(m, cov, s->xc[i], f);
            if (req >= 0)
                rf__mip_coef(m, req, s->xc[i], f);
            s_obj(s, s->xc[i], w * f);
            continue;
        }
        if (s->hmap[u] == -1) {
            int32_t h = rf__mip_col(m, 0, s->c.u_count[u], false);
            s->hmap[u] = h;
            s->list[nh++] = u;
            int32_t r = rf__mip_row(m, -RF_MIP_INF, 0); /* h <= c_u a */
            rf__mip_coef(m, r, h, 1);
            rf__mip_coef(m, r, a, -(double)s->c.u_count[u]);
            rf__mip_coef(m, cov, h, 1);
            if (req >= 0)
                rf__mip_coef(m, req, h, 1);
            s_obj(s, h, w);
        }
        if (s->hmap[u] >= 0) { /* x <= fit h */
            int32_t r = rf__mip_row(m, -RF_MIP_INF, 0);
            rf__mip_coef(m, r, s->xc[i], 1);
            rf__mip_coef(m, r, s->hmap[u], -(double)s->xfit[i]);
        }
    }
    int32_t kmax = 0;
    for (int32_t p = 0; p < gg->n_pod_sets; p++) {
        const rf_pod_set_t *ps = &gg->pod_sets[p];
        const int64_t lo = ps->min_count > ps->n_bound_pods ? ps->min_count - ps->n_bound_pods : 0;
        int32_t nd = 0;
        for (int64_t i = pstart[p]; i < pstart[p + 1] && lo > 0; i++)
            for (int32_t c = 0; c < s->c.u_count[s->xu[i]]; c++)
                s->tmp[nd++] =
                    (double)rf__ilp_classes_fit(&s->c, ps, s->c.unodes[s->c.u_first[s->xu[i]] + c], s->xfit[i]);
        int32_t k = lo > 0 ? s_cover(s->tmp, nd, lo) : 0;
        kmax = k > kmax ? k : kmax;
    }
    if (!one && kmax > 1) { /* at least the hosts it would need alone (h columns only) */
        int32_t r = rf__mip_row(m, 0, RF_MIP_INF);
        for (int32_t i = 0; i < nh; i++)
            if (s->hmap[s->list[i]] >= 0)
                rf__mip_coef(m, r, s->hmap[s->list[i]], 1);
        rf__mip_coef(m, r, y, (double)nbh - (double)kmax);
    }
    for (int32_t i = 0; i < nh; i++)
        s->hmap[s->list[i]] = -1;
}

/* Does gang g have bound pods on a node outside the tree? (Its domains are
 * then not all known: it gets no penalty terms, which only weakens the bound.) */
static bool s_bound_outside(const s_lp_t *s, int32_t g)
{
    const rf_gang_t *gg = &s->pb->gangs[g];
    for (int32_t p = 0; p < gg->n_pod_sets; p++)
        for (int32_t b = 0; b < gg->pod_sets[p].n_bound; b++)
            if (s->c.node_unit[gg->pod_sets[p].bound[b].node] < 0)
                return true;
    return false;
}

static void s_lp_fini(s_lp_t *s)
{
    rf__ilp_classes_fini(&s->c);
    rf__mip_fini(&s->mip);
    free(s->xu);
    free(s->xc);
    free(s->xfit);
    free(s->xub);
    free(s->ocol);
    free(s->oval);
    free(s->zmap);
    free(s->hmap);
    free(s->tmp);
    free(s->list);
    free(s->prio);
    free(s->row_u);
    free(s->row_p);
}

/* The units and scratch. */
static bool s_lp_setup(s_lp_t *s, const rf_problem_t *pb, bool coarse)
{
    s->pb = pb;
    if (!rf__ilp_classes_build(&s->c, pb, coarse))
        return false;
    const size_t N1 = (size_t)s->c.N + 1, G1 = (size_t)pb->n_gangs + 1;
    s->prio = malloc(G1 * sizeof *s->prio);
    s->row_u = malloc(G1 * sizeof *s->row_u);
    s->row_p = malloc(G1 * sizeof *s->row_p);
    const size_t D1 = (size_t)s->c.tree.n_domains + 1;
    s->zmap = malloc(D1 * sizeof *s->zmap);
    s->hmap = malloc(((size_t)s->c.n_units + 1) * sizeof *s->hmap);
    s->tmp = malloc((D1 + N1) * sizeof *s->tmp);
    s->list = malloc((D1 + (size_t)s->c.n_units) * sizeof *s->list);
    if (!s->prio || !s->row_u || !s->row_p || !s->zmap || !s->hmap || !s->tmp || !s->list)
        return false;
    for (size_t d = 0; d < D1; d++)
        s->zmap[d] = -1;
    for (int32_t u = 0; u <= s->c.n_units; u++)
        s->hmap[u] = -1;
    return true;
}

/* The value rows (per priority of the gangs: units and pods fixed at ans's)
 * and the capacity rows (per unit and limited resource): their row ids. */
static bool s_lp_rows(s_lp_t *s, const rf_answer_t *ans, int32_t **caprow)
{
    const rf_problem_t *pb = s->pb;
    const int32_t vr = pb->options.value_resource;
    int64_t *vu = calloc((size_t)pb->n_gangs + 1, sizeof *vu), *vp = calloc((size_t)pb->n_gangs + 1, sizeof *vp);
    *caprow = malloc(((size_t)s->c.n_units * (size_t)s->c.R + 1) * sizeof **caprow);
    bool ok = vu && vp && *caprow;
    for (int32_t g = 0; ok && g < pb->n_gangs; g++) {
        int32_t k = 0;
        while (k < s->n_prio && s->prio[k] != pb->gangs[g].priority)
            k++;
        if (k == s->n_prio)
            s->prio[s->n_prio++] = pb->gangs[g].priority;
        if (!ans->gangs[g].admitted)
            continue;
        for (int32_t p = 0; p < pb->gangs[g].n_pod_sets; p++) {
            const rf_pod_set_answer_t *pa = &ans->gangs[g].pod_sets[p];
            int64_t pods = pb->gangs[g].pod_sets[p].n_bound_pods;
            for (int32_t i = 0; i < pa->n_placements; i++)
                pods += pa->placements[i].count;
            vp[k] += pods;
            vu[k] += vr >= 0 ? pods * pb->gangs[g].pod_sets[p].requests[vr] : 0;
        }
    }
    for (int32_t k = 0; ok && k < s->n_prio; k++) {
        s->row_u[k] = rf__mip_row(&s->mip, (double)vu[k], (double)vu[k]);
        s->row_p[k] = rf__mip_row(&s->mip, (double)vp[k], (double)vp[k]);
    }
    for (int32_t u = 0; ok && u < s->c.n_units; u++)
        for (int32_t r = 0; r < s->c.R; r++) {
            double f = 0;
            for (int32_t i = 0; i < s->c.u_count[u] && f >= 0; i++) {
                int64_t fn = s->c.free[(int64_t)s->c.unodes[s->c.u_first[u] + i] * s->c.R + r];
                f = fn == RF_QTY_UNLIMITED ? -1 : f + (double)fn;
            }
            (*caprow)[(int64_t)u * s->c.R + r] = f < 0 ? -1 : rf__mip_row(&s->mip, -RF_MIP_INF, f);
        }
    free(vu);
    free(vp);
    return ok && !s->mip.failed;
}

/* The whole LP: rows, then gang by gang. False when out of memory, too
 * large, or past the deadline. */
static bool s_lp_build(s_lp_t *s, const rf_answer_t *ans, double deadline_ms)
{
    const rf_problem_t *pb = s->pb;
    int32_t *caprow = NULL;
    int32_t P = 1;
    for (int32_t g = 0; g < pb->n_gangs; g++)
        P = pb->gangs[g].n_pod_sets > P ? pb->gangs[g].n_pod_sets : P;
    int64_t *pstart = malloc(((size_t)P + 1) * sizeof *pstart);
    bool ok = pstart && s_lp_rows(s, ans, &caprow);
    s->integral = true;
    for (int32_t g = 0; ok && g < pb->n_gangs; g++) {
        int32_t k = 0, a;
        while (s->prio[k] != pb->gangs[g].priority)
            k++;
        int32_t y = s_gang_x(s, g, k, caprow, pstart, &a);
        if (!s_bound_outside(s, g)) {
            for (int32_t l = 0; l < s->c.zl; l++)
                if (pb->gangs[g].n_pod_sets == 1)
                    s_gang_level1(s, g, l, y, a, pstart);
                else
                    s_gang_level(s, g, l, y, a, pstart);
            if (s->c.host)
                s_gang_hosts(s, g, y, a, pstart);
            for (int32_t l = 0; l < s->c.L; l++) {
                double w = pb->gangs[g].bandwidth * pb->level_costs[l];
                s->integral &= fabs(w - round(w)) < 1e-9;
            }
        }
        ok = !s->mip.failed && s->nx <= S_LP_MAX_X && ((g & 15) != 15 || rf_now_ms() < deadline_ms);
    }
    free(pstart);
    free(caprow);
    return ok;
}

/* What GLPK's simplex is expected to take on an LP of this shape with
 * `cols` columns, in ms, with room for a loaded machine: measured 0.3 s at
 * 14,000 columns and 1.3-1.8 s at 35,000-44,000 (gpu-1024, lingjun-847, on
 * one core of a 2-core EPYC; 2-4x that with the machine loaded). */
static double s_lp_ms(int64_t cols)
{
    double k = (double)cols / 1000.0;
    return 2.0 + 5.0 * k * sqrt(k);
}

double rf__ilp_lp_bound(const rf_problem_t *pb, const rf_answer_t *ans, bool coarse, double deadline_ms,
                        rf__ilp_lp_stats_t *st)
{
    rf__ilp_lp_stats_t own;
    st = st ? st : &own;
    memset(st, 0, sizeof *st);
    if (pb->n_gangs == 0 || pb->n_levels == 0 || rf__ilp_preempts(ans))
        return -1;
    double t0 = rf_now_ms(), bound = -1;
    s_lp_t s;
    memset(&s, 0, sizeof s);
    rf__mip_init(&s.mip);
    if (!s_lp_setup(&s, pb, coarse))
        goto done;
    int64_t est = 0; /* x columns at most, about the LP's columns */
    for (int32_t g = 0; g < pb->n_gangs; g++)
        est += (int64_t)pb->gangs[g].n_pod_sets * s.c.n_units;
    /* three times the expected time must fit: the machine may be loaded, and
     * GLPK looks at the clock seldom (a simplex given 380 ms took 900 ms on
     * gpu-1024 at load 4) */
    if (rf_now_ms() + 3 * s_lp_ms(est) > deadline_ms || !s_lp_build(&s, ans, deadline_ms))
        goto done;
    st->n_units = s.c.n_units;
    st->n_cols = s.mip.n_cols;
    st->n_rows = s.mip.n_rows;
    st->build_ms = rf_now_ms() - t0;
    if (deadline_ms - rf_now_ms() < fmax(RF__ILP_MIN_SLICE_MS, 3 * s_lp_ms(s.mip.n_cols)))
        goto done;
    rf__mip_stage_t stage = {.maximize = false, .n = (int32_t)s.on, .cols = s.ocol, .vals = s.oval, .keep_tol = 0};
    /* at most 3x the expected time: slower than that, the machine is loaded
     * and the rest of the time serves the other bounds better */
    /* an LP: GLPK's simplex whatever the solve's MIP backend */
    rf__mip_opts_t mo = {.time_limit_ms = fmin(deadline_ms - rf_now_ms(), 3 * s_lp_ms(s.mip.n_cols) + 50),
                         .mip_gap = 0};
    rf__mip_result_t res;
    memset(&res, 0, sizeof res);
    rf_error_t e;
    double t1 = rf_now_ms();
    rf_status rc = rf__mip_solve(&s.mip, &stage, 1, &mo, &res, &e);
    st->solve_ms = rf_now_ms() - t1;
    if (rc == RF_OK && res.status == RF_MIP_OPTIMAL && res.n_stages_done == 1 && res.proven[0]) {
        st->solved = true;
        st->lp = res.bound[0];
        /* GLPK's optimum to its tolerances; a whole penalty rounds up */
        double lb = res.bound[0] - 1e-6 * fmax(1, fabs(res.bound[0]));
        if (s.integral)
            lb = ceil(lb);
        bound = fmax(0, lb) + rf_answer_kept_penalty(ans);
    }
    rf__mip_result_fini(&res);
done:
    s_lp_fini(&s);
    return bound;
}

/* ---------------------------------------------------------------- in the strategy */

/* Are the values of a and the memo's the same? */
static bool s_same_values(const rf__ilp_lp_memo_t *memo, const rf_answer_t *a)
{
    if (a->summary.n_value != memo->n_value)
        return false;
    for (int32_t k = 0; k < memo->n_value; k++)
        if (a->summary.value[k].priority != memo->value[k].priority ||
            a->summary.value[k].units != memo->value[k].units || a->summary.value[k].pods != memo->value[k].pods)
            return false;
    return true;
}

void rf__ilp_lp_early(const rf_problem_t *pb, const rf_answer_t *ans, const rf__ilp_clock_t *ck,
                      rf__ilp_lp_memo_t *memo)
{
    memset(memo, 0, sizeof *memo);
    memo->bound = -1;
    double left = rf__ilp_left(ck);
    /* building it (tree, eligibility, units) costs about a greedy pass */
    if (ans->summary.n_value > RF__ILP_LP_MAX_VALUES ||
        RF__ILP_LP_SHARE * left < ck->greedy_ms + 4 * RF__ILP_MIN_SLICE_MS)
        return;
    memo->n_value = ans->summary.n_value;
    memcpy(memo->value, ans->summary.value, (size_t)memo->n_value * sizeof *memo->value);
    memo->coarse = pb->n_nodes > RF__ILP_LP_FINE_NODES;
    rf__ilp_lp_stats_t st;
    memo->bound = rf__ilp_lp_bound(pb, ans, memo->coarse, rf_now_ms() + RF__ILP_LP_SHARE * left, &st);
    memo->failed = st.solve_ms > 0 && !st.solved; /* the simplex ran out of time */
}

double rf__ilp_lp_late(const rf__ilp_lp_memo_t *memo, const rf_problem_t *pb, const rf_answer_t *ans,
                       const rf__ilp_clock_t *ck)
{
    if (ans->summary.preempted > 0)
        return -1; /* the bound holds for answers that preempt nothing */
    double b = s_same_values(memo, ans) ? memo->bound : -1;
    /* a first LP for new values with 80 % of the time left (it is usually
     * far above the per-gang bounds, which get the rest), or the finer LP
     * after a coarse one with half */
    bool again = (b < 0 || memo->coarse) && !memo->failed; /* it would fail again, with less time */
    double share = b < 0 ? 0.8 : 0.5;
    if (again && ans->summary.penalty > b + 1e-6 && share * rf__ilp_left(ck) > ck->greedy_ms + 4 * RF__ILP_MIN_SLICE_MS)
        b = fmax(
            b, rf__ilp_lp_bound(pb, ans, b >= 0 ? false : memo->coarse, rf_now_ms() + share * rf__ilp_left(ck), NULL));
    return b;
}

bool rf__ilp_models_all(const rf_problem_t *pb)
{
    for (int32_t g = 0; g < pb->n_gangs; g++)
        for (int32_t p = 0; p < pb->gangs[g].n_pod_sets; p++) {
            const rf_pod_set_t *ps = &pb->gangs[g].pod_sets[p];
            if (ps->slice.size > 1 && ps->n_bound > 0)
                return false;
            for (int32_t b = 0; b < ps->n_bound; b++)
                for (int32_t l = 0; l < pb->n_levels; l++)
                    if (!rf_node_label(&pb->nodes[ps->bound[b].node], pb->levels[l]))
                        return false;
        }
    return true;
}
