/* watcher/main.c: rackfit-watch, the Kubernetes sidecar that finds pending
 * gangs and binds them whole (docs/watcher.md).
 *
 *   rackfit-watch (--kubeconfig FILE | --in-cluster) --solver ENDPOINT
 *                 --scheduler-name NAME --levels L1,L2,... [--config FILE] [--KEY VALUE]...
 *
 * Threads: one list+watch per kind (watch.c), the Lease (leader.c), the
 * health endpoint, and this one, which runs the cycles: wait for a change,
 * let changes settle (debounce), build the problem (gangs.c), solve it with
 * rackfitd, bind what is admitted and tell what is not (binder.c). Only the
 * cycle thread talks to rackfitd and binds. */
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "binder.h"
#include "cache.h"
#include "gangs.h"
#include "kube_http.h"
#include "kubeconfig.h"
#include "leader.h"
#include "log.h"
#include "rackfit/client.h"
#include "watch.h"

#define S_MAX_LEVELS 16

typedef struct {
    char *kubeconfig, *context, *solver, *scheduler_name, *levels, *level_costs, *mode, *value_resource;
    char *lease_namespace, *lease_name, *identity, *log_level;
    bool in_cluster, leader_elect;
    long time_limit_ms, solve_timeout_ms, concurrency, max_retries, request_timeout_ms, debounce_ms, batch_max_ms,
        health_port, watch_timeout_s, lease_duration_s;
    double qps, burst, admit_timeout_s, backoff_base_s, backoff_cap_s, renew_deadline_s, retry_period_s;
} s_cfg_t;

static atomic_int s_stop;        /* lock-free: set from the signal handler */
static atomic_int s_leader_stop; /* set once the cycle loop has returned: the Lease may be released */

static void s_on_signal(int sig)
{
    (void)sig;
    s_stop = 1;
}

static void s_usage(FILE *out)
{
    fputs("usage: rackfit-watch (--kubeconfig FILE [--context NAME] | --in-cluster) --solver ENDPOINT\n"
          "                     --scheduler-name NAME --levels L1,L2,... [--config FILE] [--KEY VALUE]...\n"
          "\n"
          "Watches nodes, pods and PodGroups, sends the pending gangs of pods with spec.schedulerName NAME\n"
          "to rackfitd at ENDPOINT, and binds each admitted gang whole. Settings (flags or config file keys,\n"
          "`-` and `_` alike; defaults in brackets):\n"
          "  level-costs 100,10,1 [contract default]   mode auto|greedy|ilp [auto]   time-limit-ms [1000]\n"
          "  value-resource [nvidia.com/gpu]   solve-timeout-ms [30000]\n"
          "  qps [200] burst [400] concurrency [64]: the client's rate limit and requests in flight\n"
          "  max-retries [5] request-timeout-ms [10000] admit-timeout-s [300]\n"
          "  backoff-base-s [1] backoff-cap-s [300]: a gang that failed to bind waits base*2^(n-1), capped\n"
          "  debounce-ms [20] batch-max-ms [250]: a cycle starts once changes pause for debounce-ms\n"
          "  leader-elect true|false [true] lease-namespace [the kubeconfig's, else rackfit-system]\n"
          "  lease-name [rackfit-watch] lease-duration-s [15] renew-deadline-s [10] retry-period-s [2]\n"
          "  identity [$POD_NAME, else HOST-PID] health-port [0: off; GET /healthz, /readyz]\n"
          "  watch-timeout-s [300] log-level error|warn|info|debug [info]\n",
          out);
}

