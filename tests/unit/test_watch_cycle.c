/* tests/unit/test_watch_cycle.c: the cycle thread's decisions
 * (watcher/cycle.c, docs/watcher.md "Cycles"), with rf__cycle_run on a
 * thread of its own over a real cache, binder and pool, fed through the
 * watch event path (rf__watch_apply). In the first tests no plan sends a
 * gang, so no rackfitd is asked (the client points where nobody listens;
 * `solves` stays 0, which they check): what is driven is when a cycle runs. A loud
 * change builds a plan; a change that only touched pods of held gangs
 * quietly (bound where assumed, started) builds none and is counted as
 * skipped; a gang with a quiet change that is no longer held brings a plan
 * without a new change; a hold's or a requeue's end brings one. Before the
 * first cycle: nothing until the cache is synced and the Lease is held, the
 * takeover check (recover.h) only after `recover_after`, and only once. The
 * loop returns on stop and on a lost Lease. API requests (rollback, tell)
 * go to a port nobody listens on. The last test runs the real rackfitd (the
 * built binary, skipped when it is not built) and a loopback API server: the
 * plan is solved, the admitted gang bound by a binder thread with its
 * intent, the one that fits nowhere told and never bound. */
#include <criterion/criterion.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../support/leak.h"
#include "../support/loophttp.h"
#include "arena.h"
#include "cycle.h"
#include "json.h"
#include "watch.h"

static const char *const s_levels[] = {"rackfit.io/block", "rackfit.io/rack", "kubernetes.io/hostname"};

typedef struct {
    rf__binder_t b;
    rf__pool_t *pool;
    rf__leader_t leader;
    rf__cycle_t c;
    atomic_int stop, ready;
    _Atomic double heartbeat;
    pthread_t t;
    bool running;
} s_fix_t;

static void *s_run(void *arg)
{
    rf__cycle_run(arg);
    return NULL;
}

/* A binder, pool and cycle over an empty cache of `kinds`, its API server at `api` and rackfitd at `solver`; not
 * synced, leading, nothing to wait for after the takeover. */
static void s_init_at(s_fix_t *f, unsigned kinds, const char *api, const char *solver)
{
    memset(f, 0, sizeof *f);
    rf_error_t err;
    rf__kube_global_init(&err);
    rf__kubeconfig_t kc = {.server = (char *)api, .token = "t"};
    rf__binder_init(&f->b);
    f->b.kube = rf__kube_new(&kc, &err);
    cr_assert_not_null(f->b.kube);
    f->b.cache = rf__cache_new(kinds);
    f->b.cache->ours = strdup("rackfit");
    f->b.max_retries = 0;
    f->b.timeout_ms = 300;
    f->b.identity = "test";
    f->b.scheduler_name = "rackfit";
    f->b.multi = rf__kmulti_new(f->b.kube, 2);
    f->pool = rf__pool_new(&f->b, 1, 4);
    cr_assert_not_null(f->pool);
    atomic_store(&f->leader.leading, 1);
    f->leader.stop = &f->stop;
    rf_client_opts_t co;
    rf_client_opts_default(&co);
    co.timeout_ms = solver ? 10000 : 200;
    f->c = (rf__cycle_t){.cache = f->b.cache,
                         .binder = &f->b,
                         .pool = f->pool,
                         .client = rf_client_new(solver ? solver : "tcp://127.0.0.1:1", &co, &err),
                         .gopts = {.scheduler_name = "rackfit",
                                   .levels = s_levels,
                                   .n_levels = 3,
                                   .mode = "greedy",
                                   .time_limit_ms = 500},
                         .leader = &f->leader,
                         .stop = &f->stop,
                         .heartbeat = &f->heartbeat,
                         .ready = &f->ready,
                         .debounce_ms = 20,
                         .batch_max_ms = 100};
    cr_assert_not_null(f->c.client, "%s", err.message);
}

/* Pods only; API requests and rackfitd to nobody. */
static void s_init(s_fix_t *f)
{
    s_init_at(f, 1u << RF_KIND_POD, "http://127.0.0.1:1", NULL);
}

static void s_start(s_fix_t *f)
{
    cr_assert_eq(pthread_create(&f->t, NULL, s_run, &f->c), 0);
    f->running = true;
}

static void s_join(s_fix_t *f)
{
    if (f->running)
        pthread_join(f->t, NULL);
    f->running = false;
}

