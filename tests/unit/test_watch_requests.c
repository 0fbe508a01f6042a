/* tests/unit/test_watch_requests.c: pod requests as Kubernetes computes them
 * (watcher/requests.c), cases from component-helpers' PodRequests tests:
 * containers, init containers, native sidecars, overhead, limits as
 * defaults, pod-level requests, every resource kind. */
#include <criterion/criterion.h>
#include <string.h>

#include "../support/leak.h"
#include "arena.h"
#include "json.h"
#include "requests.h"

static rf__res_t s_req(const char *spec_json)
{
    rf_limits_t lim;
    rf_limits_default(&lim);
    rf__arena_t *arena = rf__arena_new(0);
    rf_doc_t *doc = NULL;
    rf_error_t err;
    rf_error_clear(&err);
    cr_assert_eq(rf__json_parse(spec_json, strlen(spec_json), &lim, arena, &doc, &err), RF_OK, "%s", err.message);
    rf__res_t r = {0};
    rf_status s = rf__pod_requests(doc, &r, &err);
    cr_assert_eq(s, RF_OK, "%s: %s", err.path, err.message);
    rf__arena_destroy(&arena);
    return r;
}

#define C(req)    "{\"name\":\"c\",\"resources\":{\"requests\":" req "}}"
#define SIDE(req) "{\"name\":\"s\",\"restartPolicy\":\"Always\",\"resources\":{\"requests\":" req "}}"

Test(watch_requests, containers_sum)
{
    rf__res_t r = s_req("{\"containers\":[" C("{\"cpu\":\"500m\",\"memory\":\"1Gi\"}") "," C(
        "{\"cpu\":\"1\",\"memory\":\"512Mi\",\"nvidia.com/gpu\":\"2\"}") "]}");
    cr_assert_eq(rf__res_get(&r, "cpu"), 1500);
    cr_assert_eq(rf__res_get(&r, "memory"), (1LL << 30) + (512LL << 20));
    cr_assert_eq(rf__res_get(&r, "nvidia.com/gpu"), 2);
    rf__res_fini(&r);
    rf_test_no_leaks();
}

Test(watch_requests, init_max)
{
    /* init containers run one at a time: the max of them, against the sum */
    rf__res_t r = s_req("{\"containers\":[" C("{\"cpu\":\"1\",\"memory\":\"1Gi\"}") "],\"initContainers\":[" C(
        "{\"cpu\":\"3\"}") "," C("{\"memory\":\"2Gi\"}") "]}");
    cr_assert_eq(rf__res_get(&r, "cpu"), 3000);
    cr_assert_eq(rf__res_get(&r, "memory"), 2LL << 30);
    rf__res_fini(&r);
    rf_test_no_leaks();
}

Test(watch_requests, sidecars)
{
    /* KEP-753: sidecar 1 (1 cpu) starts, init 2 (2 cpu) runs beside it (peak 3),
     * sidecar 3 (1 cpu) starts (peak 2); containers 1 cpu + both sidecars = 3.
     * max(3, 3) = 3. With init 2 at 5 cpu the peak 6 wins. */
    rf__res_t r = s_req("{\"containers\":[" C("{\"cpu\":\"1\"}") "],\"initContainers\":[" SIDE("{\"cpu\":\"1\"}") "," C(
        "{\"cpu\":\"2\"}") "," SIDE("{\"cpu\":\"1\"}") "]}");
    cr_assert_eq(rf__res_get(&r, "cpu"), 3000);
    rf__res_fini(&r);
    r = s_req("{\"containers\":[" C("{\"cpu\":\"1\"}") "],\"initContainers\":[" SIDE("{\"cpu\":\"1\"}") "," C(
        "{\"cpu\":\"5\"}") "," SIDE("{\"cpu\":\"1\"}") "]}");
    cr_assert_eq(rf__res_get(&r, "cpu"), 6000);
    rf__res_fini(&r);
    /* an init container after the sidecars sees them all */
    r = s_req("{\"containers\":[" C("{\"memory\":\"1\"}") "],\"initContainers\":[" SIDE("{\"memory\":\"10\"}") "," SIDE(
        "{\"memory\":\"20\"}") "," C("{\"memory\":\"5\"}") "]}");
    cr_assert_eq(rf__res_get(&r, "memory"), 35);
    rf__res_fini(&r);
    rf_test_no_leaks();
}

