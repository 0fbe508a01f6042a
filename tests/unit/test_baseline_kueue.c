/* tests/unit/test_baseline_kueue.c: the Kueue-style baselines
 * (bench/baseline_kueue.c) on hand-sized problems whose Kueue TAS choice is
 * known: BestFit picks the least-capacity domain that fits, gangs go one at a
 * time in queue order (priority first) without revisiting, a gang that does
 * not fit at count is admitted at min_count, one that fits at neither is
 * rejected with a reason. "kueue" never preempts; "kueue-preempt" preempts
 * running gangs as Kueue does: lowest priority and most recent first, never
 * an equal or higher priority nor a gang that is not preemptible, whole
 * workloads, what is not needed added back; freed room serves only higher
 * priorities. Every answer passes rf_check. */
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

/* ---- preemption (Kueue's, within a ClusterQueue) ----
 * On the preemption fixture (tests/support: racks r1 = h-0..h-3, r2 =
 * h-4..h-7, 8 GPUs each), every node full unless said otherwise. */

static const int s_full[8] = {8, 8, 8, 8, 8, 8, 8, 8};

#define RUN1(name, prio, node, gpus)                                                                                   \
    "{\"name\":\"" name "\",\"priority\":" #prio                                                                       \
    ",\"pod_sets\":[{\"name\":\"w\",\"requests\":{\"nvidia.com/gpu\":" #gpus "},\"placements\":[{\"node\":\"" node     \
    "\",\"count\":1}]}]}"
#define GANG1(name, prio, gpus)                                                                                        \
    "{\"name\":\"" name "\",\"priority\":" #prio ",\"pod_sets\":[{\"name\":\"w\",\"count\":1,\"requests\":{\"nvidia."  \
    "com/gpu\":" #gpus "}}]}"

static rf_answer_t *s_kueue_preempt(const rf_problem_t *pb)
{
    rf_solve_opts_t opts;
    rf_solve_opts_default(&opts);
    opts.threads = 1;
    rf_answer_t *ans = NULL;
    rf_error_t err;
    cr_assert_eq(rf_solve_with(&bench_strategy_kueue_preempt, pb, &opts, &ans, &err), RF_OK, "%s", err.message);
    rf_test_assert_feasible(pb, ans, "kueue-preempt baseline");
    return ans;
}

static rf_problem_t *s_preempt_problem(const int *used, const char *running, const char *gangs, const char *options)
{
    char *json = rf_test_preempt_json(used, running, gangs, options);
    rf_problem_t *pb = rf_test_parse(json);
    free(json);
    return pb;
}

/* The lowest priority goes first, and among equals the most recently
 * admitted (the later in `running`): c, not b, and never a. */
Test(baseline_kueue, preempts_the_lowest_priority_most_recent_first)
{
    rf_problem_t *pb =
        s_preempt_problem(s_full, "[" RUN1("a", 5, "h-0", 8) "," RUN1("b", 1, "h-1", 8) "," RUN1("c", 1, "h-2", 8) "]",
                          "[" GANG1("g", 10, 8) "]", NULL);
    rf_answer_t *ans = s_kueue_preempt(pb);
    cr_assert(ans->gangs[0].admitted);
    cr_assert_not(ans->running[0].preempted, "a has the highest priority of the candidates");
    cr_assert_not(ans->running[1].preempted, "b was admitted before c");
    cr_assert(ans->running[2].preempted, "c: lowest priority, most recent");
    cr_assert_eq(ans->gangs[0].pod_sets[0].placements[0].node, 2, "g lands where c was");
    cr_assert_eq(ans->summary.preempted, 1);
    rf_answer_destroy(&ans);
    rf_problem_destroy(&pb);
    rf_test_no_leaks();
}

/* Never a running gang of equal or higher priority, nor one that is not
 * preemptible, and nothing under options.preemption: never. */
Test(baseline_kueue, never_preempts_equal_or_higher_priority)
{
    rf_problem_t *pb =
        s_preempt_problem(s_full,
                          "[" RUN1("same", 5, "h-0", 8) "," RUN1(
                              "higher", 7, "h-1", 8) ",{\"name\":\"pinned\",\"priority\":0,"
                                                     "\"preemptible\":false,\"pod_sets\":[{\"name\":\"w\",\"requests\":"
                                                     "{\"nvidia.com/gpu\":8},\"placements\":[{"
                                                     "\"node\":\"h-2\",\"count\":1}]}]}]",
                          "[" GANG1("g", 5, 8) "]", NULL);
    rf_answer_t *ans = s_kueue_preempt(pb);
    cr_assert_not(ans->gangs[0].admitted, "nothing g may evict would make room");
    cr_assert_eq(ans->summary.preempted, 0);
    rf_answer_destroy(&ans);
    rf_problem_destroy(&pb);

    pb = s_preempt_problem(s_full, "[" RUN1("low", 0, "h-0", 8) "]", "[" GANG1("g", 10, 8) "]",
                           "{\"preemption\":\"never\"}");
    ans = s_kueue_preempt(pb);
    cr_assert_not(ans->gangs[0].admitted);
    cr_assert_not(ans->running[0].preempted, "preemption: never");
    rf_answer_destroy(&ans);
    rf_problem_destroy(&pb);
    rf_test_no_leaks();
}

