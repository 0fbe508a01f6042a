/* solver/ilp.c: the integer program of docs/ilp.md over a batch, started
 * from an incumbent answer (the greedy's), solved in lexicographic stages by
 * solver/mip_glpk.c, and turned back into node placements.
 *
 * rf__ilp_improve is the one entry: given a problem, an incumbent and a set
 * of gangs to keep as they are, it builds the program over the other
 * ("free") gangs and the capacity the kept ones leave, solves it, decodes
 * the answer and returns it only when it is feasible (checked by rf_check,
 * which shares no code with this file) and better by the contract's
 * objective; otherwise the incumbent stands. The strategies "ilp" and "auto"
 * (solver/ilp_strategy.c) decide what to free and how long to spend.
 *
 * Units (docs/ilp.md): nodes with the same domain path above the host
 * level, the same free capacity and the same eligibility for every free pod
 * set are one unit with a count; nodes with bound pods of a free gang are
 * units of their own. With `aggregate` off every node is its own unit and
 * the program is exact. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eligible.h"
#include "ilp.h"
#include "mip.h"
#include "rackfit/check.h"
#include "rackfit/quantity.h"
#include "rackfit/solve.h"
#include "tree.h"

typedef struct {
    int32_t first, count; /* its nodes: unit_nodes[first .. first+count) */
    int32_t group;        /* the domain that holds it at the deepest z level */
} s_unit_t;

typedef struct {
    int32_t unit;
    int32_t col;
} s_uc_t;

typedef struct {
    const rf_problem_t *pb;
    rf__tree_t tree;
    int32_t L, N, R;
    bool host_level;             /* the last level is the host: counted by h, not z */
    bool tight;                  /* one linking row per (x, domain), else one per domain */
    const uint8_t *node_allowed; /* [N] nodes new pods may use, or NULL */
    bool isolating;              /* one gang alone: no ordered chains */
    bool tree_owned;             /* the tree was built here (else the problem's hint) */
    int32_t zl;                  /* levels with z variables: L - 1 or L */
    const bool *keep;            /* [n_gangs] gangs kept as in the incumbent */
    const bool *kept_admitted;   /* [n_gangs] their decision there */
    int64_t *free;               /* [N * R] residual after the kept gangs */
    s_unit_t *units;
    int32_t n_units;
    int32_t *unit_nodes; /* [N] */
    int32_t *node_unit;  /* [N], -1 outside the tree */
    int32_t *ps0;        /* [n_gangs + 1] first flattened pod set */
    int32_t n_ps;
    /* per flattened free pod set: candidate units and their x columns */
    int64_t *xs_start; /* [n_ps + 1] */
    s_uc_t *xs;
    /* per free gang: h columns (host level), y column */
    int64_t *hs_start; /* [n_gangs + 1] */
    s_uc_t *hs;
    int32_t *ycol; /* [n_gangs], -1 none */
    int32_t *acol; /* [n_gangs]: "has new pods" for gangs admissible with none (else = ycol) */
    /* z columns for the incumbent mapping: (gang, domain) -> col */
    int64_t *zs_start; /* [n_gangs + 1] */
    s_uc_t *zs;        /* unit field holds the domain */
    /* pod-set level and slice columns: (flattened pod set, domain) -> col */
    int64_t *ps_dom_start; /* [n_ps + 1] */
    s_uc_t *ps_dom;        /* z' columns */
    int64_t *sl_start;     /* [n_ps + 1] */
    s_uc_t *sl;            /* w columns */
    rf__mip_t mip;
} s_ilp_t;

/* ---------------------------------------------------------------- growable arrays */

typedef struct {
    s_uc_t *v;
    int64_t n, cap;
} s_vec_t;

static bool s_push(s_vec_t *v, int32_t unit, int32_t col)
{
    if (v->n == v->cap) {
        int64_t nc = v->cap ? 2 * v->cap : 256;
        s_uc_t *p = realloc(v->v, (size_t)nc * sizeof *p);
        if (!p)
            return false;
        v->v = p;
        v->cap = nc;
    }
    v->v[v->n++] = (s_uc_t){unit, col};
    return true;
}

static int32_t s_fit_node(const s_ilp_t *s, int32_t n, const rf_pod_set_t *ps)
{
    const int64_t *fr = &s->free[(int64_t)n * s->R];
    int64_t best = INT32_MAX;
    for (int32_t r = 0; r < s->R; r++) {
        if (ps->requests[r] <= 0 || fr[r] == RF_QTY_UNLIMITED)
            continue;
        int64_t f = fr[r] / ps->requests[r];
        if (f < best)
            best = f;
    }
    return (int32_t)best;
}

/* ---------------------------------------------------------------- units */

typedef struct {
    uint64_t hash;
    int32_t node; /* representative */
} s_slot_t;

static uint64_t s_mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9E3779B97F4A7C15ULL + (h << 6) + (h >> 2);
    return h * 0xff51afd7ed558ccdULL;
}

/* Eligibility signature of node n over the free pod sets' classes. */
static rf_status s_units(s_ilp_t *s, bool aggregate, const bool *bound_node)
{
    const rf_problem_t *pb = s->pb;
    const int32_t N = s->N;
    /* eligibility classes of free pod sets */
    int32_t n_cls = 0;
    const rf_pod_set_t **cls = malloc((size_t)(s->n_ps + 1) * sizeof *cls);
    uint8_t *ok = NULL;
    uint64_t *key = malloc((size_t)(N + 1) * sizeof *key);
    int32_t *order = malloc((size_t)(N + 1) * sizeof *order);
    rf_status rc = RF_ENOMEM;
    if (!cls || !key || !order)
        goto done;
    for (int32_t g = 0; g < pb->n_gangs; g++) {
        if (s->keep[g])
            continue;
        for (int32_t p = 0; p < pb->gangs[g].n_pod_sets; p++) {
            const rf_pod_set_t *ps = &pb->gangs[g].pod_sets[p];
            int32_t e = 0;
            while (e < n_cls && !rf__same_eligibility(cls[e], ps))
                e++;
            if (e == n_cls)
                cls[n_cls++] = ps;
        }
    }
    ok = malloc((size_t)n_cls * (size_t)N + 1);
    if (!ok)
        goto done;
    for (int32_t e = 0; e < n_cls; e++)
        for (int32_t n = 0; n < N; n++)
            ok[(int64_t)e * N + n] =
                rf__tree_node_dom(&s->tree, n, s->L - 1) >= 0 && rf__node_admits_labelled(pb, n, cls[e]);
    /* key: group domain, free vector, eligibility; bound nodes unique */
    int32_t gl = s->zl - 1; /* deepest z level */
    for (int32_t n = 0; n < N; n++) {
        if (rf__tree_node_dom(&s->tree, n, s->L - 1) < 0) {
            key[n] = 0;
            continue;
        }
        uint64_t h = s_mix(1, (uint64_t)(gl >= 0 ? rf__tree_node_dom(&s->tree, n, gl) : 0));
        for (int32_t r = 0; r < s->R; r++)
            h = s_mix(h, (uint64_t)s->free[(int64_t)n * s->R + r]);
        for (int32_t e = 0; e < n_cls; e++)
            h = s_mix(h, ok[(int64_t)e * N + n]);
        if (!aggregate || bound_node[n])
            h = s_mix(h, 0x5bd1e995ULL + (uint64_t)n);
        key[n] = h;
    }
    /* group nodes in tree order by key with an open-addressing table */
    size_t cap = 16;
    while (cap < (size_t)N * 2 + 16)
        cap <<= 1;
    s_slot_t *tab = malloc(cap * sizeof *tab);
    int32_t *slot_unit = malloc(cap * sizeof *slot_unit);
    int32_t *count = calloc((size_t)N + 1, sizeof *count);
    if (!tab || !slot_unit || !count) {
        free(tab);
        free(slot_unit);
        free(count);
        goto done;
    }
    for (size_t i = 0; i < cap; i++)
        tab[i].node = -1;
    s->n_units = 0;
    for (int32_t i = 0; i < s->tree.n_in_tree; i++) {
        int32_t n = s->tree.node_order[i];
        size_t j = key[n] & (cap - 1);
        int32_t u = -1;
        while (tab[j].node >= 0) {
            int32_t m = tab[j].node;
            bool same = tab[j].hash == key[n];
            if (same) {
                /* confirm: same group, free vector and eligibility */
                same = gl < 0 || rf__tree_node_dom(&s->tree, m, gl) == rf__tree_node_dom(&s->tree, n, gl);
                for (int32_t r = 0; same && r < s->R; r++)
                    same = s->free[(int64_t)m * s->R + r] == s->free[(int64_t)n * s->R + r];
                for (int32_t e = 0; same && e < n_cls; e++)
                    same = ok[(int64_t)e * N + m] == ok[(int64_t)e * N + n];
                same = same && aggregate && !bound_node[n] && !bound_node[m];
            }
            if (same) {
                u = slot_unit[j];
                break;
            }
            j = (j + 1) & (cap - 1);
        }
        if (u < 0) {
            u = s->n_units++;
            tab[j] = (s_slot_t){key[n], n};
            slot_unit[j] = u;
        }
        s->node_unit[n] = u;
        count[u]++;
    }
    s->units = calloc((size_t)s->n_units + 1, sizeof *s->units);
    if (!s->units) {
        free(tab);
        free(slot_unit);
        free(count);
        goto done;
    }
    int32_t pos = 0;
    for (int32_t u = 0; u < s->n_units; u++) {
        s->units[u].first = pos;
        pos += count[u];
    }
    for (int32_t i = 0; i < s->tree.n_in_tree; i++) {
        int32_t n = s->tree.node_order[i];
        s_unit_t *u = &s->units[s->node_unit[n]];
        s->unit_nodes[u->first + u->count++] = n;
        u->group = gl >= 0 ? rf__tree_node_dom(&s->tree, n, gl) : -1;
    }
    free(tab);
    free(slot_unit);
    free(count);
    rc = RF_OK;
done:
    free(cls);
    free(ok);
    free(key);
    free(order);
    return rc;
}

