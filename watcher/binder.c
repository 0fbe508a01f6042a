/* watcher/binder.c: gangs bound whole or not at all (see binder.h). */
#include "binder.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "jw.h"
#include "ktime.h"
#include "log.h"

/* ---- answers to decisions -------------------------------------------------------------------------------------- */

void rf__decisions_free(rf__decision_t **dp, int32_t n)
{
    if (!dp || !*dp)
        return;
    rf__decision_t *d = *dp;
    for (int32_t i = 0; i < n; i++) {
        for (int32_t k = 0; k < d[i].n_binds; k++) {
            free(d[i].binds[k].ns);
            free(d[i].binds[k].name);
            free(d[i].binds[k].uid);
            free(d[i].binds[k].node);
        }
        free(d[i].binds);
        free(d[i].gang);
        free(d[i].reason);
    }
    free(d);
    *dp = NULL;
}

static char *s_dup(const char *s)
{
    return strdup(s ? s : "");
}

rf_status rf__decisions_from_answer(const rf__plan_t *plan, const char *answer, size_t len, rf__decision_t **out,
                                    int32_t *n_out, rf_error_t *err)
{
    *out = NULL;
    *n_out = 0;
    rf__arena_t *arena = rf__arena_new(0);
    rf_doc_t *doc = NULL;
    rf_status rc = RF_OK;
    rf__decision_t *d = NULL;
    if (!arena)
        return rf_error_set(err, RF_ENOMEM, "", "out of memory");
    if ((rc = rf__kube_json(answer, len, arena, &doc, err)) != RF_OK)
        goto done;
    const rf_doc_t *gangs = rf__doc_get(doc, "gangs");
    if (!gangs || gangs->type != RF_DOC_ARRAY || (int32_t)gangs->len != plan->n_sent) {
        rc = rf_error_set(err, RF_ESCHEMA, "gangs", "the answer does not answer the %d gangs sent", plan->n_sent);
        goto done;
    }
    d = calloc((size_t)plan->n_sent + 1, sizeof *d);
    if (!d) {
        rc = rf_error_set(err, RF_ENOMEM, "", "out of memory");
        goto done;
    }
    for (int32_t j = 0; j < plan->n_sent; j++) {
        const rf__pgang_t *g = &plan->gangs[plan->sent[j]];
        const rf_doc_t *ga = &gangs->u.items[j];
        const char *name = rf__doc_str(ga, "name");
        rf__decision_t *x = &d[(*n_out)++];
        x->plan_gang = plan->sent[j];
        x->gang = s_dup(g->name);
        if (!name || strcmp(name, g->name) != 0) {
            rc = rf_error_set(err, RF_ESCHEMA, "gangs", "answer gang %d is `%s`, not `%s`", j, name ? name : "",
                              g->name);
            goto done;
        }
        const rf_doc_t *adm = rf__doc_get(ga, "admitted");
        x->admitted = adm && adm->type == RF_DOC_BOOL && adm->u.b;
        if (!x->admitted) {
            x->reason = s_dup(rf__doc_str(ga, "reason") ? rf__doc_str(ga, "reason") : "rejected by the solver");
            continue;
        }
        x->binds = calloc((size_t)g->n_pending + 1, sizeof *x->binds);
        if (!x->binds) {
            rc = rf_error_set(err, RF_ENOMEM, "", "out of memory");
            goto done;
        }
        const rf_doc_t *sets = rf__doc_get(ga, "pod_sets");
        for (uint32_t s = 0; sets && sets->type == RF_DOC_ARRAY && s < sets->len; s++) {
            const char *sname = rf__doc_str(&sets->u.items[s], "name");
            const rf__gset_t *gs = NULL;
            for (int32_t k = 0; sname && k < g->n_sets && !gs; k++)
                if (strcmp(g->sets[k].name, sname) == 0)
                    gs = &g->sets[k];
            if (!gs) {
                rc = rf_error_set(err, RF_ESCHEMA, "gangs", "gang %s: unknown pod set `%s`", g->name,
                                  sname ? sname : "");
                goto done;
            }
            const rf_doc_t *pl = rf__doc_get(&sets->u.items[s], "placements");
            int32_t next = 0;
            for (uint32_t p = 0; pl && pl->type == RF_DOC_ARRAY && p < pl->len; p++) {
                const char *node = rf__doc_str(&pl->u.items[p], "node");
                const rf_doc_t *cnt = rf__doc_get(&pl->u.items[p], "count");
                if (!node || !cnt || cnt->type != RF_DOC_INT || cnt->u.i < 0 || cnt->u.i > gs->n_pending - next) {
                    rc = rf_error_set(err, RF_ESCHEMA, "gangs",
                                      "gang %s, pod set %s: placements do not fit its %d "
                                      "pending pods",
                                      g->name, gs->name, gs->n_pending);
                    goto done;
                }
                for (int64_t c = 0; c < cnt->u.i; c++, next++) {
                    const rf__member_t *m = &gs->pending[next];
                    rf__bind_t *bd = &x->binds[x->n_binds++];
                    bd->ns = s_dup(m->ns);
                    bd->name = s_dup(m->name);
                    bd->uid = s_dup(m->uid);
                    bd->node = s_dup(node);
                    if (!bd->ns || !bd->name || !bd->uid || !bd->node) {
                        rc = rf_error_set(err, RF_ENOMEM, "", "out of memory");
                        goto done;
                    }
                }
            }
        }
    }
done:
    rf__arena_destroy(&arena);
    if (rc != RF_OK) {
        rf__decisions_free(&d, *n_out);
        *n_out = 0;
    }
    *out = d;
    return rc;
}

