/* solver/ilp_model.c: the integer program's model: units and the rows of
 * docs/ilp.md ("Units", "Variables", "Constraints", "Objective").
 *
 * Units: nodes with the same domain path above the host level, the same
 * free capacity and the same eligibility for every free pod set are one
 * unit with a count; nodes with bound pods of a free gang, and nodes with a
 * running gang that is or may be preempted (vnodes), are units of their
 * own. With `aggregate` off every node is its own unit and the program is
 * exact.
 *
 * The program is built gang by gang, in problem order: y, then per pod set
 * its x columns (capacity rows shared by the unit, except on vnodes), count
 * rows, pod-set domain rows and slice rows, then the gang's domain (z) and
 * host (h) columns; then the running gangs (a column q per possible victim,
 * each vnode's capacity per priority, the preemptor rows: docs/ilp.md rows
 * 8 and 9); the ordered-admission chains last. The stage objectives are
 * filled alongside: per priority, highest first, [the prefix (ordered),]
 * units, pods; the penalty last. Branching priorities: admission (y) first,
 * then the top level's domains, then the other domains. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "eligible.h"
#include "ilp_internal.h"
#include "rackfit/quantity.h"

/* ---------------------------------------------------------------- growable arrays */

typedef struct {
    rf__ilp_uc_t *v;
    int64_t n, cap;
} s_vec_t;

static bool s_push(s_vec_t *v, int32_t unit, int32_t col)
{
    if (v->n == v->cap) {
        int64_t nc = v->cap ? 2 * v->cap : 256;
        rf__ilp_uc_t *p = realloc(v->v, (size_t)nc * sizeof *p);
        if (!p)
            return false;
        v->v = p;
        v->cap = nc;
    }
    v->v[v->n++] = (rf__ilp_uc_t){unit, col};
    return true;
}

int64_t rf__ilp_fits(const int64_t *fr, int32_t R, const int64_t *req, int64_t cap)
{
    int64_t best = cap;
    for (int32_t r = 0; r < R; r++) {
        if (req[r] <= 0 || fr[r] == RF_QTY_UNLIMITED)
            continue;
        int64_t f = fr[r] / req[r];
        if (f < best)
            best = f;
    }
    return best;
}

