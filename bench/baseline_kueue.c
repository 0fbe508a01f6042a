/* bench/baseline_kueue.c: the "kueue" and "kueue-preempt" strategies, a
 * Kueue TAS-style placer used as a baseline by rackfit-bench; "kueue" never
 * preempts (the simulator's baseline: docs/simulator.md), "kueue-preempt"
 * preempts running gangs as Kueue does (below).
 *
 * One gang at a time in queue order (priority descending, then problem order),
 * never revisiting an earlier decision:
 * - the gang's domain: at its required level, or (none) at the lowest level
 *   whose single domain fits all its pods, falling back level by level up to
 *   the top and then to spreading over the top-level domains. Among the
 *   domains that fit, BestFit: the least capacity that still fits, ties by
 *   order. Domains must contain the gang's bound pods.
 * - the descent (Kueue's algorithm): inside a domain, if one child fits all,
 *   take the best-fit child; else sort the children by capacity descending,
 *   take the fewest that cover the count, and replace the last one by the
 *   smallest child that still covers the remainder. Hosts are the last level.
 * - capacity: pods that fit per node = min over requested resources of
 *   free / request, on eligible nodes (every level label, not cordoned, node
 *   selector matched, NoSchedule/NoExecute taints tolerated); a domain's
 *   capacity is the sum over its nodes. With a slice of s pods at level S,
 *   capacities at and above S count slices: floor(pods / s) per S-domain.
 * - pod sets are placed one after another inside the gang's domain (a pod set
 *   with a required level of its own picks its best-fit sub-domain); a gang
 *   that does not fit at `count` is retried at `min_count` (Kueue's partial
 *   admission, coarsened to these two sizes), then rejected.
 * - bound pods are kept and count toward the required domains; a pod set that
 *   has both slices and bound pods is rejected (ranks are out of scope here).
 * - preemption ("kueue-preempt" only), as Kueue does it within a
 *   ClusterQueue (withinClusterQueue: LowerPriority): a gang that fits at
 *   neither size may evict running gangs (`running`, whole workloads only).
 *   Candidates (Kueue's findCandidates): the running gangs of strictly lower
 *   priority, `preemptible`, not evicted yet, with a pod on a node the gang
 *   could use (Kueue: workloadUsesResources, the workloads using a flavor
 *   that needs preemption), ordered by priority ascending, then most
 *   recently admitted first (the later in `running`, the more recent):
 *   Kueue's CandidatesOrdering, pkg/scheduler/preemption/common/ordering.go
 *   (kubernetes-sigs/kueue, commit 04b063c). They are removed one at a time
 *   until the gang fits (in a domain, as above), then added back in the
 *   reverse order of removal, all but the last removed, wherever the gang
 *   still fits without them: Kueue's minimalPreemptions and
 *   fillBackWorkloads, pkg/scheduler/preemption/preemption.go (commit
 *   006767f). "One at a time" is searched by doubling then bisection over
 *   the prefix length, which finds the same shortest prefix wherever more
 *   room never makes a fit fail (always for one pod set; the descent is
 *   greedy, so not proven for several). At `count` first, then (elastic
 *   gangs) at `min_count`.
 *   Two rules are the contract's, not Kueue's (Kueue counts quota, not
 *   nodes): the room a victim frees serves only gangs above its priority
 *   (on each node, for every priority p of the batch at or above the
 *   gang's, the new pods of priority <= p fit in max(0, allocatable - used +
 *   freed(< p))); and a victim on whose nodes no gang of higher priority
 *   placed a new pod is kept again after the gang is placed (every
 *   preempted gang needs a preemptor: PLACEMENT-MODEL.md). Under
 *   `options.preemption: never` nothing is evicted.
 *
 * Self-contained: it uses only the public API (no solver/ internals), so a bug
 * in the library's greedy cannot leak into the baseline. Deterministic. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "grow.h"

#define S_FIT_MAX ((int64_t)1 << 24) /* pods per node when nothing limits them */
#define S_TRIES   8                  /* candidate domains tried per level for multi-pod-set gangs */

/* ---- data structures ------------------------------------------------------------------------------------------- */

typedef struct {
    int32_t start, end;             /* positions in `order` */
    int32_t child_first, child_end; /* domain ids at the next level (unused at the last) */
} s_dom_t;

typedef struct {
    int32_t node;
    int32_t count;
} s_emit_t;

typedef struct {
    const rf_problem_t *p;
    int32_t L;
    int32_t R;
    int32_t n_sorted;
    int32_t *order;   /* [n_sorted] nodes with every level label, by path */
    int32_t *pos;     /* [n_nodes] position in order, or -1 */
    const char **val; /* [n_nodes * L] level label values (NULL when absent) */
    int32_t n_dom[RF_MAX_LEVELS];
    s_dom_t *dom[RF_MAX_LEVELS];
    int32_t *domid[RF_MAX_LEVELS]; /* [n_sorted] domain id of each position, per level */
    int64_t *free;                 /* [n_nodes * R] */
    int64_t *fit;                  /* [n_nodes] pods of the current pod set per node */
    int64_t *cap[RF_MAX_LEVELS];   /* [n_dom[l]] capacity in level units (see the header) */
    int64_t cap_root;
    const rf_pod_set_t *caps_ps; /* whose capacities c->cap holds; NULL once free capacity changed */
    int32_t slice_size;          /* current pod set: s (1 when no slice) */
    int32_t slice_level;         /* current pod set: S (L-1 when no slice) */
    /* tentative placements of the current gang */
    s_emit_t *emit;
    int32_t n_emit, cap_emit;
    int32_t *emit_ps; /* [cap_emit] pod set of each emitted entry */
    int32_t cur_ps;
    const rf_pod_set_t *cur;
    /* scratch for the descent */
    int32_t *scratch;
    int32_t n_scratch_cap;
    /* preemption: the room per node is recomputed from these (s_room) */
    int64_t *base; /* [n_nodes * R] allocatable - used (not floored; UNLIMITED kept) */
    int64_t *prio; /* [K] the batch's distinct priorities, ascending */
    int32_t K;
    int32_t cur_k;      /* index in prio of the gang being placed */
    int64_t *newuse;    /* [n_nodes * K * R] what the new pods of each priority use */
    int32_t *run_first; /* [n_nodes + 1] CSR: running pod-set placements per node */
    int32_t *run_gang;  /* [placements] running gang index */
    int32_t *run_ps;    /* [placements] its pod set */
    int32_t *run_count; /* [placements] pods there */
    bool *evicted;      /* [n_running] */
    bool any_evicted;
    bool preempt; /* the strategy preempts ("kueue-preempt") */
} s_ctx_t;

