/* tests/unit/test_baseline_kueue.c: the "kueue" baseline strategy
 * (bench/baseline_kueue.c) on hand-sized problems whose Kueue TAS choice is
 * known: BestFit picks the least-capacity domain that fits, gangs go one at a
 * time in queue order (priority first) without revisiting, a gang that does
 * not fit at count is admitted at min_count, one that fits at neither is
 * rejected with a reason. Every answer passes rf_check. */
#include <criterion/criterion.h>
#include <string.h>

#include "../support/leak.h"
#include "../support/testutil.h"
#include "bench.h"
#include "rackfit/rackfit.h"

#define LEVELS "\"levels\":[\"example.com/block\",\"example.com/rack\",\"kubernetes.io/hostname\"]"
#define NODE(name, rack, gpus)                                                                                         \
    "{\"name\":\"" name "\",\"labels\":{\"example.com/block\":\"b\",\"example.com/rack\":\"" rack                      \
    "\",\"kubernetes.io/hostname\":\"" name "\"},\"allocatable\":{\"nvidia.com/gpu\":" #gpus "}}"
/* r1: two hosts, r2: four hosts, 8 GPUs each (nodes 0-1 in r1, 2-5 in r2). */
#define CLUSTER                                                                                                        \
    "\"cluster\":{" LEVELS ",\"nodes\":[" NODE("a1", "r1", 8) "," NODE("a2", "r1", 8) "," NODE(                        \
        "c1", "r2", 8) "," NODE("c2", "r2", 8) "," NODE("c3", "r2", 8) "," NODE("c4", "r2", 8) "]}"

static rf_answer_t *s_kueue(const rf_problem_t *pb)
{
    rf_solve_opts_t opts;
    rf_solve_opts_default(&opts);
    opts.threads = 1;
    rf_answer_t *ans = NULL;
    rf_error_t err;
    cr_assert_eq(rf_solve_with(&bench_strategy_kueue, pb, &opts, &ans, &err), RF_OK, "%s", err.message);
    rf_test_assert_feasible(pb, ans, "kueue baseline");
    return ans;
}

/* The nodes a pod set was placed on, each bit one node. */
static unsigned s_nodes(const rf_answer_t *ans, int32_t g, int32_t *pods)
{
    unsigned mask = 0;
    *pods = 0;
    const rf_pod_set_answer_t *ps = &ans->gangs[g].pod_sets[0];
    for (int32_t i = 0; i < ps->n_placements; i++) {
        mask |= 1u << ps->placements[i].node;
        *pods += ps->placements[i].count;
    }
    return mask;
}

Test(baseline_kueue, best_fit_takes_the_smallest_rack_that_fits)
{
    rf_problem_t *pb = rf_test_parse("{" CLUSTER ",\"gangs\":[{\"name\":\"g\",\"topology\":{\"required\":\"example.com/"
                                     "rack\"},\"pod_sets\":[{\"name\":\"w\",\"count\":2,\"requests\":{\"nvidia.com/"
                                     "gpu\":8}}]}]}");
    rf_answer_t *ans = s_kueue(pb);
    cr_assert(ans->gangs[0].admitted);
    int32_t pods = 0;
    cr_assert_eq(s_nodes(ans, 0, &pods), 0x3u, "BestFit: r1 (capacity 2) over r2 (capacity 4)");
    cr_assert_eq(pods, 2);
    rf_answer_destroy(&ans);
    rf_problem_destroy(&pb);
    rf_test_no_leaks();
}

/* Queue order is priority first: "low" is listed first but "high" goes
 * first and takes the only rack that holds four pods; "low" then needs four
 * in one rack, has none, and is admitted at its min_count 2 in r1. */
Test(baseline_kueue, priority_order_no_revisit_and_min_count)
{
    rf_problem_t *pb = rf_test_parse(
        "{" CLUSTER ",\"gangs\":["
        "{\"name\":\"low\",\"priority\":1,\"topology\":{\"required\":\"example.com/rack\"},\"pod_sets\":[{\"name\":"
        "\"w\",\"count\":4,\"min_count\":2,\"requests\":{\"nvidia.com/gpu\":8}}]},"
        "{\"name\":\"high\",\"priority\":10,\"topology\":{\"required\":\"example.com/rack\"},\"pod_sets\":[{\"name\":"
        "\"w\",\"count\":4,\"requests\":{\"nvidia.com/gpu\":8}}]}]}");
    rf_answer_t *ans = s_kueue(pb);
    int32_t pods = 0;
    cr_assert(ans->gangs[1].admitted, "high goes first");
    cr_assert_eq(s_nodes(ans, 1, &pods), 0x3cu, "high takes r2");
    cr_assert_eq(pods, 4);
    cr_assert(ans->gangs[0].admitted, "low is admitted at min_count");
    cr_assert_eq(s_nodes(ans, 0, &pods), 0x3u, "low in r1");
    cr_assert_eq(pods, 2);
    rf_answer_destroy(&ans);
    rf_problem_destroy(&pb);
    rf_test_no_leaks();
}

Test(baseline_kueue, a_gang_that_fits_nowhere_is_rejected_with_a_reason)
{
    rf_problem_t *pb = rf_test_parse("{" CLUSTER ",\"gangs\":[{\"name\":\"huge\",\"topology\":{\"required\":"
                                     "\"example.com/rack\"},\"pod_sets\":[{\"name\":\"w\",\"count\":5,\"requests\":{"
                                     "\"nvidia.com/gpu\":8}}]}]}");
    rf_answer_t *ans = s_kueue(pb);
    cr_assert_not(ans->gangs[0].admitted, "no rack holds five hosts");
    cr_assert(ans->gangs[0].reason && ans->gangs[0].reason[0]);
    cr_assert(!ans->gangs[0].pod_sets || ans->gangs[0].pod_sets[0].n_placements == 0, "a rejected gang holds nothing");
    rf_answer_destroy(&ans);
    rf_problem_destroy(&pb);
    rf_test_no_leaks();
}