int32_t rf__ilp_fit_node(const rf__ilp_t *s, int32_t n, const rf_pod_set_t *ps)
{
    return (int32_t)rf__ilp_fits(&s->vfree[(int64_t)n * s->R], s->R, ps->requests, INT32_MAX);
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

/* Eligibility of every node for every class of free pod sets: ok[e * N + n]. */
static uint8_t *s_eligibility(const rf__ilp_t *s, int32_t *n_cls_out)
{
    const rf_problem_t *pb = s->pb;
    const int32_t N = s->N;
    int32_t n_cls = 0;
    const rf_pod_set_t **cls = malloc((size_t)(s->n_ps + 1) * sizeof *cls);
    if (!cls)
        return NULL;
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
    uint8_t *ok = malloc((size_t)n_cls * (size_t)N + 1);
    if (ok)
        for (int32_t e = 0; e < n_cls; e++)
            for (int32_t n = 0; n < N; n++)
                ok[(int64_t)e * N + n] =
                    rf__tree_node_dom(&s->tree, n, s->L - 1) >= 0 && rf__node_admits_labelled(pb, n, cls[e]);
    free(cls);
    *n_cls_out = n_cls;
    return ok;
}

/* Are nodes m and n one unit? */
static bool s_same_unit(const rf__ilp_t *s, const uint8_t *ok, int32_t n_cls, int32_t gl, int32_t m, int32_t n)
{
    bool same = gl < 0 || rf__tree_node_dom(&s->tree, m, gl) == rf__tree_node_dom(&s->tree, n, gl);
    for (int32_t r = 0; same && r < s->R; r++)
        same = s->free[(int64_t)m * s->R + r] == s->free[(int64_t)n * s->R + r];
    for (int32_t e = 0; same && e < n_cls; e++)
        same = ok[(int64_t)e * s->N + m] == ok[(int64_t)e * s->N + n];
    return same;
}

rf_status rf__ilp_units(rf__ilp_t *s, bool aggregate, const bool *bound_node)
{
    const int32_t N = s->N;
    int32_t n_cls = 0;
    uint8_t *ok = s_eligibility(s, &n_cls);
    uint64_t *key = malloc((size_t)(N + 1) * sizeof *key);
    size_t cap = 16;
    while (cap < (size_t)N * 2 + 16)
        cap <<= 1;
    s_slot_t *tab = malloc(cap * sizeof *tab);
    int32_t *slot_unit = malloc(cap * sizeof *slot_unit);
    int32_t *count = calloc((size_t)N + 1, sizeof *count);
    rf_status rc = RF_ENOMEM;
    if (!ok || !key || !tab || !slot_unit || !count)
        goto done;
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
    for (size_t i = 0; i < cap; i++)
        tab[i].node = -1;
    s->n_units = 0;
    for (int32_t i = 0; i < s->tree.n_in_tree; i++) {
        int32_t n = s->tree.node_order[i];
        size_t j = key[n] & (cap - 1);
        int32_t u = -1;
        while (tab[j].node >= 0) {
            int32_t m = tab[j].node;
            if (tab[j].hash == key[n] && aggregate && !bound_node[n] && !bound_node[m] &&
                s_same_unit(s, ok, n_cls, gl, m, n)) {
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
    if (!s->units)
        goto done;
    int32_t pos = 0;
    for (int32_t u = 0; u < s->n_units; u++) {
        s->units[u].first = pos;
        pos += count[u];
    }
    for (int32_t i = 0; i < s->tree.n_in_tree; i++) {
        int32_t n = s->tree.node_order[i];
        rf__ilp_unit_t *u = &s->units[s->node_unit[n]];
        s->unit_nodes[u->first + u->count++] = n;
        u->group = gl >= 0 ? rf__tree_node_dom(&s->tree, n, gl) : -1;
    }
    rc = RF_OK;
done:
    free(ok);
    free(key);
    free(tab);
    free(slot_unit);
    free(count);
    return rc;
}

/* ---------------------------------------------------------------- building blocks */

/* The build's scratch state. */
typedef struct {
    s_vec_t xs, hs, zs, psd, sl;
    int32_t *stamp; /* [keysz] col per domain/unit for the current gang, valid where gen == now */
    uint32_t *gen;
    uint32_t now;
    int32_t keysz;
    int64_t prios[RF_MIP_MAX_STAGES]; /* the free gangs' priorities, highest first */
    int32_t n_prio, per;              /* stages per priority: [prefix,] units, pods */
    bool ordered;
    int32_t *cap_row; /* [n_units * R] capacity row of (unit, resource), -1 until used */
    double cost_sum;  /* sum of the level costs */
} s_build_t;

/* One gang's state while its rows are built. */
typedef struct {
    int32_t g, k; /* the gang, its priority's index */
    int32_t y, a; /* admitted; has new pods (= y unless it may be admitted empty) */
    int32_t pin_g[RF_MAX_LEVELS], pin_p[RF_MAX_LEVELS];
    bool broken;    /* bound pods already break a required level */
    int64_t x0, x1; /* its x columns: xs[x0, x1) */
    int64_t room;   /* new pods it may take */
    bool one_pod;   /* one pod, nothing bound: no penalty anywhere */
} s_gang_t;

/* The domain at level l of unit u (its first node's). */
static int32_t s_unit_dom(const rf__ilp_t *s, int32_t u, int32_t l)
{
    return rf__tree_node_dom(&s->tree, s->unit_nodes[s->units[u].first], l);
}

/* Is unit u inside the domains that bound pods pin (at the gang's and the
 * pod set's required levels)? */
static bool s_unit_allowed(const rf__ilp_t *s, const int32_t *pin_g, const int32_t *pin_p, int32_t u)
{
    for (int32_t l = 0; l < s->L; l++) {
        int32_t d = s_unit_dom(s, u, l);
        if ((pin_g[l] >= 0 && pin_g[l] != d) || (pin_p[l] >= 0 && pin_p[l] != d))
            return false;
    }
    return true;
}

static bool s_stage_add(rf__ilp_t *s, int32_t k, int32_t col, double val)
{
    if (val == 0)
        return true;
    if (s->stage_n[k] == s->stage_cap[k]) {
        int64_t nc = s->stage_cap[k] ? 2 * s->stage_cap[k] : 256;
        int32_t *c = realloc(s->stage_cols[k], (size_t)nc * sizeof *c);
        if (!c)
            return false;
        s->stage_cols[k] = c;
        double *v = realloc(s->stage_vals[k], (size_t)nc * sizeof *v);
        if (!v)
            return false;
        s->stage_vals[k] = v;
        s->stage_cap[k] = nc;
    }
    s->stage_cols[k][s->stage_n[k]] = col;
    s->stage_vals[k][s->stage_n[k]++] = val;
    return true;
}

/* The column of `key` (domain or unit) for the current gang, created on
 * first use and listed in `list`. */
static int32_t s_keyed(rf__ilp_t *s, s_build_t *b, int32_t key, double lb, double ub, s_vec_t *list)
{
    if (b->gen[key] == b->now)
        return b->stamp[key];
    int32_t col = rf__mip_col(&s->mip, lb, ub, true);
    b->gen[key] = b->now;
    b->stamp[key] = col;
    if (col >= 0 && !s_push(list, key, col))
        s->mip.failed = true;
    return col;
}

static void s_next_gen(s_build_t *b)
{
    if (++b->now == 0) {
        memset(b->gen, 0, (size_t)b->keysz * sizeof *b->gen);
        b->now = 1;
    }
}

/* Row: x-columns of list[a, b) whose unit lies in domain d at level l (all
 * when l < 0) with coefficient 1, plus `col` with coefficient `cv`. */
static void s_sum_row(rf__ilp_t *s, int32_t row, const rf__ilp_uc_t *xs, int64_t a, int64_t b, int32_t l, int32_t d,
                      int32_t col, double cv)
{
    for (int64_t i = a; i < b; i++)
        if (l < 0 || s_unit_dom(s, xs[i].unit, l) == d)
            rf__mip_coef(&s->mip, row, xs[i].col, 1);
    rf__mip_coef(&s->mip, row, col, cv);
}

/* Priority pr into the list (once); false when the stages would not hold it. */
static bool s_prio_add(s_build_t *b, int64_t pr)
{
    for (int32_t i = 0; i < b->n_prio; i++)
        if (b->prios[i] == pr)
            return true;
    if (b->n_prio == (RF_MIP_MAX_STAGES - 1) / b->per)
        return false;
    b->prios[b->n_prio++] = pr;
    return true;
}

/* The free gangs' priorities and those of running gangs that may be
 * preempted (their value counts at their priority), highest first; false
 * when they need more stages than the program holds. */
static bool s_priorities(rf__ilp_t *s, s_build_t *b)
{
    const rf_problem_t *pb = s->pb;
    b->ordered = pb->options.admission == RF_ADMIT_ORDERED && !s->isolating;
    b->per = b->ordered ? 3 : 2;
    b->n_prio = 0;
    for (int32_t g = 0; g < pb->n_gangs; g++)
        if (!s->keep[g] && !s_prio_add(b, pb->gangs[g].priority))
            return false;
    for (int32_t v = 0; v < pb->n_running && s->run_link; v++)
        if (s->qcol[v] == -2 && !s_prio_add(b, pb->running[v].priority))
            return false;
    for (int32_t i = 1; i < b->n_prio; i++) /* sort descending */
        for (int32_t j = i; j > 0 && b->prios[j] > b->prios[j - 1]; j--) {
            int64_t t = b->prios[j];
            b->prios[j] = b->prios[j - 1];
            b->prios[j - 1] = t;
        }
    s->n_stages = b->n_prio * b->per + 1;
    return true;
}

/* ---------------------------------------------------------------- a pod set */

/* Domains that bound pods pin, at or above `upto`, into pin; sets *broken
 * when bound pods already lie in two domains of one of those levels. */
static void s_pins(const rf__ilp_t *s, const rf_pod_set_t *ps, int32_t upto, int32_t *pin, bool *broken)
{
    for (int32_t bi = 0; bi < ps->n_bound; bi++)
        for (int32_t l = 0; l <= upto; l++) {
            int32_t d = rf__tree_node_dom(&s->tree, ps->bound[bi].node, l);
            *broken |= pin[l] >= 0 && pin[l] != d;
            pin[l] = d;
        }
}

/* The x column of pod set p of the gang on unit u, with its value and
 * capacity coefficients; -1 (no column) when the unit takes none of its
 * pods; -2 on ENOMEM. */
static int32_t s_x_column(rf__ilp_t *s, s_build_t *b, s_gang_t *gs, const rf_pod_set_t *ps, int32_t u)
{
    const rf_problem_t *pb = s->pb;
    const rf_gang_t *gg = &pb->gangs[gs->g];
    rf__mip_t *mip = &s->mip;
    int64_t room = ps->count - ps->n_bound_pods;
    int32_t slice = ps->slice.size > 1 ? ps->slice.size : 1;
    bool host_single = s->host_level && (ps->topology.required == s->L - 1 || gg->topology.required == s->L - 1);
    if (!s_unit_allowed(s, gs->pin_g, gs->pin_p, u))
        return -1;
    int32_t rep = s->unit_nodes[s->units[u].first];
    if ((s->node_allowed && !s->node_allowed[rep]) || !rf_node_admits(pb, rep, ps))
        return -1;
    int32_t f = rf__ilp_fit_node(s, rep, ps);
    if (f > room)
        f = (int32_t)room; /* no more pods than the pod set has: keeps coefficients small */
    if (slice > 1 && s->host_level && ps->slice.level == s->L - 1)
        f = f / slice * slice;
    if (f <= 0)
        return -1;
    int64_t ub = host_single ? f : (int64_t)f * s->units[u].count;
    if (ub > room)
        ub = room;
    int32_t col = rf__mip_col(mip, 0, (double)ub, true);
    if (col < 0 || !s_push(&b->xs, u, col))
        return -2;
    /* value: units, then pods */
    const int32_t vr = pb->options.value_resource;
    if (!s_stage_add(s, gs->k * b->per + b->per - 2, col, vr >= 0 ? (double)ps->requests[vr] : 0) ||
        !s_stage_add(s, gs->k * b->per + b->per - 1, col, 1))
        return -2;
    /* capacity rows, created on first use (a vnode's are per priority:
     * s_vnode_rows) */
    for (int32_t r = 0; r < s->R && !s->vnode[rep]; r++) {
        if (ps->requests[r] <= 0)
            continue;
        int64_t fr = s->free[(int64_t)rep * s->R + r];
        if (fr == RF_QTY_UNLIMITED)
            continue;
        int32_t *row = &b->cap_row[(int64_t)u * s->R + r];
        if (*row < 0)
            *row = rf__mip_row(mip, -RF_MIP_INF, (double)fr * s->units[u].count);
        rf__mip_coef(mip, *row, col, (double)ps->requests[r]);
    }
    return col;
}

/* Pod set p's x columns, count rows and the value of its bound pods. */
static bool s_pod_set_x(rf__ilp_t *s, s_build_t *b, s_gang_t *gs, int32_t p)
{
    const rf_pod_set_t *ps = &s->pb->gangs[gs->g].pod_sets[p];
    rf__mip_t *mip = &s->mip;
    const int32_t fp = s->ps0[gs->g] + p, y = gs->y;
    s->xs_start[fp] = b->xs.n;
    for (int32_t l = 0; l < RF_MAX_LEVELS; l++)
        gs->pin_p[l] = -1;
    s_pins(s, ps, ps->topology.required, gs->pin_p, &gs->broken);
    if (gs->broken)
        mip->ub[y] = 0; /* the gang cannot be admitted */
    int64_t room = ps->count - ps->n_bound_pods;
    for (int32_t u = 0; u < s->n_units && room > 0; u++)
        if (s_x_column(s, b, gs, ps, u) == -2)
            return false;
    s->xs_start[fp + 1] = b->xs.n;
    /* count: min*y <= B + sum x <= count*y */
    s_sum_row(s, rf__mip_row(mip, -RF_MIP_INF, 0), b->xs.v, s->xs_start[fp], b->xs.n, -1, -1, y, -(double)room);
    int64_t lo = ps->min_count - ps->n_bound_pods;
    if (lo > 0)
        s_sum_row(s, rf__mip_row(mip, 0, RF_MIP_INF), b->xs.v, s->xs_start[fp], b->xs.n, -1, -1, y, -(double)lo);
    /* value of the bound pods, earned with y */
    const int32_t vr = s->pb->options.value_resource;
    double bound_units = (double)ps->n_bound_pods * (vr >= 0 ? (double)ps->requests[vr] : 0);
    return s_stage_add(s, gs->k * b->per + b->per - 2, y, bound_units) &&
           s_stage_add(s, gs->k * b->per + b->per - 1, y, (double)ps->n_bound_pods);
}

/* A pod-set required level below the gang's: one z' per domain of it, x
 * only inside a chosen one, at most one chosen. */
static bool s_pod_set_domain(rf__ilp_t *s, s_build_t *b, s_gang_t *gs, int32_t p)
{
    const rf_gang_t *gg = &s->pb->gangs[gs->g];
    const rf_pod_set_t *ps = &gg->pod_sets[p];
    rf__mip_t *mip = &s->mip;
    const int32_t fp = s->ps0[gs->g] + p, Rg = gg->topology.required, Rp = ps->topology.required;
    const int64_t x0 = s->xs_start[fp], x1 = s->xs_start[fp + 1];
    const double room = (double)(ps->count - ps->n_bound_pods);
    s->ps_dom_start[fp] = b->psd.n;
    if (Rp > Rg && Rp < s->zl) {
        s_next_gen(b);
        for (int64_t i = x0; i < x1; i++)
            s_keyed(s, b, s_unit_dom(s, b->xs.v[i].unit, Rp), 0, 1, &b->psd);
        int32_t rsum = rf__mip_row(mip, -RF_MIP_INF, 1);
        for (int64_t j = s->ps_dom_start[fp]; j < b->psd.n; j++) {
            rf__mip_coef(mip, rsum, b->psd.v[j].col, 1);
            s_sum_row(s, rf__mip_row(mip, -RF_MIP_INF, 0), b->xs.v, x0, x1, Rp, b->psd.v[j].unit, b->psd.v[j].col,
                      -room);
        }
    } else if (Rp > Rg && Rp == s->L - 1 && s->host_level) {
        /* one node: at most one unit, and x <= fit (set with the column) */
        int32_t rsum = rf__mip_row(mip, -RF_MIP_INF, 1);
        for (int64_t i = x0; i < x1; i++) {
            int32_t zc = rf__mip_col(mip, 0, 1, true);
            if (!s_push(&b->psd, b->xs.v[i].unit, zc))
                return false;
            rf__mip_coef(mip, rsum, zc, 1);
            int32_t rl = rf__mip_row(mip, -RF_MIP_INF, 0);
            rf__mip_coef(mip, rl, b->xs.v[i].col, 1);
            rf__mip_coef(mip, rl, zc, -room);
        }
    }
    s->ps_dom_start[fp + 1] = b->psd.n;
    return true;
}

/* Slices: each slice-level domain (or, at the host level, each unit) holds
 * a whole number of slices. */
static bool s_pod_set_slices(rf__ilp_t *s, s_build_t *b, s_gang_t *gs, int32_t p)
{
    const rf_pod_set_t *ps = &s->pb->gangs[gs->g].pod_sets[p];
    rf__mip_t *mip = &s->mip;
    const int32_t fp = s->ps0[gs->g] + p;
    const int64_t x0 = s->xs_start[fp], x1 = s->xs_start[fp + 1];
    int32_t slice = ps->slice.size > 1 ? ps->slice.size : 1;
    s->sl_start[fp] = b->sl.n;
    if (slice > 1 && !(s->host_level && ps->slice.level == s->L - 1)) {
        s_next_gen(b);
        for (int64_t i = x0; i < x1; i++)
            s_keyed(s, b, s_unit_dom(s, b->xs.v[i].unit, ps->slice.level), 0, (double)(ps->count / slice), &b->sl);
        for (int64_t j = s->sl_start[fp]; j < b->sl.n; j++)
            s_sum_row(s, rf__mip_row(mip, 0, 0), b->xs.v, x0, x1, ps->slice.level, b->sl.v[j].unit, b->sl.v[j].col,
                      -(double)slice);
    } else if (slice > 1) {
        for (int64_t i = x0; i < x1; i++) {
            int32_t wc = rf__mip_col(mip, 0, (double)(ps->count / slice), true);
            if (!s_push(&b->sl, b->xs.v[i].unit, wc))
                return false;
            int32_t row = rf__mip_row(mip, 0, 0);
            rf__mip_coef(mip, row, b->xs.v[i].col, 1);
            rf__mip_coef(mip, row, wc, -(double)slice);
        }
    }
    s->sl_start[fp + 1] = b->sl.n;
    return true;
}

/* ---------------------------------------------------------------- a gang's domains and hosts */

/* A gang that can be admitted with no pod at all (every min_count 0,
 * nothing bound) has no domain then: its domain rows hang on `a`, "has new
 * pods" (a <= y, pods only with a), not on y. Otherwise y = 1 would force a
 * domain, and an empty admission (which can lengthen an ordered prefix)
 * would be cut from the program. */
static void s_gang_active(rf__ilp_t *s, const s_build_t *b, s_gang_t *gs)
{
    const rf_gang_t *gg = &s->pb->gangs[gs->g];
    rf__mip_t *mip = &s->mip;
    bool emptiable = true;
    for (int32_t p = 0; p < gg->n_pod_sets; p++)
        emptiable &= gg->pod_sets[p].min_count == 0 && gg->pod_sets[p].n_bound_pods == 0;
    gs->a = gs->y;
    if (emptiable && !gs->one_pod) {
        gs->a = rf__mip_col(mip, 0, 1, true);
        int32_t ra = rf__mip_row(mip, -RF_MIP_INF, 0); /* a <= y */
        rf__mip_coef(mip, ra, gs->a, 1);
        rf__mip_coef(mip, ra, gs->y, -1);
        for (int32_t p = 0; p < gg->n_pod_sets; p++) {
            int32_t fp = s->ps0[gs->g] + p;
            s_sum_row(s, rf__mip_row(mip, -RF_MIP_INF, 0), b->xs.v, s->xs_start[fp], s->xs_start[fp + 1], -1, -1, gs->a,
                      -(double)gg->pod_sets[p].count); /* pods only with a */
        }
    }
    s->acol[gs->g] = gs->a;
}

/* The link of domain column zc (domain d of level l) to the gang's x:
 * per x (tight) or one row for the domain with its most pods as M. */
static void s_domain_link(rf__ilp_t *s, s_build_t *b, const s_gang_t *gs, int32_t l, int32_t d, int32_t zc)
{
    rf__mip_t *mip = &s->mip;
    if (s->tight) {
        for (int64_t i = gs->x0; i < gs->x1; i++)
            if (s_unit_dom(s, b->xs.v[i].unit, l) == d) {
                int32_t rl = rf__mip_row(mip, -RF_MIP_INF, 0); /* z_d >= x / ub(x) */
                rf__mip_coef(mip, rl, b->xs.v[i].col, 1);
                rf__mip_coef(mip, rl, zc, -mip->ub[b->xs.v[i].col]);
            }
        return;
    }
    double M = 0;
    for (int64_t i = gs->x0; i < gs->x1; i++)
        if (s_unit_dom(s, b->xs.v[i].unit, l) == d)
            M += mip->ub[b->xs.v[i].col];
    if (M > (double)gs->room)
        M = (double)gs->room;
    s_sum_row(s, rf__mip_row(mip, -RF_MIP_INF, 0), b->xs.v, gs->x0, gs->x1, l, d, zc, -(M > 0 ? M : 1));
}

/* z per domain level: x inside d => z_d; sum z >= a (= 1 at the gang's
 * required level); z <= a; a bound pod's domain has z = y. */
static bool s_gang_domains(rf__ilp_t *s, s_build_t *b, const s_gang_t *gs)
{
    const rf_problem_t *pb = s->pb;
    const rf_gang_t *gg = &pb->gangs[gs->g];
    rf__mip_t *mip = &s->mip;
    s->zs_start[gs->g] = b->zs.n;
    for (int32_t l = 0; l < s->zl && !gs->one_pod; l++) {
        s_next_gen(b);
        int64_t z0 = b->zs.n;
        for (int64_t i = gs->x0; i < gs->x1; i++)
            s_keyed(s, b, s_unit_dom(s, b->xs.v[i].unit, l), 0, 1, &b->zs);
        for (int32_t p = 0; p < gg->n_pod_sets; p++)
            for (int32_t bi = 0; bi < gg->pod_sets[p].n_bound; bi++) {
                int32_t d = rf__tree_node_dom(&s->tree, gg->pod_sets[p].bound[bi].node, l);
                if (d < 0)
                    continue;
                int32_t zc = s_keyed(s, b, d, 0, 1, &b->zs);
                int32_t row = rf__mip_row(mip, 0, 0);
                rf__mip_coef(mip, row, zc, 1);
                rf__mip_coef(mip, row, gs->y, -1);
            }
        for (int64_t j = z0; j < b->zs.n; j++)
            rf__mip_prio(mip, b->zs.v[j].col, (uint8_t)(l == 0 ? 2 : 1));
        int32_t rsum = rf__mip_row(mip, 0, l == gg->topology.required ? 0 : RF_MIP_INF);
        rf__mip_coef(mip, rsum, gs->a, -1);
        for (int64_t j = z0; j < b->zs.n; j++) {
            int32_t zc = b->zs.v[j].col;
            rf__mip_coef(mip, rsum, zc, 1);
            s_domain_link(s, b, gs, l, b->zs.v[j].unit, zc);
            int32_t ry = rf__mip_row(mip, -RF_MIP_INF, 0); /* z <= a (a <= y) */
            rf__mip_coef(mip, ry, zc, 1);
            rf__mip_coef(mip, ry, gs->a, -1);
            if (!s_stage_add(s, s->n_stages - 1, zc, gg->bandwidth * pb->level_costs[l]))
                return false;
        }
    }
    s->zs_start[gs->g + 1] = b->zs.n;
    return true;
}

/* The rows of host column hc (unit u): x <= fit * h per pod set, and for a
 * gang of several pod sets their requests together within h nodes. */
static void s_host_rows(rf__ilp_t *s, s_build_t *b, const s_gang_t *gs, int32_t u, int32_t hc)
{
    const rf_gang_t *gg = &s->pb->gangs[gs->g];
    rf__mip_t *mip = &s->mip;
    int32_t rep = s->unit_nodes[s->units[u].first];
    int32_t rres[64];
    for (int32_t r = 0; r < s->R && r < 64; r++)
        rres[r] = -1;
    for (int32_t p = 0; p < gg->n_pod_sets; p++) {
        const rf_pod_set_t *ps = &gg->pod_sets[p];
        int32_t fp = s->ps0[gs->g] + p;
        for (int64_t i = s->xs_start[fp]; i < s->xs_start[fp + 1]; i++) {
            if (b->xs.v[i].unit != u)
                continue;
            int32_t rowf = rf__mip_row(mip, -RF_MIP_INF, 0);
            int64_t f = rf__ilp_fit_node(s, rep, ps);
            if (f > ps->count - ps->n_bound_pods)
                f = ps->count - ps->n_bound_pods;
            rf__mip_coef(mip, rowf, b->xs.v[i].col, 1);
            rf__mip_coef(mip, rowf, hc, -(double)f);
            if (gg->n_pod_sets <= 1)
                continue;
            for (int32_t r = 0; r < s->R && r < 64; r++) {
                int64_t fr = s->vfree[(int64_t)rep * s->R + r];
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

/* h per unit at the host level: nodes of the unit holding the gang's pods;
 * sum h >= a (= 1 with a host requirement); h <= c * a; bound nodes h = y. */
static bool s_gang_hosts(rf__ilp_t *s, s_build_t *b, const s_gang_t *gs)
{
    const rf_problem_t *pb = s->pb;
    const rf_gang_t *gg = &pb->gangs[gs->g];
    rf__mip_t *mip = &s->mip;
    s->hs_start[gs->g] = b->hs.n;
    if (s->host_level && !gs->one_pod) {
        s_next_gen(b);
        for (int64_t i = gs->x0; i < gs->x1; i++) {
            int32_t u = b->xs.v[i].unit;
            s_keyed(s, b, u, 0, s->units[u].count, &b->hs);
        }
        for (int32_t p = 0; p < gg->n_pod_sets; p++)
            for (int32_t bi = 0; bi < gg->pod_sets[p].n_bound; bi++) {
                int32_t u = s->node_unit[gg->pod_sets[p].bound[bi].node];
                if (u < 0)
                    continue;
                int32_t hc = s_keyed(s, b, u, 0, s->units[u].count, &b->hs);
                int32_t row = rf__mip_row(mip, 0, 0); /* a bound node is used: h = y */
                rf__mip_coef(mip, row, hc, 1);
                rf__mip_coef(mip, row, gs->y, -1);
            }
        int32_t rsum = rf__mip_row(mip, 0, gg->topology.required == s->L - 1 ? 0 : RF_MIP_INF); /* sum h >= a */
        rf__mip_coef(mip, rsum, gs->a, -1);
        for (int64_t j = s->hs_start[gs->g]; j < b->hs.n; j++) {
            int32_t u = b->hs.v[j].unit, hc = b->hs.v[j].col;
            rf__mip_coef(mip, rsum, hc, 1);
            int32_t ry = rf__mip_row(mip, -RF_MIP_INF, 0); /* h <= c*a */
            rf__mip_coef(mip, ry, hc, 1);
            rf__mip_coef(mip, ry, gs->a, -(double)s->units[u].count);
            if (!s_stage_add(s, s->n_stages - 1, hc, gg->bandwidth * pb->level_costs[s->L - 1]))
                return false;
            s_host_rows(s, b, gs, u, hc);
        }
    }
    s->hs_start[gs->g + 1] = b->hs.n;
    return true;
}

/* ---------------------------------------------------------------- gangs */

/* The empty ranges of a kept gang. */
static void s_kept_gang(rf__ilp_t *s, s_build_t *b, int32_t g)
{
    for (int32_t p = 0; p <= s->pb->gangs[g].n_pod_sets; p++) {
        s->xs_start[s->ps0[g] + p] = b->xs.n;
        s->ps_dom_start[s->ps0[g] + p] = b->psd.n;
        s->sl_start[s->ps0[g] + p] = b->sl.n;
    }
    s->hs_start[g] = s->hs_start[g + 1] = b->hs.n;
    s->zs_start[g] = s->zs_start[g + 1] = b->zs.n;
}

/* Every row and column of free gang g. */
static bool s_gang(rf__ilp_t *s, s_build_t *b, int32_t g)
{
    const rf_gang_t *gg = &s->pb->gangs[g];
    s_gang_t gs = {.g = g, .k = 0, .y = s->ycol[g], .broken = false};
    while (b->prios[gs.k] != gg->priority)
        gs.k++;
    for (int32_t l = 0; l < RF_MAX_LEVELS; l++)
        gs.pin_g[l] = -1;
    for (int32_t p = 0; p < gg->n_pod_sets; p++)
        s_pins(s, &gg->pod_sets[p], gg->topology.required, gs.pin_g, &gs.broken);
    gs.x0 = b->xs.n;
    for (int32_t p = 0; p < gg->n_pod_sets; p++)
        if (!s_pod_set_x(s, b, &gs, p) || !s_pod_set_domain(s, b, &gs, p) || !s_pod_set_slices(s, b, &gs, p))
            return false;
    gs.x1 = b->xs.n;
    gs.room = 0;
    gs.one_pod = true;
    for (int32_t p = 0; p < gg->n_pod_sets; p++) {
        gs.room += gg->pod_sets[p].count - gg->pod_sets[p].n_bound_pods;
        gs.one_pod &= gg->pod_sets[p].n_bound_pods == 0;
    }
    gs.one_pod &= gs.room <= 1; /* one pod has no penalty wherever it goes: no z, no h */
    s_gang_active(s, b, &gs);
    if (!s_gang_domains(s, b, &gs) || !s_gang_hosts(s, b, &gs))
        return false;
    /* the penalty's constant part: - sum of costs, with a */
    if (!gs.one_pod && !s_stage_add(s, s->n_stages - 1, gs.a, -gg->bandwidth * b->cost_sum))
        return false;
    /* ordered: the prefix stage counts y */
    return !b->ordered || s_stage_add(s, gs.k * b->per, gs.y, 1);
}

/* Ordered admission: within each priority, y is non-increasing in problem
 * order; a kept gang's decision is a constant in the chain. */
static void s_ordered(rf__ilp_t *s, const s_build_t *b)
{
    const rf_problem_t *pb = s->pb;
    rf__mip_t *mip = &s->mip;
    for (int32_t k = 0; k < b->n_prio; k++) {
        int32_t prev = -1;
        bool closed = false; /* a kept gang before was rejected */
        for (int32_t g = 0; g < pb->n_gangs; g++) {
            if (pb->gangs[g].priority != b->prios[k])
                continue;
            if (s->keep[g]) {
                if (!s->kept_admitted[g])
                    closed = true;
                else /* every earlier free gang must be admitted */
                    for (int32_t e = 0; e < g; e++)
                        if (pb->gangs[e].priority == b->prios[k] && !s->keep[e])
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
}

/* ---------------------------------------------------------------- running gangs */

/* An x column on a vnode, with its gang and pod set. */
typedef struct {
    int32_t col, gang, ps;
} s_vx_t;

/* A placement of a running gang that is or may be preempted, on a vnode. */
typedef struct {
    int32_t run, ps, count;
} s_vr_t;

/* Per vnode: its x columns, the running placements and the kept gangs'
 * new pods there ([start[n], start[n+1]) of each list, by node). */
typedef struct {
    int64_t *xs_at, *rs_at, *ks_at; /* [N + 1] */
    s_vx_t *vx;
    s_vr_t *vr;
    int32_t *kept; /* indices into s->kept_on_v */
    int64_t *prios;
    int32_t *stamp; /* [N] */
} s_vidx_t;

static void s_vidx_fini(s_vidx_t *v)
{
    free(v->xs_at);
    free(v->rs_at);
    free(v->ks_at);
    free(v->vx);
    free(v->vr);
    free(v->kept);
    free(v->prios);
    free(v->stamp);
}

/* Running placements to index: of gangs with a column or fixed preempted. */
static bool s_vr_counts(const rf__ilp_t *s, int32_t i)
{
    return s->qcol[i] >= 0 || s->qfix[i];
}

/* The index of every vnode's columns and placements (counting sort by node). */
static bool s_vidx(const rf__ilp_t *s, const s_build_t *b, s_vidx_t *v)
{
    const rf_problem_t *pb = s->pb;
    const size_t N1 = (size_t)s->N + 1;
    v->xs_at = calloc(N1 + 1, sizeof *v->xs_at);
    v->rs_at = calloc(N1 + 1, sizeof *v->rs_at);
    v->ks_at = calloc(N1 + 1, sizeof *v->ks_at);
    v->prios = malloc(((size_t)pb->n_gangs + 1) * sizeof *v->prios);
    v->stamp = calloc(N1, sizeof *v->stamp);
    if (!v->xs_at || !v->rs_at || !v->ks_at || !v->prios || !v->stamp)
        return false;
    for (int32_t pass = 0; pass < 2; pass++) {
        for (int32_t g = 0; g < pb->n_gangs; g++)
            for (int32_t p = 0; !s->keep[g] && p < pb->gangs[g].n_pod_sets; p++) {
                int32_t fp = s->ps0[g] + p;
                for (int64_t i = s->xs_start[fp]; i < s->xs_start[fp + 1]; i++) {
                    int32_t n = s->unit_nodes[s->units[b->xs.v[i].unit].first];
                    if (!s->vnode[n])
                        continue;
                    if (pass == 0)
                        v->xs_at[n + 1]++;
                    else
                        v->vx[v->xs_at[n]++] = (s_vx_t){b->xs.v[i].col, g, p};
                }
            }
        for (int32_t i = 0; i < pb->n_running; i++)
            for (int32_t j = 0; s_vr_counts(s, i) && j < pb->running[i].n_pod_sets; j++)
                for (int32_t k = 0; k < pb->running[i].pod_sets[j].n_placements; k++) {
                    const rf_run_placement_t *pl = &pb->running[i].pod_sets[j].placements[k];
                    if (pass == 0)
                        v->rs_at[pl->node + 1]++;
                    else
                        v->vr[v->rs_at[pl->node]++] = (s_vr_t){i, j, pl->count};
                }
        for (int64_t k = 0; k < s->n_kept_on_v; k++) {
            int32_t n = s->kept_on_v[k].node;
            if (pass == 0)
                v->ks_at[n + 1]++;
            else
                v->kept[v->ks_at[n]++] = (int32_t)k;
        }
        if (pass == 0) {
            for (int32_t n = 0; n < s->N; n++) {
                v->xs_at[n + 1] += v->xs_at[n];
                v->rs_at[n + 1] += v->rs_at[n];
                v->ks_at[n + 1] += v->ks_at[n];
            }
            v->vx = malloc(((size_t)v->xs_at[s->N] + 1) * sizeof *v->vx);
            v->vr = malloc(((size_t)v->rs_at[s->N] + 1) * sizeof *v->vr);
            v->kept = malloc(((size_t)v->ks_at[s->N] + 1) * sizeof *v->kept);
            if (!v->vx || !v->vr || !v->kept)
                return false;
        }
    }
    /* the second pass left each start at the next node's: shift back */
    for (int32_t n = s->N; n > 0; n--) {
        v->xs_at[n] = v->xs_at[n - 1];
        v->rs_at[n] = v->rs_at[n - 1];
        v->ks_at[n] = v->ks_at[n - 1];
    }
    v->xs_at[0] = v->rs_at[0] = v->ks_at[0] = 0;
    return true;
}

/* A column q per running gang that may be preempted; kept, it is worth its
 * value at its priority and its penalty, so q carries them negated. */
static bool s_running_cols(rf__ilp_t *s, const s_build_t *b)
{
    const rf_problem_t *pb = s->pb;
    for (int32_t i = 0; i < pb->n_running; i++) {
        if (s->qcol[i] != -2)
            continue;
        const rf_running_t *run = &pb->running[i];
        int32_t col = rf__mip_col(&s->mip, 0, 1, true);
        if (col < 0)
            return false;
        rf__mip_prio(&s->mip, col, 3); /* decided with admission */
        s->qcol[i] = col;
        if (!s->run_link)
            continue; /* isolated: a relaxation, no objective of its own */
        int32_t k = 0;
        while (b->prios[k] != run->priority)
            k++;
        if (!s_stage_add(s, k * b->per + b->per - 2, col, -(double)run->units) ||
            !s_stage_add(s, k * b->per + b->per - 1, col, -(double)run->pods) ||
            !s_stage_add(s, s->n_stages - 1, col, -run->penalty))
            return false;
    }
    return true;
}

/* The distinct priorities of new pods on vnode n (free gangs' columns and
 * kept gangs' pods), into v->prios; their number. */
static void s_prio_once(int64_t *prios, int32_t *np, int32_t cap, int64_t pr)
{
    for (int32_t j = 0; j < *np; j++)
        if (prios[j] == pr)
            return;
    if (*np < cap)
        prios[(*np)++] = pr;
}

static int32_t s_vnode_prios(const rf__ilp_t *s, const s_vidx_t *v, int32_t n)
{
    const rf_problem_t *pb = s->pb;
    int32_t np = 0;
    for (int64_t i = v->xs_at[n]; i < v->xs_at[n + 1]; i++)
        s_prio_once(v->prios, &np, pb->n_gangs, pb->gangs[v->vx[i].gang].priority);
    for (int64_t i = v->ks_at[n]; i < v->ks_at[n + 1]; i++)
        s_prio_once(v->prios, &np, pb->n_gangs, pb->gangs[s->kept_on_v[v->kept[i]].gang].priority);
    return np;
}

/* "New pods of priority <= p on vnode n that request resource r" (delta,
 * binary): each such x <= ub(x) * delta. One per overcommitted resource: a
 * pod that asks nothing of r must not make r's row bind (a shared delta
 * did, and cut off feasible answers). */
static int32_t s_vnode_delta(rf__ilp_t *s, const s_vidx_t *v, int32_t n, int64_t p, int32_t r)
{
    const rf_problem_t *pb = s->pb;
    int32_t d = rf__mip_col(&s->mip, 0, 1, true);
    if (d >= 0 && s->n_deltas == s->cap_deltas) { /* listed for the incumbent's vector */
        int64_t nc = s->cap_deltas ? 2 * s->cap_deltas : 16;
        rf__ilp_delta_t *q = realloc(s->deltas, (size_t)nc * sizeof *q);
        if (!q) {
            s->mip.failed = true;
            return -1;
        }
        s->deltas = q;
        s->cap_deltas = nc;
    }
    if (d >= 0)
        s->deltas[s->n_deltas++] = (rf__ilp_delta_t){d, n, r, p};
    for (int64_t i = v->xs_at[n]; d >= 0 && i < v->xs_at[n + 1]; i++) {
        const rf_gang_t *gg = &pb->gangs[v->vx[i].gang];
        if (gg->priority > p || gg->pod_sets[v->vx[i].ps].requests[r] <= 0)
            continue;
        int32_t row = rf__mip_row(&s->mip, -RF_MIP_INF, 0);
        rf__mip_coef(&s->mip, row, v->vx[i].col, 1);
        rf__mip_coef(&s->mip, row, d, -s->mip.ub[v->vx[i].col]);
    }
    return d;
}

/* The row of vnode n, priority p, resource r (s_vnode_rows). */
static void s_vnode_row(rf__ilp_t *s, const s_vidx_t *v, int32_t n, int64_t p, int32_t r)
{
    const rf_problem_t *pb = s->pb;
    const rf_node_t *node = &pb->nodes[n];
    int64_t base = node->allocatable[r] - node->used[r], kept = 0;
    bool any = false;
    for (int64_t i = v->rs_at[n]; i < v->rs_at[n + 1]; i++)
        if (s->qcol[v->vr[i].run] < 0 && pb->running[v->vr[i].run].priority < p)
            base += (int64_t)v->vr[i].count * pb->running[v->vr[i].run].pod_sets[v->vr[i].ps].requests[r];
    for (int64_t i = v->ks_at[n]; i < v->ks_at[n + 1]; i++) {
        const rf__ilp_kept_t *kp = &s->kept_on_v[v->kept[i]];
        if (pb->gangs[kp->gang].priority <= p)
            kept += (int64_t)kp->count * pb->gangs[kp->gang].pod_sets[kp->ps].requests[r];
    }
    /* the most the new pods of priority <= p can ask here, saturating at
     * INT64_MAX (requests reach 2^62: a double sum there is not exact) */
    int64_t most = 0;
    for (int64_t i = v->xs_at[n]; i < v->xs_at[n + 1]; i++) {
        int64_t req = pb->gangs[v->vx[i].gang].pod_sets[v->vx[i].ps].requests[r];
        if (pb->gangs[v->vx[i].gang].priority <= p && req > 0) {
            any = true;
            double ub = s->mip.ub[v->vx[i].col];
            int64_t c = ub >= (double)INT32_MAX ? INT32_MAX : (int64_t)ub, ask;
            if (__builtin_mul_overflow(req, c, &ask) || __builtin_add_overflow(most, ask, &most))
                most = INT64_MAX;
        }
    }
    if (!any && kept == 0)
        return;
    /* overcommitted with no kept pods: the row binds only with new pods */
    bool gated = base < 0 && kept == 0;
    if (!gated && most <= base - kept)
        return; /* it cannot bind even with nothing freed */
    int32_t delta = gated ? s_vnode_delta(s, v, n, p, r) : -1;
    if (gated && delta < 0)
        return; /* ENOMEM: mip.failed says so */
    int32_t row = rf__mip_row(&s->mip, -RF_MIP_INF, gated ? 0 : (double)(base - kept));
    if (gated)
        rf__mip_coef(&s->mip, row, delta, (double)-base);
    for (int64_t i = v->xs_at[n]; i < v->xs_at[n + 1]; i++) {
        const rf_gang_t *gg = &pb->gangs[v->vx[i].gang];
        if (gg->priority <= p && gg->pod_sets[v->vx[i].ps].requests[r] > 0)
            rf__mip_coef(&s->mip, row, v->vx[i].col, (double)gg->pod_sets[v->vx[i].ps].requests[r]);
    }
    /* a gang's pod sets on one node are consecutive (the index is stable):
     * one coefficient for their sum */
    for (int64_t i = v->rs_at[n]; i < v->rs_at[n + 1];) {
        int32_t ri = v->vr[i].run;
        const rf_running_t *run = &pb->running[ri];
        int64_t f = 0;
        for (; i < v->rs_at[n + 1] && v->vr[i].run == ri; i++)
            f += (int64_t)v->vr[i].count * run->pod_sets[v->vr[i].ps].requests[r];
        if (s->qcol[ri] >= 0 && run->priority < p && f > 0)
            rf__mip_coef(&s->mip, row, s->qcol[ri], -(double)f);
    }
}

/* Capacity on vnode n, per priority (PLACEMENT-MODEL.md: for every
 * priority p of new pods there, those of priority <= p fit in
 * max(0, allocatable - used + freed(< p))): for each such p and resource,
 *   sum_{free g, prio <= p} req * x  -  sum_{q of prio < p} F * q
 *     <= allocatable - used + F(fixed preempted, prio < p) - K(<= p)
 * with F what a running gang uses there and K the kept gangs' new pods.
 * Where the right side without q is negative (used above allocatable) and
 * no kept pods are there, max(0, ...) is made exact by an indicator delta
 * of the new pods that request r (one per node, priority and resource):
 * sum req * x - sum F * q + |base| * delta <= 0. */
static void s_vnode_rows(rf__ilp_t *s, const s_vidx_t *v, int32_t n)
{
    const rf_node_t *node = &s->pb->nodes[n];
    int32_t np = s_vnode_prios(s, v, n);
    for (int32_t a = 0; a < np; a++)
        for (int32_t r = 0; r < s->R; r++)
            if (node->allocatable[r] != RF_QTY_UNLIMITED)
                s_vnode_row(s, v, n, v->prios[a], r);
}

/* Preemptors: a running gang is preempted only when an admitted gang of
 * higher priority puts a new pod on one of its nodes,
 *   q_v <= sum of x of free gangs of higher priority on v's nodes
 * (x is integer: one pod makes it 1), unless a kept gang already does
 * (qkept); with no such column q_v = 0. A gang fixed preempted needs the
 * sum >= 1 instead. */
static void s_link_rows(rf__ilp_t *s, s_vidx_t *v)
{
    const rf_problem_t *pb = s->pb;
    for (int32_t i = 0; i < pb->n_running; i++) {
        if (!s_vr_counts(s, i) || s->qkept[i])
            continue;
        const rf_running_t *run = &pb->running[i];
        int32_t row = -1, terms = 0;
        for (int32_t j = 0; j < run->n_pod_sets; j++)
            for (int32_t k = 0; k < run->pod_sets[j].n_placements; k++) {
                int32_t n = run->pod_sets[j].placements[k].node;
                if (v->stamp[n] == i + 1)
                    continue; /* a node of two of its pod sets: once */
                v->stamp[n] = i + 1;
                for (int64_t a = v->xs_at[n]; a < v->xs_at[n + 1]; a++) {
                    if (pb->gangs[v->vx[a].gang].priority <= run->priority)
                        continue;
                    if (row < 0)
                        row = s->qcol[i] >= 0 ? rf__mip_row(&s->mip, -RF_MIP_INF, 0)
                                              : rf__mip_row(&s->mip, 1, RF_MIP_INF);
                    rf__mip_coef(&s->mip, row, v->vx[a].col, s->qcol[i] >= 0 ? -1 : 1);
                    terms++;
                }
            }
        if (s->qcol[i] >= 0) {
            if (terms == 0)
                s->mip.ub[s->qcol[i]] = 0; /* nobody could preempt it */
            else
                rf__mip_coef(&s->mip, row, s->qcol[i], 1);
        } else if (terms == 0) {
            /* fixed preempted (its room counted freed in row 8), and no
             * column here nor kept gang is a preemptor: every answer of
             * this run would preempt it for nothing, which rf_check
             * refuses. Not reached from a checked incumbent (its
             * preemptor is kept, or free with columns on its nodes); the
             * run is skipped (rf__ilp_build: RF_EINVAL) rather than
             * solved for an answer that must be set aside */
            s->orphan_victim = true;
        }
    }
}

/* Would one more step, as long as the longest so far (*worst, updated
 * from the step that began at `t0`), end past build_deadline? The build
 * gives up before it rather than after: a step's arrays may double, and on
 * the simulator's rounds one gang's build then took up to 19 ms, nearly all
 * of it the page faults of the new memory. */
static bool s_late(const rf__ilp_t *s, double t0, double *worst)
{
    double now = rf_now_ms();
    *worst = fmax(*worst, now - t0);
    return now + *worst > s->build_deadline;
}

/* Every row and column of the running gangs; false on ENOMEM, or with *late when
 * the next node's rows would end past build_deadline (s_late, at every node:
 * on the simulator's rounds these rows were most of the build). */
static bool s_running_rows(rf__ilp_t *s, const s_build_t *b, bool *late)
{
    bool any = false;
    for (int32_t i = 0; i < s->pb->n_running; i++)
        any |= s->qcol[i] == -2 || s->qfix[i];
    if (!any)
        return true;
    s_vidx_t v;
    memset(&v, 0, sizeof v);
    bool ok = s_running_cols(s, b) && s_vidx(s, b, &v);
    double worst = 0;
    for (int32_t n = 0; ok && !*late && n < s->N; n++) {
        if (!s->vnode[n])
            continue;
        double t0 = rf_now_ms();
        s_vnode_rows(s, &v, n);
        *late = s_late(s, t0, &worst);
    }
    if (ok && !*late && s->run_link)
        s_link_rows(s, &v);
    s_vidx_fini(&v);
    return ok && !*late;
}

rf_status rf__ilp_build(rf__ilp_t *s)
{
    const rf_problem_t *pb = s->pb;
    s_build_t b;
    memset(&b, 0, sizeof b);
    b.keysz = (s->tree.n_domains > s->n_units ? s->tree.n_domains : s->n_units) + 1;
    b.stamp = malloc((size_t)b.keysz * sizeof *b.stamp);
    b.gen = calloc((size_t)b.keysz, sizeof *b.gen);
    b.cap_row = malloc((size_t)(s->n_units + 1) * (size_t)s->R * sizeof *b.cap_row);
    rf_status rc = RF_ENOMEM;
    if (!b.stamp || !b.gen || !b.cap_row)
        goto done;
    for (int64_t i = 0; i < (int64_t)s->n_units * s->R; i++)
        b.cap_row[i] = -1;
    for (int32_t l = 0; l < s->L; l++)
        b.cost_sum += pb->level_costs[l];
    if (!s_priorities(s, &b)) {
        rc = RF_EINVAL; /* more stages than the program holds */
        goto done;
    }
    /* y for every free gang first (ordered chains link them) */
    for (int32_t g = 0; g < pb->n_gangs; g++) {
        s->ycol[g] = s->keep[g] ? -1 : rf__mip_col(&s->mip, 0, 1, true);
        rf__mip_prio(&s->mip, s->ycol[g], 3); /* admission decides first */
    }
    double worst = 0;
    for (int32_t g = 0; g < pb->n_gangs; g++) {
        double t0 = rf_now_ms();
        if (s->keep[g])
            s_kept_gang(s, &b, g);
        else if (!s_gang(s, &b, g))
            goto done;
        if (s_late(s, t0, &worst)) {
            rc = RF_EINVAL; /* the build would end past the deadline: the incumbent stands */
            goto done;
        }
    }
    bool late = false;
    if (!s_running_rows(s, &b, &late) || rf_now_ms() > s->build_deadline) {
        if (late || rf_now_ms() > s->build_deadline)
            rc = RF_EINVAL; /* the deadline passed: the incumbent stands */
        goto done;          /* else out of memory */
    }
    if (b.ordered)
        s_ordered(s, &b);
    rc = s->mip.failed ? RF_ENOMEM : s->orphan_victim ? RF_EINVAL : RF_OK;
done:
    /* the lists belong to s from here, whatever happened */
    s->xs = b.xs.v;
    s->hs = b.hs.v;
    s->zs = b.zs.v;
    s->ps_dom = b.psd.v;
    s->sl = b.sl.v;
    free(b.stamp);
    free(b.gen);
    free(b.cap_row);
    return rc;
}
