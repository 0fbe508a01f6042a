/* watcher/main.c: rackfit-watch, the Kubernetes sidecar that finds pending
 * gangs and binds them whole (docs/watcher.md).
 *
 *   rackfit-watch (--kubeconfig FILE | --in-cluster) --solver ENDPOINT
 *                 --scheduler-name NAME --levels L1,L2,... [--config FILE] [--KEY VALUE]...
 *
 * main reads the settings (config.h) and wires the rooms: one list+watch
 * thread per kind (watch.h), the Lease (leader.h), the probes (health.h),
 * the metrics (wmetrics.h on base/httpd), the binder threads (pool.h) and
 * the cycle loop on this thread (cycle.h). Exit status: 0 after SIGTERM or
 * SIGINT, 1 when the Lease was lost, 2 for bad flags, config or credentials,
 * 3 when out of memory. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "binder.h"
#include "cache.h"
#include "config.h"
#include "cycle.h"
#include "health.h"
#include "httpd.h"
#include "kube_http.h"
#include "kubeconfig.h"
#include "leader.h"
#include "log.h"
#include "pool.h"
#include "rackfit/client.h"
#include "watch.h"
#include "wmetrics.h"

static atomic_int s_stop;        /* lock-free: set from the signal handler */
static atomic_int s_leader_stop; /* set once the cycle loop has returned: the Lease may be released */

static void s_on_signal(int sig)
{
    (void)sig;
    s_stop = 1;
}

/* Everything main starts, in the order it is stopped. */
typedef struct {
    rf__config_t cfg;
    rf__kubeconfig_t kc;
    rf__kube_t *kube;
    rf__cache_t *cache;
    rf_client_t *client;
    rf__binder_t binder;
    rf__pool_t *pool;
    rf__wmetrics_t *metrics;
    rf__httpd_t *httpd;
    rf__health_t health;
    rf__leader_t leader;
    rf__watch_t watches[RF_KIND_COUNT];
    pthread_t wt[RF_KIND_COUNT], lt;
    bool started[RF_KIND_COUNT], lstarted;
} s_app_t;

static const char *s_not_ready(void *arg)
{
    s_app_t *a = arg;
    if (!atomic_load(&a->health.ready))
        return "nodes, pods, PodGroups and PodDisruptionBudgets are not listed yet";
    return rf__health_alive(&a->health) ? NULL : "the cycle loop has not turned for a minute";
}

/* Credentials, rackfitd's client, the cache. 2 or 3 on failure (printed). */
static int s_connect(s_app_t *a, rf_error_t *err)
{
    if (rf__kube_global_init(err) != RF_OK ||
        (a->cfg.in_cluster ? rf__kubeconfig_in_cluster(NULL, &a->kc, err)
                           : rf__kubeconfig_load(a->cfg.kubeconfig, a->cfg.context, &a->kc, err)) != RF_OK ||
        !(a->kube = rf__kube_new(&a->kc, err))) {
        fprintf(stderr, "rackfit-watch: %s%s%s\n", err->path, err->path[0] ? ": " : "", err->message);
        return 2;
    }
    rf_client_opts_t copts;
    rf_client_opts_default(&copts);
    copts.timeout_ms = (int)a->cfg.solve_timeout_ms;
    if (!(a->client = rf_client_new(a->cfg.solver, &copts, err))) {
        fprintf(stderr, "rackfit-watch: --solver %s: %s\n", a->cfg.solver, err->message);
        return 2;
    }
    a->cache =
        rf__cache_new((1u << RF_KIND_NODE) | (1u << RF_KIND_POD) | (1u << RF_KIND_PODGROUP) | (1u << RF_KIND_PDB));
    if (!a->cache || !(a->cache->ours = strdup(a->cfg.scheduler_name))) { /* our pods' changes can be quiet */
        fprintf(stderr, "rackfit-watch: out of memory\n");
        return 3;
    }
    return 0;
}