/* ---- local methods --------------------------------------------------------------------------------------------- */

/* Kubernetes' eligibility rules are the library's (rf_node_admits); nodes
 * with every level label have a position in the sorted order. */
static bool s_eligible(const s_ctx_t *c, int32_t n, const rf_pod_set_t *ps)
{
    return c->pos[n] >= 0 && rf_node_admits(c->p, n, ps);
}

static int64_t s_node_fit(const s_ctx_t *c, int32_t n, const rf_pod_set_t *ps)
{
    int64_t f = S_FIT_MAX;
    const int64_t *fr = &c->free[(size_t)n * (size_t)c->R];
    for (int32_t r = 0; r < c->R; r++) {
        int64_t req = ps->requests[r];
        if (req <= 0 || fr[r] == RF_QTY_UNLIMITED)
            continue;
        int64_t q = fr[r] / req;
        if (q < f)
            f = q;
    }
    return f;
}

/* Sorting nodes by their path of level values: each item carries its values. */
typedef struct {
    const char *const *val; /* L values */
    int32_t L;
    int32_t node;
} s_path_t;

static int s_cmp_path(const void *a, const void *b)
{
    const s_path_t *x = a, *y = b;
    for (int32_t l = 0; l < x->L; l++) {
        int k = strcmp(x->val[l], y->val[l]);
        if (k)
            return k;
    }
    return (x->node > y->node) - (x->node < y->node);
}

static void s_ctx_fini(s_ctx_t *c)
{
    free(c->order);
    free(c->pos);
    free(c->val);
    for (int32_t l = 0; l < RF_MAX_LEVELS; l++) {
        free(c->dom[l]);
        free(c->domid[l]);
        free(c->cap[l]);
    }
    free(c->free);
    free(c->fit);
    free(c->emit);
    free(c->emit_ps);
    free(c->scratch);
    free(c->base);
    free(c->prio);
    free(c->newuse);
    free(c->run_first);
    free(c->run_gang);
    free(c->run_ps);
    free(c->run_count);
    free(c->evicted);
}

static int s_cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* What preemption needs: the unfloored room, the batch's priorities, the
 * new pods' use per priority, and the running gangs' placements by node. */
static rf_status s_ctx_init_preempt(s_ctx_t *c, rf_error_t *err)
{
    const rf_problem_t *p = c->p;
    size_t N = (size_t)p->n_nodes, R = (size_t)c->R;
    c->base = malloc((N ? N : 1) * R * sizeof(int64_t));
    c->prio = malloc((size_t)(p->n_gangs ? p->n_gangs : 1) * sizeof(int64_t));
    c->run_first = calloc(N + 1, sizeof(int32_t));
    c->evicted = calloc((size_t)(p->n_running ? p->n_running : 1), sizeof(bool));
    if (!c->base || !c->prio || !c->run_first || !c->evicted)
        return rf_error_set(err, RF_ENOMEM, "", "kueue: out of memory");
    for (size_t n = 0; n < N; n++)
        for (size_t r = 0; r < R; r++) {
            int64_t a = p->nodes[n].allocatable[r];
            c->base[n * R + r] = a == RF_QTY_UNLIMITED ? RF_QTY_UNLIMITED : a - p->nodes[n].used[r];
        }
    for (int32_t g = 0; g < p->n_gangs; g++)
        c->prio[g] = p->gangs[g].priority;
    qsort(c->prio, (size_t)p->n_gangs, sizeof(int64_t), s_cmp_i64);
    c->K = 0;
    for (int32_t g = 0; g < p->n_gangs; g++)
        if (c->K == 0 || c->prio[c->K - 1] != c->prio[g])
            c->prio[c->K++] = c->prio[g];
    c->newuse = calloc((N ? N : 1) * (size_t)(c->K ? c->K : 1) * R, sizeof(int64_t));
    if (!c->newuse)
        return rf_error_set(err, RF_ENOMEM, "", "kueue: out of memory");
    int32_t total = 0;
    for (int32_t v = 0; v < p->n_running; v++)
        for (int32_t j = 0; j < p->running[v].n_pod_sets; j++)
            for (int32_t i = 0; i < p->running[v].pod_sets[j].n_placements; i++) {
                c->run_first[p->running[v].pod_sets[j].placements[i].node + 1]++;
                total++;
            }
    for (size_t n = 0; n < N; n++)
        c->run_first[n + 1] += c->run_first[n];
    c->run_gang = malloc((size_t)(total ? total : 1) * sizeof(int32_t));
    c->run_ps = malloc((size_t)(total ? total : 1) * sizeof(int32_t));
    c->run_count = malloc((size_t)(total ? total : 1) * sizeof(int32_t));
    int32_t *fill = malloc((N ? N : 1) * sizeof(int32_t));
    if (!c->run_gang || !c->run_ps || !c->run_count || !fill) {
        free(fill);
        return rf_error_set(err, RF_ENOMEM, "", "kueue: out of memory");
    }
    memcpy(fill, c->run_first, N * sizeof(int32_t));
    for (int32_t v = 0; v < p->n_running; v++)
        for (int32_t j = 0; j < p->running[v].n_pod_sets; j++)
            for (int32_t i = 0; i < p->running[v].pod_sets[j].n_placements; i++) {
                const rf_run_placement_t *pl = &p->running[v].pod_sets[j].placements[i];
                int32_t at = fill[pl->node]++;
                c->run_gang[at] = v;
                c->run_ps[at] = j;
                c->run_count[at] = pl->count;
            }
    free(fill);
    return RF_OK;
}

