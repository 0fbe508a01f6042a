/* solver/ilp_lagrange.c: the Lagrangian penalty bound (issue 10; docs/ilp.md,
 * "The Lagrangian bound").
 *
 * A lower bound on the penalty of every feasible answer whose value at every
 * priority (units and pods of the free gangs) is the answer's and which
 * preempts nothing, as the contention LP (solver/ilp_bound.c), but from the
 * other side: the capacity rows (per class of identical nodes and resource)
 * and the value rows (per priority) are moved into the objective with
 * multipliers, and what is left falls apart gang by gang. Each gang's part
 * is then solved exactly, over whole nodes and whole domains, by a dynamic
 * program over the topology tree: the least of (its penalty + the priced
 * resources its pods take - the priced value they bring) over every
 * placement of it, or 0 when rejecting it is cheaper. With multipliers
 * lambda >= 0 (capacity) and mu (values),
 *
 *   L(lambda, mu) = sum_g min(0, S_g(lambda, mu)) - lambda . cap + mu . value
 *
 * is below the penalty of every such answer (weak duality: the answer's
 * placement of each gang is one of the placements S_g minimises over, its
 * capacity terms are <= 0 and its value terms cancel). Unlike the LP, a gang
 * cannot spread over racks fractionally at no cost: each of its candidate
 * placements pays for every node and domain it opens. The multipliers are
 * improved by projected subgradient steps (Polyak's rule towards the
 * answer's penalty) while time lasts; every step's L is a bound, and the
 * best is kept.
 *
 * Exact where it is cheap, a relaxation elsewhere (which keeps the bound
 * valid, only weaker): slices are left out; a gang of several pod sets is
 * bounded by its largest pod set's placement with the gang's penalty plus
 * the others' cheapest pods anywhere (its penalty is at least that of any of
 * its pod sets alone); a gang with bound pods on a node outside the tree
 * gets no penalty. Gangs with required levels (the gang's, or its one pod
 * set's) keep them: at and above that level the program picks one domain. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "ilp_bound.h"
#include "ilp_classes.h"
#include "rackfit/quantity.h"

#ifdef RF_HAVE_OPENMP
#include <omp.h>
#endif

#define S_INF 1e300
/* The subgradient steps: Polyak's rule theta (target - L) / |g|^2, theta from
 * S_THETA0 halved after `patience` steps without a better L, until it is
 * below S_THETA_MIN. The patience is S_PATIENCE, or a 1/S_PATIENCE_SHARE of
 * the steps the time left allows when that is more (up to S_PATIENCE_MAX):
 * a slower halving climbs further when there is time for it (lingjun-847 in
 * 3 s: 1,287 with 20, 1,336 with 80; bench/RESULTS.md). */
#define S_THETA0         2.0
#define S_PATIENCE       20
#define S_PATIENCE_SHARE 30
#define S_PATIENCE_MAX   100
#define S_THETA_MIN      1e-6
/* Polyak's target: halfway between the best L and the answer's penalty (the
 * penalty itself, far above the optimum of L on contended batches, made the
 * first hundred steps overshoot: gpu-1024 at 130 ms 1,035 against 1,113). */
#define S_TARGET 0.5
/* The most the dynamic programs' tables (domains and steps x pods, per thread) may
 * take; a batch above it gets no Lagrangian bound. */
#define S_MAX_TABLE_BYTES (256.0 * 1024 * 1024)

/* A class a pod set may use: class, pods on one of its nodes, pods in all. */
typedef struct {
    int32_t u;
    int32_t fit;
    int64_t max;
} s_ent_t;

/* One gang's least placement at the current multipliers. */
typedef struct {
    double S;  /* its least cost when admitted (may be >= 0: then rejected) */
    int32_t n; /* (class, pod set, pods) triples of that placement */
    int32_t *u, *p;
    int64_t *k;
    double units, pods; /* its value and pods, bound pods included */
    double mag;         /* the magnitude of the terms summed into S (for rounding) */
} s_sol_t;

typedef struct {
    rf__ilp_classes_t c;
    const rf_problem_t *pb;
    int32_t G, K;
    int32_t *gk;   /* [G] priority index */
    double *U, *P; /* [K] the answer's units and pods per priority (free gangs) */
    double sv;     /* value scale: the largest value request */
    /* capacity rows */
    int32_t n_rows;
    int32_t *row_of; /* [n_units * R] row, or -1 */
    int32_t *row_u, *row_r;
    double *cap;     /* [n_rows] scaled */
    double *rscale;  /* [R] 1 / the largest request of r */
    double *lam;     /* [n_rows] */
    double *mu, *nu; /* [K] units, pods */
    /* eligible classes per pod set (pod sets numbered gang by gang) */
    int64_t *ps0; /* [G + 1] */
    int64_t *e0;  /* [n_ps + 1] */
    s_ent_t *ent;
    /* the classes of each leaf domain (level zl - 1): [ufirst[d], ulast[d]) */
    int32_t *ufirst, *ulast;
    int32_t kmax; /* the most new pods of any pod set */
    s_sol_t *sol; /* [G] */
    bool integral;
    double deadline; /* rf_now_ms(): a pass not done by then is abandoned */
    int late;        /* set (OpenMP atomic) when a pass is abandoned */
} s_lg_t;

