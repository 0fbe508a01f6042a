/* solver/greedy.c: the greedy fast path, strategy "greedy".
 *
 * Gangs are taken one at a time: priority first (higher first), then by the
 * admission policy (`value`: larger gangs first, so a small gang does not take
 * the only domain a large one could use; `ordered`: problem order, stopping a
 * priority at its first rejection). Each gang is placed whole or not at all.
 *
 * Placing a gang: candidate anchor domains are tried from the lowest level up
 * (the best-fitting few at each level, as Kueue's BestFit would choose), and
 * inside each anchor two descents are evaluated: Kueue's (fewest children by
 * fitting count, the last replaced by the best fit) and a node-efficient one
 * (children with the roomiest single node first, so whole hosts are used).
 * The candidate with the lowest contract penalty wins; going up a level stops
 * as soon as no anchor there could beat the best found (a split below level l
 * costs at least the sum of the level costs below l). Kueue's own choice is
 * always among the candidates, so rackfit's penalty is never above it.
 *
 * The strategy "greedy" runs two such passes on batches of up to
 * S_BOTH_CELLS nodes x pod sets and keeps the better answer: one in Kueue's
 * own order and choices (queue order, first fit from the lowest level, its
 * descent), one in value order with the search above; larger batches get the
 * Kueue-order pass alone (s_greedy_strategy says why). A gang that fits
 * nowhere free may preempt (solver/preempt.c); on those same smaller batches
 * a pass in which two or more gangs were admitted through the preemption
 * search (solver/preempt.c) is run again with Kueue's
 * victim rule, and the better of the two goes on with the keep-back step
 * (rf__greedy_run, s_keep_back). Pod sets of one gang
 * are placed at an anchor in the problem's order and, where that fails, most
 * pods first, so a leader goes where the workers left room.
 *
 * Capacity questions never walk nodes: for every pod shape (requests and
 * eligibility) each domain keeps the number of pods of that shape that fit
 * under it (`cnt`), the most that fit on one node (`maxfit`), and sits in a
 * bucket by `cnt` per level, so "the smallest domain that holds k" is a
 * bucket scan. Placing pods updates one node and its ancestors per shape.
 * The roll-ups are solver/capacity.c's; a shape (and the free capacity) the
 * solve's cluster cache keeps is copied from it rather than built, which
 * gives the same tables (solver/cluster_cache.h says why).
 *
 * Invariants: cnt[d] == sum of fit over the nodes under d; maxfit[d] == max of
 * fit over them; a domain with cnt > 0 is in exactly one bucket of its level.
 * Everything is deterministic: ties break by index. */
#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capacity.h"
#include "clock.h"
#include "cluster_cache.h"
#include "context.h"
#include "eligible.h"
#include "greedy.h"
#include "preempt.h"
#include "rackfit/answer.h"
#include "rackfit/quantity.h"
#include "rackfit/solve.h"
#include "strategy.h"
#include "tree.h"

#define RF_MAX_RESOURCES_GREEDY 256 /* resources tracked for reasons (limits allow fewer) */
#define S_CANDIDATES            3   /* best-fitting anchors tried per level */
#define S_SCAN                  256 /* domains examined per candidate query */
#define S_EPS                   1e-9
#define S_RULES_FROM            2  /* gangs admitted by preemption from which a pass tries both victim rules */
#define S_KEEP_TRIES            16 /* victims the keep-back step tries, the most valuable first */
#define S_BOTH_CELLS            ((int64_t)1 << 21) /* nodes x pod sets up to which the strategy runs both passes */

enum { S_KUEUE = 0, S_NODES = 1 };

typedef struct {
    int32_t node;
    int32_t count;
} s_pl_t;

/* A shape's roll-ups (solver/capacity.h): this solve's working copy. */
typedef rf__shape_t s_shape_t;

/* One pod set's view for a placement attempt. */
typedef struct {
    int32_t gang, ps;
    int32_t shape;
    int64_t target;                /* new pods to place */
    int32_t slice;                 /* slice size, 1 when none */
    int32_t slice_level;           /* level of the slice domain, n_levels when none */
    int32_t single_level;          /* pods share one domain down to this level (-1 none) */
    int32_t forced[RF_MAX_LEVELS]; /* domain required at level l by bound pods, -1 */
    bool pinned_unlabeled;         /* a required domain of this pod set is a node without level labels */
} s_psv_t;

typedef struct {
    int32_t id;
    int64_t cap;
    int32_t maxfit;
} s_child_t;

typedef struct {
    const rf_problem_t *pb;
    rf__tree_t tree;        /* the solve's (a borrowed copy: never finished here) */
    const rf__elig_t *elig; /* the solve's eligibility classes */
    int32_t L, N, R, D;
    int64_t *free; /* [N * R]; RF_QTY_UNLIMITED stays so */
    double *dfree; /* [D * R] free capacity summed per domain (limited resources only); NULL until a
                    * rejection's reason needs it (s_dfree), kept up to date from then on */
    bool unlimited[RF_MAX_RESOURCES_GREEDY]; /* some node has no limit on resource r */
    s_shape_t *shapes;
    int32_t n_shapes;
    rf__cap_t cap;     /* the roll-ups' tree, sizes and `free`; cap.bucketed: levels with buckets */
    bool *bucketed;    /* == cap.bucketed */
    int32_t *ps_shape; /* [flattened pod set] */
    int32_t *gang_ps0; /* [n_gangs + 1] */
    uint32_t *stamp;   /* [D] */
    uint32_t stamp_now;
    uint32_t *nstamp; /* [N] */
    uint32_t nstamp_now;
    s_child_t *child_scratch[RF_MAX_LEVELS + 1];
    s_pl_t *leaf_scratch;
    /* placements of the attempt in progress, per pod set: [off[p], end[p]) (pod
     * sets are placed in the attempt's order, so their runs may come in any
     * order in cur) */
    s_pl_t *cur;
    int64_t cur_len, cur_cap;
    int64_t cur_base; /* where the pod set being placed starts in cur */
    s_pl_t *best;
    int64_t best_len, best_cap;
    int64_t cur_off[64], cur_end[64], best_off[64], best_end[64];
    bool failed_alloc;
    bool kueue_only;      /* Kueue's choices only: first fit, lowest level, its descent */
    rf__victim_rule rule; /* the preemption's victim order (solver/preempt.h) */
    int32_t n_preemptors; /* gangs admitted by preemption in this pass */
} s_ctx_t;

/* ---------------------------------------------------------------- setup */

/* Free capacity per node and resource: the cluster cache's (synced to this
 * problem's `used` when the solve adopted it), or computed here. */
static void s_free_init(s_ctx_t *c, const rf_cluster_cache_t *cache)
{
    const rf_problem_t *pb = c->pb;
    const int32_t N = c->N, R = c->R;
    if (cache) {
        memcpy(c->free, cache->free, (size_t)N * (size_t)R * sizeof *c->free);
        for (int32_t r = 0; r < R && r < RF_MAX_RESOURCES_GREEDY; r++)
            c->unlimited[r] = cache->unlimited[r];
        return;
    }
    for (int32_t n = 0; n < N; n++)
        for (int32_t r = 0; r < R; r++) {
            int64_t f = rf__cap_free(pb->nodes[n].allocatable[r], pb->nodes[n].used[r]);
            c->free[(int64_t)n * R + r] = f;
            if (f == RF_QTY_UNLIMITED && r < RF_MAX_RESOURCES_GREEDY)
                c->unlimited[r] = true;
        }
}

static rf_status s_ctx_init(s_ctx_t *c, const rf_solve_ctx_t *ctx, rf_error_t *err)
{
    const rf_problem_t *pb = ctx->problem;
    memset(c, 0, sizeof *c);
    c->pb = pb;
    c->tree = ctx->tree;
    c->elig = &ctx->elig;
    c->L = pb->n_levels;
    c->N = pb->n_nodes;
    c->R = pb->n_resources;
    c->D = c->tree.n_domains;
    rf__cap_init(&c->cap, &c->tree, c->R);
    c->bucketed = c->cap.bucketed;
    const int32_t N = c->N, R = c->R, D = c->D;

    int64_t n_ps = 0;
    for (int32_t g = 0; g < pb->n_gangs; g++)
        n_ps += pb->gangs[g].n_pod_sets;
    c->free = malloc((size_t)((int64_t)N * R + 1) * sizeof *c->free);
    c->ps_shape = malloc((size_t)(n_ps + 1) * sizeof *c->ps_shape);
    c->gang_ps0 = malloc((size_t)(pb->n_gangs + 1) * sizeof *c->gang_ps0);
    c->shapes = calloc((size_t)n_ps + 1, sizeof *c->shapes);
    c->stamp = calloc((size_t)D + 1, sizeof *c->stamp);
    c->nstamp = calloc((size_t)N + 1, sizeof *c->nstamp);
    c->leaf_scratch = malloc((size_t)(N + 1) * sizeof *c->leaf_scratch);
    if (!c->free || !c->ps_shape || !c->gang_ps0 || !c->shapes || !c->stamp || !c->nstamp || !c->leaf_scratch)
        goto oom;
    for (int32_t l = 0; l <= c->L; l++) {
        /* children of level l-1 domains (l == 0: children of the root) */
        int32_t most = l == 0 ? c->tree.level_start[1] - c->tree.level_start[0] : 0;
        if (l > 0)
            for (int32_t d = c->tree.level_start[l - 1]; d < c->tree.level_start[l]; d++)
                if (c->tree.n_children[d] > most)
                    most = c->tree.n_children[d];
        c->child_scratch[l] = malloc((size_t)(most + 1) * sizeof(s_child_t));
        if (!c->child_scratch[l])
            goto oom;
    }
    s_free_init(c, ctx->cache);
    c->cap.free = c->free;
    /* shapes (eligibility class and requests), deduplicated: quadratic in
     * distinct shapes only; a shape the cluster cache keeps is copied from
     * it, any other built here */
    int64_t k = 0;
    for (int32_t g = 0; g < pb->n_gangs; g++) {
        c->gang_ps0[g] = (int32_t)k;
        for (int32_t p = 0; p < pb->gangs[g].n_pod_sets; p++, k++) {
            const rf_pod_set_t *ps = &pb->gangs[g].pod_sets[p];
            int32_t e = c->elig->class_of[k];
            int32_t s = 0;
            while (s < c->n_shapes && !(c->shapes[s].elig == e &&
                                        memcmp(c->shapes[s].req, ps->requests, (size_t)R * sizeof(int64_t)) == 0))
                s++;
            if (s == c->n_shapes) {
                const rf__shape_t *cached = ctx->cshape ? ctx->cshape[k] : NULL;
                rf_status rc;
                if (cached) {
                    rc = rf__shape_copy(&c->cap, &c->shapes[s], cached);
                } else {
                    rf__shape_set(&c->shapes[s], &c->cap, ps->requests, e, c->elig->ok[e]);
                    rc = rf__shape_build(&c->cap, &c->shapes[s]);
                }
                c->shapes[s].req = ps->requests;
                c->shapes[s].elig = e;
                c->shapes[s].ok = c->elig->ok[e];
                c->n_shapes++;
                if (rc != RF_OK)
                    goto oom;
            }
            c->ps_shape[k] = s;
        }
    }
    c->gang_ps0[pb->n_gangs] = (int32_t)k;
    return RF_OK;
oom:
    return rf_error_set(err, RF_ENOMEM, "", "out of memory preparing the greedy search");
}

