/* watcher/wmetrics.c: rackfit-watch's metrics families (see wmetrics.h). */
#include "wmetrics.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache.h"

static const char *const s_state_names[RF_PENDING_COUNT] = {
    "waiting_for_members", "waiting_for_capacity", "binding", "backoff", "refused", "failed"};
static const char *const s_kind_names[RF_KIND_COUNT] = {"nodes", "pods", "podgroups", "poddisruptionbudgets"};

/* A counter carried over from an atomic: the last value seen. */
typedef struct {
    const atomic_long *src;
    long seen;
    rf__series_t *dst;
} s_carry_t;

enum { S_CARRY_MAX = 16 };

struct rf__wmetrics {
    rf__metrics_t *reg;
    rf__binder_t *b;
    rf__watch_t *watches;
    int n_watches;
    rf__leader_t *leader;
    rf__metric_t *pending, *api, *restarts, *relists;
    rf__series_t *latency, *lease, *cycles, *solves, *solve_s;
    rf__series_t *states[RF_PENDING_COUNT];
    s_carry_t carry[S_CARRY_MAX];
    int n_carry;
    int watch_seen[RF_KIND_COUNT], list_seen[RF_KIND_COUNT];
};

static void s_collect(void *arg, rf__metrics_t *reg)
{
    (void)reg;
    rf__wmetrics_t *m = arg;
    for (int i = 0; i < m->n_carry; i++) {
        long v = atomic_load(m->carry[i].src);
        rf__counter_add(m->carry[i].dst, (double)(v - m->carry[i].seen));
        m->carry[i].seen = v;
    }
    for (int k = 0; k < m->n_watches && k < RF_KIND_COUNT; k++) {
        const rf__watch_t *w = &m->watches[k];
        int watches = atomic_load(&w->watches), lists = atomic_load(&w->lists);
        /* the first watch and the first list are the start, not a restart or a relist */
        int restarts = watches > 1 ? watches - 1 : 0, relists = lists > 1 ? lists - 1 : 0;
        rf__counter_add(rf__metric_with(m->restarts, s_kind_names[w->kind]), restarts - m->watch_seen[k]);
        rf__counter_add(rf__metric_with(m->relists, s_kind_names[w->kind]), relists - m->list_seen[k]);
        m->watch_seen[k] = restarts;
        m->list_seen[k] = relists;
    }
    if (m->leader)
        rf__gauge_set(m->lease, atomic_load(&m->leader->leading) && !rf__leader_lost(m->leader) ? 1 : 0);
}

static void s_carry(rf__wmetrics_t *m, const atomic_long *src, rf__metric_t *f)
{
    if (!f || m->n_carry == S_CARRY_MAX)
        return;
    m->carry[m->n_carry++] = (s_carry_t){.src = src, .dst = rf__metric_series(f, NULL)};
}

