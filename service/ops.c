/* service/ops.c: one request in, one reply out (service/ops.h).
 *
 * Invariants:
 * - rf__ops_handle writes exactly one reply on every path: the op's result,
 *   or {"id"?, "error": {code, message, path}} (codes: include/rackfit/status.h);
 * - every request's memory (the decoded document, the problem, the answer)
 *   lives in the call and is freed before it returns; a stored cluster's
 *   snapshot is held (refcounted) while a solve reads it;
 * - solver threads come from one budget of `cores` for the whole server: a
 *   solve takes what it needs (at least one, at most what is free) before it
 *   runs and gives it back after, so OpenMP teams never add up to more
 *   threads than cores;
 * - statistics are counters and latency histograms in atomics, never
 *   locked on the request path. */
#include "ops.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "arena.h"
#include "doc.h"
#include "problem_read.h"
#include "rackfit/rackfit.h"
#include "store.h"
#ifdef RF_HAVE_MACHINE
#include "rackfit/machine.h"
#endif

/* --------------------------------------------------------- data structures */

/* Latency histogram: 8 buckets per power of two of microseconds. */
#define S_HIST_SUB 8
#define S_HIST_N   (40 * S_HIST_SUB)

typedef struct {
    atomic_uint_least64_t count;
    atomic_uint_least64_t errors;
    atomic_uint_least64_t hist[S_HIST_N];
    atomic_uint_least64_t max_us;
} s_class_stats_t;

static const char *const s_class_names[RF__CLASS_COUNT] = {"greedy", "solver", "other"};

static const char *const s_ops[] = {"solve",           "ping",           "stats",
                                    "cluster.put",     "cluster.patch",  "cluster.info",
                                    "cluster.release", "cluster.delete", NULL};

struct rf__ops {
    rf__ops_config_t cfg;
    rf__mp_limits_t mp;
    rf__store_t *store;
    double started_ms;
    int32_t cores;
    /* the solver-thread budget */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int32_t free_threads;
    int32_t solver_used; /* held by solves that are not greedy */
    /* statistics */
    atomic_uint_least64_t requests;
    atomic_uint_least64_t errors;
    atomic_uint_least64_t busy;
    atomic_uint_least64_t commits;
    atomic_uint_least64_t commit_retries;
    atomic_uint_least64_t by_op[8];
    s_class_stats_t cls[RF__CLASS_COUNT];
    void (*lane_fn)(void *, rf__lane_info_t *);
    void *lane_arg;
};

/* One request in flight. */
typedef struct {
    rf__ops_t *ops;
    rf__arena_t *arena;
    const rf_doc_t *root;
    const rf_doc_t *id;
    rf__mp_writer_t *w;
    rf_error_t err;
    rf__class_t cls;
    double received_ms;
} s_req_t;

/* ------------------------------------------------------------- local methods */

static int32_t s_usable_cores(void)
{
#ifdef RF_HAVE_MACHINE
    return rf_machine()->usable;
#else
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int32_t)n : 1;
#endif
}

static void s_hist_add(s_class_stats_t *c, double ms)
{
    double us = ms * 1000.0;
    if (us < 1)
        us = 1;
    uint64_t u = (uint64_t)us;
    int p = 63 - __builtin_clzll(u); /* 2^p <= u */
    int sub = p >= 3 ? (int)((u >> (p - 3)) & 7) : (int)((u << (3 - p)) & 7);
    int b = p * S_HIST_SUB + sub;
    if (b >= S_HIST_N)
        b = S_HIST_N - 1;
    atomic_fetch_add(&c->hist[b], 1);
    uint64_t prev = atomic_load(&c->max_us);
    while (u > prev && !atomic_compare_exchange_weak(&c->max_us, &prev, u))
        ;
}

/* The upper edge of bucket b, in ms. */
static double s_hist_edge(int b)
{
    int p = b / S_HIST_SUB, sub = b % S_HIST_SUB;
    double base = (double)(1ULL << p);
    return base * (1.0 + (sub + 1) / 8.0) / 1000.0;
}

static double s_percentile_raw(s_class_stats_t *c, double q);

/* A percentile, never above the largest latency seen. */
static double s_percentile(s_class_stats_t *c, double q)
{
    double v = s_percentile_raw(c, q), mx = (double)atomic_load(&c->max_us) / 1000.0;
    return v < mx ? v : mx;
}

static double s_percentile_raw(s_class_stats_t *c, double q)
{
    uint64_t total = 0;
    uint64_t h[S_HIST_N];
    for (int b = 0; b < S_HIST_N; b++)
        total += (h[b] = atomic_load(&c->hist[b]));
    if (total == 0)
        return 0;
    uint64_t want = (uint64_t)(q * (double)total);
    if (want >= total)
        want = total - 1;
    uint64_t seen = 0;
    for (int b = 0; b < S_HIST_N; b++) {
        seen += h[b];
        if (seen > want)
            return s_hist_edge(b);
    }
    return s_hist_edge(S_HIST_N - 1);
}

