/* service/ops.c: one request in, one reply out (service/ops.h): the op
 * table, the dispatcher, and the ops' shared state (the store, the budget,
 * the statistics and their metrics).
 *
 * Invariants:
 * - rf__ops_handle writes exactly one reply on every path: the op's result,
 *   or {"id"?, "error": {code, message, path}} (codes: include/rackfit/status.h);
 * - every request is counted once (service/stats.h), by op and outcome;
 * - every request's memory (the decoded document, the problem, the answer)
 *   lives in the call and is freed before it returns. */
#include "ops.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "request.h"
#ifdef RF_HAVE_MACHINE
#include "rackfit/machine.h"
#endif

/* ----------------------------------------------------------- ping, stats */

static const char *const s_common[] = {"v", "op", "id", NULL};

static rf_status s_op_ping(rf__req_t *q)
{
    RF_CALL(rf__req_keys(q, s_common));
    rf__reply_ping(q);
    return RF_OK;
}

static rf_status s_op_stats(rf__req_t *q)
{
    RF_CALL(rf__req_keys(q, s_common));
    rf__lane_info_t lanes;
    memset(&lanes, 0, sizeof lanes);
    if (q->ops->lane_fn)
        q->ops->lane_fn(q->ops->lane_arg, &lanes);
    rf__reply_stats(q, &lanes);
    return RF_OK;
}

/* --------------------------------------------------------------- the table */

/* Indexed by rf__op_id_t; names in rf__op_names (stats.c). */
static rf_status (*const s_ops[RF__OP_COUNT])(rf__req_t *) = {
    [RF__OP_SOLVE] = rf__op_solve,
    [RF__OP_PING] = s_op_ping,
    [RF__OP_STATS] = s_op_stats,
    [RF__OP_CLUSTER_PUT] = rf__op_put,
    [RF__OP_CLUSTER_PATCH] = rf__op_patch,
    [RF__OP_CLUSTER_INFO] = rf__op_info,
    [RF__OP_CLUSTER_RELEASE] = rf__op_release,
    [RF__OP_CLUSTER_DELETE] = rf__op_delete,
};

/* -------------------------------------------------------------- metrics */

static void s_cluster_gauges(void *arg, const char *name, const rf__store_info_t *info)
{
    rf__stats_t *s = arg;
    rf__gauge_set(rf__metric_with(s->f_version, name), (double)info->version);
    rf__gauge_set(rf__metric_with(s->f_nodes, name), (double)info->nodes);
    rf__gauge_set(rf__metric_with(s->f_commits_open, name), (double)info->commits);
}

/* At each scrape: lanes, budget, uptime and the store's clusters (the
 * per-cluster families are refilled, so deleted clusters disappear). */
static void s_collect(void *arg, rf__metrics_t *m)
{
    (void)m;
    rf__ops_t *o = arg;
    rf__stats_t *s = &o->stats;
    rf__lane_info_t li;
    memset(&li, 0, sizeof li);
    if (o->lane_fn)
        o->lane_fn(o->lane_arg, &li);
    for (int l = 0; l < li.lanes; l++) {
        rf__gauge_set(rf__metric_with(s->f_queue_depth, li.lane_name[l]), li.lane_queue_len[l]);
        rf__gauge_set(rf__metric_with(s->f_queue_bytes, li.lane_name[l]), (double)li.lane_queue_bytes[l]);
        rf__gauge_set(rf__metric_with(s->f_queue_cap, li.lane_name[l]), li.lane_queue_cap[l]);
        rf__gauge_set(rf__metric_with(s->f_queue_cap_bytes, li.lane_name[l]), (double)li.lane_queue_cap_bytes[l]);
        rf__gauge_set(rf__metric_with(s->f_lane_workers, li.lane_name[l]), li.lane_threads[l]);
    }
    rf__gauge_set(rf__metric_series(s->f_budget, NULL), o->budget.total);
    rf__gauge_set(rf__metric_series(s->f_budget_used, NULL), rf__budget_in_use(&o->budget));
    rf__gauge_set(rf__metric_series(s->f_uptime, NULL), (rf_now_ms() - o->started_ms) / 1000.0);
    rf__metric_clear(s->f_version);
    rf__metric_clear(s->f_nodes);
    rf__metric_clear(s->f_commits_open);
    int64_t expired = 0;
    int32_t n = rf__store_each(o->store, rf_now_ms(), s_cluster_gauges, s, &expired);
    rf__gauge_set(rf__metric_series(s->f_clusters, NULL), n);
    rf__series_t *ex = rf__metric_series(s->f_commits_expired, NULL);
    rf__counter_add(ex, (double)expired - rf__series_value(ex));
}

/* ------------------------------------------------------------------ interface */

