/* tests/unit/test_watch_decisions.c: the answer-to-pods mapping
 * (watcher/decisions.c): placements handed out to each pod set's pending pods
 * in rank order, bound ranks skipped, rejected gangs with their reason, and
 * answers that do not match the plan refused. Binding itself runs against
 * the API server emulator in tests/integration/watch_*.sh. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "../support/leak.h"
#include "arena.h"
#include "decisions.h"
#include "json.h"
#include "kobj.h"

static void s_put_pod(rf__cache_t *c, const char *name, const char *group, int total, int index, const char *node)
{
    char buf[1024];
    snprintf(
        buf, sizeof buf,
        "{\"metadata\":{\"namespace\":\"ns\",\"name\":\"%s\",\"uid\":\"u-%s\",\"annotations\":{\"kueue.x-k8s.io/"
        "pod-group-total-count\":\"%d\"},\"labels\":{\"kueue.x-k8s.io/pod-group-name\":\"%s\",\"batch.kubernetes.io/"
        "job-completion-index\":\"%d\"}},\"spec\":{\"schedulerName\":"
        "\"rackfit\"%s%s%s,\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]},"
        "\"status\":{\"phase\":\"%s\"}}",
        name, name, total, group, index, node ? ",\"nodeName\":\"" : "", node ? node : "", node ? "\"" : "",
        node ? "Running" : "Pending");
    rf_limits_t lim;
    rf_limits_default(&lim);
    rf__arena_t *a = rf__arena_new(0);
    rf_doc_t *doc = NULL;
    rf_error_t err;
    cr_assert_eq(rf__json_parse(buf, strlen(buf), &lim, a, &doc, &err), RF_OK, "%s", err.message);
    rf__kpod_t *p = NULL;
    cr_assert_eq(rf__kpod_from_doc(doc, &p, &err), RF_OK);
    cr_assert_eq(rf__cache_put(c, RF_KIND_POD, p), RF_OK);
    rf__arena_destroy(&a);
}

static void s_put_node(rf__cache_t *c, const char *name)
{
    char buf[512];
    snprintf(buf, sizeof buf,
             "{\"metadata\":{\"name\":\"%s\",\"labels\":{\"kubernetes.io/hostname\":\"%s\"}},\"status\":{"
             "\"allocatable\":{\"cpu\":\"4\"},\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]}}",
             name, name);
    rf_limits_t lim;
    rf_limits_default(&lim);
    rf__arena_t *a = rf__arena_new(0);
    rf_doc_t *doc = NULL;
    rf_error_t err;
    cr_assert_eq(rf__json_parse(buf, strlen(buf), &lim, a, &doc, &err), RF_OK);
    rf__knode_t *n = NULL;
    cr_assert_eq(rf__knode_from_doc(doc, &n, &err), RF_OK);
    cr_assert_eq(rf__cache_put(c, RF_KIND_NODE, n), RF_OK);
    rf__arena_destroy(&a);
}

static const char *const s_levels[] = {"kubernetes.io/hostname"};

static rf__cache_t *s_cluster(void)
{
    rf__cache_t *c = rf__cache_new(7);
    s_put_node(c, "n1");
    s_put_node(c, "n2");
    /* gang g: ranks 0..4; rank 1 is already running on n1 */
    s_put_pod(c, "g-a", "g", 5, 0, NULL);
    s_put_pod(c, "g-b", "g", 5, 1, "n1");
    s_put_pod(c, "g-c", "g", 5, 2, NULL);
    s_put_pod(c, "g-d", "g", 5, 3, NULL);
    s_put_pod(c, "g-e", "g", 5, 4, NULL);
    /* gang h: two pods */
    s_put_pod(c, "h-0", "h", 2, 0, NULL);
    s_put_pod(c, "h-1", "h", 2, 1, NULL);
    return c;
}