/* Take solver threads: at least one, at most `want`. Solver-lane solves
 * together hold at most budget - 1 (when the budget is 2 or more), so that
 * one thread is always left for the fast lane's greedy solves. */
static int32_t s_budget_take(rf__ops_t *o, int32_t want, bool solver_lane)
{
    int32_t B = o->cfg.solver_threads;
    int32_t limit = solver_lane && B > 1 ? B - 1 : B;
    if (want < 1)
        want = 1;
    pthread_mutex_lock(&o->mu);
    while (o->free_threads < 1 || (solver_lane && o->solver_used >= limit))
        pthread_cond_wait(&o->cv, &o->mu);
    int32_t room = solver_lane ? limit - o->solver_used : o->free_threads;
    int32_t got = want < o->free_threads ? want : o->free_threads;
    if (got > room)
        got = room;
    o->free_threads -= got;
    if (solver_lane)
        o->solver_used += got;
    pthread_mutex_unlock(&o->mu);
    return got;
}

static void s_budget_give(rf__ops_t *o, int32_t n, bool solver_lane)
{
    pthread_mutex_lock(&o->mu);
    o->free_threads += n;
    if (solver_lane)
        o->solver_used -= n;
    pthread_cond_broadcast(&o->cv);
    pthread_mutex_unlock(&o->mu);
}

static rf_status s_fail(s_req_t *q, rf_status code, const char *path, const char *fmt, const char *arg)
{
    return rf_error_set(&q->err, code, path, fmt, arg);
}

static bool s_in(const char *key, const char *const *list)
{
    for (; list && *list; list++)
        if (strcmp(key, *list) == 0)
            return true;
    return false;
}

/* Every key of the top-level map is in `allowed`. */
static rf_status s_keys(s_req_t *q, const char *const *allowed)
{
    for (uint32_t i = 0; i < q->root->len; i++) {
        const char *k = q->root->u.pairs[i].key;
        /* "op\0x" is not "op": a key with a NUL byte is never a known one. */
        if (strlen(k) != q->root->u.pairs[i].key_len || !s_in(k, allowed)) {
            char path[RF_ERROR_PATH_MAX];
            path[0] = '\0';
            rf__path_key(path, 0, sizeof path, k);
            return rf_error_set(&q->err, RF_ESCHEMA, path,
                                strlen(k) != q->root->u.pairs[i].key_len ? "unknown key (it has a NUL byte)"
                                                                         : "unknown key");
        }
    }
    return RF_OK;
}

static const rf_doc_t *s_get(const rf_doc_t *map, const char *key)
{
    const rf_doc_t *v = rf__doc_get(map, key);
    return v && v->type != RF_DOC_NULL ? v : NULL;
}

static rf_status s_need_str(s_req_t *q, const char *key, const char **out)
{
    const rf_doc_t *v = s_get(q->root, key);
    if (!v)
        return s_fail(q, RF_ESCHEMA, key, "%s", "is required");
    if (v->type != RF_DOC_STR)
        return s_fail(q, RF_ESCHEMA, key, "must be a string, not %s", rf__doc_type_name(v->type));
    if (v->len == 0 || strlen(v->u.s) != v->len)
        return s_fail(q, RF_ESCHEMA, key, "%s", "must be a non-empty string without NUL bytes");
    *out = v->u.s;
    return RF_OK;
}

/* An optional integer in [lo, hi]; *out keeps its value when absent. */
static rf_status s_opt_int(s_req_t *q, const char *key, int64_t lo, int64_t hi, int64_t *out)
{
    const rf_doc_t *v = s_get(q->root, key);
    if (!v)
        return RF_OK;
    if (v->type != RF_DOC_INT)
        return s_fail(q, RF_ESCHEMA, key, "must be an integer, not %s", rf__doc_type_name(v->type));
    if (v->u.i < lo || v->u.i > hi)
        return rf_error_set(&q->err, RF_ESCHEMA, key, "must be from %lld to %lld", (long long)lo, (long long)hi);
    *out = v->u.i;
    return RF_OK;
}

/* A list of non-empty strings (gang or node names). */
static rf_status s_names(s_req_t *q, const rf_doc_t *v, const char *key, const char ***out, int32_t *n)
{
    char path[RF_ERROR_PATH_MAX];
    if (v->type != RF_DOC_ARRAY)
        return s_fail(q, RF_ESCHEMA, key, "must be an array of strings, not %s", rf__doc_type_name(v->type));
    const char **names = rf__arena_alloc(q->arena, ((size_t)v->len + 1) * sizeof *names);
    if (!names)
        return s_fail(q, RF_ENOMEM, "", "%s", "out of memory");
    for (uint32_t i = 0; i < v->len; i++) {
        const rf_doc_t *x = &v->u.items[i];
        if (x->type != RF_DOC_STR || x->len == 0 || strlen(x->u.s) != x->len) {
            snprintf(path, sizeof path, "%s[%u]", key, (unsigned)i);
            return rf_error_set(&q->err, RF_ESCHEMA, path, "must be a non-empty string");
        }
        names[i] = x->u.s;
    }
    *out = names;
    *n = (int32_t)v->len;
    return RF_OK;
}