/* ---------------------------------------------------------------- the program */

/* The domain at level l of unit u (its first node's). */
static int32_t s_unit_dom(const s_ilp_t *s, int32_t u, int32_t l)
{
    return rf__tree_node_dom(&s->tree, s->unit_nodes[s->units[u].first], l);
}

/* Is unit u allowed for pod set p of gang g: inside the domains that bound
 * pods pin (at the gang's and the pod set's required levels)? */
static bool s_unit_allowed(const s_ilp_t *s, const int32_t *pin_g, const int32_t *pin_p, int32_t u)
{
    for (int32_t l = 0; l < s->L; l++) {
        int32_t d = s_unit_dom(s, u, l);
        if ((pin_g[l] >= 0 && pin_g[l] != d) || (pin_p[l] >= 0 && pin_p[l] != d))
            return false;
    }
    return true;
}

typedef struct {
    s_vec_t xs, hs, zs, psd, sl;
    int32_t *stamp; /* [max(D, units)] col per domain/unit for the current gang, with gen */
    uint32_t *gen;
    uint32_t now;
    int32_t *stage_cols[RF_MIP_MAX_STAGES];
    double *stage_vals[RF_MIP_MAX_STAGES];
    int64_t stage_n[RF_MIP_MAX_STAGES], stage_cap[RF_MIP_MAX_STAGES];
} s_build_t;

static bool s_stage_add(s_build_t *b, int32_t k, int32_t col, double val)
{
    if (val == 0)
        return true;
    if (b->stage_n[k] == b->stage_cap[k]) {
        int64_t nc = b->stage_cap[k] ? 2 * b->stage_cap[k] : 256;
        int32_t *c = realloc(b->stage_cols[k], (size_t)nc * sizeof *c);
        if (!c)
            return false;
        b->stage_cols[k] = c;
        double *v = realloc(b->stage_vals[k], (size_t)nc * sizeof *v);
        if (!v)
            return false;
        b->stage_vals[k] = v;
        b->stage_cap[k] = nc;
    }
    b->stage_cols[k][b->stage_n[k]] = col;
    b->stage_vals[k][b->stage_n[k]++] = val;
    return true;
}

/* col of key (domain or unit) for the current gang, creating it with mk. */
static int32_t s_keyed(s_ilp_t *s, s_build_t *b, int32_t key, double lb, double ub, bool is_int, s_vec_t *list,
                       bool *created)
{
    *created = false;
    if (b->gen[key] == b->now)
        return b->stamp[key];
    int32_t col = rf__mip_col(&s->mip, lb, ub, is_int);
    b->gen[key] = b->now;
    b->stamp[key] = col;
    *created = true;
    if (col >= 0 && !s_push(list, key, col))
        s->mip.failed = true;
    return col;
}

static void s_next_gen(s_build_t *b, int32_t size)
{
    if (++b->now == 0) {
        memset(b->gen, 0, (size_t)size * sizeof *b->gen);
        b->now = 1;
    }
}

/* Builds the whole program; stage objectives into b. Returns the number of
 * stages, or -1 on ENOMEM / too many stages. */