/* ---- the binder ------------------------------------------------------------------------------------------------ */

void rf__binder_init(rf__binder_t *b)
{
    memset(b, 0, sizeof *b);
    b->max_retries = 5;
    b->timeout_ms = 10000;
    b->admit_timeout_s = 300;
    b->backoff_base_s = 1;
    b->backoff_cap_s = 300;
    b->retell_s = 30;
}

static void s_binds_free(rf__bind_t *p, int32_t n)
{
    for (int32_t i = 0; i < n; i++) {
        free(p[i].ns);
        free(p[i].name);
        free(p[i].uid);
        free(p[i].node);
    }
    free(p);
}

void rf__binder_fini(rf__binder_t *b)
{
    for (int32_t i = 0; i < b->n_follows; i++) {
        free(b->follows[i].gang);
        free(b->follows[i].attempt);
        s_binds_free(b->follows[i].pods, b->follows[i].n);
    }
    free(b->follows);
    for (int32_t i = 0; i < b->n_holds; i++)
        free(b->holds[i].gang);
    free(b->holds);
    for (int32_t i = 0; i < b->n_told; i++)
        free(b->told[i].gang);
    free(b->told);
    b->told = NULL;
    b->n_told = 0;
    b->follows = NULL;
    b->holds = NULL;
    b->n_follows = b->n_holds = 0;
}

static bool s_lost(const rf__binder_t *b)
{
    if ((b->lost && *b->lost) || (b->stop && *b->stop))
        return true;
    double until = b->lease_until ? atomic_load(b->lease_until) : 0;
    return until > 0 && rf__now() > until;
}

bool rf__binder_stopped(const rf__binder_t *b)
{
    return s_lost(b);
}

/* kube_batch's stop test: asked before every request starts and on every
 * turn of its loop, so it also says the binder is alive (a batch waiting out
 * Retry-After or the rate limit may take minutes). */
static bool s_stop_fn(void *ctx)
{
    rf__binder_t *b = ctx;
    if (b->heartbeat)
        atomic_store(b->heartbeat, rf__now());
    return s_lost(b);
}

bool rf__binder_holds(void *binder, const char *gang)
{
    rf__binder_t *b = binder;
    double now = rf__now();
    for (int32_t i = 0; i < b->n_holds; i++)
        if (strcmp(b->holds[i].gang, gang) == 0 && now < b->holds[i].until)
            return true;
    for (int32_t i = 0; i < b->n_follows; i++)
        if (strcmp(b->follows[i].gang, gang) == 0)
            return true;
    return false;
}

/* Hold a gang that failed: base * 2^(failures-1), capped, never a tight loop. */
static void s_hold(rf__binder_t *b, const char *gang)
{
    rf__hold_t *h = NULL;
    for (int32_t i = 0; i < b->n_holds && !h; i++)
        if (strcmp(b->holds[i].gang, gang) == 0)
            h = &b->holds[i];
    if (!h) {
        if (b->n_holds == b->cap_holds) {
            int32_t cap = b->cap_holds ? b->cap_holds * 2 : 16;
            rf__hold_t *p = realloc(b->holds, (size_t)cap * sizeof *p);
            if (!p)
                return;
            b->holds = p;
            b->cap_holds = cap;
        }
        h = &b->holds[b->n_holds];
        if (!(h->gang = strdup(gang)))
            return;
        h->failures = 0;
        b->n_holds++;
    }
    h->failures++;
    double wait = b->backoff_base_s;
    for (int i = 1; i < h->failures && wait < b->backoff_cap_s; i++)
        wait *= 2;
    if (wait > b->backoff_cap_s)
        wait = b->backoff_cap_s;
    h->until = rf__now() + wait;
    rf__log(RF_LOG_INFO, "gang %s: held for %.1f s (failure %d)", gang, wait, h->failures);
}

/* A gang bound and admitted: forget its failures. */
static void s_unhold(rf__binder_t *b, const char *gang)
{
    for (int32_t i = 0; i < b->n_holds; i++)
        if (strcmp(b->holds[i].gang, gang) == 0) {
            free(b->holds[i].gang);
            b->holds[i] = b->holds[--b->n_holds];
            return;
        }
}