static void s_fini(s_fix_t *f)
{
    atomic_store(&f->stop, 1);
    s_join(f);
    rf__pool_destroy(&f->pool);
    rf_client_destroy(&f->c.client);
    rf__kmulti_destroy(&f->b.multi);
    rf__cache_destroy(&f->b.cache);
    rf__kube_destroy(&f->b.kube);
    rf__binder_fini(&f->b);
    rf__kube_global_fini();
}

/* The cycle's counters, read under the cache lock (plans_skipped is written under it; cycles is a long written by
 * the one cycle thread). */
static long s_cycles(s_fix_t *f)
{
    rf__cache_lock(f->b.cache);
    long n = f->c.cycles;
    rf__cache_unlock(f->b.cache);
    return n;
}

static unsigned long s_skipped(s_fix_t *f)
{
    rf__cache_lock(f->b.cache);
    unsigned long n = f->c.plans_skipped;
    rf__cache_unlock(f->b.cache);
    return n;
}

/* Wait up to `s` seconds for the cycle count to reach `want`; true when it did. */
static bool s_await_cycles(s_fix_t *f, long want, double s)
{
    double end = rf__now() + s;
    while (s_cycles(f) < want && rf__now() < end)
        usleep(5000);
    return s_cycles(f) >= want;
}

static bool s_await_skipped(s_fix_t *f, unsigned long want, double s)
{
    double end = rf__now() + s;
    while (s_skipped(f) < want && rf__now() < end)
        usleep(5000);
    return s_skipped(f) >= want;
}

static void s_sync(s_fix_t *f)
{
    rf__cache_lock(f->b.cache);
    f->b.cache->synced = f->b.cache->kinds;
    rf__cache_touch(f->b.cache);
    rf__cache_unlock(f->b.cache);
}

/* A watch event for pod ns/NAME of group g, scheduled by SCHED, with `node` (",\"nodeName\":...") and `status`. */
static void s_event_ann(s_fix_t *f, const char *type, const char *name, const char *sched, const char *node,
                        const char *status, const char *ann)
{
    char ev[2048], rv[64] = "";
    snprintf(ev, sizeof ev,
             "{\"type\":\"%s\",\"object\":{\"metadata\":{\"namespace\":\"ns\",\"name\":\"%s\",\"uid\":\"u-%s\","
             "\"resourceVersion\":\"1\",\"labels\":{\"scheduling.x-k8s.io/pod-group\":\"g\"},\"annotations\":{%s}},"
             "\"spec\":{\"schedulerName\":\"%s\"%s,\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":"
             "{\"nvidia.com/gpu\":\"1\"},\"limits\":{\"nvidia.com/gpu\":\"1\"}}}]},\"status\":{%s}}}",
             type, name, name, ann, sched, node, status);
    cr_assert_eq(rf__watch_apply(f->b.cache, RF_KIND_POD, ev, strlen(ev), rv, sizeof rv), 0, "%s", ev);
}

static void s_event(s_fix_t *f, const char *type, const char *name, const char *sched, const char *node,
                    const char *status)
{
    s_event_ann(f, type, name, sched, node, status, "");
}

/* Nothing happens for `s` seconds: the counts stay where they were. */
static void s_expect_still(s_fix_t *f, double s, const char *what)
{
    long c0 = s_cycles(f);
    unsigned long k0 = s_skipped(f);
    usleep((useconds_t)(s * 1e6));
    cr_expect_eq(s_cycles(f), c0, "%s: no cycle (%ld -> %ld)", what, c0, s_cycles(f));
    cr_expect_eq(s_skipped(f), k0, "%s: nothing skipped either", what);
}

/* Loud changes build plans; quiet changes of a held gang do not (counted as skipped); once that gang is no longer
 * held, a plan is built without any new change. */