/* One step of a domain's program: the item combined in (a class or a child
 * domain) and where its choices start (pods given to it, per total). */
typedef struct {
    int32_t item;
    bool dom;
    int32_t off;
} s_step_t;

/* One thread's scratch for the dynamic program. */
typedef struct {
    double *F;         /* [n_domains * (kmax + 1)] each domain's least cost of k pods */
    int32_t *fhi;      /* [n_domains] the most pods a domain can take (finite entries) */
    double *A, *T, *C; /* [kmax + 1] */
    int32_t *st0;      /* [n_domains + 1] the steps of each domain, and the root's */
    int32_t *st1;
    s_step_t *st; /* the convolution steps, in order */
    int32_t n_st, cap_st;
    int32_t *ch; /* choices: pods given to the step's item, per total */
    int32_t n_ch, cap_ch;
    uint8_t *mark; /* [n_domains + n_units]: holds bound pods of the gang */
    bool failed;
} s_work_t;

/* ---------------------------------------------------------------- setup */

static bool s_values(s_lg_t *s, const rf_answer_t *ans)
{
    const rf_problem_t *pb = s->pb;
    const int32_t vr = pb->options.value_resource;
    int64_t *prio = malloc(((size_t)s->G + 1) * sizeof *prio);
    s->gk = malloc(((size_t)s->G + 1) * sizeof *s->gk);
    s->U = calloc((size_t)s->G + 1, sizeof *s->U);
    s->P = calloc((size_t)s->G + 1, sizeof *s->P);
    s->mu = calloc((size_t)s->G + 1, sizeof *s->mu);
    s->nu = calloc((size_t)s->G + 1, sizeof *s->nu);
    if (!prio || !s->gk || !s->U || !s->P || !s->mu || !s->nu) {
        free(prio);
        return false;
    }
    s->K = 0;
    s->sv = 1;
    for (int32_t g = 0; g < s->G; g++) {
        const rf_gang_t *gg = &pb->gangs[g];
        int32_t k = 0;
        while (k < s->K && prio[k] != gg->priority)
            k++;
        if (k == s->K)
            prio[s->K++] = gg->priority;
        s->gk[g] = k;
        for (int32_t p = 0; p < gg->n_pod_sets; p++) {
            double v = vr >= 0 ? (double)gg->pod_sets[p].requests[vr] : 0;
            s->sv = fmax(s->sv, v);
            if (!ans->gangs[g].admitted)
                continue;
            const rf_pod_set_answer_t *pa = &ans->gangs[g].pod_sets[p];
            int64_t pods = gg->pod_sets[p].n_bound_pods;
            for (int32_t i = 0; i < pa->n_placements; i++)
                pods += pa->placements[i].count;
            s->P[k] += (double)pods;
            s->U[k] += (double)pods * v;
        }
    }
    free(prio);
    return true;
}

/* The classes each pod set may use, and the capacity rows that can bind. */
static bool s_entries(s_lg_t *s)
{
    const rf_problem_t *pb = s->pb;
    const int32_t R = s->c.R, NU = s->c.n_units;
    int64_t nps = 0;
    s->ps0 = malloc(((size_t)s->G + 1) * sizeof *s->ps0);
    if (!s->ps0)
        return false;
    for (int32_t g = 0; g < s->G; g++) {
        s->ps0[g] = nps;
        nps += pb->gangs[g].n_pod_sets;
    }
    s->ps0[s->G] = nps;
    s->e0 = malloc(((size_t)nps + 1) * sizeof *s->e0);
    s->ent = malloc(((size_t)nps * (size_t)NU + 1) * sizeof *s->ent);
    double *most = calloc((size_t)NU * (size_t)R + 1, sizeof *most); /* the most pods could ask of a row */
    s->rscale = calloc((size_t)R + 1, sizeof *s->rscale);
    if (!s->e0 || !s->ent || !most || !s->rscale) {
        free(most);
        return false;
    }
    int64_t ne = 0;
    s->kmax = 1;
    for (int32_t g = 0; g < s->G; g++) {
        const rf_gang_t *gg = &pb->gangs[g];
        for (int32_t p = 0; p < gg->n_pod_sets; p++) {
            const rf_pod_set_t *ps = &gg->pod_sets[p];
            const int64_t hi = ps->count > ps->n_bound_pods ? ps->count - ps->n_bound_pods : 0;
            s->e0[s->ps0[g] + p] = ne;
            s->kmax = hi > s->kmax ? (int32_t)hi : s->kmax;
            for (int32_t r = 0; r < R; r++)
                s->rscale[r] = fmax(s->rscale[r], (double)ps->requests[r]);
            const uint8_t *ok = s->c.elig.ok[s->c.elig.class_of[s->c.elig.gang_ps0[g] + p]];
            for (int32_t u = 0; u < NU && hi > 0; u++) {
                if (!ok[s->c.u_node[u]])
                    continue;
                int64_t f = rf__ilp_classes_fit(&s->c, ps, s->c.u_node[u], hi);
                if (f <= 0)
                    continue;
                int64_t mx = f * s->c.u_count[u] < hi ? f * s->c.u_count[u] : hi;
                s->ent[ne++] = (s_ent_t){.u = u, .fit = (int32_t)f, .max = mx};
                for (int32_t r = 0; r < R; r++)
                    most[(int64_t)u * R + r] += (double)mx * (double)ps->requests[r];
            }
        }
    }
    s->e0[nps] = ne;
    s->row_of = malloc(((size_t)NU * (size_t)R + 1) * sizeof *s->row_of);
    s->row_u = malloc(((size_t)NU * (size_t)R + 1) * sizeof *s->row_u);
    s->row_r = malloc(((size_t)NU * (size_t)R + 1) * sizeof *s->row_r);
    s->cap = malloc(((size_t)NU * (size_t)R + 1) * sizeof *s->cap);
    s->lam = calloc((size_t)NU * (size_t)R + 1, sizeof *s->lam);
    if (!s->row_of || !s->row_u || !s->row_r || !s->cap || !s->lam) {
        free(most);
        return false;
    }
    for (int32_t r = 0; r < R; r++)
        s->rscale[r] = s->rscale[r] > 0 ? 1.0 / s->rscale[r] : 0;
    s->n_rows = 0;
    for (int32_t u = 0; u < NU; u++)
        for (int32_t r = 0; r < R; r++) {
            int64_t fr = s->c.free[(int64_t)s->c.u_node[u] * R + r];
            double capv = (double)fr * s->c.u_count[u];
            int32_t i = -1;
            if (fr != RF_QTY_UNLIMITED && most[(int64_t)u * R + r] > capv) { /* it can bind */
                i = s->n_rows++;
                s->row_u[i] = u;
                s->row_r[i] = r;
                s->cap[i] = capv * s->rscale[r];
            }
            s->row_of[(int64_t)u * R + r] = i;
        }
    free(most);
    return true;
}

