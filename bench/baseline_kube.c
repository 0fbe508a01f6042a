/* bench/baseline_kube.c: the "kube" strategy, a kube-scheduler-style placer
 * used as a baseline by rackfit-bench.
 *
 * Pod by pod, gangs in queue order (priority descending, then problem order),
 * each pod set's new pods (count minus bound) one at a time: every pod goes to
 * the eligible node where it fits with the most capacity left afterwards
 * (LeastAllocated: the highest mean, over cpu, memory and the value resource
 * that the node has, of free / allocatable after placing it; ties by node
 * index). No gang semantics, no topology: pods that do not fit stay pending,
 * and the pods already placed keep their capacity, as they would in a cluster.
 * Eligibility is the contract's (every level label present, not cordoned,
 * node selector matched, NoSchedule/NoExecute taints tolerated).
 *
 * The answer stays feasible for rf_check: a gang is admitted only when every
 * pod set got at least min_count pods (bound ones included) and its placement
 * keeps its required levels and slices (pods beyond the last whole slice are
 * left out of the answer); the rest are rejected, with the reason. What the
 * answer cannot carry — gangs left partly placed and the GPUs they hold idle —
 * goes into bench_kube_stats_t (bench.h).
 *
 * Self-contained: public API only. Deterministic. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

/* ---- data structures ------------------------------------------------------------------------------------------- */

typedef struct {
    const rf_problem_t *p;
    int32_t R;
    int32_t L;
    int32_t res[3];   /* cpu, memory, value resource (-1 when absent) */
    const char **val; /* [n_nodes * L] level label values, NULL when absent */
    bool *labelled;   /* [n_nodes] every level label present */
    int64_t *free;    /* [n_nodes * R] */
    /* the heap of candidate nodes for the current pod set */
    int32_t *heap;
    double *score; /* [n_nodes] */
    int32_t n_heap;
    /* the current gang's placements: per pod set lists of (node, count) */
    int32_t *cnt;  /* [n_nodes] pods of the current pod set per node */
    int32_t *list; /* [n_nodes] nodes of the current pod set, in first-use order */
    int32_t n_list;
} s_ctx_t;

/* ---- local methods --------------------------------------------------------------------------------------------- */

/* Kubernetes' eligibility rules are the library's (rf_node_admits); the
 * level labels were checked once into `labelled`. */
static bool s_eligible(const s_ctx_t *c, int32_t n, const rf_pod_set_t *ps)
{
    return c->labelled[n] && rf_node_admits(c->p, n, ps);
}

static bool s_fits(const s_ctx_t *c, int32_t n, const rf_pod_set_t *ps)
{
    const int64_t *fr = &c->free[(size_t)n * (size_t)c->R];
    for (int32_t r = 0; r < c->R; r++)
        if (ps->requests[r] > 0 && fr[r] != RF_QTY_UNLIMITED && fr[r] < ps->requests[r])
            return false;
    return true;
}

/* LeastAllocated score of node n after one more pod of ps. */
static double s_score(const s_ctx_t *c, int32_t n, const rf_pod_set_t *ps)
{
    const rf_node_t *node = &c->p->nodes[n];
    const int64_t *fr = &c->free[(size_t)n * (size_t)c->R];
    double sum = 0;
    int k = 0;
    for (int i = 0; i < 3; i++) {
        int32_t r = c->res[i];
        if (r < 0 || node->allocatable[r] <= 0 || node->allocatable[r] == RF_QTY_UNLIMITED)
            continue;
        sum += (double)(fr[r] - ps->requests[r]) / (double)node->allocatable[r];
        k++;
    }
    return k ? sum / k : 0;
}

/* Heap order: higher score first, then lower node index. */
static bool s_before(const s_ctx_t *c, int32_t a, int32_t b)
{
    if (c->score[a] != c->score[b])
        return c->score[a] > c->score[b];
    return a < b;
}

static void s_sift_down(s_ctx_t *c, int32_t i)
{
    for (;;) {
        int32_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < c->n_heap && s_before(c, c->heap[l], c->heap[m]))
            m = l;
        if (r < c->n_heap && s_before(c, c->heap[r], c->heap[m]))
            m = r;
        if (m == i)
            return;
        int32_t t = c->heap[i];
        c->heap[i] = c->heap[m];
        c->heap[m] = t;
        i = m;
    }
}