Test(watch_cycle, loud_quiet_released)
{
    s_fix_t f;
    s_init(&f);
    f.b.backoff_base_s = 60; /* rf__binder_hold: held for a minute */
    f.b.backoff_cap_s = 60;
    s_start(&f);
    s_sync(&f);
    cr_assert(s_await_cycles(&f, 1, 3), "the first cycle once synced and leading");
    cr_expect_eq(atomic_load(&f.ready), 1, "synced: ready");
    s_expect_still(&f, 0.4, "no change since");

    /* the gang is held (a failed bind's backoff); its pod arrives: loud, a plan (which holds the gang out) */
    rf__binder_hold(&f.b, "ns/g");
    s_event(&f, "ADDED", "g-0", "rackfit", "", "\"phase\":\"Pending\"");
    cr_assert(s_await_cycles(&f, 2, 3), "a new pod is loud: a plan");
    s_expect_still(&f, 0.3, "after the new pod's plan");

    /* bound where the binder assumed it: quiet, and the gang is held: no plan */
    rf__cache_lock(f.b.cache);
    rf__kpod_t *p = rf__cache_get(f.b.cache, RF_KIND_POD, "ns/g-0");
    cr_assert_not_null(p);
    p->assumed_node = strdup("n1");
    rf__cache_unlock(f.b.cache);
    s_event(&f, "MODIFIED", "g-0", "rackfit", ",\"nodeName\":\"n1\"", "\"phase\":\"Pending\"");
    cr_assert(s_await_skipped(&f, 1, 3), "the quiet change is seen, and skipped");
    s_expect_still(&f, 0.4, "a quiet change of a held gang");
    cr_expect_eq(s_cycles(&f), 2);
    /* started and ready: quiet again */
    s_event(&f, "MODIFIED", "g-0", "rackfit", ",\"nodeName\":\"n1\"",
            "\"phase\":\"Running\",\"startTime\":\"2026-12-02T01:00:00Z\","
            "\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]");
    cr_assert(s_await_skipped(&f, 2, 3));
    s_expect_still(&f, 0.3, "a second quiet change");
    cr_expect_eq(s_cycles(&f), 2);

    /* the hold ends (no cache change at all): the gang with a quiet change is no longer held, a plan */
    rf__binder_unhold(&f.b, "ns/g");
    cr_assert(s_await_cycles(&f, 3, 3), "a quietly changed gang no longer held: a plan");
    s_expect_still(&f, 0.4, "the release is taken once");

    /* the gang no longer held: the same kind of quiet change makes a plan */
    s_event(&f, "MODIFIED", "g-0", "rackfit", ",\"nodeName\":\"n1\"",
            "\"phase\":\"Running\",\"startTime\":\"2026-12-02T01:00:00Z\","
            "\"conditions\":[{\"type\":\"Ready\",\"status\":\"False\"}]");
    cr_assert(s_await_cycles(&f, 4, 3), "a quiet change of a gang not held: a plan");
    cr_expect_eq(s_skipped(&f), 2);

    /* held again, and a loud change elsewhere (another scheduler's pod): a plan all the same */
    rf__binder_hold(&f.b, "ns/g");
    s_event(&f, "ADDED", "o-0", "default-scheduler", ",\"nodeName\":\"n2\"", "\"phase\":\"Running\"");
    cr_assert(s_await_cycles(&f, 5, 3), "another scheduler's pod: loud");
    /* a deletion is loud, even of a held gang's pod */
    s_event(&f, "DELETED", "g-0", "rackfit", ",\"nodeName\":\"n1\"", "\"phase\":\"Running\"");
    cr_assert(s_await_cycles(&f, 6, 3), "a deletion: loud");
    cr_expect_eq(s_skipped(&f), 2);
    cr_expect_eq(f.c.solves, 0, "no plan sent a gang: rackfitd never asked");
    s_fini(&f);
    rf_test_no_leaks();
}

/* A burst of loud changes within debounce-ms makes one plan, not one per change. */
Test(watch_cycle, burst_debounced)
{
    s_fix_t f;
    s_init(&f);
    f.c.debounce_ms = 150;
    f.c.batch_max_ms = 2000;
    s_start(&f);
    s_sync(&f);
    cr_assert(s_await_cycles(&f, 1, 3));
    s_expect_still(&f, 0.2, "settled");
    for (int i = 0; i < 5; i++) {
        char name[16];
        snprintf(name, sizeof name, "o-%d", i);
        s_event(&f, "ADDED", name, "default-scheduler", ",\"nodeName\":\"n2\"", "\"phase\":\"Running\"");
        usleep(20000);
    }
    cr_assert(s_await_cycles(&f, 2, 3));
    s_expect_still(&f, 0.4, "the burst made one plan");
    cr_expect_eq(s_cycles(&f), 2);
    s_fini(&f);
    rf_test_no_leaks();
}

/* A hold (bind backoff) or a requeue backoff ending brings a plan with no cache change; a failed requeue (no next
 * try) brings none. */
