/* service/ops_solve.c: the `solve` op, on a whole problem or against a
 * stored cluster, with commits and their retries (docs/protocol.md).
 *
 * Invariants: a solve holds its snapshot (refcounted) while it reads it,
 * a solver cache of the snapshot's cluster (service/store.h) only while
 * rf_solve runs, and its solver threads (service/budget.h) only while rf_solve runs; a
 * pinned cluster_version never commits an answer computed on another
 * version; the problem and answer are freed on every path. */
#include <stdio.h>
#include <string.h>

#include "clock.h"
#include "rackfit/rackfit.h"
#include "request.h"
#ifdef RF_HAVE_MACHINE
#include "rackfit/machine.h"
#endif

#define S_COMMIT_TRIES 4

static const char *const s_inline_keys[] = {"v", "op", "id", NULL};
static const char *const s_stored_keys[] = {
    "v", "op", "id", "cluster_name", "cluster_version", "commit", "commit_ttl_ms", NULL};

typedef struct {
    const char *cname; /* NULL: a whole problem */
    int64_t cversion;  /* < 0: not pinned */
    bool commit;
    int64_t ttl;
    rf__snapshot_t *snap;
    rf_cluster_cache_t *cache; /* taken from the store with snap, while solving */
    rf_problem_t *problem;
    rf_answer_t *answer;
    int64_t new_version;
} s_solve_t;

static void s_release(rf__req_t *q, s_solve_t *s)
{
    rf_answer_destroy(&s->answer);
    rf_problem_destroy(&s->problem);
    if (s->snap)
        rf__store_cache_give(q->ops->store, s->snap, &s->cache);
    rf__store_unref(q->ops->store, &s->snap);
}

/* The threads a solve asks for (greedy: one). */
static int32_t s_want_threads(const rf__ops_t *o, const rf_problem_t *p)
{
    int32_t want = p->options.mode == RF_MODE_GREEDY ? 1 : p->options.threads;
#ifdef RF_HAVE_MACHINE
    (void)o;
    return rf_machine_threads(want);
#else
    return want <= 0 || want > o->cores ? o->cores : want;
#endif
}

/* The request's root with the running gangs stored with the cluster added
 * after the batch's own `running` (docs/protocol.md): a batch entry of a
 * stored name must be identical to the stored one (it then stands for it),
 * else RF_ESCHEMA at running[i].name. */
static rf_status s_with_stored_running(rf__req_t *q, const rf__snapshot_t *snap, const rf_doc_t **root)
{
    *root = q->root;
    if (snap->n_running == 0)
        return RF_OK;
    const rf_doc_t *own = rf__req_get(q->root, "running");
    if (own && own->type != RF_DOC_ARRAY)
        return RF_OK; /* the reader names the error */
    uint32_t n_own = own ? own->len : 0;
    rf_doc_t *items = rf__arena_alloc(q->arena, ((size_t)n_own + (size_t)snap->n_running) * sizeof *items);
    rf_doc_kv_t *pairs = rf__arena_alloc(q->arena, ((size_t)q->root->len + 1) * sizeof *pairs);
    rf_doc_t *r = rf__arena_alloc(q->arena, sizeof *r);
    if (!items || !pairs || !r)
        return rf_error_set(&q->err, RF_ENOMEM, "", "out of memory");
    uint32_t n = 0;
    for (uint32_t i = 0; i < n_own; i++)
        items[n++] = own->u.items[i];
    for (int32_t k = 0; k < snap->n_running; k++) {
        const rf_doc_t *sn = rf__doc_get(&snap->running[k], "name");
        bool dup = false;
        for (uint32_t i = 0; i < n_own && !dup; i++) {
            const rf_doc_t *bn = own->u.items[i].type == RF_DOC_MAP ? rf__doc_get(&own->u.items[i], "name") : NULL;
            if (!bn || !sn || !rf__doc_same(bn, sn))
                continue;
            if (!rf__doc_same(&own->u.items[i], &snap->running[k])) {
                char path[64];
                snprintf(path, sizeof path, "running[%u].name", (unsigned)i);
                return rf_error_set(&q->err, RF_ESCHEMA, path,
                                    "running gang \"%.200s\" is stored with cluster \"%.200s\" as something else "
                                    "(change it with cluster.patch, or list it exactly as stored)",
                                    sn->u.s, snap->name);
            }
            dup = true;
        }
        if (!dup)
            items[n++] = snap->running[k];
    }
    uint32_t np = 0;
    for (uint32_t i = 0; i < q->root->len; i++)
        if (strcmp(q->root->u.pairs[i].key, "running") != 0)
            pairs[np++] = q->root->u.pairs[i];
    pairs[np++] = (rf_doc_kv_t){
        .key = "running", .key_len = 7, .value = {.type = RF_DOC_ARRAY, .len = n, .offset = -1, .u.items = items}};
    *r = (rf_doc_t){.type = RF_DOC_MAP, .len = np, .offset = -1, .u.pairs = pairs};
    *root = r;
    return RF_OK;
}

