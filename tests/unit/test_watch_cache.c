/* tests/unit/test_watch_cache.c: the object store (watcher/cache.c) and the
 * watch event handling that feeds it (watcher/watch.c): upserts, deletes,
 * relist mark-and-sweep, growth past rehashes, the binder's assumed node
 * kept across a stale update, bookmarks, 410 as an ERROR event, and which
 * pod changes are quiet (no plan needed while their gang is held). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "../support/leak.h"
#include "cache.h"
#include "watch.h"

static void s_event(rf__cache_t *c, rf__kind kind, const char *line, int want, char *rv)
{
    int r = rf__watch_apply(c, kind, line, strlen(line), rv, 64);
    cr_assert_eq(r, want, "%s", line);
}

#define POD(type, name, rv, node)                                                                                      \
    "{\"type\":\"" type "\",\"object\":{\"metadata\":{\"namespace\":\"ns\",\"name\":\"" name                           \
    "\",\"uid\":\"u1\",\"resourceVersion\":\"" rv "\"},\"spec\":{" node "\"containers\":[]}}}"

Test(watch_cache, events)
{
    rf__cache_t *c = rf__cache_new(1u << RF_KIND_POD);
    char rv[64] = "";
    s_event(c, RF_KIND_POD, POD("ADDED", "a", "5", ""), 0, rv);
    cr_assert_str_eq(rv, "5");
    cr_assert_not_null(rf__cache_get(c, RF_KIND_POD, "ns/a"));
    uint64_t g = c->generation;
    s_event(c, RF_KIND_POD, "{\"type\":\"BOOKMARK\",\"object\":{\"metadata\":{\"resourceVersion\":\"9\"}}}", 0, rv);
    cr_assert_str_eq(rv, "9");
    cr_assert_eq(c->generation, g, "a bookmark changes nothing");
    /* the binder assumed a node; a stale update without one keeps it */
    rf__kpod_t *p = rf__cache_get(c, RF_KIND_POD, "ns/a");
    p->assumed_node = strdup("n1");
    s_event(c, RF_KIND_POD, POD("MODIFIED", "a", "10", ""), 0, rv);
    p = rf__cache_get(c, RF_KIND_POD, "ns/a");
    cr_assert_str_eq(p->assumed_node, "n1");
    s_event(c, RF_KIND_POD, POD("MODIFIED", "a", "11", "\"nodeName\":\"n1\","), 0, rv);
    p = rf__cache_get(c, RF_KIND_POD, "ns/a");
    cr_assert_null(p->assumed_node);
    cr_assert_str_eq(p->node_name, "n1");
    s_event(c, RF_KIND_POD, POD("DELETED", "a", "12", ""), 0, rv);
    cr_assert_null(rf__cache_get(c, RF_KIND_POD, "ns/a"));
    cr_assert_str_eq(rv, "12");
    s_event(c, RF_KIND_POD, "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"code\":410,\"reason\":\"Expired\"}}",
            1, rv);
    s_event(c, RF_KIND_POD, "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"code\":500}}", -1, rv);
    s_event(c, RF_KIND_POD, "{not json", -1, rv);
    s_event(c, RF_KIND_POD, "{\"type\":\"ADDED\",\"object\":{\"metadata\":{}}}", 0, rv); /* ignored, logged */
    rf__cache_destroy(&c);
    rf_test_no_leaks();
}

Test(watch_cache, many_and_sweep)
{
    rf__cache_t *c = rf__cache_new(1u << RF_KIND_POD);
    char rv[64] = "";
    char line[512];
    for (int i = 0; i < 3000; i++) {
        snprintf(line, sizeof line,
                 "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"namespace\":\"ns\",\"name\":\"p%d\",\"uid\":\"u\"},"
                 "\"spec\":{}}}",
                 i);
        s_event(c, RF_KIND_POD, line, 0, rv);
    }
    cr_assert_eq(c->maps[RF_KIND_POD].n, 3000);
    for (int i = 0; i < 3000; i += 2) {
        snprintf(line, sizeof line, "ns/p%d", i);
        rf__cache_del(c, RF_KIND_POD, line);
    }
    cr_assert_eq(c->maps[RF_KIND_POD].n, 1500);
    for (int i = 0; i < 3000; i++) {
        snprintf(line, sizeof line, "ns/p%d", i);
        cr_assert_eq(rf__cache_get(c, RF_KIND_POD, line) != NULL, i % 2 == 1, "%s", line);
    }
    /* relist: keep p1..p99 (odd ones), sweep the rest */
    rf__cache_mark_begin(c, RF_KIND_POD);
    for (int i = 1; i < 100; i += 2) {
        snprintf(line, sizeof line,
                 "{\"type\":\"MODIFIED\",\"object\":{\"metadata\":{\"namespace\":\"ns\",\"name\":\"p%d\",\"uid\":"
                 "\"u\"},\"spec\":{}}}",
                 i);
        s_event(c, RF_KIND_POD, line, 0, rv);
    }
    rf__cache_sweep(c, RF_KIND_POD);
    cr_assert_eq(c->maps[RF_KIND_POD].n, 50);
    cr_assert_not_null(rf__cache_get(c, RF_KIND_POD, "ns/p99"));
    cr_assert_null(rf__cache_get(c, RF_KIND_POD, "ns/p101"));
    rf__cache_destroy(&c);
    rf_test_no_leaks();
}