static void s_ctx_fini(s_ctx_t *c)
{
    free(c->val);
    free(c->labelled);
    free(c->free);
    free(c->heap);
    free(c->score);
    free(c->cnt);
    free(c->list);
}

static rf_status s_ctx_init(s_ctx_t *c, const rf_problem_t *p, rf_error_t *err)
{
    memset(c, 0, sizeof(*c));
    c->p = p;
    c->R = p->n_resources;
    c->L = p->n_levels;
    size_t N = p->n_nodes > 0 ? (size_t)p->n_nodes : 1;
    c->val = calloc(N * (size_t)c->L, sizeof(char *));
    c->labelled = calloc(N, sizeof(bool));
    c->free = malloc(N * (size_t)c->R * sizeof(int64_t));
    c->heap = malloc(N * sizeof(int32_t));
    c->score = calloc(N, sizeof(double));
    c->cnt = calloc(N, sizeof(int32_t));
    c->list = malloc(N * sizeof(int32_t));
    if (!c->val || !c->labelled || !c->free || !c->heap || !c->score || !c->cnt || !c->list)
        return rf_error_set(err, RF_ENOMEM, "", "kube: out of memory");
    c->res[0] = c->res[1] = -1;
    for (int32_t r = 0; r < c->R; r++) {
        if (strcmp(p->resources[r], "cpu") == 0)
            c->res[0] = r;
        else if (strcmp(p->resources[r], "memory") == 0)
            c->res[1] = r;
    }
    c->res[2] = p->options.value_resource;
    if (c->res[2] == c->res[0] || c->res[2] == c->res[1])
        c->res[2] = -1;
    bench_node_view(p, c->val, c->free);
    for (int32_t n = 0; n < p->n_nodes; n++)
        c->labelled[n] = bench_node_labelled(p, c->val, n);
    return RF_OK;
}

/* Nodes a and b in the same domain of level l? */
static bool s_same(const s_ctx_t *c, int32_t a, int32_t b, int32_t l)
{
    if (a == b)
        return true;
    for (int32_t k = 0; k <= l; k++) {
        const char *x = c->val[(size_t)a * (size_t)c->L + (size_t)k], *y = c->val[(size_t)b * (size_t)c->L + (size_t)k];
        if (!x || !y || strcmp(x, y) != 0)
            return false;
    }
    return true;
}

/* Place up to `want` pods of ps, one at a time; the result in c->list / c->cnt. */
static int64_t s_place_pods(s_ctx_t *c, const rf_pod_set_t *ps, int64_t want)
{
    c->n_heap = 0;
    c->n_list = 0;
    if (want <= 0)
        return 0;
    for (int32_t n = 0; n < c->p->n_nodes; n++)
        if (s_eligible(c, n, ps) && s_fits(c, n, ps)) {
            c->score[n] = s_score(c, n, ps);
            c->heap[c->n_heap++] = n;
        }
    for (int32_t i = c->n_heap / 2 - 1; i >= 0; i--)
        s_sift_down(c, i);
    int64_t placed = 0;
    while (placed < want && c->n_heap > 0) {
        int32_t n = c->heap[0];
        int64_t *fr = &c->free[(size_t)n * (size_t)c->R];
        for (int32_t r = 0; r < c->R; r++)
            if (fr[r] != RF_QTY_UNLIMITED)
                fr[r] -= ps->requests[r];
        if (c->cnt[n]++ == 0)
            c->list[c->n_list++] = n;
        placed++;
        if (s_fits(c, n, ps)) {
            c->score[n] = s_score(c, n, ps);
        } else {
            c->heap[0] = c->heap[--c->n_heap];
        }
        s_sift_down(c, 0);
    }
    return placed;
}

typedef struct {
    int32_t *node;
    int32_t *count;
    int32_t n;
} s_list_t;

/* Does the gang's placement (new pods in lists[], bound pods) keep its
 * required levels? Returns the level broken, or -1. */