static int32_t s_build(s_ilp_t *s, s_build_t *b)
{
    bool failed = false;
    const rf_problem_t *pb = s->pb;
    rf__mip_t *mip = &s->mip;
    const int32_t G = pb->n_gangs, D = s->tree.n_domains;
    int32_t keysz = D > s->n_units ? D : s->n_units;
    b->stamp = malloc((size_t)(keysz + 1) * sizeof *b->stamp);
    b->gen = calloc((size_t)keysz + 1, sizeof *b->gen);
    if (!b->stamp || !b->gen)
        return -1;

    /* priorities, highest first, and the stages they need */
    int64_t prios[RF_MIP_MAX_STAGES];
    int32_t n_prio = 0;
    bool ordered = pb->options.admission == RF_ADMIT_ORDERED && !s->isolating;
    for (int32_t g = 0; g < G; g++) {
        if (s->keep[g])
            continue;
        int64_t pr = pb->gangs[g].priority;
        int32_t i = 0;
        while (i < n_prio && prios[i] != pr)
            i++;
        if (i == n_prio) {
            if (n_prio == (RF_MIP_MAX_STAGES - 1) / (ordered ? 3 : 2))
                return -1; /* more stages than the solver keeps */
            prios[n_prio++] = pr;
        }
    }
    for (int32_t i = 1; i < n_prio; i++) /* sort descending */
        for (int32_t j = i; j > 0 && prios[j] > prios[j - 1]; j--) {
            int64_t t = prios[j];
            prios[j] = prios[j - 1];
            prios[j - 1] = t;
        }
    /* per priority: [the prefix (ordered)], units, then pods */
    int32_t per = ordered ? 3 : 2;
    int32_t n_stages = n_prio * per + 1;
    /* W_k: one more than the pods priority k can hold */
    const int32_t vr = pb->options.value_resource;
    double cost_sum = 0;
    for (int32_t l = 0; l < s->L; l++)
        cost_sum += pb->level_costs[l];

    /* y for every gang (kept gangs fixed: ordered chains see them) */
    for (int32_t g = 0; g < G; g++) {
        if (s->keep[g]) {
            s->ycol[g] = -1;
            continue;
        }
        s->ycol[g] = rf__mip_col(mip, 0, 1, true);
        rf__mip_prio(mip, s->ycol[g], 3); /* admission decides first */
    }
    int32_t *pin_g = malloc(sizeof(int32_t) * RF_MAX_LEVELS);
    int32_t *pin_p = malloc(sizeof(int32_t) * RF_MAX_LEVELS);
    int32_t *cap_row = malloc((size_t)(s->n_units + 1) * s->R * sizeof *cap_row);
    if (!pin_g || !pin_p || !cap_row) {
        free(pin_g);
        free(pin_p);
        free(cap_row);
        return -1;
    }
    for (int64_t i = 0; i < (int64_t)s->n_units * s->R; i++)
        cap_row[i] = -1;

    for (int32_t g = 0; g < G; g++) {
        s->xs_start[s->ps0[g]] = b->xs.n;
        s->hs_start[g] = b->hs.n;
        s->zs_start[g] = b->zs.n;
        if (s->keep[g]) {
            for (int32_t p = 0; p < pb->gangs[g].n_pod_sets; p++) {
                s->xs_start[s->ps0[g] + p + 1] = b->xs.n;
                s->ps_dom_start[s->ps0[g] + p + 1] = b->psd.n;
                s->sl_start[s->ps0[g] + p + 1] = b->sl.n;
            }
            s->hs_start[g + 1] = b->hs.n;
            s->zs_start[g + 1] = b->zs.n;
            continue;
        }
        const rf_gang_t *gg = &pb->gangs[g];
        const int32_t y = s->ycol[g];
        int32_t k = 0;
        while (prios[k] != gg->priority)
            k++;
        const int32_t Rg = gg->topology.required;
        /* domains pinned by bound pods at or above the gang's required level */
        for (int32_t l = 0; l < RF_MAX_LEVELS; l++)
            pin_g[l] = -1;
        bool broken = false; /* bound pods already in two domains of a required level */
        for (int32_t p = 0; p < gg->n_pod_sets; p++)
            for (int32_t bi = 0; bi < gg->pod_sets[p].n_bound; bi++)
                for (int32_t l = 0; l <= Rg; l++) {
                    int32_t d = rf__tree_node_dom(&s->tree, gg->pod_sets[p].bound[bi].node, l);
                    broken |= pin_g[l] >= 0 && pin_g[l] != d;
                    pin_g[l] = d;
                }

        /* x, per pod set, and the pod-set rows */
        int64_t gang_x0 = b->xs.n;
        for (int32_t p = 0; p < gg->n_pod_sets; p++) {
            const rf_pod_set_t *ps = &gg->pod_sets[p];
            const int32_t fp = s->ps0[g] + p;
            s->xs_start[fp] = b->xs.n;
            for (int32_t l = 0; l < RF_MAX_LEVELS; l++)
                pin_p[l] = -1;
            for (int32_t bi = 0; bi < ps->n_bound; bi++)
                for (int32_t l = 0; l <= ps->topology.required; l++) {
                    int32_t d = rf__tree_node_dom(&s->tree, ps->bound[bi].node, l);
                    broken |= pin_p[l] >= 0 && pin_p[l] != d;
                    pin_p[l] = d;
                }
            if (broken)
                mip->ub[y] = 0; /* the gang cannot be admitted */
            int32_t slice = ps->slice.size > 1 ? ps->slice.size : 1;
            bool host_single = s->host_level && (ps->topology.required == s->L - 1 || Rg == s->L - 1);
            int64_t room = ps->count - ps->n_bound_pods;
            for (int32_t u = 0; u < s->n_units && room > 0; u++) {
                if (!s_unit_allowed(s, pin_g, pin_p, u))
                    continue;
                int32_t rep = s->unit_nodes[s->units[u].first];
                if ((s->node_allowed && !s->node_allowed[rep]) || !rf_node_admits(pb, rep, ps))
                    continue;
                int32_t f = s_fit_node(s, rep, ps);
                if (f > room)
                    f = (int32_t)room; /* no more pods than the pod set has: keeps coefficients small */
                if (slice > 1 && s->host_level && ps->slice.level == s->L - 1)
                    f = f / slice * slice;
                if (f <= 0)
                    continue;
                int64_t ub = host_single ? f : (int64_t)f * s->units[u].count;
                if (ub > room)
                    ub = room;
                int32_t col = rf__mip_col(mip, 0, (double)ub, true);
                if (col < 0 || !s_push(&b->xs, u, col))
                    goto oom;
                /* value: units, then pods */
                if (!s_stage_add(b, k * per + per - 2, col, vr >= 0 ? (double)ps->requests[vr] : 0) ||
                    !s_stage_add(b, k * per + per - 1, col, 1))
                    goto oom;
                /* capacity rows, created on first use */
                for (int32_t r = 0; r < s->R; r++) {
                    if (ps->requests[r] <= 0)
                        continue;
                    int64_t fr = s->free[(int64_t)s->unit_nodes[s->units[u].first] * s->R + r];
                    if (fr == RF_QTY_UNLIMITED)
                        continue;
                    int32_t *row = &cap_row[(int64_t)u * s->R + r];
                    if (*row < 0)
                        *row = rf__mip_row(mip, -RF_MIP_INF, (double)fr * s->units[u].count);
                    rf__mip_coef(mip, *row, col, (double)ps->requests[r]);
                }
            }
            s->xs_start[fp + 1] = b->xs.n;
            /* count: min*y <= B + sum x <= count*y */
            int32_t r1 = rf__mip_row(mip, -RF_MIP_INF, 0);
            for (int64_t i = s->xs_start[fp]; i < b->xs.n; i++)
                rf__mip_coef(mip, r1, b->xs.v[i].col, 1);
            rf__mip_coef(mip, r1, y, -(double)(ps->count - ps->n_bound_pods));
            int64_t lo = ps->min_count - ps->n_bound_pods;
            if (lo > 0) {
                int32_t r2 = rf__mip_row(mip, 0, RF_MIP_INF);
                for (int64_t i = s->xs_start[fp]; i < b->xs.n; i++)
                    rf__mip_coef(mip, r2, b->xs.v[i].col, 1);
                rf__mip_coef(mip, r2, y, -(double)lo);
            }
            /* value of the bound pods, earned with y */
            double bound_units = (double)ps->n_bound_pods * (vr >= 0 ? (double)ps->requests[vr] : 0);
            if (!s_stage_add(b, k * per + per - 2, y, bound_units) ||
                !s_stage_add(b, k * per + per - 1, y, (double)ps->n_bound_pods))
                goto oom;
            /* pod-set required level below the gang's: z' per domain */
            s->ps_dom_start[fp] = b->psd.n;
            int32_t Rp = ps->topology.required;
            if (Rp > Rg && Rp < s->zl) {
                s_next_gen(b, keysz);
                for (int64_t i = s->xs_start[fp]; i < b->xs.n; i++) {
                    bool created;
                    int32_t d = s_unit_dom(s, b->xs.v[i].unit, Rp);
                    int32_t zc = s_keyed(s, b, d, 0, 1, true, &b->psd, &created);
                    (void)created;
                    (void)zc;
                }
                int32_t rsum = rf__mip_row(mip, -RF_MIP_INF, 1);
                for (int64_t j = s->ps_dom_start[fp]; j < b->psd.n; j++) {
                    int32_t d = b->psd.v[j].unit, zc = b->psd.v[j].col;
                    rf__mip_coef(mip, rsum, zc, 1);
                    int32_t rl = rf__mip_row(mip, -RF_MIP_INF, 0);
                    for (int64_t i = s->xs_start[fp]; i < b->xs.n; i++)
                        if (s_unit_dom(s, b->xs.v[i].unit, Rp) == d)
                            rf__mip_coef(mip, rl, b->xs.v[i].col, 1);
                    rf__mip_coef(mip, rl, zc, -(double)(ps->count - ps->n_bound_pods));
                }
            } else if (Rp > Rg && Rp == s->L - 1 && s->host_level) {
                /* one node: at most one unit, and x <= fit (set above) */
                int32_t rsum = rf__mip_row(mip, -RF_MIP_INF, 1);
                for (int64_t i = s->xs_start[fp]; i < b->xs.n; i++) {
                    int32_t zc = rf__mip_col(mip, 0, 1, true);
                    if (!s_push(&b->psd, b->xs.v[i].unit, zc))
                        goto oom;
                    rf__mip_coef(mip, rsum, zc, 1);
                    int32_t rl = rf__mip_row(mip, -RF_MIP_INF, 0);
                    rf__mip_coef(mip, rl, b->xs.v[i].col, 1);
                    rf__mip_coef(mip, rl, zc, -(double)(ps->count - ps->n_bound_pods));
                }
            }
            s->ps_dom_start[fp + 1] = b->psd.n;
            /* slices above the host level: each slice domain holds a multiple */
            s->sl_start[fp] = b->sl.n;
            if (slice > 1 && !(s->host_level && ps->slice.level == s->L - 1)) {
                s_next_gen(b, keysz);
                for (int64_t i = s->xs_start[fp]; i < b->xs.n; i++) {
                    bool created;
                    int32_t d = s_unit_dom(s, b->xs.v[i].unit, ps->slice.level);
                    s_keyed(s, b, d, 0, (double)(ps->count / slice), true, &b->sl, &created);
                }
                for (int64_t j = s->sl_start[fp]; j < b->sl.n; j++) {
                    int32_t d = b->sl.v[j].unit, wc = b->sl.v[j].col;
                    int32_t row = rf__mip_row(mip, 0, 0);
                    for (int64_t i = s->xs_start[fp]; i < b->xs.n; i++)
                        if (s_unit_dom(s, b->xs.v[i].unit, ps->slice.level) == d)
                            rf__mip_coef(mip, row, b->xs.v[i].col, 1);
                    rf__mip_coef(mip, row, wc, -(double)slice);
                }
            } else if (slice > 1) {
                /* host-level slices: each unit's pods in whole slices */
                for (int64_t i = s->xs_start[fp]; i < b->xs.n; i++) {
                    int32_t wc = rf__mip_col(mip, 0, (double)(ps->count / slice), true);
                    if (!s_push(&b->sl, b->xs.v[i].unit, wc))
                        goto oom;
                    int32_t row = rf__mip_row(mip, 0, 0);
                    rf__mip_coef(mip, row, b->xs.v[i].col, 1);
                    rf__mip_coef(mip, row, wc, -(double)slice);
                }
            }
            s->sl_start[fp + 1] = b->sl.n;
        }
        int64_t gang_x1 = b->xs.n;
        int64_t gang_room = 0;
        for (int32_t p = 0; p < gg->n_pod_sets; p++)
            gang_room += gg->pod_sets[p].count - gg->pod_sets[p].n_bound_pods;

        /* A gang of one pod has no penalty, wherever it goes: no z, no h. */
        bool one_pod = gang_room <= 1;
        for (int32_t p = 0; p < gg->n_pod_sets; p++)
            one_pod &= gg->pod_sets[p].n_bound_pods == 0;
        /* A gang that can be admitted with no pod at all (every min_count 0,
         * nothing bound) has no domain then: its domain rows hang on `a`,
         * "has new pods" (a <= y, pods only with a), not on y. Otherwise y=1
         * would force a domain, and an empty admission (which can lengthen an
         * ordered prefix) would be cut from the program. */
        bool emptiable = true;
        for (int32_t p = 0; p < gg->n_pod_sets; p++)
            emptiable &= gg->pod_sets[p].min_count == 0 && gg->pod_sets[p].n_bound_pods == 0;
        int32_t a = y;
        if (emptiable && !one_pod) {
            a = rf__mip_col(mip, 0, 1, true);
            int32_t ra = rf__mip_row(mip, -RF_MIP_INF, 0); /* a <= y */
            rf__mip_coef(mip, ra, a, 1);
            rf__mip_coef(mip, ra, y, -1);
            for (int32_t p = 0; p < gg->n_pod_sets; p++) {
                int32_t fp = s->ps0[g] + p;
                int32_t rx = rf__mip_row(mip, -RF_MIP_INF, 0); /* pods only with a */
                for (int64_t i = s->xs_start[fp]; i < s->xs_start[fp + 1]; i++)
                    rf__mip_coef(mip, rx, b->xs.v[i].col, 1);
                rf__mip_coef(mip, rx, a, -(double)gg->pod_sets[p].count);
            }
        }
        s->acol[g] = a;
        /* z per domain level: x inside d => z_d; sum z >= y; z <= y */
        s->zs_start[g] = b->zs.n;
        for (int32_t l = 0; l < s->zl && !one_pod; l++) {
            s_next_gen(b, keysz);
            int64_t z0 = b->zs.n;
            for (int64_t i = gang_x0; i < gang_x1; i++) {
                bool created;
                s_keyed(s, b, s_unit_dom(s, b->xs.v[i].unit, l), 0, 1, true, &b->zs, &created);
            }
            for (int32_t p = 0; p < gg->n_pod_sets; p++)
                for (int32_t bi = 0; bi < gg->pod_sets[p].n_bound; bi++) {
                    int32_t d = rf__tree_node_dom(&s->tree, gg->pod_sets[p].bound[bi].node, l);
                    if (d < 0)
                        continue;
                    bool created;
                    int32_t zc = s_keyed(s, b, d, 0, 1, true, &b->zs, &created);
                    int32_t row = rf__mip_row(mip, 0, 0); /* a bound pod's domain is used: z = y */
                    rf__mip_coef(mip, row, zc, 1);
                    rf__mip_coef(mip, row, y, -1);
                }
            /* branch on the top level's domains after admission, then the others */
            for (int64_t j = z0; j < b->zs.n; j++)
                rf__mip_prio(mip, b->zs.v[j].col, (uint8_t)(l == 0 ? 2 : 1));
            /* sum z - y >= 0; at the required level = 0: one domain */
            int32_t rsum = rf__mip_row(mip, 0, l == Rg ? 0 : RF_MIP_INF);
            rf__mip_coef(mip, rsum, a, -1);
            for (int64_t j = z0; j < b->zs.n; j++) {
                int32_t d = b->zs.v[j].unit, zc = b->zs.v[j].col;
                rf__mip_coef(mip, rsum, zc, 1);
                if (s->tight) {
                    /* one row per x: z_d >= x / ub(x), a much tighter LP */
                    for (int64_t i = gang_x0; i < gang_x1; i++)
                        if (s_unit_dom(s, b->xs.v[i].unit, l) == d) {
                            int32_t rl = rf__mip_row(mip, -RF_MIP_INF, 0);
                            rf__mip_coef(mip, rl, b->xs.v[i].col, 1);
                            rf__mip_coef(mip, rl, zc, -mip->ub[b->xs.v[i].col]);
                        }
                } else {
                    int32_t rl = rf__mip_row(mip, -RF_MIP_INF, 0);
                    double M = 0;
                    for (int64_t i = gang_x0; i < gang_x1; i++)
                        if (s_unit_dom(s, b->xs.v[i].unit, l) == d) {
                            rf__mip_coef(mip, rl, b->xs.v[i].col, 1);
                            M += mip->ub[b->xs.v[i].col];
                        }
                    if (M > gang_room)
                        M = (double)gang_room;
                    rf__mip_coef(mip, rl, zc, -(M > 0 ? M : 1));
                }
                int32_t ry = rf__mip_row(mip, -RF_MIP_INF, 0); /* z <= a (a <= y) */
                rf__mip_coef(mip, ry, zc, 1);
                rf__mip_coef(mip, ry, a, -1);
                if (!s_stage_add(b, n_stages - 1, zc, gg->bandwidth * pb->level_costs[l]))
                    goto oom;
            }
        }
        s->zs_start[g + 1] = b->zs.n;

        /* h per unit at the host level */
        s->hs_start[g] = b->hs.n;
        if (s->host_level && !one_pod) {
            s_next_gen(b, keysz);
            for (int64_t i = gang_x0; i < gang_x1; i++) {
                bool created;
                int32_t u = b->xs.v[i].unit;
                s_keyed(s, b, u, 0, s->units[u].count, true, &b->hs, &created);
            }
            for (int32_t p = 0; p < gg->n_pod_sets; p++)
                for (int32_t bi = 0; bi < gg->pod_sets[p].n_bound; bi++) {
                    int32_t u = s->node_unit[gg->pod_sets[p].bound[bi].node];
                    if (u < 0)
                        continue;
                    bool created;
                    int32_t hc = s_keyed(s, b, u, 0, s->units[u].count, true, &b->hs, &created);
                    int32_t row = rf__mip_row(mip, 0, 0); /* a bound node is used: h = y */
                    rf__mip_coef(mip, row, hc, 1);
                    rf__mip_coef(mip, row, y, -1);
                }
            int32_t rsum = rf__mip_row(mip, 0, Rg == s->L - 1 ? 0 : RF_MIP_INF); /* sum h >= a */
            rf__mip_coef(mip, rsum, a, -1);
            for (int64_t j = s->hs_start[g]; j < b->hs.n; j++) {
                int32_t u = b->hs.v[j].unit, hc = b->hs.v[j].col;
                rf__mip_coef(mip, rsum, hc, 1);
                int32_t ry = rf__mip_row(mip, -RF_MIP_INF, 0); /* h <= c*a */
                rf__mip_coef(mip, ry, hc, 1);
                rf__mip_coef(mip, ry, a, -(double)s->units[u].count);
                if (!s_stage_add(b, n_stages - 1, hc, gg->bandwidth * pb->level_costs[s->L - 1]))
                    goto oom;
                /* x <= fit * h, per pod set; resources per node for several */
                int32_t rres[64];
                for (int32_t r = 0; r < s->R && r < 64; r++)
                    rres[r] = -1;
                for (int32_t p = 0; p < gg->n_pod_sets; p++) {
                    const rf_pod_set_t *ps = &gg->pod_sets[p];
                    int32_t fp = s->ps0[g] + p;
                    for (int64_t i = s->xs_start[fp]; i < s->xs_start[fp + 1]; i++) {
                        if (b->xs.v[i].unit != u)
                            continue;
                        int32_t rowf = rf__mip_row(mip, -RF_MIP_INF, 0);
                        int64_t f = s_fit_node(s, s->unit_nodes[s->units[u].first], ps);
                        if (f > ps->count - ps->n_bound_pods)
                            f = ps->count - ps->n_bound_pods;
                        rf__mip_coef(mip, rowf, b->xs.v[i].col, 1);
                        rf__mip_coef(mip, rowf, hc, -(double)f);
                        if (gg->n_pod_sets > 1)
                            for (int32_t r = 0; r < s->R && r < 64; r++) {
                                int64_t fr = s->free[(int64_t)s->unit_nodes[s->units[u].first] * s->R + r];
                                if (ps->requests[r] <= 0 || fr == RF_QTY_UNLIMITED)
                                    continue;
                                if (rres[r] < 0) {
                                    rres[r] = rf__mip_row(mip, -RF_MIP_INF, 0);
                                    rf__mip_coef(mip, rres[r], hc, -(double)fr);
                                }
                                rf__mip_coef(mip, rres[r], b->xs.v[i].col, (double)ps->requests[r]);
                            }
                    }
                }
            }
        }
        s->hs_start[g + 1] = b->hs.n;
        /* the penalty's constant part: - sum of costs, with y */
        if (!one_pod && !s_stage_add(b, n_stages - 1, a, -gg->bandwidth * cost_sum))
            goto oom;
        /* ordered: the prefix stage counts y */
        if (ordered && !s_stage_add(b, k * per, y, 1))
            goto oom;
    }
    /* ordered admission: within each priority, y is non-increasing in
     * problem order; a kept gang's decision is a constant in the chain */
    if (ordered)
        for (int32_t k = 0; k < n_prio; k++) {
            int32_t prev = -1;
            bool closed = false; /* a kept gang before was rejected */
            for (int32_t g = 0; g < G; g++) {
                if (pb->gangs[g].priority != prios[k])
                    continue;
                if (s->keep[g]) {
                    if (!s->kept_admitted[g])
                        closed = true;
                    else /* every earlier free gang must be admitted */
                        for (int32_t e = 0; e < g; e++)
                            if (pb->gangs[e].priority == prios[k] && !s->keep[e])
                                mip->lb[s->ycol[e]] = 1;
                    continue;
                }
                if (closed)
                    mip->ub[s->ycol[g]] = 0;
                if (prev >= 0) {
                    int32_t row = rf__mip_row(mip, 0, RF_MIP_INF); /* y_prev >= y_g */
                    rf__mip_coef(mip, row, s->ycol[prev], 1);
                    rf__mip_coef(mip, row, s->ycol[g], -1);
                }
                prev = g;
            }
        }
    goto done;
oom:
    failed = true;
done:
    free(pin_g);
    free(pin_p);
    free(cap_row);
    /* the lists belong to s from here, whatever happened */
    s->xs = b->xs.v;
    s->hs = b->hs.v;
    s->zs = b->zs.v;
    s->ps_dom = b->psd.v;
    s->sl = b->sl.v;
    return failed || mip->failed ? -1 : n_stages;
}

