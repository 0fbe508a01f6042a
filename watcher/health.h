/* watcher/health.h: the kubelet's probes on `--health-port` (deploy/): GET
 * /healthz answers 200 while the cycle loop has turned in the last minute
 * (or a batch of binder requests is still making progress: they beat the
 * same heart), GET /readyz 200 once nodes, pods and PodGroups are listed
 * and the heart beats; anything else 503. One thread, one connection at a
 * time, every connection closed after its answer: the kubelet's probes
 * need no more. The metrics (and the same two paths) are served by
 * base/httpd on `--metrics-listen`. */
#ifndef RACKFIT_WATCHER_HEALTH_H
#define RACKFIT_WATCHER_HEALTH_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "rackfit/status.h"

typedef struct {
    int fd;
    pthread_t thread;
    bool started;
    _Atomic double heartbeat; /* rf__now() of the cycle loop's (or a binder's) last sign of life */
    atomic_int ready;
    const atomic_int *stop;
} rf__health_t;

/* Listen on every interface at `port` and serve until *stop. RF_EIO with the reason. */
rf_status rf__health_start(rf__health_t *h, int port, const atomic_int *stop, rf_error_t *err);
/* Join the thread (after *stop) and close the socket; safe when never started. */
void rf__health_stop(rf__health_t *h);
/* Is the heart beating (a turn in the last minute)? */
bool rf__health_alive(rf__health_t *h);

#endif