/* Is this answer a passing failure worth retrying? */
static bool s_transient(const rf__kcall_t *c)
{
    if (c->transport == RF_EIO || c->transport == RF_ETIMEOUT)
        return true;
    if (c->transport != RF_OK)
        return false;
    return c->resp.status == 429 || c->resp.status >= 500;
}

typedef struct {
    char *path;
    char *body;
} s_req_t;

/* Run requests `reqs[idx[k]]` with retries; ok[i] says which succeeded
 * (accept(i, call) decides); returns how many did not. unsure[i] (may be
 * NULL) says that a failed request's last answer was a passing failure (a
 * timeout, a connection error, a 5xx): the server may have applied it. */
static int s_run(rf__binder_t *b, const char *method, const char *ctype, s_req_t *reqs, int n, bool *ok, bool *unsure,
                 bool (*accept)(rf__binder_t *, int, const rf__kcall_t *, void *), void *actx, char *why,
                 size_t why_cap)
{
    rf__kcall_t *calls = calloc((size_t)n + 1, sizeof *calls);
    int *idx = calloc((size_t)n + 1, sizeof *idx);
    int todo = n, failed = 0;
    if (!calls || !idx) {
        free(calls);
        free(idx);
        snprintf(why, why_cap, "out of memory");
        return n;
    }
    for (int i = 0; i < n; i++) {
        idx[i] = i;
        ok[i] = false;
        if (unsure)
            unsure[i] = false;
    }
    for (int round = 0; todo > 0; round++) {
        for (int k = 0; k < todo; k++) {
            rf__kcall_t *c = &calls[k];
            double delay = c->resp.retry_after;
            rf__kresp_fini(&c->resp);
            *c = (rf__kcall_t){.method = method,
                               .path = reqs[idx[k]].path,
                               .ctype = ctype,
                               .body = reqs[idx[k]].body,
                               .delay_s = round ? delay : 0};
            if (round && c->delay_s <= 0) {
                double d = 0.05;
                for (int r = 1; r < round; r++)
                    d *= 2;
                c->delay_s = d > 2 ? 2 : d;
            }
        }
        rf_error_t err;
        rf__kube_batch_fn(b->multi, calls, todo, &b->lim, b->timeout_ms, s_stop_fn, b, &err);
        int again = 0;
        for (int k = 0; k < todo; k++) {
            rf__kcall_t *c = &calls[k];
            int i = idx[k];
            /* not sent (EBUSY) or 429 (refused unread): an earlier answer still stands */
            if (unsure && c->transport != RF_EBUSY && !(c->transport == RF_OK && c->resp.status == 429))
                unsure[i] = s_transient(c);
            if (c->transport == RF_OK && accept(b, i, c, actx)) {
                ok[i] = true;
                rf__kresp_fini(&c->resp);
                continue;
            }
            /* 429 is the server asking us to slow down, not failing: it gets more patience */
            int limit = c->transport == RF_OK && c->resp.status == 429 ? b->max_retries + 10 : b->max_retries;
            if (c->transport != RF_EBUSY && s_transient(c) && round < limit && !s_lost(b)) {
                b->retries++;
                idx[again] = i;
                rf__kcall_t keep = *c;
                calls[again] = keep; /* keeps resp.retry_after for the delay */
                again++;
                continue;
            }
            failed++;
            if (why[0] == '\0') {
                if (c->transport == RF_EBUSY)
                    snprintf(why, why_cap, "%s %s: not sent (the lease was lost)", method, reqs[i].path);
                else if (c->transport != RF_OK)
                    snprintf(why, why_cap, "%s %s: %s", method, reqs[i].path, rf_status_message(c->transport));
                else
                    snprintf(why, why_cap, "%s %s: HTTP %ld: %.300s", method, reqs[i].path, c->resp.status,
                             c->resp.body ? c->resp.body : "");
            }
            rf__kresp_fini(&c->resp);
        }
        todo = again;
    }
    free(calls);
    free(idx);
    return failed;
}

typedef struct {
    const rf__bind_t *pods;
} s_bind_ctx_t;

static bool s_accept_2xx(rf__binder_t *b, int i, const rf__kcall_t *c, void *ctx)
{
    (void)b;
    (void)i;
    (void)ctx;
    return c->resp.status >= 200 && c->resp.status < 300;
}

/* GET the pod from the server: 1 when it is still the pod `p` names (same
 * uid) and is bound (its node in `node`), 0 when it is not bound or not that
 * pod any more, -1 when the server could not tell. */
