/* solver/preempt.c: the greedy's preemption (solver/preempt.h,
 * docs/preemption.md).
 *
 * Room. For a gang of priority P, the room on node n in resource r is
 *   m0(n,r) + fV(n,r),   m0 = min over thresholds p of
 *                             (allocatable - used + freed(<p) - demand(<=p)),
 * the thresholds being P and the priorities >= P of the new pods already on
 * n; freed(<p) is what the running gangs already preempted, of priority below
 * p, use there, and fV what the victims chosen now use there (all below P, so
 * they free room for every threshold). The contract's rule is
 * demand(<=p) <= max(0, allocatable - used + freed(<p)) for every p; dropping
 * the max(0, .) changes no answer to "do k pods fit", because where it would
 * matter the room is <= 0 either way. Without any preemption on a node, m0 is
 * allocatable - used - (all new pods there), the greedy's own view.
 *
 * Domains. A gang is placed here within one domain: of its deepest required
 * level, or any level below it (a gang without a required level may also take
 * the whole cluster). A sliced pod set in a domain above its slice level takes
 * whole slices in the slice-level domains inside it (s_fill_sliced); in one at
 * or below that level every rank order meets the slice rule. In a domain, the candidate
 * victims are the preemptible running gangs of priority below P, not yet
 * preempted, with a pod on one of its nodes, sorted by the caller's rule:
 * cheapest first (lowest priority, then fewest units, then fewest pods, then
 * the most spread, whose eviction lowers the penalty most), or Kueue's
 * (lowest priority, then the most recently admitted, the later in `running`).
 * The shortest prefix that makes the gang
 * fit is found by bisection (fitting is monotone in the prefix), then each
 * victim is dropped again if the gang still fits without it, the last in the
 * rule's order first (at most S_PRUNE = 8 tries). The fit test fills the domain's nodes with
 * the most room first, pod set by pod set, so the placement is compact.
 *
 * Choice. Among domains, the least value lost wins (priority by priority,
 * highest first: units, then pods), then the lowest net penalty (the gang's
 * penalty there minus the penalties of its victims, which no longer count),
 * then the fewest victims, then the first domain in tree order. A gang's
 * pods are `count` per pod set, or `min_count` (the caller says which); its
 * bound pods count toward them, and only domains that hold every bound pod
 * are candidates (so the required domains hold them too). Sliced pod sets
 * with bound pods are left to the greedy (their ranks decide the slices). */
#include <stdlib.h>
#include <string.h>

#include "preempt.h"
#include "rackfit/answer.h"
#include "rackfit/quantity.h"
#include "tree.h"

#define S_PRUNE     8  /* removal tries per domain after the bisection */
#define S_MAX_PS    64 /* pod sets per gang (the greedy's limit too) */
#define S_UNLIMITED RF_QTY_UNLIMITED

/* ----------------------------------------------------------- data */

typedef struct {
    int32_t node;
    int32_t count;
    int32_t pos; /* the node's position in tree order (node_order) */
} s_pl_t;

/* Tree order: ranks handed out down a pod set's list then stay together by
 * host, rack, block. */
static int s_pl_cmp(const void *a, const void *b)
{
    const s_pl_t *x = a, *y = b;
    return (x->pos > y->pos) - (x->pos < y->pos);
}

/* A candidate domain's outcome. */
typedef struct {
    bool ok;
    int32_t *victims; /* running gang indices */
    int32_t n_victims;
    double net_penalty;
} s_choice_t;

typedef struct {
    const rf_problem_t *pb;
    const rf__tree_t *t;
    const rf_answer_t *ans;
    const rf_gang_t *gang;
    int64_t prio;
    rf__victim_rule rule;
    int32_t N, R;
    int64_t target[S_MAX_PS];
    int64_t *room;                 /* [N * R]: m0 plus what the victims applied so far free */
    const uint8_t *elig[S_MAX_PS]; /* [N] per pod set: the solve's eligibility mask of its class */
    int64_t *capfit;    /* [n_pod_sets * N]: pods of pod set j an empty node n would take (capped at the target) */
    int32_t *vic_start; /* [N + 1]: candidate victims with pods on node n (CSR) */
    int32_t *vic_list;
    uint32_t *stamp; /* [n_running] */
    uint32_t now;
    int32_t *cand;   /* [n_running] candidates of the current domain */
    int32_t *sorted; /* [n_sorted] every candidate victim of the call, in the rule's order */
    int32_t n_sorted;
    int32_t *work;       /* [n_running] scratch for victim lists */
    int32_t *order;      /* [N] nodes of the domain by room */
    int32_t level;       /* the level of the domain being tried (-1: the whole cluster) */
    int32_t *sub;        /* [n_domains] slice-level domains inside it (s_fill_sliced) */
    int64_t *sub_slices; /* [n_domains] whole slices each of them takes */
    int64_t *fit;        /* [N] */
    s_pl_t *pl;          /* [N * n_pod_sets] placements of the last successful fit test */
    int32_t n_pl;
    int32_t pl_end[S_MAX_PS]; /* pod set j's placements end here in pl */
} s_pc_t;