/* Node n's room for new pods of priority prio[cur_k], from scratch: per
 * resource, the least over the batch's priorities p >= it of
 * max(0, base + freed(< p)) - (new pods of priority <= p). */
static void s_room(s_ctx_t *c, int32_t n)
{
    const size_t R = (size_t)c->R, K = (size_t)c->K;
    int64_t *fr = &c->free[(size_t)n * R];
    for (size_t r = 0; r < R; r++) {
        int64_t b = c->base[(size_t)n * R + r];
        if (b == RF_QTY_UNLIMITED) {
            fr[r] = RF_QTY_UNLIMITED;
            continue;
        }
        int64_t best = INT64_MAX, newsum = 0;
        for (size_t k = (size_t)c->cur_k; k < K; k++) {
            int64_t cap = b;
            for (int32_t i = c->run_first[n]; i < c->run_first[n + 1]; i++) {
                const rf_running_t *rg = &c->p->running[c->run_gang[i]];
                if (c->evicted[c->run_gang[i]] && rg->priority < c->prio[k])
                    cap += (int64_t)c->run_count[i] * rg->pod_sets[c->run_ps[i]].requests[r];
            }
            if (cap < 0)
                cap = 0;
            newsum += c->newuse[((size_t)n * K + k) * R + r];
            if (cap - newsum < best)
                best = cap - newsum;
        }
        fr[r] = best > 0 ? best : 0;
    }
}

/* Recompute the room on every node of running gang v. */
static void s_room_gang(s_ctx_t *c, int32_t v)
{
    const rf_running_t *rg = &c->p->running[v];
    for (int32_t j = 0; j < rg->n_pod_sets; j++)
        for (int32_t i = 0; i < rg->pod_sets[j].n_placements; i++)
            s_room(c, rg->pod_sets[j].placements[i].node);
    c->caps_ps = NULL;
}

static rf_status s_ctx_init(s_ctx_t *c, const rf_problem_t *p, rf_error_t *err)
{
    memset(c, 0, sizeof(*c));
    c->p = p;
    c->L = p->n_levels;
    c->R = p->n_resources;
    size_t N = (size_t)p->n_nodes;
    c->order = malloc((N ? N : 1) * sizeof(int32_t));
    c->pos = malloc((N ? N : 1) * sizeof(int32_t));
    c->val = calloc((N ? N : 1) * (size_t)c->L, sizeof(char *));
    c->free = malloc((N ? N : 1) * (size_t)c->R * sizeof(int64_t));
    c->fit = calloc(N ? N : 1, sizeof(int64_t));
    c->scratch = malloc((N ? N : 1) * sizeof(int32_t));
    c->n_scratch_cap = (int32_t)(N ? N : 1);
    if (!c->order || !c->pos || !c->val || !c->free || !c->fit || !c->scratch)
        return rf_error_set(err, RF_ENOMEM, "", "kueue: out of memory");

    bench_node_view(p, c->val, c->free);
    for (int32_t n = 0; n < p->n_nodes; n++) {
        c->pos[n] = -1;
        if (bench_node_labelled(p, c->val, n))
            c->order[c->n_sorted++] = n;
    }
    s_path_t *paths = malloc((size_t)(c->n_sorted ? c->n_sorted : 1) * sizeof(*paths));
    if (!paths)
        return rf_error_set(err, RF_ENOMEM, "", "kueue: out of memory");
    for (int32_t i = 0; i < c->n_sorted; i++) {
        paths[i].val = &c->val[(size_t)c->order[i] * (size_t)c->L];
        paths[i].L = c->L;
        paths[i].node = c->order[i];
    }
    qsort(paths, (size_t)c->n_sorted, sizeof(*paths), s_cmp_path);
    for (int32_t i = 0; i < c->n_sorted; i++)
        c->order[i] = paths[i].node;
    free(paths);
    for (int32_t i = 0; i < c->n_sorted; i++)
        c->pos[c->order[i]] = i;

    /* Domains: contiguous ranges of the sorted order, per level. */
    for (int32_t l = 0; l < c->L; l++) {
        c->domid[l] = malloc((size_t)(c->n_sorted ? c->n_sorted : 1) * sizeof(int32_t));
        c->dom[l] = malloc((size_t)(c->n_sorted ? c->n_sorted : 1) * sizeof(s_dom_t));
        c->cap[l] = malloc((size_t)(c->n_sorted ? c->n_sorted : 1) * sizeof(int64_t));
        if (!c->domid[l] || !c->dom[l] || !c->cap[l])
            return rf_error_set(err, RF_ENOMEM, "", "kueue: out of memory");
        int32_t nd = 0;
        for (int32_t i = 0; i < c->n_sorted; i++) {
            bool same = i > 0;
            for (int32_t k = 0; same && k <= l; k++)
                same = strcmp(c->val[(size_t)c->order[i] * (size_t)c->L + (size_t)k],
                              c->val[(size_t)c->order[i - 1] * (size_t)c->L + (size_t)k]) == 0;
            if (!same) {
                c->dom[l][nd].start = i;
                c->dom[l][nd].child_first = c->dom[l][nd].child_end = 0;
                nd++;
            }
            c->dom[l][nd - 1].end = i + 1;
            c->domid[l][i] = nd - 1;
        }
        c->n_dom[l] = nd;
    }
    for (int32_t l = 0; l + 1 < c->L; l++)
        for (int32_t d = 0; d < c->n_dom[l]; d++) {
            c->dom[l][d].child_first = c->domid[l + 1][c->dom[l][d].start];
            c->dom[l][d].child_end = c->domid[l + 1][c->dom[l][d].end - 1] + 1;
        }
    return s_ctx_init_preempt(c, err);
}