/* Read the request's problem (on the stored cluster's current snapshot when
 * s->cname), solve it, and commit its placements when asked. */
static rf_status s_solve_once(rf__req_t *q, s_solve_t *s)
{
    rf__ops_t *o = q->ops;
    if (s->cname) {
        RF_CALL(rf__store_acquire(o->store, s->cname, s->cversion, rf_now_ms(), &s->snap, &q->err));
        const rf_doc_t *root = NULL;
        RF_CALL(s_with_stored_running(q, s->snap, &root));
        RF_CALL(rf_problem_from_doc_on(root, s_stored_keys, s->snap->problem, &o->cfg.limits, &s->problem, &q->err));
    } else {
        RF_CALL(rf_problem_from_doc(q->root, s_inline_keys, &o->cfg.limits, &s->problem, &q->err));
    }
    rf_problem_t *p = s->problem;
    if (o->cfg.max_time_limit_ms > 0 && p->options.time_limit_ms > o->cfg.max_time_limit_ms)
        return rf_error_set(&q->err, RF_ELIMIT, "options.time_limit_ms",
                            "%lld ms is above the server's max_time_limit_ms (%lld): a solve holds a solver thread "
                            "that long",
                            (long long)p->options.time_limit_ms, (long long)o->cfg.max_time_limit_ms);
    q->cls = p->options.mode == RF_MODE_GREEDY ? RF__CLASS_GREEDY : RF__CLASS_SOLVER;
    rf_solve_opts_t opts;
    rf_solve_opts_default(&opts);
    opts.start_ms = q->received_ms;
    bool solver_lane = q->cls == RF__CLASS_SOLVER;
    opts.threads = rf__budget_take(&o->budget, s_want_threads(o, p), solver_lane);
    if (s->snap)
        opts.cache = s->cache = rf__store_cache_take(o->store, s->snap);
    double t0 = rf_now_ms();
    rf_status rc = rf_solve(p, &opts, &s->answer, &q->err);
    double t1 = rf_now_ms();
    if (s->snap)
        rf__store_cache_give(o->store, s->snap, &s->cache);
    rf__budget_give(&o->budget, opts.threads, solver_lane);
    RF_CALL(rc);
    rf__stats_solve(&o->stats, p, s->answer, (t1 - t0) / 1000.0);
    /* the cluster as this solve read it, plus its own placements */
    if (s->snap)
        rf__stats_cluster_solved(&o->stats, s->cname, p, s->answer);
    if (s->commit)
        return rf__store_commit(o->store, s->snap, p, s->answer, s->ttl, rf_now_ms(), &s->new_version, &q->err);
    if (s->snap)
        s->new_version = s->snap->version;
    return RF_OK;
}

/* The stored-cluster fields of the request. */
static rf_status s_stored_fields(rf__req_t *q, s_solve_t *s)
{
    RF_CALL(rf__req_need_str(q, "cluster_name", &s->cname));
    if (rf__doc_get(q->root, "cluster"))
        return rf_error_set(&q->err, RF_ESCHEMA, "cluster", "must not be given with cluster_name");
    RF_CALL(rf__req_opt_int(q, "cluster_version", 1, INT64_MAX, &s->cversion));
    RF_CALL(rf__req_opt_bool(q, "commit", &s->commit));
    return rf__req_opt_int(q, "commit_ttl_ms", 1, q->ops->cfg.max_commit_ttl_ms, &s->ttl);
}

rf_status rf__op_solve(rf__req_t *q)
{
    rf__ops_t *o = q->ops;
    s_solve_t s = {.cversion = -1, .ttl = o->cfg.commit_ttl_ms, .new_version = -1};
    rf_status rc = RF_OK;
    q->cls = RF__CLASS_SOLVER; /* until the problem says its mode */
    if (rf__req_get(q->root, "cluster_name") && (rc = s_stored_fields(q, &s)) != RF_OK)
        return rc;
    /* A commit that raced other commits (the capacity its answer used is
     * gone) is solved again on the new version, up to S_COMMIT_TRIES times,
     * unless the client pinned cluster_version. */
    for (int attempt = 0;; attempt++) {
        rc = s_solve_once(q, &s);
        bool raced = rc == RF_ESTALE && s.commit && s.answer;
        if (!(raced && s.cversion < 0 && attempt + 1 < S_COMMIT_TRIES)) {
            if (raced)
                rf__stats_commit(&o->stats, 2);
            break;
        }
        rf__stats_commit(&o->stats, 1);
        s_release(q, &s);
        rf_error_clear(&q->err);
    }
    if (rc == RF_OK) {
        if (s.commit)
            rf__stats_commit(&o->stats, 0);
        rc = rf__reply_answer(q, s.answer, s.snap ? s.cname : NULL, s.new_version, s.commit);
    }
    s_release(q, &s);
    return rc;
}
