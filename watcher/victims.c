/* watcher/victims.c: victims evicted whole, preemptors nominated and held until they are gone (see victims.h). */
#include "victims.h"
#include "grow.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jw.h"
#include "log.h"

static bool s_preempted_for(const rf__victim_t *v, const char *gang)
{
    char key[340];
    snprintf(key, sizeof key, ",%s,", gang);
    return strstr(v->by, key) != NULL;
}

static void s_evict_victim(rf__binder_t *b, rf__pool_t *pool, const rf__prun_t *r, const rf__victim_t *v)
{
    rf__job_t *j = rf__job_new(RF_JOB_EVICT, r->name);
    if (!j || !(j->pods = calloc((size_t)r->n_pods + 1, sizeof *j->pods))) {
        rf__job_free(&j);
        return;
    }
    size_t n = strlen(v->by);
    char by[400];
    snprintf(by, sizeof by, "%.*s", n > 2 ? (int)(n - 2) : 0, n > 2 ? v->by + 1 : ""); /* ",a,b," -> "a,b" */
    rf__jw_t w;
    rf__jw_init(&w);
    rf__jw_printf(&w, "preempted (priority %lld) to make room for %s", (long long)r->priority, by);
    j->why = rf__jw_take(&w, NULL);
    for (int32_t i = 0; i < r->n_pods; i++) {
        rf__bind_t *p = &j->pods[j->n++];
        *p = (rf__bind_t){.ns = strdup(r->pods[i].ns),
                          .name = strdup(r->pods[i].name),
                          .uid = strdup(r->pods[i].uid),
                          .node = strdup("")};
    }
    j->rq = (rf__requeue_t){0}; /* a preemption, not a requeue */
    (void)b;
    rf__pool_submit(pool, j);
}

/* Nominate the preemptor's pods to their decided nodes (a TELL job of status patches). */
static void s_nominate(rf__pool_t *pool, const rf__decision_t *d)
{
    rf__job_t *j = rf__job_new(RF_JOB_TELL, d->gang);
    if (!j || !(j->status = calloc((size_t)d->n_binds + 1, sizeof *j->status))) {
        rf__job_free(&j);
        return;
    }
    for (int32_t i = 0; i < d->n_binds; i++) {
        j->status[j->n_status].path = rf__pod_path(d->binds[i].ns, d->binds[i].name, "status");
        rf__jw_t w;
        rf__jw_init(&w);
        rf__jw_puts(&w, "{\"status\":{\"nominatedNodeName\":");
        rf__jw_str(&w, d->binds[i].node);
        rf__jw_puts(&w, "}}");
        j->status[j->n_status++].body = rf__jw_take(&w, NULL);
    }
    rf__pool_submit(pool, j);
}

/* The preemptor waits for the pods of every victim preempted for it. */
static void s_wait(rf__binder_t *b, const rf__plan_t *plan, const rf__victim_t *v, int32_t nv, const char *gang)
{
    if (!rf__grow_one((void **)&b->preempts, b->n_preempts, &b->cap_preempts, sizeof *b->preempts))
        return;
    int32_t total = 0;
    for (int32_t k = 0; k < nv; k++)
        if (s_preempted_for(&v[k], gang))
            total += plan->running[v[k].run].n_pods;
    rf__preempt_t w = {
        .gang = strdup(gang), .victims = calloc((size_t)total + 1, sizeof *w.victims), .since = rf__now()};
    if (!w.gang || !w.victims) {
        rf__preempt_fini(&w);
        return;
    }
    rf__jw_t names;
    rf__jw_init(&names);
    rf__jw_puts(&names, ",");
    for (int32_t k = 0; k < nv; k++) {
        if (!s_preempted_for(&v[k], gang))
            continue;
        const rf__prun_t *r = &plan->running[v[k].run];
        rf__jw_printf(&names, "%s,", r->name);
        for (int32_t i = 0; i < r->n_pods; i++)
            w.victims[w.n++] = (rf__member_t){
                .ns = strdup(r->pods[i].ns), .name = strdup(r->pods[i].name), .uid = strdup(r->pods[i].uid)};
    }
    w.victim_gangs = rf__jw_take(&names, NULL);
    b->preempts[b->n_preempts++] = w;
}

void rf__preempt_start(rf__binder_t *b, rf__pool_t *pool, const rf__plan_t *plan, const rf__victim_t *v, int32_t nv,
                       const rf__decision_t *d, int32_t nd, bool *waits)
{
    for (int32_t k = 0; k < nv; k++) {
        rf__log(RF_LOG_INFO, "gang %s: preempted for %s: evicting it whole", plan->running[v[k].run].name, v[k].by);
        s_evict_victim(b, pool, &plan->running[v[k].run], &v[k]);
    }
    for (int32_t i = 0; i < nd; i++) {
        waits[i] = false;
        for (int32_t k = 0; k < nv && !waits[i]; k++)
            waits[i] = d[i].admitted && s_preempted_for(&v[k], d[i].gang);
        if (!waits[i])
            continue;
        rf__log(RF_LOG_INFO, "gang %s: waits for its victims to be gone, its %d pods nominated to their nodes",
                d[i].gang, d[i].n_binds);
        s_nominate(pool, &d[i]);
        s_wait(b, plan, v, nv, d[i].gang);
    }
}

void rf__preempt_check(rf__binder_t *b)
{
    for (int32_t i = 0; i < b->n_preempts;) {
        rf__preempt_t *p = &b->preempts[i];
        int32_t left = 0;
        rf__cache_lock(b->cache);
        for (int32_t k = 0; k < p->n; k++) {
            char key[512];
            snprintf(key, sizeof key, "%s/%s", p->victims[k].ns, p->victims[k].name);
            const rf__kpod_t *q = rf__cache_get(b->cache, RF_KIND_POD, key);
            left += q && strcmp(q->uid, p->victims[k].uid) == 0; /* terminating pods still hold their room */
        }
        if (left == 0)
            rf__cache_touch(b->cache); /* a cycle is due: the room is free */
        rf__cache_unlock(b->cache);
        bool late = rf__now() - p->since > b->admit_timeout_s;
        const char *refused = NULL; /* a victim whose eviction was refused: the round is solved again without it */
        for (const char *g = p->victim_gangs; left && g && *g && g[1] && !refused;) {
            const char *end = strchr(g + 1, ',');
            char name[340];
            snprintf(name, sizeof name, "%.*s", end ? (int)(end - g - 1) : 0, g + 1);
            if (rf__binder_unevictable(b, name))
                refused = g + 1;
            g = end;
        }
        if (left > 0 && !late && !refused) {
            i++;
            continue;
        }
        if (refused)
            rf__log(RF_LOG_WARN, "gang %s: the eviction of a victim (%.*s) was refused: solving it again without it",
                    p->gang, (int)strcspn(refused, ","), refused);
        else if (left)
            rf__log(RF_LOG_WARN, "gang %s: %d victim pods still there after %.0f s: solving it again", p->gang, left,
                    b->admit_timeout_s);
        else
            rf__log(RF_LOG_INFO, "gang %s: its victims are gone: solving it again", p->gang);
        rf__preempt_fini(p);
        b->preempts[i] = b->preempts[--b->n_preempts];
        b->released++;
    }
}
