/* watcher/binder.c: gangs bound whole or not at all, and the state the
 * binder threads share (see binder.h). */
#include "binder.h"
#include "grow.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jw.h"
#include "kdoc.h"
#include "ktime.h"
#include "log.h"

/* ---- life ------------------------------------------------------------------------------------------------------ */

void rf__binder_init(rf__binder_t *b)
{
    memset(b, 0, sizeof *b);
    pthread_mutex_init(&b->mu, NULL);
    rf__limiter_init(&b->lim, 0, 1);
    b->max_retries = 5;
    b->timeout_ms = 10000;
    b->admit_timeout_s = 300;
    b->backoff_base_s = 1;
    b->backoff_cap_s = 300;
    b->ready_timeout_s = 300;
    b->requeue_base_s = 60;
    b->requeue_cap_s = 1800;
    b->retell_s = 30;
}

void rf__follow_fini(rf__follow_t *f)
{
    free(f->gang);
    free(f->attempt);
    rf__binds_free(f->pods, f->n);
    memset(f, 0, sizeof *f);
}

void rf__preempt_fini(rf__preempt_t *p)
{
    for (int32_t i = 0; i < p->n; i++) {
        free(p->victims[i].ns);
        free(p->victims[i].name);
        free(p->victims[i].uid);
    }
    free(p->victims);
    free(p->gang);
    free(p->victim_gangs);
    memset(p, 0, sizeof *p);
}

void rf__binder_unevictable_add(rf__binder_t *b, const char *gang)
{
    double until = rf__now() + b->admit_timeout_s;
    pthread_mutex_lock(&b->mu);
    for (int32_t i = 0; i < b->n_unevictable; i++)
        if (strcmp(b->unevictable[i].gang, gang) == 0) {
            b->unevictable[i].until = until;
            pthread_mutex_unlock(&b->mu);
            return;
        }
    char *g = rf__grow_one((void **)&b->unevictable, b->n_unevictable, &b->cap_unevictable, sizeof *b->unevictable)
                  ? strdup(gang)
                  : NULL;
    if (g)
        b->unevictable[b->n_unevictable++] = (rf__hold_t){.gang = g, .until = until};
    pthread_mutex_unlock(&b->mu);
}

bool rf__binder_unevictable(void *binder, const char *gang)
{
    rf__binder_t *b = binder;
    double now = rf__now();
    bool yes = false;
    pthread_mutex_lock(&b->mu);
    for (int32_t i = 0; i < b->n_unevictable && !yes; i++)
        yes = strcmp(b->unevictable[i].gang, gang) == 0 && now < b->unevictable[i].until;
    pthread_mutex_unlock(&b->mu);
    return yes;
}

