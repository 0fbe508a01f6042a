/* tests/unit/test_watch_follow.c: the life of a bound gang
 * (watcher/follow.c) against the cache: its ready timeout (the PodGroup's
 * annotation, else a pod's, else the setting; a bad duration falls back to
 * the setting), a gang whose pods all become Ready (or Succeeded) dropped
 * with its requeue count forgotten, one not ready in time handed to a binder
 * thread for eviction and requeued, one losing a pod while starting
 * evicted too. The binder thread's requests go to a port nobody listens on
 * (the eviction itself runs against the emulator in watch_lifecycle.sh). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../support/leak.h"
#include "arena.h"
#include "follow.h"
#include "json.h"

static void s_put(rf__cache_t *c, const char *json, rf__kind kind)
{
    rf_limits_t lim;
    rf_limits_default(&lim);
    rf__arena_t *a = rf__arena_new(0);
    rf_doc_t *doc = NULL;
    rf_error_t err;
    cr_assert_eq(rf__json_parse(json, strlen(json), &lim, a, &doc, &err), RF_OK, "%s", err.message);
    void *obj = NULL;
    if (kind == RF_KIND_POD)
        cr_assert_eq(rf__kpod_from_doc(doc, (rf__kpod_t **)&obj, &err), RF_OK, "%s", err.message);
    else
        cr_assert_eq(rf__kpodgroup_from_doc(doc, (rf__kpodgroup_t **)&obj, &err), RF_OK, "%s", err.message);
    cr_assert_eq(rf__cache_put(c, kind, obj), RF_OK);
    rf__arena_destroy(&a);
}

/* A pod of group `g` bound to n1 in `phase`, Ready or not, with an optional ready-timeout annotation. */
static void s_pod(rf__cache_t *c, const char *name, const char *g, const char *phase, bool ready, const char *timeout)
{
    char buf[1024];
    snprintf(buf, sizeof buf,
             "{\"metadata\":{\"namespace\":\"ns\",\"name\":\"%s\",\"uid\":\"u-%s\",\"labels\":{\"scheduling.x-k8s.io/"
             "pod-group\":\"%s\"},\"annotations\":{%s%s%s}},\"spec\":{\"schedulerName\":\"rackfit\",\"nodeName\":"
             "\"n1\",\"containers\":[{\"name\":\"c\"}]},\"status\":{\"phase\":\"%s\",\"startTime\":"
             "\"2026-12-01T00:00:00Z\",\"conditions\":[{\"type\":\"Ready\",\"status\":\"%s\"}]}}",
             name, name, g, timeout ? "\"rackfit.io/ready-timeout\":\"" : "", timeout ? timeout : "",
             timeout ? "\"" : "", phase, ready ? "True" : "False");
    s_put(c, buf, RF_KIND_POD);
}

static rf__bind_t s_b(const char *name)
{
    static char uids[8][32];
    static int k;
    char *uid = uids[k++ % 8];
    snprintf(uid, 32, "u-%s", name);
    return (rf__bind_t){.ns = "ns", .name = (char *)name, .uid = uid, .node = "n1"};
}

Test(watch_follow, ready_timeout_sources)
{
    rf__binder_t b;
    rf__binder_init(&b);
    b.ready_timeout_s = 300;
    b.cache = rf__cache_new(7);
    s_put(b.cache,
          "{\"metadata\":{\"namespace\":\"ns\",\"name\":\"g\",\"annotations\":{\"rackfit.io/ready-timeout\":\"5m\"}},"
          "\"spec\":{\"minMember\":1}}",
          RF_KIND_PODGROUP);
    s_pod(b.cache, "g-0", "g", "Running", false, "90s");
    s_pod(b.cache, "h-0", "h", "Running", false, "90s");
    s_pod(b.cache, "k-0", "k", "Running", false, "soon");
    s_pod(b.cache, "m-0", "m", "Running", false, NULL);
    rf__bind_t g[] = {s_b("g-0")}, h[] = {s_b("h-0")}, k[] = {s_b("k-0")}, m[] = {s_b("m-0")};
    rf__cache_lock(b.cache);
    cr_assert_float_eq(rf__gang_ready_timeout(&b, "ns/g", g, 1), 300, 1e-9, "the PodGroup's annotation first");
    cr_assert_float_eq(rf__gang_ready_timeout(&b, "ns/h", h, 1), 90, 1e-9, "then a pod's");
    cr_assert_float_eq(rf__gang_ready_timeout(&b, "ns/k", k, 1), 300, 1e-9, "a bad duration: the setting");
    cr_assert_float_eq(rf__gang_ready_timeout(&b, "ns/m", m, 1), 300, 1e-9, "none: the setting");
    rf__cache_unlock(b.cache);
    rf__cache_destroy(&b.cache);
    rf__binder_fini(&b);
    rf_test_no_leaks();
}