Test(watch_cache, limiter)
{
    rf__limiter_t lim;
    rf__limiter_init(&lim, 10, 2);
    double t = lim.last;
    cr_assert_eq(rf__limiter_take(&lim, t), 0);
    cr_assert_eq(rf__limiter_take(&lim, t), 0);
    double w = rf__limiter_take(&lim, t);
    cr_assert(w > 0.09 && w < 0.11, "%f", w);
    cr_assert_eq(rf__limiter_take(&lim, t + 0.11), 0);
    cr_assert_eq(rf__limiter_take(NULL, t), 0);
    rf_test_no_leaks();
}

/* A pod of gang ns/g (scheduler `sched`, `gpu` GPUs, labels `extra_label` added), with `spec_node` (",\"nodeName\":..."
 * or "") and `status` (the status object's members, or ""), as a watch event of `type`. */
static void s_pod(char *buf, size_t cap, const char *type, const char *sched, const char *extra_label, int gpu,
                  const char *spec_node, const char *status)
{
    snprintf(buf, cap,
             "{\"type\":\"%s\",\"object\":{\"metadata\":{\"namespace\":\"ns\",\"name\":\"g-0\",\"uid\":\"u1\","
             "\"resourceVersion\":\"1\",\"labels\":{\"scheduling.x-k8s.io/pod-group\":\"g\"%s},"
             "\"annotations\":{\"rackfit.io/bind-intent\":\"w.1.1 n1 1\"}},"
             "\"spec\":{\"schedulerName\":\"%s\"%s,\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":"
             "{\"nvidia.com/gpu\":\"%d\"},\"limits\":{\"nvidia.com/gpu\":\"%d\"}}}]},\"status\":{%s}}}",
             type, extra_label, sched, spec_node, gpu, gpu, status);
}

/* Which pod changes are quiet (a plan would not change for any other gang,
 * cache.h) and what each kind of touch records for the cycle. */