/* Open a reply map of `n` pairs of our own, plus the id when there is one. */
static void s_reply_open(s_req_t *q, uint32_t n)
{
    rf__mp_map(q->w, n + (q->id ? 1 : 0));
    if (q->id) {
        rf__mp_key(q->w, "id");
        rf__mp_doc(q->w, q->id);
    }
}

/* ------------------------------------------------------------------- ops */

static const char *const s_common[] = {"v", "op", "id", NULL};

static rf_status s_op_ping(s_req_t *q)
{
    RF_CALL(s_keys(q, s_common));
    s_reply_open(q, 3);
    rf__mp_key(q->w, "v");
    rf__mp_int(q->w, RF__PROTOCOL_VERSION);
    rf__mp_key(q->w, "ops");
    int n = 0;
    while (s_ops[n])
        n++;
    rf__mp_array(q->w, (uint32_t)n);
    for (int i = 0; i < n; i++)
        rf__mp_str(q->w, s_ops[i]);
    rf__mp_key(q->w, "server");
    rf__mp_str(q->w, "rackfitd " RACKFIT_VERSION);
    return RF_OK;
}

static rf_status s_op_stats(s_req_t *q)
{
    rf__ops_t *o = q->ops;
    RF_CALL(s_keys(q, s_common));
    rf__lane_info_t lanes;
    memset(&lanes, 0, sizeof lanes);
    if (o->lane_fn)
        o->lane_fn(o->lane_arg, &lanes);
    s_reply_open(q, 11);
    rf__mp_key(q->w, "commit_retries");
    rf__mp_int(q->w, (int64_t)atomic_load(&o->commit_retries));
    rf__mp_key(q->w, "uptime_s");
    rf__mp_double(q->w, (rf_now_ms() - o->started_ms) / 1000.0);
    rf__mp_key(q->w, "cores");
    rf__mp_int(q->w, o->cores);
    rf__mp_key(q->w, "solver_threads");
    rf__mp_int(q->w, o->cfg.solver_threads);
    rf__mp_key(q->w, "requests");
    rf__mp_int(q->w, (int64_t)atomic_load(&o->requests));
    rf__mp_key(q->w, "errors");
    rf__mp_int(q->w, (int64_t)atomic_load(&o->errors));
    rf__mp_key(q->w, "busy");
    rf__mp_int(q->w, (int64_t)atomic_load(&o->busy));
    rf__mp_key(q->w, "commits");
    rf__mp_int(q->w, (int64_t)atomic_load(&o->commits));
    rf__mp_key(q->w, "clusters");
    rf__mp_int(q->w, rf__store_count(o->store));
    rf__mp_key(q->w, "by_mode");
    rf__mp_map(q->w, RF__CLASS_COUNT);
    for (int c = 0; c < RF__CLASS_COUNT; c++) {
        s_class_stats_t *cs = &o->cls[c];
        rf__mp_key(q->w, s_class_names[c]);
        rf__mp_map(q->w, 6);
        rf__mp_key(q->w, "requests");
        rf__mp_int(q->w, (int64_t)atomic_load(&cs->count));
        rf__mp_key(q->w, "errors");
        rf__mp_int(q->w, (int64_t)atomic_load(&cs->errors));
        rf__mp_key(q->w, "p50_ms");
        rf__mp_double(q->w, s_percentile(cs, 0.50));
        rf__mp_key(q->w, "p90_ms");
        rf__mp_double(q->w, s_percentile(cs, 0.90));
        rf__mp_key(q->w, "p99_ms");
        rf__mp_double(q->w, s_percentile(cs, 0.99));
        rf__mp_key(q->w, "max_ms");
        rf__mp_double(q->w, (double)atomic_load(&cs->max_us) / 1000.0);
    }
    rf__mp_key(q->w, "lanes");
    rf__mp_map(q->w, (uint32_t)lanes.lanes);
    for (int l = 0; l < lanes.lanes; l++) {
        rf__mp_key(q->w, lanes.lane_name[l]);
        rf__mp_map(q->w, 3);
        rf__mp_key(q->w, "threads");
        rf__mp_int(q->w, lanes.lane_threads[l]);
        rf__mp_key(q->w, "queue_cap");
        rf__mp_int(q->w, lanes.lane_queue_cap[l]);
        rf__mp_key(q->w, "queue_len");
        rf__mp_int(q->w, lanes.lane_queue_len[l]);
    }
    return RF_OK;
}