/* ------------------------------------------------------- room (m0) */

/* Demand (new pods) or supply (preempted pods) at one priority on a node. */
typedef struct {
    int32_t node;
    int64_t prio;
    const int64_t *req;
    int64_t count;
} s_item_t;

static int s_item_cmp(const void *a, const void *b)
{
    const s_item_t *x = a, *y = b;
    if (x->node != y->node)
        return (x->node > y->node) - (x->node < y->node);
    return (x->prio > y->prio) - (x->prio < y->prio);
}

/* m0 on a node that a preempted gang frees, from its sorted items. */
static void s_node_exact(s_pc_t *c, int32_t n, const s_item_t *dem, int32_t nd, const s_item_t *sup, int32_t ns)
{
    const rf_node_t *node = &c->pb->nodes[n];
    int64_t *room = &c->room[(size_t)n * (size_t)c->R];
    for (int32_t r = 0; r < c->R; r++) {
        if (node->allocatable[r] == S_UNLIMITED) {
            room[r] = S_UNLIMITED;
            continue;
        }
        /* thresholds: P, then every demand priority above P */
        int64_t best = INT64_MAX, dem_le = 0, freed_lt = 0;
        int32_t a = 0, b = 0;
        int64_t p = c->prio;
        for (;;) {
            for (; a < nd && dem[a].prio <= p; a++)
                dem_le += dem[a].count * dem[a].req[r];
            for (; b < ns && sup[b].prio < p; b++)
                freed_lt += sup[b].count * sup[b].req[r];
            int64_t v = node->allocatable[r] - node->used[r] + freed_lt - dem_le;
            best = v < best ? v : best;
            if (a == nd)
                break;
            p = dem[a].prio;
        }
        room[r] = best;
    }
}

static bool s_push_item(s_item_t **v, int32_t *n, int32_t *cap, s_item_t it)
{
    if (*n == *cap) {
        int32_t nc = *cap ? *cap * 2 : 64;
        s_item_t *x = realloc(*v, sizeof *x * (size_t)nc);
        if (!x)
            return false;
        *v = x;
        *cap = nc;
    }
    (*v)[(*n)++] = it;
    return true;
}

static rf_status s_room(s_pc_t *c)
{
    const rf_problem_t *pb = c->pb;
    const rf_answer_t *ans = c->ans;
    int32_t R = c->R;
    for (int32_t n = 0; n < c->N; n++)
        for (int32_t r = 0; r < R; r++) {
            const rf_node_t *node = &pb->nodes[n];
            c->room[(size_t)n * R + r] =
                node->allocatable[r] == S_UNLIMITED ? S_UNLIMITED : node->allocatable[r] - node->used[r];
        }
    for (int32_t g = 0; g < ans->n_gangs; g++) {
        const rf_gang_answer_t *ga = &ans->gangs[g];
        for (int32_t j = 0; ga->admitted && j < pb->gangs[g].n_pod_sets; j++)
            for (int32_t k = 0; k < ga->pod_sets[j].n_placements; k++) {
                const rf_placement_t *pl = &ga->pod_sets[j].placements[k];
                int64_t *room = &c->room[(size_t)pl->node * R];
                for (int32_t r = 0; r < R; r++)
                    if (room[r] != S_UNLIMITED)
                        room[r] -= pl->count * pb->gangs[g].pod_sets[j].requests[r];
            }
    }
    /* nodes that preempted gangs free: per priority */
    uint8_t *touched = calloc((size_t)c->N + 1, 1);
    s_item_t *dem = NULL, *sup = NULL;
    int32_t nd = 0, cd = 0, ns = 0, cs = 0;
    rf_status rc = touched ? RF_OK : RF_ENOMEM;
    for (int32_t i = 0; rc == RF_OK && i < ans->n_running; i++) {
        if (!ans->running[i].preempted)
            continue;
        const rf_running_t *run = &pb->running[i];
        for (int32_t j = 0; rc == RF_OK && j < run->n_pod_sets; j++)
            for (int32_t k = 0; rc == RF_OK && k < run->pod_sets[j].n_placements; k++) {
                const rf_run_placement_t *pl = &run->pod_sets[j].placements[k];
                touched[pl->node] = 1;
                if (!s_push_item(&sup, &ns, &cs,
                                 (s_item_t){pl->node, run->priority, run->pod_sets[j].requests, pl->count}))
                    rc = RF_ENOMEM;
            }
    }
    for (int32_t g = 0; rc == RF_OK && ns > 0 && g < ans->n_gangs; g++) {
        const rf_gang_answer_t *ga = &ans->gangs[g];
        for (int32_t j = 0; ga->admitted && j < pb->gangs[g].n_pod_sets && rc == RF_OK; j++)
            for (int32_t k = 0; k < ga->pod_sets[j].n_placements && rc == RF_OK; k++) {
                const rf_placement_t *pl = &ga->pod_sets[j].placements[k];
                if (touched[pl->node] && !s_push_item(&dem, &nd, &cd,
                                                      (s_item_t){pl->node, pb->gangs[g].priority,
                                                                 pb->gangs[g].pod_sets[j].requests, pl->count}))
                    rc = RF_ENOMEM;
            }
    }
    if (rc == RF_OK && ns > 0) {
        if (nd > 1)
            qsort(dem, (size_t)nd, sizeof *dem, s_item_cmp);
        qsort(sup, (size_t)ns, sizeof *sup, s_item_cmp);
        int32_t a = 0, b = 0;
        while (b < ns) {
            int32_t n = sup[b].node, b1 = b, a0;
            while (b1 < ns && sup[b1].node == n)
                b1++;
            while (a < nd && dem[a].node < n)
                a++;
            a0 = a;
            while (a < nd && dem[a].node == n)
                a++;
            s_node_exact(c, n, dem + a0, a - a0, sup + b, b1 - b);
            b = b1;
        }
    }
    free(touched);
    free(dem);
    free(sup);
    return rc;
}