static int s_get_node(rf__binder_t *b, const rf__bind_t *p, char *node, size_t node_cap)
{
    int ret = -1;
    if (s_lost(b))
        return -1;
    rf__kconn_t *conn = rf__kconn_new(b->kube);
    char path[600];
    snprintf(path, sizeof path, "/api/v1/namespaces/%s/pods/%s", p->ns, p->name);
    rf__kresp_t r;
    rf_error_t err;
    if (conn && rf__kube_call(conn, "GET", path, NULL, NULL, b->timeout_ms, &r, &err) == RF_OK) {
        if (r.status == 404)
            ret = 0;
        if (r.status == 200) {
            rf__arena_t *a = rf__arena_new(0);
            rf_doc_t *doc = NULL;
            if (a && rf__kube_json(r.body, r.len, a, &doc, &err) == RF_OK) {
                const char *uid = rf__doc_str(doc, "metadata.uid"), *nn = rf__doc_str(doc, "spec.nodeName");
                ret = uid && nn && *nn && strcmp(uid, p->uid) == 0;
                if (ret == 1)
                    snprintf(node, node_cap, "%s", nn);
            }
            rf__arena_destroy(&a);
        }
        rf__kresp_fini(&r);
    }
    rf__kconn_destroy(&conn);
    return ret;
}

/* 201, or 409 because our own earlier (timed-out) request bound it there. */
static bool s_accept_bind(rf__binder_t *b, int i, const rf__kcall_t *c, void *ctx)
{
    const s_bind_ctx_t *bc = ctx;
    if (c->resp.status == 201 || c->resp.status == 200)
        return true;
    if (c->resp.status != 409)
        return false;
    const rf__bind_t *p = &bc->pods[i];
    char key[512];
    snprintf(key, sizeof key, "%s/%s", p->ns, p->name);
    rf__cache_lock(b->cache);
    const rf__kpod_t *kp = rf__cache_get(b->cache, RF_KIND_POD, key);
    bool same = kp && strcmp(kp->uid, p->uid) == 0 && kp->node_name && strcmp(kp->node_name, p->node) == 0;
    rf__cache_unlock(b->cache);
    if (!same) { /* the cache may lag: ask the server */
        char nn[256];
        same = s_get_node(b, p, nn, sizeof nn) == 1 && strcmp(nn, p->node) == 0;
    }
    return same;
}

static bool s_accept_delete(rf__binder_t *b, int i, const rf__kcall_t *c, void *ctx)
{
    (void)b;
    (void)i;
    (void)ctx;
    /* gone already (404) or replaced (409: the uid precondition failed): nothing of ours is left */
    return (c->resp.status >= 200 && c->resp.status < 300) || c->resp.status == 404 || c->resp.status == 409;
}

static void s_reqs_free(s_req_t *r, int n)
{
    for (int i = 0; r && i < n; i++) {
        free(r[i].path);
        free(r[i].body);
    }
    free(r);
}

static void s_set_assumed(rf__binder_t *b, const rf__bind_t *p, bool on)
{
    char key[512];
    snprintf(key, sizeof key, "%s/%s", p->ns, p->name);
    rf__cache_lock(b->cache);
    rf__kpod_t *kp = rf__cache_get(b->cache, RF_KIND_POD, key);
    if (kp && strcmp(kp->uid, p->uid) == 0) {
        free(kp->assumed_node);
        kp->assumed_node = on ? strdup(p->node) : NULL;
    }
    rf__cache_touch(b->cache);
    rf__cache_unlock(b->cache);
}

/* Delete pods[i] where sel[i] (NULL: all) with their uid as precondition. */
static int s_rollback(rf__binder_t *b, const char *gang, const rf__bind_t *pods, int n, const bool *sel)
{
    s_req_t *reqs = calloc((size_t)n + 1, sizeof *reqs);
    bool *ok = calloc((size_t)n + 1, sizeof *ok);
    const rf__bind_t **which = calloc((size_t)n + 1, sizeof *which);
    int m = 0, failed = 0;
    char why[512] = "";
    if (!reqs || !ok || !which) {
        failed = n;
        goto done;
    }
    for (int i = 0; i < n; i++) {
        if (sel && !sel[i])
            continue;
        rf__jw_t w;
        rf__jw_init(&w);
        rf__jw_printf(&w, "/api/v1/namespaces/%s/pods/%s", pods[i].ns, pods[i].name);
        reqs[m].path = rf__jw_take(&w, NULL);
        rf__jw_init(&w);
        rf__jw_puts(&w, "{\"apiVersion\":\"v1\",\"kind\":\"DeleteOptions\",\"preconditions\":{\"uid\":");
        rf__jw_str(&w, pods[i].uid);
        rf__jw_puts(&w, "}}");
        reqs[m].body = rf__jw_take(&w, NULL);
        which[m++] = &pods[i];
    }
    if (m == 0)
        goto done;
    b->rollbacks++;
    failed = s_run(b, "DELETE", "application/json", reqs, m, ok, NULL, s_accept_delete, NULL, why, sizeof why);
    for (int k = 0; k < m; k++)
        if (ok[k]) /* a pod whose delete failed is still bound: its capacity stays taken */
            s_set_assumed(b, which[k], false);
    if (failed)
        rf__log(RF_LOG_ERROR,
                "gang %s: rollback left %d of %d pods bound: %s (the next watcher to lead retries it "
                "from the intents)",
                gang, failed, m, why);
    else
        rf__log(RF_LOG_INFO, "gang %s: rolled back: deleted %d bound pods (their controllers recreate them)", gang, m);
done:
    s_reqs_free(reqs, m);
    free(ok);
    free(which);
    return failed;
}