static int32_t s_broken_level(const s_ctx_t *c, const rf_gang_t *g, const s_list_t *lists)
{
    for (int32_t scope = -1; scope < g->n_pod_sets; scope++) {
        int32_t l = scope < 0 ? g->topology.required : g->pod_sets[scope].topology.required;
        if (l < 0)
            continue;
        int32_t ref = -1;
        for (int32_t j = 0; j < g->n_pod_sets; j++) {
            if (scope >= 0 && j != scope)
                continue;
            const rf_pod_set_t *ps = &g->pod_sets[j];
            for (int32_t b = 0; b < ps->n_bound; b++) {
                if (ps->bound[b].count <= 0)
                    continue;
                if (ref < 0)
                    ref = ps->bound[b].node;
                else if (!s_same(c, ref, ps->bound[b].node, l))
                    return l;
            }
            for (int32_t i = 0; i < lists[j].n; i++) {
                if (ref < 0)
                    ref = lists[j].node[i];
                else if (!s_same(c, ref, lists[j].node[i], l))
                    return l;
            }
        }
    }
    return -1;
}

/* Slices: trim each sliced pod set to whole slices, then check that every
 * group of `size` consecutive new pods sits in one slice-level domain. A pod
 * set with slices and bound pods counts as broken (ranks are not modelled). */
static int32_t s_broken_slices(const s_ctx_t *c, const rf_gang_t *g, s_list_t *lists)
{
    for (int32_t j = 0; j < g->n_pod_sets; j++) {
        const rf_pod_set_t *ps = &g->pod_sets[j];
        int32_t s = ps->slice.size;
        if (s <= 1)
            continue;
        if (ps->n_bound_pods > 0)
            return ps->slice.level;
        int64_t total = 0;
        for (int32_t i = 0; i < lists[j].n; i++)
            total += lists[j].count[i];
        int64_t drop = total % s;
        while (drop > 0 && lists[j].n > 0) {
            int32_t *last = &lists[j].count[lists[j].n - 1];
            int64_t d = drop < *last ? drop : *last;
            *last -= (int32_t)d;
            drop -= d;
            if (*last == 0)
                lists[j].n--;
        }
        int32_t left = 0, ref = -1;
        for (int32_t i = 0; i < lists[j].n; i++) {
            for (int32_t k = 0; k < lists[j].count[i]; k++) {
                if (left == 0) {
                    ref = lists[j].node[i];
                    left = s;
                } else if (!s_same(c, ref, lists[j].node[i], ps->slice.level)) {
                    return ps->slice.level;
                }
                left--;
            }
        }
    }
    return -1;
}

/* ---- callbacks ------------------------------------------------------------------------------------------------- */

/* Fill `answer` and finish it; what was left behind goes to *stats when
 * stats is not NULL. */