Test(watch_cycle, backoff_expiry)
{
    s_fix_t f;
    s_init(&f);
    f.b.backoff_base_s = 0.5;
    f.b.backoff_cap_s = 0.5;
    s_start(&f);
    s_sync(&f);
    cr_assert(s_await_cycles(&f, 1, 3));
    s_expect_still(&f, 0.3, "settled");
    double t0 = rf__now();
    rf__binder_hold(&f.b, "ns/h");
    cr_assert(s_await_cycles(&f, 2, 3), "the hold's end: a plan");
    double took = rf__now() - t0;
    cr_expect_geq(took, 0.45, "not before the hold ends (%.3f s)", took);
    cr_expect_lt(took, 1.5, "soon after it ends (%.3f s)", took);
    s_expect_still(&f, 0.6, "an ended hold brings one plan");

    t0 = rf__now();
    rf__binder_requeue_restore(&f.b, "ns/r", 1, rf__wall() + 0.5, false);
    cr_assert(s_await_cycles(&f, 3, 3), "the requeue backoff's end: a plan");
    took = rf__now() - t0;
    cr_expect_geq(took, 0.4, "not before the backoff ends (%.3f s)", took);
    cr_expect_lt(took, 1.5, "(%.3f s)", took);
    s_expect_still(&f, 0.6, "once");

    rf__binder_requeue_restore(&f.b, "ns/x", 9, 0, true);
    s_expect_still(&f, 0.6, "a failed gang has no next try");
    cr_expect_eq(f.c.solves, 0);
    s_fini(&f);
    rf_test_no_leaks();
}

/* Before the first cycle: nothing while not synced, nor while not leading; the intents left by an earlier watcher
 * are read only after recover_after, once; the loop ends on a lost Lease and on stop. */
Test(watch_cycle, ready_recover_stop)
{
    s_fix_t f;
    s_init(&f);
    /* a half-bound attempt: 1 of 2 bound (its rollback is a request to nobody; the attempt is counted) */
    s_event_ann(&f, "ADDED", "g-0", "rackfit", ",\"nodeName\":\"n1\"", "\"phase\":\"Running\"",
                "\"" RF_ANN_INTENT "\":\"att-1 n1 2\"");
    atomic_store(&f.leader.leading, 0);
    s_start(&f);
    usleep(300000);
    cr_expect_eq(atomic_load(&f.ready), 0, "not synced: not ready");
    cr_expect_gt(atomic_load(&f.heartbeat), 0, "the loop turns (heartbeat)");
    cr_expect_eq(s_cycles(&f), 0);
    rf__cache_lock(f.b.cache);
    f.b.cache->synced = f.b.cache->kinds;
    rf__cache_touch(f.b.cache);
    rf__cache_unlock(f.b.cache);
    usleep(400000);
    cr_expect_eq(atomic_load(&f.ready), 1, "synced: ready, leading or not");
    cr_expect_eq(s_cycles(&f), 0, "not leading: no cycle");
    cr_expect_eq(atomic_load(&f.b.rollbacks), 0, "not leading: no takeover check");
    f.leader.recover_after = rf__now() + 0.5;
    atomic_store(&f.leader.leading, 1);
    usleep(250000);
    cr_expect_eq(atomic_load(&f.b.rollbacks), 0, "the old holder's requests may still land: wait");
    cr_expect_eq(s_cycles(&f), 0);
    cr_assert(s_await_cycles(&f, 1, 3), "then the first cycle");
    cr_expect_eq(atomic_load(&f.b.rollbacks), 1, "the half-bound attempt rolled back before it");
    rf__cache_lock(f.b.cache);
    rf__cache_touch(f.b.cache);
    rf__cache_unlock(f.b.cache);
    cr_assert(s_await_cycles(&f, 2, 3));
    cr_expect_eq(atomic_load(&f.b.rollbacks), 1, "the takeover check runs once");
    double hb = atomic_load(&f.heartbeat);
    usleep(300000);
    cr_expect_gt(atomic_load(&f.heartbeat), hb, "the heartbeat keeps up between cycles");
    atomic_store(&f.leader.lost, 1);
    s_join(&f); /* returns on its own */
    long n = s_cycles(&f);
    atomic_store(&f.leader.lost, 0);
    rf__cache_lock(f.b.cache);
    rf__cache_touch(f.b.cache);
    rf__cache_unlock(f.b.cache);
    usleep(200000);
    cr_expect_eq(s_cycles(&f), n, "the loop has ended");
    atomic_store(&f.stop, 1);
    s_start(&f);
    s_join(&f); /* stop set: returns at once */
    s_fini(&f);
    rf_test_no_leaks();
}

