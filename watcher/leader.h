/* watcher/leader.h: leader election on a coordination.k8s.io/v1 Lease, as
 * client-go's leaderelection does it: take the Lease when it is absent, ours,
 * or not renewed for leaseDurationSeconds as observed on our own clock;
 * renew every `retry_s`; every write is an update with the resourceVersion
 * read, so two candidates never both win. A leader that cannot renew within
 * `renew_deadline_s` sets *lost and stops leading for good (main exits and
 * the pod restarts, as kube-scheduler does). On a clean stop the Lease is
 * released (holderIdentity emptied) so a successor need not wait. */
#ifndef RACKFIT_WATCHER_LEADER_H
#define RACKFIT_WATCHER_LEADER_H

#include <stdatomic.h>

#include "kube_http.h"

typedef struct {
    rf__kube_t *kube;
    const char *ns;
    const char *name;
    const char *identity;
    int lease_s;             /* leaseDurationSeconds (15) */
    double renew_deadline_s; /* (10) */
    double retry_s;          /* (2) */
    const atomic_int *stop;
    atomic_int leading; /* 1 while we hold the Lease */
    atomic_int lost;    /* 1 once we held it and then lost it */
    atomic_int transitions;
} rf__leader_t;

void *rf__leader_run(void *arg);

/* One acquire-or-renew step: 1 when we hold the Lease after it, -1 when
 * another watcher holds it (unexpired), 0 when we could not tell or lost a race. */
int rf__leader_try(rf__leader_t *l, rf__kconn_t *conn, char *observed, size_t observed_cap, double *observed_at);

#endif