/* ------------------------------------------------------- victims */

/* Apply (sign +1) or take back (-1) what running gang i frees. */
static void s_free(s_pc_t *c, int32_t i, int sign)
{
    const rf_running_t *run = &c->pb->running[i];
    for (int32_t j = 0; j < run->n_pod_sets; j++)
        for (int32_t k = 0; k < run->pod_sets[j].n_placements; k++) {
            const rf_run_placement_t *pl = &run->pod_sets[j].placements[k];
            int64_t *room = &c->room[(size_t)pl->node * (size_t)c->R];
            for (int32_t r = 0; r < c->R; r++)
                if (room[r] != S_UNLIMITED)
                    room[r] += sign * pl->count * run->pod_sets[j].requests[r];
        }
}

/* Cheapest first: lowest priority, fewest units, fewest pods, most spread. */
static _Thread_local const rf_problem_t *s_sort_pb; /* qsort has no context; set around each sort */

static int s_victim_cmp(const void *a, const void *b)
{
    const rf_running_t *x = &s_sort_pb->running[*(const int32_t *)a], *y = &s_sort_pb->running[*(const int32_t *)b];
    if (x->priority != y->priority)
        return x->priority < y->priority ? -1 : 1;
    if (x->units != y->units)
        return x->units < y->units ? -1 : 1;
    if (x->pods != y->pods)
        return x->pods < y->pods ? -1 : 1;
    if (x->penalty != y->penalty)
        return x->penalty > y->penalty ? -1 : 1;
    return (*(const int32_t *)a > *(const int32_t *)b) - (*(const int32_t *)a < *(const int32_t *)b);
}

/* Kueue's CandidatesOrdering: lowest priority, then the most recently
 * admitted first (the later in `running`). */
static int s_victim_cmp_recent(const void *a, const void *b)
{
    int32_t i = *(const int32_t *)a, j = *(const int32_t *)b;
    const rf_running_t *x = &s_sort_pb->running[i], *y = &s_sort_pb->running[j];
    if (x->priority != y->priority)
        return x->priority < y->priority ? -1 : 1;
    return (i < j) - (i > j);
}

/* Candidate victims with a pod under domain d (nodes [lo, hi) of
 * node_order), in the rule's order, into c->cand. */
static int32_t s_candidates(s_pc_t *c, int32_t lo, int32_t hi)
{
    int32_t n = 0;
    if (++c->now == 0) {
        memset(c->stamp, 0, sizeof *c->stamp * (size_t)c->pb->n_running);
        c->now = 1;
    }
    for (int32_t q = lo; q < hi; q++) {
        int32_t node = c->t->node_order[q];
        for (int32_t v = c->vic_start[node]; v < c->vic_start[node + 1]; v++)
            c->stamp[c->vic_list[v]] = c->now;
    }
    for (int32_t v = 0; v < c->n_sorted; v++) /* the call's order, sorted once */
        if (c->stamp[c->sorted[v]] == c->now)
            c->cand[n++] = c->sorted[v];
    return n;
}

/* ------------------------------------------------------- fit test */

static _Thread_local const int64_t *s_sort_fit;

static int s_fit_cmp(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    if (s_sort_fit[x] != s_sort_fit[y])
        return s_sort_fit[x] > s_sort_fit[y] ? -1 : 1;
    return (x > y) - (x < y);
}