/* ------------------------------------------------------------------------------------------------------------------
 * With a real rackfitd (the built binary, a child process on an ipc:// endpoint) and a loopback API server that
 * records every request: a plan is sent, the admitted gang handed to a binder thread (its Binding, with the intent),
 * the one that fits nowhere told why and never bound. */

/* The index of the first request with this method whose path ends in `suffix`, or -1. */
static int s_req(rf_loophttp_t *srv, const char *method, const char *suffix)
{
    int found = -1;
    pthread_mutex_lock(&srv->mu);
    for (int i = 0; i < srv->n && found < 0; i++) {
        size_t lp = strlen(srv->path[i]), ls = strlen(suffix);
        if (strcmp(srv->method[i], method) == 0 && lp >= ls && strcmp(srv->path[i] + lp - ls, suffix) == 0)
            found = i;
    }
    pthread_mutex_unlock(&srv->mu);
    return found;
}

/* Any request about pod ns/NAME (its path, or an Event naming it), other than its binding. */
static bool s_told(rf_loophttp_t *srv, const char *name)
{
    char p1[128], p2[128], ev[128];
    snprintf(p1, sizeof p1, "/pods/%s", name);
    snprintf(p2, sizeof p2, "/pods/%s/status", name);
    snprintf(ev, sizeof ev, "\"name\":\"%s\"", name);
    bool told = false;
    pthread_mutex_lock(&srv->mu);
    for (int i = 0; i < srv->n && !told; i++) {
        size_t lp = strlen(srv->path[i]);
        told = (lp >= strlen(p1) && strcmp(srv->path[i] + lp - strlen(p1), p1) == 0) ||
               (lp >= strlen(p2) && strcmp(srv->path[i] + lp - strlen(p2), p2) == 0) ||
               (strstr(srv->path[i], "/events") && strstr(srv->body[i], ev));
    }
    pthread_mutex_unlock(&srv->mu);
    return told;
}

typedef struct {
    char dir[64], endpoint[160], sock[128];
    pid_t pid;
} s_rfd_t;

extern char **environ;

/* Start the built rackfitd on a fresh ipc:// endpoint; fail when it has not been built (the build makes it). */
static void s_rfd_start(s_rfd_t *r)
{
    char bin[512];
    snprintf(bin, sizeof bin, "%s/rackfitd", RF_BIN_DIR);
    if (access(bin, X_OK) != 0)
        cr_assert_fail("%s not built (cmake --build --target rackfitd)", bin);
    snprintf(r->dir, sizeof r->dir, "/tmp/rf-cycle-XXXXXX");
    cr_assert_not_null(mkdtemp(r->dir));
    snprintf(r->sock, sizeof r->sock, "%s/d.sock", r->dir);
    snprintf(r->endpoint, sizeof r->endpoint, "ipc://%s", r->sock);
    char *argv[] = {bin, "--listen", r->endpoint, "--threads", "1", "--log-level", "warn", NULL};
    cr_assert_eq(posix_spawn(&r->pid, bin, NULL, NULL, argv, environ), 0);
    struct stat st;
    double end = rf__now() + 10;
    while (stat(r->sock, &st) != 0 && rf__now() < end)
        usleep(10000);
    cr_assert_eq(stat(r->sock, &st), 0, "rackfitd listens on %s", r->endpoint);
}

static void s_rfd_stop(s_rfd_t *r)
{
    kill(r->pid, SIGTERM);
    int status = 0;
    cr_expect_eq(waitpid(r->pid, &status, 0), r->pid);
    cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0, "rackfitd stopped cleanly (status %d)", status);
    unlink(r->sock);
    rmdir(r->dir);
}

