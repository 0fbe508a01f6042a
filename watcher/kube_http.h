/* watcher/kube_http.h: the watcher's HTTP layer to the Kubernetes API
 * (libcurl; this module is the only one that includes <curl/curl.h>), and
 * the JSON boundary for what the API sends (parsed with librackfit's jansson
 * reader, base/json.h, into an rf_doc tree we own).
 *
 * TLS is verified against the cluster CA unless the kubeconfig says
 * insecure-skip-tls-verify. Each thread uses its own rf__kconn_t (one curl
 * handle, one kept-alive connection); rf__kube_t is shared (read-only but
 * for the bearer token, re-read from its file under a mutex every minute).
 * Transport failures (connect, TLS, timeout) are RF_EIO/RF_ETIMEOUT; HTTP
 * errors are not failures here: the caller reads `status`. */
#ifndef RACKFIT_WATCHER_KUBE_HTTP_H
#define RACKFIT_WATCHER_KUBE_HTTP_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "arena.h"
#include "clock.h"
#include "doc.h"
#include "kubeconfig.h"
#include "rackfit/status.h"

typedef struct rf__kube rf__kube_t;
typedef struct rf__kconn rf__kconn_t;

typedef struct {
    long status; /* HTTP status; 0 on a transport error */
    char *body;  /* malloc'ed, NUL-terminated */
    size_t len;
    double retry_after; /* seconds from a Retry-After header, or 0 */
} rf__kresp_t;

/* Process-wide setup (curl_global_init); call once before threads start. */
rf_status rf__kube_global_init(rf_error_t *err);
void rf__kube_global_fini(void);

rf__kube_t *rf__kube_new(const rf__kubeconfig_t *cfg, rf_error_t *err);
/* Be told of every answer: `verb` the method ("WATCH" for streams), `status`
 * the HTTP status, 0 for a transport error. Set before threads start; `fn`
 * is called from every thread that makes requests. */
typedef void (*rf__kube_observer_fn)(void *ctx, const char *verb, long status);
void rf__kube_observe(rf__kube_t *kube, rf__kube_observer_fn fn, void *ctx);
void rf__kube_destroy(rf__kube_t **kube);
const char *rf__kube_server(const rf__kube_t *kube);

rf__kconn_t *rf__kconn_new(rf__kube_t *kube);
void rf__kconn_destroy(rf__kconn_t **conn);

void rf__kresp_fini(rf__kresp_t *resp);

/* One request. `body` may be NULL; `ctype` its Content-Type. */
rf_status rf__kube_call(rf__kconn_t *conn, const char *method, const char *path, const char *ctype, const char *body,
                        long timeout_ms, rf__kresp_t *resp, rf_error_t *err);

/* A streamed GET (watch): `on_line` gets every complete line (without the
 * newline); a non-zero return ends the stream. Returns when the server ends
 * the stream (RF_OK), on a transport error, when nothing arrives for
 * `idle_s` seconds (RF_ETIMEOUT), or when *stop becomes non-zero (RF_OK).
 * A non-200 answer fills *status and the body's first line goes to on_line
 * (so the caller sees the Status object). */
rf_status rf__kube_stream(rf__kconn_t *conn, const char *path, long idle_s,
                          int (*on_line)(void *ctx, const char *line, size_t len), void *ctx, const atomic_int *stop,
                          long *status, rf_error_t *err);

/* Many requests in parallel, at most `concurrency` in flight, started no
 * faster than `rate` per second (token bucket, burst `burst`; rate <= 0: no
 * limit). A call whose `delay_s` > 0 is not started before that many
 * seconds from the batch's start. `stop` (may be NULL) ends the batch at
 * once: calls not started get transport RF_EBUSY. */
typedef struct {
    const char *method;
    const char *path;
    const char *ctype;
    const char *body;
    double delay_s;
    /* results */
    rf__kresp_t resp;
    rf_status transport; /* RF_OK, RF_EIO, RF_ETIMEOUT, RF_EBUSY (not sent) */
    double t_done;       /* seconds since the batch started */
} rf__kcall_t;

/* A token bucket, shared by every thread that writes to the API server (the
 * binders): its own mutex guards it, so the rate holds for the process. */
typedef struct {
    pthread_mutex_t mu;
    double rate;
    double burst;
    double tokens;
    double last; /* monotonic seconds */
} rf__limiter_t;

void rf__limiter_init(rf__limiter_t *lim, double rate, double burst);
void rf__limiter_fini(rf__limiter_t *lim);
/* Seconds to wait before the next request may start (0: take a token now). Thread-safe. */
double rf__limiter_take(rf__limiter_t *lim, double now);

typedef struct rf__kmulti rf__kmulti_t;
rf__kmulti_t *rf__kmulti_new(rf__kube_t *kube, int concurrency);
void rf__kmulti_destroy(rf__kmulti_t **m);
rf_status rf__kube_batch(rf__kmulti_t *m, rf__kcall_t *calls, int n, rf__limiter_t *lim, long timeout_ms,
                         const atomic_int *stop, rf_error_t *err);
/* The same, with `stop(stop_ctx)` (may be NULL) asked before every request starts. */
rf_status rf__kube_batch_fn(rf__kmulti_t *m, rf__kcall_t *calls, int n, rf__limiter_t *lim, long timeout_ms,
                            bool (*stop)(void *), void *stop_ctx, rf_error_t *err);

/* Parse JSON from the API server into `arena` (limits fit Kubernetes
 * objects: big lists, long annotations). */
rf_status rf__kube_json(const char *text, size_t len, rf__arena_t *arena, rf_doc_t **out, rf_error_t *err);

#endif
