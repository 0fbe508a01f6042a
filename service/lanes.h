/* service/lanes.h: rackfitd's lanes: bounded queues of requests between
 * the socket loop (which pushes) and a lane's workers (which pop).
 *
 * A lane is bounded by what it holds, not only by how many: at most `cap`
 * requests AND at most `cap_bytes` bytes of them, so a burst of small
 * requests is queued while a flood of huge ones is refused (`busy`) before
 * their memory adds up. One request larger than `cap_bytes` is taken only
 * when the lane is empty, so a lane never refuses every request of a size.
 *
 * Thread-safe: one mutex and condition variable per lane. Jobs are opaque
 * (the server's frames); the lane never looks inside them. */
#ifndef RACKFIT_SERVICE_LANES_H
#define RACKFIT_SERVICE_LANES_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct {
    void *job;
    int64_t bytes;
} rf__lane_item_t;

typedef struct {
    const char *name;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    rf__lane_item_t *ring;
    int32_t cap, head, len;
    int64_t bytes, cap_bytes;
    bool closed;
    bool ready; /* init succeeded */
} rf__lane_t;

/* cap >= 1, cap_bytes >= 1. -1 on ENOMEM. */
int rf__lane_init(rf__lane_t *l, const char *name, int32_t cap, int64_t cap_bytes);
/* Free what is still queued with `free_job` (NULL: leave it), and the lane. */
void rf__lane_fini(rf__lane_t *l, void (*free_job)(void *job));
/* Queue a job of `bytes`; false when the lane is closed or full. */
bool rf__lane_push(rf__lane_t *l, void *job, int64_t bytes);
/* The oldest job, waiting for one; NULL once the lane is closed and empty. */
void *rf__lane_pop(rf__lane_t *l);
/* No more pushes; pops drain what is queued, then get NULL. */
void rf__lane_close(rf__lane_t *l);
/* What is queued now. */
void rf__lane_depth(rf__lane_t *l, int32_t *len, int64_t *bytes);

#endif