/* ---------------------------------------------------------------- the incumbent as a vector */

/* Index of `key` in list[a, b) (linear: ranges are per gang or pod set). */
static int64_t s_find(const s_uc_t *list, int64_t a, int64_t b, int32_t key)
{
    for (int64_t i = a; i < b; i++)
        if (list[i].unit == key)
            return i;
    return -1;
}

/* x for the incumbent's placements of the free gangs; false when they do not
 * map onto the program's columns (then no incumbent is given). */
static bool s_map_incumbent(const s_ilp_t *s, const rf_answer_t *inc, double *x)
{
    const rf_problem_t *pb = s->pb;
    memset(x, 0, (size_t)s->mip.n_cols * sizeof *x);
    for (int32_t g = 0; g < pb->n_gangs; g++) {
        if (s->keep[g] || !inc->gangs[g].admitted)
            continue;
        const rf_gang_t *gg = &pb->gangs[g];
        x[s->ycol[g]] = 1;
        if (s->acol[g] != s->ycol[g])
            for (int32_t p = 0; p < gg->n_pod_sets; p++)
                if (inc->gangs[g].pod_sets[p].n_placements > 0)
                    x[s->acol[g]] = 1;
        /* every node of the gang: new and bound */
        for (int32_t p = 0; p < gg->n_pod_sets; p++) {
            const rf_pod_set_t *ps = &gg->pod_sets[p];
            const rf_pod_set_answer_t *pa = &inc->gangs[g].pod_sets[p];
            int32_t fp = s->ps0[g] + p;
            int32_t total = (int32_t)(pa->n_placements + ps->n_bound);
            for (int32_t i = 0; i < total; i++) {
                bool is_new = i < pa->n_placements;
                int32_t n = is_new ? pa->placements[i].node : ps->bound[i - pa->n_placements].node;
                int32_t cnt = is_new ? pa->placements[i].count : ps->bound[i - pa->n_placements].count;
                int32_t u = s->node_unit[n];
                if (u < 0)
                    return false;
                if (is_new) {
                    int64_t j = s_find(s->xs, s->xs_start[fp], s->xs_start[fp + 1], u);
                    if (j < 0)
                        return false;
                    x[s->xs[j].col] += cnt;
                }
                for (int32_t l = 0; l < s->zl && s->zs_start[g] < s->zs_start[g + 1]; l++) {
                    int64_t j = s_find(s->zs, s->zs_start[g], s->zs_start[g + 1], rf__tree_node_dom(&s->tree, n, l));
                    if (j < 0)
                        return false;
                    x[s->zs[j].col] = 1;
                }
                int32_t Rp = ps->topology.required;
                if (s->ps_dom_start[fp] < s->ps_dom_start[fp + 1]) {
                    int32_t key = (Rp < s->zl) ? rf__tree_node_dom(&s->tree, n, Rp) : u;
                    int64_t j = s_find(s->ps_dom, s->ps_dom_start[fp], s->ps_dom_start[fp + 1], key);
                    if (j < 0)
                        return false;
                    x[s->ps_dom[j].col] = 1;
                }
                if (s->sl_start[fp] < s->sl_start[fp + 1]) {
                    int32_t sz = ps->slice.size;
                    bool host = s->host_level && ps->slice.level == s->L - 1;
                    int32_t key = host ? u : rf__tree_node_dom(&s->tree, n, ps->slice.level);
                    int64_t j = s_find(s->sl, s->sl_start[fp], s->sl_start[fp + 1], key);
                    if (j < 0)
                        return false;
                    x[s->sl[j].col] += (double)cnt / sz;
                }
            }
        }
        /* h: distinct nodes per unit */
        if (s->host_level)
            for (int64_t j = s->hs_start[g]; j < s->hs_start[g + 1]; j++) {
                int32_t u = s->hs[j].unit, used = 0;
                for (int32_t k = 0; k < s->units[u].count; k++) {
                    int32_t n = s->unit_nodes[s->units[u].first + k];
                    bool on = false;
                    for (int32_t p = 0; p < gg->n_pod_sets && !on; p++) {
                        const rf_pod_set_answer_t *pa = &inc->gangs[g].pod_sets[p];
                        for (int32_t i = 0; i < pa->n_placements && !on; i++)
                            on = pa->placements[i].node == n;
                        for (int32_t i = 0; i < gg->pod_sets[p].n_bound && !on; i++)
                            on = gg->pod_sets[p].bound[i].node == n;
                    }
                    used += on;
                }
                x[s->hs[j].col] = used;
            }
    }
    return true;
}

