/* service/ops.h: what rackfitd does with one request, independent of the
 * transport: decode (service/codec.h), dispatch by "op", execute (solves,
 * the cluster store), encode exactly one reply; plus the server-wide budget
 * of solver threads and the statistics. service/server.c feeds it bytes from
 * ZeroMQ; the unit tests and the fuzz target call it directly.
 *
 * Thread-safe: any number of workers may call rf__ops_handle at once. */
#ifndef RACKFIT_SERVICE_OPS_H
#define RACKFIT_SERVICE_OPS_H

#include <stdbool.h>
#include <stdint.h>

#include "codec.h"
#include "rackfit/problem.h"

#define RF__PROTOCOL_VERSION 1

/* Request classes, for lanes and statistics. */
typedef enum { RF__CLASS_GREEDY = 0, RF__CLASS_SOLVER, RF__CLASS_OTHER, RF__CLASS_COUNT } rf__class_t;

typedef struct {
    rf_limits_t limits;
    int64_t max_message_bytes;
    int64_t max_elements;      /* declared MessagePack elements per message; 0: the byte count */
    int64_t max_time_limit_ms; /* a solve's options.time_limit_ms may not exceed it (a lane is held that long) */
    int64_t commit_ttl_ms;     /* default commit expiry */
    int64_t max_commit_ttl_ms; /* the longest a request may ask for */
    int32_t max_clusters;
    int32_t max_commits;    /* per cluster */
    int32_t solver_threads; /* the server-wide budget; 0: the usable cores */
} rf__ops_config_t;

void rf__ops_config_default(rf__ops_config_t *cfg);

/* What the transport adds to `stats` replies. */
typedef struct {
    int32_t lanes;
    const char *lane_name[4];
    int32_t lane_threads[4];
    int32_t lane_queue_cap[4];
    int32_t lane_queue_len[4];
} rf__lane_info_t;

typedef struct rf__ops rf__ops_t;

rf__ops_t *rf__ops_new(const rf__ops_config_t *cfg);
void rf__ops_destroy(rf__ops_t **ops);

/* The class of a request from its pre-scan (no decoding): solves with
 * options.mode "greedy" and every other op are GREEDY/OTHER (the fast
 * lane); other solves SOLVER. */
rf__class_t rf__ops_classify(const rf__mp_scan_t *scan);

/* Handle one request of `len` bytes received at `received_ms` (rf_now_ms):
 * writes exactly one reply into `w` (reset first). */
void rf__ops_handle(rf__ops_t *ops, const void *msg, size_t len, double received_ms, rf__mp_writer_t *w);

/* The `busy` reply for a request the queue had no room for (the id echoed
 * from its pre-scan), counted in the statistics. */
void rf__ops_busy(rf__ops_t *ops, const void *msg, const rf__mp_scan_t *scan, const char *lane, rf__mp_writer_t *w);
/* Count a request refused before it reached rf__ops_handle (bad frames). */
void rf__ops_note_error(rf__ops_t *ops);

void rf__ops_set_lane_info(rf__ops_t *ops, void (*fn)(void *arg, rf__lane_info_t *out), void *arg);
/* The solver-thread budget (cores), for logs. */
int32_t rf__ops_budget(const rf__ops_t *ops);

#endif