/* The binder's wiring and settings, its threads, and the metrics. */
static int s_binder(s_app_t *a)
{
    const rf__config_t *c = &a->cfg;
    rf__binder_t *b = &a->binder;
    b->kube = a->kube;
    b->cache = a->cache;
    b->lost = &a->leader.lost;
    b->stop = &s_stop;
    b->lease_until = c->leader_elect ? &a->leader.valid_until : NULL;
    b->heartbeat = &a->health.heartbeat;
    b->identity = c->ident;
    b->scheduler_name = c->scheduler_name;
    b->max_retries = (int)c->max_retries;
    b->timeout_ms = c->request_timeout_ms;
    b->admit_timeout_s = c->admit_timeout_s;
    b->backoff_base_s = c->backoff_base_s;
    b->backoff_cap_s = c->backoff_cap_s;
    b->ready_timeout_s = c->ready_timeout_s;
    b->requeue_base_s = c->requeue_base_s;
    b->requeue_cap_s = c->requeue_cap_s;
    b->requeue_limit = (int)c->requeue_limit;
    rf__limiter_fini(&b->lim);
    rf__limiter_init(&b->lim, c->qps, c->burst);
    if (!(b->multi = rf__kmulti_new(a->kube, (int)c->concurrency)) ||
        !(a->metrics = rf__wmetrics_new(b, a->watches, RF_KIND_COUNT, &a->leader))) {
        fprintf(stderr, "rackfit-watch: out of memory\n");
        return 3;
    }
    rf__kube_observe(a->kube, rf__wmetrics_api, a->metrics);
    b->on_bound = rf__wmetrics_bound;
    b->on_bound_ctx = a->metrics;
    if (!(a->pool = rf__pool_new(b, (int)c->binders, (int)c->concurrency))) {
        fprintf(stderr, "rackfit-watch: cannot start %ld binder threads\n", c->binders);
        return 3;
    }
    return 0;
}

/* Watches, the Lease, the probes and the metrics endpoint. */
static int s_threads(s_app_t *a, rf_error_t *err)
{
    static const char *const paths[RF_KIND_COUNT] = {"/api/v1/nodes", "/api/v1/pods",
                                                     "/apis/scheduling.x-k8s.io/v1alpha1/podgroups",
                                                     "/apis/policy/v1/poddisruptionbudgets"};
    /* servers before 1.21 serve PodDisruptionBudgets as policy/v1beta1 only */
    static const char *const older[RF_KIND_COUNT] = {[RF_KIND_PDB] = "/apis/policy/v1beta1/poddisruptionbudgets"};
    for (int k = 0; k < RF_KIND_COUNT; k++) {
        a->watches[k] = (rf__watch_t){.kube = a->kube,
                                      .cache = a->cache,
                                      .kind = (rf__kind)k,
                                      .path = paths[k],
                                      .older = older[k],
                                      .optional = k == RF_KIND_PDB,
                                      .stop = &s_stop,
                                      .timeout_s = a->cfg.watch_timeout_s};
        a->started[k] = pthread_create(&a->wt[k], NULL, rf__watch_run, &a->watches[k]) == 0;
    }
    const rf__config_t *c = &a->cfg;
    a->leader = (rf__leader_t){.kube = a->kube,
                               .ns = c->lease_namespace ? c->lease_namespace
                                     : a->kc.namespace_ ? a->kc.namespace_
                                                        : "rackfit-system",
                               .name = c->lease_name ? c->lease_name : "rackfit-watch",
                               .identity = c->ident,
                               .lease_s = (int)c->lease_duration_s,
                               .renew_deadline_s = c->renew_deadline_s,
                               .retry_s = c->retry_period_s,
                               .settle_s = (double)c->request_timeout_ms / 1e3,
                               .stop = &s_leader_stop};
    if (c->leader_elect)
        a->lstarted = pthread_create(&a->lt, NULL, rf__leader_run, &a->leader) == 0;
    else
        a->leader.leading = 1;
    if (c->health_port > 0 && rf__health_start(&a->health, (int)c->health_port, &s_stop, err) != RF_OK) {
        fprintf(stderr, "rackfit-watch: --%s: %s\n", err->path, err->message);
        return 2;
    }
    if (c->metrics_listen) {
        rf__httpd_config_t hc = {.metrics = rf__wmetrics_registry(a->metrics), .not_ready = s_not_ready, .arg = a};
        if (rf__httpd_start(c->metrics_listen, &hc, &a->httpd, err) != RF_OK) {
            fprintf(stderr, "rackfit-watch: --metrics-listen %s: %s\n", c->metrics_listen, err->message);
            return 2;
        }
        rf__log(RF_LOG_INFO, "metrics on %s (port %d)", c->metrics_listen, rf__httpd_port(a->httpd));
    }
    return 0;
}

