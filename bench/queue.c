/* bench/queue.c: what both baselines (bench.h) share: the queue order
 * (priority descending, then problem order, as Kueue's StrictFIFO queue hands
 * gangs out), the ranked-entry order it and the kueue baseline's domain
 * choice sort by, and the per-node view of the cluster they start from. */
#include <stdlib.h>

#include "bench.h"

int bench_ranked_cmp(const void *a, const void *b)
{
    const bench_ranked_t *x = a, *y = b;
    if (x->key != y->key)
        return x->key > y->key ? -1 : 1;
    return (x->index > y->index) - (x->index < y->index);
}

int32_t *bench_queue_order(const rf_problem_t *p)
{
    size_t n = p->n_gangs > 0 ? (size_t)p->n_gangs : 1;
    bench_ranked_t *q = malloc(n * sizeof(*q));
    int32_t *out = malloc(n * sizeof(*out));
    if (!q || !out) {
        free(q);
        free(out);
        return NULL;
    }
    for (int32_t i = 0; i < p->n_gangs; i++) {
        q[i].key = p->gangs[i].priority;
        q[i].index = i;
    }
    qsort(q, (size_t)p->n_gangs, sizeof(*q), bench_ranked_cmp);
    for (int32_t i = 0; i < p->n_gangs; i++)
        out[i] = q[i].index;
    free(q);
    return out;
}

int32_t bench_node_view(const rf_problem_t *p, const char **val, int64_t *free_cap)
{
    const size_t L = (size_t)p->n_levels, R = (size_t)p->n_resources;
    int32_t labelled = 0;
    for (int32_t n = 0; n < p->n_nodes; n++) {
        const rf_node_t *node = &p->nodes[n];
        bool all = true;
        for (size_t l = 0; l < L; l++) {
            const char *v = rf_node_label(node, p->levels[l]);
            val[(size_t)n * L + l] = v;
            all = all && v;
        }
        labelled += all;
        for (size_t r = 0; r < R; r++) {
            int64_t a = node->allocatable[r], u = node->used[r];
            free_cap[(size_t)n * R + r] = a == RF_QTY_UNLIMITED ? RF_QTY_UNLIMITED : (a > u ? a - u : 0);
        }
    }
    return labelled;
}

bool bench_node_labelled(const rf_problem_t *p, const char *const *val, int32_t n)
{
    for (int32_t l = 0; l < p->n_levels; l++)
        if (!val[(size_t)n * (size_t)p->n_levels + (size_t)l])
            return false;
    return true;
}