static const char *const s_solve_inline_extra[] = {"v", "op", "id", NULL};
static const char *const s_solve_stored_extra[] = {
    "v", "op", "id", "cluster_name", "cluster_version", "commit", "commit_ttl_ms", NULL};

#define S_COMMIT_TRIES 4

/* Read the request's problem (on the stored cluster's current snapshot when
 * `cname`), solve it, and commit its placements when asked. The caller
 * frees *snap, *problem and *answer, also after an error. */
static rf_status s_solve_once(s_req_t *q, const char *cname, int64_t cversion, bool commit, int64_t ttl,
                              rf__snapshot_t **snap, rf_problem_t **problem, rf_answer_t **answer, int64_t *new_version)
{
    rf__ops_t *o = q->ops;
    rf_status rc;
    if (cname) {
        RF_CALL(rf__store_acquire(o->store, cname, cversion, rf_now_ms(), snap, &q->err));
        RF_CALL(
            rf__problem_from_doc_on(q->root, s_solve_stored_extra, (*snap)->problem, &o->cfg.limits, problem, &q->err));
    } else {
        RF_CALL(rf__problem_from_doc(q->root, s_solve_inline_extra, &o->cfg.limits, problem, &q->err));
    }
    rf_problem_t *p = *problem;
    if (o->cfg.max_time_limit_ms > 0 && p->options.time_limit_ms > o->cfg.max_time_limit_ms)
        return rf_error_set(&q->err, RF_ELIMIT, "options.time_limit_ms",
                            "%lld ms is above the server's max_time_limit_ms (%lld): a solve holds a solver thread "
                            "that long",
                            (long long)p->options.time_limit_ms, (long long)o->cfg.max_time_limit_ms);
    q->cls = p->options.mode == RF_MODE_GREEDY ? RF__CLASS_GREEDY : RF__CLASS_SOLVER;

    rf_solve_opts_t opts;
    rf_solve_opts_default(&opts);
    opts.start_ms = q->received_ms;
    int32_t want = p->options.mode == RF_MODE_GREEDY ? 1 : p->options.threads;
#ifdef RF_HAVE_MACHINE
    want = rf_machine_threads(want);
#else
    if (want <= 0 || want > o->cores)
        want = o->cores;
#endif
    bool solver_lane = q->cls == RF__CLASS_SOLVER;
    int32_t got = s_budget_take(o, want, solver_lane);
    opts.threads = got;
    rc = rf_solve(p, &opts, answer, &q->err);
    s_budget_give(o, got, solver_lane);
    if (rc != RF_OK)
        return rc;
    if (commit)
        return rf__store_commit(o->store, *snap, p, *answer, ttl, rf_now_ms(), new_version, &q->err);
    if (*snap)
        *new_version = (*snap)->version;
    return RF_OK;
}

static rf_status s_op_solve(s_req_t *q)
{
    rf__ops_t *o = q->ops;
    rf_problem_t *problem = NULL;
    rf_answer_t *answer = NULL;
    rf__snapshot_t *snap = NULL;
    rf_status rc;
    const char *cname = NULL;
    int64_t cversion = -1, ttl = o->cfg.commit_ttl_ms, new_version = -1;
    bool commit = false;
    const rf_doc_t *x;

    if (s_get(q->root, "cluster_name")) {
        if ((rc = s_need_str(q, "cluster_name", &cname)) != RF_OK)
            goto done;
        if (rf__doc_get(q->root, "cluster")) {
            rc = s_fail(q, RF_ESCHEMA, "cluster", "%s", "must not be given with cluster_name");
            goto done;
        }
        if ((rc = s_opt_int(q, "cluster_version", 1, INT64_MAX, &cversion)) != RF_OK)
            goto done;
        if ((x = s_get(q->root, "commit"))) {
            if (x->type != RF_DOC_BOOL) {
                rc = s_fail(q, RF_ESCHEMA, "commit", "must be a boolean, not %s", rf__doc_type_name(x->type));
                goto done;
            }
            commit = x->u.b;
        }
        if ((rc = s_opt_int(q, "commit_ttl_ms", 1, o->cfg.max_commit_ttl_ms, &ttl)) != RF_OK)
            goto done;
    }
    /* A commit that raced other commits (the capacity its answer used is
     * gone) is solved again on the new version, up to S_COMMIT_TRIES times,
     * unless the client pinned cluster_version. */
    for (int attempt = 0;; attempt++) {
        rc = s_solve_once(q, cname, cversion, commit, ttl, &snap, &problem, &answer, &new_version);
        if (!(rc == RF_ESTALE && commit && cversion < 0 && attempt + 1 < S_COMMIT_TRIES && answer))
            break;
        atomic_fetch_add(&o->commit_retries, 1);
        rf_answer_destroy(&answer);
        rf_problem_destroy(&problem);
        rf__store_unref(o->store, &snap);
        rf_error_clear(&q->err);
    }
    if (rc != RF_OK)
        goto done;
    if (commit)
        atomic_fetch_add(&o->commits, 1);
    s_reply_open(q, RF__MP_ANSWER_PAIRS + (snap ? 1 : 0));
    rf__mp_answer_pairs(q->w, answer);
    if (snap) {
        rf__mp_key(q->w, "cluster");
        rf__mp_map(q->w, 3);
        rf__mp_key(q->w, "name");
        rf__mp_str(q->w, cname);
        rf__mp_key(q->w, "version");
        rf__mp_int(q->w, new_version);
        rf__mp_key(q->w, "committed");
        rf__mp_bool(q->w, commit);
    }
done:
    rf_answer_destroy(&answer);
    rf_problem_destroy(&problem);
    rf__store_unref(o->store, &snap);
    return rc;
}