/* Capacities of pod set `ps` over the whole tree, in each level's units. */
static void s_caps(s_ctx_t *c, const rf_pod_set_t *ps)
{
    c->cur = ps;
    c->caps_ps = ps;
    c->slice_size = ps->slice.size > 0 ? ps->slice.size : 1;
    c->slice_level = ps->slice.size > 0 ? ps->slice.level : c->L - 1;
    for (int32_t n = 0; n < c->p->n_nodes; n++)
        c->fit[n] = s_eligible(c, n, ps) ? s_node_fit(c, n, ps) : 0;
    for (int32_t l = c->L - 1; l >= 0; l--) {
        for (int32_t d = 0; d < c->n_dom[l]; d++) {
            const s_dom_t *dm = &c->dom[l][d];
            int64_t sum = 0;
            if (l == c->L - 1)
                for (int32_t i = dm->start; i < dm->end; i++)
                    sum += c->fit[c->order[i]];
            else
                for (int32_t k = dm->child_first; k < dm->child_end; k++)
                    sum += c->cap[l + 1][k];
            /* At the slice level the pods below become slices; children
             * above it already count slices. */
            if (l == c->slice_level)
                sum /= c->slice_size;
            c->cap[l][d] = sum;
        }
    }
    c->cap_root = 0;
    for (int32_t d = 0; d < c->n_dom[0]; d++)
        c->cap_root += c->cap[0][d];
}

/* `pods` pods expressed in the units of level l (-1: the root). */
static int64_t s_units(const s_ctx_t *c, int32_t l, int64_t pods)
{
    return l <= c->slice_level ? pods / c->slice_size : pods;
}

static int64_t s_cap(const s_ctx_t *c, int32_t l, int32_t d)
{
    return l < 0 ? c->cap_root : c->cap[l][d];
}

static rf_status s_emit(s_ctx_t *c, int32_t node, int64_t count)
{
    if (c->n_emit == c->cap_emit) { /* two arrays of one capacity */
        int32_t cap_e = c->cap_emit, cap_ps = c->cap_emit;
        s_emit_t *e = rf__grow(c->emit, &cap_e, (int64_t)c->n_emit + 1, 256, sizeof(*e));
        if (e)
            c->emit = e;
        int32_t *ps = rf__grow(c->emit_ps, &cap_ps, (int64_t)c->n_emit + 1, 256, sizeof(*ps));
        if (ps)
            c->emit_ps = ps;
        if (!e || !ps)
            return RF_ENOMEM;
        c->cap_emit = cap_e;
    }
    c->emit[c->n_emit].node = node;
    c->emit[c->n_emit].count = (int32_t)count;
    c->emit_ps[c->n_emit] = c->cur_ps;
    c->n_emit++;
    c->caps_ps = NULL;
    int64_t *fr = &c->free[(size_t)node * (size_t)c->R];
    int64_t *nu = &c->newuse[((size_t)node * (size_t)c->K + (size_t)c->cur_k) * (size_t)c->R];
    for (int32_t r = 0; r < c->R; r++) {
        nu[r] += count * c->cur->requests[r];
        if (fr[r] != RF_QTY_UNLIMITED)
            fr[r] -= count * c->cur->requests[r];
    }
    return RF_OK;
}

/* Place k units (level l's units) inside domain d of level l (-1: the root).
 * The caller made sure the capacity is there. */
static rf_status s_descend(s_ctx_t *c, int32_t l, int32_t d, int64_t k)
{
    int64_t kk = l == c->slice_level ? k * c->slice_size : k; /* in the children's units */
    if (kk <= 0)
        return RF_OK;
    int32_t first, end;
    bool nodes = l == c->L - 1;
    if (l < 0) {
        first = 0;
        end = c->n_dom[0];
    } else if (nodes) {
        first = c->dom[l][d].start;
        end = c->dom[l][d].end;
    } else {
        first = c->dom[l][d].child_first;
        end = c->dom[l][d].child_end;
    }
    int32_t n = end - first;
    bench_ranked_t *ch = malloc((size_t)(n > 0 ? n : 1) * sizeof(*ch));
    if (!ch)
        return RF_ENOMEM;
    int32_t best = -1;
    int64_t total = 0;
    for (int32_t i = 0; i < n; i++) {
        ch[i].index = first + i;
        ch[i].key = nodes ? c->fit[c->order[first + i]] : c->cap[l + 1][first + i];
        total += ch[i].key;
        if (ch[i].key >= kk && (best < 0 || ch[i].key < ch[best].key))
            best = i;
    }
    rf_status st = RF_OK;
    if (total < kk) {
        st = RF_EINTERNAL;
    } else if (best >= 0) {
        st = nodes ? s_emit(c, c->order[ch[best].index], kk) : s_descend(c, l + 1, ch[best].index, kk);
    } else {
        qsort(ch, (size_t)n, sizeof(*ch), bench_ranked_cmp);
        int32_t m = 0;
        int64_t sum = 0;
        while (sum < kk) {
            sum += ch[m].key;
            m++;
        }
        /* Replace the last one by the smallest child that covers the remainder. */
        int64_t rem = kk - (sum - ch[m - 1].key);
        int32_t last = m - 1;
        for (int32_t i = m - 1; i < n; i++)
            if (ch[i].key >= rem &&
                (ch[i].key < ch[last].key || (ch[i].key == ch[last].key && ch[i].index < ch[last].index)))
                last = i;
        for (int32_t i = 0; i < m && st == RF_OK; i++) {
            int32_t idx = i == m - 1 ? last : i;
            int64_t take = i == m - 1 ? rem : ch[i].key;
            st = nodes ? s_emit(c, c->order[ch[idx].index], take) : s_descend(c, l + 1, ch[idx].index, take);
        }
    }
    free(ch);
    return st;
}