/* The classes of each leaf domain; the per-gang solutions' room. */
static bool s_layout(s_lg_t *s)
{
    const int32_t D = s->c.tree.n_domains;
    s->ufirst = malloc(((size_t)D + 1) * sizeof *s->ufirst);
    s->ulast = malloc(((size_t)D + 1) * sizeof *s->ulast);
    s->sol = calloc((size_t)s->G + 1, sizeof *s->sol);
    if (!s->ufirst || !s->ulast || !s->sol)
        return false;
    for (int32_t d = 0; d < D; d++)
        s->ufirst[d] = s->ulast[d] = 0;
    if (s->c.zl > 0)
        for (int32_t u = s->c.n_units - 1; u >= 0; u--) {
            int32_t d = rf__tree_node_dom(&s->c.tree, s->c.u_node[u], s->c.zl - 1);
            if (s->ulast[d] == 0)
                s->ulast[d] = u + 1;
            s->ufirst[d] = u;
        }
    for (int32_t g = 0; g < s->G; g++) {
        int64_t n = s->e0[s->ps0[g + 1]] - s->e0[s->ps0[g]] + s->pb->gangs[g].n_pod_sets + 1;
        s->sol[g].u = malloc((size_t)n * sizeof *s->sol[g].u);
        s->sol[g].p = malloc((size_t)n * sizeof *s->sol[g].p);
        s->sol[g].k = malloc((size_t)n * sizeof *s->sol[g].k);
        if (!s->sol[g].u || !s->sol[g].p || !s->sol[g].k)
            return false;
    }
    return true;
}

static void s_fini(s_lg_t *s)
{
    for (int32_t g = 0; s->sol && g < s->G; g++) {
        free(s->sol[g].u);
        free(s->sol[g].p);
        free(s->sol[g].k);
    }
    free(s->sol);
    free(s->gk);
    free(s->U);
    free(s->P);
    free(s->mu);
    free(s->nu);
    free(s->row_of);
    free(s->row_u);
    free(s->row_r);
    free(s->cap);
    free(s->rscale);
    free(s->lam);
    free(s->ps0);
    free(s->e0);
    free(s->ent);
    free(s->ufirst);
    free(s->ulast);
    rf__ilp_classes_fini(&s->c);
}

/* The domains the program keeps a row of F for: every level above the
 * host (domains are numbered level by level). */
static size_t s_domain_rows(const s_lg_t *s)
{
    return s->c.zl > 0 ? (size_t)s->c.tree.level_start[s->c.zl] : 0;
}

/* The most convolution steps of one gang's program. */
static int32_t s_max_steps(const s_lg_t *s)
{
    return s->c.n_units + (int32_t)s_domain_rows(s) + 1;
}

/* The bytes of one thread's tables: the domains' rows and the choices. */
static double s_work_bytes(const s_lg_t *s)
{
    return ((double)s_domain_rows(s) + 1) * (s->kmax + 1) * sizeof(double) +
           (double)s_max_steps(s) * (s->kmax + 1) * sizeof(int32_t);
}

