/* tests/unit/test_watch_recover.c: taking over from an earlier watcher
 * (watcher/recover.c, docs/watcher.md "Crash safety") against a loopback
 * API server that records every request. The cache holds pods carrying the
 * `rackfit.io/bind-intent` annotation ("ATTEMPT NODE SIZE", set by each
 * pod's Binding): an attempt with all SIZE pods bound (or ended) is left
 * alone (followed when not yet admitted, never deleted); one with fewer
 * bound than SIZE is rolled back: each bound pod deleted with its uid as
 * precondition, pods that ended left alone. A pending pod carrying an
 * intent (left by an older watcher that patched it before binding) counts
 * as a partner left pending: that attempt is rolled back too. Pods of other
 * schedulers are ignored. Requeue states are restored from PodGroups. */
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
#include "arena.h"
#include "json.h"
#include "recover.h"

/* The DELETE of ns/NAME, or -1. */
static int s_delete_of(rf_loophttp_t *srv, const char *name)
{
    char path[256];
    snprintf(path, sizeof path, "/api/v1/namespaces/ns/pods/%s", name);
    for (int i = 0; i < srv->n; i++)
        if (strcmp(srv->method[i], "DELETE") == 0 && strcmp(srv->path[i], path) == 0)
            return i;
    return -1;
}

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

/* Pod ns/NAME of group G, scheduled by SCHED, bound to NODE (NULL: pending), in PHASE, started (startTime) or not,
 * with intent INTENT (NULL: none). */
static void s_pod(rf__cache_t *c, const char *name, const char *g, const char *sched, const char *node,
                  const char *phase, bool started, const char *intent)
{
    char buf[2048], nodef[300] = "", annf[300] = "", startf[64] = "";
    if (node)
        snprintf(nodef, sizeof nodef, "\"nodeName\":\"%s\",", node);
    if (intent)
        snprintf(annf, sizeof annf, "\"rackfit.io/bind-intent\":\"%s\"", intent);
    if (started)
        snprintf(startf, sizeof startf, ",\"startTime\":\"2026-12-01T00:00:00Z\"");
    snprintf(buf, sizeof buf,
             "{\"metadata\":{\"namespace\":\"ns\",\"name\":\"%s\",\"uid\":\"uid-%s\",\"labels\":{\"scheduling.x-k8s.io/"
             "pod-group\":\"%s\"},\"annotations\":{%s}},\"spec\":{%s\"schedulerName\":\"%s\",\"containers\":[{"
             "\"name\":\"c\"}]},\"status\":{\"phase\":\"%s\"%s}}",
             name, name, g, annf, nodef, sched, phase, startf);
    s_put(c, buf, RF_KIND_POD);
}

typedef struct {
    rf_loophttp_t srv;
    rf__binder_t b;
} s_fix_t;

static void s_fix_init(s_fix_t *f)
{
    memset(f, 0, sizeof *f);
    rf_loophttp_start(&f->srv, NULL, NULL);
    rf_error_t err;
    rf__kube_global_init(&err);
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%d", f->srv.port);
    rf__kubeconfig_t kc = {.server = url, .token = "t"};
    rf__binder_init(&f->b);
    f->b.kube = rf__kube_new(&kc, &err);
    cr_assert_not_null(f->b.kube);
    f->b.cache = rf__cache_new(7);
    f->b.max_retries = 1;
    f->b.timeout_ms = 2000;
    f->b.identity = "test";
    f->b.scheduler_name = "rackfit";
    f->b.multi = rf__kmulti_new(f->b.kube, 4);
    cr_assert_not_null(f->b.multi);
}

static void s_fix_fini(s_fix_t *f)
{
    rf_loophttp_stop(&f->srv);
    rf__kmulti_destroy(&f->b.multi);
    rf__cache_destroy(&f->b.cache);
    rf__kube_destroy(&f->b.kube);
    rf__binder_fini(&f->b);
    rf__kube_global_fini();
}

/* Every pod of the attempt bound: no request, nothing rolled back. Started pods are not followed; an attempt bound
 * but not yet admitted is followed (a follow-up, not a rollback). */