/* A document {"cluster": {"levels": levels, "nodes": nodes}, "gangs": []}
 * in the request's arena, so that nodes of a patch are read by the one
 * schema reader. */
static rf_doc_t *s_cluster_doc(s_req_t *q, const rf_problem_t *like, const rf_doc_t *nodes)
{
    rf__arena_t *a = q->arena;
    rf_doc_t *root = rf__arena_alloc(a, sizeof *root);
    rf_doc_kv_t *top = rf__arena_alloc(a, 2 * sizeof *top);
    rf_doc_kv_t *cl = rf__arena_alloc(a, 2 * sizeof *cl);
    rf_doc_t *levels = rf__arena_alloc(a, ((size_t)like->n_levels + 1) * sizeof *levels);
    if (!root || !top || !cl || !levels)
        return NULL;
    for (int32_t l = 0; l < like->n_levels; l++)
        levels[l] = (rf_doc_t){
            .type = RF_DOC_STR, .len = (uint32_t)strlen(like->levels[l]), .offset = -1, .u.s = like->levels[l]};
    cl[0] = (rf_doc_kv_t){
        .key = "levels",
        .key_len = 6,
        .value = {.type = RF_DOC_ARRAY, .len = (uint32_t)like->n_levels, .offset = -1, .u.items = levels}};
    cl[1] = (rf_doc_kv_t){.key = "nodes", .key_len = 5, .value = *nodes};
    top[0] = (rf_doc_kv_t){
        .key = "cluster", .key_len = 7, .value = {.type = RF_DOC_MAP, .len = 2, .offset = -1, .u.pairs = cl}};
    top[1] = (rf_doc_kv_t){
        .key = "gangs", .key_len = 5, .value = {.type = RF_DOC_ARRAY, .len = 0, .offset = -1, .u.items = levels}};
    *root = (rf_doc_t){.type = RF_DOC_MAP, .len = 2, .offset = -1, .u.pairs = top};
    return root;
}

/* Rewrite an error path "cluster.nodes<rest>" as "<prefix><rest>" (and a
 * trailing ".name" as ".node" when `name_is_node`). */
static void s_repath(rf_error_t *err, const char *prefix, bool name_is_node)
{
    const char *head = "cluster.nodes";
    size_t hn = strlen(head);
    if (strncmp(err->path, head, hn) != 0)
        return;
    char rest[RF_ERROR_PATH_MAX];
    snprintf(rest, sizeof rest, "%s", err->path + hn);
    size_t rn = strlen(rest);
    if (name_is_node && rn >= 5 && strcmp(rest + rn - 5, ".name") == 0)
        memcpy(rest + rn - 5, ".node", 5);
    snprintf(err->path, sizeof err->path, "%s%s", prefix, rest);
}

static const char *const s_put_keys[] = {"v", "op", "id", "name", "version", "cluster", NULL};

static rf_status s_op_put(s_req_t *q)
{
    rf__ops_t *o = q->ops;
    const char *name = NULL;
    int64_t version = -1, new_version = 0;
    RF_CALL(s_keys(q, s_put_keys));
    RF_CALL(s_need_str(q, "name", &name));
    RF_CALL(s_opt_int(q, "version", 0, INT64_MAX, &version));
    const rf_doc_t *cl = s_get(q->root, "cluster");
    if (!cl)
        return s_fail(q, RF_ESCHEMA, "cluster", "%s", "is required");
    /* {"cluster": cl, "gangs": []}: the one reader, paths unchanged. */
    rf_doc_kv_t *top = rf__arena_alloc(q->arena, 2 * sizeof *top);
    if (!top)
        return s_fail(q, RF_ENOMEM, "", "%s", "out of memory");
    top[0] = (rf_doc_kv_t){.key = "cluster", .key_len = 7, .value = *cl};
    top[1] = (rf_doc_kv_t){.key = "gangs", .key_len = 5, .value = {.type = RF_DOC_ARRAY, .len = 0, .offset = -1}};
    rf_doc_t root = {.type = RF_DOC_MAP, .len = 2, .offset = -1, .u.pairs = top};
    rf_problem_t *p = NULL;
    RF_CALL(rf__problem_from_doc(&root, NULL, &o->cfg.limits, &p, &q->err));
    RF_CALL(rf__store_put(o->store, name, p, version, rf_now_ms(), &new_version, &q->err));
    s_reply_open(q, 2);
    rf__mp_key(q->w, "name");
    rf__mp_str(q->w, name);
    rf__mp_key(q->w, "version");
    rf__mp_int(q->w, new_version);
    return RF_OK;
}

