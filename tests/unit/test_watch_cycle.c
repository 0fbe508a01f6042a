/* tests/unit/test_watch_cycle.c: the cycle thread's decisions
 * (watcher/cycle.c, docs/watcher.md "Cycles"), with rf__cycle_run on a
 * thread of its own over a real cache, binder and pool, fed through the
 * watch event path (rf__watch_apply). No plan here sends a gang, so no
 * rackfitd is asked (the client points where nobody listens; `solves` stays
 * 0, which the tests check): what is driven is when a cycle runs. A loud
 * change builds a plan; a change that only touched pods of held gangs
 * quietly (bound where assumed, started) builds none and is counted as
 * skipped; a gang with a quiet change that is no longer held brings a plan
 * without a new change; a hold's or a requeue's end brings one. Before the
 * first cycle: nothing until the cache is synced and the Lease is held, the
 * takeover check (recover.h) only after `recover_after`, and only once. The
 * loop returns on stop and on a lost Lease. API requests (rollback, tell)
 * go to a port nobody listens on. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../support/leak.h"
#include "cycle.h"
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

/* A binder, pool and cycle over an empty pod cache; not synced, leading, nothing to wait for after the takeover. */
static void s_init(s_fix_t *f)
{
    memset(f, 0, sizeof *f);
    rf_error_t err;
    rf__kube_global_init(&err);
    rf__kubeconfig_t kc = {.server = "http://127.0.0.1:1", .token = "t"};
    rf__binder_init(&f->b);
    f->b.kube = rf__kube_new(&kc, &err);
    cr_assert_not_null(f->b.kube);
    f->b.cache = rf__cache_new(1u << RF_KIND_POD);
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
    co.timeout_ms = 200;
    f->c = (rf__cycle_t){.cache = f->b.cache,
                         .binder = &f->b,
                         .pool = f->pool,
                         .client = rf_client_new("tcp://127.0.0.1:1", &co, &err),
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