/* ---------------------------------------------------------------- decoding */

typedef struct {
    int32_t node, count, pos;
} s_pl_t;

static int s_cmp_pos(const void *a, const void *b)
{
    const s_pl_t *x = a, *y = b;
    return (x->pos > y->pos) - (x->pos < y->pos);
}

/* Pods of pod set ps that fit on node n given nfree, in chunks of `chunk`. */
static int64_t s_room(const s_ilp_t *s, const int64_t *nfree, int32_t n, const rf_pod_set_t *ps, int32_t chunk)
{
    const int64_t *fr = &nfree[(int64_t)n * s->R];
    int64_t best = INT64_MAX;
    for (int32_t r = 0; r < s->R; r++) {
        if (ps->requests[r] <= 0 || fr[r] == RF_QTY_UNLIMITED)
            continue;
        int64_t f = fr[r] / ps->requests[r];
        if (f < best)
            best = f;
    }
    return best / chunk * chunk;
}

static void s_take(const s_ilp_t *s, int64_t *nfree, int32_t n, const rf_pod_set_t *ps, int64_t k)
{
    int64_t *fr = &nfree[(int64_t)n * s->R];
    for (int32_t r = 0; r < s->R; r++)
        if (fr[r] != RF_QTY_UNLIMITED)
            fr[r] -= k * ps->requests[r];
}