void rf__binder_fini(rf__binder_t *b)
{
    for (int32_t i = 0; i < b->n_follows; i++)
        rf__follow_fini(&b->follows[i]);
    free(b->follows);
    for (int32_t i = 0; i < b->n_bound; i++)
        rf__follow_fini(&b->bound[i]);
    free(b->bound);
    for (int32_t i = 0; i < b->n_holds; i++)
        free(b->holds[i].gang);
    free(b->holds);
    for (int32_t i = 0; i < b->n_told; i++)
        free(b->told[i].gang);
    free(b->told);
    for (int32_t i = 0; i < b->n_requeues; i++) {
        free(b->requeues[i].gang);
        free(b->requeues[i].why);
    }
    free(b->requeues);
    for (int32_t i = 0; i < b->n_busy; i++)
        free(b->busy[i]);
    free(b->busy);
    for (int32_t i = 0; i < b->n_preempts; i++)
        rf__preempt_fini(&b->preempts[i]);
    free(b->preempts);
    for (int32_t i = 0; i < b->n_unevictable; i++)
        free(b->unevictable[i].gang);
    free(b->unevictable);
    rf__limiter_fini(&b->lim);
    pthread_mutex_destroy(&b->mu);
    memset(b, 0, sizeof *b);
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

/* The runner's stop test: asked before every request starts and on every
 * turn of the batch loop, so it also says the binder is alive (a batch
 * waiting out Retry-After or the rate limit may take minutes). */
static bool s_stop_fn(void *ctx)
{
    rf__binder_t *b = ctx;
    if (b->heartbeat)
        atomic_store(b->heartbeat, rf__now());
    return s_lost(b);
}

rf__krun_t rf__binder_krun(rf__binder_t *b, rf__kmulti_t *multi)
{
    return (rf__krun_t){.multi = multi,
                        .lim = &b->lim,
                        .max_retries = b->max_retries,
                        .timeout_ms = b->timeout_ms,
                        .stop = s_stop_fn,
                        .stop_ctx = b,
                        .retries = &b->retries,
                        .throttled = &b->throttled};
}

/* ---- shared state (under mu) ----------------------------------------------------------------------------------- */

char *rf__pod_path(const char *ns, const char *name, const char *sub)
{
    rf__jw_t w;
    rf__jw_init(&w);
    rf__jw_printf(&w, "/api/v1/namespaces/%s/pods/%s%s%s", ns, name, sub ? "/" : "", sub ? sub : "");
    return rf__jw_take(&w, NULL);
}

char *rf__annotation_patch(const char *uid, const char *key, const char *value)
{
    rf__jw_t w;
    rf__jw_init(&w);
    rf__jw_puts(&w, "{\"metadata\":{");
    if (uid) {
        rf__jw_puts(&w, "\"uid\":");
        rf__jw_str(&w, uid);
        rf__jw_puts(&w, ",");
    }
    rf__jw_puts(&w, "\"annotations\":{");
    rf__jw_str(&w, key);
    rf__jw_puts(&w, ":");
    rf__jw_str(&w, value);
    rf__jw_puts(&w, "}}}");
    return rf__jw_take(&w, NULL);
}

static rf__hold_t *s_hold_find(rf__binder_t *b, const char *gang)
{
    for (int32_t i = 0; i < b->n_holds; i++)
        if (strcmp(b->holds[i].gang, gang) == 0)
            return &b->holds[i];
    return NULL;
}

static rf__requeue_t *s_requeue_find(rf__binder_t *b, const char *gang)
{
    for (int32_t i = 0; i < b->n_requeues; i++)
        if (strcmp(b->requeues[i].gang, gang) == 0)
            return &b->requeues[i];
    return NULL;
}

bool rf__binder_holds(void *binder, const char *gang)
{
    rf__binder_t *b = binder;
    double now = rf__now();
    bool held = false;
    pthread_mutex_lock(&b->mu);
    const rf__hold_t *h = s_hold_find(b, gang);
    const rf__requeue_t *r = s_requeue_find(b, gang);
    held = (h && now < h->until) || (r && (r->failed || now < r->until));
    for (int32_t i = 0; i < b->n_busy && !held; i++)
        held = strcmp(b->busy[i], gang) == 0;
    for (int32_t i = 0; i < b->n_bound && !held; i++)
        held = strcmp(b->bound[i].gang, gang) == 0;
    pthread_mutex_unlock(&b->mu);
    /* follows and preempts belong to the cycle thread, which is the one building plans */
    for (int32_t i = 0; i < b->n_follows && !held; i++)
        held = strcmp(b->follows[i].gang, gang) == 0;
    for (int32_t i = 0; i < b->n_preempts && !held; i++)
        held = strcmp(b->preempts[i].gang, gang) == 0;
    return held;
}

rf__held_why rf__binder_held_why(rf__binder_t *b, const char *gang)
{
    double now = rf__now();
    rf__held_why why = RF_HELD_NONE;
    pthread_mutex_lock(&b->mu);
    const rf__hold_t *h = s_hold_find(b, gang);
    const rf__requeue_t *r = s_requeue_find(b, gang);
    for (int32_t i = 0; i < b->n_busy && !why; i++)
        if (strcmp(b->busy[i], gang) == 0)
            why = RF_HELD_BINDING;
    for (int32_t i = 0; i < b->n_bound && !why; i++)
        if (strcmp(b->bound[i].gang, gang) == 0)
            why = RF_HELD_BINDING;
    if (!why && r && r->failed)
        why = RF_HELD_FAILED;
    else if (!why && ((h && now < h->until) || (r && now < r->until)))
        why = RF_HELD_BACKOFF;
    pthread_mutex_unlock(&b->mu);
    for (int32_t i = 0; i < b->n_follows && !why; i++)
        if (strcmp(b->follows[i].gang, gang) == 0)
            why = RF_HELD_BINDING;
    for (int32_t i = 0; i < b->n_preempts && !why; i++)
        if (strcmp(b->preempts[i].gang, gang) == 0)
            why = RF_HELD_BINDING; /* on its way: its victims are leaving */
    return why;
}

double rf__binder_next_due(rf__binder_t *b, double after)
{
    double next = 0;
    pthread_mutex_lock(&b->mu);
    for (int32_t i = 0; i < b->n_holds; i++)
        if (b->holds[i].until > after && (next == 0 || b->holds[i].until < next))
            next = b->holds[i].until;
    for (int32_t i = 0; i < b->n_requeues; i++)
        if (!b->requeues[i].failed && b->requeues[i].until > after && (next == 0 || b->requeues[i].until < next))
            next = b->requeues[i].until;
    for (int32_t i = 0; i < b->n_unevictable; i++) /* its end makes the victim preemptible again */
        if (b->unevictable[i].until > after && (next == 0 || b->unevictable[i].until < next))
            next = b->unevictable[i].until;
    pthread_mutex_unlock(&b->mu);
    return next;
}

void rf__binder_hold(rf__binder_t *b, const char *gang)
{
    pthread_mutex_lock(&b->mu);
    rf__hold_t *h = s_hold_find(b, gang);
    if (!h && rf__grow_one((void **)&b->holds, b->n_holds, &b->cap_holds, sizeof *b->holds)) {
        h = &b->holds[b->n_holds];
        *h = (rf__hold_t){.gang = strdup(gang)};
        if (h->gang)
            b->n_holds++;
        else
            h = NULL;
    }
    double wait = b->backoff_base_s;
    int failures = 0;
    if (h) {
        failures = ++h->failures;
        for (int i = 1; i < h->failures && wait < b->backoff_cap_s; i++)
            wait *= 2;
        if (wait > b->backoff_cap_s)
            wait = b->backoff_cap_s;
        h->until = rf__now() + wait;
    }
    pthread_mutex_unlock(&b->mu);
    if (h)
        rf__log(RF_LOG_INFO, "gang %s: held for %.1f s (failure %d)", gang, wait, failures);
}

void rf__binder_unhold(rf__binder_t *b, const char *gang)
{
    pthread_mutex_lock(&b->mu);
    rf__hold_t *h = s_hold_find(b, gang);
    if (h) {
        free(h->gang);
        *h = b->holds[--b->n_holds];
    }
    pthread_mutex_unlock(&b->mu);
}

static void s_requeue_set_until(rf__binder_t *b, rf__requeue_t *r)
{
    double wait = b->requeue_base_s;
    for (int i = 1; i < r->count && wait < b->requeue_cap_s; i++)
        wait *= 2;
    if (wait > b->requeue_cap_s)
        wait = b->requeue_cap_s;
    r->until = rf__now() + wait;
    r->until_wall = rf__wall() + wait;
}

static rf__requeue_t *s_requeue_get_or_add(rf__binder_t *b, const char *gang)
{
    rf__requeue_t *r = s_requeue_find(b, gang);
    if (r || !rf__grow_one((void **)&b->requeues, b->n_requeues, &b->cap_requeues, sizeof *b->requeues))
        return r;
    r = &b->requeues[b->n_requeues];
    *r = (rf__requeue_t){.gang = strdup(gang)};
    if (!r->gang)
        return NULL;
    b->n_requeues++;
    return r;
}

void rf__binder_requeue(rf__binder_t *b, const char *gang, const char *why, rf__requeue_t *out)
{
    pthread_mutex_lock(&b->mu);
    rf__requeue_t *r = s_requeue_get_or_add(b, gang);
    memset(out, 0, sizeof *out);
    if (r) {
        r->count++;
        r->failed = b->requeue_limit > 0 && r->count > b->requeue_limit;
        s_requeue_set_until(b, r);
        free(r->why);
        r->why = strdup(why ? why : "");
        *out = *r;
    }
    pthread_mutex_unlock(&b->mu);
    if (r && out->failed)
        atomic_fetch_add(&b->failed_gangs, 1);
    else if (r)
        atomic_fetch_add(&b->requeued, 1);
}

bool rf__binder_requeue_get(rf__binder_t *b, const char *gang, rf__requeue_t *out, char *why, size_t why_cap)
{
    pthread_mutex_lock(&b->mu);
    const rf__requeue_t *r = s_requeue_find(b, gang);
    if (r) {
        *out = *r;
        snprintf(why, why_cap, "%s", r->why ? r->why : "");
        out->gang = NULL;
        out->why = NULL;
    }
    pthread_mutex_unlock(&b->mu);
    return r != NULL;
}

void rf__binder_requeue_forget(rf__binder_t *b, const char *gang)
{
    pthread_mutex_lock(&b->mu);
    rf__requeue_t *r = s_requeue_find(b, gang);
    if (r) {
        free(r->gang);
        free(r->why);
        *r = b->requeues[--b->n_requeues];
    }
    pthread_mutex_unlock(&b->mu);
}

void rf__binder_requeue_restore(rf__binder_t *b, const char *gang, int count, double until_wall, bool failed)
{
    pthread_mutex_lock(&b->mu);
    rf__requeue_t *r = s_requeue_find(b, gang) ? NULL : s_requeue_get_or_add(b, gang);
    if (r) {
        r->count = count;
        r->failed = failed;
        r->until_wall = until_wall;
        r->until = rf__now() + (until_wall - rf__wall());
        r->why = strdup("restored from its annotation");
    }
    pthread_mutex_unlock(&b->mu);
}

void rf__binder_busy(rf__binder_t *b, const char *gang, int delta)
{
    pthread_mutex_lock(&b->mu);
    if (delta > 0 && rf__grow_one((void **)&b->busy, b->n_busy, &b->cap_busy, sizeof *b->busy)) {
        char *g = strdup(gang);
        if (g)
            b->busy[b->n_busy++] = g;
    } else if (delta < 0) {
        for (int32_t i = 0; i < b->n_busy; i++)
            if (strcmp(b->busy[i], gang) == 0) {
                free(b->busy[i]);
                b->busy[i] = b->busy[--b->n_busy];
                break;
            }
    }
    pthread_mutex_unlock(&b->mu);
}

rf__follow_t *rf__binder_take_bound(rf__binder_t *b, int32_t *n)
{
    pthread_mutex_lock(&b->mu);
    rf__follow_t *f = b->bound;
    *n = b->n_bound;
    b->bound = NULL;
    b->n_bound = b->cap_bound = 0;
    pthread_mutex_unlock(&b->mu);
    return f;
}

/* Hand a bound gang to the cycle thread (takes `pods`). */
static void s_hand_over(rf__binder_t *b, const char *gang, const char *attempt, rf__bind_t *pods, int32_t n,
                        double seen_at)
{
    rf__follow_t f = {
        .gang = strdup(gang), .attempt = strdup(attempt), .pods = pods, .n = n, .since = rf__now(), .seen_at = seen_at};
    pthread_mutex_lock(&b->mu);
    bool ok = f.gang && f.attempt && rf__grow_one((void **)&b->bound, b->n_bound, &b->cap_bound, sizeof *b->bound);
    if (ok)
        b->bound[b->n_bound++] = f;
    pthread_mutex_unlock(&b->mu);
    if (!ok) {
        rf__log(RF_LOG_ERROR, "gang %s: out of memory: bound, but not followed", gang);
        rf__follow_fini(&f);
    }
}

void rf__requeue_format(const rf__requeue_t *r, char *buf, size_t cap)
{
    char t[RF_KTIME_CAP];
    rf__ktime(r->until_wall, t, sizeof t);
    snprintf(buf, cap, "%d %s", r->count, r->failed ? "failed" : t);
}

bool rf__requeue_parse(const char *v, int *count, double *until_wall, bool *failed)
{
    char rest[64];
    int c = 0, n = 0;
    if (!v || sscanf(v, "%d %63s%n", &c, rest, &n) != 2 || v[n] != '\0' || c < 1)
        return false;
    *count = c;
    *failed = strcmp(rest, "failed") == 0;
    *until_wall = 0;
    return *failed || rf__ktime_parse(rest, until_wall);
}

/* ---- one attempt ----------------------------------------------------------------------------------------------- */

rf__readback_t rf__bind_readback(const char *uid, const char *node, const char *intent, const rf__bind_t *p,
                                 const char *want_intent)
{
    if (!uid || !node || !*node)
        return RF_RB_UNBOUND;
    if (strcmp(uid, p->uid) != 0)
        return intent && want_intent && strcmp(intent, want_intent) == 0 ? RF_RB_RECREATED : RF_RB_UNBOUND;
    if (strcmp(node, p->node) == 0 && intent && want_intent && strcmp(intent, want_intent) == 0)
        return RF_RB_OURS;
    return RF_RB_OTHER;
}

void rf__bind_intent_value(const char *attempt, const char *node, int size, char *buf, size_t cap)
{
    snprintf(buf, cap, "%s %s %d", attempt, node, size);
}

bool rf__bind_intent_parse(const char *v, char attempt[RF_ATTEMPT_CAP], char node[RF_NODE_NAME_CAP], int *size)
{
    const char *s1 = v ? strchr(v, ' ') : NULL, *s2 = s1 ? strchr(s1 + 1, ' ') : NULL;
    if (!s2 || s1 == v || s2 == s1 + 1 || (size_t)(s1 - v) >= RF_ATTEMPT_CAP ||
        (size_t)(s2 - s1 - 1) >= RF_NODE_NAME_CAP)
        return false;
    char *end;
    errno = 0;
    long n = strtol(s2 + 1, &end, 10);
    if (end == s2 + 1 || *end || errno || n < 1 || n > INT32_MAX || s2[1] == ' ' || s2[1] == '+' || s2[1] == '-')
        return false;
    memcpy(attempt, v, (size_t)(s1 - v));
    attempt[s1 - v] = '\0';
    memcpy(node, s1 + 1, (size_t)(s2 - s1 - 1));
    node[s2 - s1 - 1] = '\0';
    *size = (int)n;
    return true;
}

/* GET the pod from the server and rf__bind_readback() it against `p` and
 * this attempt's intent `want` (its node in `node` when bound, its uid
 * malloc'ed in *uid_now when RF_RB_RECREATED); -1 when the server could
 * not tell. */
static int s_get_node(rf__binder_t *b, const rf__bind_t *p, const char *want, char *node, size_t node_cap,
                      char **uid_now)
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
            ret = RF_RB_UNBOUND;
        if (r.status == 200) {
            rf__arena_t *a = rf__arena_new(0);
            rf_doc_t *doc = NULL;
            if (a && rf__kube_json(r.body, r.len, a, &doc, &err) == RF_OK) {
                const char *uid = rf__doc_str(doc, "metadata.uid"), *nn = rf__doc_str(doc, "spec.nodeName");
                const rf_doc_t *ann = rf__doc_at(doc, "metadata.annotations");
                const rf_doc_t *iv = ann && ann->type == RF_DOC_MAP ? rf__doc_get(ann, RF_ANN_INTENT) : NULL;
                const char *intent = iv && iv->type == RF_DOC_STR ? iv->u.s : NULL;
                ret = (int)rf__bind_readback(uid, nn, intent, p, want);
                if (ret != RF_RB_UNBOUND)
                    snprintf(node, node_cap, "%s", nn);
                if (ret == RF_RB_RECREATED && !(*uid_now = strdup(uid)))
                    ret = -1;
            }
            rf__arena_destroy(&a);
        }
        rf__kresp_fini(&r);
    }
    rf__kconn_destroy(&conn);
    return ret;
}

