/* tests/unit/test_preempt_problem.c: the rules for running gangs and their
 * constants (solver/preempt_problem.c, rf__problem_validate_running): units,
 * pods, domains (a node without a level's label alone there) and penalty of
 * a kept running gang; bound pods and running gangs in problem order
 * against each node's `used`; and the errors a builder can make that the
 * reader never lets through (node indices, requests, duplicates, limits),
 * each at its contract path. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../support/leak.h"
#include "preempt_problem.h"
#include "rackfit/rackfit.h"

/* Levels rack/host (costs 10, 1); h0 and h1 in rack r0, h2 in r1, h3 and
 * h4 without a rack label; 8 GPUs each, `used` GPUs as given; then `gangs`
 * and `running` (JSON arrays). */
static rf_problem_t *s_problem(const int used[5], const char *gangs, const char *running)
{
    char json[4096];
    int n =
        snprintf(json, sizeof json, "{\"cluster\":{\"levels\":[\"rack\",\"host\"],\"level_costs\":[10,1],\"nodes\":[");
    for (int i = 0; i < 5; i++)
        n += snprintf(json + n, sizeof json - (size_t)n,
                      "%s{\"name\":\"h%d\",\"labels\":{%s\"host\":\"h%d\"},"
                      "\"allocatable\":{\"nvidia.com/gpu\":8},\"used\":{\"nvidia.com/gpu\":%d}}",
                      i ? "," : "", i,
                      i < 2    ? "\"rack\":\"r0\","
                      : i == 2 ? "\"rack\":\"r1\","
                               : "",
                      i, used[i]);
    n += snprintf(json + n, sizeof json - (size_t)n, "]},\"gangs\":%s,\"running\":%s}", gangs, running);
    cr_assert_lt((size_t)n, sizeof json);
    rf_problem_t *p = NULL;
    rf_error_t err;
    rf_status st = rf_problem_from_json(json, (size_t)n, NULL, &p, &err);
    cr_assert_eq(st, RF_OK, "%s: %s", err.path, err.message);
    return p;
}

#define AT(node, count) "{\"node\":\"" node "\",\"count\":" #count "}"

Test(preempt_problem, constants_of_a_kept_running_gang)
{
    static const int used[5] = {4, 2, 2, 0, 0};
    rf_problem_t *p =
        s_problem(used, "[]",
                  "[{\"name\":\"r\",\"bandwidth\":2,\"pod_sets\":["
                  "{\"name\":\"w\",\"requests\":{\"nvidia.com/gpu\":2},\"placements\":[" AT("h0", 2) "," AT(
                      "h1", 1) "," AT("h2", 1) "]},"
                                               "{\"name\":\"v\",\"placements\":[" AT("h0", 1) "]}]}]");
    const rf_running_t *r = &p->running[0];
    cr_assert_eq(r->pod_sets[0].n_pods, 4);
    cr_assert_eq(r->pod_sets[1].n_pods, 1);
    cr_assert_eq(r->pods, 5);
    cr_assert_eq(r->units, 8);      /* 4 pods x 2 GPUs; v asks none */
    cr_assert_eq(r->domains[0], 2); /* racks r0, r1 */
    cr_assert_eq(r->domains[1], 3); /* hosts h0, h1, h2: h0 twice counts once */
    cr_assert_float_eq(r->penalty, 2 * (10 * 1 + 1 * 2), 1e-12);
    cr_assert_eq(r->pod_sets[1].requests[RF_RES_PODS], 1);
    rf_problem_destroy(&p);
    rf_test_no_leaks();
}

Test(preempt_problem, a_node_without_a_level_label_is_alone_there)
{
    static const int used[5] = {0, 0, 0, 1, 1};
    rf_problem_t *p = s_problem(used, "[]",
                                "[{\"name\":\"r\",\"pod_sets\":[{\"name\":\"w\",\"requests\":{\"nvidia.com/gpu\":1},"
                                "\"placements\":[" AT("h3", 1) "," AT("h4", 1) "]}]}]");
    const rf_running_t *r = &p->running[0];
    cr_assert_eq(r->domains[0], 2); /* neither has a rack: each is its own */
    cr_assert_eq(r->domains[1], 2);
    cr_assert_float_eq(r->penalty, 10 + 1, 1e-12);
    rf_problem_destroy(&p);

    /* one placement: one domain everywhere, no penalty */
    p = s_problem(used, "[]", "[{\"name\":\"r\",\"pod_sets\":[{\"name\":\"w\",\"placements\":[" AT("h3", 1) "]}]}]");
    cr_assert_eq(p->running[0].domains[0], 1);
    cr_assert_eq(p->running[0].domains[1], 1);
    cr_assert_float_eq(p->running[0].penalty, 0, 0);
    cr_assert_eq(p->running[0].units, 0);
    rf_problem_destroy(&p);
    rf_test_no_leaks();
}

