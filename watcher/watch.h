/* watcher/watch.h: list-then-watch of one kind of object into the cache.
 *
 * One thread per kind. It lists (paged with limit/continue), replaces the
 * cache's objects of that kind with the list (mark and sweep), then watches
 * from the list's resourceVersion with bookmarks, applying every event. The
 * resourceVersion advances with every event and bookmark, so a stream that
 * ends (timeoutSeconds, a dropped connection) resumes where it stopped:
 * at once after a clean end, after a capped exponential backoff with jitter
 * after an error. 410 Gone (as an HTTP status or as an ERROR event) means
 * the version is too old: list again. A kind the server does not serve
 * (404: the PodGroup CRD is not installed) counts as synced and empty (what
 * was cached of it is dropped), and is retried every 30 s. A kind with an
 * older API version (`older`: policy/v1beta1 PodDisruptionBudgets, for
 * servers before 1.21, which serve no policy/v1) is listed from there when
 * its path gets a 404; each budget records the version it was decoded from
 * (rf__kpdb_t.v1beta1), so objects of both versions may sit in the cache
 * until a list replaces them; `path` is asked again every `retry_newer_s`
 * (600 s), at the end of a watch stream. An `optional` kind the watcher can
 * work without (PodDisruptionBudgets: a refused eviction finds a budget too)
 * also counts as synced when listing it is forbidden (403: a ClusterRole from
 * before it was watched), with a warning, and what was cached of it is
 * dropped; a 403 on its watch (RBAC revoked after a list) drops it too and
 * lists again. The list is retried with the usual capped backoff (a
 * restarting API server answers 403 for a moment too). */
#ifndef RACKFIT_WATCHER_WATCH_H
#define RACKFIT_WATCHER_WATCH_H

#include <stdatomic.h>

#include "cache.h"
#include "kube_http.h"

typedef struct {
    rf__kube_t *kube;
    rf__cache_t *cache;
    rf__kind kind;
    const char *path;    /* the list path: "/api/v1/pods" */
    const char *older;   /* NULL, or the list path of the kind's older API version, used on a 404 of `path` */
    const char *primary; /* the watch thread's own: `path` as first given, while `older` is used */
    bool optional;       /* a 403 on the list counts as not served (see above) */
    const atomic_int *stop;
    long timeout_s;       /* the watch's timeoutSeconds (default 300) */
    double retry_newer_s; /* while `older` is used, ask `path` again after this long (default 600 s) */
    /* counters, for logs and tests */
    atomic_int lists;
    atomic_int watches;
    atomic_int gone; /* 410s seen */
    atomic_int errors;
} rf__watch_t;

/* The thread's body: arg is an rf__watch_t. Returns when *stop. */
void *rf__watch_run(void *arg);

/* Apply one watch event line to the cache (locks it). Sets *rv to the new
 * resourceVersion (caller's buffer of rv_cap bytes). Returns 1 when the event
 * says 410 Gone, -1 when it is not understood, 0 otherwise. */
int rf__watch_apply(rf__cache_t *cache, rf__kind kind, const char *line, size_t len, char *rv, size_t rv_cap);

#endif