static rf_status s_run(const rf_problem_t *problem, rf_answer_t *answer, bench_kube_stats_t *stats, rf_error_t *err)
{
    bench_kube_stats_t ks = {0};
    s_ctx_t c;
    int32_t *queue = NULL;
    s_list_t *lists = NULL;
    int64_t *placed = NULL;
    int32_t max_ps = 1;
    rf_status st = s_ctx_init(&c, problem, err);
    if (st != RF_OK)
        goto done;
    for (int32_t i = 0; i < problem->n_gangs; i++)
        if (problem->gangs[i].n_pod_sets > max_ps)
            max_ps = problem->gangs[i].n_pod_sets;
    queue = bench_queue_order(problem);
    lists = calloc((size_t)max_ps, sizeof(*lists));
    placed = calloc((size_t)max_ps, sizeof(*placed));
    if (!queue || !lists || !placed) {
        st = rf_error_set(err, RF_ENOMEM, "", "kube: out of memory");
        goto done;
    }

    int32_t vr = problem->options.value_resource;
    for (int32_t qi = 0; qi < problem->n_gangs; qi++) {
        int32_t gi = queue[qi];
        const rf_gang_t *g = &problem->gangs[gi];
        bool complete = true, needed = false;
        int64_t any = 0, units = 0;
        int32_t short_ps = -1;
        for (int32_t j = 0; j < g->n_pod_sets; j++) {
            const rf_pod_set_t *ps = &g->pod_sets[j];
            int64_t want = ps->count - ps->n_bound_pods;
            needed = needed || want > 0;
            placed[j] = s_place_pods(&c, ps, want);
            lists[j].n = c.n_list;
            lists[j].node = malloc((size_t)(c.n_list ? c.n_list : 1) * sizeof(int32_t));
            lists[j].count = malloc((size_t)(c.n_list ? c.n_list : 1) * sizeof(int32_t));
            if (!lists[j].node || !lists[j].count) {
                st = rf_error_set(err, RF_ENOMEM, "", "kube: out of memory");
                for (int32_t k = 0; k <= j; k++) {
                    free(lists[k].node);
                    free(lists[k].count);
                }
                goto done;
            }
            for (int32_t i = 0; i < c.n_list; i++) {
                lists[j].node[i] = c.list[i];
                lists[j].count[i] = c.cnt[c.list[i]];
                c.cnt[c.list[i]] = 0;
            }
            any += placed[j];
            if (vr >= 0)
                units += placed[j] * ps->requests[vr];
            if (placed[j] + ps->n_bound_pods < ps->min_count) {
                complete = false;
                if (short_ps < 0)
                    short_ps = j;
            }
        }
        rf_why_t why = {-1, -1, -1, -1};
        if (!complete) {
            const rf_pod_set_t *ps = &g->pod_sets[short_ps];
            why.fits = placed[short_ps] + ps->n_bound_pods;
            why.needs = ps->min_count;
            if (any > 0) {
                ks.partial++;
                ks.partial_pods += any;
                ks.partial_idle_units += units;
                st = rf_answer_reject(answer, gi, why,
                                      "kube: %lld of %lld pods of %s placed; the gang is left partly placed",
                                      (long long)why.fits, (long long)why.needs, ps->name);
            } else {
                if (needed)
                    ks.unplaced++;
                st = rf_answer_reject(answer, gi, why, "kube: no node fits a pod of %s", ps->name);
            }
        } else {
            ks.complete++;
            int32_t lb = s_broken_level(&c, g, lists);
            if (lb < 0)
                lb = s_broken_slices(&c, g, lists);
            if (lb >= 0) {
                ks.broken++;
                why.level = lb;
                st = rf_answer_reject(answer, gi, why, "kube: every pod placed, but not in one %s domain as required",
                                      problem->levels[lb]);
            } else {
                for (int32_t j = 0; j < g->n_pod_sets && st == RF_OK; j++)
                    for (int32_t i = 0; i < lists[j].n && st == RF_OK; i++)
                        if (lists[j].count[i] > 0)
                            st = rf_answer_add(answer, gi, j, lists[j].node[i], lists[j].count[i]);
                if (st == RF_OK)
                    answer->gangs[gi].admitted = true;
            }
        }
        for (int32_t j = 0; j < g->n_pod_sets; j++) {
            free(lists[j].node);
            free(lists[j].count);
            lists[j].node = NULL;
            lists[j].count = NULL;
        }
        if (st != RF_OK) {
            rf_error_set(err, st, "", "kube: %s placing gang %s", rf_status_message(st), g->name);
            goto done;
        }
    }
    rf_answer_finish(answer);
    answer->summary.mode_used = "kube";
    if (stats)
        *stats = ks;
done:
    free(queue);
    free(lists);
    free(placed);
    s_ctx_fini(&c);
    return st;
}

static rf_status s_solve(const rf_solve_ctx_t *ctx, rf_answer_t *answer, rf_error_t *err)
{
    bench_extra_t *extra = rf_solve_ctx_user(ctx);
    rf_status st = s_run(rf_solve_ctx_problem(ctx), answer, extra ? &extra->kube : NULL, err);
    if (extra && st == RF_OK)
        extra->have_kube = true;
    return st;
}

/* ---- interface ------------------------------------------------------------------------------------------------- */

const rf_strategy_t bench_strategy_kube = {
    .name = "kube",
    .description = "baseline: pod by pod, least allocated, no gang semantics and no topology",
    .solve = s_solve,
};