/* Reading fails at `path` with `msg` (used-checks run inside validate). */
static void s_used_fails(const int used[5], const char *gangs, const char *running, const char *path, const char *msg)
{
    char json[4096];
    int n = snprintf(json, sizeof json, "{\"cluster\":{\"levels\":[\"rack\",\"host\"],\"nodes\":[");
    for (int i = 0; i < 5; i++)
        n += snprintf(json + n, sizeof json - (size_t)n,
                      "%s{\"name\":\"h%d\",\"labels\":{\"host\":\"h%d\"},"
                      "\"allocatable\":{\"nvidia.com/gpu\":8},\"used\":{\"nvidia.com/gpu\":%d}}",
                      i ? "," : "", i, i, used[i]);
    n += snprintf(json + n, sizeof json - (size_t)n, "]},\"gangs\":%s,\"running\":%s}", gangs, running);
    rf_problem_t *p = NULL;
    rf_error_t err;
    cr_assert_eq(rf_problem_from_json(json, (size_t)n, NULL, &p, &err), RF_ESCHEMA, "%s", json);
    cr_assert_str_eq(err.path, path, "%s", err.message);
    cr_assert(strstr(err.message, msg), "\"%s\" lacks \"%s\"", err.message, msg);
    cr_assert_null(p);
}

#define RUN1(name, gpus, placements)                                                                                   \
    "{\"name\":\"" name "\",\"pod_sets\":[{\"name\":\"w\",\"requests\":{\"nvidia.com/gpu\":" #gpus                     \
    "},\"placements\":[" placements "]}]}"

Test(preempt_problem, running_gangs_fit_in_used_in_problem_order)
{
    static const int used[5] = {4, 0, 0, 0, 0};
    /* the second gang finds the first one's 4 GPUs already counted */
    s_used_fails(used, "[]", "[" RUN1("a", 4, AT("h0", 1)) "," RUN1("b", 1, AT("h0", 1)) "]",
                 "running[1].pod_sets[0].placements[0]",
                 "node \"h0\": the bound pods and the running gangs up to this one use nvidia.com/gpu 5, more than its "
                 "used (4)");
    /* bound pods of pending gangs are counted first */
    s_used_fails(used,
                 "[{\"name\":\"g\",\"pod_sets\":[{\"name\":\"w\",\"count\":1,\"requests\":{\"nvidia.com/gpu\":2},"
                 "\"bound\":[{\"node\":\"h0\",\"count\":1}]}]}]",
                 "[" RUN1("a", 4, AT("h0", 1)) "]", "running[0].pod_sets[0].placements[0]", "nvidia.com/gpu 6");
    /* within used: both read */
    static const int enough[5] = {5, 0, 0, 0, 0};
    rf_problem_t *p = s_problem(enough, "[]", "[" RUN1("a", 4, AT("h0", 1)) "," RUN1("b", 1, AT("h0", 1)) "]");
    cr_assert_eq(p->n_running, 2);
    rf_problem_destroy(&p);
    rf_test_no_leaks();
}

/* ------------------------------------------- what only a builder can do */

static const int s_used[5] = {2, 2, 0, 0, 0};

static rf_problem_t *s_built(void)
{
    return s_problem(
        s_used, "[]",
        "[{\"name\":\"r\",\"pod_sets\":[{\"name\":\"w\",\"requests\":{\"nvidia.com/gpu\":1},"
        "\"placements\":[" AT("h0", 1) "," AT("h1", 1) "]},{\"name\":\"v\",\"placements\":[" AT("h0", 1) "]}]}]");
}

static void s_invalid(rf_problem_t **p, const rf_limits_t *lim, rf_status code, const char *path, const char *msg)
{
    rf_limits_t def;
    rf_limits_default(&def);
    rf_error_t err;
    rf_status st = rf__problem_validate_running(*p, lim ? lim : &def, &err);
    cr_assert_eq(st, code, "got %d at %s: %s", (int)st, err.path, err.message);
    cr_assert_str_eq(err.path, path, "%s", err.message);
    cr_assert(strstr(err.message, msg), "\"%s\" lacks \"%s\"", err.message, msg);
    rf_problem_destroy(p);
}