static bool s_work_init(s_work_t *w, const s_lg_t *s)
{
    const size_t D1 = (size_t)s->c.tree.n_domains + 1, K1 = (size_t)s->kmax + 1;
    memset(w, 0, sizeof *w);
    w->F = malloc((s_domain_rows(s) + 1) * K1 * sizeof *w->F);
    w->fhi = malloc(D1 * sizeof *w->fhi);
    w->A = malloc(K1 * sizeof *w->A);
    w->T = malloc(K1 * sizeof *w->T);
    w->C = malloc(K1 * sizeof *w->C);
    w->st0 = malloc((D1 + 1) * sizeof *w->st0);
    w->st1 = malloc((D1 + 1) * sizeof *w->st1);
    w->mark = calloc(D1 + (size_t)s->c.n_units, 1);
    /* the most steps one gang's program takes (a class or a child domain
     * each) and their choices: sized here, so that nothing is allocated in
     * the parallel loop */
    w->cap_st = s_max_steps(s);
    w->cap_ch = (int32_t)(w->cap_st * (int64_t)K1);
    w->st = malloc((size_t)w->cap_st * sizeof *w->st);
    w->ch = malloc((size_t)w->cap_ch * sizeof *w->ch);
    return w->F && w->fhi && w->A && w->T && w->C && w->st0 && w->st1 && w->mark && w->st && w->ch;
}

static void s_work_fini(s_work_t *w)
{
    free(w->F);
    free(w->fhi);
    free(w->A);
    free(w->T);
    free(w->C);
    free(w->st0);
    free(w->st1);
    free(w->st);
    free(w->ch);
    free(w->mark);
}

/* ---------------------------------------------------------------- the dynamic program */

/* A new step whose item gets choices for totals 0..n: its choice array
 * (the room was sized by s_work_init; NULL, and w->failed, if it were not
 * enough, which the bounds on steps and pods rule out). */
static int32_t *s_step(s_work_t *w, int32_t item, bool dom, int32_t n)
{
    if (w->n_st >= w->cap_st || (int64_t)w->n_ch + n + 1 > w->cap_ch) {
        w->failed = true;
        return NULL;
    }
    w->st[w->n_st++] = (s_step_t){.item = item, .dom = dom, .off = w->n_ch};
    int32_t *c = &w->ch[w->n_ch];
    w->n_ch += n + 1;
    return c;
}

/* Past the deadline (looked at every 16th domain, and always at the first)?
 * Then the pass is abandoned: one gang's program may take long (its cost
 * grows with the square of its pods), and the time limit must hold. */
static bool s_late(const s_lg_t *s, int32_t i)
{
    int late;
#ifdef RF_HAVE_OPENMP
#pragma omp atomic read
#endif
    late = ((s_lg_t *)s)->late;
    if (!late && (i & 15) == 0 && rf_now_ms() > s->deadline) {
        late = 1;
#ifdef RF_HAVE_OPENMP
#pragma omp atomic write
#endif
        ((s_lg_t *)s)->late = 1;
    }
    return late != 0;
}

/* A[0..*ahi] (+) C[0..chi] into A, by min-plus convolution, or, when `one`,
 * by taking all pods from A or all from C (one domain of the two). */
static bool s_combine(const s_lg_t *s, s_work_t *w, int32_t *ahi, const double *C, int32_t chi, int32_t K, bool one,
                      int32_t item, bool dom)
{
    int32_t nhi = one ? (chi > *ahi ? chi : *ahi) : (*ahi + chi < K ? *ahi + chi : K);
    int32_t *ch = s_step(w, item, dom, nhi);
    if (!ch)
        return false;
    double *A = w->A, *T = w->T;
    for (int32_t k = 0; k <= nhi; k++) {
        T[k] = S_INF;
        ch[k] = 0;
    }
    if (one) {
        for (int32_t k = 0; k <= nhi; k++) {
            double a = k <= *ahi ? A[k] : S_INF, c = k <= chi ? C[k] : S_INF;
            if (c < a) {
                T[k] = c;
                ch[k] = k;
            } else {
                T[k] = a;
            }
        }
    } else {
        for (int32_t i = 0; i <= *ahi; i++) {
            if ((i & 255) == 255 && s_late(s, 0))
                return false; /* a convolution of a gang of thousands of pods */
            if (A[i] >= S_INF)
                continue;
            int32_t jm = chi < nhi - i ? chi : nhi - i;
            for (int32_t j = 0; j <= jm; j++) {
                double v = A[i] + C[j];
                if (v < T[i + j]) {
                    T[i + j] = v;
                    ch[i + j] = j;
                }
            }
        }
    }
    w->A = T; /* the new A; the old one is the next scratch */
    w->T = A;
    *ahi = nhi;
    return true;
}

typedef struct {
    int32_t ps;               /* the global index of the pod set it places */
    int32_t K;                /* the most new pods */
    int32_t req;              /* required level, or -1 */
    double wl[RF_MAX_LEVELS]; /* opening cost per level (0 without a penalty) */
    bool bound;               /* the gang has bound pods in the tree */
    const double *price;      /* [n_units] per pod */
} s_gang_dp_t;

/* The least cost of k pods in each domain, deepest first, then the root's
 * in w->A[0..*rhi]; the steps in w->s_*. */