static bool s_contains(const s_ctx_t *c, int32_t l, int32_t d, int32_t node)
{
    if (l < 0)
        return true;
    int32_t p = c->pos[node];
    return p >= 0 && c->domid[l][p] == d;
}

static bool s_contains_bound(const s_ctx_t *c, int32_t l, int32_t d, const rf_pod_set_t *ps)
{
    for (int32_t b = 0; b < ps->n_bound; b++)
        if (ps->bound[b].count > 0 && !s_contains(c, l, d, ps->bound[b].node))
            return false;
    return true;
}

static bool s_contains_gang_bound(const s_ctx_t *c, int32_t l, int32_t d, const rf_gang_t *g)
{
    for (int32_t j = 0; j < g->n_pod_sets; j++)
        if (!s_contains_bound(c, l, d, &g->pod_sets[j]))
            return false;
    return true;
}

/* Place `pods` new pods of pod set j of gang g inside domain d of level l. */
static rf_status s_place_pod_set(s_ctx_t *c, const rf_gang_t *g, int32_t j, int32_t l, int32_t d, int64_t pods,
                                 bool *ok)
{
    const rf_pod_set_t *ps = &g->pod_sets[j];
    *ok = true;
    if (pods <= 0)
        return RF_OK;
    c->cur_ps = j;
    if (c->caps_ps != ps)
        s_caps(c, ps);
    c->cur = ps;
    int32_t lp = ps->topology.required;
    if (lp > l) {
        int64_t need = s_units(c, lp, pods);
        int32_t best = -1;
        for (int32_t e = 0; e < c->n_dom[lp]; e++) {
            if (!s_contains(c, l, d, c->order[c->dom[lp][e].start]) || !s_contains_bound(c, lp, e, ps))
                continue;
            if (c->cap[lp][e] >= need && (best < 0 || c->cap[lp][e] < c->cap[lp][best]))
                best = e;
        }
        if (best < 0) {
            *ok = false;
            return RF_OK;
        }
        return s_descend(c, lp, best, need);
    }
    int64_t need = s_units(c, l, pods);
    if (s_cap(c, l, d) < need) {
        *ok = false;
        return RF_OK;
    }
    return s_descend(c, l, d, need);
}

/* The undo of s_emit for entries of several pod sets. */
static void s_undo(s_ctx_t *c, const rf_gang_t *g, int32_t mark)
{
    if (c->n_emit > mark)
        c->caps_ps = NULL;
    while (c->n_emit > mark) {
        c->n_emit--;
        const s_emit_t *e = &c->emit[c->n_emit];
        const rf_pod_set_t *ps = &g->pod_sets[c->emit_ps[c->n_emit]];
        int64_t *fr = &c->free[(size_t)e->node * (size_t)c->R];
        int64_t *nu = &c->newuse[((size_t)e->node * (size_t)c->K + (size_t)c->cur_k) * (size_t)c->R];
        for (int32_t r = 0; r < c->R; r++) {
            nu[r] -= (int64_t)e->count * ps->requests[r];
            if (fr[r] != RF_QTY_UNLIMITED)
                fr[r] += (int64_t)e->count * ps->requests[r];
        }
    }
}

/* Place every pod set of g (new pods in `want`) inside domain d of level l. */
static rf_status s_place_gang_in(s_ctx_t *c, const rf_gang_t *g, const int64_t *want, int32_t l, int32_t d, bool *ok)
{
    int32_t mark = c->n_emit;
    *ok = true;
    for (int32_t j = 0; j < g->n_pod_sets && *ok; j++)
        RF_CALL(s_place_pod_set(c, g, j, l, d, want[j], ok));
    if (!*ok)
        s_undo(c, g, mark);
    return RF_OK;
}

typedef struct {
    int32_t level;
    int64_t fits;
    int64_t needs;
} s_fail_t;

