/* watcher/tell.c: conditions and Events that say why a gang waits (see tell.h). */
#include "tell.h"
#include "grow.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jw.h"
#include "ktime.h"
#include "log.h"

char *rf__event_body(const rf__binder_t *b, const char *ns, const char *name, const char *uid, const char *type,
                     const char *reason, const char *message)
{
    char secs[RF_KTIME_CAP]; /* core/v1 Events' timestamps are metav1.Time: whole seconds */
    rf__ktime(rf__wall(), secs, sizeof secs);
    char gen[300];
    snprintf(gen, sizeof gen, "%s.", name);
    rf__jw_t w;
    rf__jw_init(&w);
    rf__jw_puts(&w, "{\"apiVersion\":\"v1\",\"kind\":\"Event\",\"metadata\":{\"generateName\":");
    rf__jw_str(&w, gen);
    rf__jw_puts(&w, ",\"namespace\":");
    rf__jw_str(&w, ns);
    rf__jw_puts(&w, "},\"involvedObject\":{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"namespace\":");
    rf__jw_str(&w, ns);
    rf__jw_puts(&w, ",\"name\":");
    rf__jw_str(&w, name);
    rf__jw_puts(&w, ",\"uid\":");
    rf__jw_str(&w, uid);
    rf__jw_puts(&w, "},\"reason\":");
    rf__jw_str(&w, reason);
    rf__jw_puts(&w, ",\"type\":");
    rf__jw_str(&w, type);
    rf__jw_puts(&w, ",\"message\":");
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
    return rf__jw_take(&w, NULL);
}

/* The gang's entry in `told`, added when absent (NULL on OOM); forgets
 * entries whose wait is over once there are many. */
static rf__hold_t *s_told(rf__binder_t *b, const char *gang, double now)
{
    if (b->n_told > 1024)
        for (int32_t i = b->n_told - 1; i >= 0; i--)
            if (b->told[i].until < now) {
                free(b->told[i].gang);
                b->told[i] = b->told[--b->n_told];
            }
    for (int32_t i = 0; i < b->n_told; i++)
        if (strcmp(b->told[i].gang, gang) == 0)
            return &b->told[i];
    if (!rf__grow_one((void **)&b->told, b->n_told, &b->cap_told, sizeof *b->told))
        return NULL;
    rf__hold_t *t = &b->told[b->n_told];
    *t = (rf__hold_t){.gang = strdup(gang)};
    if (!t->gang)
        return NULL;
    b->n_told++;
    return t;
}

static char *s_strf(const char *fmt, const char *a, const char *c)
{
    rf__jw_t w;
    rf__jw_init(&w);
    rf__jw_printf(&w, fmt, a, c);
    return rf__jw_take(&w, NULL);
}

static char *s_condition(const char *message)
{
    char secs[RF_KTIME_CAP]; /* conditions' timestamps are metav1.Time: whole seconds */
    rf__ktime(rf__wall(), secs, sizeof secs);
    rf__jw_t w;
    rf__jw_init(&w);
    rf__jw_puts(&w, "{\"status\":{\"conditions\":[{\"type\":\"PodScheduled\",\"status\":\"False\","
                    "\"reason\":\"Unschedulable\",\"message\":");
    rf__jw_str(&w, message);
    rf__jw_puts(&w, ",\"lastProbeTime\":null,\"lastTransitionTime\":");
    rf__jw_str(&w, secs);
    rf__jw_puts(&w, "}]}}");
    return rf__jw_take(&w, NULL);
}

