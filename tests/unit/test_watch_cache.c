/* tests/unit/test_watch_cache.c: the object store (watcher/cache.c) and the
 * watch event handling that feeds it (watcher/watch.c): upserts, deletes,
 * relist mark-and-sweep, growth past rehashes, the binder's assumed node
 * kept across a stale update, bookmarks, and 410 as an ERROR event. */
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
