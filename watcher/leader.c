/* watcher/leader.c: Lease-based leader election (see leader.h). */
#include "leader.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "binder.h"
#include "jw.h"
#include "ktime.h"
#include "log.h"

static char *s_body(const rf__leader_t *l, const char *rv, const char *holder, const char *acquire, int transitions)
{
    char now[RF_KTIME_CAP];
    rf__microtime(rf__wall(), now, sizeof now);
    rf__jw_t w;
    rf__jw_init(&w);
    rf__jw_puts(&w, "{\"apiVersion\":\"coordination.k8s.io/v1\",\"kind\":\"Lease\",\"metadata\":{\"name\":");
    rf__jw_str(&w, l->name);
    rf__jw_puts(&w, ",\"namespace\":");
    rf__jw_str(&w, l->ns);
    if (rv) {
        rf__jw_puts(&w, ",\"resourceVersion\":");
        rf__jw_str(&w, rv);
    }
    rf__jw_puts(&w, "},\"spec\":{\"holderIdentity\":");
    rf__jw_str(&w, holder);
    rf__jw_printf(&w, ",\"leaseDurationSeconds\":%d,\"acquireTime\":", l->lease_s);
    rf__jw_str(&w, acquire ? acquire : now);
    rf__jw_puts(&w, ",\"renewTime\":");
    rf__jw_str(&w, now);
    rf__jw_printf(&w, ",\"leaseTransitions\":%d}}", transitions);
    return rf__jw_take(&w, NULL);
}

bool rf__leader_lost(const rf__leader_t *l)
{
    double until = atomic_load(&l->valid_until);
    return l->lost || (l->leading && until > 0 && rf__now() > until);
}

/* A request's timeout: 5 s, but never past the renew deadline while leading. */
static long s_timeout_ms(const rf__leader_t *l)
{
    double until = atomic_load(&l->valid_until);
    if (!l->leading || until <= 0)
        return 5000;
    double left = (until - rf__now()) * 1e3;
    return left >= 5000 ? 5000 : left >= 1 ? (long)left : 1;
}

int rf__leader_try(rf__leader_t *l, rf__kconn_t *conn, char *observed, size_t observed_cap, double *observed_at)
{
    char path[512];
    snprintf(path, sizeof path, "/apis/coordination.k8s.io/v1/namespaces/%s/leases/%s", l->ns, l->name);
    rf__kresp_t r;
    rf_error_t err;
    if (rf__kube_call(conn, "GET", path, NULL, NULL, s_timeout_ms(l), &r, &err) != RF_OK) {
        rf__log(RF_LOG_WARN, "lease %s/%s: %s", l->ns, l->name, err.message);
        return 0;
    }
    int held = 0;
    if (r.status == 404) {
        rf__kresp_fini(&r);
        char *body = s_body(l, NULL, l->identity, NULL, 0);
        char cpath[512];
        snprintf(cpath, sizeof cpath, "/apis/coordination.k8s.io/v1/namespaces/%s/leases", l->ns);
        if (body && rf__kube_call(conn, "POST", cpath, "application/json", body, s_timeout_ms(l), &r, &err) == RF_OK) {
            held = r.status == 201 || r.status == 200;
            rf__kresp_fini(&r);
        }
        free(body);
        return held;
    }
    if (r.status != 200) {
        rf__log(RF_LOG_WARN, "lease %s/%s: HTTP %ld", l->ns, l->name, r.status);
        rf__kresp_fini(&r);
        return 0;
    }
    rf__arena_t *a = rf__arena_new(0);
    rf_doc_t *doc = NULL;
    if (!a || rf__kube_json(r.body, r.len, a, &doc, &err) != RF_OK) {
        rf__arena_destroy(&a);
        rf__kresp_fini(&r);
        return 0;
    }
    rf__kresp_fini(&r);
    const char *rv = rf__doc_str(doc, "metadata.resourceVersion");
    const char *holder = rf__doc_str(doc, "spec.holderIdentity");
    const char *renew = rf__doc_str(doc, "spec.renewTime");
    const char *acquire = rf__doc_str(doc, "spec.acquireTime");
    const rf_doc_t *dur = rf__doc_at(doc, "spec.leaseDurationSeconds");
    const rf_doc_t *tr = rf__doc_at(doc, "spec.leaseTransitions");
    int transitions = tr && tr->type == RF_DOC_INT ? (int)tr->u.i : 0;
    double duration = dur && dur->type == RF_DOC_INT ? (double)dur->u.i : l->lease_s;
    /* what we saw, to tell expiry on our own clock (clocks across machines disagree) */
    char seen[512];
    snprintf(seen, sizeof seen, "%s|%s", holder ? holder : "", renew ? renew : "");
    if (strcmp(seen, observed) != 0) {
        snprintf(observed, observed_cap, "%s", seen);
        *observed_at = rf__now();
    }
    bool mine = holder && strcmp(holder, l->identity) == 0;
    bool free_ = !holder || !*holder;
    bool expired = rf__now() - *observed_at > duration;
    if (mine || free_ || expired) {
        char *body = s_body(l, rv, l->identity, mine ? acquire : NULL, mine ? transitions : transitions + 1);
        if (body && rf__kube_call(conn, "PUT", path, "application/json", body, s_timeout_ms(l), &r, &err) == RF_OK) {
            held = r.status == 200;
            if (r.status == 409)
                rf__log(RF_LOG_DEBUG, "lease %s/%s: lost the race to update it", l->ns, l->name);
            rf__kresp_fini(&r);
        }
        free(body);
        if (held && !mine)
            atomic_fetch_add(&l->transitions, 1);
        if (held && !mine && !free_) {
            /* taken from a holder that stopped renewing: its last requests may still land */
            atomic_store(&l->recover_after, rf__now() + l->settle_s);
            rf__log(RF_LOG_INFO, "lease %s/%s: taken over from %s, whose lease expired", l->ns, l->name, holder);
        }
    } else {
        held = -1; /* another watcher holds it */
    }
    rf__arena_destroy(&a);
    return held;
}