void rf__binder_tell(rf__binder_t *b, rf__pool_t *pool, const rf__pgang_t *g, const char *reason,
                     const char *event_reason, const char *annotation)
{
    if (rf__binder_stopped(b))
        return;
    char message[1024];
    snprintf(message, sizeof message, "rackfit: gang %s: %s", g->name, reason);
    double now = rf__now();
    rf__hold_t *t = s_told(b, g->name, now);
    /* told recently: a new reason waits (a requeue state is news, not churn: it is told at once) */
    if (t && now < t->until && !annotation)
        return;
    rf__job_t *j = rf__job_new(RF_JOB_TELL, g->name);
    int cap = (int)g->n_pending + 1;
    if (!j || !(j->status = calloc((size_t)cap, sizeof *j->status)) ||
        !(j->meta = calloc((size_t)cap, sizeof *j->meta)) || !(j->events = calloc((size_t)cap, sizeof *j->events))) {
        rf__job_free(&j);
        return;
    }
    rf__cache_lock(b->cache);
    for (int32_t s = 0; s < g->n_sets; s++)
        for (int32_t k = 0; k < g->sets[s].n_pending; k++) {
            const rf__member_t *m = &g->sets[s].pending[k];
            char key[512];
            snprintf(key, sizeof key, "%s/%s", m->ns, m->name);
            const rf__kpod_t *p = rf__cache_get(b->cache, RF_KIND_POD, key);
            if (!p)
                continue;
            const char *have = rf__kvs_get(&p->annotations, RF_ANN_REQUEUE);
            if (annotation && (!have || strcmp(have, annotation) != 0)) {
                j->meta[j->n_meta].path = rf__pod_path(m->ns, m->name, NULL);
                j->meta[j->n_meta++].body = rf__annotation_patch(m->uid, RF_ANN_REQUEUE, annotation);
            }
            if (p->sched_reason && strcmp(p->sched_reason, "Unschedulable") == 0 && p->sched_message &&
                strcmp(p->sched_message, message) == 0)
                continue; /* said already */
            j->status[j->n_status].path = rf__pod_path(m->ns, m->name, "status");
            j->status[j->n_status++].body = s_condition(message);
            j->events[j->n_events].path = s_strf("/api/v1/namespaces/%s/events", m->ns, "");
            j->events[j->n_events++].body = rf__event_body(b, m->ns, m->name, m->uid, "Warning",
                                                           event_reason ? event_reason : "FailedScheduling", message);
        }
    rf__cache_unlock(b->cache);
    if (j->n_status == 0 && j->n_meta == 0) {
        rf__job_free(&j);
        return;
    }
    if (t && j->n_status) /* told: a changed reason waits retell_s */
        t->until = now + b->retell_s;
    rf__log(RF_LOG_INFO, "gang %s: %s (telling %d pods)", g->name, reason, j->n_status);
    rf__pool_submit(pool, j);
}

void rf__tell_run(rf__binder_t *b, rf__kmulti_t *multi, rf__job_t *j)
{
    /* one result array serves the three batches: as long as the longest */
    int n = j->n_status > j->n_meta ? j->n_status : j->n_meta;
    if (j->n_events > n)
        n = j->n_events;
    bool *ok = calloc((size_t)n + 1, sizeof *ok);
    if (!ok)
        return;
    rf__krun_t run = rf__binder_krun(b, multi);
    char why[512] = "";
    int failed = rf__krun(&run, "PATCH", "application/merge-patch+json", j->meta, j->n_meta, ok, NULL, rf__kaccept_2xx,
                          NULL, why, sizeof why);
    if (failed)
        rf__log(RF_LOG_WARN, "gang %s: %d annotation updates failed: %s", j->gang, failed, why);
    why[0] = '\0';
    failed = rf__krun(&run, "PATCH", "application/strategic-merge-patch+json", j->status, j->n_status, ok, NULL,
                      rf__kaccept_2xx, NULL, why, sizeof why);
    if (failed)
        rf__log(RF_LOG_WARN, "gang %s: %d condition updates failed: %s", j->gang, failed, why);
    why[0] = '\0';
    failed = rf__krun(&run, "POST", "application/json", j->events, j->n_events, ok, NULL, rf__kaccept_2xx, NULL, why,
                      sizeof why);
    if (failed)
        rf__log(RF_LOG_WARN, "gang %s: %d events failed: %s", j->gang, failed, why);
    atomic_fetch_add(&b->events, j->n_events - failed);
    free(ok);
}