Test(watch_requests, overhead_and_limits)
{
    rf__res_t r = s_req("{\"overhead\":{\"cpu\":\"250m\",\"memory\":\"120Mi\"},\"containers\":["
                        "{\"name\":\"a\",\"resources\":{\"limits\":{\"cpu\":\"2\",\"nvidia.com/gpu\":8}}},"
                        "{\"name\":\"b\",\"resources\":{\"requests\":{\"cpu\":\"100m\"},\"limits\":{\"cpu\":\"4\"}}}"
                        "]}");
    cr_assert_eq(rf__res_get(&r, "cpu"), 2350); /* 2 (limit as request) + 0.1 + 0.25 */
    cr_assert_eq(rf__res_get(&r, "memory"), 120LL << 20);
    cr_assert_eq(rf__res_get(&r, "nvidia.com/gpu"), 8);
    rf__res_fini(&r);
    rf_test_no_leaks();
}

Test(watch_requests, limit_as_request_per_container)
{
    /* the order that failed: a requests cpu 1, then b only limits cpu 2; b's limit is
     * b's request (the API server's defaulting), whatever a requested: 3, not 1 */
    rf__res_t r = s_req("{\"containers\":[" C(
        "{\"cpu\":\"1\"}") ","
                           "{\"name\":\"b\",\"resources\":{\"limits\":{\"cpu\":\"2\",\"memory\":\"1Gi\"}}}]}");
    cr_assert_eq(rf__res_get(&r, "cpu"), 3000);
    cr_assert_eq(rf__res_get(&r, "memory"), 1LL << 30);
    rf__res_fini(&r);
    /* and as sidecars and init containers */
    r = s_req("{\"containers\":[" C("{\"cpu\":\"1\"}") "],\"initContainers\":[{\"name\":\"s\",\"restartPolicy\":"
                                                       "\"Always\",\"resources\":{\"limits\":{\"cpu\":\"2\"}}}]}");
    cr_assert_eq(rf__res_get(&r, "cpu"), 3000);
    rf__res_fini(&r);
    rf_test_no_leaks();
}

Test(watch_requests, pod_level_limits_only)
{
    /* pod-level limits without pod-level requests: the limits are the pod's requests */
    rf__res_t r = s_req("{\"resources\":{\"limits\":{\"cpu\":\"4\",\"memory\":\"8Gi\"}},\"containers\":[" C(
        "{\"cpu\":\"1\",\"memory\":\"1Gi\"}") "]}");
    cr_assert_eq(rf__res_get(&r, "cpu"), 4000);
    cr_assert_eq(rf__res_get(&r, "memory"), 8LL << 30);
    rf__res_fini(&r);
    rf_test_no_leaks();
}

Test(watch_requests, every_resource_kind)
{
    rf__res_t r = s_req("{\"containers\":[" C(
        "{\"ephemeral-storage\":\"10G\",\"hugepages-2Mi\":\"1Gi\",\"example.com/foo\":\"3\",\"cpu\":\"0.1m\"}") "]}");
    cr_assert_eq(rf__res_get(&r, "ephemeral-storage"), 10000000000LL);
    cr_assert_eq(rf__res_get(&r, "hugepages-2Mi"), 1LL << 30);
    cr_assert_eq(rf__res_get(&r, "example.com/foo"), 3);
    cr_assert_eq(rf__res_get(&r, "cpu"), 1); /* rounded up, as Kubernetes does */
    rf__res_fini(&r);
    rf_test_no_leaks();
}

Test(watch_requests, pod_level)
{
    rf__res_t r = s_req("{\"resources\":{\"requests\":{\"cpu\":\"4\",\"memory\":\"8Gi\"}},\"overhead\":{\"cpu\":"
                        "\"1\"},\"containers\":[" C("{\"cpu\":\"1\",\"memory\":\"1Gi\",\"nvidia.com/gpu\":1}") "]}");
    cr_assert_eq(rf__res_get(&r, "cpu"), 5000);
    cr_assert_eq(rf__res_get(&r, "memory"), 8LL << 30);
    cr_assert_eq(rf__res_get(&r, "nvidia.com/gpu"), 1);
    rf__res_fini(&r);
    rf_test_no_leaks();
}

Test(watch_requests, empty_and_bad)
{
    rf__res_t r = s_req("{\"containers\":[{\"name\":\"c\"}]}");
    cr_assert_eq(r.n, 0);
    rf__res_fini(&r);
    rf_limits_t lim;
    rf_limits_default(&lim);
    rf__arena_t *arena = rf__arena_new(0);
    rf_doc_t *doc = NULL;
    rf_error_t err;
    const char *bad = "{\"containers\":[" C("{\"nvidia.com/gpu\":\"0.5\"}") "]}";
    cr_assert_eq(rf__json_parse(bad, strlen(bad), &lim, arena, &doc, &err), RF_OK);
    rf__res_t out = {0};
    cr_assert_eq(rf__pod_requests(doc, &out, &err), RF_ESCHEMA);
    cr_assert_str_eq(err.path, "spec.containers[0]");
    cr_assert(strstr(err.message, "nvidia.com/gpu") != NULL, "%s", err.message);
    rf__res_fini(&out);
    rf__arena_destroy(&arena);
    rf_test_no_leaks();
}