/* Try to place gang g with `want` new pods per pod set. */
static rf_status s_try(s_ctx_t *c, const rf_gang_t *g, const int64_t *want, int32_t primary, bool *ok, s_fail_t *fail)
{
    const rf_pod_set_t *pp = &g->pod_sets[primary];
    int32_t lg = g->topology.required;
    int32_t lo = lg >= 0 ? lg : c->L - 1, hi = lg >= 0 ? lg : 0;
    int32_t tries_max = g->n_pod_sets > 1 || pp->topology.required > lg ? S_TRIES : 1;
    bench_ranked_t *cand = NULL;
    rf_status st = RF_OK;
    *ok = false;
    for (int32_t l = lo; l >= hi && !*ok; l--) {
        c->cur_ps = primary;
        if (c->caps_ps != pp)
            s_caps(c, pp);
        int64_t need = s_units(c, l, want[primary]);
        int32_t n = 0;
        free(cand);
        cand = malloc((size_t)(c->n_dom[l] ? c->n_dom[l] : 1) * sizeof(*cand));
        if (!cand)
            return RF_ENOMEM;
        int64_t best_fit = 0;
        for (int32_t d = 0; d < c->n_dom[l]; d++) {
            if (!s_contains_gang_bound(c, l, d, g))
                continue;
            if (c->cap[l][d] > best_fit)
                best_fit = c->cap[l][d];
            if (c->cap[l][d] >= need) {
                cand[n].key = c->cap[l][d];
                cand[n].index = d;
                n++;
            }
        }
        if (l == lg) {
            fail->level = l;
            fail->fits = l <= c->slice_level ? best_fit * c->slice_size : best_fit;
            fail->needs = want[primary];
        }
        /* BestFit: least capacity first, ties by order. */
        for (int32_t t = 0; t < n && t < tries_max && !*ok; t++) {
            int32_t b = t;
            for (int32_t i = t + 1; i < n; i++)
                if (cand[i].key < cand[b].key || (cand[i].key == cand[b].key && cand[i].index < cand[b].index))
                    b = i;
            bench_ranked_t tmp = cand[t];
            cand[t] = cand[b];
            cand[b] = tmp;
            st = s_place_gang_in(c, g, want, l, cand[t].index, ok);
            if (st != RF_OK)
                goto done;
        }
    }
    if (!*ok && lg < 0) {
        st = s_place_gang_in(c, g, want, -1, 0, ok);
        if (!*ok) {
            c->cur_ps = primary;
            s_caps(c, pp);
            fail->level = -1;
            fail->fits = c->cap_root * c->slice_size;
            fail->needs = want[primary];
        }
    }
done:
    free(cand);
    return st;
}

/* Bound pods of pod set ps already break a required level `l`? */
static bool s_bound_split(const s_ctx_t *c, const rf_gang_t *g, int32_t l, int32_t only_ps)
{
    int32_t dom = -2;
    for (int32_t j = 0; j < g->n_pod_sets; j++) {
        if (only_ps >= 0 && j != only_ps)
            continue;
        const rf_pod_set_t *ps = &g->pod_sets[j];
        for (int32_t b = 0; b < ps->n_bound; b++) {
            if (ps->bound[b].count <= 0)
                continue;
            int32_t p = c->pos[ps->bound[b].node];
            if (p < 0)
                return true;
            if (dom == -2)
                dom = c->domid[l][p];
            else if (dom != c->domid[l][p])
                return true;
        }
    }
    return false;
}

/* ---- preemption (see the header) ---- */

/* Could gang g use node n (any pod set)? */
static bool s_gang_can_use(const s_ctx_t *c, const rf_gang_t *g, int32_t n)
{
    for (int32_t j = 0; j < g->n_pod_sets; j++)
        if (s_eligible(c, n, &g->pod_sets[j]))
            return true;
    return false;
}

/* Evict (or keep again) running gang v in the room view. */
static void s_set_evicted(s_ctx_t *c, int32_t v, bool evicted)
{
    if (c->evicted[v] == evicted)
        return;
    c->evicted[v] = evicted;
    if (evicted)
        c->any_evicted = true;
    s_room_gang(c, v);
}

/* Make exactly cand[0..k) evicted among the candidates. */
static void s_set_prefix(s_ctx_t *c, const int32_t *cand, int32_t n_cand, int32_t k)
{
    for (int32_t i = 0; i < n_cand; i++)
        s_set_evicted(c, cand[i], i < k);
}

/* Does gang g fit (with `want` new pods) in the current room? The trial's
 * placements are undone. */
static rf_status s_fits(s_ctx_t *c, const rf_gang_t *g, const int64_t *want, int32_t primary, bool *ok)
{
    s_fail_t fail = {-1, 0, 0};
    c->n_emit = 0;
    RF_CALL(s_try(c, g, want, primary, ok, &fail));
    s_undo(c, g, 0);
    return RF_OK;
}

/* Kueue's candidates for gang g, in CandidatesOrdering's order. malloc'ed
 * into *out (NULL when there are none). */
static rf_status s_candidates(const s_ctx_t *c, const rf_gang_t *g, int32_t **out, int32_t *n_out)
{
    const rf_problem_t *p = c->p;
    *out = NULL;
    *n_out = 0;
    bench_ranked_t *r = malloc((size_t)(p->n_running ? p->n_running : 1) * sizeof(*r));
    if (!r)
        return RF_ENOMEM;
    int32_t n = 0;
    for (int32_t v = 0; v < p->n_running; v++) {
        const rf_running_t *rg = &p->running[v];
        if (c->evicted[v] || !rg->preemptible || rg->priority >= g->priority)
            continue;
        bool useful = false;
        for (int32_t j = 0; j < rg->n_pod_sets && !useful; j++)
            for (int32_t i = 0; i < rg->pod_sets[j].n_placements && !useful; i++)
                useful = s_gang_can_use(c, g, rg->pod_sets[j].placements[i].node);
        if (!useful)
            continue;
        /* bench_ranked_cmp sorts key descending, index ascending: priority
         * ascending is -priority descending; most recent first is the
         * later index first, so the index goes in negated. */
        r[n].key = -rg->priority;
        r[n].index = -v;
        n++;
    }
    qsort(r, (size_t)n, sizeof(*r), bench_ranked_cmp);
    int32_t *cand = malloc((size_t)(n ? n : 1) * sizeof(int32_t));
    if (!cand) {
        free(r);
        return RF_ENOMEM;
    }
    for (int32_t i = 0; i < n; i++)
        cand[i] = -r[i].index;
    free(r);
    *out = cand;
    *n_out = n;
    return RF_OK;
}

