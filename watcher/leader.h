/* watcher/leader.h: leader election on a coordination.k8s.io/v1 Lease, as
 * client-go's leaderelection does it: take the Lease when it is absent, ours,
 * or not renewed for leaseDurationSeconds as observed on our own clock;
 * renew every `retry_s`; every write is an update with the resourceVersion
 * read, so two candidates never both win. Losing is a matter of time: once
 * `renew_deadline_s` has passed since the last successful renewal began
 * (`valid_until`), the Lease counts as lost whether or not a try has come
 * back yet (rf__leader_lost; the binder asks before every request), and each
 * try's requests are capped at the time left. The thread then sets `lost`
 * and stops leading for good (main exits and the pod restarts, as
 * kube-scheduler does). A leader that took the Lease over from a holder
 * that let it expire sets `recover_after`: the old holder's last requests
 * may still land until then. When *stop is set (main sets it once the cycle
 * loop has returned: nothing is in flight) the Lease is released
 * (holderIdentity emptied) so a successor need not wait. */
#ifndef RACKFIT_WATCHER_LEADER_H
#define RACKFIT_WATCHER_LEADER_H

#include <stdatomic.h>
#include <stdbool.h>

#include "kube_http.h"

typedef struct {
    rf__kube_t *kube;
    const char *ns;
    const char *name;
    const char *identity;
    int lease_s;             /* leaseDurationSeconds (15) */
    double renew_deadline_s; /* (10) */
    double retry_s;          /* (2) */
    double settle_s;         /* after taking over an expired Lease, wait this long (a request timeout) */
    const atomic_int *stop;
    atomic_int leading; /* 1 while we hold the Lease */
    atomic_int lost;    /* 1 once we held it and then lost it */
    atomic_int transitions;
    _Atomic double valid_until;   /* rf__now(): the last renewal's start + renew_deadline_s (0: none) */
    _Atomic double recover_after; /* rf__now() before which the intents are not read (0: none) */
} rf__leader_t;

/* Lost, or leading past valid_until (the Lease may belong to another now). */
bool rf__leader_lost(const rf__leader_t *l);

void *rf__leader_run(void *arg);

/* One acquire-or-renew step: 1 when we hold the Lease after it, -1 when
 * another watcher holds it (unexpired), 0 when we could not tell or lost a race. */
int rf__leader_try(rf__leader_t *l, rf__kconn_t *conn, char *observed, size_t observed_cap, double *observed_at);

#endif