static const char *const s_patch_keys[] = {"v", "op", "id", "name", "version", "remove", "upsert", "used", NULL};
static const char *const s_used_keys[] = {"node", "used", "includes", NULL};

static rf_status s_op_patch(s_req_t *q)
{
    rf__ops_t *o = q->ops;
    const char *name = NULL;
    int64_t version = -1, new_version = 0;
    rf__snapshot_t *snap = NULL;
    rf_problem_t *up = NULL, *us = NULL;
    rf__patch_t patch;
    memset(&patch, 0, sizeof patch);
    rf_status rc;
    const rf_doc_t *x;
    char path[RF_ERROR_PATH_MAX];

    RF_CALL(s_keys(q, s_patch_keys));
    RF_CALL(s_need_str(q, "name", &name));
    if (!s_get(q->root, "version"))
        return s_fail(q, RF_ESCHEMA, "version", "%s", "is required (compare-and-swap)");
    RF_CALL(s_opt_int(q, "version", 1, INT64_MAX, &version));
    if ((x = s_get(q->root, "remove")))
        RF_CALL(s_names(q, x, "remove", (const char ***)&patch.remove, &patch.n_remove));
    RF_CALL(rf__store_acquire(o->store, name, version, rf_now_ms(), &snap, &q->err));

    if ((x = s_get(q->root, "upsert"))) {
        rf_doc_t *doc = x->type == RF_DOC_ARRAY ? s_cluster_doc(q, snap->problem, x) : NULL;
        if (x->type != RF_DOC_ARRAY)
            rc = s_fail(q, RF_ESCHEMA, "upsert", "must be an array of nodes, not %s", rf__doc_type_name(x->type));
        else if (!doc)
            rc = s_fail(q, RF_ENOMEM, "", "%s", "out of memory");
        else if ((rc = rf__problem_from_doc(doc, NULL, &o->cfg.limits, &up, &q->err)) != RF_OK)
            s_repath(&q->err, "upsert", false);
        if (rc != RF_OK)
            goto done;
        patch.upsert = up;
    }
    if ((x = s_get(q->root, "used"))) {
        if (x->type != RF_DOC_ARRAY) {
            rc = s_fail(q, RF_ESCHEMA, "used", "must be an array, not %s", rf__doc_type_name(x->type));
            goto done;
        }
        /* [{node, used, includes?}] -> nodes [{name, used}] and the includes. */
        rf_doc_t *nodes = rf__arena_alloc(q->arena, ((size_t)x->len + 1) * sizeof *nodes);
        rf__includes_t *inc = rf__arena_alloc(q->arena, ((size_t)x->len + 1) * sizeof *inc);
        if (!nodes || !inc) {
            rc = s_fail(q, RF_ENOMEM, "", "%s", "out of memory");
            goto done;
        }
        for (uint32_t i = 0; i < x->len; i++) {
            const rf_doc_t *e = &x->u.items[i];
            snprintf(path, sizeof path, "used[%u]", (unsigned)i);
            if (e->type != RF_DOC_MAP) {
                rc = rf_error_set(&q->err, RF_ESCHEMA, path, "must be a map {node, used, includes}, not %s",
                                  rf__doc_type_name(e->type));
                goto done;
            }
            for (uint32_t k = 0; k < e->len; k++)
                if (!s_in(e->u.pairs[k].key, s_used_keys)) {
                    rf__path_key(path, (int)strlen(path), sizeof path, e->u.pairs[k].key);
                    rc = rf_error_set(&q->err, RF_ESCHEMA, path, "unknown key");
                    goto done;
                }
            const rf_doc_t *nd = s_get(e, "node"), *u = s_get(e, "used"), *in = s_get(e, "includes");
            if (!nd || !u) {
                rc = rf_error_set(&q->err, RF_ESCHEMA, path, "needs node and used");
                goto done;
            }
            rf_doc_kv_t *kv = rf__arena_alloc(q->arena, 2 * sizeof *kv);
            if (!kv) {
                rc = s_fail(q, RF_ENOMEM, "", "%s", "out of memory");
                goto done;
            }
            kv[0] = (rf_doc_kv_t){.key = "name", .key_len = 4, .value = *nd};
            kv[1] = (rf_doc_kv_t){.key = "used", .key_len = 4, .value = *u};
            nodes[i] = (rf_doc_t){.type = RF_DOC_MAP, .len = 2, .offset = -1, .u.pairs = kv};
            inc[i].n = 0;
            inc[i].gangs = NULL;
            if (in) {
                snprintf(path, sizeof path, "used[%u].includes", (unsigned)i);
                if ((rc = s_names(q, in, path, &inc[i].gangs, &inc[i].n)) != RF_OK)
                    goto done;
            }
        }
        rf_doc_t arr = {.type = RF_DOC_ARRAY, .len = x->len, .offset = -1, .u.items = nodes};
        rf_doc_t *doc = s_cluster_doc(q, snap->problem, &arr);
        if (!doc) {
            rc = s_fail(q, RF_ENOMEM, "", "%s", "out of memory");
            goto done;
        }
        if ((rc = rf__problem_from_doc(doc, NULL, &o->cfg.limits, &us, &q->err)) != RF_OK) {
            s_repath(&q->err, "used", true);
            goto done;
        }
        patch.used = us;
        patch.includes = inc;
    }
    rc = rf__store_patch(o->store, name, version, &patch, &o->cfg.limits, rf_now_ms(), &new_version, &q->err);
    if (rc == RF_OK) {
        s_reply_open(q, 2);
        rf__mp_key(q->w, "name");
        rf__mp_str(q->w, name);
        rf__mp_key(q->w, "version");
        rf__mp_int(q->w, new_version);
    }
done:
    rf_problem_destroy(&up);
    rf_problem_destroy(&us);
    rf__store_unref(o->store, &snap);
    return rc;
}