static void s_follow_add(rf__binder_t *b, const char *gang, const char *attempt, const rf__bind_t *pods, int32_t n)
{
    if (b->n_follows == b->cap_follows) {
        int32_t cap = b->cap_follows ? b->cap_follows * 2 : 16;
        rf__follow_t *p = realloc(b->follows, (size_t)cap * sizeof *p);
        if (!p)
            return;
        b->follows = p;
        b->cap_follows = cap;
    }
    rf__follow_t *f = &b->follows[b->n_follows];
    f->gang = strdup(gang);
    f->attempt = strdup(attempt);
    f->pods = calloc((size_t)n + 1, sizeof *f->pods);
    f->n = n;
    f->since = rf__now();
    if (!f->gang || !f->attempt || !f->pods) {
        free(f->gang);
        free(f->attempt);
        free(f->pods);
        return;
    }
    for (int32_t i = 0; i < n; i++) {
        f->pods[i].ns = s_dup(pods[i].ns);
        f->pods[i].name = s_dup(pods[i].name);
        f->pods[i].uid = s_dup(pods[i].uid);
        f->pods[i].node = s_dup(pods[i].node);
    }
    b->n_follows++;
}

rf_status rf__bind_gang(rf__binder_t *b, const rf__decision_t *d, char *why, size_t why_cap)
{
    int n = d->n_binds;
    why[0] = '\0';
    if (n == 0) {
        s_unhold(b, d->gang);
        return RF_OK;
    }
    if (s_lost(b)) {
        snprintf(why, why_cap, "the lease was lost");
        return RF_EBUSY;
    }
    char attempt[160];
    snprintf(attempt, sizeof attempt, "%s.%lld.%lu", b->identity, (long long)(rf__wall() * 1000), ++b->attempt_seq);
    s_req_t *intent = calloc((size_t)n, sizeof *intent), *bind = calloc((size_t)n, sizeof *bind);
    bool *ok = calloc((size_t)n, sizeof *ok), *unsure = calloc((size_t)n, sizeof *unsure);
    rf_status rc = RF_OK;
    if (!intent || !bind || !ok || !unsure) {
        snprintf(why, why_cap, "out of memory");
        rc = RF_ENOMEM;
        goto done;
    }
    for (int i = 0; i < n; i++) {
        const rf__bind_t *p = &d->binds[i];
        rf__jw_t w;
        rf__jw_init(&w);
        rf__jw_printf(&w, "/api/v1/namespaces/%s/pods/%s", p->ns, p->name);
        intent[i].path = rf__jw_take(&w, NULL);
        rf__jw_init(&w);
        char val[400];
        snprintf(val, sizeof val, "%s %s %d", attempt, p->node, n);
        rf__jw_puts(&w, "{\"metadata\":{\"uid\":");
        rf__jw_str(&w, p->uid);
        rf__jw_puts(&w, ",\"annotations\":{");
        rf__jw_str(&w, RF_ANN_INTENT);
        rf__jw_puts(&w, ":");
        rf__jw_str(&w, val);
        rf__jw_puts(&w, "}}}");
        intent[i].body = rf__jw_take(&w, NULL);
        rf__jw_init(&w);
        rf__jw_printf(&w, "/api/v1/namespaces/%s/pods/%s/binding", p->ns, p->name);
        bind[i].path = rf__jw_take(&w, NULL);
        rf__jw_init(&w);
        rf__jw_puts(&w, "{\"apiVersion\":\"v1\",\"kind\":\"Binding\",\"metadata\":{\"name\":");
        rf__jw_str(&w, p->name);
        rf__jw_puts(&w, ",\"namespace\":");
        rf__jw_str(&w, p->ns);
        rf__jw_puts(&w, ",\"uid\":");
        rf__jw_str(&w, p->uid);
        rf__jw_puts(&w, "},\"target\":{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"name\":");
        rf__jw_str(&w, p->node);
        rf__jw_puts(&w, "}}");
        bind[i].body = rf__jw_take(&w, NULL);
        if (!intent[i].path || !intent[i].body || !bind[i].path || !bind[i].body) {
            snprintf(why, why_cap, "out of memory");
            rc = RF_ENOMEM;
            goto done;
        }
    }
    /* 1. the intent on every pod; nothing is bound yet, so a failure costs nothing */
    double t0 = rf__now();
    int failed =
        s_run(b, "PATCH", "application/merge-patch+json", intent, n, ok, NULL, s_accept_2xx, NULL, why, why_cap);
    if (failed) {
        rc = RF_EIO;
        b->binds_failed++;
        if (!s_lost(b))
            s_hold(b, d->gang);
        goto done;
    }
    /* 2. the bindings */
    double t1 = rf__now();
    s_bind_ctx_t bc = {.pods = d->binds};
    failed = s_run(b, "POST", "application/json", bind, n, ok, unsure, s_accept_bind, &bc, why, why_cap);
    /* a binding whose last answer was a timeout or a 5xx may have been applied: ask */
    for (int i = 0; i < n && failed; i++) {
        char nn[256];
        if (ok[i] || !unsure[i] || s_get_node(b, &d->binds[i], nn, sizeof nn) != 1)
            continue;
        if (strcmp(nn, d->binds[i].node) != 0) {
            /* bound, but not where this attempt put it: counted as bound so the rollback deletes it */
            free(d->binds[i].node);
            d->binds[i].node = s_dup(nn);
        }
        rf__log(RF_LOG_INFO, "gang %s: pod %s/%s was bound although its binding failed", d->gang, d->binds[i].ns,
                d->binds[i].name);
        ok[i] = true;
        failed--;
    }
    for (int i = 0; i < n; i++)
        if (ok[i])
            s_set_assumed(b, &d->binds[i], true);
    if (failed == 0) {
        b->binds_ok += n;
        b->gangs_bound++;
        s_follow_add(b, d->gang, attempt, d->binds, n);
        rf__log(RF_LOG_INFO, "gang %s: bound %d pods (attempt %s): intents %.1f ms, bindings %.1f ms", d->gang, n,
                attempt, (t1 - t0) * 1e3, (rf__now() - t1) * 1e3);
        goto done;
    }
    rc = RF_EIO;
    b->binds_failed++;
    rf__log(RF_LOG_WARN, "gang %s: %d of %d bindings failed: %s", d->gang, failed, n, why);
    if (s_lost(b))
        goto done; /* the successor rolls back from the intents */
    s_rollback(b, d->gang, d->binds, n, ok);
    s_hold(b, d->gang);
done:
    s_reqs_free(intent, intent ? n : 0);
    s_reqs_free(bind, bind ? n : 0);
    free(ok);
    free(unsure);
    return rc;
}

