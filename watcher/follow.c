/* watcher/follow.c: admission, readiness, eviction and requeue of bound gangs (see follow.h). */
#include "follow.h"
#include "grow.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jw.h"
#include "ktime.h"
#include "log.h"
#include "tell.h"

double rf__gang_ready_timeout(rf__binder_t *b, const char *gang, const rf__bind_t *pods, int32_t n)
{
    const char *v = NULL;
    const char *slash = strchr(gang, '/');
    for (int32_t i = 0; i < n && !v; i++) {
        char key[512];
        snprintf(key, sizeof key, "%s/%s", pods[i].ns, pods[i].name);
        const rf__kpod_t *p = rf__cache_get(b->cache, RF_KIND_POD, key);
        const char *pg = p ? rf__kvs_get(&p->labels, RF_LABEL_POD_GROUP) : NULL;
        if (pg && slash && strcmp(pg, slash + 1) == 0) {
            const rf__kpodgroup_t *g = rf__cache_get(b->cache, RF_KIND_PODGROUP, gang);
            v = g ? rf__kvs_get(&g->annotations, RF_ANN_READY_TIMEOUT) : NULL;
        }
        if (!v && p)
            v = rf__kvs_get(&p->annotations, RF_ANN_READY_TIMEOUT);
    }
    double s = b->ready_timeout_s;
    if (v && !rf__duration_parse(v, &s)) {
        rf__log(RF_LOG_WARN, "gang %s: annotation %s: `%s` is not a duration (like 90s or 5m): using %.0f s", gang,
                RF_ANN_READY_TIMEOUT, v, b->ready_timeout_s);
        s = b->ready_timeout_s;
    }
    return s;
}

void rf__follow_add(rf__binder_t *b, const char *gang, const char *attempt, const rf__bind_t *pods, int32_t n,
                    double since)
{
    if (!rf__grow_one((void **)&b->follows, b->n_follows, &b->cap_follows, sizeof *b->follows))
        return;
    rf__follow_t f = {
        .gang = strdup(gang), .attempt = strdup(attempt), .pods = rf__binds_copy(pods, n), .n = n, .since = since};
    if (!f.gang || !f.attempt || !f.pods) {
        rf__follow_fini(&f);
        return;
    }
    rf__cache_lock(b->cache);
    f.ready_timeout_s = rf__gang_ready_timeout(b, gang, pods, n);
    rf__cache_unlock(b->cache);
    b->follows[b->n_follows++] = f;
}

/* What the cache says of a followed gang's pods. */
typedef struct {
    int admitted, ready, gone, failed;
    char bad[600]; /* the first pod gone or failed, for people */
} s_look_t;

/* s_look: a followed pod whose name now holds another uid bound by this
 * attempt (rf__follow_recreated_ours) is taken as the followed pod (its
 * uid), counted gone, and alive: the rollback or eviction the gone pod
 * starts removes it with its own uid. */
bool rf__follow_recreated_ours(const char *attempt, const rf__kpod_t *p)
{
    const char *v = rf__kvs_get(&p->annotations, RF_ANN_INTENT);
    size_t n = strlen(attempt);
    return p->node_name && !p->deleting && v && strncmp(v, attempt, n) == 0 && v[n] == ' ';
}