static rf_status s_set(void *ctx, const char *key_in, const char *v, rf_error_t *err)
{
    s_cfg_t *c = ctx;
    char key[64];
    snprintf(key, sizeof key, "%s", key_in);
    for (char *p = key; *p; p++)
        if (*p == '_')
            *p = '-';
    struct {
        const char *k;
        char **s;
    } strs[] = {{"kubeconfig", &c->kubeconfig},
                {"context", &c->context},
                {"solver", &c->solver},
                {"scheduler-name", &c->scheduler_name},
                {"levels", &c->levels},
                {"level-costs", &c->level_costs},
                {"mode", &c->mode},
                {"value-resource", &c->value_resource},
                {"lease-namespace", &c->lease_namespace},
                {"lease-name", &c->lease_name},
                {"identity", &c->identity},
                {"log-level", &c->log_level}};
    for (size_t i = 0; i < sizeof strs / sizeof strs[0]; i++)
        if (strcmp(key, strs[i].k) == 0) {
            free(*strs[i].s);
            *strs[i].s = strdup(v);
            return *strs[i].s ? RF_OK : rf_error_set(err, RF_ENOMEM, key, "out of memory");
        }
    struct {
        const char *k;
        long *l;
    } longs[] = {{"time-limit-ms", &c->time_limit_ms},
                 {"solve-timeout-ms", &c->solve_timeout_ms},
                 {"concurrency", &c->concurrency},
                 {"max-retries", &c->max_retries},
                 {"request-timeout-ms", &c->request_timeout_ms},
                 {"debounce-ms", &c->debounce_ms},
                 {"batch-max-ms", &c->batch_max_ms},
                 {"health-port", &c->health_port},
                 {"watch-timeout-s", &c->watch_timeout_s},
                 {"lease-duration-s", &c->lease_duration_s}};
    for (size_t i = 0; i < sizeof longs / sizeof longs[0]; i++)
        if (strcmp(key, longs[i].k) == 0) {
            char *end;
            errno = 0;
            long x = strtol(v, &end, 10);
            if (errno || *end || end == v || x < 0)
                return rf_error_set(err, RF_EINVAL, key, "must be a non-negative integer, not `%s`", v);
            *longs[i].l = x;
            return RF_OK;
        }
    struct {
        const char *k;
        double *d;
    } dbls[] = {{"qps", &c->qps},
                {"burst", &c->burst},
                {"admit-timeout-s", &c->admit_timeout_s},
                {"backoff-base-s", &c->backoff_base_s},
                {"backoff-cap-s", &c->backoff_cap_s},
                {"renew-deadline-s", &c->renew_deadline_s},
                {"retry-period-s", &c->retry_period_s}};
    for (size_t i = 0; i < sizeof dbls / sizeof dbls[0]; i++)
        if (strcmp(key, dbls[i].k) == 0) {
            char *end;
            double x = strtod(v, &end);
            if (*end || end == v || !(x >= 0))
                return rf_error_set(err, RF_EINVAL, key, "must be a non-negative number, not `%s`", v);
            *dbls[i].d = x;
            return RF_OK;
        }
    if (strcmp(key, "leader-elect") == 0 || strcmp(key, "in-cluster") == 0) {
        bool b = strcmp(v, "true") == 0 || strcmp(v, "1") == 0 || strcmp(v, "yes") == 0;
        if (!b && strcmp(v, "false") != 0 && strcmp(v, "0") != 0 && strcmp(v, "no") != 0)
            return rf_error_set(err, RF_EINVAL, key, "must be true or false, not `%s`", v);
        if (key[0] == 'l')
            c->leader_elect = b;
        else
            c->in_cluster = b;
        return RF_OK;
    }
    return rf_error_set(err, RF_EINVAL, key, "unknown setting (see --help)");
}

static void s_cfg_free(s_cfg_t *c)
{
    char **all[] = {&c->kubeconfig,      &c->context,     &c->solver,   &c->scheduler_name,
                    &c->levels,          &c->level_costs, &c->mode,     &c->value_resource,
                    &c->lease_namespace, &c->lease_name,  &c->identity, &c->log_level};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        free(*all[i]);
        *all[i] = NULL;
    }
}

/* ---- health ---------------------------------------------------------------------------------------------------- */

typedef struct {
    int port;
    int fd;
    _Atomic double heartbeat; /* rf__now() of the cycle loop's last turn */
    atomic_int ready;
} s_health_t;

