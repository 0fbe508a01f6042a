/* watcher/krun.c: a set of requests run to the end with retries (see krun.h). */
#include "krun.h"

#include <stdio.h>
#include <stdlib.h>

void rf__kreqs_free(rf__kreq_t *r, int n)
{
    for (int i = 0; r && i < n; i++) {
        free(r[i].path);
        free(r[i].body);
    }
    free(r);
}

bool rf__kaccept_2xx(void *ctx, int i, const rf__kcall_t *c)
{
    (void)ctx;
    (void)i;
    return c->resp.status >= 200 && c->resp.status < 300;
}

bool rf__kaccept_gone(void *ctx, int i, const rf__kcall_t *c)
{
    (void)ctx;
    (void)i;
    return (c->resp.status >= 200 && c->resp.status < 300) || c->resp.status == 404 || c->resp.status == 409;
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

static bool s_stopped(const rf__krun_t *r)
{
    return r->stop && r->stop(r->stop_ctx);
}

static void s_why(const rf__kcall_t *c, const char *method, const char *path, char *why, size_t why_cap)
{
    if (why[0] != '\0')
        return;
    if (c->transport == RF_EBUSY)
        snprintf(why, why_cap, "%s %s: not sent (stopping, or the lease was lost)", method, path);
    else if (c->transport != RF_OK)
        snprintf(why, why_cap, "%s %s: %s", method, path, rf_status_message(c->transport));
    else
        snprintf(why, why_cap, "%s %s: HTTP %ld: %.300s", method, path, c->resp.status,
                 c->resp.body ? c->resp.body : "");
}

/* Prepare round `round`'s calls: the server's Retry-After, else 50 ms doubling, at most 2 s. */
static void s_prepare(rf__kcall_t *calls, const int *idx, int todo, int round, const char *method, const char *ctype,
                      const rf__kreq_t *reqs)
{
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
}

int rf__krun(const rf__krun_t *run, const char *method, const char *ctype, const rf__kreq_t *reqs, int n, bool *ok,
             bool *unsure, rf__kaccept_fn accept, void *actx, char *why, size_t why_cap)
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
        s_prepare(calls, idx, todo, round, method, ctype, reqs);
        rf_error_t err;
        rf__kube_batch_fn(run->multi, calls, todo, run->lim, run->timeout_ms, run->stop, run->stop_ctx, &err);
        int again = 0;
        for (int k = 0; k < todo; k++) {
            rf__kcall_t *c = &calls[k];
            int i = idx[k];
            bool throttled = c->transport == RF_OK && c->resp.status == 429;
            if (throttled && run->throttled)
                atomic_fetch_add(run->throttled, 1);
            /* not sent (EBUSY) or 429 (refused unread): an earlier answer still stands */
            if (unsure && c->transport != RF_EBUSY && !throttled)
                unsure[i] = s_transient(c);
            if (c->transport == RF_OK && accept(actx, i, c)) {
                ok[i] = true;
                rf__kresp_fini(&c->resp);
                continue;
            }
            int limit = throttled ? run->max_retries + 10 : run->max_retries;
            if (c->transport != RF_EBUSY && s_transient(c) && round < limit && !s_stopped(run)) {
                if (run->retries)
                    atomic_fetch_add(run->retries, 1);
                idx[again] = i;
                rf__kcall_t keep = *c;
                calls[again] = keep; /* keeps resp.retry_after for the delay */
                again++;
                continue;
            }
            failed++;
            s_why(c, method, reqs[i].path, why, why_cap);
            rf__kresp_fini(&c->resp);
        }
        todo = again;
    }
    free(calls);
    free(idx);
    return failed;
}