Test(watch_recover, all_bound_left_alone)
{
    s_fix_t f;
    s_fix_init(&f);
    s_pod(f.b.cache, "a-0", "a", "rackfit", "n1", "Running", true, "att-a n1 2");
    s_pod(f.b.cache, "a-1", "a", "rackfit", "n2", "Running", true, "att-a n2 2");
    s_pod(f.b.cache, "b-0", "b", "rackfit", "n3", "Pending", false, "att-b n3 3");
    s_pod(f.b.cache, "b-1", "b", "rackfit", "n3", "Pending", false, "att-b n3 3");
    s_pod(f.b.cache, "b-2", "b", "rackfit", "n4", "Succeeded", true, "att-b n4 3"); /* ended: counts as bound */
    rf__binder_recover(&f.b);
    cr_expect_eq(f.srv.n, 0, "no request for whole attempts (got %d, first %s %s)", f.srv.n, f.srv.method[0],
                 f.srv.path[0]);
    cr_expect_eq(atomic_load(&f.b.rollbacks), 0);
    cr_assert_eq(f.b.n_follows, 1, "only the attempt not yet admitted is followed");
    cr_expect_str_eq(f.b.follows[0].gang, "ns/b");
    s_fix_fini(&f);
    rf_test_no_leaks();
}

/* Fewer bound than SIZE: every bound pod deleted with its uid as precondition; the ended pod is not touched; another
 * attempt of full size in the same cache is not touched. */
Test(watch_recover, partial_rolled_back)
{
    s_fix_t f;
    s_fix_init(&f);
    s_pod(f.b.cache, "p-0", "p", "rackfit", "n1", "Running", true, "att-p n1 4");
    s_pod(f.b.cache, "p-1", "p", "rackfit", "n2", "Pending", false, "att-p n2 4");
    s_pod(f.b.cache, "p-2", "p", "rackfit", "n2", "Failed", true, "att-p n2 4"); /* ended: 3 of 4, still partial */
    s_pod(f.b.cache, "p-3", "p", "rackfit", NULL, "Pending", false, NULL);       /* recreated without the intent */
    s_pod(f.b.cache, "w-0", "w", "rackfit", "n5", "Running", true, "att-w n5 1");
    rf__binder_recover(&f.b);
    cr_assert_eq(f.srv.n, 2, "a DELETE per bound pod of the partial attempt (got %d)", f.srv.n);
    const char *names[] = {"p-0", "p-1"};
    for (int k = 0; k < 2; k++) {
        int i = s_delete_of(&f.srv, names[k]);
        cr_assert_geq(i, 0, "%s deleted", names[k]);
        char uid[64];
        snprintf(uid, sizeof uid, "\"uid\":\"uid-%s\"", names[k]);
        cr_expect(strstr(f.srv.body[i], "\"preconditions\"") && strstr(f.srv.body[i], uid),
                  "the delete of %s carries its uid as precondition: %s", names[k], f.srv.body[i]);
        cr_expect(strstr(f.srv.body[i], "\"kind\":\"DeleteOptions\"") != NULL, "%s", f.srv.body[i]);
    }
    cr_expect_lt(s_delete_of(&f.srv, "p-2"), 0, "a pod that ended is left");
    cr_expect_lt(s_delete_of(&f.srv, "p-3"), 0, "a pod without the intent is not the attempt's");
    cr_expect_lt(s_delete_of(&f.srv, "w-0"), 0, "a whole attempt is left");
    cr_expect_eq(atomic_load(&f.b.rollbacks), 1);
    cr_expect_eq(f.b.n_follows, 0, "a rolled-back attempt is not followed");
    s_fix_fini(&f);
    rf_test_no_leaks();
}

/* An older watcher patched the intent onto every pod before binding any: its pending pods carry the intent. Bound
 * and pending add up to SIZE, but a partner left pending makes the attempt half done: its bound pods are deleted, the
 * pending ones are not (nothing to undo). All pending, none bound: nothing to undo at all. */
Test(watch_recover, older_intent_on_pending)
{
    s_fix_t f;
    s_fix_init(&f);
    s_pod(f.b.cache, "o-0", "o", "rackfit", "n1", "Running", true, "att-o n1 3");
    s_pod(f.b.cache, "o-1", "o", "rackfit", "n1", "Running", true, "att-o n1 3");
    s_pod(f.b.cache, "o-2", "o", "rackfit", NULL, "Pending", false, "att-o n2 3");
    s_pod(f.b.cache, "q-0", "q", "rackfit", NULL, "Pending", false, "att-q n1 2");
    s_pod(f.b.cache, "q-1", "q", "rackfit", NULL, "Pending", false, "att-q n2 2");
    rf__binder_recover(&f.b);
    cr_assert_eq(f.srv.n, 2, "the two bound pods of att-o (got %d)", f.srv.n);
    cr_expect_geq(s_delete_of(&f.srv, "o-0"), 0);
    cr_expect_geq(s_delete_of(&f.srv, "o-1"), 0);
    cr_expect_lt(s_delete_of(&f.srv, "o-2"), 0, "a pending pod is not deleted");
    cr_expect_lt(s_delete_of(&f.srv, "q-0"), 0, "nothing bound: nothing to undo");
    cr_expect_eq(atomic_load(&f.b.rollbacks), 1);
    cr_expect_eq(f.b.n_follows, 0);
    s_fix_fini(&f);
    rf_test_no_leaks();
}