typedef struct {
    rf__binder_t *b;
    const rf__bind_t *pods;
    const char *attempt;
    int size;
    bool *other;    /* [i]: bound, but not by this attempt to its planned node: failed, and rolled back */
    char **uid_now; /* [i]: RF_RB_RECREATED: the uid of the pod bound in its place (deleted with it) */
} s_bind_ctx_t;

/* 201, or 409 because our own earlier (timed-out) request bound it there:
 * the pod must carry this attempt's intent (a late write of an attempt
 * rolled back earlier binds the same pod to the same node with its own). */
static bool s_accept_bind(void *ctx, int i, const rf__kcall_t *c)
{
    const s_bind_ctx_t *bc = ctx;
    if (c->resp.status == 201 || c->resp.status == 200)
        return true;
    if (c->resp.status != 409)
        return false;
    const rf__bind_t *p = &bc->pods[i];
    char key[512], want[RF_INTENT_CAP];
    rf__bind_intent_value(bc->attempt, p->node, bc->size, want, sizeof want);
    snprintf(key, sizeof key, "%s/%s", p->ns, p->name);
    rf__cache_lock(bc->b->cache);
    const rf__kpod_t *kp = rf__cache_get(bc->b->cache, RF_KIND_POD, key);
    int rb = kp ? (int)rf__bind_readback(kp->uid, kp->node_name, rf__kvs_get(&kp->annotations, RF_ANN_INTENT), p, want)
                : RF_RB_UNBOUND;
    rf__cache_unlock(bc->b->cache);
    if (rb != RF_RB_OURS) { /* the cache may lag: ask the server */
        char nn[RF_NODE_NAME_CAP];
        free(bc->uid_now[i]);
        bc->uid_now[i] = NULL;
        rb = s_get_node(bc->b, p, want, nn, sizeof nn, &bc->uid_now[i]);
    }
    if (rb == RF_RB_RECREATED) {
        rf__log(RF_LOG_WARN, "pod %s/%s was recreated and bound by this attempt (%s): deleted, rolled back", p->ns,
                p->name, bc->attempt);
        bc->other[i] = true;
    }
    if (rb == RF_RB_OTHER) {
        rf__log(RF_LOG_WARN, "pod %s/%s is bound, but not by this attempt (%s): rolled back", p->ns, p->name,
                bc->attempt);
        bc->other[i] = true;
    }
    return rb == RF_RB_OURS;
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

void rf__binder_assume(rf__binder_t *b, const rf__decision_t *d)
{
    rf__cache_lock(b->cache);
    for (int32_t i = 0; i < d->n_binds; i++) {
        char key[512];
        snprintf(key, sizeof key, "%s/%s", d->binds[i].ns, d->binds[i].name);
        rf__kpod_t *kp = rf__cache_get(b->cache, RF_KIND_POD, key);
        if (kp && strcmp(kp->uid, d->binds[i].uid) == 0 && !kp->node_name) {
            free(kp->assumed_node);
            kp->assumed_node = strdup(d->binds[i].node);
        }
    }
    rf__cache_unlock(b->cache);
}

int rf__binder_rollback(rf__binder_t *b, rf__kmulti_t *multi, const char *gang, const rf__bind_t *pods, int n,
                        const bool *sel)
{
    rf__kreq_t *reqs = calloc((size_t)n + 1, sizeof *reqs);
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
        reqs[m].path = rf__pod_path(pods[i].ns, pods[i].name, NULL);
        rf__jw_t w;
        rf__jw_init(&w);
        rf__jw_puts(&w, "{\"apiVersion\":\"v1\",\"kind\":\"DeleteOptions\",\"preconditions\":{\"uid\":");
        rf__jw_str(&w, pods[i].uid);
        rf__jw_puts(&w, "}}");
        reqs[m].body = rf__jw_take(&w, NULL);
        which[m++] = &pods[i];
    }
    if (m == 0)
        goto done;
    atomic_fetch_add(&b->rollbacks, 1);
    rf__krun_t run = rf__binder_krun(b, multi);
    failed = rf__krun(&run, "DELETE", "application/json", reqs, m, ok, NULL, rf__kaccept_gone, NULL, why, sizeof why);
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
    rf__kreqs_free(reqs, m);
    free(ok);
    free(which);
    return failed;
}

