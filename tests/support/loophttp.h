/* tests/support/loophttp.h: a loopback HTTP/1.1 server for the unit tests
 * that drive a Kubernetes API client (the watcher's rooms): one thread,
 * one request per connection (Connection: close), every request recorded
 * (method, path, body; the first RF_LOOPHTTP_MAX of them) under `mu`, and
 * answered by the test's handler or, without one, with `{}` and 201 for a
 * POST, 200 for anything else. */
#ifndef RACKFIT_TESTS_LOOPHTTP_H
#define RACKFIT_TESTS_LOOPHTTP_H

#include <pthread.h>
#include <stdatomic.h>

#define RF_LOOPHTTP_MAX 64

/* The answer to `request` (its bytes, headers and body, NUL-terminated):
 * returns the status and points *body at the reply body (static or the
 * handler's own) and *headers at extra header lines ("" or lines each
 * ending in \r\n). Called on the server's thread, without `mu`. */
typedef int (*rf_loophttp_fn)(void *user, const char *request, const char **body, const char **headers);

typedef struct {
    int fd, port;
    atomic_int stop;
    pthread_t thread;
    rf_loophttp_fn fn;
    void *user;
    pthread_mutex_t mu; /* guards what follows */
    int n;              /* requests recorded */
    char method[RF_LOOPHTTP_MAX][16];
    char path[RF_LOOPHTTP_MAX][256];
    char body[RF_LOOPHTTP_MAX][2048];
} rf_loophttp_t;

/* Listen on 127.0.0.1 (a free port: s->port) and serve on a thread. */
void rf_loophttp_start(rf_loophttp_t *s, rf_loophttp_fn fn, void *user);
/* Stop the thread and close the socket (the records stay readable). */
void rf_loophttp_stop(rf_loophttp_t *s);

#endif