static void s_look(rf__binder_t *b, rf__follow_t *f, s_look_t *l, bool *alive)
{
    memset(l, 0, sizeof *l);
    rf__cache_lock(b->cache);
    for (int32_t k = 0; k < f->n; k++) {
        char key[512];
        snprintf(key, sizeof key, "%s/%s", f->pods[k].ns, f->pods[k].name);
        const rf__kpod_t *p = rf__cache_get(b->cache, RF_KIND_POD, key);
        alive[k] = false;
        if (p && strcmp(p->uid, f->pods[k].uid) != 0 && rf__follow_recreated_ours(f->attempt, p)) {
            char *uid = strdup(p->uid);
            if (uid) {
                rf__log(RF_LOG_WARN,
                        "gang %s: pod %s was recreated (uid %s, was %s) and bound by this attempt: deleted", f->gang,
                        key, p->uid, f->pods[k].uid);
                free(f->pods[k].uid);
                f->pods[k].uid = uid;
                alive[k] = true;
            }
            if (!l->gone++ && !l->failed)
                snprintf(l->bad, sizeof l->bad, "pod %s was recreated while it was bound", key);
        } else if (!p || strcmp(p->uid, f->pods[k].uid) != 0 || p->deleting) {
            if (!l->gone++ && !l->failed)
                snprintf(l->bad, sizeof l->bad, "pod %s went away", key);
        } else if (strcmp(p->phase, "Failed") == 0) {
            if (!l->failed++ && !l->gone) /* before admission a failed pod is one its kubelet rejected */
                snprintf(l->bad, sizeof l->bad,
                         f->admitted_at > 0 ? "pod %s failed: %s" : "the kubelet rejected pod %s: %s", key,
                         p->reason[0] ? p->reason : "Failed");
            /* a failed pod holds nothing: eviction is for the others */
        } else {
            bool succeeded = strcmp(p->phase, "Succeeded") == 0;
            alive[k] = !succeeded;
            if (succeeded || strcmp(p->phase, "Running") == 0 || (p->started && p->node_name))
                l->admitted++;
            if (succeeded || p->ready) /* a pod that finished is not "not ready" */
                l->ready++;
        }
    }
    rf__cache_unlock(b->cache);
}

static void s_submit_rollback(rf__binder_t *b, rf__pool_t *pool, const rf__follow_t *f, const char *why)
{
    rf__job_t *j = rf__job_new(RF_JOB_ROLLBACK, f->gang);
    if (j && (j->pods = rf__binds_copy(f->pods, f->n)) && (j->why = strdup(why))) {
        j->n = f->n;
        rf__binder_hold(b, f->gang);
        rf__pool_submit(pool, j);
        return;
    }
    rf__job_free(&j);
}

static void s_submit_evict(rf__binder_t *b, rf__pool_t *pool, const rf__follow_t *f, const bool *alive, const char *why)
{
    rf__job_t *j = rf__job_new(RF_JOB_EVICT, f->gang);
    if (!j || !(j->pods = calloc((size_t)f->n + 1, sizeof *j->pods)) || !(j->why = strdup(why))) {
        rf__job_free(&j);
        return;
    }
    for (int32_t k = 0; k < f->n; k++) { /* the live pods: gone and failed ones hold nothing */
        if (!alive[k])
            continue;
        rf__bind_t *one = rf__binds_copy(&f->pods[k], 1);
        if (!one)
            continue;
        j->pods[j->n++] = one[0];
        free(one);
    }
    rf__binder_requeue(b, f->gang, why, &j->rq);
    j->rq.gang = NULL;
    j->rq.why = NULL;
    rf__pool_submit(pool, j);
}