/* The binding of every pod, carrying the intent as the Binding's annotation
 * (`rackfit.io/bind-intent: "ATTEMPT NODE SIZE"`): the API server copies a
 * Binding's annotations onto the pod in the same write that sets its node,
 * so a pod is never bound without its attempt's intent; false on OOM. */
static bool s_bind_requests(const rf__decision_t *d, const char *attempt, rf__kreq_t *bind)
{
    int n = d->n_binds;
    for (int i = 0; i < n; i++) {
        const rf__bind_t *p = &d->binds[i];
        char val[RF_INTENT_CAP];
        rf__bind_intent_value(attempt, p->node, n, val, sizeof val);
        bind[i].path = rf__pod_path(p->ns, p->name, "binding");
        rf__jw_t w;
        rf__jw_init(&w);
        rf__jw_puts(&w, "{\"apiVersion\":\"v1\",\"kind\":\"Binding\",\"metadata\":{\"name\":");
        rf__jw_str(&w, p->name);
        rf__jw_puts(&w, ",\"namespace\":");
        rf__jw_str(&w, p->ns);
        rf__jw_puts(&w, ",\"uid\":");
        rf__jw_str(&w, p->uid);
        rf__jw_puts(&w, ",\"annotations\":{");
        rf__jw_str(&w, RF_ANN_INTENT);
        rf__jw_puts(&w, ":");
        rf__jw_str(&w, val);
        rf__jw_puts(&w, "}},\"target\":{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"name\":");
        rf__jw_str(&w, p->node);
        rf__jw_puts(&w, "}}");
        bind[i].body = rf__jw_take(&w, NULL);
        if (!bind[i].path || !bind[i].body)
            return false;
    }
    return true;
}