static void s_ctx_fini(s_ctx_t *c)
{
    for (int32_t s = 0; s < c->n_shapes; s++)
        rf__shape_fini(&c->shapes[s]);
    for (int32_t l = 0; l <= RF_MAX_LEVELS; l++)
        free(c->child_scratch[l]);
    free(c->shapes);
    free(c->free);
    free(c->dfree);
    free(c->ps_shape);
    free(c->gang_ps0);
    free(c->stamp);
    free(c->nstamp);
    free(c->leaf_scratch);
    free(c->cur);
    free(c->best);
}

/* ---------------------------------------------------------------- capacity updates */

/* Take (sign > 0) or give back (sign < 0) `count` pods of pod set `ps` on node n. */
static void s_apply(s_ctx_t *c, const rf_pod_set_t *ps, int32_t n, int64_t count, int sign)
{
    int64_t *fr = &c->free[(int64_t)n * c->R];
    for (int32_t r = 0; r < c->R; r++)
        if (fr[r] != RF_QTY_UNLIMITED && ps->requests[r] != 0) {
            int64_t delta = sign * count * ps->requests[r];
            fr[r] -= delta;
            for (int32_t l = 0; c->dfree && l < c->L; l++)
                c->dfree[(int64_t)rf__tree_node_dom(&c->tree, n, l) * c->R + r] -= (double)delta;
        }
    for (int32_t s = 0; s < c->n_shapes; s++) {
        s_shape_t *sh = &c->shapes[s];
        if (sh->fit[n] == 0 && sign > 0)
            continue; /* taking capacity never raises a fit */
        rf__shape_node(&c->cap, sh, n);
    }
}

/* ---------------------------------------------------------------- placement buffers */

static bool s_push(s_ctx_t *c, int32_t node, int64_t count)
{
    if (c->cur_len > c->cur_base && c->cur[c->cur_len - 1].node == node) {
        c->cur[c->cur_len - 1].count += (int32_t)count;
        return true;
    }
    if (c->cur_len == c->cur_cap) {
        int64_t nc = c->cur_cap ? 2 * c->cur_cap : 256;
        s_pl_t *p = realloc(c->cur, (size_t)nc * sizeof *p);
        if (!p) {
            c->failed_alloc = true;
            return false;
        }
        c->cur = p;
        c->cur_cap = nc;
    }
    c->cur[c->cur_len++] = (s_pl_t){node, (int32_t)count};
    return true;
}

static bool s_save_best(s_ctx_t *c, int32_t n_ps)
{
    if (c->best_cap < c->cur_len) {
        s_pl_t *p = realloc(c->best, (size_t)c->cur_len * sizeof *p);
        if (!p) {
            c->failed_alloc = true;
            return false;
        }
        c->best = p;
        c->best_cap = c->cur_len;
    }
    if (c->cur_len > 0)
        memcpy(c->best, c->cur, (size_t)c->cur_len * sizeof *c->cur);
    c->best_len = c->cur_len;
    memcpy(c->best_off, c->cur_off, sizeof(int64_t) * (size_t)n_ps);
    memcpy(c->best_end, c->cur_end, sizeof(int64_t) * (size_t)n_ps);
    return true;
}

/* ---------------------------------------------------------------- descent */