static const char *const s_release_keys[] = {"v", "op", "id", "name", "version", "gangs", NULL};

static rf_status s_op_release(s_req_t *q)
{
    const char *name = NULL;
    const char **gangs = NULL;
    int32_t n = 0, released = 0;
    int64_t version = -1, new_version = 0;
    RF_CALL(s_keys(q, s_release_keys));
    RF_CALL(s_need_str(q, "name", &name));
    RF_CALL(s_opt_int(q, "version", 1, INT64_MAX, &version));
    const rf_doc_t *x = s_get(q->root, "gangs");
    if (!x)
        return s_fail(q, RF_ESCHEMA, "gangs", "%s", "is required");
    RF_CALL(s_names(q, x, "gangs", &gangs, &n));
    RF_CALL(rf__store_release(q->ops->store, name, version, gangs, n, rf_now_ms(), &new_version, &released, &q->err));
    s_reply_open(q, 3);
    rf__mp_key(q->w, "name");
    rf__mp_str(q->w, name);
    rf__mp_key(q->w, "version");
    rf__mp_int(q->w, new_version);
    rf__mp_key(q->w, "released");
    rf__mp_int(q->w, released);
    return RF_OK;
}

static const char *const s_info_keys[] = {"v", "op", "id", "name", NULL};
static const char *const s_delete_keys[] = {"v", "op", "id", "name", "version", NULL};

static rf_status s_op_info(s_req_t *q)
{
    const char *name = NULL;
    rf__store_info_t info;
    RF_CALL(s_keys(q, s_info_keys));
    RF_CALL(s_need_str(q, "name", &name));
    RF_CALL(rf__store_info(q->ops->store, name, rf_now_ms(), &info, &q->err));
    s_reply_open(q, 6);
    rf__mp_key(q->w, "name");
    rf__mp_str(q->w, name);
    rf__mp_key(q->w, "version");
    rf__mp_int(q->w, info.version);
    rf__mp_key(q->w, "base_version");
    rf__mp_int(q->w, info.base_version);
    rf__mp_key(q->w, "nodes");
    rf__mp_int(q->w, info.nodes);
    rf__mp_key(q->w, "commits");
    rf__mp_int(q->w, info.commits);
    rf__mp_key(q->w, "commit_pods");
    rf__mp_int(q->w, info.commit_pods);
    return RF_OK;
}

static rf_status s_op_delete(s_req_t *q)
{
    const char *name = NULL;
    int64_t version = -1;
    RF_CALL(s_keys(q, s_delete_keys));
    RF_CALL(s_need_str(q, "name", &name));
    RF_CALL(s_opt_int(q, "version", 1, INT64_MAX, &version));
    RF_CALL(rf__store_delete(q->ops->store, name, version, &q->err));
    s_reply_open(q, 2);
    rf__mp_key(q->w, "name");
    rf__mp_str(q->w, name);
    rf__mp_key(q->w, "deleted");
    rf__mp_bool(q->w, true);
    return RF_OK;
}