/* One pod set's new pods as they are decoded: (node, count) entries. */
typedef struct {
    s_pl_t *v;
    int32_t n, cap;
} s_plist_t;

static bool s_plist_add(s_plist_t *l, int32_t node, int64_t k)
{
    for (int32_t i = 0; i < l->n; i++)
        if (l->v[i].node == node) {
            l->v[i].count += (int32_t)k;
            return true;
        }
    if (l->n == l->cap) {
        int32_t nc = l->cap ? 2 * l->cap : 8;
        s_pl_t *q = realloc(l->v, (size_t)nc * sizeof *q);
        if (!q)
            return false;
        l->v = q;
        l->cap = nc;
    }
    l->v[l->n++] = (s_pl_t){node, (int32_t)k, 0};
    return true;
}

/* One decoding demand: `count` new pods of flattened pod set fp in unit u. */
typedef struct {
    int32_t gang, ps, fp, unit;
    int64_t count;
    double size; /* the pod's largest share of a node of the unit: big first */
} s_demand_t;

static int s_cmp_demand(const void *a, const void *b)
{
    const s_demand_t *x = a, *y = b;
    if (x->unit != y->unit)
        return x->unit < y->unit ? -1 : 1;
    if (x->size != y->size)
        return x->size > y->size ? -1 : 1;
    if (x->gang != y->gang)
        return x->gang < y->gang ? -1 : 1;
    return x->ps < y->ps ? -1 : x->ps > y->ps;
}

static int32_t s_chunk(const s_ilp_t *s, const rf_pod_set_t *ps)
{
    return ps->slice.size > 1 && s->host_level && ps->slice.level == s->L - 1 ? ps->slice.size : 1;
}

static bool s_one_node(const s_ilp_t *s, int32_t g, int32_t p)
{
    const rf_gang_t *gg = &s->pb->gangs[g];
    return s->host_level && (gg->topology.required == s->L - 1 || gg->pod_sets[p].topology.required == s->L - 1);
}

/* Place what is left of one demand on the nodes of [a, b) (tree
 * positions), only those of unit `only_unit` when it is >= 0: first the
 * nodes the gang already uses, then by best fit (the node with the least
 * room that still takes every remaining pod, else the roomiest). Pods that
 * must share one node go whole to one node. False only on ENOMEM. */
static bool s_place(const s_ilp_t *s, int64_t *nfree, const s_demand_t *dm, s_plist_t *lists, int32_t a, int32_t b,
                    const uint8_t *gang_on, int32_t only_unit, int64_t *left)
{
    const rf_pod_set_t *ps = &s->pb->gangs[dm->gang].pod_sets[dm->ps];
    int32_t chunk = s_chunk(s, ps);
    bool one = s_one_node(s, dm->gang, dm->ps);
    /* pods that must share one node: the node they already have, if any
     * (the gang's, for a gang-level host requirement; the pod set's own,
     * new or bound, for a pod-set-level one) */
    int32_t target = -1;
    if (one) {
        const rf_gang_t *gg = &s->pb->gangs[dm->gang];
        if (s->host_level && gg->topology.required == s->L - 1) {
            for (int32_t i = a; i < b && target < 0; i++)
                if (gang_on[s->tree.node_order[i]])
                    target = s->tree.node_order[i];
        } else {
            if (lists[dm->fp].n > 0)
                target = lists[dm->fp].v[0].node;
            else if (ps->n_bound > 0)
                target = ps->bound[0].node;
        }
    }
    for (int32_t pass = 0; pass < 2 && *left > 0; pass++)
        for (;;) {
            int32_t best = -1, roomiest = -1;
            int64_t best_room = 0, most = 0;
            for (int32_t i = a; i < b; i++) {
                int32_t n = s->tree.node_order[i];
                if ((pass == 0) != (gang_on[n] != 0) || (only_unit >= 0 && s->node_unit[n] != only_unit) ||
                    (s->node_allowed && !s->node_allowed[n]) || !rf_node_admits(s->pb, n, ps))
                    continue;
                if (one && target >= 0 && n != target)
                    continue;
                int64_t k = s_room(s, nfree, n, ps, chunk);
                if (k >= *left && (best < 0 || k < best_room)) {
                    best = n;
                    best_room = k;
                }
                if (k > most) {
                    most = k;
                    roomiest = n;
                }
            }
            int32_t n = best >= 0 ? best : one ? -1 : roomiest;
            if (n < 0)
                break;
            int64_t k = best >= 0 ? *left : most;
            s_take(s, nfree, n, ps, k);
            *left -= k;
            if (!s_plist_add(&lists[dm->fp], n, k))
                return false;
            if (*left == 0)
                break;
        }
    return true;
}

/* The program's solution as an answer: kept gangs copied from the incumbent,
 * free gangs decoded unit by unit, largest pods first (first-fit
 * decreasing), each onto its own gang's nodes first, then by best fit; what
 * a unit cannot hold (its summed capacity is a relaxation) spills to other
 * nodes of the same deepest-z-level domain. Returns false when packing
 * fails; *oom on ENOMEM. */
