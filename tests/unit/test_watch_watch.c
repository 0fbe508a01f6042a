/* tests/unit/test_watch_watch.c: applying watch events to the cache
 * (watcher/watch.c, rf__watch_apply): ADDED and MODIFIED store the object
 * (a malformed one is skipped), DELETED removes it by its key, a BOOKMARK
 * only advances the resourceVersion, an ERROR event with code 410 says
 * "relist" (1), any other ERROR, unknown type or unreadable line is -1 (an
 * unknown type that carries a resourceVersion still advances it). The list-then-watch thread (rf__watch_run)
 * against a server is not covered here yet. */
#include <criterion/criterion.h>
#include <string.h>

#include "../support/leak.h"
#include "watch.h"

static int s_apply(rf__cache_t *c, rf__kind kind, const char *line, char *rv)
{
    return rf__watch_apply(c, kind, line, strlen(line), rv, 64);
}

#define POD_EV(TYPE, RV, PHASE)                                                                                        \
    "{\"type\":\"" TYPE "\",\"object\":{\"metadata\":{\"namespace\":\"ns\",\"name\":\"p0\",\"uid\":\"u0\","            \
    "\"resourceVersion\":\"" RV "\"},\"spec\":{\"containers\":[{\"name\":\"c\"}]},\"status\":{\"phase\":\"" PHASE      \
    "\"}}}"

Test(watch_watch, pod_events)
{
    rf__cache_t *c = rf__cache_new(7);
    char rv[64] = "1";
    cr_assert_eq(s_apply(c, RF_KIND_POD, POD_EV("ADDED", "10", "Pending"), rv), 0);
    cr_assert_str_eq(rv, "10");
    rf__cache_lock(c);
    rf__kpod_t *p = rf__cache_get(c, RF_KIND_POD, "ns/p0");
    cr_assert_not_null(p);
    cr_assert_str_eq(p->phase, "Pending");
    rf__cache_unlock(c);

    cr_assert_eq(s_apply(c, RF_KIND_POD, POD_EV("MODIFIED", "11", "Running"), rv), 0);
    cr_assert_str_eq(rv, "11");
    rf__cache_lock(c);
    p = rf__cache_get(c, RF_KIND_POD, "ns/p0");
    cr_assert_not_null(p);
    cr_assert_str_eq(p->phase, "Running");
    rf__cache_unlock(c);

    cr_assert_eq(
        s_apply(c, RF_KIND_POD, "{\"type\":\"BOOKMARK\",\"object\":{\"metadata\":{\"resourceVersion\":\"15\"}}}", rv),
        0);
    cr_assert_str_eq(rv, "15", "a bookmark advances the version");
    rf__cache_lock(c);
    cr_assert_not_null(rf__cache_get(c, RF_KIND_POD, "ns/p0"), "and changes nothing else");
    rf__cache_unlock(c);

    cr_assert_eq(s_apply(c, RF_KIND_POD, POD_EV("DELETED", "16", "Running"), rv), 0);
    cr_assert_str_eq(rv, "16");
    rf__cache_lock(c);
    cr_assert_null(rf__cache_get(c, RF_KIND_POD, "ns/p0"));
    rf__cache_unlock(c);

    /* a malformed object is skipped, the stream goes on */
    cr_assert_eq(s_apply(c, RF_KIND_POD,
                         "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"x\",\"resourceVersion\":\"17\"}}}",
                         rv),
                 0);
    rf__cache_lock(c);
    cr_assert_null(rf__cache_get(c, RF_KIND_POD, "/x"));
    rf__cache_unlock(c);
    rf__cache_destroy(&c);
    rf_test_no_leaks();
}

Test(watch_watch, node_delete_by_name)
{
    rf__cache_t *c = rf__cache_new(7);
    char rv[64] = "";
    cr_assert_eq(s_apply(c, RF_KIND_NODE,
                         "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"h1\",\"resourceVersion\":\"3\"}}}",
                         rv),
                 0);
    rf__cache_lock(c);
    rf__knode_t *n = rf__cache_get(c, RF_KIND_NODE, "h1");
    cr_assert_not_null(n);
    cr_assert_str_eq(n->name, "h1");
    rf__cache_unlock(c);
    cr_assert_eq(s_apply(c, RF_KIND_NODE,
                         "{\"type\":\"DELETED\",\"object\":{\"metadata\":{\"name\":\"h1\",\"resourceVersion\":\"4\"}}}",
                         rv),
                 0);
    rf__cache_lock(c);
    cr_assert_null(rf__cache_get(c, RF_KIND_NODE, "h1"));
    rf__cache_unlock(c);
    cr_assert_str_eq(rv, "4");
    rf__cache_destroy(&c);
    rf_test_no_leaks();
}

Test(watch_watch, gone_errors_and_junk)
{
    rf__cache_t *c = rf__cache_new(7);
    char rv[64] = "42";
    cr_assert_eq(s_apply(c, RF_KIND_POD,
                         "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"code\":410,\"message\":\"too old\"}}",
                         rv),
                 1, "410 Gone: relist");
    cr_assert_eq(s_apply(c, RF_KIND_POD,
                         "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"code\":500,\"message\":\"boom\"}}", rv),
                 -1);
    cr_assert_eq(s_apply(c, RF_KIND_POD, "{\"type\":\"ADDED\"", rv), -1, "unreadable");
    cr_assert_eq(s_apply(c, RF_KIND_POD, "{\"type\":\"ADDED\",\"object\":[]}", rv), -1, "object not a map");
    cr_assert_eq(s_apply(c, RF_KIND_POD, "{\"object\":{}}", rv), -1, "no type");
    cr_assert_eq(
        s_apply(c, RF_KIND_POD, "{\"type\":\"SHRUG\",\"object\":{\"metadata\":{\"resourceVersion\":\"50\"}}}", rv), -1);
    cr_assert_eq(s_apply(c, RF_KIND_POD, "{\"type\":\"DELETED\",\"object\":{\"metadata\":{}}}", rv), -1,
                 "a delete needs a name");
    cr_assert_str_eq(rv, "50", "an unknown type still carried a version");
    rf__cache_destroy(&c);
    rf_test_no_leaks();
}