/* A running gang is evicted whole: both pods of `w`, though g needs one
 * node; the value at priority 0 loses all 16 GPUs. */
Test(baseline_kueue, evicts_whole_workloads_only)
{
    rf_problem_t *pb = s_preempt_problem(
        s_full,
        "[{\"name\":\"w\",\"priority\":0,\"pod_sets\":[{\"name\":\"w\",\"requests\":{\"nvidia.com/gpu\":8},"
        "\"placements\":[{\"node\":\"h-4\",\"count\":1},{\"node\":\"h-5\",\"count\":1}]}]}]",
        "[" GANG1("g", 10, 8) "]", NULL);
    rf_answer_t *ans = s_kueue_preempt(pb);
    cr_assert(ans->gangs[0].admitted);
    cr_assert(ans->running[0].preempted);
    cr_assert_eq(ans->running[0].n_by, 1);
    int32_t node = ans->gangs[0].pod_sets[0].placements[0].node;
    cr_assert(node == 4 || node == 5, "g on one of w's nodes, not %d", (int)node);
    bool seen0 = false;
    for (int32_t i = 0; i < ans->summary.n_value; i++)
        if (ans->summary.value[i].priority == 0) {
            seen0 = true;
            cr_assert_eq(ans->summary.value[i].units, 0, "w's 16 GPUs are all lost");
        }
    cr_assert(seen0);
    rf_answer_destroy(&ans);
    rf_problem_destroy(&pb);
    rf_test_no_leaks();
}

/* Kueue's minimalPreemptions: x (most recent) is removed first and does not
 * free enough (h-0 keeps 4 GPUs of other use), y is removed next and g
 * fits; x is then added back, since g still fits without evicting it. */
Test(baseline_kueue, adds_back_what_the_gang_does_not_need)
{
    rf_problem_t *pb = s_preempt_problem(s_full, "[" RUN1("y", 0, "h-1", 8) "," RUN1("x", 0, "h-0", 4) "]",
                                         "[" GANG1("g", 10, 8) "]", NULL);
    rf_answer_t *ans = s_kueue_preempt(pb);
    cr_assert(ans->gangs[0].admitted);
    cr_assert(ans->running[0].preempted, "y made the room");
    cr_assert_not(ans->running[1].preempted, "x was added back");
    cr_assert_eq(ans->gangs[0].pod_sets[0].placements[0].node, 1);
    rf_answer_destroy(&ans);
    rf_problem_destroy(&pb);
    rf_test_no_leaks();
}

/* The room a victim frees serves only gangs above its priority: g (10)
 * evicts v (0) and takes 4 of its 8 GPUs; l (0) may not take the other 4. */
Test(baseline_kueue, freed_room_serves_only_higher_priorities)
{
    rf_problem_t *pb =
        s_preempt_problem(s_full, "[" RUN1("v", 0, "h-3", 8) "]", "[" GANG1("g", 10, 4) "," GANG1("l", 0, 4) "]", NULL);
    rf_answer_t *ans = s_kueue_preempt(pb);
    cr_assert(ans->gangs[0].admitted);
    cr_assert(ans->running[0].preempted);
    cr_assert_not(ans->gangs[1].admitted, "l is at v's priority: v's room is not for it");
    rf_answer_destroy(&ans);
    rf_problem_destroy(&pb);
    rf_test_no_leaks();
}

/* "kueue" (the simulator's baseline) never preempts: the same problem as
 * above leaves g rejected and v running. */
Test(baseline_kueue, plain_kueue_never_preempts)
{
    rf_problem_t *pb = s_preempt_problem(s_full, "[" RUN1("v", 0, "h-3", 8) "]", "[" GANG1("g", 10, 4) "]", NULL);
    rf_answer_t *ans = s_kueue(pb);
    cr_assert_not(ans->gangs[0].admitted);
    cr_assert_not(ans->running[0].preempted);
    cr_assert_eq(ans->summary.preempted, 0);
    rf_answer_destroy(&ans);
    rf_problem_destroy(&pb);
    rf_test_no_leaks();
}