static void s_plan(rf__cache_t *c, rf__plan_t *plan)
{
    rf__gang_opts_t o = {.scheduler_name = "rackfit", .levels = s_levels, .n_levels = 1, .mode = "greedy"};
    rf_error_t err;
    cr_assert_eq(rf__plan_build(c, &o, NULL, NULL, plan, &err), RF_OK, "%s", err.message);
    cr_assert_eq(plan->n_sent, 2);
    cr_assert_str_eq(plan->gangs[plan->sent[0]].name, "ns/g");
    cr_assert_str_eq(plan->gangs[plan->sent[1]].name, "ns/h");
}

Test(watch_decisions, placements_in_rank_order)
{
    rf__cache_t *c = s_cluster();
    rf__plan_t plan;
    s_plan(c, &plan);
    const char *answer =
        "{\"gangs\":[{\"name\":\"ns/g\",\"admitted\":true,\"pod_sets\":[{\"name\":\"set-0\",\"placements\":["
        "{\"node\":\"n2\",\"count\":3},{\"node\":\"n1\",\"count\":1}]}]},"
        "{\"name\":\"ns/h\",\"admitted\":false,\"reason\":\"no room\"}],\"summary\":{}}";
    rf__decision_t *d = NULL;
    int32_t n = 0;
    rf_error_t err;
    cr_assert_eq(rf__decisions_from_answer(&plan, answer, strlen(answer), &d, &n, &err), RF_OK, "%s", err.message);
    cr_assert_eq(n, 2);
    cr_assert(d[0].admitted);
    cr_assert_eq(d[0].n_binds, 4);
    /* pending ranks 0, 2, 3, 4 (g-b holds rank 1) */
    cr_assert_str_eq(d[0].binds[0].name, "g-a");
    cr_assert_str_eq(d[0].binds[0].node, "n2");
    cr_assert_str_eq(d[0].binds[1].name, "g-c");
    cr_assert_str_eq(d[0].binds[2].name, "g-d");
    cr_assert_str_eq(d[0].binds[2].node, "n2");
    cr_assert_str_eq(d[0].binds[3].name, "g-e");
    cr_assert_str_eq(d[0].binds[3].node, "n1");
    cr_assert_str_eq(d[0].binds[3].uid, "u-g-e");
    cr_assert(!d[1].admitted);
    cr_assert_str_eq(d[1].reason, "no room");
    rf__decisions_free(&d, n);
    rf__plan_fini(&plan);
    rf__cache_destroy(&c);
    rf_test_no_leaks();
}

Test(watch_decisions, answers_that_do_not_fit)
{
    rf__cache_t *c = s_cluster();
    rf__plan_t plan;
    s_plan(c, &plan);
    static const char *const bad[] = {
        "{\"gangs\":[]}",
        "{\"gangs\":[{\"name\":\"ns/h\",\"admitted\":false},{\"name\":\"ns/g\",\"admitted\":false}]}",
        "{\"gangs\":[{\"name\":\"ns/g\",\"admitted\":true,\"pod_sets\":[{\"name\":\"set-0\",\"placements\":["
        "{\"node\":\"n2\",\"count\":5}]}]},{\"name\":\"ns/h\",\"admitted\":false}]}",
        "{\"gangs\":[{\"name\":\"ns/g\",\"admitted\":true,\"pod_sets\":[{\"name\":\"nope\",\"placements\":[]}]},"
        "{\"name\":\"ns/h\",\"admitted\":false}]}",
        "not json",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        rf__decision_t *d = NULL;
        int32_t n = 0;
        rf_error_t err;
        cr_assert_neq(rf__decisions_from_answer(&plan, bad[i], strlen(bad[i]), &d, &n, &err), RF_OK, "%s", bad[i]);
        cr_assert_null(d);
        cr_assert_eq(n, 0);
    }
    rf__plan_fini(&plan);
    rf__cache_destroy(&c);
    rf_test_no_leaks();
}