Test(watch_follow, ready_dropped_late_evicted)
{
    rf_error_t err;
    rf__kube_global_init(&err);
    rf__kubeconfig_t kc = {.server = "http://127.0.0.1:1", .token = "t"};
    rf__binder_t b;
    rf__binder_init(&b);
    b.kube = rf__kube_new(&kc, &err);
    cr_assert_not_null(b.kube);
    b.cache = rf__cache_new(7);
    b.max_retries = 0;
    b.timeout_ms = 500;
    b.identity = "test";
    b.scheduler_name = "rackfit";
    rf__pool_t *pool = rf__pool_new(&b, 1, 4);
    cr_assert_not_null(pool);
    /* ok: every pod Ready or Succeeded; late: never Ready within 200 ms; brk: one pod gone */
    s_pod(b.cache, "ok-0", "ok", "Running", true, NULL);
    s_pod(b.cache, "ok-1", "ok", "Succeeded", false, NULL);
    s_pod(b.cache, "late-0", "late", "Running", false, "200ms");
    s_pod(b.cache, "late-1", "late", "Running", true, "200ms");
    s_pod(b.cache, "brk-0", "brk", "Running", false, NULL);
    rf__bind_t ok[] = {s_b("ok-0"), s_b("ok-1")}, late[] = {s_b("late-0"), s_b("late-1")},
               brk[] = {s_b("brk-0"), s_b("brk-1")};
    rf__binder_requeue_restore(&b, "ns/ok", 2, rf__wall() - 1, false);
    rf__follow_add(&b, "ns/ok", "a1", ok, 2, rf__now());
    rf__follow_add(&b, "ns/late", "a2", late, 2, rf__now());
    rf__follow_add(&b, "ns/brk", "a3", brk, 2, rf__now());
    cr_assert_eq(b.n_follows, 3);
    rf__binder_follow(&b, pool); /* brk-1 went away before its kubelet admitted it: a rollback */
    cr_assert_eq(b.n_follows, 1, "ok is ready, brk rolled back; late waits");
    cr_assert_eq(b.released, 2, "two follows ended: the cycle plans again even if nothing else changes");
    cr_assert_str_eq(b.follows[0].gang, "ns/late");
    rf__requeue_t rq;
    char why[256];
    cr_assert(!rf__binder_requeue_get(&b, "ns/ok", &rq, why, sizeof why), "a ready gang's requeue count is forgotten");
    usleep(300000);
    rf__binder_follow(&b, pool);
    cr_assert_eq(b.n_follows, 0);
    cr_assert(rf__binder_requeue_get(&b, "ns/late", &rq, why, sizeof why));
    cr_assert_eq(rq.count, 1);
    cr_assert(strstr(why, "1 of 2 pods not ready within 0.2 s") != NULL, "%s", why);
    rf__pool_destroy(&pool); /* waits for the jobs (their requests are refused at once) */
    cr_assert_eq(atomic_load(&b.evictions), 0, "nobody listens: nothing was evicted");
    /* a gang admitted, then losing a pod while it starts: evicted (not rolled back) and requeued */
    pool = rf__pool_new(&b, 1, 4);
    s_pod(b.cache, "brk-1", "brk", "Running", false, NULL);
    rf__bind_t brk2[] = {s_b("brk-0"), s_b("brk-1")};
    rf__follow_add(&b, "ns/brk", "a4", brk2, 2, rf__now());
    rf__binder_follow(&b, pool);
    cr_assert_eq(b.n_follows, 1, "admitted, not ready yet");
    rf__cache_lock(b.cache);
    rf__cache_del(b.cache, RF_KIND_POD, "ns/brk-1");
    rf__cache_unlock(b.cache);
    rf__binder_follow(&b, pool);
    cr_assert_eq(b.n_follows, 0);
    cr_assert(rf__binder_requeue_get(&b, "ns/brk", &rq, why, sizeof why));
    cr_assert(strstr(why, "pod ns/brk-1 went away while the gang was starting") != NULL, "%s", why);
    rf__pool_destroy(&pool);
    cr_assert_eq(atomic_load(&b.rollbacks), 1, "brk's first attempt was rolled back");
    rf__cache_destroy(&b.cache);
    rf__kube_destroy(&b.kube);
    rf__binder_fini(&b);
    rf__kube_global_fini();
    rf_test_no_leaks();
}