static void s_shutdown(s_app_t *a)
{
    /* the cycle loop has returned: binder threads finish what runs (no new request starts once s_stop is set) */
    s_stop = 1;
    rf__pool_destroy(&a->pool);
    s_leader_stop = 1; /* nothing is in flight: only now may the Lease be released */
    for (int k = 0; k < RF_KIND_COUNT; k++)
        if (a->started[k])
            pthread_join(a->wt[k], NULL);
    if (a->lstarted)
        pthread_join(a->lt, NULL);
    rf__health_stop(&a->health);
    rf__httpd_stop(&a->httpd);
    rf__kmulti_destroy(&a->binder.multi);
    rf__binder_fini(&a->binder);
    rf__wmetrics_destroy(&a->metrics);
    rf_client_destroy(&a->client);
    rf__cache_destroy(&a->cache);
    rf__kube_destroy(&a->kube);
    rf__kubeconfig_fini(&a->kc);
    rf__kube_global_fini();
    rf__config_fini(&a->cfg);
}

int main(int argc, char **argv)
{
    rf__log_program("rackfit-watch");
    static s_app_t app; /* large; threads point into it */
    s_app_t *a = &app;
    rf_error_t err;
    rf_error_clear(&err);
    rf__config_init(&a->cfg);
    rf__binder_init(&a->binder);
    a->health.fd = -1;
    atomic_store(&a->health.heartbeat, rf__now());
    bool help = false;
    if (rf__config_parse(&a->cfg, argc, argv, &help, &err) != RF_OK || help) {
        if (help)
            rf__config_usage(stdout);
        else
            fprintf(stderr, "rackfit-watch: %s%s%s\n", err.path[0] ? "--" : "", err.path[0] ? err.path : "",
                    err.message);
        rf__binder_fini(&a->binder);
        rf__config_fini(&a->cfg);
        return help ? 0 : 2;
    }
    struct sigaction sa = {.sa_handler = s_on_signal};
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    int rc = s_connect(a, &err);
    if (!rc)
        rc = s_binder(a);
    if (!rc)
        rc = s_threads(a, &err);
    rf__cycle_t cy = {.cache = a->cache,
                      .binder = &a->binder,
                      .pool = a->pool,
                      .client = a->client,
                      .leader = &a->leader,
                      .metrics = a->metrics,
                      .stop = &s_stop,
                      .heartbeat = &a->health.heartbeat,
                      .ready = &a->health.ready,
                      .debounce_ms = a->cfg.debounce_ms,
                      .batch_max_ms = a->cfg.batch_max_ms,
                      .replan_s = a->cfg.replan_s};
    cy.gopts = (rf__gang_opts_t){.scheduler_name = a->cfg.scheduler_name,
                                 .levels = a->cfg.level_v,
                                 .n_levels = a->cfg.n_levels,
                                 .level_costs = a->cfg.n_costs ? a->cfg.cost_v : NULL,
                                 .mode = a->cfg.mode ? a->cfg.mode : "auto",
                                 .time_limit_ms = a->cfg.time_limit_ms,
                                 .value_resource = a->cfg.value_resource,
                                 .preemption = !a->cfg.preemption || strcmp(a->cfg.preemption, "never") != 0,
                                 .preempt_others = a->cfg.preempt_others,
                                 .unevictable = rf__binder_unevictable,
                                 .unevictable_ctx = &a->binder};
    if (!rc) {
        rf__log(RF_LOG_INFO, "rackfit-watch %s: API server %s, solver %s, scheduler name %s, %d levels, %ld binders",
                a->cfg.ident, rf__kube_server(a->kube), a->cfg.solver, a->cfg.scheduler_name, a->cfg.n_levels,
                a->cfg.binders);
        rf__cycle_run(&cy);
        if (rf__leader_lost(&a->leader)) {
            rf__log(RF_LOG_ERROR, "the Lease was lost or not renewed in time: stopping (exit 1)");
            rc = 1;
        }
        rf__binder_t *b = &a->binder;
        rf__log(RF_LOG_INFO,
                "stopping (%ld cycles, %ld solves, %ld pods bound in %ld gangs, %ld rollbacks, %ld evictions, %ld "
                "retries)",
                cy.cycles, cy.solves, atomic_load(&b->binds_ok), atomic_load(&b->gangs_bound),
                atomic_load(&b->rollbacks), atomic_load(&b->evictions), atomic_load(&b->retries));
    }
    s_shutdown(a);
    return rc;
}