static bool s_decode(s_ilp_t *s, const double *x, const rf_answer_t *inc, rf_answer_t *ans, bool *oom)
{
    const rf_problem_t *pb = s->pb;
    *oom = false;
    int64_t n_dem = 0;
    for (int32_t g = 0; g < pb->n_gangs; g++)
        if (!s->keep[g] && x[s->ycol[g]] >= 0.5)
            for (int32_t p = 0; p < pb->gangs[g].n_pod_sets; p++)
                for (int64_t i = s->xs_start[s->ps0[g] + p]; i < s->xs_start[s->ps0[g] + p + 1]; i++)
                    n_dem += llround(x[s->xs[i].col]) > 0;
    int64_t *nfree = malloc((size_t)((int64_t)s->N * s->R + 1) * sizeof *nfree);
    int32_t *pos = malloc((size_t)(s->N + 1) * sizeof *pos);
    uint8_t *gang_on = calloc((size_t)s->N + 1, 1);
    s_demand_t *dem = malloc((size_t)(n_dem + 1) * sizeof *dem);
    s_plist_t *lists = calloc((size_t)s->n_ps + 1, sizeof *lists);
    bool ok = nfree && pos && gang_on && dem && lists;
    if (!ok) {
        *oom = true;
        goto done;
    }
    memcpy(nfree, s->free, (size_t)s->N * s->R * sizeof *nfree);
    for (int32_t n = 0; n < s->N; n++)
        pos[n] = -1;
    for (int32_t i = 0; i < s->tree.n_in_tree; i++)
        pos[s->tree.node_order[i]] = i;
    /* the demands, sorted by unit, then largest pod first */
    int64_t k = 0;
    for (int32_t g = 0; g < pb->n_gangs; g++) {
        if (s->keep[g] || x[s->ycol[g]] < 0.5)
            continue;
        for (int32_t p = 0; p < pb->gangs[g].n_pod_sets; p++) {
            const rf_pod_set_t *ps = &pb->gangs[g].pod_sets[p];
            int32_t fp = s->ps0[g] + p;
            for (int64_t i = s->xs_start[fp]; i < s->xs_start[fp + 1]; i++) {
                int64_t c = llround(x[s->xs[i].col]);
                if (c <= 0)
                    continue;
                int32_t u = s->xs[i].unit, rep = s->unit_nodes[s->units[u].first];
                double size = 0;
                for (int32_t r = 0; r < s->R; r++) {
                    int64_t f = s->free[(int64_t)rep * s->R + r];
                    if (ps->requests[r] > 0 && f != RF_QTY_UNLIMITED && f > 0)
                        size = fmax(size, (double)ps->requests[r] / (double)f);
                }
                dem[k++] = (s_demand_t){g, p, fp, u, c, size};
            }
        }
    }
    qsort(dem, (size_t)k, sizeof *dem, s_cmp_demand);
    for (int64_t i = 0; i < k && ok; i++) {
        const s_demand_t *dm = &dem[i];
        /* mark the gang's nodes in this unit's group (cleared after) */
        const s_unit_t *un = &s->units[dm->unit];
        int32_t grp = un->group;
        int32_t ga = grp >= 0 ? s->tree.node_start[grp] : 0, gb = grp >= 0 ? s->tree.node_end[grp] : s->tree.n_in_tree;
        const rf_gang_t *gg = &pb->gangs[dm->gang];
        for (int32_t p = 0; p < gg->n_pod_sets; p++) {
            const s_plist_t *l = &lists[s->ps0[dm->gang] + p];
            for (int32_t j = 0; j < l->n; j++)
                gang_on[l->v[j].node] = 1;
            for (int32_t j = 0; j < gg->pod_sets[p].n_bound; j++)
                gang_on[gg->pod_sets[p].bound[j].node] = 1;
        }
        /* the unit's nodes first, then (spill) the rest of its domain */
        int64_t left = dm->count;
        ok = s_place(s, nfree, dm, lists, ga, gb, gang_on, dm->unit, &left) &&
             s_place(s, nfree, dm, lists, ga, gb, gang_on, -1, &left);
        if (!ok)
            *oom = true;
        else if (left > 0)
            ok = false;
        for (int32_t p = 0; p < gg->n_pod_sets; p++) {
            const s_plist_t *l = &lists[s->ps0[dm->gang] + p];
            for (int32_t j = 0; j < l->n; j++)
                gang_on[l->v[j].node] = 0;
            for (int32_t j = 0; j < gg->pod_sets[p].n_bound; j++)
                gang_on[gg->pod_sets[p].bound[j].node] = 0;
        }
    }
    /* the answer */
    for (int32_t g = 0; g < pb->n_gangs && ok; g++) {
        if (s->keep[g]) {
            if (inc->gangs[g].admitted) {
                for (int32_t p = 0; p < pb->gangs[g].n_pod_sets && ok; p++)
                    for (int32_t i = 0; i < inc->gangs[g].pod_sets[p].n_placements && ok; i++)
                        if (rf_answer_add(ans, g, p, inc->gangs[g].pod_sets[p].placements[i].node,
                                          inc->gangs[g].pod_sets[p].placements[i].count) != RF_OK)
                            *oom = !(ok = false);
                ans->gangs[g].admitted = true;
            } else {
                rf_answer_reject(ans, g, inc->gangs[g].why, "%s", inc->gangs[g].reason ? inc->gangs[g].reason : "");
            }
            continue;
        }
        if (x[s->ycol[g]] < 0.5) {
            /* ordered admission: name the earlier gang of its priority that
             * this answer rejects (the incumbent's reason may name another) */
            int32_t blocker = -1;
            for (int32_t e = 0; e < g && pb->options.admission == RF_ADMIT_ORDERED; e++)
                if (pb->gangs[e].priority == pb->gangs[g].priority && !ans->gangs[e].admitted && blocker < 0)
                    blocker = e;
            if (blocker >= 0) {
                rf_why_t why = {.level = -1, .resource = -1, .fits = -1, .needs = -1};
                rf_answer_reject(ans, g, why, "ordered admission: %s, earlier at the same priority, was not admitted",
                                 pb->gangs[blocker].name);
            } else if (!inc->gangs[g].admitted) {
                rf_answer_reject(ans, g, inc->gangs[g].why, "%s", inc->gangs[g].reason ? inc->gangs[g].reason : "");
            } else {
                rf_why_t why = {.level = -1, .resource = pb->options.value_resource, .fits = -1, .needs = -1};
                rf_answer_reject(ans, g, why,
                                 "not admitted: the integer program admits more value at this or a higher "
                                 "priority with its capacity used by other gangs");
            }
            continue;
        }
        for (int32_t p = 0; p < pb->gangs[g].n_pod_sets && ok; p++) {
            s_plist_t *l = &lists[s->ps0[g] + p];
            for (int32_t i = 0; i < l->n; i++)
                l->v[i].pos = pos[l->v[i].node];
            if (l->n > 1)
                qsort(l->v, (size_t)l->n, sizeof *l->v, s_cmp_pos);
            for (int32_t i = 0; i < l->n && ok; i++)
                if (rf_answer_add(ans, g, p, l->v[i].node, l->v[i].count) != RF_OK)
                    *oom = !(ok = false);
        }
        ans->gangs[g].admitted = true;
    }
done:
    for (int32_t i = 0; lists && i < s->n_ps; i++)
        free(lists[i].v);
    free(lists);
    free(dem);
    free(nfree);
    free(pos);
    free(gang_on);
    return ok;
}

/* ---------------------------------------------------------------- the entry */

static void s_ilp_fini(s_ilp_t *s)
{
    if (s->tree_owned)
        rf__tree_fini(&s->tree);
    free(s->free);
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
    rf__mip_fini(&s->mip);
}