/* ---- following admission --------------------------------------------------------------------------------------- */

void rf__binder_follow(rf__binder_t *b)
{
    for (int32_t i = 0; i < b->n_follows;) {
        rf__follow_t *f = &b->follows[i];
        int admitted = 0;
        const char *bad = NULL;
        char badbuf[600] = "";
        rf__cache_lock(b->cache);
        for (int32_t k = 0; k < f->n && !bad; k++) {
            char key[512];
            snprintf(key, sizeof key, "%s/%s", f->pods[k].ns, f->pods[k].name);
            const rf__kpod_t *p = rf__cache_get(b->cache, RF_KIND_POD, key);
            if (!p || strcmp(p->uid, f->pods[k].uid) != 0 || p->deleting) {
                snprintf(badbuf, sizeof badbuf, "pod %s went away before the kubelet admitted it", key);
                bad = badbuf;
            } else if (strcmp(p->phase, "Failed") == 0) {
                snprintf(badbuf, sizeof badbuf, "the kubelet rejected pod %s: %s", key,
                         p->reason[0] ? p->reason : "Failed");
                bad = badbuf;
            } else if (strcmp(p->phase, "Running") == 0 || strcmp(p->phase, "Succeeded") == 0 ||
                       (p->started && p->node_name)) {
                admitted++;
            }
        }
        rf__cache_unlock(b->cache);
        if (!bad && admitted < f->n && rf__now() - f->since > b->admit_timeout_s) {
            snprintf(badbuf, sizeof badbuf, "%d of %d pods not admitted by their kubelets after %.0f s",
                     f->n - admitted, f->n, b->admit_timeout_s);
            bad = badbuf;
        }
        if (!bad && admitted < f->n) {
            i++;
            continue;
        }
        if (bad) {
            if (s_lost(b)) {
                i++;
                continue;
            }
            rf__log(RF_LOG_WARN, "gang %s: %s: rolling the gang back", f->gang, bad);
            s_rollback(b, f->gang, f->pods, f->n, NULL);
            s_hold(b, f->gang);
        } else {
            rf__log(RF_LOG_INFO, "gang %s: every pod admitted by its kubelet", f->gang);
            s_unhold(b, f->gang);
        }
        free(f->gang);
        free(f->attempt);
        s_binds_free(f->pods, f->n);
        b->follows[i] = b->follows[--b->n_follows];
    }
}

/* ---- taking over ----------------------------------------------------------------------------------------------- */

typedef struct {
    char attempt[160];
    char gang[320];
    rf__bind_t pod;
    int size; /* the attempt's pod count, from the intent */
    bool bound, pending, started, ended;
} s_intent_t;

static int s_intent_cmp(const void *x, const void *y)
{
    return strcmp(((const s_intent_t *)x)->attempt, ((const s_intent_t *)y)->attempt);
}