static void s_release(rf__leader_t *l, rf__kconn_t *conn)
{
    char path[512];
    snprintf(path, sizeof path, "/apis/coordination.k8s.io/v1/namespaces/%s/leases/%s", l->ns, l->name);
    rf__kresp_t r;
    rf_error_t err;
    if (rf__kube_call(conn, "GET", path, NULL, NULL, 3000, &r, &err) != RF_OK)
        return;
    rf__arena_t *a = rf__arena_new(0);
    rf_doc_t *doc = NULL;
    if (r.status == 200 && a && rf__kube_json(r.body, r.len, a, &doc, &err) == RF_OK) {
        const char *holder = rf__doc_str(doc, "spec.holderIdentity");
        const char *rv = rf__doc_str(doc, "metadata.resourceVersion");
        const rf_doc_t *tr = rf__doc_at(doc, "spec.leaseTransitions");
        if (holder && strcmp(holder, l->identity) == 0) {
            char *body = s_body(l, rv, "", NULL, tr && tr->type == RF_DOC_INT ? (int)tr->u.i : 0);
            rf__kresp_t r2;
            if (body && rf__kube_call(conn, "PUT", path, "application/json", body, 3000, &r2, &err) == RF_OK)
                rf__kresp_fini(&r2);
            free(body);
        }
    }
    rf__arena_destroy(&a);
    rf__kresp_fini(&r);
}

void *rf__leader_run(void *arg)
{
    rf__leader_t *l = arg;
    rf__kconn_t *conn = rf__kconn_new(l->kube);
    char observed[512] = "";
    double observed_at = rf__now();
    if (!conn)
        return NULL;
    while (!*l->stop && !l->lost) {
        double t_try = rf__now(); /* a renewal counts from when it began */
        int held = rf__leader_try(l, conn, observed, sizeof observed, &observed_at);
        /* past the deadline, the binder has stopped (it asks rf__leader_lost): lost for good,
         * even if this late renewal succeeded */
        bool late = l->leading && rf__leader_lost(l);
        if (held > 0 && !late) {
            atomic_store(&l->valid_until, t_try + l->renew_deadline_s);
            if (!l->leading) {
                rf__log(RF_LOG_INFO, "leading: lease %s/%s is ours (%s)", l->ns, l->name, l->identity);
                l->leading = 1;
            }
        } else if (l->leading && (held < 0 || late)) {
            rf__log(RF_LOG_ERROR, "lost the lease %s/%s: %s; binding stops", l->ns, l->name,
                    held < 0 ? "another watcher holds it" : "not renewed within the renew deadline");
            l->lost = 1;
            l->leading = 0;
            break;
        }
        double until = rf__now() + l->retry_s;
        while (!*l->stop && rf__now() < until) {
            struct timespec ts = {.tv_sec = 0, .tv_nsec = 20 * 1000 * 1000};
            nanosleep(&ts, NULL);
        }
    }
    if (l->leading && *l->stop && !rf__leader_lost(l)) /* past the deadline it may not be ours to release */
        s_release(l, conn);
    l->leading = 0;
    rf__kconn_destroy(&conn);
    return NULL;
}
