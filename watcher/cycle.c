/* watcher/cycle.c: the cycle thread (see cycle.h). */
#include "cycle.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "follow.h"
#include "ktime.h"
#include "log.h"
#include "recover.h"
#include "tell.h"
#include "victims.h"

/* When the gang's last pending pod was first seen (the bind latency's start). */
static double s_seen_at(rf__cache_t *cache, const rf__decision_t *d)
{
    double seen = 0;
    rf__cache_lock(cache);
    for (int32_t i = 0; i < d->n_binds; i++) {
        char key[512];
        snprintf(key, sizeof key, "%s/%s", d->binds[i].ns, d->binds[i].name);
        const rf__kpod_t *p = rf__cache_get(cache, RF_KIND_POD, key);
        if (p && p->seen > seen)
            seen = p->seen;
    }
    rf__cache_unlock(cache);
    return seen;
}

/* A held gang in requeue backoff (or failed) is told so, on its pods' condition and annotation. */
static void s_tell_requeue(rf__cycle_t *c, const rf__pgang_t *g)
{
    rf__requeue_t rq;
    char why[800], reason[1200], value[96], next[RF_KTIME_CAP];
    if (!rf__binder_requeue_get(c->binder, g->name, &rq, why, sizeof why))
        return;
    rf__requeue_format(&rq, value, sizeof value);
    rf__ktime(rq.until_wall, next, sizeof next);
    if (rq.failed)
        snprintf(reason, sizeof reason, "failed: evicted %d times (requeue limit %d), last: %s; not placed again",
                 rq.count, c->binder->requeue_limit, why);
    else
        snprintf(reason, sizeof reason, "requeued %d times (last: %s); next try at %s", rq.count, why, next);
    rf__binder_tell(c->binder, c->pool, g, reason, rq.failed ? "GangFailed" : "GangRequeued", value);
}

/* Tell, count and log every gang the plan did not send. */
static void s_unsent(rf__cycle_t *c, const rf__plan_t *plan, long counts[RF_PENDING_COUNT])
{
    for (int32_t i = 0; i < plan->n_gangs; i++) {
        const rf__pgang_t *g = &plan->gangs[i];
        if (g->state == RF_GANG_REFUSED) {
            counts[RF_PENDING_REFUSED]++;
            rf__binder_tell(c->binder, c->pool, g, g->why, NULL, NULL);
        } else if (g->state == RF_GANG_WAITING) {
            counts[RF_PENDING_MEMBERS]++;
            rf__log(RF_LOG_DEBUG, "gang %s waits: %s", g->name, g->why);
        } else if (g->state == RF_GANG_HELD) {
            rf__held_why h = rf__binder_held_why(c->binder, g->name);
            if (h != RF_HELD_BINDING) /* those are counted from the pool below */
                counts[h == RF_HELD_FAILED ? RF_PENDING_FAILED : RF_PENDING_BACKOFF]++;
            if (h == RF_HELD_FAILED || h == RF_HELD_BACKOFF)
                s_tell_requeue(c, g);
        }
    }
}

/* Hand admitted gangs to the binder threads (but preemptors, which wait for their victims); tell rejected ones. */
static void s_decide(rf__cycle_t *c, const rf__plan_t *plan, rf__decision_t *d, int32_t nd, const bool *waits,
                     long counts[RF_PENDING_COUNT])
{
    for (int32_t i = 0; i < nd && !rf__binder_stopped(c->binder); i++) {
        if (waits[i])
            continue;
        if (!d[i].admitted) {
            counts[RF_PENDING_CAPACITY]++;
            rf__binder_tell(c->binder, c->pool, &plan->gangs[d[i].plan_gang], d[i].reason, NULL, NULL);
            continue;
        }
        rf__job_t *j = rf__job_new(RF_JOB_BIND, d[i].gang);
        if (!j)
            continue;
        j->seen_at = s_seen_at(c->cache, &d[i]);
        rf__binder_assume(c->binder, &d[i]);
        j->bind = d[i]; /* moved */
        memset(&d[i], 0, sizeof d[i]);
        rf__pool_submit(c->pool, j);
    }
}

