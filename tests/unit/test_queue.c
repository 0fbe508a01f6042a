/* tests/unit/test_queue.c: what both baselines share (bench/queue.c): the
 * queue order (priority descending, then problem order, stable) and the node
 * view (level label values, free capacity clamped at 0, unlabelled nodes
 * counted out). */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "../support/leak.h"
#include "../support/testutil.h"
#include "bench.h"
#include "rackfit/rackfit.h"

#define GANG(name, prio)                                                                                               \
    "{\"name\":\"" name "\",\"priority\":" #prio ",\"pod_sets\":[{\"name\":\"w\",\"count\":1,\"requests\":{"           \
    "\"nvidia.com/gpu\":1}}]}"

Test(queue, priority_descending_then_problem_order)
{
    rf_problem_t *pb = rf_test_parse(
        "{\"cluster\":{\"levels\":[\"kubernetes.io/hostname\"],\"nodes\":[{\"name\":\"h\",\"labels\":{\"kubernetes.io/"
        "hostname\":\"h\"},\"allocatable\":{\"nvidia.com/gpu\":8}}]},\"gangs\":[" GANG("a", 1) "," GANG(
            "b", 5) "," GANG("c", 1) "," GANG("d", 5) "," GANG("e", -2) "]}");
    int32_t *order = bench_queue_order(pb);
    cr_assert(order);
    const int32_t want[] = {1, 3, 0, 2, 4};
    for (int i = 0; i < 5; i++)
        cr_assert_eq(order[i], want[i], "order[%d] = %d, want %d", i, (int)order[i], (int)want[i]);
    free(order);
    rf_problem_destroy(&pb);
    rf_test_no_leaks();
}

Test(queue, node_view_labels_and_free_capacity)
{
    rf_problem_t *pb = rf_test_parse(
        "{\"cluster\":{\"levels\":[\"rack\",\"kubernetes.io/hostname\"],\"nodes\":["
        "{\"name\":\"h1\",\"labels\":{\"rack\":\"r1\",\"kubernetes.io/hostname\":\"h1\"},\"allocatable\":{\"nvidia.com/"
        "gpu\":8},\"used\":{\"nvidia.com/gpu\":3}},"
        "{\"name\":\"h2\",\"labels\":{\"kubernetes.io/hostname\":\"h2\"},\"allocatable\":{\"nvidia.com/gpu\":4}}]},"
        "\"gangs\":[]}");
    const char **val = calloc((size_t)pb->n_nodes * (size_t)pb->n_levels, sizeof *val);
    int64_t *free_cap = calloc((size_t)pb->n_nodes * (size_t)pb->n_resources, sizeof *free_cap);
    cr_assert(val && free_cap);
    cr_assert_eq(bench_node_view(pb, val, free_cap), 1, "h2 has no rack label");
    cr_assert_str_eq(val[0], "r1");
    cr_assert_str_eq(val[1], "h1");
    cr_assert_null(val[2]);
    cr_assert_str_eq(val[3], "h2");
    cr_assert(bench_node_labelled(pb, val, 0));
    cr_assert_not(bench_node_labelled(pb, val, 1));
    int32_t gpu = -1;
    for (int32_t r = 0; r < pb->n_resources; r++)
        if (strcmp(pb->resources[r], "nvidia.com/gpu") == 0)
            gpu = r;
    cr_assert_geq(gpu, 0);
    cr_assert_eq(free_cap[0 * pb->n_resources + gpu], 5, "8 allocatable - 3 used");
    cr_assert_eq(free_cap[1 * pb->n_resources + gpu], 4);
    cr_assert_eq(free_cap[0 * pb->n_resources + RF_RES_PODS], RF_QTY_UNLIMITED, "pods unlimited stay unlimited");
    free(val);
    free(free_cap);
    rf_problem_destroy(&pb);
    rf_test_no_leaks();
}