/* Pods of `req` that fit in `room` (one node's row). */
static int64_t s_fits(const s_pc_t *c, const int64_t *room, const int64_t *req, int64_t cap)
{
    int64_t best = cap;
    for (int32_t r = 0; r < c->R; r++) {
        if (req[r] <= 0 || room[r] == S_UNLIMITED)
            continue;
        if (room[r] < req[r])
            return 0;
        int64_t f = room[r] / req[r];
        best = f < best ? f : best;
    }
    return best;
}

/* Take (sign +1) or give back (-1) k pods of `req` on node n in c->room. */
static void s_take(s_pc_t *c, int32_t n, const int64_t *req, int64_t k, int sign)
{
    int64_t *row = &c->room[(size_t)n * (size_t)c->R];
    for (int32_t r = 0; r < c->R; r++)
        if (row[r] != S_UNLIMITED)
            row[r] -= sign * k * req[r];
}

static _Thread_local const int64_t *s_sort_slices;

/* Slice-level domains by the whole slices they take, most first, then in tree order. */
static int s_sub_cmp(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    if (s_sort_slices[x] != s_sort_slices[y])
        return s_sort_slices[x] > s_sort_slices[y] ? -1 : 1;
    return (x > y) - (x < y);
}

/* Pod set j's `need` new pods (a multiple of its slice size s: the contract's
 * rule for count and min_count, and sliced pod sets with bound pods never
 * come here) in whole slices on nodes [lo, hi), a domain above the slice
 * level: each slice-level domain inside it takes a multiple of s pods, those
 * with room for the most slices first, and in each the nodes with the most
 * room first. c->fit[q] is what node node_order[lo + q] takes. Appends to
 * c->pl and takes the pods out of c->room; false (having taken nothing) when
 * the slices do not fit. Listed in tree order, the placements then hand out
 * ranks domain by domain, so every s consecutive ranks share a domain. */
static bool s_fill_sliced(s_pc_t *c, int32_t j, int32_t lo, int32_t hi, int64_t need)
{
    const rf__tree_t *t = c->t;
    const rf_pod_set_t *ps = &c->gang->pod_sets[j];
    int64_t s = ps->slice.size, slices = 0;
    int32_t L = ps->slice.level, n_sub = 0;
    for (int32_t d = t->level_start[L]; d < t->level_start[L + 1]; d++) {
        if (t->node_start[d] < lo || t->node_end[d] > hi)
            continue;
        int64_t tot = 0;
        for (int32_t q = t->node_start[d]; q < t->node_end[d]; q++)
            tot += c->fit[q - lo];
        if (tot < s)
            continue;
        c->sub_slices[d] = tot / s;
        slices += tot / s;
        c->sub[n_sub++] = d;
    }
    if (slices < need / s)
        return false;
    s_sort_slices = c->sub_slices;
    qsort(c->sub, (size_t)n_sub, sizeof *c->sub, s_sub_cmp);
    s_sort_slices = NULL;
    for (int32_t i = 0; i < n_sub && need > 0; i++) {
        int32_t d = c->sub[i], n_room = 0;
        int64_t take = c->sub_slices[d] * s < need ? c->sub_slices[d] * s : need;
        need -= take;
        for (int32_t q = t->node_start[d] - lo; q < t->node_end[d] - lo; q++)
            if (c->fit[q] > 0)
                c->order[n_room++] = q;
        s_sort_fit = c->fit;
        qsort(c->order, (size_t)n_room, sizeof *c->order, s_fit_cmp);
        s_sort_fit = NULL;
        for (int32_t k = 0; k < n_room && take > 0; k++) {
            int32_t at = c->order[k];
            int64_t n = c->fit[at] < take ? c->fit[at] : take;
            take -= n;
            s_take(c, t->node_order[lo + at], ps->requests, n, +1);
            c->pl[c->n_pl++] = (s_pl_t){t->node_order[lo + at], (int32_t)n, lo + at};
        }
    }
    return true;
}

/* Can the gang's targets be placed on nodes [lo, hi) of node_order with the
 * current room? Fills c->pl on success: per pod set, the nodes with the most
 * room first, listed in tree order. Pod sets placed so far take their pods
 * out of c->room while the later ones are tried; all is given back before
 * returning. */
