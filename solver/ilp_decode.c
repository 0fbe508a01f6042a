/* solver/ilp_decode.c: between answers and the integer program's vectors
 * (docs/ilp.md, "From units to nodes").
 *
 * - rf__ilp_map_incumbent: an answer's placements of the free gangs as a
 *   vector of the program's columns, handed to GLPK as its first solution;
 * - rf__ilp_decode: a solution as an answer. Kept gangs are copied from the
 *   incumbent; each free gang's demands (x > 0) are packed unit by unit,
 *   largest pod first (first-fit decreasing), each onto the nodes its gang
 *   already uses, then by best fit; what a unit cannot hold (its summed
 *   capacity is a relaxation of per-node capacity) spills onto other nodes
 *   of the same deepest-z-level domain (never onto a node with victims,
 *   whose per-priority rows are exact: it takes exactly its demands).
 *   Running gangs are preempted where the solution's q is 1, or as the run
 *   fixed them. Placements are laid out in tree order, so consecutive ranks
 *   share a host, then a rack. The caller checks the answer (rf_check)
 *   before it trusts it. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ilp_internal.h"
#include "rackfit/quantity.h"

/* ---------------------------------------------------------------- the incumbent as a vector */

/* Index of `key` in list[a, b) (linear: ranges are per gang or pod set). */
static int64_t s_find(const rf__ilp_uc_t *list, int64_t a, int64_t b, int32_t key)
{
    for (int64_t i = a; i < b; i++)
        if (list[i].unit == key)
            return i;
    return -1;
}

/* x for the incumbent's placements of the free gangs; false when they do not
 * map onto the program's columns (then no incumbent is given). */
bool rf__ilp_map_incumbent(const rf__ilp_t *s, const rf_answer_t *inc, double *x)
{
    const rf_problem_t *pb = s->pb;
    memset(x, 0, (size_t)s->mip.n_cols * sizeof *x);
    for (int32_t i = 0; i < pb->n_running; i++)
        if (s->qcol[i] >= 0)
            x[s->qcol[i]] = inc->running[i].preempted;
    /* row 8's indicators: new pods of the free gangs of priority <= k there
     * that request the indicator's resource */
    for (int64_t k = 0; k < s->n_deltas; k++)
        for (int32_t g = 0; g < pb->n_gangs && x[s->deltas[k].col] == 0; g++) {
            if (s->keep[g] || !inc->gangs[g].admitted || pb->gangs[g].priority > s->deltas[k].prio)
                continue;
            for (int32_t p = 0; p < pb->gangs[g].n_pod_sets; p++)
                for (int32_t i = 0; pb->gangs[g].pod_sets[p].requests[s->deltas[k].res] > 0 &&
                                    i < inc->gangs[g].pod_sets[p].n_placements;
                     i++)
                    if (inc->gangs[g].pod_sets[p].placements[i].node == s->deltas[k].node &&
                        inc->gangs[g].pod_sets[p].placements[i].count > 0)
                        x[s->deltas[k].col] = 1;
        }
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
static int64_t s_room(const rf__ilp_t *s, const int64_t *nfree, int32_t n, const rf_pod_set_t *ps, int32_t chunk)
{
    return rf__ilp_fits(&nfree[(int64_t)n * s->R], s->R, ps->requests, INT64_MAX) / chunk * chunk;
}

static void s_take(const rf__ilp_t *s, int64_t *nfree, int32_t n, const rf_pod_set_t *ps, int64_t k)
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

static int32_t s_chunk(const rf__ilp_t *s, const rf_pod_set_t *ps)
{
    return ps->slice.size > 1 && s->host_level && ps->slice.level == s->L - 1 ? ps->slice.size : 1;
}

static bool s_one_node(const rf__ilp_t *s, int32_t g, int32_t p)
{
    const rf_gang_t *gg = &s->pb->gangs[g];
    return s->host_level && (gg->topology.required == s->L - 1 || gg->pod_sets[p].topology.required == s->L - 1);
}

/* Place what is left of one demand on the nodes of [a, b) (tree
 * positions), only those of unit `only_unit` when it is >= 0: first the
 * nodes the gang already uses, then by best fit (the node with the least
 * room that still takes every remaining pod, else the roomiest). Pods that
 * must share one node go whole to one node. False only on ENOMEM. */
static bool s_place(const rf__ilp_t *s, int64_t *nfree, const s_demand_t *dm, s_plist_t *lists, int32_t a, int32_t b,
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
                    (only_unit < 0 && s->vnode[n]) || /* a vnode's rows are exact: nothing spills there */
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

/* The decoded placements (lists, per flattened pod set) as the answer:
 * kept gangs as the incumbent has them, rejected ones with their reason,
 * admitted ones in tree order (pos). False (*oom) on ENOMEM. */
static bool s_write_answer(const rf__ilp_t *s, const double *x, const rf_answer_t *inc, s_plist_t *lists,
                           const int32_t *pos, rf_answer_t *ans, bool *oom)
{
    const rf_problem_t *pb = s->pb;
    bool ok = true;
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
            } else if (!inc->gangs[g].admitted &&
                       !(inc->gangs[g].reason && strncmp(inc->gangs[g].reason, "ordered admission:", 18) == 0)) {
                /* the incumbent's reason, unless it named a blocker this answer admits */
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
    /* running gangs: the program's decision, or the fixed one */
    for (int32_t i = 0; i < pb->n_running && ok; i++)
        if (rf_answer_preempt(ans, i, s->qcol[i] >= 0 ? x[s->qcol[i]] >= 0.5 : s->qfix[i]) != RF_OK)
            ok = false;
    return ok;
}

/* The program's solution as an answer: kept gangs copied from the incumbent,
 * free gangs decoded unit by unit, largest pods first (first-fit
 * decreasing), each onto its own gang's nodes first, then by best fit; what
 * a unit cannot hold (its summed capacity is a relaxation) spills to other
 * nodes of the same deepest-z-level domain. Returns false when packing
 * fails; *oom on ENOMEM. */
bool rf__ilp_decode(const rf__ilp_t *s, const double *x, const rf_answer_t *inc, rf_answer_t *ans, bool *oom)
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
        const rf__ilp_unit_t *un = &s->units[dm->unit];
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
        /* a vnode (one node, per-priority rows) takes exactly its demand;
         * else the unit's nodes first, then (spill) the rest of its domain */
        int64_t left = dm->count;
        int32_t vn = s->unit_nodes[un->first];
        if (s->vnode[vn]) {
            s_take(s, nfree, vn, &gg->pod_sets[dm->ps], left);
            ok = s_plist_add(&lists[dm->fp], vn, left);
            left = 0;
        } else {
            ok = s_place(s, nfree, dm, lists, ga, gb, gang_on, dm->unit, &left) &&
                 s_place(s, nfree, dm, lists, ga, gb, gang_on, -1, &left);
        }
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
    if (ok)
        ok = s_write_answer(s, x, inc, lists, pos, ans, oom);
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