static bool s_dp(const s_lg_t *s, s_work_t *w, const s_gang_dp_t *q, int32_t *rhi)
{
    const rf__tree_t *t = &s->c.tree;
    const int32_t K = q->K, zl = s->c.zl, K1 = s->kmax + 1;
    const bool hostreq = s->c.host && q->req == s->c.L - 1;
    const double wh = s->c.host ? q->wl[s->c.L - 1] : 0;
    double *C = w->C;
    w->n_st = 0;
    w->n_ch = 0;
    const s_ent_t *e = &s->ent[s->e0[q->ps]], *ee = &s->ent[s->e0[q->ps + 1]];
    /* the classes into their leaf domain (or the root when there is no domain level) */
    int32_t nleaf = zl > 0 ? t->level_start[zl] - t->level_start[zl - 1] : 1;
    for (int32_t li = 0; li < nleaf; li++) {
        if (s_late(s, li))
            return false;
        int32_t d = zl > 0 ? t->level_start[zl - 1] + li : t->n_domains;
        int32_t ahi = 0;
        w->A[0] = 0;
        w->st0[d] = w->n_st;
        int32_t uf = zl > 0 ? s->ufirst[d] : 0, ul = zl > 0 ? s->ulast[d] : s->c.n_units;
        while (e < ee && e->u < uf)
            e++;
        for (; e < ee && e->u < ul; e++) {
            const int32_t u = e->u;
            const bool bu = w->mark[t->n_domains + u];
            if (hostreq && q->bound && !bu)
                continue; /* one node, and its bound pods are elsewhere */
            int32_t chi = (int32_t)(hostreq ? e->fit : e->max);
            chi = chi < K ? chi : K;
            C[0] = 0;
            for (int32_t k = 1; k <= chi; k++) {
                int64_t hosts = (k + e->fit - 1) / e->fit - (bu ? 1 : 0);
                C[k] = k * q->price[u] + wh * (double)hosts;
            }
            if (!s_combine(s, w, &ahi, C, chi, K, hostreq, u, false))
                return false;
        }
        w->st1[d] = w->n_st;
        if (zl == 0) {
            *rhi = ahi;
            return true;
        }
        double *F = &w->F[(int64_t)d * K1];
        memcpy(F, w->A, ((size_t)ahi + 1) * sizeof *F);
        double open = w->mark[d] ? 0 : q->wl[zl - 1];
        for (int32_t k = 1; k <= ahi; k++)
            F[k] += open;
        w->fhi[d] = ahi;
    }
    /* domains into their parents, deepest level first, then the root */
    for (int32_t l = zl - 1; l >= 0; l--) {
        const bool one = q->req >= 0 && l <= q->req;
        int32_t first = l > 0 ? t->level_start[l - 1] : t->n_domains;
        int32_t last = l > 0 ? t->level_start[l] : t->n_domains + 1;
        for (int32_t pd = first; pd < last; pd++) {
            if (s_late(s, pd))
                return false;
            int32_t c0 = l > 0 ? t->child_start[pd] : t->level_start[0];
            int32_t c1 = l > 0 ? c0 + t->n_children[pd] : t->level_start[1];
            int32_t ahi = 0;
            w->A[0] = 0;
            w->st0[pd] = w->n_st;
            for (int32_t cd = c0; cd < c1; cd++) {
                if (one && q->bound && !w->mark[cd])
                    continue; /* one domain there, and its bound pods are elsewhere */
                if (!s_combine(s, w, &ahi, &w->F[(int64_t)cd * K1], w->fhi[cd], K, one, cd, true))
                    return false;
            }
            w->st1[pd] = w->n_st;
            if (l == 0) {
                *rhi = ahi;
                return true;
            }
            double *F = &w->F[(int64_t)pd * K1];
            memcpy(F, w->A, ((size_t)ahi + 1) * sizeof *F);
            double open = w->mark[pd] ? 0 : q->wl[l - 1];
            for (int32_t k = 1; k <= ahi; k++)
                F[k] += open;
            w->fhi[pd] = ahi;
        }
    }
    return false; /* not reached: level 0 ends at the root */
}

/* The pods each class gets when domain (or the root, t->n_domains) d takes k. */
static void s_back(const s_lg_t *s, const s_work_t *w, int32_t d, int32_t k, int32_t ps, s_sol_t *out)
{
    for (int32_t i = w->st1[d] - 1; i >= w->st0[d] && k > 0; i--) {
        int32_t j = w->ch[w->st[i].off + k];
        if (j > 0) {
            if (w->st[i].dom) {
                s_back(s, w, w->st[i].item, j, ps, out);
            } else {
                out->u[out->n] = w->st[i].item;
                out->p[out->n] = ps;
                out->k[out->n++] = j;
            }
        }
        k -= j;
    }
}

/* Pod set ps_i's price per pod on each class it may use (into price[u]), and
 * its cheapest class (-1 when none). */
static int32_t s_prices(const s_lg_t *s, const rf_pod_set_t *ps, int64_t ps_i, int32_t k, double *price, double *mag)
{
    const int32_t R = s->c.R, vr = s->pb->options.value_resource;
    double v = vr >= 0 ? (double)ps->requests[vr] : 0;
    double base = -(s->mu[k] * v / s->sv + s->nu[k]), cheapest = S_INF;
    int32_t cu = -1;
    for (int64_t i = s->e0[ps_i]; i < s->e0[ps_i + 1]; i++) {
        int32_t u = s->ent[i].u;
        double pr = base;
        for (int32_t r = 0; r < R; r++) {
            int32_t row = s->row_of[(int64_t)u * R + r];
            if (row >= 0 && ps->requests[r] > 0)
                pr += s->lam[row] * (double)ps->requests[r] * s->rscale[r];
        }
        price[u] = pr;
        *mag = fmax(*mag, fabs(pr) * (double)ps->count);
        if (pr < cheapest) {
            cheapest = pr;
            cu = u;
        }
    }
    return cu;
}