void rf__cycle_once(rf__cycle_t *c)
{
    rf__plan_t plan;
    rf_error_t err;
    rf_error_clear(&err);
    long counts[RF_PENDING_COUNT] = {0};
    double t_build = rf__now();
    rf__cache_lock(c->cache);
    rf_status s = rf__plan_build(c->cache, &c->gopts, rf__binder_holds, c->binder, &plan, &err);
    rf__cache_unlock(c->cache);
    c->cycles++;
    if (s != RF_OK) {
        rf__log(RF_LOG_ERROR, "building the problem: %s%s%s", err.path, err.path[0] ? ": " : "", err.message);
        if (c->metrics)
            rf__wmetrics_cycle(c->metrics, false, 0);
        return;
    }
    s_unsent(c, &plan, counts);
    char *answer = NULL;
    size_t alen = 0;
    double t0 = rf__now();
    s = plan.json ? rf_client_solve_json(c->client, plan.json, plan.len, &answer, &alen, &err) : RF_OK;
    double solve_s = rf__now() - t0;
    if (plan.json)
        c->solves++;
    if (c->metrics)
        rf__wmetrics_cycle(c->metrics, plan.json && s == RF_OK, solve_s);
    if (s != RF_OK) {
        rf__log(RF_LOG_ERROR, "rackfitd: %s%s%s (%s)", err.path, err.path[0] ? ": " : "", err.message,
                rf_status_code(s));
    } else if (plan.json) {
        rf__log(RF_LOG_INFO, "cycle: problem of %d gangs built in %.1f ms, solved by rackfitd in %.1f ms", plan.n_sent,
                (t0 - t_build) * 1e3, solve_s * 1e3);
        rf__decision_t *d = NULL;
        rf__victim_t *v = NULL;
        int32_t nd = 0, nv = 0;
        bool *waits = NULL;
        if (rf__decisions_from_answer(&plan, answer, alen, &d, &nd, &err) != RF_OK ||
            rf__victims_from_answer(&plan, answer, alen, &v, &nv, &err) != RF_OK) {
            rf__log(RF_LOG_ERROR, "the answer from rackfitd: %s", err.message);
        } else if ((waits = calloc((size_t)nd + 1, sizeof *waits))) {
            rf__preempt_start(c->binder, c->pool, &plan, v, nv, d, nd, waits);
            s_decide(c, &plan, d, nd, waits, counts);
        }
        free(waits);
        rf__victims_free(&v, nv);
        rf__decisions_free(&d, nd);
    }
    counts[RF_PENDING_BINDING] = rf__pool_binding(c->pool); /* gangs decided, their binder at work */
    c->pending = false;
    for (int k = 0; k < RF_PENDING_COUNT; k++)
        c->pending |= counts[k] > 0;
    if (c->metrics)
        rf__wmetrics_pending(c->metrics, counts);
    free(answer);
    rf__plan_fini(&plan);
}

static void s_wait(rf__cache_t *c, double seconds)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    long ns = ts.tv_nsec + (long)(seconds * 1e9);
    ts.tv_sec += ns / 1000000000L;
    ts.tv_nsec = ns % 1000000000L;
    pthread_cond_timedwait(&c->changed, &c->mu, &ts);
}

/* Ready to run cycles: synced, leading, and past the takeover check. */
static bool s_ready(rf__cycle_t *c, bool *recovered)
{
    rf__cache_lock(c->cache);
    bool synced = (c->cache->synced & c->cache->kinds) == c->cache->kinds;
    atomic_store(c->ready, synced);
    bool wait = !synced || !c->leader->leading || (!*recovered && rf__now() < c->leader->recover_after);
    if (wait) /* after a takeover from a holder that let the Lease expire, its last requests may still land */
        s_wait(c->cache, 0.2);
    rf__cache_unlock(c->cache);
    if (wait)
        return false;
    if (!*recovered) {
        rf__log(RF_LOG_INFO, "synced and leading: checking the intents left by earlier watchers");
        rf__binder_recover(c->binder);
        *recovered = true;
    }
    return true;
}