static bool s_fit_test(s_pc_t *c, int32_t lo, int32_t hi)
{
    const rf_gang_t *g = c->gang;
    int32_t m = hi - lo;
    bool ok = true;
    c->n_pl = 0;
    int32_t placed_sets = 0;
    for (int32_t j = 0; j < g->n_pod_sets && ok; j++) {
        const int64_t *req = g->pod_sets[j].requests;
        int64_t need = c->target[j], total = 0;
        int32_t n_room = 0; /* only nodes with room are sorted: on a full cluster, the victims' */
        for (int32_t q = 0; q < m; q++) {
            int32_t node = c->t->node_order[lo + q];
            c->fit[q] = c->elig[j][node] ? s_fits(c, &c->room[(size_t)node * (size_t)c->R], req, need) : 0;
            total += c->fit[q];
            if (c->fit[q] > 0)
                c->order[n_room++] = q;
        }
        if (total < need) {
            ok = false;
            break;
        }
        int32_t start = c->n_pl;
        const rf_pod_set_t *ps = &g->pod_sets[j];
        if (ps->slice.size > 1 && c->level < ps->slice.level) {
            /* a domain above the slice level: whole slices in its slice-level domains */
            ok = s_fill_sliced(c, j, lo, hi, need);
            if (!ok)
                break;
            need = 0;
        }
        s_sort_fit = c->fit;
        qsort(c->order, (size_t)(need > 0 ? n_room : 0), sizeof *c->order, s_fit_cmp);
        s_sort_fit = NULL;
        for (int32_t q = 0; q < n_room && need > 0; q++) {
            int32_t at = c->order[q];
            int64_t k = c->fit[at] < need ? c->fit[at] : need;
            need -= k;
            s_take(c, c->t->node_order[lo + at], req, k, +1);
            c->pl[c->n_pl++] = (s_pl_t){c->t->node_order[lo + at], (int32_t)k, lo + at};
        }
        qsort(c->pl + start, (size_t)(c->n_pl - start), sizeof *c->pl, s_pl_cmp);
        c->pl_end[j] = c->n_pl;
        placed_sets = j + 1;
    }
    /* give the pods back: the room is the caller's */
    for (int32_t j = 0, k = 0; j < placed_sets; j++)
        for (; k < c->pl_end[j]; k++)
            s_take(c, c->pl[k].node, g->pod_sets[j].requests, c->pl[k].count, -1);
    return ok;
}

/* Node k of the gang's pods: the new placements in c->pl, then its bound
 * pods' nodes. */
static int32_t s_gang_node(const s_pc_t *c, int32_t k)
{
    if (k < c->n_pl)
        return c->pl[k].node;
    k -= c->n_pl;
    for (int32_t j = 0; j < c->gang->n_pod_sets; j++) {
        const rf_pod_set_t *ps = &c->gang->pod_sets[j];
        if (k < ps->n_bound)
            return ps->bound[k].node;
        k -= ps->n_bound;
    }
    return -1;
}

/* The gang's penalty with the placements in c->pl (its bound pods too). */
static double s_penalty(const s_pc_t *c)
{
    const rf_problem_t *pb = c->pb;
    int32_t n = c->n_pl;
    for (int32_t j = 0; j < c->gang->n_pod_sets; j++)
        n += c->gang->pod_sets[j].n_bound;
    double pen = 0;
    for (int32_t l = 0; l < pb->n_levels; l++) {
        int32_t d = 0;
        for (int32_t k = 0; k < n; k++) {
            int32_t id = rf__tree_node_dom(c->t, s_gang_node(c, k), l);
            bool seen = false;
            for (int32_t q = 0; q < k && !seen; q++)
                seen = rf__tree_node_dom(c->t, s_gang_node(c, q), l) == id;
            d += !seen;
        }
        if (d > 1)
            pen += pb->level_costs[l] * (double)(d - 1);
    }
    return c->gang->bandwidth * pen;
}

/* Do the gang's bound pods all lie under domain d (of level l; -1: the
 * whole tree)? */
static bool s_holds_bound(const s_pc_t *c, int32_t l, int32_t d)
{
    for (int32_t j = 0; j < c->gang->n_pod_sets; j++)
        for (int32_t b = 0; b < c->gang->pod_sets[j].n_bound; b++) {
            int32_t node = c->gang->pod_sets[j].bound[b].node;
            if (rf__tree_node_dom(c->t, node, 0) < 0 || (l >= 0 && rf__tree_node_dom(c->t, node, l) != d))
                return false;
        }
    return true;
}

/* ------------------------------------------------------- one domain */

/* < 0 when choice a is better than b (both ok): the value lost, priority by
 * priority from the highest; then the net penalty; then fewer victims. */
static int s_choice_cmp(const rf_problem_t *pb, const s_choice_t *a, const s_choice_t *b)
{
    /* victim lists are in the rule's order: lowest priority first under either rule */
    int32_t i = a->n_victims - 1, j = b->n_victims - 1;
    while (i >= 0 || j >= 0) {
        int64_t pa = i >= 0 ? pb->running[a->victims[i]].priority : INT64_MIN;
        int64_t pr = j >= 0 ? pb->running[b->victims[j]].priority : INT64_MIN;
        int64_t p = pa > pr ? pa : pr, ua = 0, ub = 0, qa = 0, qb = 0;
        for (; i >= 0 && pb->running[a->victims[i]].priority == p; i--) {
            ua += pb->running[a->victims[i]].units;
            qa += pb->running[a->victims[i]].pods;
        }
        for (; j >= 0 && pb->running[b->victims[j]].priority == p; j--) {
            ub += pb->running[b->victims[j]].units;
            qb += pb->running[b->victims[j]].pods;
        }
        if (ua != ub)
            return ua < ub ? -1 : 1;
        if (qa != qb)
            return qa < qb ? -1 : 1;
    }
    if (a->net_penalty < b->net_penalty - 1e-9 || a->net_penalty > b->net_penalty + 1e-9)
        return a->net_penalty < b->net_penalty ? -1 : 1;
    return (a->n_victims > b->n_victims) - (a->n_victims < b->n_victims);
}