/* Mark (on = 1) or unmark the domains and classes holding gang g's bound
 * pods; with on, the penalty of those already-open domains. */
static double s_mark(const s_lg_t *s, s_work_t *w, const rf_gang_t *gg, const s_gang_dp_t *q, uint8_t on)
{
    const rf__tree_t *t = &s->c.tree;
    double open = 0;
    for (int32_t p = 0; p < gg->n_pod_sets; p++)
        for (int32_t b = 0; b < gg->pod_sets[p].n_bound; b++) {
            int32_t n = gg->pod_sets[p].bound[b].node;
            for (int32_t l = 0; l < s->c.zl; l++) {
                int32_t d = rf__tree_node_dom(t, n, l);
                if (w->mark[d] != on)
                    open += q->wl[l];
                w->mark[d] = on;
            }
            int32_t u = t->n_domains + s->c.node_unit[n];
            if (w->mark[u] != on && s->c.host)
                open += q->wl[s->c.L - 1];
            w->mark[u] = on;
        }
    return open;
}

/* Gang g's least cost when admitted, and that placement, into s->sol[g]
 * (S = S_INF when it cannot be admitted). The pod set with the most pods
 * carries the gang's penalty (exactly, for a gang of one pod set); the
 * others add their cheapest pods, capacity relaxed. */
static bool s_gang(const s_lg_t *s, s_work_t *w, int32_t g, double *price)
{
    const rf_problem_t *pb = s->pb;
    const rf_gang_t *gg = &pb->gangs[g];
    const int32_t k = s->gk[g], vr = pb->options.value_resource;
    s_sol_t *out = &s->sol[g];
    out->n = 0;
    out->units = out->pods = 0;
    out->S = S_INF;
    out->mag = 0;
    int32_t pstar = 0;
    int64_t B = 0;
    bool outside = false;
    for (int32_t p = 0; p < gg->n_pod_sets; p++) {
        const rf_pod_set_t *ps = &gg->pod_sets[p];
        B += ps->n_bound_pods;
        if (ps->count > gg->pod_sets[pstar].count)
            pstar = p;
        for (int32_t b = 0; b < ps->n_bound; b++)
            outside |= s->c.node_unit[ps->bound[b].node] < 0;
    }
    const rf_pod_set_t *pss = &gg->pod_sets[pstar];
    s_gang_dp_t q = {.ps = (int32_t)(s->ps0[g] + pstar), .price = price, .bound = B > 0 && !outside};
    q.req = gg->topology.required;
    if (gg->n_pod_sets == 1 && pss->topology.required > q.req)
        q.req = pss->topology.required;
    double pen = 0; /* penalty constants when admitted: less one domain per level, plus the bound pods' */
    for (int32_t l = 0; l < s->c.L; l++) {
        q.wl[l] = outside ? 0 : gg->bandwidth * pb->level_costs[l];
        pen -= q.wl[l];
    }
    int64_t pods_all = 0;
    for (int32_t p = 0; p < gg->n_pod_sets; p++)
        pods_all += gg->pod_sets[p].count;
    out->mag = -pen * (double)(pods_all + 1); /* every domain it could open */
    double rest = 0;                          /* the bound pods' value and the other pod sets' pods */
    for (int32_t p = 0; p < gg->n_pod_sets; p++) {
        const rf_pod_set_t *ps = &gg->pod_sets[p];
        double v = vr >= 0 ? (double)ps->requests[vr] : 0;
        rest -= (double)ps->n_bound_pods * (s->mu[k] * v / s->sv + s->nu[k]);
        out->units += (double)ps->n_bound_pods * v;
        out->pods += (double)ps->n_bound_pods;
        if (p == pstar)
            continue;
        const int64_t lo = ps->min_count > ps->n_bound_pods ? ps->min_count - ps->n_bound_pods : 0;
        const int64_t hi = ps->count > ps->n_bound_pods ? ps->count - ps->n_bound_pods : 0;
        int32_t cu = s_prices(s, ps, s->ps0[g] + p, k, price, &out->mag);
        if (cu < 0 && lo > 0)
            return true; /* cannot be admitted */
        if (cu < 0)
            continue;
        int64_t n = price[cu] < 0 ? hi : lo;
        if (n > 0) {
            rest += (double)n * price[cu];
            out->u[out->n] = cu;
            out->p[out->n] = (int32_t)(s->ps0[g] + p);
            out->k[out->n++] = n;
            out->units += (double)n * v;
            out->pods += (double)n;
        }
    }
    const int64_t lo = pss->min_count > pss->n_bound_pods ? pss->min_count - pss->n_bound_pods : 0;
    const int64_t hi = pss->count > pss->n_bound_pods ? pss->count - pss->n_bound_pods : 0;
    int32_t cu = s_prices(s, pss, q.ps, k, price, &out->mag);
    if (gg->n_pod_sets == 1 && B == 0 && hi == 1) { /* one pod: one domain per level, no penalty */
        if (cu >= 0) {
            out->S = price[cu];
            out->u[out->n] = cu;
            out->p[out->n] = q.ps;
            out->k[out->n++] = 1;
            out->units += vr >= 0 ? (double)pss->requests[vr] : 0;
            out->pods += 1;
        }
        return true;
    }
    q.K = (int32_t)hi;
    if (q.bound)
        pen += s_mark(s, w, gg, &q, 1);
    int32_t rhi = 0;
    bool ok = s_dp(s, w, &q, &rhi);
    if (q.bound)
        (void)s_mark(s, w, gg, &q, 0);
    if (!ok)
        return false;
    double got = S_INF;
    int64_t kk = -1;
    /* a gang with no pod at all is not admitted (rejecting covers it); with
     * the largest pod set empty and others placed, its penalty is >= 0 (below) */
    int64_t k0 = lo == 0 && B == 0 ? 1 : lo;
    for (int64_t n = k0; n <= hi && n <= rhi; n++)
        if (pen + w->A[n] < got) {
            got = pen + w->A[n];
            kk = n;
        }
    if (lo == 0 && B == 0 && out->n > 0 && 0 < got) {
        got = 0; /* the largest pod set empty: the others' penalty is >= 0 */
        kk = 0;
    }
    if (kk < 0)
        return true;
    out->S = rest + got;
    double v = vr >= 0 ? (double)pss->requests[vr] : 0;
    out->units += (double)kk * v;
    out->pods += (double)kk;
    if (kk > 0)
        s_back(s, w, s->c.tree.n_domains, (int32_t)kk, q.ps, out);
    return true;
}