rf_status rf__ilp_improve(const rf_problem_t *pb, const rf_answer_t *inc, const rf__ilp_opts_t *opts, rf_answer_t **out,
                          rf__ilp_stats_t *stats, rf_error_t *err)
{
    memset(stats, 0, sizeof *stats);
    stats->penalty_bound = -1;
    *out = NULL;
    double t0 = rf_now_ms();
    s_ilp_t s;
    memset(&s, 0, sizeof s);
    s_build_t b;
    memset(&b, 0, sizeof b);
    rf__mip_result_t res;
    memset(&res, 0, sizeof res);
    double *xinc = NULL;
    bool *keep_local = NULL, *kept_adm = NULL, *bound_node = NULL;
    rf_answer_t *ans = NULL;
    rf_status rc = RF_OK;

    s.pb = pb;
    s.L = pb->n_levels;
    s.N = pb->n_nodes;
    s.R = pb->n_resources;
    s.host_level = strcmp(pb->levels[s.L - 1], RF_HOSTNAME_LABEL) == 0;
    s.zl = s.host_level ? s.L - 1 : s.L;
    s.tight = opts->tight;
    s.node_allowed = opts->node_allowed;
    s.isolating = opts->isolate >= 0;
    rc = rf__tree_of(pb, &s.tree, &s.tree_owned, err);
    if (rc != RF_OK)
        goto done;
    keep_local = calloc((size_t)pb->n_gangs + 1, sizeof *keep_local);
    kept_adm = calloc((size_t)pb->n_gangs + 1, sizeof *kept_adm);
    bound_node = calloc((size_t)s.N + 1, sizeof *bound_node);
    s.free = malloc((size_t)((int64_t)s.N * s.R + 1) * sizeof *s.free);
    s.unit_nodes = malloc((size_t)(s.N + 1) * sizeof *s.unit_nodes);
    s.node_unit = malloc((size_t)(s.N + 1) * sizeof *s.node_unit);
    s.ps0 = malloc((size_t)(pb->n_gangs + 1) * sizeof *s.ps0);
    s.ycol = malloc((size_t)(pb->n_gangs + 1) * sizeof *s.ycol);
    s.acol = malloc((size_t)(pb->n_gangs + 1) * sizeof *s.acol);
    s.hs_start = calloc((size_t)pb->n_gangs + 1, sizeof *s.hs_start);
    s.zs_start = calloc((size_t)pb->n_gangs + 1, sizeof *s.zs_start);
    if (!keep_local || !kept_adm || !bound_node || !s.free || !s.unit_nodes || !s.node_unit || !s.ps0 || !s.ycol ||
        !s.acol || !s.hs_start || !s.zs_start)
        goto oom;
    s.n_ps = 0;
    for (int32_t g = 0; g < pb->n_gangs; g++) {
        s.ps0[g] = s.n_ps;
        s.n_ps += pb->gangs[g].n_pod_sets;
        const rf_gang_t *gg = &pb->gangs[g];
        keep_local[g] = opts->isolate >= 0 ? g != opts->isolate : opts->keep ? opts->keep[g] : false;
        for (int32_t p = 0; p < gg->n_pod_sets; p++) {
            const rf_pod_set_t *ps = &gg->pod_sets[p];
            /* what the program does not model stays as the incumbent has it:
             * slices whose ranks bound pods hold, bound pods outside the tree */
            if (ps->slice.size > 1 && ps->n_bound > 0)
                keep_local[g] = true;
            for (int32_t i = 0; i < ps->n_bound; i++)
                if (rf__tree_node_dom(&s.tree, ps->bound[i].node, s.L - 1) < 0)
                    keep_local[g] = true;
        }
        kept_adm[g] = opts->isolate >= 0 ? false : inc->gangs[g].admitted; /* isolated: the others are absent */
    }
    if (opts->isolate >= 0 && keep_local[opts->isolate])
        goto done; /* a gang the program does not model */
    s.ps0[pb->n_gangs] = s.n_ps;
    s.keep = keep_local;
    s.kept_admitted = kept_adm;
    s.xs_start = calloc((size_t)s.n_ps + 1, sizeof *s.xs_start);
    s.ps_dom_start = calloc((size_t)s.n_ps + 1, sizeof *s.ps_dom_start);
    s.sl_start = calloc((size_t)s.n_ps + 1, sizeof *s.sl_start);
    if (!s.xs_start || !s.ps_dom_start || !s.sl_start)
        goto oom;
    /* residual capacity: free minus the kept gangs' new pods */
    for (int32_t n = 0; n < s.N; n++)
        for (int32_t r = 0; r < s.R; r++) {
            int64_t a = pb->nodes[n].allocatable[r], u = pb->nodes[n].used[r];
            s.free[(int64_t)n * s.R + r] = a == RF_QTY_UNLIMITED ? RF_QTY_UNLIMITED : (a > u ? a - u : 0);
        }
    for (int32_t g = 0; g < pb->n_gangs; g++) {
        const rf_gang_t *gg = &pb->gangs[g];
        for (int32_t p = 0; p < gg->n_pod_sets; p++) {
            if (!s.keep[g])
                for (int32_t i = 0; i < gg->pod_sets[p].n_bound; i++)
                    bound_node[gg->pod_sets[p].bound[i].node] = true;
            if (!s.keep[g] || !kept_adm[g])
                continue;
            const rf_pod_set_answer_t *pa = &inc->gangs[g].pod_sets[p];
            for (int32_t i = 0; i < pa->n_placements; i++)
                for (int32_t r = 0; r < s.R; r++) {
                    int64_t *f = &s.free[(int64_t)pa->placements[i].node * s.R + r];
                    if (*f != RF_QTY_UNLIMITED)
                        *f -= (int64_t)pa->placements[i].count * gg->pod_sets[p].requests[r];
                }
        }
    }
    for (int32_t n = 0; n < s.N; n++)
        s.node_unit[n] = -1;
    rc = s_units(&s, opts->aggregate, bound_node);
    if (rc != RF_OK)
        goto oom;
    stats->n_units = s.n_units;
    rf__mip_init(&s.mip);
    int32_t n_stages = s_build(&s, &b);
    if (n_stages < 0) {
        if (s.mip.failed)
            goto oom;
        goto done; /* more priorities than stages: the incumbent stands */
    }
    stats->n_cols = s.mip.n_cols;
    stats->n_rows = s.mip.n_rows;
    stats->nnz = s.mip.nnz;
    xinc = malloc((size_t)(s.mip.n_cols + 1) * sizeof *xinc);
    if (!xinc)
        goto oom;
    bool have_inc = s_map_incumbent(&s, inc, xinc);
    rf__mip_stage_t stages[RF_MIP_MAX_STAGES];
    for (int32_t k = 0; k < n_stages; k++)
        stages[k] = (rf__mip_stage_t){.maximize = k + 1 < n_stages,
                                      .n = (int32_t)b.stage_n[k],
                                      .cols = b.stage_cols[k],
                                      .vals = b.stage_vals[k],
                                      .keep_tol = k + 1 < n_stages ? 0.5 : 1e-6};
    if (opts->isolate >= 0) {
        /* the gang alone, admitted: only its least penalty is asked */
        s.mip.lb[s.ycol[opts->isolate]] = 1;
        stages[0] = stages[n_stages - 1];
        n_stages = 1;
    }
    stats->build_ms = rf_now_ms() - t0;
    if (opts->deadline_ms - rf_now_ms() < 1.0)
        goto done; /* the build used the time: the incumbent stands */
    rf__mip_opts_t mo = {.time_limit_ms = opts->deadline_ms - rf_now_ms(),
                         .mip_gap = opts->mip_gap,
                         .node_budget = opts->node_budget,
                         .mem_limit_mb = opts->mem_limit_mb,
                         .incumbent = have_inc ? xinc : NULL,
                         .stop = opts->stop};
    double t1 = rf_now_ms();
    rf_error_t merr;
    rf_status mrc = rf__mip_solve(&s.mip, stages, n_stages, &mo, &res, &merr);
    stats->solve_ms = rf_now_ms() - t1;
    stats->nodes = res.nodes;
    if (mrc == RF_ENOMEM) {
        rc = rf_error_set(err, RF_ENOMEM, "", "%s", merr.message);
        goto done;
    }
    stats->glpk_failed = mrc != RF_OK;
    stats->solved = mrc == RF_OK && res.x != NULL;
    if (!res.x)
        goto done;
    stats->values_proven = res.n_stages_done >= n_stages - 1;
    for (int32_t k = 0; k + 1 < n_stages && k < res.n_stages_done; k++)
        stats->values_proven &= res.proven[k];
    stats->penalty_proven = stats->values_proven && res.n_stages_done == n_stages && res.proven[n_stages - 1];
    /* GLPK prunes within a relative tolerance (tol_obj, 1e-9 here): with a
     * value stage so large that one pod falls below it, nothing is proven */
    for (int32_t k = 0; k + 1 < n_stages; k++) {
        double most = 0;
        for (int64_t i = 0; i < b.stage_n[k]; i++)
            most += fabs(b.stage_vals[k][i]) * s.mip.ub[b.stage_cols[k][i]];
        if (most > 1e8)
            stats->values_proven = stats->penalty_proven = false;
    }
    /* do the program's values equal the incumbent's? (then its bounds hold for it) */
    if (have_inc) {
        stats->values_match_incumbent = true;
        for (int32_t k = 0; k + 1 < n_stages && k < res.n_stages_done; k++) {
            double v = 0;
            for (int64_t i = 0; i < b.stage_n[k]; i++)
                v += b.stage_vals[k][i] * xinc[b.stage_cols[k][i]];
            stats->values_match_incumbent &= fabs(v - res.obj[k]) < 0.5;
        }
    }
    if (res.n_stages_done == n_stages)
        stats->penalty_bound = fmax(0, res.bound[n_stages - 1]);
    if (opts->isolate >= 0)
        goto done; /* a bound is all that was asked */
    /* decode and judge */
    double t2 = rf_now_ms();
    ans = rf_answer_new(pb);
    if (!ans)
        goto oom;
    bool oom_flag = false;
    bool decoded = s_decode(&s, res.x, inc, ans, &oom_flag);
    if (oom_flag)
        goto oom;
    stats->decode_failed = !decoded;
    if (!decoded)
        stats->penalty_proven = false; /* no answer reaches the relaxation's optimum; its bounds stand */
    if (decoded && rf_answer_finish(ans) == RF_OK) {
        /* packing may need more hosts than the program counted: the bound
         * stays valid, but the optimum is proven only when they agree */
        double free_pen = 0;
        for (int32_t g = 0; g < pb->n_gangs; g++)
            if (!s.keep[g] && ans->gangs[g].admitted)
                free_pen += ans->gangs[g].penalty;
        if (res.n_stages_done == n_stages && fabs(free_pen - res.obj[n_stages - 1]) > 1e-6)
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
    stats->decode_ms = rf_now_ms() - t2;
    goto done;
oom:
    rc = rf_error_set(err, RF_ENOMEM, "", "out of memory in the integer program");
done:
    rf_answer_destroy(&ans);
    rf__mip_result_fini(&res);
    for (int32_t k = 0; k < RF_MIP_MAX_STAGES; k++) {
        free(b.stage_cols[k]);
        free(b.stage_vals[k]);
    }
    free(b.stamp);
    free(b.gen);
    if (!s.xs) /* s_build did not hand its lists over */
        free(b.xs.v);
    if (!s.hs)
        free(b.hs.v);
    if (!s.zs)
        free(b.zs.v);
    if (!s.ps_dom)
        free(b.psd.v);
    if (!s.sl)
        free(b.sl.v);
    free(xinc);
    free(keep_local);
    free(kept_adm);
    free(bound_node);
    s_ilp_fini(&s);
    return rc;
}