static int s_cmp_child_cap(const void *a, const void *b)
{
    const s_child_t *x = a, *y = b;
    if (x->cap != y->cap)
        return x->cap > y->cap ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

static int s_cmp_child_nodes(const void *a, const void *b)
{
    const s_child_t *x = a, *y = b;
    if (x->maxfit != y->maxfit)
        return x->maxfit > y->maxfit ? -1 : 1;
    return s_cmp_child_cap(a, b);
}

static int s_cmp_pl_fit(const void *a, const void *b)
{
    const s_pl_t *x = a, *y = b;
    if (x->count != y->count)
        return x->count > y->count ? -1 : 1;
    return x->node < y->node ? -1 : x->node > y->node;
}

/* Insertion sort for the short lists of a descent (children of one domain,
 * nodes of one leaf: tens of entries), qsort beyond. */
static void s_sort_children(s_child_t *v, int32_t m, int (*cmp)(const void *, const void *))
{
    if (m > 48) {
        qsort(v, (size_t)m, sizeof *v, cmp);
        return;
    }
    for (int32_t i = 1; i < m; i++) {
        s_child_t x = v[i];
        int32_t j = i;
        for (; j > 0 && cmp(&x, &v[j - 1]) < 0; j--)
            v[j] = v[j - 1];
        v[j] = x;
    }
}

static void s_sort_fits(s_pl_t *v, int32_t m)
{
    if (m > 48) {
        qsort(v, (size_t)m, sizeof *v, s_cmp_pl_fit);
        return;
    }
    for (int32_t i = 1; i < m; i++) {
        s_pl_t x = v[i];
        int32_t j = i;
        for (; j > 0 && s_cmp_pl_fit(&x, &v[j - 1]) < 0; j--)
            v[j] = v[j - 1];
        v[j] = x;
    }
}

/* Units of the pod set that fit under domain d: slices when d is above the
 * slice level, pods otherwise. */
static int64_t s_cap_units(const s_ctx_t *c, const s_psv_t *v, int32_t d, bool in_slices)
{
    const s_shape_t *sh = &c->shapes[v->shape];
    if (!in_slices)
        return sh->cnt[d];
    int32_t a, b;
    rf__tree_range(&c->tree, d, v->slice_level, &a, &b);
    int64_t u = 0;
    for (int32_t e = a; e < b; e++)
        u += sh->cnt[e] / v->slice;
    return u;
}

/* Place k new pods of pod set v under domain d (-1: the whole cluster),
 * appending to c->cur with `strategy`'s choice of children. A node already
 * listed by this pod set (nstamp == nstamp_now) is used again only when it
 * is the last entry, which is extended. Returns false when it cannot. */
static bool s_descend(s_ctx_t *c, const s_psv_t *v, int32_t d, int64_t k, int strategy)
{
    const rf__tree_t *t = &c->tree;
    const s_shape_t *sh = &c->shapes[v->shape];
    int32_t level = d < 0 ? -1 : t->level[d];
    if (k <= 0)
        return true;
    if (level == c->L - 1) {
        /* leaf domain: fewest nodes, the last one the best fit */
        int32_t m = 0;
        for (int32_t i = t->node_start[d]; i < t->node_end[d]; i++) {
            int32_t n = t->node_order[i];
            int32_t f = sh->fit[n];
            if (f > 0 &&
                (c->nstamp[n] != c->nstamp_now || (c->cur_len > c->cur_base && c->cur[c->cur_len - 1].node == n)))
                c->leaf_scratch[m++] = (s_pl_t){n, f};
        }
        if (m > 1)
            s_sort_fits(c->leaf_scratch, m);
        int64_t left = k;
        int32_t j = 0;
        while (j < m && left > c->leaf_scratch[j].count)
            left -= c->leaf_scratch[j++].count;
        if (j == m)
            return false;
        /* replace the last by the smallest that still covers `left` */
        int32_t best = j;
        for (int32_t i = j + 1; i < m && c->leaf_scratch[i].count >= left; i++)
            best = i;
        for (int32_t i = 0; i < j; i++)
            if (!s_push(c, c->leaf_scratch[i].node, c->leaf_scratch[i].count))
                return false;
        if (!s_push(c, c->leaf_scratch[best].node, left))
            return false;
        for (int32_t i = 0; i < j; i++)
            c->nstamp[c->leaf_scratch[i].node] = c->nstamp_now;
        c->nstamp[c->leaf_scratch[best].node] = c->nstamp_now;
        return true;
    }
    int32_t child_level = level + 1;
    bool in_slices = v->slice > 1 && child_level <= v->slice_level;
    int32_t unit = in_slices ? v->slice : 1;
    if (k % unit != 0)
        return false;
    int64_t ku = k / unit;
    int32_t c0, c1;
    if (d < 0) {
        c0 = t->level_start[0];
        c1 = t->level_start[1 < c->L ? 1 : c->L];
        if (c->L == 1)
            c1 = t->level_start[1];
    } else {
        c0 = t->child_start[d];
        c1 = c0 + t->n_children[d];
    }
    s_child_t *ch = c->child_scratch[child_level];
    int32_t m = 0;
    int32_t forced = v->forced[child_level];
    for (int32_t x = c0; x < c1; x++) {
        if (forced >= 0 && x != forced)
            continue;
        int64_t cap = s_cap_units(c, v, x, in_slices);
        if (cap > 0)
            ch[m++] = (s_child_t){x, cap, sh->maxfit[x]};
    }
    bool single = child_level <= v->single_level;
    /* the best-fit single child, if one holds everything */
    int32_t bf = -1;
    for (int32_t i = 0; i < m; i++)
        if (ch[i].cap >= ku && (bf < 0 || ch[i].cap < ch[bf].cap || (ch[i].cap == ch[bf].cap && ch[i].id < ch[bf].id)))
            bf = i;
    if (single || (strategy == S_KUEUE && bf >= 0)) {
        if (bf < 0)
            return false;
        return s_descend(c, v, ch[bf].id, k, strategy);
    }
    s_sort_children(ch, m, strategy == S_KUEUE ? s_cmp_child_cap : s_cmp_child_nodes);
    int64_t left = ku;
    int32_t j = 0;
    while (j < m && left > ch[j].cap)
        left -= ch[j++].cap;
    if (j == m)
        return false;
    int32_t last = j;
    if (strategy == S_KUEUE)
        for (int32_t i = j + 1; i < m && ch[i].cap >= left; i++)
            last = i;
    /* Copy the choice: recursion reuses deeper scratch only, but keep it safe. */
    s_child_t chosen[64];
    int32_t n_chosen = 0;
    s_child_t *many = NULL;
    if (j + 1 > 64) {
        many = malloc((size_t)(j + 1) * sizeof *many);
        if (!many) {
            c->failed_alloc = true;
            return false;
        }
    }
    s_child_t *list = many ? many : chosen;
    for (int32_t i = 0; i < j; i++)
        list[n_chosen++] = ch[i];
    list[n_chosen++] = ch[last];
    bool ok = true;
    for (int32_t i = 0; i < n_chosen && ok; i++) {
        int64_t share = i + 1 == n_chosen ? left : list[i].cap;
        ok = s_descend(c, v, list[i].id, share * unit, strategy);
    }
    free(many);
    return ok;
}

/* ---------------------------------------------------------------- a gang */

typedef struct {
    int32_t gang;
    int32_t n_ps;
    s_psv_t v[64];
    int32_t gang_level;            /* required level of the gang, -1 */
    int32_t forced[RF_MAX_LEVELS]; /* the gang's domain per level, from bound pods */
    bool bound_breaks;
    bool any_forced;          /* some pod set has a domain forced by bound pods */
    int32_t pinned_unlabeled; /* a required domain of the gang or of a pod set is a node without level
                                 labels, or -1 (which pod sets: v[p].pinned_unlabeled) */
    char bound_why[160];
} s_gang_t;

static double s_gang_penalty(s_ctx_t *c, const s_gang_t *gv)
{
    const rf_gang_t *g = &c->pb->gangs[gv->gang];
    int32_t D[RF_MAX_LEVELS] = {0};
    if (++c->stamp_now == 0) {
        memset(c->stamp, 0, (size_t)c->D * sizeof *c->stamp);
        c->stamp_now = 1;
    }
    for (int64_t i = 0; i < c->cur_len; i++)
        for (int32_t l = 0; l < c->L; l++) {
            int32_t d = rf__tree_node_dom(&c->tree, c->cur[i].node, l);
            if (c->stamp[d] != c->stamp_now) {
                c->stamp[d] = c->stamp_now;
                D[l]++;
            }
        }
    for (int32_t p = 0; p < g->n_pod_sets; p++)
        for (int32_t b = 0; b < g->pod_sets[p].n_bound; b++)
            for (int32_t l = 0; l < c->L; l++) {
                int32_t d = rf__tree_node_dom(&c->tree, g->pod_sets[p].bound[b].node, l);
                if (d < 0)
                    D[l]++;
                else if (c->stamp[d] != c->stamp_now) {
                    c->stamp[d] = c->stamp_now;
                    D[l]++;
                }
            }
    double pen = 0;
    for (int32_t l = 0; l < c->L; l++)
        if (D[l] > 1)
            pen += c->pb->level_costs[l] * (D[l] - 1);
    return g->bandwidth * pen;
}

/* Give back what the first n pod sets of `order` took in the attempt. */
static void s_undo_cur(s_ctx_t *c, const s_gang_t *gv, const int32_t *order, int32_t n)
{
    const rf_gang_t *g = &c->pb->gangs[gv->gang];
    for (int32_t k = 0; k < n; k++) {
        int32_t p = order[k];
        for (int64_t i = c->cur_off[p]; i < c->cur_end[p]; i++)
            s_apply(c, &g->pod_sets[p], c->cur[i].node, c->cur[i].count, -1);
    }
}

/* Ranks held by the bound pods of a pod set: explicit ones, then the lowest
 * free ranks for bound entries given by count, in list order (the checker's
 * rule). held[r] = node index, or -1. */
static void s_bound_ranks(const rf_pod_set_t *ps, int32_t *held, int64_t total)
{
    for (int64_t r = 0; r < total; r++)
        held[r] = -1;
    for (int32_t b = 0; b < ps->n_bound; b++)
        if (ps->bound[b].ranks)
            for (int32_t i = 0; i < ps->bound[b].count; i++)
                if (ps->bound[b].ranks[i] < total)
                    held[ps->bound[b].ranks[i]] = ps->bound[b].node;
    int64_t r = 0;
    for (int32_t b = 0; b < ps->n_bound; b++)
        if (!ps->bound[b].ranks)
            for (int32_t i = 0; i < ps->bound[b].count; i++) {
                while (r < total && held[r] >= 0)
                    r++;
                if (r < total)
                    held[r] = ps->bound[b].node;
            }
}

/* Place a sliced pod set that has bound pods: groups of ranks partly held by
 * bound pods are completed in the bound pods' slice domain, the other groups
 * are placed as whole slices under `anchor`, and the list is laid out in rank
 * order. Fails on a rank layout that would list a node twice apart. */
static bool s_place_sliced_bound(s_ctx_t *c, const s_gang_t *gv, int32_t p, int32_t anchor, int strategy)
{
    const s_psv_t *v = &gv->v[p];
    const rf_pod_set_t *ps = &c->pb->gangs[gv->gang].pod_sets[p];
    int64_t total = ps->n_bound_pods + v->target;
    int64_t groups = total / v->slice;
    int32_t *held = malloc((size_t)(total + 1) * sizeof *held);
    int32_t *gdom = malloc((size_t)(groups + 1) * sizeof *gdom);
    int64_t *gneed = malloc((size_t)(groups + 1) * sizeof *gneed);
    bool ok = held && gdom && gneed;
    if (!ok)
        c->failed_alloc = true;
    int64_t start = c->cur_len;
    int64_t free_groups = 0;
    for (int64_t j = 0; ok && j < groups; j++) {
        if (j == 0)
            s_bound_ranks(ps, held, total);
        gdom[j] = -1;
        gneed[j] = v->slice;
        for (int64_t r = j * v->slice; r < (j + 1) * v->slice; r++) {
            if (held[r] < 0)
                continue;
            gneed[j]--;
            int32_t dd = rf__tree_node_dom(&c->tree, held[r], v->slice_level);
            if (dd < 0 || (gdom[j] >= 0 && gdom[j] != dd))
                ok = false;
            gdom[j] = dd;
        }
        if (gdom[j] < 0)
            free_groups++;
    }
    /* each fixed group: its pods inside its slice domain; then the free ones */
    s_pl_t *parts = NULL;
    int64_t n_parts = 0;
    int64_t *part_group = NULL;
    if (ok) {
        parts = malloc((size_t)(total + 1) * sizeof *parts);
        part_group = malloc((size_t)(total + 1) * sizeof *part_group);
        ok = parts && part_group;
        if (!ok)
            c->failed_alloc = true;
    }
    s_psv_t inner = *v;
    for (int64_t j = 0; ok && j < groups; j++) {
        if (gdom[j] < 0 || gneed[j] == 0)
            continue;
        if (anchor >= 0 && c->tree.level[anchor] <= v->slice_level) {
            int32_t a, b;
            rf__tree_range(&c->tree, anchor, v->slice_level, &a, &b);
            if (gdom[j] < a || gdom[j] >= b) {
                ok = false;
                break;
            }
        }
        int64_t mark = c->cur_len;
        c->cur_base = mark; /* no merging into the previous group's entries */
        inner.slice = 1;
        ok = c->shapes[v->shape].cnt[gdom[j]] >= gneed[j] && s_descend(c, &inner, gdom[j], gneed[j], strategy);
        for (int64_t i = mark; ok && i < c->cur_len; i++) {
            s_apply(c, ps, c->cur[i].node, c->cur[i].count, +1);
            for (int32_t q = 0; q < c->cur[i].count; q++) {
                parts[n_parts] = (s_pl_t){c->cur[i].node, 1};
                part_group[n_parts++] = j;
            }
        }
    }
    int64_t free_mark = c->cur_len;
    c->cur_base = free_mark;
    if (ok && free_groups > 0) {
        inner = *v;
        ok = s_descend(c, &inner, anchor, free_groups * v->slice, strategy);
    }
    /* give back what the fixed groups took: the caller applies the whole list */
    for (int64_t i = 0; i < n_parts; i++)
        s_apply(c, ps, parts[i].node, 1, -1);
    if (ok) {
        /* lay out in rank order: group by group */
        s_pl_t *freelist = &c->cur[free_mark];
        int64_t n_free = c->cur_len - free_mark;
        s_pl_t *out = malloc((size_t)(total + 1) * sizeof *out);
        if (!out) {
            c->failed_alloc = true;
            ok = false;
        }
        int64_t n_out = 0, fi = 0, fused = 0, pi = 0;
        for (int64_t j = 0; ok && j < groups; j++) {
            if (gdom[j] >= 0) {
                while (pi < n_parts && part_group[pi] == j)
                    out[n_out++] = parts[pi++];
            } else {
                for (int32_t q = 0; q < v->slice; q++) {
                    while (fi < n_free && fused == freelist[fi].count) {
                        fi++;
                        fused = 0;
                    }
                    out[n_out++] = (s_pl_t){freelist[fi].node, 1};
                    fused++;
                }
            }
        }
        c->cur_len = start;
        c->cur_base = start;
        if (++c->nstamp_now == 0) {
            memset(c->nstamp, 0, (size_t)c->N * sizeof *c->nstamp);
            c->nstamp_now = 1;
        }
        for (int64_t i = 0; ok && i < n_out; i++) {
            bool extends = c->cur_len > start && c->cur[c->cur_len - 1].node == out[i].node;
            if (!extends && c->nstamp[out[i].node] == c->nstamp_now) {
                ok = false; /* a node would be listed twice, apart */
                break;
            }
            c->nstamp[out[i].node] = c->nstamp_now;
            ok = s_push(c, out[i].node, 1);
        }
        free(out);
    }
    if (!ok)
        c->cur_len = start;
    c->cur_base = start;
    free(held);
    free(gdom);
    free(gneed);
    free(parts);
    free(part_group);
    return ok;
}

/* Try one anchor and strategy for the whole gang, its pod sets placed in
 * `order` (each on what the earlier ones left). On success the attempt's
 * placements are in c->cur (capacity not applied) and its penalty returned;
 * on failure -1. */
static double s_try_anchor(s_ctx_t *c, const s_gang_t *gv, int32_t anchor, int strategy, const int32_t *order)
{
    const rf_gang_t *g = &c->pb->gangs[gv->gang];
    c->cur_len = 0;
    bool ok = true;
    int32_t k = 0;
    for (; k < gv->n_ps && ok; k++) {
        int32_t p = order[k];
        const s_psv_t *v = &gv->v[p];
        c->cur_off[p] = c->cur_len;
        c->cur_base = c->cur_len;
        if (++c->nstamp_now == 0) {
            memset(c->nstamp, 0, (size_t)c->N * sizeof *c->nstamp);
            c->nstamp_now = 1;
        }
        if (v->target > 0) {
            if (v->slice > 1 && g->pod_sets[p].n_bound > 0)
                ok = s_place_sliced_bound(c, gv, p, anchor, strategy);
            else
                ok = s_descend(c, v, anchor, v->target, strategy);
        }
        c->cur_end[p] = c->cur_len;
        if (ok && gv->n_ps > 1 && k + 1 < gv->n_ps)
            for (int64_t i = c->cur_off[p]; i < c->cur_end[p]; i++)
                s_apply(c, &g->pod_sets[p], c->cur[i].node, c->cur[i].count, +1);
    }
    if (gv->n_ps > 1) /* give back what earlier pod sets took (all but the last) */
        s_undo_cur(c, gv, order, ok ? gv->n_ps - 1 : k - 1);
    if (!ok || c->failed_alloc)
        return -1;
    return s_gang_penalty(c, gv);
}

/* Does anchor d (level l) have room for every pod set (a quick necessary test)? */
static bool s_anchor_room(const s_ctx_t *c, const s_gang_t *gv, int32_t d)
{
    for (int32_t p = 0; p < gv->n_ps; p++) {
        const s_psv_t *v = &gv->v[p];
        int64_t need = v->target;
        for (int32_t q = 0; q < gv->n_ps; q++)
            if (q != p && gv->v[q].shape == v->shape)
                need += gv->v[q].target;
        if (need > 0 && c->shapes[v->shape].cnt[d] < need)
            return false;
    }
    /* the anchor and each of its ancestors must be the domain bound pods force
     * there (the gang's, and every pod set's own down to its required level):
     * an anchor below a pod set's forced domain in another subtree would let
     * its new pods leave the domain its bound pods hold */
    for (int32_t a = d; gv->any_forced && a >= 0; a = c->tree.parent[a]) {
        int32_t l = c->tree.level[a];
        if (gv->forced[l] >= 0 && gv->forced[l] != a)
            return false;
        for (int32_t p = 0; p < gv->n_ps; p++)
            if (gv->v[p].forced[l] >= 0 && gv->v[p].forced[l] != a)
                return false;
    }
    return true;
}

/* The main pod set: the one with the most new pods (first on ties). */
static int32_t s_main_ps(const s_gang_t *gv)
{
    int32_t m = 0;
    for (int32_t p = 1; p < gv->n_ps; p++)
        if (gv->v[p].target > gv->v[m].target)
            m = p;
    return m;
}

/* Is domain a a better (tighter) fit than b? */
static bool s_fits_better(const s_shape_t *sh, int32_t a, int32_t b)
{
    return sh->cnt[a] < sh->cnt[b] || (sh->cnt[a] == sh->cnt[b] && a < b);
}

/* Keep the S_CANDIDATES best fits (with room) among domains [a, b) in out. */
static int32_t s_topk(const s_ctx_t *c, const s_gang_t *gv, const s_shape_t *sh, int64_t need, int32_t a, int32_t b,
                      int32_t *out)
{
    int32_t np = 0;
    for (int32_t d = a; d < b; d++) {
        if (sh->cnt[d] < need || (np == S_CANDIDATES && !s_fits_better(sh, d, out[np - 1])) || !s_anchor_room(c, gv, d))
            continue;
        int32_t i = np < S_CANDIDATES ? np++ : S_CANDIDATES - 1;
        out[i] = d;
        for (; i > 0 && s_fits_better(sh, out[i], out[i - 1]); i--) {
            int32_t tmp = out[i - 1];
            out[i - 1] = out[i];
            out[i] = tmp;
        }
    }
    return np;
}

/* Up to S_CANDIDATES anchors at level l, best fit first: from the buckets on
 * levels with many domains, by a scan on the others. */
static int32_t s_candidates(const s_ctx_t *c, const s_gang_t *gv, int32_t l, int32_t *out)
{
    int32_t n = 0;
    int32_t mp = s_main_ps(gv);
    const s_shape_t *sh = &c->shapes[gv->v[mp].shape];
    int64_t need = gv->v[mp].target;
    /* a forced ancestor (bound pods) restricts the anchors to its subtree */
    int32_t fl = -1;
    for (int32_t x = 0; x <= l; x++)
        if (gv->forced[x] >= 0)
            fl = x;
    for (int32_t p = 0; p < gv->n_ps; p++)
        for (int32_t x = 0; x <= l; x++)
            if (gv->v[p].forced[x] >= 0 && x > fl)
                fl = x;
    if (fl >= 0) {
        int32_t fd = gv->forced[fl];
        for (int32_t p = 0; fd < 0 && p < gv->n_ps; p++)
            fd = gv->v[p].forced[fl];
        int32_t a, b;
        rf__tree_range(&c->tree, fd, l, &a, &b);
        return s_topk(c, gv, sh, need, a, b, out);
    }
    if (!c->bucketed[l])
        return s_topk(c, gv, sh, need, c->tree.level_start[l], c->tree.level_start[l + 1], out);
    const int32_t *heads = &sh->head[(int64_t)l * (RF__BUCKETS + 1)];
    int32_t b0 = need <= 0 ? 1 : need >= RF__BUCKETS ? RF__BUCKETS : (int32_t)need;
    int32_t examined = 0;
    /* buckets hold one cnt value each: their lists in order (a deterministic
     * function of the problem and the placements made so far) */
    for (int32_t b = b0; b < RF__BUCKETS && n < S_CANDIDATES && examined < S_SCAN; b++)
        for (int32_t d = heads[b]; d >= 0 && n < S_CANDIDATES && examined < S_SCAN; d = sh->bnext[d], examined++)
            if (s_anchor_room(c, gv, d))
                out[n++] = d;
    if (n < S_CANDIDATES) {
        /* overflow (cnt >= RF__BUCKETS): the smallest qualifying among the first entries */
        int32_t picks[S_CANDIDATES];
        int32_t np = 0;
        examined = 0;
        for (int32_t d = heads[RF__BUCKETS]; d >= 0 && examined < S_SCAN; d = sh->bnext[d], examined++) {
            if (sh->cnt[d] < need || !s_anchor_room(c, gv, d))
                continue;
            if (np == S_CANDIDATES && !s_fits_better(sh, d, picks[np - 1]))
                continue;
            int32_t i = np < S_CANDIDATES ? np++ : S_CANDIDATES - 1;
            picks[i] = d;
            for (; i > 0 && s_fits_better(sh, picks[i], picks[i - 1]); i--) {
                int32_t tmp = picks[i - 1];
                picks[i - 1] = picks[i];
                picks[i] = tmp;
            }
        }
        for (int32_t i = 0; i < np && n < S_CANDIDATES; i++)
            out[n++] = picks[i];
    }
    return n;
}

/* The orders the pod sets of a gang are placed in, into orders[0..n): the
 * problem's, and, for a gang of several pod sets outside kueue_only, the one
 * with most new pods first, tried at an anchor when the first fails there.
 * The second places a gang's pod sets jointly in the sense that matters: the
 * small ones (a leader) go where the large ones (the workers) left room, so
 * a leader never takes the slot a worker needed when another node would
 * hold it. */
static int32_t s_orders(const s_ctx_t *c, const s_gang_t *gv, int32_t orders[2][64])
{
    for (int32_t p = 0; p < gv->n_ps; p++)
        orders[0][p] = orders[1][p] = p;
    if (gv->n_ps < 2 || c->kueue_only)
        return 1;
    int32_t *o = orders[1];
    for (int32_t i = 1; i < gv->n_ps; i++) { /* insertion sort: target descending, then index */
        int32_t x = o[i], j = i;
        for (; j > 0 && gv->v[o[j - 1]].target < gv->v[x].target; j--)
            o[j] = o[j - 1];
        o[j] = x;
    }
    return memcmp(orders[0], orders[1], (size_t)gv->n_ps * sizeof(int32_t)) == 0 ? 1 : 2;
}

/* Search anchors for the gang with the targets in gv. On success the best
 * placements are in c->best / best_off..best_end and true is returned. */
static bool s_search(s_ctx_t *c, const s_gang_t *gv, double *best_pen)
{
    const rf_gang_t *g = &c->pb->gangs[gv->gang];
    double best = -1;
    int64_t total = 0;
    for (int32_t p = 0; p < gv->n_ps; p++)
        total += gv->v[p].target;
    if (total == 0) {
        c->cur_len = 0;
        for (int32_t p = 0; p < gv->n_ps; p++)
            c->cur_off[p] = c->cur_end[p] = 0;
        *best_pen = s_gang_penalty(c, gv);
        s_save_best(c, gv->n_ps);
        return true;
    }
    int32_t orders[2][64];
    int32_t n_orders = s_orders(c, gv, orders);
    int32_t top = gv->gang_level >= 0 ? gv->gang_level : 0;
    double below = 0; /* sum of level costs below the current level */
    for (int32_t l = c->L - 1; l >= top - (gv->gang_level < 0 ? 1 : 0); l--) {
        if (best >= 0 && best <= g->bandwidth * below + S_EPS)
            break;
        int32_t cand[S_CANDIDATES];
        int32_t n;
        if (l < 0) {
            n = 1;
            cand[0] = -1;
        } else {
            n = s_candidates(c, gv, l, cand);
        }
        for (int32_t i = 0; i < n; i++)
            for (int strategy = S_KUEUE; strategy <= S_NODES; strategy++) {
                if (strategy == S_NODES && (l == c->L - 1 || c->kueue_only))
                    continue;
                double pen = -1;
                for (int32_t o = 0; o < n_orders && pen < 0; o++) /* the second only when the first fails */
                    pen = s_try_anchor(c, gv, cand[i], strategy, orders[o]);
                if (c->failed_alloc)
                    return false;
                if (pen >= 0 && (best < 0 || pen < best - S_EPS)) {
                    best = pen;
                    s_save_best(c, gv->n_ps);
                }
                if (c->kueue_only && best >= 0) {
                    /* Kueue's choice: the first that fits, lowest level first */
                    *best_pen = best;
                    return true;
                }
            }
        if (l >= 0)
            below += c->pb->level_costs[l];
    }
    *best_pen = best;
    return best >= 0;
}

/* Fill the per-pod-set views; returns false (with gv->bound_why) when the
 * bound pods already break a hard constraint. */
static bool s_gang_view(s_ctx_t *c, int32_t gi, s_gang_t *gv)
{
    const rf_gang_t *g = &c->pb->gangs[gi];
    memset(gv, 0, sizeof *gv);
    gv->gang = gi;
    gv->n_ps = g->n_pod_sets;
    gv->gang_level = g->topology.required;
    gv->pinned_unlabeled = -1;
    for (int32_t l = 0; l < RF_MAX_LEVELS; l++)
        gv->forced[l] = -1;
    for (int32_t p = 0; p < g->n_pod_sets; p++) {
        const rf_pod_set_t *ps = &g->pod_sets[p];
        s_psv_t *v = &gv->v[p];
        v->gang = gi;
        v->ps = p;
        v->shape = c->ps_shape[c->gang_ps0[gi] + p];
        v->slice = ps->slice.size > 1 ? ps->slice.size : 1;
        v->slice_level = ps->slice.size > 1 ? ps->slice.level : c->L;
        v->single_level = ps->topology.required > g->topology.required ? ps->topology.required : g->topology.required;
        for (int32_t l = 0; l < RF_MAX_LEVELS; l++)
            v->forced[l] = -1;
        for (int32_t b = 0; b < ps->n_bound; b++) {
            int32_t node = ps->bound[b].node;
            for (int32_t l = 0; l <= v->single_level; l++) {
                int32_t d = rf__tree_node_dom(&c->tree, node, l);
                if (d < 0) {
                    /* a node without the level's label is a domain of its
                     * own there, and takes no new pods */
                    d = -2 - node;
                    gv->pinned_unlabeled = node;
                    v->pinned_unlabeled = true;
                    for (int32_t q = 0; l <= gv->gang_level && q < g->n_pod_sets; q++)
                        gv->v[q].pinned_unlabeled = true; /* the gang's own domain: every pod set */
                }
                const char *who = l <= gv->gang_level ? "gang" : "pod set";
                if ((v->forced[l] != -1 && v->forced[l] != d) ||
                    (l <= gv->gang_level && gv->forced[l] != -1 && gv->forced[l] != d)) {
                    snprintf(gv->bound_why, sizeof gv->bound_why,
                             "%s: bound pods of pod set %s already span more than one domain the %s requires",
                             c->pb->levels[l], ps->name, who);
                    gv->bound_breaks = true;
                    return false;
                }
                v->forced[l] = d;
                gv->any_forced = true;
                if (l <= gv->gang_level)
                    gv->forced[l] = d;
            }
        }
    }
    /* bound pods of a sliced pod set that share a slice must share its domain */
    for (int32_t p = 0; p < g->n_pod_sets; p++) {
        const rf_pod_set_t *ps = &g->pod_sets[p];
        if (ps->slice.size <= 1 || ps->n_bound == 0)
            continue;
        int32_t *held = malloc((size_t)ps->count * sizeof *held);
        if (!held) {
            c->failed_alloc = true;
            return false;
        }
        s_bound_ranks(ps, held, ps->count);
        for (int64_t j = 0; j < ps->count / ps->slice.size && !gv->bound_breaks; j++) {
            int32_t dom = -1;
            for (int64_t r = j * ps->slice.size; r < (j + 1) * ps->slice.size; r++) {
                if (held[r] < 0)
                    continue;
                int32_t d = rf__tree_node_dom(&c->tree, held[r], ps->slice.level);
                if (d < 0 || (dom >= 0 && d != dom)) {
                    snprintf(gv->bound_why, sizeof gv->bound_why,
                             "%s: bound pods of pod set %s already split slice %lld (ranks %lld-%lld) across domains",
                             c->pb->levels[ps->slice.level], ps->name, (long long)j, (long long)(j * ps->slice.size),
                             (long long)((j + 1) * ps->slice.size - 1));
                    gv->bound_breaks = true;
                }
                dom = d;
            }
        }
        free(held);
        if (gv->bound_breaks)
            return false;
    }
    /* the gang's forced domains bind every pod set */
    for (int32_t p = 0; p < g->n_pod_sets; p++)
        for (int32_t l = 0; l <= gv->gang_level; l++)
            if (gv->forced[l] >= 0)
                gv->v[p].forced[l] = gv->forced[l];
    return true;
}

/* ---------------------------------------------------------------- reasons */

static const char *s_domain_name(const s_ctx_t *c, int32_t d)
{
    const rf__tree_t *t = &c->tree;
    int32_t n = t->node_order[t->node_start[d]];
    const char *v = rf_node_label(&c->pb->nodes[n], c->pb->levels[t->level[d]]);
    return v ? v : "?";
}

/* The per-domain sums of free capacity, built from `free` as it is now
 * the first time a reason needs them (most solves reject nothing); from
 * then on s_apply keeps them. Sums of integers below 2^53: exact in any
 * order. false on ENOMEM. */
static bool s_dfree(s_ctx_t *c)
{
    if (c->dfree)
        return true;
    c->dfree = calloc((size_t)((int64_t)c->D * c->R + 1), sizeof *c->dfree);
    if (!c->dfree)
        return false;
    for (int32_t n = 0; n < c->N; n++)
        for (int32_t r = 0; r < c->R; r++) {
            int64_t f = c->free[(int64_t)n * c->R + r];
            if (f != RF_QTY_UNLIMITED)
                for (int32_t l = 0; l < c->L; l++) {
                    int32_t d = rf__tree_node_dom(&c->tree, n, l);
                    if (d >= 0)
                        c->dfree[(int64_t)d * c->R + r] += (double)f;
                }
        }
    return true;
}

/* Which resource is scarcest for pod set p under domain d (-1: the cluster):
 * the one with the least free capacity per pod requested, summed over the
 * domain (the roll-up; per-node fragmentation is what `fits` shows). */
static int32_t s_blocking_resource(s_ctx_t *c, const s_gang_t *gv, int32_t p, int32_t d, double *pods)
{
    const rf_pod_set_t *ps = &c->pb->gangs[gv->gang].pod_sets[p];
    const rf__tree_t *t = &c->tree;
    int32_t worst = -1;
    double worst_n = HUGE_VAL;
    if (!s_dfree(c)) {
        c->failed_alloc = true;
        *pods = worst_n;
        return worst;
    }
    for (int32_t r = 0; r < c->R; r++) {
        if (ps->requests[r] <= 0 || r >= RF_MAX_RESOURCES_GREEDY)
            continue;
        double sum = 0;
        if (d >= 0)
            sum = c->dfree[(int64_t)d * c->R + r];
        else
            for (int32_t x = t->level_start[0]; x < t->level_start[1]; x++)
                sum += c->dfree[(int64_t)x * c->R + r];
        if (c->unlimited[r])
            continue; /* some node has no limit: sums say nothing */
        double n = sum / (double)ps->requests[r];
        if (n < worst_n) {
            worst_n = n;
            worst = r;
        }
    }
    *pods = worst_n;
    return worst;
}

static void s_explain(s_ctx_t *c, const s_gang_t *gv, rf_answer_t *ans)
{
    const rf_problem_t *pb = c->pb;
    const rf_gang_t *g = &pb->gangs[gv->gang];
    rf_why_t why = {.level = -1, .resource = -1, .fits = -1, .needs = -1};
    /* 1. a pod set no node is eligible for */
    for (int32_t p = 0; p < gv->n_ps; p++) {
        const s_psv_t *v = &gv->v[p];
        if (v->target <= 0)
            continue;
        if (c->elig->n_ok[c->shapes[v->shape].elig] == 0) {
            int64_t cordoned = 0, unlabeled = 0;
            for (int32_t n = 0; n < c->N; n++) {
                cordoned += pb->nodes[n].unschedulable;
                unlabeled += rf__tree_node_dom(&c->tree, n, c->L - 1) < 0;
            }
            why.fits = 0;
            why.needs = v->target;
            rf_answer_reject(ans, gv->gang, why,
                             "pod set %s: no node is eligible (%d nodes: %lld cordoned, %lld without every level "
                             "label, the rest fail its node_selector or have a taint it does not tolerate)",
                             g->pod_sets[p].name, c->N, (long long)cordoned, (long long)unlabeled);
            return;
        }
    }
    /* 2. the tightest domain: at the required level, or the cluster */
    for (int32_t p = 0; p < gv->n_ps; p++) {
        const s_psv_t *v = &gv->v[p];
        if (v->target <= 0)
            continue;
        const s_shape_t *sh = &c->shapes[v->shape];
        int32_t lvl = v->single_level;
        int32_t best_d = -1;
        int64_t best_fit = 0;
        if (lvl >= 0) {
            int32_t a = c->tree.level_start[lvl], b = c->tree.level_start[lvl + 1];
            if (v->forced[lvl] >= 0) {
                a = v->forced[lvl];
                b = a + 1;
            }
            for (int32_t d = a; d < b; d++) {
                int64_t f = v->slice > 1 && lvl <= v->slice_level ? s_cap_units(c, v, d, true) * v->slice : sh->cnt[d];
                if (best_d < 0 || f > best_fit) {
                    best_fit = f;
                    best_d = d;
                }
            }
        } else {
            for (int32_t d = c->tree.level_start[0]; d < c->tree.level_start[1]; d++)
                best_fit += v->slice > 1 && 0 <= v->slice_level ? s_cap_units(c, v, d, true) * v->slice : sh->cnt[d];
        }
        if (best_fit >= v->target)
            continue;
        double rpods = 0;
        int32_t res = s_blocking_resource(c, gv, p, best_d, &rpods);
        why.fits = best_fit;
        why.needs = v->target;
        /* name the resource when it alone is short; otherwise the pods fail
         * to fit for fragmentation or eligibility, not for a resource */
        why.resource = rpods < (double)v->target ? res : -1;
        const char *rname = why.resource >= 0 ? pb->resources[why.resource] : NULL;
        if (lvl >= 0) {
            why.level = lvl;
            rf_answer_reject(ans, gv->gang, why,
                             "%s: the best domain (%s) fits %lld of %lld new pods of pod set %s%s%s", pb->levels[lvl],
                             best_d >= 0 ? s_domain_name(c, best_d) : "none", (long long)best_fit, (long long)v->target,
                             g->pod_sets[p].name, rname ? ", short of " : "", rname ? rname : "");
        } else {
            rf_answer_reject(ans, gv->gang, why, "the cluster fits %lld of %lld new pods of pod set %s%s%s",
                             (long long)best_fit, (long long)v->target, g->pod_sets[p].name, rname ? ", short of " : "",
                             rname ? rname : "");
        }
        return;
    }
    /* 3. each pod set fits alone: slices, pod-set levels or sharing nodes */
    for (int32_t p = 0; p < gv->n_ps; p++)
        if (gv->v[p].slice > 1) {
            why.level = gv->v[p].slice_level;
            why.needs = gv->v[p].target;
            rf_answer_reject(ans, gv->gang, why,
                             "%s: pod set %s cannot be cut into slices of %d pods, each inside one domain, where "
                             "the gang's other constraints allow",
                             pb->levels[gv->v[p].slice_level], g->pod_sets[p].name, gv->v[p].slice);
            return;
        }
    why.level = gv->gang_level;
    rf_answer_reject(ans, gv->gang, why, "the pod sets fit one at a time but not together%s%s",
                     gv->gang_level >= 0 ? " inside one domain of " : "",
                     gv->gang_level >= 0 ? pb->levels[gv->gang_level] : "");
}

/* ---------------------------------------------------------------- the batch */

typedef struct {
    int32_t gang;
    int64_t priority;
    int64_t units;
    int64_t pods;
} s_order_t;

static int s_cmp_value(const void *a, const void *b)
{
    const s_order_t *x = a, *y = b;
    if (x->priority != y->priority)
        return x->priority > y->priority ? -1 : 1;
    if (x->units != y->units)
        return x->units > y->units ? -1 : 1;
    if (x->pods != y->pods)
        return x->pods > y->pods ? -1 : 1;
    return x->gang < y->gang ? -1 : x->gang > y->gang;
}

static int s_cmp_ordered(const void *a, const void *b)
{
    const s_order_t *x = a, *y = b;
    if (x->priority != y->priority)
        return x->priority > y->priority ? -1 : 1;
    return x->gang < y->gang ? -1 : x->gang > y->gang;
}

/* Commit c->best for the gang: capacity and the answer. */
static rf_status s_commit(s_ctx_t *c, const s_gang_t *gv, rf_answer_t *ans)
{
    const rf_gang_t *g = &c->pb->gangs[gv->gang];
    for (int32_t p = 0; p < gv->n_ps; p++)
        for (int64_t i = c->best_off[p]; i < c->best_end[p]; i++) {
            s_apply(c, &g->pod_sets[p], c->best[i].node, c->best[i].count, +1);
            RF_CALL(rf_answer_add(ans, gv->gang, p, c->best[i].node, c->best[i].count));
        }
    ans->gangs[gv->gang].admitted = true;
    return RF_OK;
}

/* Preemption (solver/preempt.c counts the freed room, per priority): gang gi
 * at count (or min_count) with victims; its placements then leave this
 * view's capacity, which never sees freed room (it may go below zero). */
static rf_status s_by_preemption(s_ctx_t *c, int32_t gi, bool at_min, rf_answer_t *ans, bool *admitted)
{
    const rf_gang_t *g = &c->pb->gangs[gi];
    RF_CALL(rf__preempt_try(c->pb, &c->tree, c->elig, gi, at_min, c->rule, ans, admitted));
    c->n_preemptors += *admitted;
    for (int32_t p = 0; *admitted && p < g->n_pod_sets; p++)
        for (int32_t k = 0; k < ans->gangs[gi].pod_sets[p].n_placements; k++)
            s_apply(c, &g->pod_sets[p], ans->gangs[gi].pod_sets[p].placements[k].node,
                    ans->gangs[gi].pod_sets[p].placements[k].count, +1);
    return RF_OK;
}

/* Pod set p's target grown from `ok` (found with the other targets as they
 * are) towards `hi` by bisection on slices, until `deadline`
 * (rf_now_ms(); INFINITY: no clock read); the target is left at the most
 * found, which is returned. */
static int64_t s_bisect(s_ctx_t *c, s_gang_t *gv, int32_t p, int64_t ok, int64_t hi, double deadline)
{
    int32_t sl = gv->v[p].slice;
    int64_t bad = hi + sl;
    double pen;
    while (bad - ok > sl && (isinf(deadline) || rf_now_ms() < deadline)) {
        int64_t mid = ok + ((bad - ok) / sl / 2) * sl;
        if (mid <= ok)
            mid = ok + sl;
        gv->v[p].target = mid;
        if (s_search(c, gv, &pen))
            ok = mid;
        else
            bad = mid;
    }
    gv->v[p].target = ok;
    return ok;
}

/* Place one gang, elastic pod sets as large as they fit. */
static rf_status s_place_gang(s_ctx_t *c, int32_t gi, rf_answer_t *ans, bool *admitted)
{
    const rf_gang_t *g = &c->pb->gangs[gi];
    s_gang_t *gv = malloc(sizeof *gv);
    if (!gv)
        return RF_ENOMEM;
    *admitted = false;
    rf_status rc = RF_OK;
    if (!s_gang_view(c, gi, gv)) {
        rf_why_t why = {.level = -1, .resource = -1, .fits = -1, .needs = -1};
        rf_answer_reject(ans, gi, why, "%s", gv->bound_why);
        goto done;
    }
    int64_t lo[64], hi[64];
    bool elastic = false;
    for (int32_t p = 0; p < g->n_pod_sets; p++) {
        const rf_pod_set_t *ps = &g->pod_sets[p];
        int32_t s = gv->v[p].slice;
        int64_t tmin = ps->min_count;
        int64_t bound_up = (ps->n_bound_pods + s - 1) / s * s;
        if (bound_up > tmin)
            tmin = bound_up;
        /* ranks held by bound pods must lie below the total */
        if (s > 1)
            for (int32_t b = 0; b < ps->n_bound; b++)
                for (int32_t i = 0; ps->bound[b].ranks && i < ps->bound[b].count; i++) {
                    int64_t need = ((int64_t)ps->bound[b].ranks[i] / s + 1) * s;
                    if (need > tmin)
                        tmin = need;
                }
        lo[p] = tmin - ps->n_bound_pods;
        hi[p] = ps->count - ps->n_bound_pods;
        if (lo[p] < 0)
            lo[p] = 0;
        elastic |= lo[p] < hi[p];
        gv->v[p].target = hi[p];
    }
    if (gv->pinned_unlabeled >= 0) {
        /* pods pinned to a node that takes none: only the bound pods (of
         * the pod sets so pinned; the gang's required level pins them all) */
        elastic = false;
        for (int32_t p = 0; p < g->n_pod_sets; p++) {
            if (!gv->v[p].pinned_unlabeled) {
                elastic |= lo[p] < hi[p];
                continue;
            }
            if (lo[p] > 0) {
                rf_why_t why = {.level = -1, .resource = -1, .fits = 0, .needs = lo[p]};
                rf_answer_reject(ans, gi, why,
                                 "its required domain is node %s, which lacks a level label and takes no new pods; "
                                 "pod set %s needs %lld more",
                                 c->pb->nodes[gv->pinned_unlabeled].name, g->pod_sets[p].name, (long long)lo[p]);
                goto done;
            }
            hi[p] = lo[p] = 0;
            gv->v[p].target = 0;
        }
    }
    double pen;
    if (s_search(c, gv, &pen)) {
        rc = s_commit(c, gv, ans);
        *admitted = rc == RF_OK;
        goto done;
    }
    if (c->failed_alloc) {
        rc = RF_ENOMEM;
        goto done;
    }
    /* an elastic gang tries preemption for every pod before fewer pods without */
    if (elastic && ((rc = s_by_preemption(c, gi, false, ans, admitted)) != RF_OK || *admitted))
        goto done;
    if (elastic) {
        for (int32_t p = 0; p < g->n_pod_sets; p++)
            gv->v[p].target = lo[p];
        if (s_search(c, gv, &pen)) {
            /* grow each elastic pod set in turn, by bisection on slices */
            for (int32_t p = 0; p < g->n_pod_sets; p++)
                s_bisect(c, gv, p, lo[p], hi[p], INFINITY);
            if (!s_search(c, gv, &pen)) { /* cannot happen: `ok` targets were found */
                rc = RF_EINTERNAL;
                goto done;
            }
            rc = s_commit(c, gv, ans);
            *admitted = rc == RF_OK;
            goto done;
        }
    }
    if (c->failed_alloc) {
        rc = RF_ENOMEM;
        goto done;
    }
    /* preemption at min_count (or count, when not elastic) */
    if ((rc = s_by_preemption(c, gi, elastic, ans, admitted)) != RF_OK || *admitted)
        goto done;
    s_explain(c, gv, ans);
done:
    free(gv);
    return rc;
}

/* The penalty of gang gi's current placement in `ans` (bound pods too). */
static double s_answer_penalty(s_ctx_t *c, const s_gang_t *gv, const rf_answer_t *ans)
{
    c->cur_len = 0;
    c->cur_base = 0;
    for (int32_t p = 0; p < gv->n_ps; p++) {
        const rf_pod_set_answer_t *pa = &ans->gangs[gv->gang].pod_sets[p];
        for (int32_t i = 0; i < pa->n_placements; i++)
            if (!s_push(c, pa->placements[i].node, pa->placements[i].count))
                return -1;
        c->cur_base = c->cur_len;
    }
    return s_gang_penalty(c, gv);
}

/* Polish: re-place admitted gangs one at a time, the others where they are,
 * with the same pods per pod set; keep a placement only when its penalty is
 * lower. The value never changes, so the answer only gets better. Gangs
 * with the most room above their own bound go first. */
static rf_status s_polish(s_ctx_t *c, rf_answer_t *ans, const double *bounds)
{
    const rf_problem_t *pb = c->pb;
    s_gang_t *gv = malloc(sizeof *gv);
    s_order_t *order = malloc((size_t)(pb->n_gangs + 1) * sizeof *order);
    double *room = malloc((size_t)(pb->n_gangs + 1) * sizeof *room);
    rf_status rc = RF_OK;
    int32_t n = 0;
    if (!gv || !order || !room) {
        rc = RF_ENOMEM;
        goto done;
    }
    for (int32_t g = 0; g < pb->n_gangs; g++) {
        if (!ans->gangs[g].admitted || !s_gang_view(c, g, gv))
            continue;
        bool sliced_bound = false;
        for (int32_t p = 0; p < gv->n_ps; p++)
            sliced_bound |= gv->v[p].slice > 1 && pb->gangs[g].pod_sets[p].n_bound > 0;
        double pen = s_answer_penalty(c, gv, ans);
        if (sliced_bound || pen < 0 || pen <= bounds[g] + S_EPS)
            continue;
        room[g] = pen - bounds[g];
        order[n++] = (s_order_t){.gang = g, .priority = (int64_t)(room[g] * 1024.0)};
    }
    qsort(order, (size_t)n, sizeof *order, s_cmp_ordered); /* most room first, then index */
    for (int32_t i = 0; i < n; i++) {
        int32_t g = order[i].gang;
        const rf_gang_t *gg = &pb->gangs[g];
        s_gang_view(c, g, gv);
        double old = s_answer_penalty(c, gv, ans);
        /* lift the gang out: the others stay */
        for (int32_t p = 0; p < gv->n_ps; p++) {
            const rf_pod_set_answer_t *pa = &ans->gangs[g].pod_sets[p];
            int64_t pods = 0;
            for (int32_t k = 0; k < pa->n_placements; k++) {
                s_apply(c, &gg->pod_sets[p], pa->placements[k].node, pa->placements[k].count, -1);
                pods += pa->placements[k].count;
            }
            gv->v[p].target = pods;
        }
        double pen;
        bool better = s_search(c, gv, &pen) && pen < old - S_EPS;
        if (c->failed_alloc) {
            rc = RF_ENOMEM;
            goto done;
        }
        if (better) {
            rf_answer_gang_reset(ans, g);
            rc = s_commit(c, gv, ans);
            if (rc != RF_OK)
                goto done;
        } else {
            for (int32_t p = 0; p < gv->n_ps; p++) {
                const rf_pod_set_answer_t *pa = &ans->gangs[g].pod_sets[p];
                for (int32_t k = 0; k < pa->n_placements; k++)
                    s_apply(c, &gg->pod_sets[p], pa->placements[k].node, pa->placements[k].count, +1);
            }
        }
    }
done:
    free(gv);
    free(order);
    free(room);
    return rc;
}

/* Gang g's placements in `ans` in or out of the capacity view. */
static void s_apply_gang(s_ctx_t *c, const rf_answer_t *ans, int32_t g, int sign)
{
    const rf_gang_t *gg = &c->pb->gangs[g];
    for (int32_t p = 0; ans->gangs[g].admitted && p < gg->n_pod_sets; p++) {
        const rf_pod_set_answer_t *pa = &ans->gangs[g].pod_sets[p];
        for (int32_t k = 0; k < pa->n_placements; k++)
            s_apply(c, &gg->pod_sets[p], pa->placements[k].node, pa->placements[k].count, sign);
    }
}

#ifndef NDEBUG
/* Debug builds: into out[N * R], the view's free capacity plus what the
 * answer's admitted gangs take on each node (RF_QTY_UNLIMITED left as is):
 * unchanged while the view and the answer agree. false: out of memory. */
static bool s_view_total(const s_ctx_t *c, const rf_answer_t *ans, int64_t **out)
{
    const rf_problem_t *pb = c->pb;
    size_t n_cells = (size_t)c->N * (size_t)c->R;
    int64_t *t = *out ? *out : malloc(sizeof *t * (n_cells + 1));
    if (!t)
        return false;
    memcpy(t, c->free, sizeof *t * n_cells);
    for (int32_t g = 0; g < pb->n_gangs; g++)
        for (int32_t p = 0; ans->gangs[g].admitted && p < pb->gangs[g].n_pod_sets; p++)
            for (int32_t k = 0; k < ans->gangs[g].pod_sets[p].n_placements; k++) {
                const rf_placement_t *pl = &ans->gangs[g].pod_sets[p].placements[k];
                for (int32_t r = 0; r < c->R; r++)
                    if (t[(size_t)pl->node * (size_t)c->R + (size_t)r] != RF_QTY_UNLIMITED)
                        t[(size_t)pl->node * (size_t)c->R + (size_t)r] +=
                            pl->count * pb->gangs[g].pod_sets[p].requests[r];
            }
    *out = t;
    return true;
}
#endif

/* on[n] = val for every node holding a pod of running gang `run`. */
static void s_mark_nodes(uint8_t *on, const rf_running_t *run, uint8_t val)
{
    for (int32_t j = 0; j < run->n_pod_sets; j++)
        for (int32_t k = 0; k < run->pod_sets[j].n_placements; k++)
            on[run->pod_sets[j].placements[k].node] = val;
}

static _Thread_local const rf_problem_t *s_kb_pb; /* qsort has no context */

static int s_cmp_victim_units(const void *a, const void *b)
{
    int32_t i = *(const int32_t *)a, j = *(const int32_t *)b;
    const rf_running_t *x = &s_kb_pb->running[i], *y = &s_kb_pb->running[j];
    if (x->priority != y->priority)
        return x->priority > y->priority ? -1 : 1;
    if (x->units != y->units)
        return x->units > y->units ? -1 : 1;
    return (i > j) - (i < j);
}

/* A move of the keep-back step: the gangs lift[0..n) are lifted out of the
 * answer and the view, running gang `keep` is kept again, and the gangs are
 * placed again in the array's order, preempting as the pass does (room
 * other victims freed is theirs to take). The move stays (*kept) when every
 * one of them is admitted again and the answer ranks higher (victims left
 * without a preemptor are kept too); otherwise the answer and the view's
 * capacities are as they were, though not always the order of the view's
 * buckets, as after the polish's undone moves: later searches may break ties
 * differently, as a function of the problem still. Debug builds check that
 * the view and the answer agree after either. `ans` is finished before and
 * after; `was` is scratch. */
static rf_status s_move(s_ctx_t *c, rf_answer_t *ans, rf_answer_t *was, const int32_t *lift, int32_t n, int32_t keep,
                        bool *kept)
{
    rf_status rc;
    *kept = false;
#ifndef NDEBUG
    int64_t *view_before = NULL, *view_after = NULL;
    bool view_check = s_view_total(c, ans, &view_before);
#endif
    if ((rc = rf_answer_copy(was, ans)) != RF_OK)
        goto done;
    for (int32_t q = 0; q < n; q++) {
        s_apply_gang(c, ans, lift[q], -1);
        rf_answer_gang_reset(ans, lift[q]);
    }
    rf_answer_preempt(ans, keep, false);
    bool all = true;
    for (int32_t q = 0; q < n && all && rc == RF_OK; q++)
        rc = s_place_gang(c, lift[q], ans, &all);
    if (rc == RF_OK && all && (rc = rf__preempt_settle(ans)) == RF_OK && (rc = rf_answer_finish(ans)) == RF_OK &&
        rf_answer_compare(ans, was) < 0) {
        *kept = true;
        goto done;
    }
    /* as it was */
    for (int32_t q = 0; q < n; q++)
        s_apply_gang(c, ans, lift[q], -1);
    if (rf_answer_copy(ans, was) != RF_OK && rc == RF_OK)
        rc = RF_ENOMEM;
    for (int32_t q = 0; q < n; q++)
        s_apply_gang(c, ans, lift[q], +1);
done:
#ifndef NDEBUG
    /* kept or undone, the view and the answer agree */
    if (rc == RF_OK && view_check && s_view_total(c, ans, &view_after))
        assert(memcmp(view_before, view_after, sizeof *view_before * (size_t)c->N * (size_t)c->R) == 0);
    free(view_before);
    free(view_after);
#endif
    return rc;
}

/* Keep back: each gang the pass preempted, the most valuable first, is kept
 * again, its preemptors (the admitted gangs above it with new pods on its
 * nodes) are lifted out and placed again in the pass's order (s_move).
 * Each gang placed for itself takes the cheapest victims for itself, which
 * for the batch may be several small gangs where one freed rack would have
 * served two gangs: this undoes such choices one victim at a time. `ans`
 * is finished on return. */
static rf_status s_keep_back(s_ctx_t *c, rf_answer_t *ans, const s_order_t *order, int32_t n_order)
{
    const rf_problem_t *pb = c->pb;
    /* for the answer's own problem: the caller's, or the context's view */
    rf_answer_t *was = rf_answer_new(ans->problem);
    int32_t *vict = malloc(sizeof *vict * (size_t)(pb->n_running + 1));
    int32_t *lifted = malloc(sizeof *lifted * (size_t)(pb->n_gangs + 1));
    uint8_t *on = calloc((size_t)pb->n_nodes + 1, 1);
    rf_status rc = RF_OK;
    int32_t n_vict = 0, preemptors = c->n_preemptors;
    if (!was || !vict || !lifted || !on) {
        rc = RF_ENOMEM;
        goto done;
    }
    if ((rc = rf__preempt_settle(ans)) != RF_OK || (rc = rf_answer_finish(ans)) != RF_OK)
        goto done;
    for (int32_t v = 0; v < pb->n_running; v++)
        if (ans->running[v].preempted)
            vict[n_vict++] = v;
    s_kb_pb = pb;
    qsort(vict, (size_t)n_vict, sizeof *vict, s_cmp_victim_units);
    s_kb_pb = NULL;
    if (n_vict > S_KEEP_TRIES)
        n_vict = S_KEEP_TRIES;
    for (int32_t i = 0; i < n_vict && rc == RF_OK; i++) {
        int32_t v = vict[i];
        const rf_running_t *run = &pb->running[v];
        if (!ans->running[v].preempted)
            continue; /* kept by an earlier move */
        s_mark_nodes(on, run, 1);
        int32_t n_lifted = 0;
        for (int32_t q = 0; q < n_order; q++) {
            int32_t g = order[q].gang;
            const rf_gang_t *gg = &pb->gangs[g];
            bool hit = false;
            for (int32_t p = 0; ans->gangs[g].admitted && gg->priority > run->priority && p < gg->n_pod_sets && !hit;
                 p++)
                for (int32_t k = 0; k < ans->gangs[g].pod_sets[p].n_placements && !hit; k++)
                    hit = on[ans->gangs[g].pod_sets[p].placements[k].node];
            if (hit)
                lifted[n_lifted++] = g;
        }
        s_mark_nodes(on, run, 0);
        bool kept;
        if (n_lifted > 0)
            rc = s_move(c, ans, was, lifted, n_lifted, v, &kept);
    }
done:
    c->n_preemptors = preemptors;
    rf_answer_destroy(&was);
    free(vict);
    free(lifted);
    free(on);
    return rc;
}

/* A lower bound on the penalty of gang g in any feasible answer: its pods
 * (none bound, one pod set) need at least ceil(k / most that fit) domains at
 * every level, counted on the capacity before anything is placed. */
static double s_gang_bound(const s_ctx_t *c, int32_t gi)
{
    const rf_gang_t *g = &c->pb->gangs[gi];
    if (g->n_pod_sets != 1 || g->pod_sets[0].n_bound > 0)
        return 0;
    const s_shape_t *sh = &c->shapes[c->ps_shape[c->gang_ps0[gi]]];
    int64_t k = g->pod_sets[0].min_count;
    double lb = 0;
    for (int32_t l = 0; l < c->L; l++)
        if (sh->maxcnt0[l] > 0 && k > sh->maxcnt0[l])
            lb += c->pb->level_costs[l] * (double)((k + sh->maxcnt0[l] - 1) / sh->maxcnt0[l] - 1);
    return g->bandwidth * lb;
}

rf_status rf__greedy_solve(const rf_problem_t *pb, rf__greedy_order gorder, rf_answer_t *ans, rf_error_t *err)
{
    rf_solve_ctx_t ctx;
    RF_CALL(rf__ctx_init(&ctx, pb, NULL, err));
    rf_status rc = rf__greedy_run(&ctx, gorder, false, ans, NULL, err);
    rf__ctx_fini(&ctx);
    return rc;
}

/* A pass of rf__greedy_run in progress: its capacity view, its order and
 * the gangs' own bounds, alive between placing and finishing. */
typedef struct {
    s_ctx_t c;
    s_order_t *order;
    double *bounds;
} s_run_t;

static void s_run_fini(s_run_t *r)
{
    free(r->order);
    free(r->bounds);
    if (r->c.pb)
        s_ctx_fini(&r->c);
    memset(r, 0, sizeof *r);
}

/* The pass's placing: every gang in `gorder`, preempting with victim rule
 * `rule`, into `ans` (not finished). r->c.n_preemptors counts the gangs
 * admitted by preemption. */
static rf_status s_run_place(const rf_solve_ctx_t *ctx, rf__greedy_order gorder, rf__victim_rule rule, rf_answer_t *ans,
                             double *gang_lb, s_run_t *r, rf_error_t *err)
{
    const rf_problem_t *pb = ctx->problem;
    memset(r, 0, sizeof *r);
    RF_CALL(s_ctx_init(&r->c, ctx, err));
    s_ctx_t *c = &r->c;
    c->kueue_only = gorder == RF__ORDER_KUEUE;
    c->rule = rule;
    for (int32_t g = 0; g < pb->n_gangs; g++)
        if (pb->gangs[g].n_pod_sets > 64)
            return rf_error_set(err, RF_EUNSUPPORTED, "", "gang %s: more than 64 pod sets", pb->gangs[g].name);
    r->order = malloc((size_t)(pb->n_gangs + 1) * sizeof *r->order);
    r->bounds = malloc((size_t)(pb->n_gangs + 1) * sizeof *r->bounds);
    if (!r->order || !r->bounds)
        return rf_error_set(err, RF_ENOMEM, "", "out of memory");
    s_order_t *order = r->order;
    for (int32_t g = 0; g < pb->n_gangs; g++) {
        const rf_gang_t *gg = &pb->gangs[g];
        order[g] = (s_order_t){.gang = g, .priority = gg->priority};
        for (int32_t p = 0; p < gg->n_pod_sets; p++) {
            int32_t vr = pb->options.value_resource;
            order[g].units += vr >= 0 ? gg->pod_sets[p].count * gg->pod_sets[p].requests[vr] : 0;
            order[g].pods += gg->pod_sets[p].count;
        }
        r->bounds[g] = s_gang_bound(c, g);
        if (gang_lb)
            gang_lb[g] = r->bounds[g];
    }
    bool ordered = pb->options.admission == RF_ADMIT_ORDERED;
    qsort(order, (size_t)pb->n_gangs, sizeof *order,
          ordered || gorder != RF__ORDER_VALUE ? s_cmp_ordered : s_cmp_value);
    int32_t blocked_by = -1;
    int64_t blocked_prio = 0;
    for (int32_t i = 0; i < pb->n_gangs; i++) {
        int32_t g = order[i].gang;
        if (ordered && blocked_by >= 0 && blocked_prio == order[i].priority) {
            rf_why_t why = {.level = -1, .resource = -1, .fits = -1, .needs = -1};
            rf_answer_reject(ans, g, why, "ordered admission: %s, earlier at the same priority, was not admitted",
                             pb->gangs[blocked_by].name);
            continue;
        }
        bool admitted = false;
        rf_status rc = s_place_gang(c, g, ans, &admitted);
        if (rc != RF_OK)
            return rf_error_set(err, rc, "", "greedy: %s while placing gang %s", rf_status_message(rc),
                                pb->gangs[g].name);
        if (!admitted && ordered) {
            blocked_by = g;
            blocked_prio = order[i].priority;
        }
    }
    return RF_OK;
}

/* The pass's end: the keep-back step (with `keep_back`), the polish (with
 * `polish`), victims without a preemptor kept, `ans` finished with its
 * bound, optimal and mode_used. */
static rf_status s_run_end(s_run_t *r, bool keep_back, bool polish, rf_answer_t *ans, rf_error_t *err)
{
    const rf_problem_t *pb = r->c.pb;
    rf_status rc;
    if (keep_back && (rc = s_keep_back(&r->c, ans, r->order, pb->n_gangs)) != RF_OK)
        return rf_error_set(err, rc, "", "greedy: %s while keeping victims back", rf_status_message(rc));
    if (polish && (rc = s_polish(&r->c, ans, r->bounds)) != RF_OK)
        return rf_error_set(err, rc, "", "greedy: %s while polishing", rf_status_message(rc));
    if ((rc = rf__preempt_settle(ans)) == RF_OK) /* victims whose preemptor moved away are kept */
        rc = rf_answer_finish(ans);
    if (rc != RF_OK)
        return rf_error_set(err, rc, "", "out of memory finishing the answer");
    double bound = 0;
    /* the value is proven maximal only when every gang got every pod */
    bool all = true;
    for (int32_t g = 0; g < pb->n_gangs; g++) {
        if (!ans->gangs[g].admitted) {
            all = false;
            continue;
        }
        bound += r->bounds[g];
        for (int32_t p = 0; p < pb->gangs[g].n_pod_sets; p++) {
            const rf_pod_set_t *ps = &pb->gangs[g].pod_sets[p];
            int64_t pods = ps->n_bound_pods;
            for (int32_t i = 0; i < ans->gangs[g].pod_sets[p].n_placements; i++)
                pods += ans->gangs[g].pod_sets[p].placements[i].count;
            all &= pods == ps->count;
        }
    }
    bound += rf_answer_kept_penalty(ans); /* kept running gangs: a constant of this answer */
    all = all && ans->summary.preempted == 0;
    if (bound > ans->summary.penalty)
        bound = ans->summary.penalty; /* never claim more than we have */
    ans->summary.penalty_bound = bound;
    ans->summary.optimal = all && ans->summary.penalty <= bound + 1e-6;
    ans->summary.mode_used = "greedy";
    return RF_OK;
}

rf_status rf__greedy_run(const rf_solve_ctx_t *ctx, rf__greedy_order gorder, bool polish, rf_answer_t *ans,
                         double *gang_lb, rf_error_t *err)
{
    s_run_t a, b;
    memset(&b, 0, sizeof b);
    rf_answer_t *other = NULL;
    rf_status rc = s_run_place(ctx, gorder, RF__VICTIMS_CHEAPEST, ans, gang_lb, &a, err);
    if (rc != RF_OK)
        goto done;
    if (a.c.n_preemptors < S_RULES_FROM || rf__greedy_first_order(ctx) == RF__ORDER_KUEUE) {
        rc = s_run_end(&a, false, polish, ans, err);
        goto done;
    }
    /* Several gangs preempted, on a batch small enough for more than one
     * pass (as the strategy's two orders): the victims one gang chose
     * change what the next finds, and the cheapest victims for each gang
     * alone are not the cheapest for the batch (bench/RESULTS.md, "Victim
     * rules and keep-back"). The pass again with Kueue's rule; the better
     * of the two (the first on a tie) goes on with the keep-back step. */
    if (!(other = rf_answer_new(ans->problem))) {
        rc = rf_error_set(err, RF_ENOMEM, "", "out of memory");
        goto done;
    }
    if ((rc = s_run_place(ctx, gorder, RF__VICTIMS_RECENT, other, NULL, &b, err)) != RF_OK)
        goto done;
    if ((rc = rf__preempt_settle(ans)) != RF_OK || (rc = rf_answer_finish(ans)) != RF_OK ||
        (rc = rf__preempt_settle(other)) != RF_OK || (rc = rf_answer_finish(other)) != RF_OK) {
        rf_error_set(err, rc, "", "out of memory finishing the answer");
        goto done;
    }
    if (rf_answer_compare(other, ans) < 0) {
        if ((rc = s_run_end(&b, true, polish, other, err)) == RF_OK && (rc = rf_answer_copy(ans, other)) != RF_OK)
            rf_error_set(err, rc, "", "out of memory");
    } else {
        rc = s_run_end(&a, true, polish, ans, err);
    }
done:
    rf_answer_destroy(&other);
    s_run_fini(&a);
    s_run_fini(&b);
    return rc;
}

/* Fill's second part: each gang of order[n] (value order) admitted with an
 * elastic pod set short of its count, until the deadline, lifted out (the
 * others stay) and searched again with every
 * pod set at least at its pods, each grown in turn by bisection on slices
 * as s_place_gang grows a new gang; kept only with more pods, else put
 * back as it was. Gangs with bound pods in a sliced pod set, or pinned to
 * an unlabelled node, are left alone. */
static rf_status s_grow(s_ctx_t *c, rf_answer_t *ans, const s_order_t *order, int32_t n, double deadline, bool *grew)
{
    const rf_problem_t *pb = c->pb;
    s_gang_t *gv = malloc(sizeof *gv);
    if (!gv)
        return RF_ENOMEM;
    rf_status rc = RF_OK;
    for (int32_t i = 0; i < n && rc == RF_OK && rf_now_ms() < deadline; i++) {
        int32_t g = order[i].gang;
        const rf_gang_t *gg = &pb->gangs[g];
        if (!ans->gangs[g].admitted || !s_gang_view(c, g, gv) || gv->pinned_unlabeled >= 0)
            continue;
        int64_t old[64], hi[64];
        bool short_of = false, sliced_bound = false;
        for (int32_t p = 0; p < gv->n_ps; p++) {
            const rf_pod_set_answer_t *pa = &ans->gangs[g].pod_sets[p];
            old[p] = 0;
            for (int32_t k = 0; k < pa->n_placements; k++)
                old[p] += pa->placements[k].count;
            hi[p] = gg->pod_sets[p].count - gg->pod_sets[p].n_bound_pods;
            short_of |= old[p] < hi[p];
            sliced_bound |= gv->v[p].slice > 1 && gg->pod_sets[p].n_bound > 0;
        }
        if (!short_of || sliced_bound)
            continue;
        for (int32_t p = 0; p < gv->n_ps; p++) { /* lift it out */
            const rf_pod_set_answer_t *pa = &ans->gangs[g].pod_sets[p];
            for (int32_t k = 0; k < pa->n_placements; k++)
                s_apply(c, &gg->pod_sets[p], pa->placements[k].node, pa->placements[k].count, -1);
            gv->v[p].target = old[p];
        }
        double pen;
        bool more = false;
        if (s_search(c, gv, &pen))
            for (int32_t p = 0; p < gv->n_ps; p++)
                more |= s_bisect(c, gv, p, old[p], hi[p], deadline) > old[p];
        if (c->failed_alloc) {
            rc = RF_ENOMEM;
            break;
        }
        if (more && s_search(c, gv, &pen)) {
            rf_answer_gang_reset(ans, g);
            rc = s_commit(c, gv, ans);
            *grew = true;
        } else { /* put it back */
            for (int32_t p = 0; p < gv->n_ps; p++) {
                const rf_pod_set_answer_t *pa = &ans->gangs[g].pod_sets[p];
                for (int32_t k = 0; k < pa->n_placements; k++)
                    s_apply(c, &gg->pod_sets[p], pa->placements[k].node, pa->placements[k].count, +1);
            }
        }
    }
    free(gv);
    return rc;
}

rf_status rf__greedy_fill(const rf_solve_ctx_t *ctx, rf_answer_t *ans, double deadline, bool *added, rf_error_t *err)
{
    const rf_problem_t *pb = ctx->problem;
    *added = false;
    if (pb->options.admission == RF_ADMIT_ORDERED || ans->summary.preempted > 0)
        return RF_OK;
    s_ctx_t c;
    s_order_t *order = NULL;
    rf_status rc = s_ctx_init(&c, ctx, err);
    if (rc != RF_OK)
        goto done;
    order = malloc((size_t)(pb->n_gangs + 1) * sizeof *order);
    if (!order) {
        rc = rf_error_set(err, RF_ENOMEM, "", "out of memory");
        goto done;
    }
    /* the answer's new pods take their room; every gang queues in value
     * order: the rejected ones to be placed, the admitted ones to grow */
    for (int32_t g = 0; g < pb->n_gangs; g++) {
        const rf_gang_t *gg = &pb->gangs[g];
        if (gg->n_pod_sets > 64)
            goto done; /* the greedy places none such */
        if (ans->gangs[g].admitted)
            for (int32_t p = 0; p < gg->n_pod_sets; p++) {
                const rf_pod_set_answer_t *pa = &ans->gangs[g].pod_sets[p];
                for (int32_t k = 0; k < pa->n_placements; k++)
                    s_apply(&c, &gg->pod_sets[p], pa->placements[k].node, pa->placements[k].count, +1);
            }
        order[g] = (s_order_t){.gang = g, .priority = gg->priority};
        for (int32_t p = 0; p < gg->n_pod_sets; p++) {
            int32_t vr = pb->options.value_resource;
            order[g].units += vr >= 0 ? gg->pod_sets[p].count * gg->pod_sets[p].requests[vr] : 0;
            order[g].pods += gg->pod_sets[p].count;
        }
    }
    qsort(order, (size_t)pb->n_gangs, sizeof *order, s_cmp_value);
    bool *grow = calloc((size_t)pb->n_gangs + 1, sizeof *grow); /* admitted before the fill */
    if (!grow) {
        rc = rf_error_set(err, RF_ENOMEM, "", "out of memory");
        goto done;
    }
    for (int32_t g = 0; g < pb->n_gangs; g++)
        grow[g] = ans->gangs[g].admitted;
    for (int32_t i = 0; i < pb->n_gangs && rf_now_ms() < deadline; i++) {
        int32_t g = order[i].gang;
        if (grow[g])
            continue;
        bool admitted = false;
        rf_answer_gang_reset(ans, g);
        rc = s_place_gang(&c, g, ans, &admitted);
        if (rc != RF_OK) {
            free(grow);
            rf_error_set(err, rc, "", "greedy fill: %s while placing gang %s", rf_status_message(rc),
                         pb->gangs[g].name);
            goto done;
        }
        *added |= admitted;
    }
    /* the gangs to grow: those admitted before, in value order */
    int32_t n = 0;
    for (int32_t i = 0; i < pb->n_gangs; i++)
        if (grow[order[i].gang])
            order[n++] = order[i];
    free(grow);
    bool preempts = false; /* the fill may have preempted: then the greedy's view of room is not the answer's */
    for (int32_t i = 0; i < pb->n_running; i++)
        preempts |= ans->running[i].preempted;
    if (!preempts && (rc = s_grow(&c, ans, order, n, deadline, added)) != RF_OK) {
        rf_error_set(err, rc, "", "greedy fill: %s while growing elastic gangs", rf_status_message(rc));
        goto done;
    }
    if ((rc = rf__preempt_settle(ans)) == RF_OK)
        rc = rf_answer_finish(ans);
    if (rc != RF_OK)
        rf_error_set(err, rc, "", "out of memory finishing the answer");
    /* other values: the old bound does not speak of them */
    ans->summary.penalty_bound = 0;
    ans->summary.optimal = false;
done:
    free(order);
    if (c.pb)
        s_ctx_fini(&c);
    return rc;
}

/* The strategy: a pass in Kueue's queue order with Kueue's own choices, and,
 * on batches small enough (nodes x pod sets <= S_BOTH_CELLS), a pass in value
 * order (larger gangs first), the better answer kept (the value pass on a
 * tie). Measured (bench/RESULTS.md): the Kueue-order pass is never behind the
 * Kueue-style baseline on the models and is the better of the two on the
 * large ones, where one pass is all the time target allows; the value pass
 * wins on the small ones. */
rf__greedy_order rf__greedy_first_order(const rf_solve_ctx_t *ctx)
{
    int64_t cells = (int64_t)ctx->problem->n_nodes * ctx->elig.n_pod_sets;
    return cells > S_BOTH_CELLS ? RF__ORDER_KUEUE : RF__ORDER_VALUE;
}

static rf_status s_greedy_strategy(const rf_solve_ctx_t *ctx, rf_answer_t *ans, rf_error_t *err)
{
    const rf_problem_t *pb = ctx->problem;
    if (rf__greedy_first_order(ctx) == RF__ORDER_KUEUE)
        return rf__greedy_run(ctx, RF__ORDER_KUEUE, false, ans, NULL, err);
    RF_CALL(rf__greedy_run(ctx, RF__ORDER_VALUE, false, ans, NULL, err));
    rf_answer_t *other = rf_answer_new(pb);
    if (!other)
        return rf_error_set(err, RF_ENOMEM, "", "out of memory");
    rf_status rc = rf__greedy_run(ctx, RF__ORDER_KUEUE, false, other, NULL, err);
    if (rc == RF_OK && rf_answer_compare(other, ans) < 0)
        rc = rf_answer_copy(ans, other);
    rf_answer_destroy(&other);
    return rc;
}

const rf_strategy_t rf__strategy_greedy = {
    .name = "greedy",
    .description = "gangs one at a time, each whole at the best-fitting lowest domain: Kueue's queue order and "
                   "choices, and on smaller batches also priority and size order with the lower penalty of Kueue's "
                   "descent and a node-efficient one, the better answer kept",
    .solve = s_greedy_strategy,
};