Test(watch_cache, quiet_changes)
{
    rf__cache_t *c = rf__cache_new(1u << RF_KIND_POD);
    c->ours = strdup("rackfit");
    char rv[64] = "", ev[2048];
    cr_assert(c->loud, "a new cache has a plan to build");
    s_pod(ev, sizeof ev, "ADDED", "rackfit", "", 1, "", "\"phase\":\"Pending\"");
    s_event(c, RF_KIND_POD, ev, 0, rv);
    cr_assert(c->loud, "a new pod is loud");
    rf__cache_plan_taken(c);
    cr_assert(!c->loud);
    cr_assert_eq(c->n_quiet, 0);

    /* the binder assumed n1; the binding lands there: the capacity was already counted */
    rf__kpod_t *p = rf__cache_get(c, RF_KIND_POD, "ns/g-0");
    p->assumed_node = strdup("n1");
    uint64_t g = c->generation;
    s_pod(ev, sizeof ev, "MODIFIED", "rackfit", "", 1, ",\"nodeName\":\"n1\"", "\"phase\":\"Pending\"");
    s_event(c, RF_KIND_POD, ev, 0, rv);
    cr_assert(!c->loud, "bound where it was assumed: quiet");
    cr_assert_gt(c->generation, g, "a quiet change still wakes the cycle (follows)");
    cr_assert_eq(c->n_quiet, 1);
    cr_assert_str_eq(c->quiet[0], "ns/g");
    /* the kubelet starts it: phase, startTime and readiness are the gang's own business */
    s_pod(ev, sizeof ev, "MODIFIED", "rackfit", "", 1, ",\"nodeName\":\"n1\"",
          "\"phase\":\"Running\",\"startTime\":\"2026-12-02T01:00:00Z\","
          "\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]");
    s_event(c, RF_KIND_POD, ev, 0, rv);
    cr_assert(!c->loud, "started and ready: quiet");
    cr_assert_eq(c->n_quiet, 1, "one entry per gang");

    /* what frees or moves capacity, or changes what the pod is, is loud */
    s_pod(ev, sizeof ev, "MODIFIED", "rackfit", "", 1, ",\"nodeName\":\"n1\"", "\"phase\":\"Failed\"");
    s_event(c, RF_KIND_POD, ev, 0, rv);
    cr_assert(c->loud, "terminal: its capacity is free");
    rf__cache_plan_taken(c);
    cr_assert_eq(c->n_quiet, 0);
    s_pod(ev, sizeof ev, "MODIFIED", "rackfit", "", 1, ",\"nodeName\":\"n2\"", "\"phase\":\"Running\"");
    s_event(c, RF_KIND_POD, ev, 0, rv); /* Failed -> Running elsewhere: loud */
    rf__cache_plan_taken(c);
    s_pod(ev, sizeof ev, "MODIFIED", "rackfit", ",\"x\":\"y\"", 1, ",\"nodeName\":\"n2\"", "\"phase\":\"Running\"");
    s_event(c, RF_KIND_POD, ev, 0, rv);
    cr_assert(c->loud, "a label changed (gang, budgets)");
    rf__cache_plan_taken(c);
    s_pod(ev, sizeof ev, "MODIFIED", "rackfit", ",\"x\":\"y\"", 2, ",\"nodeName\":\"n2\"", "\"phase\":\"Running\"");
    s_event(c, RF_KIND_POD, ev, 0, rv);
    cr_assert(c->loud, "its requests changed");
    rf__cache_plan_taken(c);
    s_pod(ev, sizeof ev, "MODIFIED", "rackfit", ",\"x\":\"y\"", 2, ",\"nodeName\":\"n2\"",
          "\"phase\":\"Running\",\"nominatedNodeName\":\"n3\"");
    s_event(c, RF_KIND_POD, ev, 0, rv);
    cr_assert(c->loud, "a nomination holds capacity");
    rf__cache_plan_taken(c);
    s_pod(ev, sizeof ev, "MODIFIED", "other", ",\"x\":\"y\"", 2, ",\"nodeName\":\"n2\"",
          "\"phase\":\"Running\",\"nominatedNodeName\":\"n3\"");
    s_event(c, RF_KIND_POD, ev, 0, rv);
    cr_assert(c->loud, "another scheduler's pod is never quiet (it may be a victim)");
    rf__cache_plan_taken(c);
    s_pod(ev, sizeof ev, "MODIFIED", "other", ",\"x\":\"y\"", 2, ",\"nodeName\":\"n2\"",
          "\"phase\":\"Running\",\"nominatedNodeName\":\"n3\"");
    s_event(c, RF_KIND_POD, ev, 0, rv);
    cr_assert(c->loud, "... even when nothing changed");
    rf__cache_plan_taken(c);

    /* the same change is quiet only for our own pods, and only with `ours` set */
    s_pod(ev, sizeof ev, "MODIFIED", "rackfit", "", 1, ",\"nodeName\":\"n2\"", "\"phase\":\"Running\"");
    s_event(c, RF_KIND_POD, ev, 0, rv);
    rf__cache_plan_taken(c);
    s_pod(ev, sizeof ev, "MODIFIED", "rackfit", "", 1, ",\"nodeName\":\"n2\"", "\"phase\":\"Succeeded\"");
    s_event(c, RF_KIND_POD, ev, 0, rv);
    cr_assert(c->loud, "succeeded: its capacity is free");
    rf__cache_plan_taken(c);
    free(c->ours);
    c->ours = NULL;
    s_pod(ev, sizeof ev, "MODIFIED", "rackfit", "", 1, ",\"nodeName\":\"n2\"", "\"phase\":\"Succeeded\"");
    s_event(c, RF_KIND_POD, ev, 0, rv);
    cr_assert(c->loud, "without `ours` nothing is quiet");
    rf__cache_plan_taken(c);
    /* a deletion is loud whatever it was */
    c->ours = strdup("rackfit");
    s_pod(ev, sizeof ev, "DELETED", "rackfit", "", 1, ",\"nodeName\":\"n2\"", "\"phase\":\"Succeeded\"");
    s_event(c, RF_KIND_POD, ev, 0, rv);
    cr_assert(c->loud, "a deletion is loud");

    /* quiet touches: one entry per gang, dropped when a plan is taken */
    rf__cache_plan_taken(c);
    rf__cache_touch_quiet(c, "ns/a");
    rf__cache_touch_quiet(c, "ns/b");
    rf__cache_touch_quiet(c, "ns/a");
    cr_assert(!c->loud);
    cr_assert_eq(c->n_quiet, 2);
    rf__cache_plan_taken(c);
    cr_assert_eq(c->n_quiet, 0);
    rf__cache_destroy(&c);
    rf_test_no_leaks();
}
