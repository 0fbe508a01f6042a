/* service/budget.c: the solver-thread budget (service/budget.h).
 * Invariant (under `mu`): 0 <= free <= total, 0 <= solver_used and
 * solver_used <= total - 1 when total >= 2. */
#include "budget.h"

int rf__budget_init(rf__budget_t *b, int32_t threads)
{
    b->total = threads > 0 ? threads : 1;
    b->free = b->total;
    b->solver_used = 0;
    if (pthread_mutex_init(&b->mu, NULL) != 0)
        return -1;
    if (pthread_cond_init(&b->cv, NULL) != 0) {
        pthread_mutex_destroy(&b->mu);
        return -1;
    }
    return 0;
}

void rf__budget_fini(rf__budget_t *b)
{
    pthread_cond_destroy(&b->cv);
    pthread_mutex_destroy(&b->mu);
}

int32_t rf__budget_take(rf__budget_t *b, int32_t want, bool solver_lane)
{
    int32_t limit = solver_lane && b->total > 1 ? b->total - 1 : b->total;
    if (want < 1)
        want = 1;
    pthread_mutex_lock(&b->mu);
    while (b->free < 1 || (solver_lane && b->solver_used >= limit))
        pthread_cond_wait(&b->cv, &b->mu);
    int32_t room = solver_lane ? limit - b->solver_used : b->free;
    int32_t got = want < b->free ? want : b->free;
    if (got > room)
        got = room;
    b->free -= got;
    if (solver_lane)
        b->solver_used += got;
    pthread_mutex_unlock(&b->mu);
    return got;
}

void rf__budget_give(rf__budget_t *b, int32_t n, bool solver_lane)
{
    pthread_mutex_lock(&b->mu);
    b->free += n;
    if (solver_lane)
        b->solver_used -= n;
    pthread_cond_broadcast(&b->cv);
    pthread_mutex_unlock(&b->mu);
}

int32_t rf__budget_in_use(rf__budget_t *b)
{
    pthread_mutex_lock(&b->mu);
    int32_t n = b->total - b->free;
    pthread_mutex_unlock(&b->mu);
    return n;
}
