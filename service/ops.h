/* service/ops.h: what rackfitd does with one request, independent of the
 * transport: decode (service/codec.h), dispatch by "op" through one table,
 * execute (solves, the cluster store), encode exactly one reply
 * (service/reply.c); the rooms behind it are service/request.h's. The
 * server (service/server.c) feeds it bytes from ZeroMQ; the unit tests and
 * the fuzz target call it directly.
 *
 * Thread-safe: any number of workers may call rf__ops_handle at once. */
#ifndef RACKFIT_SERVICE_OPS_H
#define RACKFIT_SERVICE_OPS_H

#include <stdbool.h>
#include <stdint.h>

#include "codec.h"
#include "metrics.h"
#include "rackfit/cluster_cache.h"
#include "rackfit/problem.h"
#include "stats.h"

#define RF__PROTOCOL_VERSION 1

typedef struct {
    rf_limits_t limits;
    int64_t max_message_bytes;
    int64_t max_elements;      /* declared MessagePack elements per message; 0: the byte count */
    int64_t max_time_limit_ms; /* a solve's options.time_limit_ms may not exceed it (a lane is held that long) */
    int64_t commit_ttl_ms;     /* default commit expiry */
    int64_t max_commit_ttl_ms; /* the longest a request may ask for */
    int32_t max_clusters;
    int32_t max_commits;    /* per cluster */
    int32_t cluster_caches; /* solver caches kept per stored cluster (rackfit/cluster_cache.h); 0: none */
    rf_cluster_cache_limits_t cache_limits; /* each cache's classes and shapes */
    int32_t solver_threads;                 /* the server-wide budget; 0: the usable cores */
} rf__ops_config_t;

void rf__ops_config_default(rf__ops_config_t *cfg);

/* What the transport adds to `stats` replies and to the metrics. */
#define RF__MAX_LANES 4
typedef struct {
    int32_t lanes;
    const char *lane_name[RF__MAX_LANES];
    int32_t lane_threads[RF__MAX_LANES];
    int32_t lane_queue_cap[RF__MAX_LANES];
    int32_t lane_queue_len[RF__MAX_LANES];
    int64_t lane_queue_bytes[RF__MAX_LANES];
    int64_t lane_queue_cap_bytes[RF__MAX_LANES];
} rf__lane_info_t;

typedef struct rf__ops rf__ops_t;

rf__ops_t *rf__ops_new(const rf__ops_config_t *cfg);
void rf__ops_destroy(rf__ops_t **ops);

/* The class of a request from its pre-scan (no decoding): solves with
 * options.mode "greedy" and every other op are GREEDY/OTHER (the fast
 * lane); other solves SOLVER. */
rf__class_t rf__ops_classify(const rf__mp_scan_t *scan);

/* Handle one request of `len` bytes received at `received_ms` (rf_now_ms):
 * writes exactly one reply into `w` (reset first). `scanned`: the caller
 * already ran rf__mp_prescan on these bytes with this server's limits
 * (rf__ops_mp_limits), so it is not run again. */
void rf__ops_handle(rf__ops_t *ops, const void *msg, size_t len, bool scanned, double received_ms, rf__mp_writer_t *w);

/* The decoder limits of this server (for the transport's pre-scan). */
const rf__mp_limits_t *rf__ops_mp_limits(const rf__ops_t *ops);

/* The `busy` reply for a request the lane had no room for (the id echoed
 * from its pre-scan; scan NULL: none), counted in the statistics. `lane`:
 * 0 fast, 1 solver. */
void rf__ops_busy(rf__ops_t *ops, const void *msg, const rf__mp_scan_t *scan, int lane, const char *lane_name,
                  rf__mp_writer_t *w);
/* Count a request refused before it reached rf__ops_handle (bad frames). */
void rf__ops_note_error(rf__ops_t *ops, rf_status code);

void rf__ops_set_lane_info(rf__ops_t *ops, void (*fn)(void *arg, rf__lane_info_t *out), void *arg);
/* The solver-thread budget, for logs. */
int32_t rf__ops_budget(const rf__ops_t *ops);
/* The cores the process may use (rf_machine), for logs. */
int32_t rf__ops_cores(const rf__ops_t *ops);
/* The metrics registry (served at /metrics); lives as long as `ops`. */
rf__metrics_t *rf__ops_metrics(rf__ops_t *ops);

#endif