void rf__ops_config_default(rf__ops_config_t *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    rf_limits_default(&cfg->limits);
    cfg->limits.max_depth = RF__MP_MAX_DEPTH;
    cfg->max_message_bytes = 64 * 1024 * 1024;
    cfg->limits.max_input_bytes = cfg->max_message_bytes;
    /* Decoding costs ~50-75 bytes per declared element (msgpack-c's objects
     * plus our document), so a budget by bytes alone would let one 64 MiB
     * message of empty arrays cost gigabytes. 4,000,000 holds a cluster of
     * max_nodes (100,000) nodes of ~30 elements each, plus its gangs, for
     * at most ~300 MB: docs/operating-rackfitd.md, "Limits". */
    cfg->max_elements = 4000000;
    cfg->max_time_limit_ms = 60000;
    cfg->commit_ttl_ms = 30000;
    cfg->max_commit_ttl_ms = 600000;
    cfg->max_clusters = 64;
    cfg->max_commits = 100000;
    cfg->cluster_caches = RF__STORE_CACHES;
    rf_cluster_cache_limits_default(&cfg->cache_limits);
    cfg->solver_threads = 0;
}

static int32_t s_usable_cores(void)
{
#ifdef RF_HAVE_MACHINE
    return rf_machine()->usable;
#else
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int32_t)n : 1;
#endif
}

rf__ops_t *rf__ops_new(const rf__ops_config_t *cfg)
{
    rf__ops_t *o = calloc(1, sizeof *o);
    if (!o)
        return NULL;
    o->cfg = *cfg;
    rf__mp_limits_from(&o->mp, &cfg->limits);
    o->mp.max_bytes = cfg->max_message_bytes;
    o->mp.max_elements = cfg->max_elements;
    o->cores = s_usable_cores();
    if (o->cfg.solver_threads <= 0)
        o->cfg.solver_threads = o->cores;
    o->started_ms = rf_now_ms();
    o->store = rf__store_new(cfg->max_clusters, cfg->max_commits);
    if (o->store)
        rf__store_set_caches(o->store, cfg->cluster_caches, &cfg->cache_limits);
    bool budget = o->store && rf__budget_init(&o->budget, o->cfg.solver_threads) == 0;
    bool stats = budget && rf__stats_init(&o->stats) == 0;
    if (!stats || rf__metrics_on_collect(o->stats.m, s_collect, o) != 0) {
        if (stats)
            rf__stats_fini(&o->stats);
        if (budget)
            rf__budget_fini(&o->budget);
        rf__store_destroy(&o->store);
        free(o);
        return NULL;
    }
    return o;
}

void rf__ops_destroy(rf__ops_t **ops)
{
    if (!ops || !*ops)
        return;
    rf__ops_t *o = *ops;
    rf__store_destroy(&o->store);
    rf__budget_fini(&o->budget);
    rf__stats_fini(&o->stats);
    free(o);
    *ops = NULL;
}

void rf__ops_set_lane_info(rf__ops_t *ops, void (*fn)(void *arg, rf__lane_info_t *out), void *arg)
{
    ops->lane_fn = fn;
    ops->lane_arg = arg;
}

int32_t rf__ops_budget(const rf__ops_t *ops)
{
    return ops->cfg.solver_threads;
}

int32_t rf__ops_cores(const rf__ops_t *ops)
{
    return ops->cores;
}

rf__metrics_t *rf__ops_metrics(rf__ops_t *ops)
{
    return ops->stats.m;
}

const rf__mp_limits_t *rf__ops_mp_limits(const rf__ops_t *ops)
{
    return &ops->mp;
}

rf__class_t rf__ops_classify(const rf__mp_scan_t *scan)
{
    if (scan->op[0] && strcmp(scan->op, "solve") != 0)
        return RF__CLASS_OTHER;
    return strcmp(scan->mode, "greedy") == 0 ? RF__CLASS_GREEDY : RF__CLASS_SOLVER;
}

void rf__ops_handle(rf__ops_t *ops, const void *msg, size_t len, bool scanned, double received_ms, rf__mp_writer_t *w)
{
    rf__req_t q = {.ops = ops, .w = w, .cls = RF__CLASS_OTHER, .op = RF__OP_UNKNOWN, .received_ms = received_ms};
    rf_error_clear(&q.err);
    rf__mp_writer_reset(w);
    rf_status rc;
    q.arena = rf__arena_new(0);
    if (!q.arena)
        rc = rf_error_set(&q.err, RF_ENOMEM, "", "out of memory");
    else if ((rc = rf__req_envelope(&q, msg, len, scanned)) == RF_OK)
        rc = s_ops[q.op](&q);
    if (rc == RF_OK && !rf__mp_writer_ok(w))
        rc = rf_error_set(&q.err, RF_ENOMEM, "", "out of memory writing the reply");
    if (rc != RF_OK)
        rf__reply_error(&q, rc);
    rf__arena_destroy(&q.arena);
    rf__stats_request(&ops->stats, q.op, q.cls, rc, rf_now_ms() - received_ms);
}

void rf__ops_busy(rf__ops_t *ops, const void *msg, const rf__mp_scan_t *scan, int lane, const char *lane_name,
                  rf__mp_writer_t *w)
{
    bool id = scan && scan->id_len;
    rf__reply_busy(w, id ? (const char *)msg + scan->id_off : NULL, id ? scan->id_len : 0, lane_name);
    rf__stats_busy(&ops->stats, lane);
}

void rf__ops_note_error(rf__ops_t *ops, rf_status code)
{
    rf__stats_refused(&ops->stats, code);
}