/* Bindings whose last answer was a timeout or a 5xx may have been applied:
 * ask the server. A pod bound by this attempt to its planned node counts as
 * bound; one bound otherwise (another node, another attempt's intent) stays
 * failed but is selected in ok[] so the rollback deletes it. Returns how
 * many are still failed. */
static int s_settle_unsure(rf__binder_t *b, rf__decision_t *d, const char *attempt, bool *ok, const bool *unsure,
                           int failed)
{
    for (int i = 0; i < d->n_binds && failed; i++) {
        char nn[RF_NODE_NAME_CAP], want[RF_INTENT_CAP];
        if (ok[i] || !unsure[i])
            continue;
        rf__bind_intent_value(attempt, d->binds[i].node, d->n_binds, want, sizeof want);
        char *uid_now = NULL;
        int rb = s_get_node(b, &d->binds[i], want, nn, sizeof nn, &uid_now);
        if (rb == RF_RB_RECREATED) {
            /* another pod of that name, bound by this attempt: deleted with its own uid */
            rf__log(RF_LOG_WARN, "gang %s: pod %s/%s was recreated and bound by this attempt: rolled back", d->gang,
                    d->binds[i].ns, d->binds[i].name);
            free(d->binds[i].uid);
            d->binds[i].uid = uid_now;
            ok[i] = true;
        } else if (rb == RF_RB_OURS) {
            rf__log(RF_LOG_INFO, "gang %s: pod %s/%s was bound although its binding failed", d->gang, d->binds[i].ns,
                    d->binds[i].name);
            ok[i] = true;
            failed--;
        } else if (rb == RF_RB_OTHER) {
            /* bound, but not as this attempt planned: not counted, selected so the rollback deletes it */
            char *node = strdup(nn);
            if (!node)
                continue;
            free(d->binds[i].node);
            d->binds[i].node = node;
            rf__log(RF_LOG_WARN, "gang %s: pod %s/%s is bound to %s, not by this attempt: rolled back", d->gang,
                    d->binds[i].ns, d->binds[i].name, nn);
            ok[i] = true;
        }
    }
    return failed;
}