Test(preempt_problem, builder_errors_at_their_paths)
{
    rf_problem_t *p = s_built();
    rf_limits_t def;
    rf_limits_default(&def);
    rf_error_t err;
    cr_assert_eq(rf__problem_validate_running(p, &def, &err), RF_OK, "%s: %s", err.path, err.message); /* again */

    p->running[0].pod_sets[0].placements[1].node = 99;
    s_invalid(&p, NULL, RF_ESCHEMA, "running[0].pod_sets[0].placements[1].node", "node index 99 is not a node");

    p = s_built();
    p->running[0].pod_sets[0].placements[1].node = 0;
    s_invalid(&p, NULL, RF_ESCHEMA, "running[0].pod_sets[0].placements[1].node",
              "node \"h0\" is already listed in placements[0]");

    p = s_built();
    p->running[0].pod_sets[0].placements[0].count = 0;
    s_invalid(&p, NULL, RF_ESCHEMA, "running[0].pod_sets[0].placements[0].count", "must be >= 1");

    p = s_built();
    p->running[0].pod_sets[1].requests = NULL;
    s_invalid(&p, NULL, RF_EINVAL, "running[0].pod_sets[1].requests", "no requests array");

    p = s_built();
    p->running[0].pod_sets[0].requests[RF_RES_PODS] = 2;
    s_invalid(&p, NULL, RF_ESCHEMA, "running[0].pod_sets[0].requests", "pods is implied");

    p = s_built();
    p->running[0].pod_sets[0].requests[1] = -1;
    s_invalid(&p, NULL, RF_ESCHEMA, "running[0].pod_sets[0].requests[\"nvidia.com/gpu\"]", "must not be negative");

    p = s_built();
    p->running[0].pod_sets[1].name = "w";
    s_invalid(&p, NULL, RF_ESCHEMA, "running[0].pod_sets[1].name",
              "duplicate name \"w\" (also running[0].pod_sets[0])");

    p = s_built();
    p->running[0].pod_sets[1].name = "";
    s_invalid(&p, NULL, RF_ESCHEMA, "running[0].pod_sets[1].name", "must not be empty");

    p = s_built();
    p->running[0].pod_sets[1].n_placements = 0;
    s_invalid(&p, NULL, RF_ESCHEMA, "running[0].pod_sets[1].placements", "must list at least one placement");

    p = s_built();
    p->running[0].bandwidth = NAN;
    s_invalid(&p, NULL, RF_ESCHEMA, "running[0].bandwidth", "must be a finite number >= 0");

    p = s_built();
    p->running[0].n_pod_sets = 0;
    s_invalid(&p, NULL, RF_ESCHEMA, "running[0].pod_sets", "must list at least one pod set");

    p = s_built();
    p->n_running = -1;
    s_invalid(&p, NULL, RF_EINVAL, "running", "bad running array");
    rf_test_no_leaks();
}

Test(preempt_problem, limits_name_the_limit)
{
    rf_limits_t lim;
    rf_limits_default(&lim);
    rf_problem_t *p = s_built();
    lim.max_gangs = 0;
    s_invalid(&p, &lim, RF_ELIMIT, "running", "has 1 running gangs, more than max_gangs (0)");

    rf_limits_default(&lim);
    lim.max_pod_sets = 1;
    p = s_built();
    s_invalid(&p, &lim, RF_ELIMIT, "running[0].pod_sets", "has 2 pod sets, more than max_pod_sets (1)");

    rf_limits_default(&lim);
    lim.max_bound = 1;
    p = s_built();
    s_invalid(&p, &lim, RF_ELIMIT, "running[0].pod_sets[0].placements", "has 2 entries, more than max_bound (1)");

    rf_limits_default(&lim);
    lim.max_string = 0;
    p = s_built();
    s_invalid(&p, &lim, RF_ELIMIT, "running[0].name", "longer than max_string (0)");

    /* max_pods holds for one placement alone, and for the sum of several */
    rf_limits_default(&lim);
    lim.max_pods = 2;
    p = s_built();
    p->running[0].pod_sets[0].placements[0].count = 3;
    s_invalid(&p, &lim, RF_ELIMIT, "running[0].pod_sets[0].placements[0].count", "more than max_pods (2)");
    p = s_built();
    p->running[0].pod_sets[0].placements[1].count = 2;
    s_invalid(&p, &lim, RF_ELIMIT, "running[0].pod_sets[0].placements[1].count", "more than max_pods (2)");
    p = s_built();
    p->running[0].pod_sets[0].placements[1].count = 1; /* 1 + 1 = max_pods: accepted */
    rf_error_t err;
    cr_assert_eq(rf__problem_validate_running(p, &lim, &err), RF_OK, "%s: %s", err.path, err.message);
    rf_problem_destroy(&p);
    rf_test_no_leaks();
}