/* Move the applied prefix of c->cand to `len` victims. */
static void s_prefix(s_pc_t *c, int32_t *applied, int32_t len)
{
    while (*applied < len)
        s_free(c, c->cand[(*applied)++], +1);
    while (*applied > len)
        s_free(c, c->cand[--*applied], -1);
}

/* The victims, in the rule's order, that make the gang fit under nodes [lo, hi), into
 * out (victims in c->work, copied by the caller when kept). Leaves c->room
 * as it found it. */
static void s_domain(s_pc_t *c, int32_t lo, int32_t hi, s_choice_t *out)
{
    out->ok = false;
    int32_t k = s_candidates(c, lo, hi), applied = 0;
    /* the shortest prefix that fits: all of them first, then bisection; the
     * applied prefix moves by its difference only */
    s_prefix(c, &applied, k);
    bool fits_all = s_fit_test(c, lo, hi);
    if (!fits_all) {
        s_prefix(c, &applied, 0);
        return;
    }
    int32_t bad = -1, good = k; /* prefix length: bad does not fit, good does */
    while (good - bad > 1) {
        int32_t mid = bad + (good - bad) / 2;
        s_prefix(c, &applied, mid);
        if (s_fit_test(c, lo, hi))
            good = mid;
        else
            bad = mid;
    }
    s_prefix(c, &applied, 0);
    /* drop victims the gang does not need, the last in the rule's order first */
    int32_t n = good;
    memcpy(c->work, c->cand, sizeof *c->work * (size_t)n);
    for (int32_t v = 0; v < n; v++)
        s_free(c, c->work[v], +1);
    /* the last one is needed: without it the prefix is the bisection's `bad` */
    for (int32_t v = n - 2, tries = 0; v >= 0 && tries < S_PRUNE; v--, tries++) {
        s_free(c, c->work[v], -1);
        if (s_fit_test(c, lo, hi)) {
            memmove(&c->work[v], &c->work[v + 1], sizeof *c->work * (size_t)(n - v - 1));
            n--;
        } else {
            s_free(c, c->work[v], +1);
        }
    }
    bool ok = s_fit_test(c, lo, hi); /* the placement with exactly these victims */
    double net = ok ? s_penalty(c) : 0;
    for (int32_t v = 0; v < n; v++) {
        s_free(c, c->work[v], -1);
        net -= c->pb->running[c->work[v]].penalty;
    }
    out->ok = ok;
    out->victims = c->work;
    out->n_victims = n;
    out->net_penalty = net;
}

/* ------------------------------------------------------- interface */

/* The deepest required level of the gang or its pod sets, or -1 (slices
 * are kept in any domain above their level by s_fill_sliced). */
static int32_t s_deepest(const rf_gang_t *g)
{
    int32_t l = g->topology.required;
    for (int32_t j = 0; j < g->n_pod_sets; j++)
        if (g->pod_sets[j].topology.required > l)
            l = g->pod_sets[j].topology.required;
    return l;
}

/* Is any lower-priority running gang preemptible now, or already preempted? */
static bool s_worth_trying(const rf_problem_t *pb, const rf_answer_t *ans, int32_t gang)
{
    const rf_gang_t *g = &pb->gangs[gang];
    if (pb->options.preemption == RF_PREEMPT_NEVER || g->n_pod_sets > S_MAX_PS)
        return false;
    for (int32_t j = 0; j < g->n_pod_sets; j++)
        if (g->pod_sets[j].n_bound > 0 && g->pod_sets[j].slice.size > 1)
            return false; /* bound ranks decide the slices: left to the greedy and the ILP */
    for (int32_t i = 0; i < pb->n_running; i++)
        if (pb->running[i].priority < g->priority && (pb->running[i].preemptible || ans->running[i].preempted))
            return true;
    return false;
}