/* Try to make room for gang g by evicting candidates (Kueue's
 * minimalPreemptions). On success the victims stay evicted and *ok is true;
 * the caller places the gang with `want`, which holds the size that fit. */
static rf_status s_preempt(s_ctx_t *c, const rf_gang_t *g, int64_t *want, int32_t primary, bool *ok)
{
    *ok = false;
    if (!c->preempt || c->p->options.preemption == RF_PREEMPT_NEVER || c->p->n_running == 0)
        return RF_OK;
    int32_t *cand = NULL, n = 0;
    RF_CALL(s_candidates(c, g, &cand, &n));
    rf_status st = RF_OK;
    for (int attempt = 0; attempt < 2 && !*ok && n > 0; attempt++) {
        bool same = true;
        for (int32_t j = 0; j < g->n_pod_sets; j++) {
            const rf_pod_set_t *ps = &g->pod_sets[j];
            int64_t target = attempt == 0 ? ps->count : ps->min_count;
            same = same && ps->min_count == ps->count;
            want[j] = target > ps->n_bound_pods ? target - ps->n_bound_pods : 0;
        }
        if (attempt == 1 && same)
            break;
        /* All removed first: if the gang does not fit then, nothing helps. */
        s_set_prefix(c, cand, n, n);
        bool fit = false;
        if ((st = s_fits(c, g, want, primary, &fit)) != RF_OK)
            goto done;
        if (!fit) {
            s_set_prefix(c, cand, n, 0);
            continue;
        }
        /* The shortest prefix that fits: doubling, then bisection in (lo, hi]. */
        int32_t lo = 0, hi = n;
        for (int32_t k = 1; k < n; k *= 2) {
            s_set_prefix(c, cand, n, k);
            if ((st = s_fits(c, g, want, primary, &fit)) != RF_OK)
                goto done;
            if (fit) {
                hi = k;
                break;
            }
            lo = k;
        }
        while (hi - lo > 1) {
            int32_t mid = lo + (hi - lo) / 2;
            s_set_prefix(c, cand, n, mid);
            if ((st = s_fits(c, g, want, primary, &fit)) != RF_OK)
                goto done;
            if (fit)
                hi = mid;
            else
                lo = mid;
        }
        s_set_prefix(c, cand, n, hi);
        /* Add back, in the reverse order of removal, all but the last removed. */
        for (int32_t i = hi - 2; i >= 0; i--) {
            s_set_evicted(c, cand[i], false);
            if ((st = s_fits(c, g, want, primary, &fit)) != RF_OK)
                goto done;
            if (!fit)
                s_set_evicted(c, cand[i], true);
        }
        *ok = true;
    }
done:
    if (st != RF_OK || !*ok)
        s_set_prefix(c, cand, n, 0);
    free(cand);
    return st;
}

/* After gang gi is placed: a victim with no new pod of a higher priority on
 * any of its nodes has no preemptor, and is kept again (no new pod of any
 * priority is on its nodes then: the queue runs highest first). */
static void s_settle(s_ctx_t *c)
{
    const rf_problem_t *p = c->p;
    const size_t R = (size_t)c->R, K = (size_t)c->K;
    for (int32_t v = 0; v < p->n_running; v++) {
        if (!c->evicted[v])
            continue;
        const rf_running_t *rg = &p->running[v];
        bool has = false;
        for (int32_t j = 0; j < rg->n_pod_sets && !has; j++)
            for (int32_t i = 0; i < rg->pod_sets[j].n_placements && !has; i++) {
                int32_t n = rg->pod_sets[j].placements[i].node;
                for (size_t k = 0; k < K && !has; k++)
                    if (c->prio[k] > rg->priority)
                        has = c->newuse[((size_t)n * K + k) * R + RF_RES_PODS] > 0;
            }
        if (!has)
            s_set_evicted(c, v, false);
    }
}

/* The gang's priority index; when it changes after evictions, the room on
 * the victims' nodes is recomputed for the new thresholds. */
static void s_enter_priority(s_ctx_t *c, int64_t priority)
{
    int32_t k = 0;
    while (k + 1 < c->K && c->prio[k] < priority)
        k++;
    if (k == c->cur_k)
        return;
    c->cur_k = k;
    if (!c->any_evicted)
        return;
    for (int32_t v = 0; v < c->p->n_running; v++)
        if (c->evicted[v])
            s_room_gang(c, v);
}

