/* rackfit/client.h: a C client for rackfitd (docs/protocol.md).
 *
 * One client is one ZeroMQ REQ connection to one endpoint (plain, or CURVE
 * when the server's public key is given), used by one thread at a time.
 * Requests are MessagePack maps; rf_client_solve_json sends a contract
 * problem given as JSON and returns the answer as JSON, so `rackfit solve
 * --endpoint` prints what `rackfit solve` prints. Errors the server sends
 * come back as their status (the wire code's rf_status) with the server's
 * message and field path in `err`. */
#ifndef RACKFIT_CLIENT_H
#define RACKFIT_CLIENT_H

#include <stddef.h>

#include "rackfit/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rf_client rf_client_t;

typedef struct {
    int timeout_ms;                /* per request, send and receive; default 60000 */
    const char *server_public_key; /* Z85, 40 characters; NULL: plain mode */
    const char *public_key;        /* the client's own CURVE pair (Z85, 40 characters each); NULL: a fresh pair */
    const char *secret_key;
    int pipelined; /* a DEALER: rf_client_send/rf_client_recv, many requests in flight */
} rf_client_opts_t;

void rf_client_opts_default(rf_client_opts_t *opts);

/* Connect (lazily, as ZeroMQ does) to `endpoint`. NULL on error (`err`). */
rf_client_t *rf_client_new(const char *endpoint, const rf_client_opts_t *opts, rf_error_t *err);
/* NULL-safe; sets *client to NULL. */
void rf_client_destroy(rf_client_t **client);

/* One request: `msg` is a MessagePack map; *reply is the server's reply,
 * malloc'ed (free() it). RF_ETIMEOUT when no reply came in time (the client
 * stays usable), RF_EIO on a transport error, RF_EINVAL on a pipelined
 * client (use rf_client_send/rf_client_recv). */
rf_status rf_client_request(rf_client_t *client, const void *msg, size_t len, void **reply, size_t *reply_len,
                            rf_error_t *err);

/* Pipelined clients (opts.pipelined): send without waiting; receive the
 * next reply within `timeout_ms` (0: poll). Replies come in the order the
 * server finishes them: match them by "id". RF_ETIMEOUT when none came. */
rf_status rf_client_send(rf_client_t *client, const void *msg, size_t len, rf_error_t *err);
rf_status rf_client_recv(rf_client_t *client, int timeout_ms, void **reply, size_t *reply_len, rf_error_t *err);

/* Solve a problem given as contract JSON: *answer is the answer as JSON
 * (malloc'ed, NUL-terminated; free() it). An error reply returns its status
 * with the server's message and path in `err`. */
rf_status rf_client_solve_json(rf_client_t *client, const char *json, size_t len, char **answer, size_t *answer_len,
                               rf_error_t *err);

#ifdef __cplusplus
}
#endif
#endif