static rf_status s_alloc(s_pc_t *c)
{
    const rf_problem_t *pb = c->pb;
    size_t N = (size_t)c->N, R = (size_t)c->R, K = (size_t)pb->n_running, P = (size_t)c->gang->n_pod_sets;
    c->room = malloc(sizeof *c->room * (N * R + 1));
    c->capfit = malloc(sizeof *c->capfit * (P * N + 1));
    c->vic_start = calloc(N + 2, sizeof *c->vic_start);
    c->stamp = calloc(K + 1, sizeof *c->stamp);
    c->cand = malloc(sizeof *c->cand * (K + 1));
    c->sorted = malloc(sizeof *c->sorted * (K + 1));
    c->work = malloc(sizeof *c->work * (K + 1));
    c->order = malloc(sizeof *c->order * (N + 1));
    c->fit = malloc(sizeof *c->fit * (N + 1));
    c->pl = malloc(sizeof *c->pl * (N * P + 1));
    size_t D = (size_t)c->t->level_start[c->t->n_levels] + 1;
    c->sub = malloc(sizeof *c->sub * D);
    c->sub_slices = malloc(sizeof *c->sub_slices * D);
    if (!c->sub || !c->sub_slices || !c->room || !c->capfit || !c->vic_start || !c->stamp || !c->cand || !c->sorted ||
        !c->work || !c->order || !c->fit || !c->pl)
        return RF_ENOMEM;
    /* candidate victims per node (CSR) */
    int32_t total = 0;
    for (int32_t pass = 0; pass < 2; pass++) {
        for (int32_t i = 0; i < pb->n_running; i++) {
            const rf_running_t *run = &pb->running[i];
            if (!run->preemptible || c->ans->running[i].preempted || run->priority >= c->prio)
                continue;
            for (int32_t j = 0; j < run->n_pod_sets; j++)
                for (int32_t k = 0; k < run->pod_sets[j].n_placements; k++) {
                    int32_t n = run->pod_sets[j].placements[k].node;
                    if (pass == 0) {
                        c->vic_start[n + 2]++;
                        total++;
                    } else {
                        c->vic_list[c->vic_start[n + 1]++] = i;
                    }
                }
        }
        if (pass == 0) {
            for (size_t n = 0; n < N; n++)
                c->vic_start[n + 2] += c->vic_start[n + 1];
            if (!(c->vic_list = malloc(sizeof *c->vic_list * (size_t)(total + 1))))
                return RF_ENOMEM;
        }
    }
    /* a running gang with two pod sets on one node is listed twice there
     * (harmless: s_candidates marks by stamp); the candidates, sorted once */
    for (int32_t i = 0; i < pb->n_running; i++)
        if (pb->running[i].preemptible && !c->ans->running[i].preempted && pb->running[i].priority < c->prio)
            c->sorted[c->n_sorted++] = i;
    s_sort_pb = pb;
    qsort(c->sorted, (size_t)c->n_sorted, sizeof *c->sorted,
          c->rule == RF__VICTIMS_RECENT ? s_victim_cmp_recent : s_victim_cmp);
    s_sort_pb = NULL;
    return s_room(c);
}

static void s_release(s_pc_t *c)
{
    free(c->room);
    free(c->capfit);
    free(c->vic_start);
    free(c->vic_list);
    free(c->stamp);
    free(c->cand);
    free(c->sorted);
    free(c->work);
    free(c->order);
    free(c->fit);
    free(c->pl);
    free(c->sub);
    free(c->sub_slices);
}

/* Every candidate domain with the current targets; the best into *best
 * (victims copied into best_v). */
/* Could nodes [lo, hi) hold the targets even with nothing else on them? A
 * cheap skip for domains too small (single hosts, mostly). */
static bool s_big_enough(const s_pc_t *c, int32_t lo, int32_t hi)
{
    for (int32_t j = 0; j < c->gang->n_pod_sets; j++) {
        int64_t sum = 0;
        for (int32_t q = lo; q < hi && sum < c->target[j]; q++)
            sum += c->capfit[(size_t)j * (size_t)c->N + (size_t)c->t->node_order[q]];
        if (sum < c->target[j])
            return false;
    }
    return true;
}

static void s_all_domains(s_pc_t *c, int32_t *best_v, s_choice_t *best, int32_t *best_lo, int32_t *best_hi,
                          int32_t *best_level)
{
    const rf__tree_t *t = c->t;
    int32_t deepest = s_deepest(c->gang);
    best->ok = false;
    for (int32_t j = 0; j < c->gang->n_pod_sets; j++)
        for (int32_t n = 0; n < c->N; n++)
            c->capfit[(size_t)j * (size_t)c->N + (size_t)n] =
                c->elig[j][n] ? s_fits(c, c->pb->nodes[n].allocatable, c->gang->pod_sets[j].requests, c->target[j]) : 0;
    for (int32_t l = deepest < 0 ? -1 : deepest; l < t->n_levels; l++) {
        int32_t d0 = l < 0 ? 0 : t->level_start[l], d1 = l < 0 ? 1 : t->level_start[l + 1];
        for (int32_t d = d0; d < d1; d++) {
            int32_t lo = l < 0 ? 0 : t->node_start[d], hi = l < 0 ? t->n_in_tree : t->node_end[d];
            if (!s_holds_bound(c, l, d) || !s_big_enough(c, lo, hi))
                continue;
            s_choice_t ch;
            c->level = l;
            s_domain(c, lo, hi, &ch);
            if (!ch.ok || (best->ok && s_choice_cmp(c->pb, &ch, best) >= 0))
                continue;
            memcpy(best_v, ch.victims, sizeof *best_v * (size_t)ch.n_victims);
            *best = ch;
            best->victims = best_v;
            *best_lo = lo;
            *best_hi = hi;
            *best_level = l;
        }
    }
}