/* Decode, check the envelope (v, op, id), dispatch. */
static rf_status s_dispatch(s_req_t *q, const void *msg, size_t len, int *op_index)
{
    rf_doc_t *root = NULL;
    RF_CALL(rf__mp_decode(msg, len, &q->ops->mp, q->arena, &root, &q->err));
    if (root->type != RF_DOC_MAP)
        return s_fail(q, RF_ESCHEMA, "", "the request must be a map, not %s", rf__doc_type_name(root->type));
    q->root = root;
    const rf_doc_t *id = s_get(root, "id");
    if (id && id->type != RF_DOC_STR && id->type != RF_DOC_INT)
        return s_fail(q, RF_ESCHEMA, "id", "must be a string or an integer, not %s", rf__doc_type_name(id->type));
    q->id = id;
    const rf_doc_t *v = s_get(root, "v");
    if (v && (v->type != RF_DOC_INT || v->u.i != RF__PROTOCOL_VERSION))
        return s_fail(q, RF_EUNSUPPORTED, "v", "%s", "protocol version 1 is the only one served");
    const char *op = "solve";
    const rf_doc_t *opd = s_get(root, "op");
    if (opd) {
        if (opd->type != RF_DOC_STR)
            return s_fail(q, RF_ESCHEMA, "op", "must be a string, not %s", rf__doc_type_name(opd->type));
        op = opd->u.s;
    }
    for (int i = 0; s_ops[i]; i++)
        if (strcmp(op, s_ops[i]) == 0)
            *op_index = i;
    switch (*op_index) {
    case 0:
        return s_op_solve(q);
    case 1:
        return s_op_ping(q);
    case 2:
        return s_op_stats(q);
    case 3:
        return s_op_put(q);
    case 4:
        return s_op_patch(q);
    case 5:
        return s_op_info(q);
    case 6:
        return s_op_release(q);
    case 7:
        return s_op_delete(q);
    default:
        return rf_error_set(&q->err, RF_EUNSUPPORTED, "op", "unknown op \"%.100s\" (ping lists the ops)", op);
    }
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
    cfg->solver_threads = 0;
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
    o->free_threads = o->cfg.solver_threads;
    o->started_ms = rf_now_ms();
    o->store = rf__store_new(cfg->max_clusters, cfg->max_commits);
    if (!o->store || pthread_mutex_init(&o->mu, NULL) != 0) {
        rf__store_destroy(&o->store);
        free(o);
        return NULL;
    }
    if (pthread_cond_init(&o->cv, NULL) != 0) {
        pthread_mutex_destroy(&o->mu);
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
    pthread_cond_destroy(&o->cv);
    pthread_mutex_destroy(&o->mu);
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

rf__class_t rf__ops_classify(const rf__mp_scan_t *scan)
{
    if (scan->op[0] && strcmp(scan->op, "solve") != 0)
        return RF__CLASS_OTHER;
    return strcmp(scan->mode, "greedy") == 0 ? RF__CLASS_GREEDY : RF__CLASS_SOLVER;
}

void rf__ops_handle(rf__ops_t *ops, const void *msg, size_t len, double received_ms, rf__mp_writer_t *w)
{
    s_req_t q = {.ops = ops, .w = w, .cls = RF__CLASS_OTHER, .received_ms = received_ms};
    rf_error_clear(&q.err);
    rf__mp_writer_reset(w);
    atomic_fetch_add(&ops->requests, 1);
    int op_index = -1;
    rf_status rc;
    q.arena = rf__arena_new(0);
    if (!q.arena)
        rc = rf_error_set(&q.err, RF_ENOMEM, "", "out of memory");
    else
        rc = s_dispatch(&q, msg, len, &op_index);
    if (op_index == 0 && rc != RF_OK && q.cls == RF__CLASS_OTHER)
        q.cls = RF__CLASS_SOLVER;
    if (op_index >= 0 && op_index < 8)
        atomic_fetch_add(&ops->by_op[op_index], 1);
    if (rc == RF_OK && !rf__mp_writer_ok(w))
        rc = rf_error_set(&q.err, RF_ENOMEM, "", "out of memory writing the reply");
    if (rc != RF_OK) {
        rf__mp_writer_reset(w);
        rf__mp_error_reply(w, q.id, rc, q.err.message, q.err.path);
        atomic_fetch_add(&ops->errors, 1);
        atomic_fetch_add(&ops->cls[q.cls].errors, 1);
    }
    rf__arena_destroy(&q.arena);
    atomic_fetch_add(&ops->cls[q.cls].count, 1);
    s_hist_add(&ops->cls[q.cls], rf_now_ms() - received_ms);
}

void rf__ops_busy(rf__ops_t *ops, const void *msg, const rf__mp_scan_t *scan, const char *lane, rf__mp_writer_t *w)
{
    char message[128];
    snprintf(message, sizeof message, "the %s lane's queue is full: retry later", lane);
    rf__mp_writer_reset(w);
    rf__mp_error_reply_raw(w, scan && scan->id_len ? (const char *)msg + scan->id_off : NULL, scan ? scan->id_len : 0,
                           RF_EBUSY, message, "");
    atomic_fetch_add(&ops->requests, 1);
    atomic_fetch_add(&ops->busy, 1);
    atomic_fetch_add(&ops->errors, 1);
}

void rf__ops_note_error(rf__ops_t *ops)
{
    atomic_fetch_add(&ops->requests, 1);
    atomic_fetch_add(&ops->errors, 1);
}