/* Check one followed gang: true when it is done with (finished or handed to the pool). */
static bool s_check(rf__binder_t *b, rf__pool_t *pool, rf__follow_t *f)
{
    bool *alive = calloc((size_t)f->n + 1, sizeof *alive);
    if (!alive)
        return false;
    s_look_t l;
    s_look(b, f, &l, alive);
    double now = rf__now();
    char why[800];
    bool done = false;
    if (f->admitted_at == 0 && (l.gone || l.failed)) {
        snprintf(why, sizeof why, "%s%s", l.bad, l.gone ? " before the kubelet admitted it" : "");
        s_submit_rollback(b, pool, f, why);
        done = true;
    } else if (f->admitted_at == 0 && l.admitted < f->n && now - f->since > b->admit_timeout_s) {
        snprintf(why, sizeof why, "%d of %d pods not admitted by their kubelets after %.0f s", f->n - l.admitted, f->n,
                 b->admit_timeout_s);
        s_submit_rollback(b, pool, f, why);
        done = true;
    } else if (f->admitted_at == 0 && l.admitted == f->n) {
        f->admitted_at = now;
        rf__binder_unhold(b, f->gang);
        rf__log(RF_LOG_INFO, "gang %s: every pod admitted by its kubelet", f->gang);
        done = f->ready_timeout_s <= 0;
    }
    if (!done && f->admitted_at > 0) {
        if (l.ready == f->n) {
            rf__log(RF_LOG_INFO, "gang %s: every pod ready", f->gang);
            rf__binder_requeue_forget(b, f->gang);
            done = true;
        } else if (l.gone || l.failed) {
            snprintf(why, sizeof why, "%s while the gang was starting (%d of %d pods lost): the rest is evicted", l.bad,
                     l.gone + l.failed, f->n);
            s_submit_evict(b, pool, f, alive, why);
            done = true;
        } else if (now - f->since > f->ready_timeout_s) {
            snprintf(why, sizeof why, "%d of %d pods not ready within %g s of binding", f->n - l.ready, f->n,
                     f->ready_timeout_s);
            s_submit_evict(b, pool, f, alive, why);
            done = true;
        }
    }
    free(alive);
    return done;
}

void rf__binder_follow(rf__binder_t *b, rf__pool_t *pool)
{
    int32_t nb = 0;
    rf__follow_t *bound = rf__binder_take_bound(b, &nb);
    for (int32_t i = 0; i < nb; i++) {
        rf__follow_add(b, bound[i].gang, bound[i].attempt, bound[i].pods, bound[i].n, bound[i].since);
        rf__follow_fini(&bound[i]);
    }
    free(bound);
    for (int32_t i = 0; i < b->n_follows;) {
        if (rf__binder_stopped(b))
            return; /* the successor deals with it from the intents */
        if (!s_check(b, pool, &b->follows[i])) {
            i++;
            continue;
        }
        rf__follow_fini(&b->follows[i]);
        b->follows[i] = b->follows[--b->n_follows];
        b->released++;
    }
}

/* ---- eviction -------------------------------------------------------------------------------------------------- */

static char *s_eviction(const rf__bind_t *p, const char *version)
{
    rf__jw_t w;
    rf__jw_init(&w);
    rf__jw_printf(&w, "{\"apiVersion\":\"%s\",\"kind\":\"Eviction\",\"metadata\":{\"name\":", version);
    rf__jw_str(&w, p->name);
    rf__jw_puts(&w, ",\"namespace\":");
    rf__jw_str(&w, p->ns);
    rf__jw_puts(&w, "},\"deleteOptions\":{\"preconditions\":{\"uid\":");
    rf__jw_str(&w, p->uid);
    rf__jw_puts(&w, "}}}");
    return rf__jw_take(&w, NULL);
}

/* Accept what leaves the pod gone; a 400 or 404 naming the Eviction kind
 * (a server without policy/v1) is marked for the v1beta1 retry, and the
 * binder remembers it (no_policy_v1): later evictions go as v1beta1 at once. */
typedef struct {
    bool *old_api; /* NULL: the v1beta1 retry itself */
    int last;      /* the last answer's HTTP status (0: none) */
} s_evict_ctx_t;

static bool s_accept_evict(void *ctx, int i, const rf__kcall_t *c)
{
    s_evict_ctx_t *e = ctx;
    e->last = c->resp.status;
    if (!e->old_api)
        return rf__kaccept_gone(NULL, i, c);
    const char *body = c->resp.body ? c->resp.body : "";
    if ((c->resp.status == 400 || c->resp.status == 404) && strstr(body, "policy/v1") && strstr(body, "Eviction")) {
        e->old_api[i] = true;
        return false;
    }
    return rf__kaccept_gone(NULL, i, c);
}