rf_status rf__preempt_try(const rf_problem_t *pb, const rf__tree_t *tree, const rf__elig_t *elig, int32_t gang,
                          bool at_min, rf__victim_rule rule, rf_answer_t *ans, bool *placed)
{
    *placed = false;
    if (!s_worth_trying(pb, ans, gang) || tree->n_in_tree == 0)
        return RF_OK;
    s_pc_t c = {.pb = pb,
                .t = tree,
                .ans = ans,
                .gang = &pb->gangs[gang],
                .prio = pb->gangs[gang].priority,
                .rule = rule,
                .N = pb->n_nodes,
                .R = pb->n_resources};
    for (int32_t j = 0; j < c.gang->n_pod_sets; j++)
        c.elig[j] = elig->ok[elig->class_of[elig->gang_ps0[gang] + j]];
    int32_t *best_v = malloc(sizeof *best_v * (size_t)(pb->n_running + 1));
    rf_status rc = best_v ? s_alloc(&c) : RF_ENOMEM;
    s_choice_t best = {.ok = false};
    int32_t lo = 0, hi = 0, level = -1;
    for (int32_t j = 0; j < c.gang->n_pod_sets; j++) {
        const rf_pod_set_t *ps = &c.gang->pod_sets[j];
        int64_t want = (at_min ? ps->min_count : ps->count) - ps->n_bound_pods;
        c.target[j] = want > 0 ? want : 0; /* new pods */
    }
    if (rc == RF_OK)
        s_all_domains(&c, best_v, &best, &lo, &hi, &level);
    if (rc == RF_OK && best.ok) {
        for (int32_t v = 0; v < best.n_victims; v++)
            s_free(&c, best.victims[v], +1);
        c.level = level;
        if (!s_fit_test(&c, lo, hi)) {
            rc = RF_EINTERNAL; /* it fitted a moment ago with the same room */
        } else {
            /* placements in pod set order, each pod set's in tree order: ranks
             * go out domain by domain (whole slices per slice-level domain) */
            int32_t k = 0;
            for (int32_t j = 0; j < c.gang->n_pod_sets && rc == RF_OK; j++)
                for (; k < c.pl_end[j] && rc == RF_OK; k++)
                    rc = rf_answer_add(ans, gang, j, c.pl[k].node, c.pl[k].count);
            for (int32_t v = 0; v < best.n_victims && rc == RF_OK; v++)
                rc = rf_answer_preempt(ans, best.victims[v], true);
            if (rc == RF_OK) {
                ans->gangs[gang].admitted = true;
                *placed = true;
            } else {
                rf_answer_gang_reset(ans, gang);
            }
        }
    }
    free(best_v);
    s_release(&c);
    return rc;
}

rf_status rf__preempt_settle(rf_answer_t *ans)
{
    const rf_problem_t *pb = ans->problem;
    int32_t n_pre = 0;
    for (int32_t i = 0; i < ans->n_running; i++)
        n_pre += ans->running[i].preempted;
    if (n_pre == 0)
        return RF_OK;
    /* node -> the highest priority of the new pods there */
    int64_t *top = malloc(sizeof *top * (size_t)(pb->n_nodes + 1));
    uint8_t *has = calloc((size_t)pb->n_nodes + 1, 1);
    if (!top || !has) {
        free(top);
        free(has);
        return RF_ENOMEM;
    }
    for (int32_t g = 0; g < ans->n_gangs; g++) {
        const rf_gang_answer_t *ga = &ans->gangs[g];
        for (int32_t j = 0; ga->admitted && j < pb->gangs[g].n_pod_sets; j++)
            for (int32_t k = 0; k < ga->pod_sets[j].n_placements; k++) {
                int32_t n = ga->pod_sets[j].placements[k].node;
                if (ga->pod_sets[j].placements[k].count <= 0)
                    continue;
                if (!has[n] || pb->gangs[g].priority > top[n])
                    top[n] = pb->gangs[g].priority;
                has[n] = 1;
            }
    }
    for (int32_t i = 0; i < ans->n_running; i++) {
        if (!ans->running[i].preempted)
            continue;
        const rf_running_t *run = &pb->running[i];
        bool found = false;
        for (int32_t j = 0; j < run->n_pod_sets && !found; j++)
            for (int32_t k = 0; k < run->pod_sets[j].n_placements && !found; k++) {
                int32_t n = run->pod_sets[j].placements[k].node;
                found = has[n] && top[n] > run->priority;
            }
        if (!found)
            rf_answer_preempt(ans, i, false);
    }
    free(top);
    free(has);
    return RF_OK;
}
