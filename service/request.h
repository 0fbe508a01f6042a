/* service/request.h: one request in flight inside rackfitd, shared by the
 * rooms of service/ops: the envelope and schema (request.c: decode, `v`,
 * `op`, `id`, typed fields with their paths), the reply encoding (reply.c:
 * every reply's MessagePack, and nowhere else), the op handlers
 * (ops_solve.c, ops_cluster.c, ops.c's ping and stats) and the dispatcher
 * (ops.c: the op table).
 *
 * Invariants: `root` is a map once the envelope is read; `id` is NULL or a
 * string or integer; everything a request allocates lives in `arena` (or
 * is freed by its handler) and is gone when rf__ops_handle returns. */
#ifndef RACKFIT_SERVICE_REQUEST_H
#define RACKFIT_SERVICE_REQUEST_H

#include <stdbool.h>
#include <stdint.h>

#include "arena.h"
#include "budget.h"
#include "codec.h"
#include "doc.h"
#include "ops.h"
#include "rackfit/answer.h"
#include "stats.h"
#include "store.h"

struct rf__ops {
    rf__ops_config_t cfg;
    rf__mp_limits_t mp;
    rf__store_t *store;
    double started_ms;
    int32_t cores; /* the usable cores (rf_machine), for `stats` */
    rf__budget_t budget;
    rf__stats_t stats;
    void (*lane_fn)(void *, rf__lane_info_t *);
    void *lane_arg;
};

typedef struct {
    rf__ops_t *ops;
    rf__arena_t *arena;
    const rf_doc_t *root;
    const rf_doc_t *id;
    rf__mp_writer_t *w;
    rf_error_t err;
    rf__class_t cls;
    rf__op_id_t op;
    double received_ms;
} rf__req_t;

/* ------------------------------------------------- envelope and schema (request.c) */

/* Decode the message (`scanned`: the pre-scan already passed it) and read
 * the envelope: a map, `id` a string or integer, `v` 1, `op` a string
 * (default "solve") that names a served op (q->op), else RF_EUNSUPPORTED. */
rf_status rf__req_envelope(rf__req_t *q, const void *msg, size_t len, bool scanned);
/* Every key of the top-level map is one of `allowed` (NULL-terminated). */
rf_status rf__req_keys(rf__req_t *q, const char *const *allowed);
/* A top-level value, NULL when absent or nil. */
const rf_doc_t *rf__req_get(const rf_doc_t *map, const char *key);
rf_status rf__req_need_str(rf__req_t *q, const char *key, const char **out);
/* An optional integer in [lo, hi]; *out keeps its value when absent. */
rf_status rf__req_opt_int(rf__req_t *q, const char *key, int64_t lo, int64_t hi, int64_t *out);
rf_status rf__req_opt_bool(rf__req_t *q, const char *key, bool *out);
/* A list of non-empty strings (gang or node names), in the arena. */
rf_status rf__req_names(rf__req_t *q, const rf_doc_t *v, const char *key, const char ***out, int32_t *n);
bool rf__req_in(const char *key, const char *const *list);

/* ------------------------------------------------------- replies (reply.c) */

/* A reply map of `n` pairs of the op's own, plus the id when there is one. */
void rf__reply_open(rf__req_t *q, uint32_t n);
/* {id?, name, version}. */
void rf__reply_name_version(rf__req_t *q, const char *name, int64_t version);
void rf__reply_released(rf__req_t *q, const char *name, int64_t version, int32_t released);
void rf__reply_deleted(rf__req_t *q, const char *name);
void rf__reply_info(rf__req_t *q, const char *name, const rf__store_info_t *info);
/* The answer (rf_answer_to_doc's document, in the request's arena), plus
 * "cluster": {name, version, committed} when `cluster`. */
rf_status rf__reply_answer(rf__req_t *q, const rf_answer_t *answer, const char *cluster, int64_t version,
                           bool committed);
void rf__reply_ping(rf__req_t *q);
void rf__reply_stats(rf__req_t *q, const rf__lane_info_t *lanes);
/* The error reply for q->err (the writer reset first). */
void rf__reply_error(rf__req_t *q, rf_status code);
/* `busy`, with the id copied raw from the pre-scan (id_len 0: none). */
void rf__reply_busy(rf__mp_writer_t *w, const void *id, size_t id_len, const char *lane);

/* ------------------------------------------------------- handlers */

rf_status rf__op_solve(rf__req_t *q);
rf_status rf__op_put(rf__req_t *q);
rf_status rf__op_patch(rf__req_t *q);
rf_status rf__op_release(rf__req_t *q);
rf_status rf__op_info(rf__req_t *q);
rf_status rf__op_delete(rf__req_t *q);

#endif