static void s_put_node(rf__cache_t *c, const char *name, const char *rack)
{
    char buf[1024];
    snprintf(buf, sizeof buf,
             "{\"metadata\":{\"name\":\"%s\",\"labels\":{\"rackfit.io/block\":\"b1\",\"rackfit.io/rack\":\"%s\","
             "\"kubernetes.io/hostname\":\"%s\"}},\"spec\":{},\"status\":{\"allocatable\":{\"cpu\":\"8\","
             "\"memory\":\"32Gi\",\"pods\":\"110\",\"nvidia.com/gpu\":\"8\"},\"conditions\":[{\"type\":\"Ready\","
             "\"status\":\"True\"}]}}",
             name, rack, name);
    rf_limits_t lim;
    rf_limits_default(&lim);
    rf__arena_t *a = rf__arena_new(0);
    rf_doc_t *doc = NULL;
    rf_error_t err;
    cr_assert_eq(rf__json_parse(buf, strlen(buf), &lim, a, &doc, &err), RF_OK, "%s", err.message);
    rf__knode_t *n = NULL;
    cr_assert_eq(rf__knode_from_doc(doc, &n, &err), RF_OK, "%s", err.message);
    rf__cache_lock(c);
    cr_assert_eq(rf__cache_put(c, RF_KIND_NODE, n), RF_OK);
    rf__cache_unlock(c);
    rf__arena_destroy(&a);
}

/* A lone pending pod of ours (its own gang, ns/pod:NAME) asking for `gpus` GPUs. */
static void s_lone(s_fix_t *f, const char *name, int gpus)
{
    char ev[1024], rv[64] = "";
    snprintf(ev, sizeof ev,
             "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"namespace\":\"ns\",\"name\":\"%s\",\"uid\":\"u-%s\","
             "\"resourceVersion\":\"1\"},\"spec\":{\"schedulerName\":\"rackfit\",\"containers\":[{\"name\":\"c\","
             "\"resources\":{\"requests\":{\"cpu\":\"1\",\"nvidia.com/gpu\":\"%d\"},\"limits\":{\"nvidia.com/gpu\":"
             "\"%d\"}}}]},\"status\":{\"phase\":\"Pending\"}}}",
             name, name, gpus, gpus);
    cr_assert_eq(rf__watch_apply(f->b.cache, RF_KIND_POD, ev, strlen(ev), rv, sizeof rv), 0, "%s", ev);
}

Test(watch_cycle, solved_bound_told, .timeout = 60)
{
    s_rfd_t rfd;
    s_rfd_start(&rfd);
    rf_loophttp_t srv;
    memset(&srv, 0, sizeof srv);
    rf_loophttp_start(&srv, NULL, NULL);
    char api[64];
    snprintf(api, sizeof api, "http://127.0.0.1:%d", srv.port);
    s_fix_t f;
    s_init_at(&f, 1u << RF_KIND_NODE | 1u << RF_KIND_POD, api, rfd.endpoint);
    f.b.timeout_ms = 5000;
    s_put_node(f.b.cache, "n1", "r1");
    s_put_node(f.b.cache, "n2", "r2");
    s_lone(&f, "p-0", 4);  /* fits */
    s_lone(&f, "q-0", 16); /* more than any node has */
    s_start(&f);
    s_sync(&f);
    double end = rf__now() + 20;
    while ((s_req(&srv, "POST", "/pods/p-0/binding") < 0 || !s_told(&srv, "q-0")) && rf__now() < end)
        usleep(10000);
    int i = s_req(&srv, "POST", "/pods/p-0/binding");
    cr_assert_geq(i, 0, "the admitted gang's pod is bound (%d requests)", srv.n);
    cr_expect_geq(f.c.solves, 1, "the plan was sent to rackfitd (solves %ld, cycles %ld)", f.c.solves, f.c.cycles);
    cr_expect(strstr(srv.body[i], "\"kind\":\"Binding\"") != NULL, "%s", srv.body[i]);
    cr_expect(strstr(srv.body[i], "\"name\":\"n1\"") || strstr(srv.body[i], "\"name\":\"n2\""),
              "bound to a node of the cluster: %s", srv.body[i]);
    cr_expect(strstr(srv.body[i], "\"rackfit.io/bind-intent\"") != NULL, "the Binding carries the intent: %s",
              srv.body[i]);
    cr_expect(strstr(srv.body[i], " 1\"") != NULL, "the intent's SIZE is 1: %s", srv.body[i]);
    cr_expect_lt(s_req(&srv, "POST", "/pods/q-0/binding"), 0, "the gang that fits nowhere is not bound");
    cr_expect(s_told(&srv, "q-0"), "the gang that fits nowhere is told why");
    s_fini(&f);
    rf_loophttp_stop(&srv);
    s_rfd_stop(&rfd);
    rf_test_no_leaks();
}