/* A pod of another scheduler carrying an intent (copied from a template, say) is not ours: it is neither deleted
 * nor counted towards an attempt of ours (before the fix, x-0 of default-scheduler was deleted and y-1 of volcano
 * made att-y look whole). */
Test(watch_recover, other_schedulers_ignored)
{
    s_fix_t f;
    s_fix_init(&f);
    s_pod(f.b.cache, "x-0", "x", "default-scheduler", "n1", "Running", true, "att-x n1 2");
    s_pod(f.b.cache, "y-0", "y", "rackfit", "n1", "Running", true, "att-y n1 2");
    s_pod(f.b.cache, "y-1", "y", "volcano", "n2", "Running", true, "att-y n2 2");
    rf__binder_recover(&f.b);
    cr_expect_lt(s_delete_of(&f.srv, "x-0"), 0, "another scheduler's pod is never deleted");
    cr_expect_lt(s_delete_of(&f.srv, "y-1"), 0, "another scheduler's pod is never deleted");
    cr_expect_geq(s_delete_of(&f.srv, "y-0"), 0, "y-0 is 1 of 2 bound: the other scheduler's pod does not count");
    cr_expect_eq(f.srv.n, 1, "got %d requests", f.srv.n);
    s_fix_fini(&f);
    rf_test_no_leaks();
}

/* Requeue states survive a restart: a PodGroup's "COUNT NEXT-TRY" or "COUNT failed" is restored; a bad one is
 * skipped. */
Test(watch_recover, requeues_restored)
{
    s_fix_t f;
    s_fix_init(&f);
    double until = rf__wall() + 600;
    char buf[512];
    rf__requeue_t rq = {.count = 3, .until_wall = until};
    char v[96];
    rf__requeue_format(&rq, v, sizeof v);
    snprintf(buf, sizeof buf,
             "{\"metadata\":{\"namespace\":\"ns\",\"name\":\"r\",\"annotations\":{\"%s\":\"%s\"}},\"spec\":{"
             "\"minMember\":1}}",
             RF_ANN_REQUEUE, v);
    s_put(f.b.cache, buf, RF_KIND_PODGROUP);
    rf__requeue_t fq = {.count = 7, .failed = true};
    rf__requeue_format(&fq, v, sizeof v);
    snprintf(buf, sizeof buf,
             "{\"metadata\":{\"namespace\":\"ns\",\"name\":\"f\",\"annotations\":{\"%s\":\"%s\"}},\"spec\":{"
             "\"minMember\":1}}",
             RF_ANN_REQUEUE, v);
    s_put(f.b.cache, buf, RF_KIND_PODGROUP);
    snprintf(buf, sizeof buf,
             "{\"metadata\":{\"namespace\":\"ns\",\"name\":\"bad\",\"annotations\":{\"%s\":\"soon\"}},\"spec\":{"
             "\"minMember\":1}}",
             RF_ANN_REQUEUE);
    s_put(f.b.cache, buf, RF_KIND_PODGROUP);
    rf__binder_recover(&f.b);
    char why[256];
    rf__requeue_t got;
    cr_assert(rf__binder_requeue_get(&f.b, "ns/r", &got, why, sizeof why));
    cr_expect_eq(got.count, 3);
    cr_expect(!got.failed);
    cr_expect_float_eq(got.until_wall, until, 1.0);
    cr_expect(rf__binder_holds(&f.b, "ns/r"), "in backoff: held");
    cr_assert(rf__binder_requeue_get(&f.b, "ns/f", &got, why, sizeof why));
    cr_expect_eq(got.count, 7);
    cr_expect(got.failed);
    cr_expect(!rf__binder_requeue_get(&f.b, "ns/bad", &got, why, sizeof why), "a bad annotation is skipped");
    cr_expect_eq(f.srv.n, 0);
    s_fix_fini(&f);
    rf_test_no_leaks();
}