rf_status rf__bind_gang(rf__binder_t *b, rf__kmulti_t *multi, rf__decision_t *d, double seen_at, char *why,
                        size_t why_cap)
{
    int n = d->n_binds;
    why[0] = '\0';
    if (n == 0) {
        rf__binder_unhold(b, d->gang);
        return RF_OK;
    }
    if (s_lost(b)) {
        snprintf(why, why_cap, "the lease was lost");
        return RF_EBUSY;
    }
    char attempt[RF_ATTEMPT_CAP];
    snprintf(attempt, sizeof attempt, "%s.%lld.%lu", b->identity, (long long)(rf__wall() * 1000),
             atomic_fetch_add(&b->attempt_seq, 1) + 1);
    rf__kreq_t *bind = calloc((size_t)n, sizeof *bind);
    bool *ok = calloc((size_t)n, sizeof *ok), *unsure = calloc((size_t)n, sizeof *unsure);
    bool *other = calloc((size_t)n, sizeof *other);
    char **uid_now = calloc((size_t)n, sizeof *uid_now);
    rf_status rc = RF_EIO;
    rf__krun_t run = rf__binder_krun(b, multi);
    if (!bind || !ok || !unsure || !other || !uid_now || !s_bind_requests(d, attempt, bind)) {
        snprintf(why, why_cap, "out of memory");
        rc = RF_ENOMEM;
        goto done;
    }
    /* the bindings, each carrying the intent (no request of its own) */
    double t1 = rf__now();
    s_bind_ctx_t bc = {.b = b, .pods = d->binds, .attempt = attempt, .size = n, .other = other, .uid_now = uid_now};
    int failed = rf__krun(&run, "POST", "application/json", bind, n, ok, unsure, s_accept_bind, &bc, why, why_cap);
    for (int i = 0; i < n; i++)
        if (other[i] && !ok[i]) {
            ok[i] = true; /* failed, but bound: the rollback deletes it (`failed` keeps counting it) */
            unsure[i] = false;
            if (uid_now[i]) { /* a recreated pod: deleted with its own uid */
                free(d->binds[i].uid);
                d->binds[i].uid = uid_now[i];
                uid_now[i] = NULL;
            }
        }
    failed = s_settle_unsure(b, d, attempt, ok, unsure, failed);
    for (int i = 0; i < n; i++) /* bound pods take their node's capacity; the others give theirs back */
        s_set_assumed(b, &d->binds[i], ok[i]);
    if (failed == 0) {
        atomic_fetch_add(&b->binds_ok, n);
        atomic_fetch_add(&b->gangs_bound, 1);
        if (b->on_bound && seen_at > 0)
            b->on_bound(b->on_bound_ctx, rf__now() - seen_at);
        rf__log(RF_LOG_INFO, "gang %s: bound %d pods (attempt %s): bindings %.1f ms", d->gang, n, attempt,
                (rf__now() - t1) * 1e3);
        s_hand_over(b, d->gang, attempt, d->binds, n, seen_at);
        d->binds = NULL; /* handed over */
        d->n_binds = 0;
        rc = RF_OK;
        goto done;
    }
    atomic_fetch_add(&b->binds_failed, 1);
    rf__log(RF_LOG_WARN, "gang %s: %d of %d bindings failed: %s", d->gang, failed, n, why);
    if (s_lost(b))
        goto done; /* the successor rolls back from the intents */
    rf__binder_rollback(b, multi, d->gang, d->binds, n, ok);
    rf__binder_hold(b, d->gang);
done:
    rf__kreqs_free(bind, bind ? n : 0);
    free(ok);
    free(unsure);
    free(other);
    for (int i = 0; uid_now && i < n; i++)
        free(uid_now[i]);
    free(uid_now);
    return rc;
}