/* A pod of group `g` with uid `uid`, bound to n1 (or pending), carrying `intent` (or none). */
static void s_pod_intent(rf__cache_t *c, const char *name, const char *uid, bool bound, const char *intent)
{
    char buf[1024];
    snprintf(buf, sizeof buf,
             "{\"metadata\":{\"namespace\":\"ns\",\"name\":\"%s\",\"uid\":\"%s\",\"labels\":{\"scheduling.x-k8s.io/"
             "pod-group\":\"rc\"},\"annotations\":{%s%s%s}},\"spec\":{\"schedulerName\":\"rackfit\"%s,"
             "\"containers\":[{\"name\":\"c\"}]},\"status\":{\"phase\":\"Pending\"}}",
             name, uid, intent ? "\"rackfit.io/bind-intent\":\"" : "", intent ? intent : "", intent ? "\"" : "",
             bound ? ",\"nodeName\":\"n1\"" : "");
    s_put(c, buf, RF_KIND_POD);
}

Test(watch_follow, recreated_pod_bound_by_the_attempt_is_rolled_back)
{
    rf_error_t err;
    rf__kube_global_init(&err);
    rf__kubeconfig_t kc = {.server = "http://127.0.0.1:1", .token = "t"};
    rf__binder_t b;
    rf__binder_init(&b);
    b.kube = rf__kube_new(&kc, &err);
    b.cache = rf__cache_new(7);
    b.max_retries = 0;
    b.timeout_ms = 500;
    b.identity = "test";
    b.scheduler_name = "rackfit";
    /* rc-1 was recreated (uid u-new) while attempt a5 bound it: a server that
     * ignores the Binding's uid bound the new pod with a5's intent */
    s_pod_intent(b.cache, "rc-0", "u-rc-0", true, "a5 n1 2");
    s_pod_intent(b.cache, "rc-1", "u-new", true, "a5 n1 2");
    rf__cache_lock(b.cache);
    const rf__kpod_t *p = rf__cache_get(b.cache, RF_KIND_POD, "ns/rc-1");
    cr_assert(rf__follow_recreated_ours("a5", p));
    cr_assert(!rf__follow_recreated_ours("a", p), "a prefix of the attempt is another attempt");
    cr_assert(!rf__follow_recreated_ours("a6", p));
    rf__cache_unlock(b.cache);
    s_pod_intent(b.cache, "x-0", "u-x", false, "a5 n1 2");
    s_pod_intent(b.cache, "y-0", "u-y", true, NULL);
    rf__cache_lock(b.cache);
    cr_assert(!rf__follow_recreated_ours("a5", rf__cache_get(b.cache, RF_KIND_POD, "ns/x-0")), "not bound");
    cr_assert(!rf__follow_recreated_ours("a5", rf__cache_get(b.cache, RF_KIND_POD, "ns/y-0")), "no intent");
    rf__cache_unlock(b.cache);
    rf__pool_t *pool = rf__pool_new(&b, 1, 4);
    rf__bind_t rc[] = {s_b("rc-0"), s_b("rc-1")};
    rf__follow_add(&b, "ns/rc", "a5", rc, 2, rf__now());
    rf__binder_follow(&b, pool);
    cr_assert_eq(b.n_follows, 0, "the gang is rolled back");
    for (int i = 0; i < 200 && atomic_load(&b.rollbacks) == 0; i++) /* the pool may not have started it yet */
        usleep(10000);
    rf__pool_destroy(&pool);
    cr_assert_eq(atomic_load(&b.rollbacks), 1);
    rf__cache_destroy(&b.cache);
    rf__kube_destroy(&b.kube);
    rf__binder_fini(&b);
    rf__kube_global_fini();
    rf_test_no_leaks();
}
