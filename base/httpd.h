/* base/httpd.h: the daemons' small HTTP endpoint for operators, behind
 * libmicrohttpd (base/httpd.c is the only file that includes
 * <microhttpd.h>). It serves, for GET and HEAD only:
 *   /metrics  the registry in the Prometheus text format (base/metrics.h);
 *   /healthz  200 "ok" while the process serves at all;
 *   /readyz   200 "ready", or 503 with the reason the callback gives;
 * anything else is 404, other methods 405. Request bodies are refused.
 *
 * One internal polling thread (libmicrohttpd's) answers one connection at a
 * time, at most `max_connections` open, each closed after `timeout_s` idle:
 * a scrape costs one render of the registry and nothing on the request path.
 * The thread is started by rf__httpd_start and inherits the caller's signal
 * mask (block SIGTERM/SIGINT first where the main thread takes them). */
#ifndef RACKFIT_BASE_HTTPD_H
#define RACKFIT_BASE_HTTPD_H

#include <stddef.h>

#include "metrics.h"
#include "rackfit/status.h"

typedef struct rf__httpd rf__httpd_t;

typedef struct {
    rf__metrics_t *metrics; /* borrowed; outlives the server */
    /* NULL when ready, else why not (a static or long-lived string); a NULL
     * callback means always ready. Called from the HTTP thread. */
    const char *(*not_ready)(void *arg);
    void *arg;
    unsigned max_connections; /* 0: 16 */
    unsigned timeout_s;       /* 0: 10 */
} rf__httpd_config_t;

/* Split "HOST:PORT" ("[v6]:PORT" for IPv6; an empty HOST is every
 * interface) into `host` (without brackets) and `port` (0 to 65535; 0 takes
 * a free port). RF_EINVAL naming what is wrong. */
rf_status rf__httpd_parse_listen(const char *listen, char *host, size_t host_size, int *port, rf_error_t *err);

/* Listen on `listen` and serve until rf__httpd_stop. RF_EINVAL for a bad
 * address, RF_EIO when it cannot be bound (the message says why). */
rf_status rf__httpd_start(const char *listen, const rf__httpd_config_t *cfg, rf__httpd_t **out, rf_error_t *err);
/* The port bound (the one chosen when the address asked for 0). */
int rf__httpd_port(const rf__httpd_t *h);
/* Stop serving and free; NULL-safe, sets *h to NULL. */
void rf__httpd_stop(rf__httpd_t **h);

#endif