/* Evict pods[0, n); returns how many failed. *last (may be NULL) gets the
 * last answer's HTTP status, 0 when none came (telling, for n == 1, a
 * refusal such as a PodDisruptionBudget's 429 from a request never answered). */
static int s_evict_pods(rf__binder_t *b, rf__kmulti_t *multi, const rf__bind_t *pods, int32_t n, char *why,
                        size_t why_cap, int *last)
{
    rf__kreq_t *reqs = calloc((size_t)n + 1, sizeof *reqs);
    bool *ok = calloc((size_t)n + 1, sizeof *ok), *old = calloc((size_t)n + 1, sizeof *old);
    int failed = n;
    s_evict_ctx_t ec = {.old_api = old};
    if (!reqs || !ok || !old)
        goto done;
    for (int32_t i = 0; i < n; i++) {
        reqs[i].path = rf__pod_path(pods[i].ns, pods[i].name, "eviction");
        reqs[i].body = s_eviction(&pods[i], atomic_load(&b->no_policy_v1) ? "policy/v1beta1" : "policy/v1");
    }
    rf__krun_t run = rf__binder_krun(b, multi);
    failed = rf__krun(&run, "POST", "application/json", reqs, n, ok, NULL, s_accept_evict, &ec, why, why_cap);
    rf__kreq_t *again = calloc((size_t)n + 1, sizeof *again);
    int m = 0;
    for (int32_t i = 0; again && i < n; i++)
        if (old[i]) { /* policy/v1beta1 for servers before 1.22 */
            again[m].path = reqs[i].path;
            reqs[i].path = NULL;
            again[m++].body = s_eviction(&pods[i], "policy/v1beta1");
        }
    if (m) {
        if (!atomic_exchange(&b->no_policy_v1, 1))
            rf__log(RF_LOG_INFO, "the API server has no policy/v1 Eviction: using policy/v1beta1 from now on");
        why[0] = '\0';
        failed -= m;
        s_evict_ctx_t ec2 = {0};
        failed += rf__krun(&run, "POST", "application/json", again, m, ok, NULL, s_accept_evict, &ec2, why, why_cap);
        ec.last = ec2.last;
    }
    if (last)
        *last = ec.last;
    rf__kreqs_free(again, m);
done:
    rf__kreqs_free(reqs, n);
    free(ok);
    free(old);
    return failed;
}

/* The requeue annotation on the gang's PodGroup (gangs of other kinds have
 * none: their pods carry it, tell.h). */
static void s_annotate_podgroup(rf__binder_t *b, rf__kmulti_t *multi, const char *gang, const char *value)
{
    const char *slash = strchr(gang, '/');
    rf__cache_lock(b->cache);
    bool has = slash && !strstr(gang, "/pod:") && rf__cache_get(b->cache, RF_KIND_PODGROUP, gang) != NULL;
    rf__cache_unlock(b->cache);
    if (!has)
        return;
    rf__kreq_t req = {0};
    rf__jw_t w;
    rf__jw_init(&w);
    rf__jw_printf(&w, "/apis/scheduling.x-k8s.io/v1alpha1/namespaces/%.*s/podgroups/%s", (int)(slash - gang), gang,
                  slash + 1);
    req.path = rf__jw_take(&w, NULL);
    req.body = rf__annotation_patch(NULL, RF_ANN_REQUEUE, value);
    bool ok = false;
    char why[512] = "";
    rf__krun_t run = rf__binder_krun(b, multi);
    if (req.path && req.body &&
        rf__krun(&run, "PATCH", "application/merge-patch+json", &req, 1, &ok, NULL, rf__kaccept_2xx, NULL, why,
                 sizeof why))
        rf__log(RF_LOG_WARN, "gang %s: the PodGroup's %s annotation: %s", gang, RF_ANN_REQUEUE, why);
    free(req.path);
    free(req.body);
}