void rf__binder_recover(rf__binder_t *b)
{
    rf__cache_lock(b->cache);
    rf__kmap_t *pm = &b->cache->maps[RF_KIND_POD];
    s_intent_t *in = calloc((size_t)pm->n + 1, sizeof *in);
    int n = 0;
    for (int32_t i = 0; in && i < pm->n; i++) {
        const rf__kpod_t *p = pm->items[i].obj;
        const char *v = rf__kvs_get(&p->annotations, RF_ANN_INTENT);
        if (!v || p->deleting)
            continue;
        char attempt[160], node[256];
        int size = 0;
        if (sscanf(v, "%159s %255s %d", attempt, node, &size) != 3)
            continue;
        s_intent_t *x = &in[n++];
        snprintf(x->attempt, sizeof x->attempt, "%s", attempt);
        x->size = size;
        rf__pod_gang_name(p, x->gang, sizeof x->gang);
        if (rf__kpod_terminal(p)) { /* it ran (or was rejected): counts towards the size, nothing to undo */
            x->ended = true;
            continue;
        }
        x->pod = (rf__bind_t){.ns = s_dup(p->ns),
                              .name = s_dup(p->name),
                              .uid = s_dup(p->uid),
                              .node = s_dup(p->node_name ? p->node_name : node)};
        x->bound = p->node_name != NULL;
        x->pending = !p->node_name;
        x->started = p->started || strcmp(p->phase, "Running") == 0;
    }
    rf__cache_unlock(b->cache);
    if (!in)
        return;
    qsort(in, (size_t)n, sizeof *in, s_intent_cmp);
    for (int a = 0; a < n;) {
        int z = a, bound = 0, pending = 0, started = 0, ended = 0, size = 0;
        while (z < n && strcmp(in[z].attempt, in[a].attempt) == 0) {
            bound += in[z].bound;
            pending += in[z].pending;
            started += in[z].started && in[z].bound;
            ended += in[z].ended;
            size = in[z].size > size ? in[z].size : size;
            z++;
        }
        /* partial: a partner still pending with the intent, or fewer bound than the
         * attempt's size (the others were deleted, or recreated without the intent) */
        if (bound > 0 && (pending > 0 || bound + ended < size)) {
            rf__bind_t *pods = calloc((size_t)(z - a), sizeof *pods);
            bool *sel = calloc((size_t)(z - a), sizeof *sel);
            if (pods && sel) {
                for (int k = a; k < z; k++) {
                    pods[k - a] = in[k].pod;
                    sel[k - a] = in[k].bound && !in[k].ended;
                }
                rf__log(RF_LOG_WARN,
                        "gang %s: attempt %s was left partly bound (%d of %d bound, %d pending): rolling back",
                        in[a].gang, in[a].attempt, bound, size, pending);
                s_rollback(b, in[a].gang, pods, z - a, sel);
            }
            free(pods);
            free(sel);
        } else if (bound > 0 && started < bound) {
            rf__bind_t *pods = calloc((size_t)(z - a), sizeof *pods);
            int m = 0;
            if (pods) {
                for (int k = a; k < z; k++)
                    if (!in[k].ended)
                        pods[m++] = in[k].pod;
                rf__log(RF_LOG_INFO, "gang %s: attempt %s is bound; following it until the kubelets admit it",
                        in[a].gang, in[a].attempt);
                s_follow_add(b, in[a].gang, in[a].attempt, pods, m);
            }
            free(pods);
        }
        a = z;
    }
    for (int k = 0; k < n; k++) {
        free(in[k].pod.ns);
        free(in[k].pod.name);
        free(in[k].pod.uid);
        free(in[k].pod.node);
    }
    free(in);
}

/* ---- telling people why ---------------------------------------------------------------------------------------- */

