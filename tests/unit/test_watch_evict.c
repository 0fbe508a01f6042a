/* tests/unit/test_watch_evict.c: the Eviction API version the watcher
 * learns (watcher/follow.c rf__binder_evict) against a real HTTP exchange
 * on loopback. A server thread plays a v1.20 API server (policy/v1 Evictions
 * answered 400 naming the kind and version, as kube-apiserver does;
 * policy/v1beta1 ones 201) or a current one (policy/v1 answered 201). The
 * first pod evicted on the old server costs two requests (a victim's first
 * pod goes alone); every later one is sent as policy/v1beta1 at once. A current server is never asked
 * for v1beta1. Events are answered 201. A victim whose first pod is refused
 * (429) is kept whole and remembered; one never answered is kept whole only. */
#include <criterion/criterion.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../support/leak.h"
#include "../support/loophttp.h"
#include "follow.h"

/* The API server's side: policy/v1 missing on an "old" server, a
 * PodDisruptionBudget refusing p-0, and what was asked of it. */
typedef struct {
    rf_loophttp_t http;
    bool old; /* a server before 1.22: no policy/v1 */
    bool pdb; /* every eviction of p-0 is refused with 429 (a PodDisruptionBudget) */
    atomic_int v1, v1beta1, events, refused;
} s_srv_t;

static int s_answer(void *user, const char *req, const char **body, const char **headers)
{
    s_srv_t *s = user;
    if (strstr(req, "/eviction")) {
        if (s->pdb && strstr(req, "/pods/p-0/")) {
            atomic_fetch_add(&s->refused, 1);
            *headers = "Retry-After: 0\r\n";
            *body = "{\"kind\":\"Status\",\"message\":\"Cannot evict pod as it would violate the pod's "
                    "disruption budget.\",\"reason\":\"TooManyRequests\",\"code\":429}";
            return 429;
        }
        if (strstr(req, "\"policy/v1beta1\"")) {
            atomic_fetch_add(&s->v1beta1, 1);
        } else {
            atomic_fetch_add(&s->v1, 1);
            if (s->old) {
                *body = "{\"kind\":\"Status\",\"status\":\"Failure\",\"message\":\"no kind \\\"Eviction\\\" is "
                        "registered for version \\\"policy/v1\\\" in scheme\",\"reason\":\"BadRequest\",\"code\":400}";
                return 400;
            }
        }
    } else if (strstr(req, "/events")) {
        atomic_fetch_add(&s->events, 1);
    }
    return 201;
}

/* Evict pods p-FROM .. p-(FROM+N-1) of gang ns/g; returns how many failed. */
static int s_evict(rf__binder_t *b, rf__kmulti_t *multi, int from, int n)
{
    char names[8][16], uids[8][16];
    rf__bind_t pods[8];
    for (int i = 0; i < n; i++) {
        snprintf(names[i], sizeof names[i], "p-%d", from + i);
        snprintf(uids[i], sizeof uids[i], "u-%d", from + i);
        pods[i] = (rf__bind_t){.ns = "ns", .name = names[i], .uid = uids[i], .node = ""};
    }
    rf__requeue_t rq = {0}; /* a preemption: no requeue annotation */
    return rf__binder_evict(b, multi, "ns/g", pods, n, "preempted for ns/hi", &rq);
}

static void s_run(bool old, s_srv_t *srv)
{
    srv->old = old;
    rf_loophttp_start(&srv->http, s_answer, srv);
    rf_error_t err;
    rf__kube_global_init(&err);
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%d", srv->http.port);
    rf__kubeconfig_t kc = {.server = url, .token = "t"};
    rf__binder_t b;
    rf__binder_init(&b);
    b.kube = rf__kube_new(&kc, &err);
    cr_assert_not_null(b.kube);
    b.cache = rf__cache_new(7);
    b.max_retries = 1;
    b.timeout_ms = 2000;
    b.identity = "test";
    b.scheduler_name = "rackfit";
    rf__kmulti_t *multi = rf__kmulti_new(b.kube, 4);
    cr_assert_eq(s_evict(&b, multi, 0, 2), 0, "the first victim is evicted");
    cr_assert_eq(s_evict(&b, multi, 2, 3), 0, "the second victim is evicted");
    cr_assert_eq(atomic_load(&b.evictions), 5);
    cr_assert_eq(srv->events, 5, "a Preempted Event per pod");
    rf_loophttp_stop(&srv->http);
    cr_assert_eq(atomic_load(&b.no_policy_v1), old ? 1 : 0, "remembered only on the old server");
    rf__kmulti_destroy(&multi);
    rf__cache_destroy(&b.cache);
    rf__kube_destroy(&b.kube);
    rf__binder_fini(&b);
    rf__kube_global_fini();
}

