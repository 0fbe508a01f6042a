/* bench/queue.c: queue order for the baselines (bench.h): priority
 * descending, then problem order, as Kueue's StrictFIFO queue hands gangs out. */
#include <stdlib.h>

#include "bench.h"

typedef struct {
    int64_t priority;
    int32_t index;
} s_queued_t;

static int s_cmp_queue(const void *a, const void *b)
{
    const s_queued_t *x = a, *y = b;
    if (x->priority != y->priority)
        return x->priority > y->priority ? -1 : 1;
    return (x->index > y->index) - (x->index < y->index);
}

int32_t *bench_queue_order(const rf_problem_t *p)
{
    size_t n = p->n_gangs > 0 ? (size_t)p->n_gangs : 1;
    s_queued_t *q = malloc(n * sizeof(*q));
    int32_t *out = malloc(n * sizeof(*out));
    if (!q || !out) {
        free(q);
        free(out);
        return NULL;
    }
    for (int32_t i = 0; i < p->n_gangs; i++) {
        q[i].priority = p->gangs[i].priority;
        q[i].index = i;
    }
    qsort(q, (size_t)p->n_gangs, sizeof(*q), s_cmp_queue);
    for (int32_t i = 0; i < p->n_gangs; i++)
        out[i] = q[i].index;
    free(q);
    return out;
}
