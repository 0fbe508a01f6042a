/* service/lanes.c: bounded request queues (service/lanes.h).
 * Invariants (under `mu`): 0 <= len <= cap; `bytes` is the sum of the
 * queued items' bytes; bytes <= cap_bytes unless len == 1 (one item bigger
 * than the whole budget, taken into an empty lane). */
#include "lanes.h"

#include <stdlib.h>
#include <string.h>

int rf__lane_init(rf__lane_t *l, const char *name, int32_t cap, int64_t cap_bytes)
{
    memset(l, 0, sizeof *l);
    l->name = name;
    l->cap = cap > 0 ? cap : 1;
    l->cap_bytes = cap_bytes > 0 ? cap_bytes : 1;
    l->ring = calloc((size_t)l->cap, sizeof *l->ring);
    if (!l->ring)
        return -1;
    if (pthread_mutex_init(&l->mu, NULL) != 0) {
        free(l->ring);
        l->ring = NULL;
        return -1;
    }
    if (pthread_cond_init(&l->cv, NULL) != 0) {
        pthread_mutex_destroy(&l->mu);
        free(l->ring);
        l->ring = NULL;
        return -1;
    }
    l->ready = true;
    return 0;
}

void rf__lane_fini(rf__lane_t *l, void (*free_job)(void *job))
{
    if (!l->ready)
        return;
    for (int32_t k = 0; free_job && k < l->len; k++)
        free_job(l->ring[(l->head + k) % l->cap].job);
    free(l->ring);
    pthread_cond_destroy(&l->cv);
    pthread_mutex_destroy(&l->mu);
    memset(l, 0, sizeof *l);
}

bool rf__lane_push(rf__lane_t *l, void *job, int64_t bytes)
{
    pthread_mutex_lock(&l->mu);
    bool room = l->len < l->cap && (l->len == 0 || bytes <= l->cap_bytes - l->bytes);
    bool ok = !l->closed && room;
    if (ok) {
        l->ring[(l->head + l->len) % l->cap] = (rf__lane_item_t){job, bytes};
        l->len++;
        l->bytes += bytes;
        pthread_cond_signal(&l->cv);
    }
    pthread_mutex_unlock(&l->mu);
    return ok;
}

void *rf__lane_pop(rf__lane_t *l)
{
    pthread_mutex_lock(&l->mu);
    while (l->len == 0 && !l->closed)
        pthread_cond_wait(&l->cv, &l->mu);
    void *job = NULL;
    if (l->len > 0) {
        rf__lane_item_t it = l->ring[l->head];
        l->head = (l->head + 1) % l->cap;
        l->len--;
        l->bytes -= it.bytes;
        job = it.job;
    }
    pthread_mutex_unlock(&l->mu);
    return job;
}

void rf__lane_close(rf__lane_t *l)
{
    pthread_mutex_lock(&l->mu);
    l->closed = true;
    pthread_cond_broadcast(&l->cv);
    pthread_mutex_unlock(&l->mu);
}

void rf__lane_depth(rf__lane_t *l, int32_t *len, int64_t *bytes)
{
    pthread_mutex_lock(&l->mu);
    if (len)
        *len = l->len;
    if (bytes)
        *bytes = l->bytes;
    pthread_mutex_unlock(&l->mu);
}