rf__wmetrics_t *rf__wmetrics_new(rf__binder_t *b, rf__watch_t *watches, int n_watches, rf__leader_t *leader)
{
    rf__wmetrics_t *m = calloc(1, sizeof *m);
    if (!m || !(m->reg = rf__metrics_new())) {
        free(m);
        return NULL;
    }
    m->b = b;
    m->watches = watches;
    m->n_watches = n_watches;
    m->leader = leader;
    rf__metrics_t *r = m->reg;
    static const char *const state[] = {"state"}, *const verb_code[] = {"verb", "code"}, *const kind[] = {"kind"};
    m->pending = rf__metrics_gauge(r, "rackfit_watch_pending_gangs", "Pending gangs of ours by state", 1, state);
    for (int s = 0; s < RF_PENDING_COUNT; s++)
        m->states[s] = rf__metric_with(m->pending, s_state_names[s]);
    s_carry(m, &b->gangs_bound,
            rf__metrics_counter(r, "rackfit_watch_gangs_bound_total", "Gangs bound whole", 0, NULL));
    s_carry(m, &b->rollbacks,
            rf__metrics_counter(r, "rackfit_watch_gangs_rolled_back_total",
                                "Gangs whose bound pods were deleted (a binding or an admission failed)", 0, NULL));
    s_carry(m, &b->requeued,
            rf__metrics_counter(r, "rackfit_watch_gangs_evicted_total",
                                "Gangs evicted whole and requeued (not ready in time, or broken while starting)", 0,
                                NULL));
    s_carry(m, &b->failed_gangs,
            rf__metrics_counter(r, "rackfit_watch_gangs_failed_total",
                                "Gangs evicted past the requeue limit: failed, left pending", 0, NULL));
    s_carry(m, &b->binds_ok, rf__metrics_counter(r, "rackfit_watch_pods_bound_total", "Pods bound", 0, NULL));
    s_carry(m, &b->evictions, rf__metrics_counter(r, "rackfit_watch_pods_evicted_total", "Pods evicted", 0, NULL));
    s_carry(m, &b->events, rf__metrics_counter(r, "rackfit_watch_events_total", "Events posted", 0, NULL));
    s_carry(m, &b->throttled,
            rf__metrics_counter(r, "rackfit_watch_api_throttled_total", "Answers 429 (Too Many Requests)", 0, NULL));
    s_carry(m, &b->retries, rf__metrics_counter(r, "rackfit_watch_api_retries_total", "Requests retried", 0, NULL));
    double lat[16];
    int nl = rf__metrics_exp_bounds(0.01, 2, 16, lat); /* 10 ms .. 5.5 min */
    m->latency = rf__metric_series(rf__metrics_histogram(r, "rackfit_watch_bind_latency_seconds",
                                                         "From the gang's last pod seen pending to its last binding", 0,
                                                         NULL, lat, nl),
                                   NULL);
    m->api =
        rf__metrics_counter(r, "rackfit_watch_api_requests_total", "API requests by verb and HTTP code", 2, verb_code);
    m->restarts = rf__metrics_counter(r, "rackfit_watch_watch_restarts_total", "Watch streams started again", 1, kind);
    m->relists =
        rf__metrics_counter(r, "rackfit_watch_relists_total", "Lists after the first (410 Gone, errors)", 1, kind);
    m->lease = rf__metric_series(
        rf__metrics_gauge(r, "rackfit_watch_lease_held", "1 while this watcher holds the Lease", 0, NULL), NULL);
    m->cycles = rf__metric_series(rf__metrics_counter(r, "rackfit_watch_cycles_total", "Cycles run", 0, NULL), NULL);
    m->solves = rf__metric_series(
        rf__metrics_counter(r, "rackfit_watch_solves_total", "Problems solved by rackfitd", 0, NULL), NULL);
    double sb[12];
    int ns = rf__metrics_exp_bounds(0.001, 2.5, 12, sb);
    m->solve_s = rf__metric_series(
        rf__metrics_histogram(r, "rackfit_watch_solve_seconds", "rackfitd's round trip per cycle", 0, NULL, sb, ns),
        NULL);
    if (!m->pending || !m->api || !m->restarts || !m->relists || !m->latency || !m->lease ||
        rf__metrics_on_collect(r, s_collect, m) != 0) {
        rf__wmetrics_destroy(&m);
        return NULL;
    }
    return m;
}

void rf__wmetrics_destroy(rf__wmetrics_t **mp)
{
    if (!mp || !*mp)
        return;
    rf__metrics_destroy(&(*mp)->reg);
    free(*mp);
    *mp = NULL;
}

rf__metrics_t *rf__wmetrics_registry(rf__wmetrics_t *m)
{
    return m->reg;
}

void rf__wmetrics_api(void *ctx, const char *verb, long status)
{
    rf__wmetrics_t *m = ctx;
    char code[16];
    snprintf(code, sizeof code, "%ld", status);
    rf__counter_add(rf__metric_with(m->api, verb, code), 1);
}

void rf__wmetrics_bound(void *ctx, double seconds)
{
    rf__wmetrics_t *m = ctx;
    rf__histogram_observe(m->latency, seconds);
}

void rf__wmetrics_pending(rf__wmetrics_t *m, const long counts[RF_PENDING_COUNT])
{
    for (int s = 0; s < RF_PENDING_COUNT; s++)
        rf__gauge_set(m->states[s], (double)counts[s]);
}

void rf__wmetrics_cycle(rf__wmetrics_t *m, bool solved, double solve_s)
{
    rf__counter_add(m->cycles, 1);
    if (solved) {
        rf__counter_add(m->solves, 1);
        rf__histogram_observe(m->solve_s, solve_s);
    }
}