/* Is a gang with a quiet change since the last plan no longer held? Then
 * the plan, which skipped it, may change. Follows and preempts end on this
 * thread between two calls of s_due, so this is asked on every turn, not
 * only after a change. Cache lock held. */
static bool s_quiet_released(rf__cycle_t *c)
{
    for (int32_t i = 0; i < c->cache->n_quiet; i++)
        if (!rf__binder_holds(c->binder, c->cache->quiet[i]))
            return true;
    return false;
}

/* Wait for a change or a backoff's end; then let a burst settle. True when a cycle is due. A change that was
 * only quiet (cache.h), of gangs all still held, is no reason: a plan built now would be the last one. */
static bool s_due(rf__cycle_t *c, uint64_t *seen_gen, double last_cycle)
{
    rf__cache_lock(c->cache);
    double hold = rf__binder_next_due(c->binder, last_cycle);
    /* a pending gang is planned again at least every replan-s, whatever changed: the safety net under the
     * quiet skip and under releases that come with time alone */
    double force = c->replan_s > 0 && c->pending ? last_cycle + c->replan_s : 0;
    if (force > 0 && (hold == 0 || force < hold))
        hold = force;
    bool due = c->cache->generation != *seen_gen || (hold > 0 && hold <= rf__now()) || s_quiet_released(c);
    if (!due) {
        double w = c->binder->n_follows ? 0.05 : 0.2;
        if (hold > 0 && hold - rf__now() < w)
            w = hold - rf__now() > 0.001 ? hold - rf__now() : 0.001;
        s_wait(c->cache, w);
        due = c->cache->generation != *seen_gen || (hold > 0 && hold <= rf__now()) || s_quiet_released(c);
    }
    if (due && !(hold > 0 && hold <= rf__now()) && !c->cache->loud && !s_quiet_released(c)) {
        /* only held gangs' pods changed, each where it was: the last plan stands */
        *seen_gen = c->cache->generation;
        c->plans_skipped++;
        if (c->plans_skipped % 100 == 1)
            rf__log(RF_LOG_DEBUG, "cycle: plan not rebuilt: only pods of held gangs changed (%lu times so far)",
                    c->plans_skipped);
        due = false;
    }
    if (due) { /* debounce-ms of quiet, at most batch-max-ms */
        double start = rf__now();
        uint64_t g = c->cache->generation;
        for (;;) {
            s_wait(c->cache, (double)c->debounce_ms / 1e3);
            if (c->cache->generation == g || rf__now() - start >= (double)c->batch_max_ms / 1e3 || *c->stop)
                break;
            g = c->cache->generation;
        }
        *seen_gen = c->cache->generation;
        rf__cache_plan_taken(c->cache); /* the plan built next reads every change up to here */
    }
    rf__cache_unlock(c->cache);
    return due;
}

void rf__cycle_run(rf__cycle_t *c)
{
    bool recovered = false;
    uint64_t seen_gen = 0;
    double last_cycle = 0;
    while (!*c->stop && !rf__leader_lost(c->leader)) {
        atomic_store(c->heartbeat, rf__now());
        if (!s_ready(c, &recovered))
            continue;
        unsigned long released = c->binder->released;
        rf__binder_follow(c->binder, c->pool);
        rf__preempt_check(c->binder);
        if (c->binder->released != released) { /* a gang released without any change of the cluster: plan */
            rf__cache_lock(c->cache);
            rf__cache_touch(c->cache);
            rf__cache_unlock(c->cache);
        }
        if (!s_due(c, &seen_gen, last_cycle))
            continue;
        last_cycle = rf__now();
        rf__cycle_once(c);
    }
}