/* ---------------------------------------------------------------- the bound */

static bool s_setup(s_lg_t *s, const rf_problem_t *pb, const rf_answer_t *ans)
{
    s->pb = pb;
    s->G = pb->n_gangs;
    if (!rf__ilp_classes_build(&s->c, pb, false) || !s_values(s, ans) || !s_entries(s) || !s_layout(s))
        return false;
    s->integral = true;
    for (int32_t g = 0; g < s->G; g++)
        for (int32_t l = 0; l < s->c.L; l++) {
            double x = pb->gangs[g].bandwidth * pb->level_costs[l];
            s->integral &= fabs(x - round(x)) < 1e-9;
        }
    return true;
}

/* One evaluation: every gang's part (in parallel), then L. */
static bool s_eval(s_lg_t *s, s_work_t *w, double *price, int32_t threads, double *L, double *mag)
{
    bool ok = true;
#ifdef RF_HAVE_OPENMP
#pragma omp parallel for num_threads(threads) schedule(dynamic, 4) if (threads > 1) reduction(&& : ok) default(none)   \
    shared(s, w, price)
#endif
    for (int32_t g = 0; g < s->G; g++) {
        int32_t tid = 0;
#ifdef RF_HAVE_OPENMP
        tid = omp_get_thread_num();
#endif
        if (!s_late(s, 1)) /* (only reads the flag) */
            ok = s_gang(s, &w[tid], g, &price[(int64_t)tid * (s->c.n_units + 1)]) && ok;
    }
    (void)threads;
    if (s->late)
        return false;
    double v = 0, m = 0;
    for (int32_t g = 0; g < s->G; g++) {
        v += fmin(0, s->sol[g].S);
        m += s->sol[g].S < 0 ? s->sol[g].mag : 0;
    }
    for (int32_t i = 0; i < s->n_rows; i++) {
        v -= s->lam[i] * s->cap[i];
        m += s->lam[i] * s->cap[i];
    }
    for (int32_t k = 0; k < s->K; k++) {
        v += s->mu[k] * s->U[k] / s->sv + s->nu[k] * s->P[k];
        m += fabs(s->mu[k] * s->U[k] / s->sv) + fabs(s->nu[k] * s->P[k]);
    }
    *L = v;
    *mag = m;
    return ok;
}

static int32_t s_patience(double deadline_ms, double step_ms)
{
    double fit = (deadline_ms - rf_now_ms()) / fmax(step_ms, 1e-3) / S_PATIENCE_SHARE;
    return fit > S_PATIENCE_MAX ? S_PATIENCE_MAX : fit > S_PATIENCE ? (int32_t)fit : S_PATIENCE;
}

/* A projected subgradient step of size theta gap / |g|^2 (gap: the target
 * less L); false when
 * the subgradient is zero (L is then the best these multipliers give). */