static rf_status s_gang(s_ctx_t *c, rf_answer_t *answer, int32_t gi)
{
    const rf_problem_t *p = c->p;
    const rf_gang_t *g = &p->gangs[gi];
    rf_why_t why = {-1, -1, -1, -1};
    int64_t want[64];
    int64_t *wantp = g->n_pod_sets <= 64 ? want : malloc((size_t)g->n_pod_sets * sizeof(int64_t));
    if (!wantp)
        return RF_ENOMEM;
    rf_status st = RF_OK;
    if (g->n_pod_sets == 0) {
        answer->gangs[gi].admitted = true;
        goto done;
    }

    /* Hard constraints the bound pods already break, and what we do not do. */
    if (g->topology.required >= 0 && s_bound_split(c, g, g->topology.required, -1)) {
        why.level = g->topology.required;
        st = rf_answer_reject(answer, gi, why, "%s: the bound pods are not in one domain",
                              p->levels[g->topology.required]);
        goto done;
    }
    for (int32_t j = 0; j < g->n_pod_sets; j++) {
        const rf_pod_set_t *ps = &g->pod_sets[j];
        if (ps->topology.required >= 0 && s_bound_split(c, g, ps->topology.required, j)) {
            why.level = ps->topology.required;
            st = rf_answer_reject(answer, gi, why, "%s: the bound pods of %s are not in one domain",
                                  p->levels[ps->topology.required], ps->name);
            goto done;
        }
        if (ps->slice.size > 1 && ps->n_bound_pods > 0) {
            st = rf_answer_reject(answer, gi, why, "kueue baseline: pod set %s has slices and bound pods", ps->name);
            goto done;
        }
    }

    /* The primary pod set: the one that asks for the most new pods. */
    int32_t primary = 0;
    for (int32_t j = 0; j < g->n_pod_sets; j++) {
        const rf_pod_set_t *ps = &g->pod_sets[j];
        if (ps->count - ps->n_bound_pods > g->pod_sets[primary].count - g->pod_sets[primary].n_bound_pods)
            primary = j;
    }
    s_fail_t fail = {-1, 0, 0};
    bool ok = false;
    for (int attempt = 0; attempt < 2 && !ok; attempt++) {
        bool same = true;
        for (int32_t j = 0; j < g->n_pod_sets; j++) {
            const rf_pod_set_t *ps = &g->pod_sets[j];
            int64_t target = attempt == 0 ? ps->count : ps->min_count;
            same = same && ps->min_count == ps->count;
            wantp[j] = target > ps->n_bound_pods ? target - ps->n_bound_pods : 0;
        }
        if (attempt == 1 && same)
            break;
        c->n_emit = 0;
        st = s_try(c, g, wantp, primary, &ok, &fail);
        if (st != RF_OK)
            goto done;
    }
    bool preempted = false;
    if (!ok) {
        st = s_preempt(c, g, wantp, primary, &preempted);
        if (st != RF_OK)
            goto done;
        if (preempted) {
            c->n_emit = 0;
            s_fail_t fail2 = {-1, 0, 0};
            st = s_try(c, g, wantp, primary, &ok, &fail2);
            if (st != RF_OK)
                goto done;
        }
    }
    if (!ok) {
        why.level = fail.level;
        why.fits = fail.fits;
        why.needs = fail.needs;
        if (fail.level >= 0)
            st = rf_answer_reject(answer, gi, why, "%s: the best domain fits %lld of %lld pods of %s",
                                  p->levels[fail.level], (long long)fail.fits, (long long)fail.needs,
                                  g->pod_sets[primary].name);
        else
            st = rf_answer_reject(answer, gi, why, "the cluster fits %lld of %lld pods of %s", (long long)fail.fits,
                                  (long long)fail.needs, g->pod_sets[primary].name);
        goto done;
    }
    for (int32_t i = 0; i < c->n_emit && st == RF_OK; i++)
        st = rf_answer_add(answer, gi, c->emit_ps[i], c->emit[i].node, c->emit[i].count);
    if (st == RF_OK)
        answer->gangs[gi].admitted = true;
    c->n_emit = 0;
    if (preempted)
        s_settle(c);
done:
    if (wantp != want)
        free(wantp);
    return st;
}

/* ---- callbacks ------------------------------------------------------------------------------------------------- */

static rf_status s_solve_with(const rf_solve_ctx_t *ctx, rf_answer_t *answer, bool preempt, rf_error_t *err)
{
    const rf_problem_t *problem = rf_solve_ctx_problem(ctx);
    s_ctx_t c;
    int32_t *queue = NULL;
    rf_status st = s_ctx_init(&c, problem, err);
    c.preempt = preempt;
    if (st != RF_OK)
        goto done;
    queue = bench_queue_order(problem);
    if (!queue) {
        st = rf_error_set(err, RF_ENOMEM, "", "kueue: out of memory");
        goto done;
    }
    c.cur_k = c.K - 1; /* the queue starts at the highest priority */
    for (int32_t i = 0; i < problem->n_gangs; i++) {
        s_enter_priority(&c, problem->gangs[queue[i]].priority);
        st = s_gang(&c, answer, queue[i]);
        if (st != RF_OK) {
            rf_error_set(err, st, "", "kueue: %s placing gang %s", rf_status_message(st),
                         problem->gangs[queue[i]].name);
            goto done;
        }
    }
    for (int32_t v = 0; v < problem->n_running && st == RF_OK; v++)
        if (c.evicted[v])
            st = rf_answer_preempt(answer, v, true);
    if (st != RF_OK) {
        rf_error_set(err, st, "", "kueue: %s", rf_status_message(st));
        goto done;
    }
    rf_answer_finish(answer);
    answer->summary.mode_used = preempt ? "kueue-preempt" : "kueue";
done:
    free(queue);
    s_ctx_fini(&c);
    return st;
}

static rf_status s_solve(const rf_solve_ctx_t *ctx, rf_answer_t *answer, rf_error_t *err)
{
    return s_solve_with(ctx, answer, false, err);
}

static rf_status s_solve_preempt(const rf_solve_ctx_t *ctx, rf_answer_t *answer, rf_error_t *err)
{
    return s_solve_with(ctx, answer, true, err);
}

/* ---- interface ------------------------------------------------------------------------------------------------- */

const rf_strategy_t bench_strategy_kueue = {
    .name = "kueue",
    .description = "baseline: one gang at a time in queue order, Kueue TAS-style best fit",
    .solve = s_solve,
};

const rf_strategy_t bench_strategy_kueue_preempt = {
    .name = "kueue-preempt",
    .description = "baseline: kueue, with Kueue's preemption of lower-priority running gangs within a ClusterQueue",
    .solve = s_solve_preempt,
};