Test(watch_evict, v1beta1_learned_once)
{
    s_srv_t srv = {0};
    s_run(true, &srv);
    cr_assert_eq(srv.v1, 1, "only the first victim's first pod is tried as policy/v1 (got %d)", srv.v1);
    cr_assert_eq(srv.v1beta1, 5, "every pod evicted as policy/v1beta1 (got %d)", srv.v1beta1);
    rf_test_no_leaks();
}

Test(watch_evict, current_server_stays_v1)
{
    s_srv_t srv = {0};
    s_run(false, &srv);
    cr_assert_eq(srv.v1, 5);
    cr_assert_eq(srv.v1beta1, 0, "a server with policy/v1 is never asked for v1beta1");
    rf_test_no_leaks();
}

/* A victim whose first pod's eviction is refused (429 past the retries): its
 * other pods are not evicted (the gang stays whole), no Event is posted, and
 * the gang is remembered as unevictable (sent as not preemptible). */
Test(watch_evict, refused_victim_kept_whole)
{
    s_srv_t srv = {.pdb = true};
    rf_loophttp_start(&srv.http, s_answer, &srv);
    rf_error_t err;
    rf__kube_global_init(&err);
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%d", srv.http.port);
    rf__kubeconfig_t kc = {.server = url, .token = "t"};
    rf__binder_t b;
    rf__binder_init(&b);
    b.kube = rf__kube_new(&kc, &err);
    b.cache = rf__cache_new(7);
    b.max_retries = 1;
    b.timeout_ms = 2000;
    b.identity = "test";
    b.scheduler_name = "rackfit";
    rf__kmulti_t *multi = rf__kmulti_new(b.kube, 4);
    cr_assert(!rf__binder_unevictable(&b, "ns/g"));
    cr_assert_eq(s_evict(&b, multi, 0, 3), 3, "nothing of the victim is evicted");
    cr_assert_geq(srv.refused, 2, "the 429 is retried (got %d)", srv.refused);
    cr_assert_eq(srv.v1 + srv.v1beta1, 0, "its other pods are never asked to go");
    cr_assert_eq(srv.events, 0, "nobody is told of an eviction that did not happen");
    cr_assert_eq(atomic_load(&b.evictions), 0);
    cr_assert(rf__binder_unevictable(&b, "ns/g"), "sent as not preemptible from now on");
    cr_assert(!rf__binder_unevictable(&b, "ns/other"));
    rf_loophttp_stop(&srv.http);
    rf__kmulti_destroy(&multi);
    rf__cache_destroy(&b.cache);
    rf__kube_destroy(&b.kube);
    rf__binder_fini(&b);
    rf__kube_global_fini();
    rf_test_no_leaks();
}

/* A victim whose first eviction is never answered (nobody listens): kept
 * whole too, but not remembered as refused (the preemptor waits its timeout). */
Test(watch_evict, unanswered_victim_not_marked)
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
    rf__kmulti_t *multi = rf__kmulti_new(b.kube, 4);
    cr_assert_eq(s_evict(&b, multi, 0, 2), 2);
    cr_assert_eq(atomic_load(&b.evictions), 0);
    cr_assert(!rf__binder_unevictable(&b, "ns/g"), "no answer is no refusal");
    rf__kmulti_destroy(&multi);
    rf__cache_destroy(&b.cache);
    rf__kube_destroy(&b.kube);
    rf__binder_fini(&b);
    rf__kube_global_fini();
    rf_test_no_leaks();
}