static bool s_step_mult(s_lg_t *s, double *use, double *gk, double theta, double gap)
{
    const int32_t R = s->c.R;
    memset(use, 0, (size_t)s->n_rows * sizeof *use);
    memset(gk, 0, 2 * (size_t)s->K * sizeof *gk);
    for (int32_t g = 0; g < s->G; g++) {
        const s_sol_t *o = &s->sol[g];
        if (!(o->S < 0))
            continue;
        gk[2 * s->gk[g]] += o->units;
        gk[2 * s->gk[g] + 1] += o->pods;
        for (int32_t i = 0; i < o->n; i++) {
            const rf_pod_set_t *ps = NULL;
            int32_t gp = o->p[i]; /* global pod-set index: within gang g */
            ps = &s->pb->gangs[g].pod_sets[gp - s->ps0[g]];
            for (int32_t r = 0; r < R; r++) {
                int32_t row = s->row_of[(int64_t)o->u[i] * R + r];
                if (row >= 0 && ps->requests[r] > 0)
                    use[row] += (double)o->k[i] * (double)ps->requests[r] * s->rscale[r];
            }
        }
    }
    double norm = 0;
    for (int32_t i = 0; i < s->n_rows; i++) {
        use[i] -= s->cap[i];
        if (s->lam[i] <= 0 && use[i] < 0)
            use[i] = 0; /* projected: lambda stays at 0 */
        norm += use[i] * use[i];
    }
    for (int32_t k = 0; k < s->K; k++) {
        gk[2 * k] = (s->U[k] - gk[2 * k]) / s->sv;
        gk[2 * k + 1] = s->P[k] - gk[2 * k + 1];
        norm += gk[2 * k] * gk[2 * k] + gk[2 * k + 1] * gk[2 * k + 1];
    }
    if (norm <= 1e-12) /* (a step along a vanishing residual would throw the multipliers far) */
        return false;
    double t = theta * gap / norm;
    for (int32_t i = 0; i < s->n_rows; i++)
        s->lam[i] = fmax(0, s->lam[i] + t * use[i]);
    for (int32_t k = 0; k < s->K; k++) {
        s->mu[k] += t * gk[2 * k];
        s->nu[k] += t * gk[2 * k + 1];
    }
    return true;
}

double rf__ilp_lagrange_bound(const rf_problem_t *pb, const rf_answer_t *ans, double deadline_ms, int32_t threads,
                              rf__ilp_lagr_stats_t *st)
{
    rf__ilp_lagr_stats_t own;
    st = st ? st : &own;
    memset(st, 0, sizeof *st);
    if (pb->n_gangs == 0 || pb->n_levels == 0 || rf__ilp_preempts(ans))
        return -1;
    const double kept = rf_answer_kept_penalty(ans), ub = ans->summary.penalty - kept;
    if (ub <= 0)
        return kept; /* the free gangs' penalty is 0: nothing is below it */
    double t0 = rf_now_ms(), bound = -1;
    threads = threads < 1 ? 1 : threads;
    s_lg_t s;
    memset(&s, 0, sizeof s);
    s_work_t *w = calloc((size_t)threads, sizeof *w);
    double *price = NULL, *use = NULL, *gk = NULL;
    int32_t nw = 0;
    s.deadline = deadline_ms;
    if (!w || !s_setup(&s, pb, ans) || rf_now_ms() > deadline_ms)
        goto done;
    /* the programs' rows: the domains' least costs, per thread */
    if (s_work_bytes(&s) * threads > S_MAX_TABLE_BYTES || (double)s_max_steps(&s) * (s.kmax + 1) >= INT32_MAX)
        goto done;
    for (; nw < threads; nw++)
        if (!s_work_init(&w[nw], &s)) {
            nw++;
            goto done;
        }
    price = malloc((size_t)threads * ((size_t)s.c.n_units + 1) * sizeof *price);
    use = malloc(((size_t)s.n_rows + 1) * sizeof *use);
    gk = malloc((2 * (size_t)s.K + 1) * sizeof *gk);
    if (!price || !use || !gk)
        goto done;
    st->n_units = s.c.n_units;
    st->n_rows = s.n_rows + 2 * s.K;
    st->setup_ms = rf_now_ms() - t0;
    double best = -S_INF, best_mag = 0, theta = S_THETA0, it_ms = 0;
    int32_t stale = 0;
    for (;;) {
        double t1 = rf_now_ms();
        if (t1 + it_ms > deadline_ms)
            break;
        double L, mag;
        if (!s_eval(&s, w, price, threads, &L, &mag))
            break; /* abandoned at the deadline (or out of memory): the best so far stands */
        st->iterations++;
        it_ms = fmax(it_ms, rf_now_ms() - t1);
        if (L > best + 1e-9 * fmax(1, fabs(best))) {
            best = L;
            best_mag = mag;
            stale = 0;
        } else if (++stale >= s_patience(deadline_ms, it_ms)) {
            theta /= 2;
            stale = 0;
        }
        if (best >= ub - 1e-6 || theta < S_THETA_MIN)
            break;
        if (!s_step_mult(&s, use, gk, theta, fmax(best + S_TARGET * (ub - best) - L, 1e-3 * ub)))
            break;
    }
    st->lagrangian = best;
    if (best > -S_INF) {
        /* below by more than the rounding of the sums that made it */
        double lb = best - 1e-6 * fmax(1, fabs(best)) - 1e-9 * best_mag;
        if (s.integral)
            lb = ceil(lb);
        bound = fmax(0, lb) + kept;
    }
done:
    st->ms = rf_now_ms() - t0;
    for (int32_t i = 0; i < nw; i++)
        s_work_fini(&w[i]);
    free(w);
    free(price);
    free(use);
    free(gk);
    s_fini(&s);
    return bound;
}