void rf__binder_tell(rf__binder_t *b, const rf__pgang_t *g, const char *reason)
{
    if (s_lost(b))
        return;
    char message[1024];
    snprintf(message, sizeof message, "rackfit: gang %s: %s", g->name, reason);
    /* a gang told recently waits before being told a new reason */
    double now_s = rf__now();
    if (b->n_told > 1024) /* forget the ones whose wait is over */
        for (int32_t i = b->n_told - 1; i >= 0; i--)
            if (b->told[i].until < now_s) {
                free(b->told[i].gang);
                b->told[i] = b->told[--b->n_told];
            }
    rf__hold_t *t = NULL;
    for (int32_t i = 0; i < b->n_told && !t; i++)
        if (strcmp(b->told[i].gang, g->name) == 0)
            t = &b->told[i];
    if (t && now_s < t->until)
        return;
    if (!t && b->n_told == b->cap_told) {
        int32_t cap = b->cap_told ? b->cap_told * 2 : 16;
        rf__hold_t *p = realloc(b->told, (size_t)cap * sizeof *p);
        if (p) {
            b->told = p;
            b->cap_told = cap;
        }
    }
    if (!t && b->n_told < b->cap_told && (b->told[b->n_told].gang = strdup(g->name))) {
        t = &b->told[b->n_told++];
        t->until = 0;
        t->failures = 0;
    }
    int cap = (int)g->n_pending * 2 + 2, n = 0;
    s_req_t *patch = calloc((size_t)cap, sizeof *patch);
    s_req_t *event = calloc((size_t)cap, sizeof *event);
    bool *ok = calloc((size_t)cap, sizeof *ok);
    int ne = 0;
    char secs[RF_KTIME_CAP]; /* conditions' and core/v1 Events' timestamps are metav1.Time: whole seconds */
    rf__ktime(rf__wall(), secs, sizeof secs);
    if (!patch || !event || !ok)
        goto done;
    for (int32_t s = 0; s < g->n_sets; s++)
        for (int32_t k = 0; k < g->sets[s].n_pending; k++) {
            const rf__member_t *m = &g->sets[s].pending[k];
            char key[512];
            snprintf(key, sizeof key, "%s/%s", m->ns, m->name);
            rf__cache_lock(b->cache);
            const rf__kpod_t *p = rf__cache_get(b->cache, RF_KIND_POD, key);
            bool said = p && p->sched_reason && strcmp(p->sched_reason, "Unschedulable") == 0 && p->sched_message &&
                        strcmp(p->sched_message, message) == 0;
            rf__cache_unlock(b->cache);
            if (said || !p)
                continue;
            rf__jw_t w;
            rf__jw_init(&w);
            rf__jw_printf(&w, "/api/v1/namespaces/%s/pods/%s/status", m->ns, m->name);
            patch[n].path = rf__jw_take(&w, NULL);
            rf__jw_init(&w);
            rf__jw_puts(&w, "{\"status\":{\"conditions\":[{\"type\":\"PodScheduled\",\"status\":\"False\","
                            "\"reason\":\"Unschedulable\",\"message\":");
            rf__jw_str(&w, message);
            rf__jw_puts(&w, ",\"lastProbeTime\":null,\"lastTransitionTime\":");
            rf__jw_str(&w, secs);
            rf__jw_puts(&w, "}]}}");
            patch[n++].body = rf__jw_take(&w, NULL);
            rf__jw_init(&w);
            rf__jw_printf(&w, "/api/v1/namespaces/%s/events", m->ns);
            event[ne].path = rf__jw_take(&w, NULL);
            rf__jw_init(&w);
            rf__jw_puts(&w, "{\"apiVersion\":\"v1\",\"kind\":\"Event\",\"metadata\":{\"generateName\":");
            char gen[300];
            snprintf(gen, sizeof gen, "%s.", m->name);
            rf__jw_str(&w, gen);
            rf__jw_puts(&w, ",\"namespace\":");
            rf__jw_str(&w, m->ns);
            rf__jw_puts(&w, "},\"involvedObject\":{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"namespace\":");
            rf__jw_str(&w, m->ns);
            rf__jw_puts(&w, ",\"name\":");
            rf__jw_str(&w, m->name);
            rf__jw_puts(&w, ",\"uid\":");
            rf__jw_str(&w, m->uid);
            rf__jw_puts(&w, "},\"reason\":\"FailedScheduling\",\"type\":\"Warning\",\"message\":");
            rf__jw_str(&w, message);
            rf__jw_puts(&w, ",\"source\":{\"component\":");
            rf__jw_str(&w, b->scheduler_name);
            rf__jw_puts(&w, "},\"reportingComponent\":");
            rf__jw_str(&w, b->scheduler_name);
            rf__jw_puts(&w, ",\"reportingInstance\":");
            rf__jw_str(&w, b->identity);
            rf__jw_puts(&w, ",\"firstTimestamp\":");
            rf__jw_str(&w, secs);
            rf__jw_puts(&w, ",\"lastTimestamp\":");
            rf__jw_str(&w, secs);
            rf__jw_puts(&w, ",\"count\":1}");
            event[ne++].body = rf__jw_take(&w, NULL);
        }
    if (n == 0)
        goto done;
    char why[512] = "";
    int failed = s_run(b, "PATCH", "application/strategic-merge-patch+json", patch, n, ok, NULL, s_accept_2xx, NULL,
                       why, sizeof why);
    if (failed)
        rf__log(RF_LOG_WARN, "gang %s: %d condition updates failed: %s", g->name, failed, why);
    why[0] = '\0';
    failed = s_run(b, "POST", "application/json", event, ne, ok, NULL, s_accept_2xx, NULL, why, sizeof why);
    if (failed)
        rf__log(RF_LOG_WARN, "gang %s: %d events failed: %s", g->name, failed, why);
    b->events += ne - failed;
    if (t) /* told: a changed reason waits retell_s */
        t->until = rf__now() + b->retell_s;
    rf__log(RF_LOG_INFO, "gang %s: unschedulable: %s (told %d pods)", g->name, reason, n);
done:
    s_reqs_free(patch, n);
    s_reqs_free(event, ne);
    free(ok);
}