static void *s_health_run(void *arg)
{
    s_health_t *h = arg;
    while (!s_stop) {
        struct pollfd p = {.fd = h->fd, .events = POLLIN};
        if (poll(&p, 1, 200) <= 0)
            continue;
        int c = accept(h->fd, NULL, NULL);
        if (c < 0)
            continue;
        char req[512];
        struct pollfd pc = {.fd = c, .events = POLLIN};
        ssize_t n = poll(&pc, 1, 1000) > 0 ? recv(c, req, sizeof req - 1, 0) : 0;
        req[n > 0 ? n : 0] = '\0';
        bool alive = rf__now() - h->heartbeat < 60;
        bool ok = strncmp(req, "GET /readyz", 11) == 0    ? h->ready && alive
                  : strncmp(req, "GET /healthz", 12) == 0 ? alive
                                                          : false;
        const char *body = ok ? "ok\n" : "not ok\n";
        char out[256];
        int m = snprintf(out, sizeof out,
                         "HTTP/1.1 %s\r\nContent-Type: text/plain\r\nContent-Length: %zu\r\n"
                         "Connection: close\r\n\r\n%s",
                         ok ? "200 OK" : "503 Service Unavailable", strlen(body), body);
        if (send(c, out, (size_t)m, MSG_NOSIGNAL) < 0)
            rf__log(RF_LOG_DEBUG, "health: send: %s", strerror(errno));
        close(c);
    }
    return NULL;
}

/* ---- the cycle ------------------------------------------------------------------------------------------------- */

typedef struct {
    s_cfg_t *cfg;
    rf__cache_t *cache;
    rf__binder_t *binder;
    rf_client_t *client;
    rf__gang_opts_t gopts;
    long cycles, solves;
} s_loop_t;

static void s_cycle(s_loop_t *L)
{
    rf__plan_t plan;
    rf_error_t err;
    rf_error_clear(&err);
    double t_build = rf__now();
    rf__cache_lock(L->cache);
    rf_status s = rf__plan_build(L->cache, &L->gopts, rf__binder_holds, L->binder, &plan, &err);
    rf__cache_unlock(L->cache);
    L->cycles++;
    if (s != RF_OK) {
        rf__log(RF_LOG_ERROR, "building the problem: %s%s%s", err.path, err.path[0] ? ": " : "", err.message);
        return;
    }
    for (int32_t i = 0; i < plan.n_gangs; i++) {
        const rf__pgang_t *g = &plan.gangs[i];
        if (g->state == RF_GANG_REFUSED)
            rf__binder_tell(L->binder, g, g->why);
        else if (g->state == RF_GANG_WAITING)
            rf__log(RF_LOG_DEBUG, "gang %s waits: %s", g->name, g->why);
    }
    if (!plan.json) {
        rf__plan_fini(&plan);
        return;
    }
    char *answer = NULL;
    size_t alen = 0;
    double t0 = rf__now();
    s = rf_client_solve_json(L->client, plan.json, plan.len, &answer, &alen, &err);
    L->solves++;
    if (s != RF_OK) {
        rf__log(RF_LOG_ERROR, "rackfitd: %s%s%s (%s)", err.path, err.path[0] ? ": " : "", err.message,
                rf_status_code(s));
        free(answer);
        rf__plan_fini(&plan);
        return;
    }
    rf__log(RF_LOG_INFO, "cycle: problem of %d gangs built in %.1f ms, solved by rackfitd in %.1f ms", plan.n_sent,
            (t0 - t_build) * 1e3, (rf__now() - t0) * 1e3);
    rf__decision_t *d = NULL;
    int32_t nd = 0;
    if (rf__decisions_from_answer(&plan, answer, alen, &d, &nd, &err) != RF_OK) {
        rf__log(RF_LOG_ERROR, "the answer from rackfitd: %s", err.message);
    } else {
        /* Bind in the problem's order (higher priority first is the solver's job: it admitted them together). */
        for (int32_t i = 0; i < nd && !rf__binder_stopped(L->binder); i++) {
            if (d[i].admitted) {
                char why[1024];
                rf__bind_gang(L->binder, &d[i], why, sizeof why);
            } else {
                rf__binder_tell(L->binder, &plan.gangs[d[i].plan_gang], d[i].reason);
            }
        }
    }
    rf__decisions_free(&d, nd);
    free(answer);
    rf__plan_fini(&plan);
}

/* The earliest end of a hold after `after` (the last cycle), or 0: a gang
 * whose backoff ended since is due for another cycle. */
