/* tests/unit/test_baseline_kube.c: the "kube" baseline strategy
 * (bench/baseline_kube.c) on hand-sized problems: pods go one at a time to
 * the least allocated node (spreading), gangs in queue order without gang
 * semantics, so a gang can be left partly placed holding GPUs idle; the
 * answer admits only complete gangs and passes rf_check, and what it cannot
 * carry is counted in bench_kube_stats_t. */
#include <criterion/criterion.h>
#include <string.h>

#include "../support/leak.h"
#include "../support/testutil.h"
#include "bench.h"
#include "rackfit/rackfit.h"

#define LEVELS "\"levels\":[\"example.com/rack\",\"kubernetes.io/hostname\"]"
#define NODE(name, gpus)                                                                                               \
    "{\"name\":\"" name "\",\"labels\":{\"example.com/rack\":\"r\",\"kubernetes.io/hostname\":\"" name                 \
    "\"},\"allocatable\":{\"nvidia.com/gpu\":" #gpus "}}"
#define CLUSTER                                                                                                        \
    "\"cluster\":{" LEVELS ",\"nodes\":[" NODE("h1", 8) "," NODE("h2", 8) "," NODE("h3", 8) "," NODE("h4", 8) "]}"

static rf_answer_t *s_kube(const rf_problem_t *pb, bench_extra_t *extra)
{
    rf_solve_opts_t opts;
    rf_solve_opts_default(&opts);
    opts.threads = 1;
    memset(extra, 0, sizeof *extra);
    opts.user = extra;
    rf_answer_t *ans = NULL;
    rf_error_t err;
    cr_assert_eq(rf_solve_with(&bench_strategy_kube, pb, &opts, &ans, &err), RF_OK, "%s", err.message);
    rf_test_assert_feasible(pb, ans, "kube baseline");
    cr_assert(extra->have_kube, "the kube baseline reports its stats");
    return ans;
}

Test(baseline_kube, least_allocated_spreads_pods)
{
    rf_problem_t *pb = rf_test_parse("{" CLUSTER ",\"gangs\":[{\"name\":\"g\",\"pod_sets\":[{\"name\":\"w\",\"count\":"
                                     "4,\"requests\":{\"nvidia.com/gpu\":4}}]}]}");
    bench_extra_t extra;
    rf_answer_t *ans = s_kube(pb, &extra);
    cr_assert(ans->gangs[0].admitted);
    const rf_pod_set_answer_t *ps = &ans->gangs[0].pod_sets[0];
    unsigned mask = 0;
    for (int32_t i = 0; i < ps->n_placements; i++) {
        cr_assert_eq(ps->placements[i].count, 1, "one pod a node: the emptiest node wins each time");
        mask |= 1u << ps->placements[i].node;
    }
    cr_assert_eq(mask, 0xfu, "all four hosts used");
    cr_assert_eq(extra.kube.complete, 1);
    cr_assert_eq(extra.kube.partial, 0);
    cr_assert_eq(extra.kube.unplaced, 0);
    rf_answer_destroy(&ans);
    rf_problem_destroy(&pb);
    rf_test_no_leaks();
}

/* "first" (higher priority, listed second) takes three hosts; "second" gets
 * one pod on the fourth and stays pending: partly placed, 8 GPUs idle, and
 * rejected in the answer; "third" gets nothing. */
Test(baseline_kube, partial_gangs_are_counted_not_admitted)
{
    rf_problem_t *pb = rf_test_parse(
        "{" CLUSTER ",\"gangs\":["
        "{\"name\":\"second\",\"priority\":1,\"pod_sets\":[{\"name\":\"w\",\"count\":3,\"requests\":{\"nvidia.com/"
        "gpu\":8}}]},"
        "{\"name\":\"first\",\"priority\":5,\"pod_sets\":[{\"name\":\"w\",\"count\":3,\"requests\":{\"nvidia.com/"
        "gpu\":8}}]},"
        "{\"name\":\"third\",\"priority\":0,\"pod_sets\":[{\"name\":\"w\",\"count\":1,\"requests\":{\"nvidia.com/"
        "gpu\":8}}]}]}");
    bench_extra_t extra;
    rf_answer_t *ans = s_kube(pb, &extra);
    cr_assert(ans->gangs[1].admitted, "first is complete");
    cr_assert_not(ans->gangs[0].admitted, "second is partial");
    cr_assert(ans->gangs[0].reason && ans->gangs[0].reason[0]);
    cr_assert_not(ans->gangs[2].admitted, "third found no room");
    cr_assert_eq(extra.kube.complete, 1);
    cr_assert_eq(extra.kube.partial, 1);
    cr_assert_eq(extra.kube.partial_pods, 1);
    cr_assert_eq(extra.kube.partial_idle_units, 8);
    cr_assert_eq(extra.kube.unplaced, 1);
    rf_answer_destroy(&ans);
    rf_problem_destroy(&pb);
    rf_test_no_leaks();
}