int rf__binder_evict(rf__binder_t *b, rf__kmulti_t *multi, const char *gang, const rf__bind_t *pods, int32_t n,
                     const char *why, const rf__requeue_t *rq)
{
    char value[96], next[RF_KTIME_CAP], message[1400];
    rf__requeue_format(rq, value, sizeof value);
    rf__ktime(rq->until_wall, next, sizeof next);
    if (rq->count == 0) /* a preemption: `why` names the gangs it makes room for */
        snprintf(message, sizeof message, "rackfit: gang %s: %s: evicted whole", gang, why);
    else if (rq->failed)
        snprintf(message, sizeof message,
                 "rackfit: gang %s: %s: evicted whole; it has been evicted %d times (requeue limit %d): the gang "
                 "has failed and is not placed again",
                 gang, why, rq->count, b->requeue_limit);
    else
        snprintf(message, sizeof message, "rackfit: gang %s: %s: evicted whole; requeue %d, next try at %s", gang, why,
                 rq->count, next);
    rf__log(RF_LOG_WARN, "%s", message);
    char err[512] = "";
    int failed = 0;
    if (rq->count == 0 && n > 0) { /* a victim: its first pod alone, so a refusal leaves the gang whole */
        int last = 0;
        failed = s_evict_pods(b, multi, pods, 1, err, sizeof err, &last);
        if (failed && last >= 400) { /* refused (a PodDisruptionBudget's 429): solved again without it */
            rf__log(RF_LOG_WARN,
                    "gang %s: the eviction of its first pod was refused (%s): the gang is kept whole and "
                    "not preempted for a while",
                    gang, err);
            rf__binder_unevictable_add(b, gang);
        }
        if (failed) { /* unanswered too (stopping, the server away): kept whole; the preemptor waits its timeout */
            rf__log(RF_LOG_WARN, "gang %s: its first pod was not evicted (%s): none of its other pods is", gang, err);
            return n;
        }
        atomic_fetch_add(&b->evictions, 1);
        failed = n > 1 ? s_evict_pods(b, multi, pods + 1, n - 1, err, sizeof err, NULL) : 0;
        atomic_fetch_add(&b->evictions, n - 1 - failed);
    } else {
        failed = n ? s_evict_pods(b, multi, pods, n, err, sizeof err, NULL) : 0;
        atomic_fetch_add(&b->evictions, n - failed);
    }
    if (failed)
        rf__log(RF_LOG_ERROR, "gang %s: %d of %d evictions failed: %s", gang, failed, n, err);
    rf__kreq_t *ev = calloc((size_t)n + 1, sizeof *ev);
    bool *ok = calloc((size_t)n + 1, sizeof *ok);
    for (int32_t i = 0; ev && ok && i < n; i++) {
        rf__jw_t w;
        rf__jw_init(&w);
        rf__jw_printf(&w, "/api/v1/namespaces/%s/events", pods[i].ns);
        ev[i].path = rf__jw_take(&w, NULL);
        ev[i].body = rf__event_body(b, pods[i].ns, pods[i].name, pods[i].uid, "Warning",
                                    rq->count == 0 ? "Preempted"
                                    : rq->failed   ? "GangFailed"
                                                   : "GangEvicted",
                                    message);
    }
    if (ev && ok && n) {
        rf__krun_t run = rf__binder_krun(b, multi);
        err[0] = '\0';
        int bad = rf__krun(&run, "POST", "application/json", ev, n, ok, NULL, rf__kaccept_2xx, NULL, err, sizeof err);
        atomic_fetch_add(&b->events, n - bad);
        if (bad)
            rf__log(RF_LOG_WARN, "gang %s: %d events failed: %s", gang, bad, err);
    }
    rf__kreqs_free(ev, ev ? n : 0);
    free(ok);
    if (rq->count > 0)
        s_annotate_podgroup(b, multi, gang, value);
    return failed;
}