static double s_next_hold(const rf__binder_t *b, double after)
{
    double next = 0;
    for (int32_t i = 0; i < b->n_holds; i++)
        if (b->holds[i].until > after && (next == 0 || b->holds[i].until < next))
            next = b->holds[i].until;
    return next;
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

int main(int argc, char **argv)
{
    rf__log_program("rackfit-watch");
    s_cfg_t cfg = {.leader_elect = true,
                   .time_limit_ms = 1000,
                   .solve_timeout_ms = 30000,
                   .concurrency = 64,
                   .max_retries = 5,
                   .request_timeout_ms = 10000,
                   .debounce_ms = 20,
                   .batch_max_ms = 250,
                   .watch_timeout_s = 300,
                   .lease_duration_s = 15,
                   .qps = 200,
                   .burst = 400,
                   .admit_timeout_s = 300,
                   .backoff_base_s = 1,
                   .backoff_cap_s = 300,
                   .renew_deadline_s = 10,
                   .retry_period_s = 2};
    rf_error_t err;
    rf_error_clear(&err);
    int rc = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            s_usage(stdout);
            return 0;
        }
        if (strcmp(argv[i], "--config") == 0 && i + 1 < argc &&
            rf__yaml_flat_load(argv[i + 1], s_set, &cfg, &err) != RF_OK) {
            fprintf(stderr, "rackfit-watch: %s: %s%s%s\n", argv[i + 1], err.path, err.path[0] ? ": " : "", err.message);
            s_cfg_free(&cfg);
            return 2;
        }
    }
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--in-cluster") == 0) {
            cfg.in_cluster = true;
            continue;
        }
        if (strncmp(a, "--", 2) != 0 || i + 1 >= argc) {
            fprintf(stderr, "rackfit-watch: unexpected argument `%s` (see --help)\n", a);
            s_cfg_free(&cfg);
            return 2;
        }
        const char *v = argv[++i];
        if (strcmp(a, "--config") == 0)
            continue;
        if (s_set(&cfg, a + 2, v, &err) != RF_OK) {
            fprintf(stderr, "rackfit-watch: --%s: %s\n", err.path, err.message);
            s_cfg_free(&cfg);
            return 2;
        }
    }
    if (cfg.log_level) {
        static const char *const lv[] = {"error", "warn", "info", "debug"};
        for (int i = 0; i < 4; i++)
            if (strcmp(cfg.log_level, lv[i]) == 0)
                rf__log_threshold = i;
    }
    if ((!cfg.kubeconfig) == (!cfg.in_cluster) || !cfg.solver || !cfg.scheduler_name || !cfg.levels) {
        fprintf(stderr, "rackfit-watch: need one of --kubeconfig/--in-cluster, and --solver, --scheduler-name, "
                        "--levels (see --help)\n");
        s_cfg_free(&cfg);
        return 2;
    }
    /* levels and costs */
    char *levels_buf = strdup(cfg.levels);
    const char *levels[S_MAX_LEVELS];
    double costs[S_MAX_LEVELS];
    int n_levels = 0, n_costs = 0;
    for (char *save = NULL, *t = strtok_r(levels_buf, ",", &save); t && n_levels < S_MAX_LEVELS;
         t = strtok_r(NULL, ",", &save))
        levels[n_levels++] = t;
    if (cfg.level_costs) {
        char *cb = strdup(cfg.level_costs);
        for (char *save = NULL, *t = strtok_r(cb, ",", &save); t && n_costs < S_MAX_LEVELS;
             t = strtok_r(NULL, ",", &save))
            costs[n_costs++] = strtod(t, NULL);
        free(cb);
        if (n_costs != n_levels) {
            fprintf(stderr, "rackfit-watch: level-costs has %d values for %d levels\n", n_costs, n_levels);
            free(levels_buf);
            s_cfg_free(&cfg);
            return 2;
        }
    }
    char ident[256];
    if (cfg.identity)
        snprintf(ident, sizeof ident, "%s", cfg.identity);
    else if (getenv("POD_NAME"))
        snprintf(ident, sizeof ident, "%s", getenv("POD_NAME"));
    else {
        char host[200] = "host";
        gethostname(host, sizeof host - 1);
        snprintf(ident, sizeof ident, "%s-%d", host, (int)getpid());
    }

    rf__kubeconfig_t kc;
    rf__kube_t *kube = NULL;
    rf__cache_t *cache = NULL;
    rf_client_t *client = NULL;
    rf__kmulti_t *multi = NULL;
    rf__binder_t binder;
    rf__binder_init(&binder);
    memset(&kc, 0, sizeof kc);
    pthread_t wt[RF_KIND_COUNT], lt, ht;
    bool started[RF_KIND_COUNT] = {false}, lstarted = false, hstarted = false;
    rf__watch_t watches[RF_KIND_COUNT];
    memset(watches, 0, sizeof watches);
    rf__leader_t leader;
    memset(&leader, 0, sizeof leader);
    s_health_t health = {.fd = -1, .heartbeat = rf__now()};

    if (rf__kube_global_init(&err) != RF_OK ||
        (cfg.in_cluster ? rf__kubeconfig_in_cluster(NULL, &kc, &err)
                        : rf__kubeconfig_load(cfg.kubeconfig, cfg.context, &kc, &err)) != RF_OK ||
        !(kube = rf__kube_new(&kc, &err))) {
        fprintf(stderr, "rackfit-watch: %s%s%s\n", err.path, err.path[0] ? ": " : "", err.message);
        rc = 2;
        goto done;
    }
    rf_client_opts_t copts;
    rf_client_opts_default(&copts);
    copts.timeout_ms = (int)cfg.solve_timeout_ms;
    if (!(client = rf_client_new(cfg.solver, &copts, &err))) {
        fprintf(stderr, "rackfit-watch: --solver %s: %s\n", cfg.solver, err.message);
        rc = 2;
        goto done;
    }
    cache = rf__cache_new((1u << RF_KIND_NODE) | (1u << RF_KIND_POD) | (1u << RF_KIND_PODGROUP));
    multi = rf__kmulti_new(kube, (int)cfg.concurrency);
    if (!cache || !multi) {
        fprintf(stderr, "rackfit-watch: out of memory\n");
        rc = 3;
        goto done;
    }
    struct sigaction sa = {.sa_handler = s_on_signal};
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);

    static const char *const paths[RF_KIND_COUNT] = {"/api/v1/nodes", "/api/v1/pods",
                                                     "/apis/scheduling.x-k8s.io/v1alpha1/podgroups"};
    for (int k = 0; k < RF_KIND_COUNT; k++) {
        watches[k] = (rf__watch_t){.kube = kube,
                                   .cache = cache,
                                   .kind = (rf__kind)k,
                                   .path = paths[k],
                                   .stop = &s_stop,
                                   .timeout_s = cfg.watch_timeout_s};
        started[k] = pthread_create(&wt[k], NULL, rf__watch_run, &watches[k]) == 0;
    }
    const char *lease_ns = cfg.lease_namespace ? cfg.lease_namespace : kc.namespace_ ? kc.namespace_ : "rackfit-system";
    leader = (rf__leader_t){.kube = kube,
                            .ns = lease_ns,
                            .name = cfg.lease_name ? cfg.lease_name : "rackfit-watch",
                            .identity = ident,
                            .lease_s = (int)cfg.lease_duration_s,
                            .renew_deadline_s = cfg.renew_deadline_s,
                            .retry_s = cfg.retry_period_s,
                            .settle_s = (double)cfg.request_timeout_ms / 1e3,
                            .stop = &s_leader_stop};
    if (cfg.leader_elect)
        lstarted = pthread_create(&lt, NULL, rf__leader_run, &leader) == 0;
    else
        leader.leading = 1;
    if (cfg.health_port > 0) {
        health.port = (int)cfg.health_port;
        health.fd = socket(AF_INET, SOCK_STREAM, 0);
        int one = 1;
        setsockopt(health.fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        struct sockaddr_in sin = {
            .sin_family = AF_INET, .sin_port = htons((uint16_t)health.port), .sin_addr.s_addr = htonl(INADDR_ANY)};
        if (health.fd < 0 || bind(health.fd, (struct sockaddr *)&sin, sizeof sin) != 0 || listen(health.fd, 16) != 0) {
            fprintf(stderr, "rackfit-watch: --health-port %d: %s\n", health.port, strerror(errno));
            rc = 2;
            s_stop = 1;
        } else {
            hstarted = pthread_create(&ht, NULL, s_health_run, &health) == 0;
        }
    }
    binder.kube = kube;
    binder.multi = multi;
    binder.cache = cache;
    binder.lost = &leader.lost;
    binder.stop = &s_stop;
    binder.lease_until = cfg.leader_elect ? &leader.valid_until : NULL;
    binder.heartbeat = &health.heartbeat;
    binder.identity = ident;
    binder.scheduler_name = cfg.scheduler_name;
    binder.max_retries = (int)cfg.max_retries;
    binder.timeout_ms = cfg.request_timeout_ms;
    binder.admit_timeout_s = cfg.admit_timeout_s;
    binder.backoff_base_s = cfg.backoff_base_s;
    binder.backoff_cap_s = cfg.backoff_cap_s;
    rf__limiter_init(&binder.lim, cfg.qps, cfg.burst);
    s_loop_t L = {.cfg = &cfg, .cache = cache, .binder = &binder, .client = client};
    L.gopts = (rf__gang_opts_t){.scheduler_name = cfg.scheduler_name,
                                .levels = levels,
                                .n_levels = n_levels,
                                .level_costs = n_costs ? costs : NULL,
                                .mode = cfg.mode ? cfg.mode : "auto",
                                .time_limit_ms = cfg.time_limit_ms,
                                .value_resource = cfg.value_resource};
    rf__log(RF_LOG_INFO, "rackfit-watch %s: API server %s, solver %s, scheduler name %s, %d levels", ident,
            rf__kube_server(kube), cfg.solver, cfg.scheduler_name, n_levels);

    bool recovered = false;
    uint64_t seen_gen = 0;
    double last_cycle = 0;
    while (!s_stop && !rf__leader_lost(&leader)) {
        health.heartbeat = rf__now();
        rf__cache_lock(cache);
        bool synced = (cache->synced & cache->kinds) == cache->kinds;
        health.ready = synced;
        if (!synced || !leader.leading) {
            s_wait(cache, 0.2);
            rf__cache_unlock(cache);
            continue;
        }
        rf__cache_unlock(cache);
        if (!recovered && rf__now() < leader.recover_after) {
            /* the Lease was taken over from a holder that let it expire: its last requests may still land */
            rf__cache_lock(cache);
            s_wait(cache, 0.2);
            rf__cache_unlock(cache);
            continue;
        }
        if (!recovered) {
            rf__log(RF_LOG_INFO, "synced and leading: checking the intents left by earlier watchers");
            rf__binder_recover(&binder);
            recovered = true;
        }
        rf__binder_follow(&binder);
        rf__cache_lock(cache);
        double hold = s_next_hold(&binder, last_cycle);
        bool due = cache->generation != seen_gen || (hold > 0 && hold <= rf__now());
        if (!due) {
            double w = binder.n_follows ? 0.05 : 0.2;
            if (hold > 0 && hold - rf__now() < w)
                w = hold - rf__now() > 0.001 ? hold - rf__now() : 0.001;
            s_wait(cache, w);
            due = cache->generation != seen_gen || (hold > 0 && hold <= rf__now());
        }
        if (due) {
            /* let a burst of changes settle: debounce-ms of quiet, at most batch-max-ms */
            double start = rf__now();
            uint64_t g = cache->generation;
            for (;;) {
                s_wait(cache, (double)cfg.debounce_ms / 1e3);
                if (cache->generation == g || rf__now() - start >= (double)cfg.batch_max_ms / 1e3 || s_stop)
                    break;
                g = cache->generation;
            }
            seen_gen = cache->generation;
        }
        rf__cache_unlock(cache);
        if (!due)
            continue;
        last_cycle = rf__now();
        s_cycle(&L);
    }
    if (rf__leader_lost(&leader)) {
        rf__log(RF_LOG_ERROR, "the Lease was lost or not renewed in time: stopping (exit 1)");
        rc = 1;
    }
    rf__log(RF_LOG_INFO, "stopping (%ld cycles, %ld solves, %ld pods bound in %ld gangs, %ld rollbacks, %ld retries)",
            L.cycles, L.solves, binder.binds_ok, binder.gangs_bound, binder.rollbacks, binder.retries);
done:
    /* the cycle loop has returned (nothing in flight): only now may the Lease be released */
    s_stop = 1;
    s_leader_stop = 1;
    for (int k = 0; k < RF_KIND_COUNT; k++)
        if (started[k])
            pthread_join(wt[k], NULL);
    if (lstarted)
        pthread_join(lt, NULL);
    if (hstarted)
        pthread_join(ht, NULL);
    if (health.fd >= 0)
        close(health.fd);
    rf__binder_fini(&binder);
    rf__kmulti_destroy(&multi);
    rf_client_destroy(&client);
    rf__cache_destroy(&cache);
    rf__kube_destroy(&kube);
    rf__kubeconfig_fini(&kc);
    rf__kube_global_fini();
    free(levels_buf);
    s_cfg_free(&cfg);
    return rc;
}
