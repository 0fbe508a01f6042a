/* tests/unit/test_check.c: the independent checker (solver/check.c).
 *
 * One hand-built cluster with a node for every kind of ineligibility, and
 * one test per violation kind, each also showing that the nearby correct
 * answer passes. The last test cross-checks the checker's recomputed
 * domains and penalties against rf_answer_finish on random answers: the two
 * are written independently, so agreement is evidence for both. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../support/leak.h"
#include "../support/testutil.h"
#include "rackfit/rackfit.h"

/* ------------------------------------------------------------------ */
/* The cluster                                                          */

/* levels block/rack/host; every node has 8 GPUs, 96 CPUs and 110 pods
 * unless said otherwise:
 *   h-0..h-3  b1/r1, H100        h-4..h-7  b1/r2, H100
 *   h-8       b2/r1 (another r1)  h-9       b1/r1, taint nvidia.com/gpu=present:NoSchedule
 *   h-10      b1/r1, cordoned     h-11      b1, no rack label
 *   h-12      b1/r1, A100         h-13      b1/r1, 10 GPUs used of 8
 *   h-14      b1/r1, taints dedicated=infer:NoExecute and soft=x:PreferNoSchedule
 *   h-15      b1/r1, no GPUs, no pod limit, 1 CPU */
#define S_NODE(name, block, rack, extra)                                                                               \
    "{\"name\":\"" name "\",\"labels\":{\"example.com/block\":\"" block "\"," rack                                     \
    "\"kubernetes.io/hostname\":\"" name "\",\"gpu\":\"H100\"},"                                                       \
    "\"allocatable\":{\"nvidia.com/gpu\":8,\"cpu\":\"96\",\"pods\":110}" extra "},"
#define S_R(r) "\"example.com/rack\":\"" r "\","

/* clang-format off */
static const char *s_cluster =
    "{\"levels\":[\"example.com/block\",\"example.com/rack\",\"kubernetes.io/hostname\"],"
    "\"level_costs\":[100,10,1],\"nodes\":["
    S_NODE("h-0", "b1", S_R("r1"), "")
    S_NODE("h-1", "b1", S_R("r1"), "")
    S_NODE("h-2", "b1", S_R("r1"), "")
    S_NODE("h-3", "b1", S_R("r1"), "")
    S_NODE("h-4", "b1", S_R("r2"), "")
    S_NODE("h-5", "b1", S_R("r2"), "")
    S_NODE("h-6", "b1", S_R("r2"), "")
    S_NODE("h-7", "b1", S_R("r2"), "")
    S_NODE("h-8", "b2", S_R("r1"), "")
    S_NODE("h-9", "b1", S_R("r1"),
           ",\"taints\":[{\"key\":\"nvidia.com/gpu\",\"value\":\"present\",\"effect\":\"NoSchedule\"}]")
    S_NODE("h-10", "b1", S_R("r1"), ",\"unschedulable\":true")
    S_NODE("h-11", "b1", "", "")
    "{\"name\":\"h-12\",\"labels\":{\"example.com/block\":\"b1\",\"example.com/rack\":\"r1\","
    "\"kubernetes.io/hostname\":\"h-12\",\"gpu\":\"A100\"},\"allocatable\":{\"nvidia.com/gpu\":8}},"
    "{\"name\":\"h-13\",\"labels\":{\"example.com/block\":\"b1\",\"example.com/rack\":\"r1\","
    "\"kubernetes.io/hostname\":\"h-13\",\"gpu\":\"H100\"},\"allocatable\":{\"nvidia.com/gpu\":8,\"cpu\":\"96\"},"
    "\"used\":{\"nvidia.com/gpu\":10,\"cpu\":\"1\"}},"
    "{\"name\":\"h-14\",\"labels\":{\"example.com/block\":\"b1\",\"example.com/rack\":\"r1\","
    "\"kubernetes.io/hostname\":\"h-14\",\"gpu\":\"H100\"},\"allocatable\":{\"nvidia.com/gpu\":8},"
    "\"taints\":[{\"key\":\"dedicated\",\"value\":\"infer\",\"effect\":\"NoExecute\"},"
    "{\"key\":\"soft\",\"value\":\"x\",\"effect\":\"PreferNoSchedule\"}]},"
    "{\"name\":\"h-15\",\"labels\":{\"example.com/block\":\"b1\",\"example.com/rack\":\"r1\","
    "\"kubernetes.io/hostname\":\"h-15\",\"gpu\":\"H100\"},\"allocatable\":{\"cpu\":\"1\"}}"
    "]}";
/* clang-format on */

static rf_problem_t *s_problem_json(const char *json)
{
    rf_limits_t lim;
    rf_limits_default(&lim);
    rf_problem_t *p = NULL;
    rf_error_t err;
    rf_error_clear(&err);
    rf_status rc = rf_problem_from_json(json, strlen(json), &lim, &p, &err);
    cr_assert_eq(rc, RF_OK, "problem: %s: %s\n%s", err.path, err.message, json);
    return p;
}

/* The cluster with `gangs` (a JSON array) and `options` (a map, or NULL). */
static rf_problem_t *s_problem(const char *gangs, const char *options)
{
    size_t cap = strlen(s_cluster) + strlen(gangs) + (options ? strlen(options) : 0) + 64;
    char *json = malloc(cap);
    cr_assert_not_null(json);
    snprintf(json, cap, "{\"cluster\":%s,\"gangs\":%s%s%s}", s_cluster, gangs, options ? ",\"options\":" : "",
             options ? options : "");
    rf_problem_t *p = s_problem_json(json);
    free(json);
    return p;
}

static void s_add(rf_answer_t *a, int32_t g, int32_t j, const char *node, int32_t count)
{
    int32_t n = rf_problem_node(a->problem, node);
    cr_assert_geq(n, 0, "node %s", node);
    cr_assert_eq(rf_answer_add(a, g, j, n, count), RF_OK);
}

/* One gang "g" with one pod set "w" (its fields given as JSON), placed as
 * "node:count node:count ...", finished. */
static rf_answer_t *s_one(rf_problem_t **pp, const char *gang_extra, const char *pod_set, const char *placements)
{
    char gangs[2048];
    snprintf(gangs, sizeof gangs, "[{\"name\":\"g\"%s,\"pod_sets\":[{\"name\":\"w\",%s}]}]", gang_extra, pod_set);
    *pp = s_problem(gangs, NULL);
    rf_answer_t *a = rf_answer_new(*pp);
    cr_assert_not_null(a);
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", placements);
    for (char *tok = strtok(buf, " "); tok; tok = strtok(NULL, " ")) {
        char *colon = strchr(tok, ':');
        cr_assert_not_null(colon);
        *colon = '\0';
        s_add(a, 0, 0, tok, atoi(colon + 1));
    }
    cr_assert_eq(rf_answer_finish(a), RF_OK);
    return a;
}

static void s_run(const rf_problem_t *p, const rf_answer_t *a, rf_check_report_t *rep)
{
    rf_error_t err;
    rf_error_clear(&err);
    cr_assert_eq(rf_check(p, a, rep, &err), RF_OK, "%s", err.message);
}

static void s_dump(const rf_check_report_t *rep)
{
    for (int32_t i = 0; i < rep->n_violations && i < RF_CHECK_MAX_VIOLATIONS; i++)
        fprintf(stderr, "  violation: %s\n", rep->violations[i]);
}

static void s_expect_ok(const rf_problem_t *p, const rf_answer_t *a)
{
    rf_check_report_t rep;
    s_run(p, a, &rep);
    if (!rep.feasible)
        s_dump(&rep);
    cr_assert(rep.feasible, "expected feasible, %d violations", rep.n_violations);
    cr_assert(rep.reported_totals_match);
    cr_assert_eq(rep.n_violations, 0);
    rf_check_report_fini(&rep);
}

/* Expect a violation containing `what`; returns whether totals matched. */
static bool s_expect(const rf_problem_t *p, const rf_answer_t *a, const char *what)
{
    rf_check_report_t rep;
    s_run(p, a, &rep);
    cr_assert(!rep.feasible, "expected a violation \"%s\"", what);
    bool found = false;
    for (int32_t i = 0; i < rep.n_violations && i < RF_CHECK_MAX_VIOLATIONS; i++)
        found = found || strstr(rep.violations[i], what) != NULL;
    if (!found)
        s_dump(&rep);
    cr_assert(found, "no violation contains \"%s\"", what);
    bool match = rep.reported_totals_match;
    rf_check_report_fini(&rep);
    return match;
}

static void s_done(rf_problem_t **p, rf_answer_t **a)
{
    rf_answer_destroy(a);
    rf_problem_destroy(p);
    rf_test_no_leaks();
}

#define GPU8  "\"requests\":{\"nvidia.com/gpu\":8}"
#define H100  "\"node_selector\":{\"gpu\":\"H100\"}"
#define RACK  "\"topology\":{\"required\":\"example.com/rack\"}"
#define BLOCK "\"topology\":{\"required\":\"example.com/block\"}"

/* ------------------------------------------------------------------ */
/* Correct answers                                                      */

Test(check, accepts_a_compact_answer_and_recomputes_totals)
{
    rf_problem_t *p;
    rf_answer_t *a = s_one(&p, ",\"priority\":10," RACK, "\"count\":4," GPU8 "," H100, "h-0:1 h-1:1 h-2:1 h-3:1");
    rf_check_report_t rep;
    s_run(p, a, &rep);
    s_dump(&rep);
    cr_assert(rep.feasible && rep.reported_totals_match);
    cr_assert_eq(rep.admitted, 1);
    cr_assert_float_eq(rep.penalty, 3.0, 1e-12);
    cr_assert_eq(rep.n_value, 1);
    cr_assert_eq(rep.value[0].priority, 10);
    cr_assert_eq(rep.value[0].units, 32);
    cr_assert_eq(rep.value[0].pods, 4);
    rf_check_report_fini(&rep);
    cr_assert_null(rep.value);
    rf_check_report_fini(&rep); /* twice is fine */
    s_done(&p, &a);
}

Test(check, rejects_an_answer_for_another_problem)
{
    rf_problem_t *p, *q;
    rf_answer_t *a = s_one(&p, "", "\"count\":1", "h-0:1");
    rf_answer_t *b = s_one(&q, "", "\"count\":1", "h-0:1");
    rf_check_report_t rep;
    rf_error_t err;
    rf_error_clear(&err);
    cr_assert_eq(rf_check(p, b, &rep, &err), RF_EINVAL);
    rf_check_report_fini(&rep);
    rf_answer_destroy(&b);
    rf_problem_destroy(&q);
    s_done(&p, &a);
}

Test(check, accepts_cpu_pods_where_gpus_are_overused_and_unlimited_pods)
{
    rf_problem_t *p;
    /* h-13 has used > allocatable GPUs, but these pods ask for none; h-15
     * has no pod limit */
    rf_answer_t *a = s_one(&p, "", "\"count\":300,\"requests\":{\"cpu\":\"0\"}", "h-13:100 h-15:200");
    s_expect_ok(p, a);
    s_done(&p, &a);
}

/* ------------------------------------------------------------------ */
/* Capacity                                                             */

Test(check, over_capacity_in_one_pod_set)
{
    rf_problem_t *p;
    rf_answer_t *a = s_one(&p, "", "\"count\":2," GPU8, "h-0:2");
    cr_assert(s_expect(p, a, "node h-0: nvidia.com/gpu 16 > free 8"));
    s_done(&p, &a);
}

Test(check, over_capacity_across_gangs)
{
    rf_problem_t *p = s_problem("[{\"name\":\"a\",\"pod_sets\":[{\"name\":\"w\",\"count\":1," GPU8 "}]},"
                                "{\"name\":\"b\",\"pod_sets\":[{\"name\":\"w\",\"count\":1,"
                                "\"requests\":{\"nvidia.com/gpu\":1}}]}]",
                                NULL);
    rf_answer_t *a = rf_answer_new(p);
    s_add(a, 0, 0, "h-1", 1);
    s_add(a, 1, 0, "h-2", 1);
    cr_assert_eq(rf_answer_finish(a), RF_OK);
    s_expect_ok(p, a);
    rf_answer_gang_reset(a, 1);
    s_add(a, 1, 0, "h-1", 1);
    cr_assert_eq(rf_answer_finish(a), RF_OK);
    s_expect(p, a, "node h-1: nvidia.com/gpu 9 > free 8");
    s_done(&p, &a);
}

Test(check, used_beyond_allocatable_leaves_no_room)
{
    rf_problem_t *p;
    rf_answer_t *a = s_one(&p, "", "\"count\":1,\"requests\":{\"nvidia.com/gpu\":1}", "h-13:1");
    s_expect(p, a, "node h-13: nvidia.com/gpu 1 > free 0");
    s_done(&p, &a);
}

Test(check, unlisted_resource_is_zero_and_cpu_in_quantities)
{
    rf_problem_t *p;
    rf_answer_t *a = s_one(&p, "", "\"count\":3,\"requests\":{\"nvidia.com/gpu\":1,\"cpu\":\"500m\"}", "h-15:3");
    s_expect(p, a, "node h-15: nvidia.com/gpu 3 > free 0");
    s_expect(p, a, "node h-15: cpu 1500m > free 1");
    s_done(&p, &a);
}

/* ------------------------------------------------------------------ */
/* Eligibility                                                          */

Test(check, taints_need_tolerations)
{
    rf_problem_t *p;
    rf_answer_t *a = s_one(&p, "", "\"count\":1", "h-9:1");
    s_expect(p, a, "node h-9 has taint nvidia.com/gpu=present:NoSchedule, not tolerated");
    s_done(&p, &a);

    static const char *ok[] = {
        "[{\"key\":\"nvidia.com/gpu\",\"operator\":\"Exists\"}]",
        "[{\"operator\":\"Exists\"}]",
        "[{\"key\":\"nvidia.com/gpu\",\"operator\":\"Equal\",\"value\":\"present\",\"effect\":\"NoSchedule\"}]",
        "[{\"key\":\"other\",\"operator\":\"Exists\"},{\"key\":\"nvidia.com/gpu\",\"value\":\"present\"}]",
    };
    static const char *bad[] = {
        "[{\"key\":\"nvidia.com/gpu\",\"operator\":\"Equal\"}]",
        "[{\"key\":\"nvidia.com/gpu\",\"operator\":\"Equal\",\"value\":\"absent\"}]",
        "[{\"key\":\"nvidia.com/gpu\",\"operator\":\"Exists\",\"effect\":\"NoExecute\"}]",
        "[{\"key\":\"nvidia.com\",\"operator\":\"Exists\"}]",
    };
    char ps[512];
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
        snprintf(ps, sizeof ps, "\"count\":1,\"tolerations\":%s", ok[i]);
        a = s_one(&p, "", ps, "h-9:1");
        s_expect_ok(p, a);
        s_done(&p, &a);
    }
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        snprintf(ps, sizeof ps, "\"count\":1,\"tolerations\":%s", bad[i]);
        a = s_one(&p, "", ps, "h-9:1");
        s_expect(p, a, "not tolerated");
        s_done(&p, &a);
    }
    /* NoExecute counts; PreferNoSchedule does not */
    a = s_one(&p, "", "\"count\":1", "h-14:1");
    s_expect(p, a, "node h-14 has taint dedicated=infer:NoExecute");
    s_done(&p, &a);
    a = s_one(&p, "", "\"count\":1,\"tolerations\":[{\"key\":\"dedicated\",\"operator\":\"Exists\"}]", "h-14:1");
    s_expect_ok(p, a);
    s_done(&p, &a);
}

Test(check, node_selector_must_match)
{
    rf_problem_t *p;
    rf_answer_t *a = s_one(&p, "", "\"count\":2," H100, "h-0:1 h-12:1");
    s_expect(p, a, "node h-12 does not match node_selector gpu=H100");
    s_done(&p, &a);
}

Test(check, cordoned_node_takes_no_new_pods)
{
    rf_problem_t *p;
    rf_answer_t *a = s_one(&p, "", "\"count\":1", "h-10:1");
    s_expect(p, a, "node h-10 is cordoned");
    s_done(&p, &a);
}

Test(check, node_without_a_level_label_takes_no_pods)
{
    rf_problem_t *p;
    rf_answer_t *a = s_one(&p, "", "\"count\":1", "h-11:1");
    s_expect(p, a, "node h-11 lacks the level label example.com/rack");
    s_done(&p, &a);
}

Test(check, bound_pods_are_not_checked_for_eligibility)
{
    rf_problem_t *p;
    rf_answer_t *a = s_one(
        &p, "", "\"count\":3,\"bound\":[{\"node\":\"h-10\",\"count\":1},{\"node\":\"h-9\",\"count\":1}]", "h-0:1");
    s_expect_ok(p, a);
    s_done(&p, &a);
}

/* ------------------------------------------------------------------ */
/* Placement lists and counts                                           */

Test(check, node_listed_twice)
{
    rf_problem_t *p = s_problem("[{\"name\":\"g\",\"pod_sets\":[{\"name\":\"w\",\"count\":2}]}]", NULL);
    const char *text = "{\"gangs\":[{\"name\":\"g\",\"admitted\":true,\"pod_sets\":[{\"name\":\"w\",\"placements\":"
                       "[{\"node\":\"h-0\",\"count\":1},{\"node\":\"h-0\",\"count\":1}]}]}]}";
    rf_answer_t *a = NULL;
    rf_error_t err;
    cr_assert_eq(rf_answer_from_json(p, text, strlen(text), &a, &err), RF_OK, "%s", err.message);
    s_expect(p, a, "gang g, pod set w: node h-0 is listed twice");
    s_done(&p, &a);
}

Test(check, unknown_node)
{
    rf_problem_t *p = s_problem("[{\"name\":\"g\",\"pod_sets\":[{\"name\":\"w\",\"count\":2}]}]", NULL);
    const char *text = "{\"gangs\":[{\"name\":\"g\",\"admitted\":true,\"pod_sets\":[{\"name\":\"w\",\"placements\":"
                       "[{\"node\":\"h-0\",\"count\":1},{\"node\":\"h-99\",\"count\":1}]}]}]}";
    rf_answer_t *a = NULL;
    rf_error_t err;
    rf_error_clear(&err);
    cr_assert_eq(rf_answer_from_json(p, text, strlen(text), &a, &err), RF_ESCHEMA);
    cr_assert_str_eq(err.path, "gangs[0].pod_sets[0].placements[1].node");
    cr_assert_not_null(strstr(err.message, "h-99"), "%s", err.message);
    /* built in memory, an index out of range is a violation */
    a = rf_answer_new(p);
    s_add(a, 0, 0, "h-0", 1);
    s_add(a, 0, 0, "h-1", 1);
    a->gangs[0].pod_sets[0].placements[1].node = 999;
    s_expect(p, a, "unknown node index 999");
    s_done(&p, &a);
}

Test(check, counts_between_min_count_and_count)
{
    rf_problem_t *p;
    rf_answer_t *a = s_one(&p, "", "\"count\":4", "h-0:1 h-1:2");
    s_expect(p, a, "gang g, pod set w: 3 pods (0 bound + 3 new), needs 4 to 4");
    s_done(&p, &a);
    a = s_one(&p, "", "\"count\":4,\"min_count\":2,\"bound\":[{\"node\":\"h-5\",\"count\":1}]", "h-0:1 h-1:3");
    s_expect(p, a, "5 pods (1 bound + 4 new), needs 2 to 4");
    s_done(&p, &a);
    a = s_one(&p, "", "\"count\":4,\"min_count\":2,\"bound\":[{\"node\":\"h-5\",\"count\":1}]", "h-0:1");
    s_expect_ok(p, a);
    s_done(&p, &a);
}

Test(check, rejected_gang_has_no_placements)
{
    rf_problem_t *p;
    rf_answer_t *a = s_one(&p, "", "\"count\":2", "h-0:2");
    a->gangs[0].admitted = false; /* rejected, but the list stays */
    cr_assert_eq(rf_answer_finish(a), RF_OK);
    s_expect(p, a, "gang g is rejected but pod set w lists 1 placements");
    s_done(&p, &a);
}

Test(check, gang_admitted_on_bound_pods_alone)
{
    rf_problem_t *p;
    rf_answer_t *a = s_one(&p, "", "\"count\":2,\"bound\":[{\"node\":\"h-0\",\"count\":2}]", "");
    a->gangs[0].admitted = true;
    cr_assert_eq(rf_answer_finish(a), RF_OK);
    s_expect_ok(p, a);
    s_done(&p, &a);
}

/* ------------------------------------------------------------------ */
/* Topology                                                             */

Test(check, gang_required_domain)
{
    rf_problem_t *p;
    rf_answer_t *a = s_one(&p, "," RACK, "\"count\":2", "h-0:1 h-4:1");
    s_expect(p, a, "gang g: pods span more than one example.com/rack domain (nodes h-0 and h-4)");
    s_done(&p, &a);
    /* rack r1 of block b1 and rack r1 of block b2 are two racks */
    a = s_one(&p, "," RACK, "\"count\":2", "h-3:1 h-8:1");
    s_expect(p, a, "more than one example.com/rack domain");
    s_done(&p, &a);
    a = s_one(&p, "," BLOCK, "\"count\":2", "h-0:1 h-7:1");
    s_expect_ok(p, a);
    s_done(&p, &a);
}

Test(check, pod_set_required_domain)
{
    rf_problem_t *p;
    rf_answer_t *a = s_one(&p, "," BLOCK, "\"count\":2," RACK, "h-0:1 h-4:1");
    s_expect(p, a, "gang g, pod set w: pods span more than one example.com/rack domain");
    s_done(&p, &a);
}

Test(check, bound_pods_count_toward_required_domain)
{
    rf_problem_t *p;
    rf_answer_t *a = s_one(&p, "," RACK, "\"count\":3,\"bound\":[{\"node\":\"h-4\",\"count\":1}]", "h-0:1 h-1:1");
    s_expect(p, a, "gang g: pods span more than one example.com/rack domain");
    s_done(&p, &a);
    a = s_one(&p, "," RACK, "\"count\":3,\"bound\":[{\"node\":\"h-4\",\"count\":1}]", "h-5:1 h-6:1");
    s_expect_ok(p, a);
    s_done(&p, &a);
}

/* ------------------------------------------------------------------ */
/* Slices                                                               */

#define SLICE2 "\"slice\":{\"size\":2,\"required\":\"example.com/rack\"}"
#define SLICE4 "\"slice\":{\"size\":4,\"required\":\"example.com/rack\"}"

Test(check, slice_multiple)
{
    rf_problem_t *p;
    rf_answer_t *a = s_one(&p, "", "\"count\":8,\"min_count\":4," SLICE4, "h-0:4 h-1:2");
    s_expect(p, a, "gang g, pod set w: 6 pods is not a multiple of the slice size 4");
    s_done(&p, &a);
}

Test(check, slice_groups_stay_in_one_domain)
{
    rf_problem_t *p;
    rf_answer_t *a = s_one(&p, "", "\"count\":4," SLICE2, "h-0:1 h-1:1 h-4:1 h-5:1");
    s_expect_ok(p, a);
    s_done(&p, &a);
    a = s_one(&p, "", "\"count\":4," SLICE2, "h-0:1 h-4:1 h-1:1 h-5:1");
    s_expect(p, a,
             "slice 0 (ranks 0-1) spans more than one example.com/rack domain (rank 0 on node h-0, rank 1 on "
             "node h-4)");
    s_done(&p, &a);
    a = s_one(&p, "", "\"count\":2," SLICE2, "h-3:1 h-8:1");
    s_expect(p, a, "slice 0 (ranks 0-1) spans more than one example.com/rack domain");
    s_done(&p, &a);
}

Test(check, bound_ranks_and_slices)
{
    rf_problem_t *p;
    /* ranks 2,3 bound on h-4 (r2); new pods take 0,1 */
    rf_answer_t *a =
        s_one(&p, "", "\"count\":4," SLICE2 ",\"bound\":[{\"node\":\"h-4\",\"ranks\":[3,2]}]", "h-0:1 h-1:1");
    s_expect_ok(p, a);
    s_done(&p, &a);
    a = s_one(&p, "", "\"count\":4," SLICE2 ",\"bound\":[{\"node\":\"h-4\",\"ranks\":[2,3]}]", "h-0:1 h-5:1");
    s_expect(p, a, "slice 0 (ranks 0-1) spans more than one");
    s_done(&p, &a);
    /* rank 0 bound on h-4: new pods take 1, 2, 3, so slice 0 is h-4 + h-0 */
    a = s_one(&p, "", "\"count\":4," SLICE2 ",\"bound\":[{\"node\":\"h-4\",\"ranks\":[0]}]", "h-0:1 h-1:2");
    s_expect(p, a,
             "slice 0 (ranks 0-1) spans more than one example.com/rack domain (rank 0 on node h-4, rank 1 "
             "on node h-0)");
    s_done(&p, &a);
    a = s_one(&p, "", "\"count\":4," SLICE2 ",\"bound\":[{\"node\":\"h-4\",\"ranks\":[0]}]", "h-5:1 h-1:2");
    s_expect_ok(p, a);
    s_done(&p, &a);
    /* a bound rank in the second slice of 4 and three new pods: both
     * slices are incomplete though the total is a multiple of 4 */
    a = s_one(&p, "", "\"count\":8,\"min_count\":4," SLICE4 ",\"bound\":[{\"node\":\"h-0\",\"ranks\":[4]}]", "h-1:3");
    s_expect(p, a, "slice 0 (ranks 0-3) holds 3 of 4 pods");
    s_expect(p, a, "slice 1 (ranks 4-7) holds 1 of 4 pods");
    s_done(&p, &a);
}

Test(check, bound_without_ranks_hold_the_lowest_ranks)
{
    rf_problem_t *p;
    /* bound {h-4, 2} and {h-5, 1}: ranks 0,1 on h-4, rank 2 on h-5; new pods
     * take 3, 4, 5 */
    const char *ps = "\"count\":6," SLICE2 ",\"bound\":[{\"node\":\"h-4\",\"count\":2},{\"node\":\"h-5\",\"count\":1}]";
    rf_answer_t *a = s_one(&p, "", ps, "h-6:1 h-0:2");
    s_expect_ok(p, a);
    s_done(&p, &a);
    a = s_one(&p, "", ps, "h-0:3");
    s_expect(p, a,
             "slice 1 (ranks 2-3) spans more than one example.com/rack domain (rank 2 on node h-5, rank 3 on "
             "node h-0)");
    s_done(&p, &a);
}

/* ------------------------------------------------------------------ */
/* Admission                                                            */

Test(check, ordered_admission_is_a_prefix_per_priority)
{
    const char *gangs = "[{\"name\":\"a\",\"priority\":5,\"pod_sets\":[{\"name\":\"w\",\"count\":1}]},"
                        "{\"name\":\"hi\",\"priority\":9,\"pod_sets\":[{\"name\":\"w\",\"count\":1}]},"
                        "{\"name\":\"b\",\"priority\":5,\"pod_sets\":[{\"name\":\"w\",\"count\":1}]}]";
    rf_problem_t *p = s_problem(gangs, "{\"admission\":\"ordered\"}");
    rf_answer_t *a = rf_answer_new(p);
    s_add(a, 0, 0, "h-0", 1);
    s_add(a, 2, 0, "h-1", 1); /* hi rejected: another priority, fine */
    cr_assert_eq(rf_answer_finish(a), RF_OK);
    s_expect_ok(p, a);
    rf_answer_gang_reset(a, 0);
    cr_assert_eq(rf_answer_finish(a), RF_OK);
    s_expect(p, a, "gang b is admitted after gang a of the same priority 5 was rejected (admission: ordered)");
    rf_answer_destroy(&a);
    rf_problem_destroy(&p);
    /* under admission: value the same answer is fine */
    p = s_problem(gangs, NULL);
    a = rf_answer_new(p);
    s_add(a, 2, 0, "h-1", 1);
    cr_assert_eq(rf_answer_finish(a), RF_OK);
    s_expect_ok(p, a);
    s_done(&p, &a);
}

/* ------------------------------------------------------------------ */
/* Reported totals                                                      */

Test(check, reported_totals_are_compared_when_present)
{
    rf_problem_t *p =
        s_problem("[{\"name\":\"g\",\"priority\":3,\"pod_sets\":[{\"name\":\"w\",\"count\":2," GPU8 "}]}]", NULL);
    char text[1024];
    const char *fmt = "{\"gangs\":[{\"name\":\"g\",\"admitted\":true,\"pod_sets\":[{\"name\":\"w\",\"placements\":"
                      "[{\"node\":\"h-0\",\"count\":1},{\"node\":\"h-1\",\"count\":1}]}]%s}]%s}";
    struct {
        const char *gang;
        const char *summary;
        const char *what; /* NULL: all match */
    } cases[] = {
        {"", "", NULL},
        {",\"domains\":[1,1,2],\"penalty\":1.0000000001",
         ",\"summary\":{\"admitted\":1,\"rejected\":0,\"value\":"
         "[[3,16,2]],\"penalty\":1,\"penalty_bound\":1,\"optimal\":true}",
         NULL},
        {",\"penalty\":3.0", "", "gang g: reported penalty 3, recomputed 1"},
        {",\"domains\":[1,2,2]", "", "gang g: reported 2 domains of example.com/rack, recomputed 1"},
        {"", ",\"summary\":{\"penalty\":2.5}", "summary: reported penalty 2.5, recomputed 1"},
        {"", ",\"summary\":{\"value\":[[3,8,1]]}", "summary: reported value [[3,8,1]], recomputed [[3,16,2]]"},
        {"", ",\"summary\":{\"admitted\":0}", "summary: reported 0 admitted and 1 rejected, recomputed 1 and 0"},
        {"", ",\"summary\":{\"penalty_bound\":1.5}", "penalty_bound 1.5 exceeds the recomputed penalty 1"},
        {"", ",\"summary\":{\"penalty_bound\":0.5,\"optimal\":true}", "optimal, but the penalty 1"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        snprintf(text, sizeof text, fmt, cases[i].gang, cases[i].summary);
        rf_answer_t *a = NULL;
        rf_error_t err;
        rf_error_clear(&err);
        cr_assert_eq(rf_answer_from_json(p, text, strlen(text), &a, &err), RF_OK, "%s: %s", err.path, err.message);
        if (!cases[i].what)
            s_expect_ok(p, a);
        else
            cr_assert(!s_expect(p, a, cases[i].what), "case %zu: totals should not match", i);
        rf_answer_destroy(&a);
    }
    rf_problem_destroy(&p);
    rf_test_no_leaks();
}

Test(check, counts_violations_beyond_the_stored_ones)
{
    rf_problem_t *p = s_problem("[{\"name\":\"g\",\"pod_sets\":[{\"name\":\"w\",\"count\":100}]}]", NULL);
    rf_answer_t *a = rf_answer_new(p);
    /* 100 entries on cordoned h-10 and unlabelled h-11, each listed 50 times */
    for (int i = 0; i < 100; i++)
        s_add(a, 0, 0, i % 2 ? "h-10" : "h-11", 1);
    rf_check_report_t rep;
    s_run(p, a, &rep);
    cr_assert(!rep.feasible);
    cr_assert_gt(rep.n_violations, RF_CHECK_MAX_VIOLATIONS);
    for (int i = 0; i < RF_CHECK_MAX_VIOLATIONS; i++)
        cr_assert_not_null(rep.violations[i]);
    rf_check_report_fini(&rep);
    s_done(&p, &a);
}

/* ------------------------------------------------------------------ */
/* Cross-check with rf_answer_finish                                    */

static uint64_t s_rng = 88172645463325252ull;

static uint32_t s_rand(uint32_t n)
{
    s_rng ^= s_rng << 13;
    s_rng ^= s_rng >> 7;
    s_rng ^= s_rng << 17;
    return (uint32_t)(s_rng % n);
}

Test(check, agrees_with_finish_on_random_answers)
{
    for (int round = 0; round < 60; round++) {
        int n_nodes = 4 + (int)s_rand(40), n_gangs = 1 + (int)s_rand(8);
        size_t cap = 65536;
        char *json = malloc(cap);
        size_t len = (size_t)snprintf(json, cap,
                                      "{\"cluster\":{\"levels\":[\"z\",\"b\",\"r\",\"kubernetes.io/hostname\"],"
                                      "\"level_costs\":[1000,%d,7.5,0.25],\"nodes\":[",
                                      (int)s_rand(200));
        for (int n = 0; n < n_nodes; n++) {
            len +=
                (size_t)snprintf(json + len, cap - len, "%s{\"name\":\"n%d\",\"labels\":{\"z\":\"z\"", n ? "," : "", n);
            /* a label is missing one time in eight; values repeat across
             * parents, and hostnames repeat too */
            if (s_rand(8))
                len += (size_t)snprintf(json + len, cap - len, ",\"b\":\"b%u\"", s_rand(3));
            if (s_rand(8))
                len += (size_t)snprintf(json + len, cap - len, ",\"r\":\"r%u\"", s_rand(3));
            if (s_rand(8))
                len += (size_t)snprintf(json + len, cap - len, ",\"kubernetes.io/hostname\":\"h%u\"",
                                        s_rand((uint32_t)n_nodes));
            len += (size_t)snprintf(json + len, cap - len, "}}");
        }
        len += (size_t)snprintf(json + len, cap - len, "]},\"gangs\":[");
        for (int g = 0; g < n_gangs; g++) {
            len += (size_t)snprintf(json + len, cap - len,
                                    "%s{\"name\":\"g%d\",\"priority\":%u,\"bandwidth\":%u.5,\"pod_sets\":[",
                                    g ? "," : "", g, s_rand(3), s_rand(3));
            int n_ps = 1 + (int)s_rand(3);
            for (int j = 0; j < n_ps; j++) {
                len += (size_t)snprintf(json + len, cap - len, "%s{\"name\":\"p%d\",\"count\":64", j ? "," : "", j);
                if (s_rand(3) == 0)
                    len += (size_t)snprintf(json + len, cap - len, ",\"bound\":[{\"node\":\"n%u\",\"count\":%u}]",
                                            s_rand((uint32_t)n_nodes), 1 + s_rand(3));
                len += (size_t)snprintf(json + len, cap - len, "}");
            }
            len += (size_t)snprintf(json + len, cap - len, "]}");
        }
        len += (size_t)snprintf(json + len, cap - len, "]}");
        cr_assert_lt(len, cap);
        rf_problem_t *p = s_problem_json(json);
        free(json);
        rf_answer_t *a = rf_answer_new(p);
        for (int g = 0; g < n_gangs; g++) {
            if (s_rand(4) == 0)
                continue;
            for (int j = 0; j < p->gangs[g].n_pod_sets; j++) {
                int k = (int)s_rand(6);
                for (int i = 0; i < k; i++)
                    cr_assert_eq(rf_answer_add(a, g, j, (int32_t)s_rand((uint32_t)n_nodes), 1 + (int32_t)s_rand(3)),
                                 RF_OK);
            }
            a->gangs[g].admitted = true;
        }
        cr_assert_eq(rf_answer_finish(a), RF_OK);
        rf_check_report_t rep;
        s_run(p, a, &rep);
        if (!rep.reported_totals_match)
            s_dump(&rep);
        cr_assert(rep.reported_totals_match, "round %d", round);
        cr_assert_float_eq(rep.penalty, a->summary.penalty, 1e-9);
        rf_check_report_fini(&rep);
        rf_answer_destroy(&a);
        rf_problem_destroy(&p);
    }
    rf_test_no_leaks();
}

/* ------------------------------------------------------------------ */
/* Preemption: one test per rule                                        */

/* The fixture (tests/support/testutil.h) with h-0..h-5 full: running gangs
 *   low (0): h-0, h-1   prot (0, not preemptible): h-2   mid (5): h-3
 *   low2 (0): h-4, h-5
 * and gangs high (10, 2 pods, required rack), same (0, 1 pod), midg (5, 1 pod),
 * every pod 8 GPUs. */
#define S_RUN(name, prio, extra, pl)                                                                                   \
    "{\"name\":\"" name "\",\"priority\":" #prio extra ",\"pod_sets\":[{\"name\":\"w\","                               \
    "\"requests\":{\"nvidia.com/gpu\":8},\"placements\":[" pl "]}]}"
#define S_AT(node) "{\"node\":\"" node "\",\"count\":1}"
#define S_GANG(name, prio, count, extra)                                                                               \
    "{\"name\":\"" name "\",\"priority\":" #prio extra ",\"pod_sets\":[{\"name\":\"w\",\"count\":" #count              \
    ",\"requests\":{\"nvidia.com/gpu\":8}}]}"

static rf_problem_t *s_pre_problem(const char *options)
{
    static const int used[8] = {8, 8, 8, 8, 8, 8, 0, 0};
    char *json = rf_test_preempt_json(
        used,
        "[" S_RUN("low", 0, "", S_AT("h-0") "," S_AT("h-1")) "," S_RUN(
            "prot", 0, ",\"preemptible\":false",
            S_AT("h-2")) "," S_RUN("mid", 5, "", S_AT("h-3")) "," S_RUN("low2", 0, "", S_AT("h-4") "," S_AT("h-5")) "]",
        "[" S_GANG("high", 10, 2, ",\"topology\":{\"required\":\"example.com/rack\"}") "," S_GANG(
            "same", 0, 1, "") "," S_GANG("midg", 5, 1, "") "]",
        options);
    rf_problem_t *p = rf_test_parse(json);
    free(json);
    return p;
}

/* An answer from JSON: `high`, `same`, `midg` each "" (rejected) or a
 * placement list; `running` the four entries' JSON; `summary` a map or NULL. */
static rf_answer_t *s_pre_answer(const rf_problem_t *p, const char *high, const char *same, const char *midg,
                                 const char *running, const char *summary)
{
    const char *pl[3] = {high, same, midg}, *names[3] = {"high", "same", "midg"};
    char json[8192];
    int len = snprintf(json, sizeof json, "{\"gangs\":[");
    for (int g = 0; g < 3; g++) {
        if (pl[g][0])
            len += snprintf(json + len, sizeof json - (size_t)len,
                            "%s{\"name\":\"%s\",\"admitted\":true,\"pod_sets\":[{\"name\":\"w\",\"placements\":[%s]}]}",
                            g ? "," : "", names[g], pl[g]);
        else
            len += snprintf(json + len, sizeof json - (size_t)len, "%s{\"name\":\"%s\",\"admitted\":false}",
                            g ? "," : "", names[g]);
    }
    snprintf(json + len, sizeof json - (size_t)len, "],\"running\":%s%s%s}", running, summary ? ",\"summary\":" : "",
             summary ? summary : "");
    rf_answer_t *a = NULL;
    rf_error_t err;
    cr_assert_eq(rf_answer_from_json(p, json, strlen(json), &a, &err), RF_OK, "%s: %s\n%s", err.path, err.message,
                 json);
    return a;
}

#define S_KEPT(name)                    "{\"name\":\"" name "\",\"preempted\":false}"
#define S_PRE(name, by)                 "{\"name\":\"" name "\",\"preempted\":true,\"by\":[" by "]}"
#define S_RUNNING(low, prot, mid, low2) "[" low "," prot "," mid "," low2 "]"
#define S_ALL_KEPT                      S_RUNNING(S_KEPT("low"), S_KEPT("prot"), S_KEPT("mid"), S_KEPT("low2"))

/* Expect a violation whose sentence holds `fragment`. */
static void s_expect_violation(const rf_problem_t *p, const rf_answer_t *a, const char *fragment)
{
    rf_check_report_t rep;
    s_run(p, a, &rep);
    bool found = false;
    for (int32_t i = 0; i < rep.n_violations && i < RF_CHECK_MAX_VIOLATIONS; i++)
        found = found || strstr(rep.violations[i], fragment) != NULL;
    if (!found)
        s_dump(&rep);
    cr_assert(!rep.feasible);
    cr_assert(found, "no violation holds '%s'", fragment);
    rf_check_report_fini(&rep);
}

Test(check, preemption_for_a_higher_gang_passes_and_totals_count_kept_running_gangs)
{
    rf_problem_t *p = s_pre_problem(NULL);
    /* high on h-0, h-1 in place of low; value 10: 16/2; 5: mid 8/1; 0: prot
     * and low2 24/3; penalty: high 1 (two hosts), low2 1, the rest 0 */
    rf_answer_t *a = s_pre_answer(
        p, S_AT("h-0") "," S_AT("h-1"), "", "",
        S_RUNNING(S_PRE("low", "\"high\""), S_KEPT("prot"), S_KEPT("mid"), S_KEPT("low2")),
        "{\"admitted\":1,\"rejected\":2,\"preempted\":1,\"value\":[[10,16,2],[5,8,1],[0,24,3]],\"penalty\":2.0}");
    s_expect_ok(p, a);
    rf_check_report_t rep;
    s_run(p, a, &rep);
    cr_assert_eq(rep.n_value, 3);
    cr_assert_eq(rep.value[2].units, 24);
    cr_assert_float_eq(rep.penalty, 2.0, 1e-9);
    rf_check_report_fini(&rep);
    rf_answer_destroy(&a);

    /* the same answer built in C: rf_answer_finish fills by and the totals */
    a = rf_answer_new(p);
    s_add(a, 0, 0, "h-0", 1);
    s_add(a, 0, 0, "h-1", 1);
    cr_assert_eq(rf_answer_preempt(a, 0, true), RF_OK);
    cr_assert_eq(rf_answer_finish(a), RF_OK);
    cr_assert_eq(a->running[0].n_by, 1);
    cr_assert_eq(a->running[0].by[0], 0);
    cr_assert_eq(a->summary.preempted, 1);
    cr_assert_eq(a->summary.value[2].units, 24);
    cr_assert_float_eq(a->summary.penalty, 2.0, 1e-9);
    cr_assert_float_eq(rf_answer_kept_penalty(a), 1.0, 1e-9);
    s_expect_ok(p, a);
    rf_answer_destroy(&a);
    rf_problem_destroy(&p);
    rf_test_no_leaks();
}

Test(check, preempting_a_protected_gang_is_a_violation)
{
    rf_problem_t *p = s_pre_problem(NULL);
    rf_answer_t *a = s_pre_answer(
        p, S_AT("h-0") "," S_AT("h-2"), "", "",
        S_RUNNING(S_PRE("low", "\"high\""), S_PRE("prot", "\"high\""), S_KEPT("mid"), S_KEPT("low2")), NULL);
    s_expect_violation(p, a, "running gang prot is preempted, but it is not preemptible");
    rf_answer_destroy(&a);
    rf_problem_destroy(&p);
    rf_test_no_leaks();
}

Test(check, preemption_never_allows_none)
{
    rf_problem_t *p = s_pre_problem("{\"preemption\":\"never\"}");
    rf_answer_t *a =
        s_pre_answer(p, S_AT("h-0") "," S_AT("h-1"), "", "",
                     S_RUNNING(S_PRE("low", "\"high\""), S_KEPT("prot"), S_KEPT("mid"), S_KEPT("low2")), NULL);
    s_expect_violation(p, a, "options.preemption is never");
    rf_answer_destroy(&a);
    /* and with every gang kept it is fine */
    a = s_pre_answer(p, S_AT("h-6") "," S_AT("h-7"), "", "", S_ALL_KEPT, NULL);
    s_expect_ok(p, a);
    rf_answer_destroy(&a);
    rf_problem_destroy(&p);
    rf_test_no_leaks();
}

Test(check, a_preempted_gang_needs_a_preemptor_of_higher_priority)
{
    rf_problem_t *p = s_pre_problem(NULL);
    /* nothing new on low2's nodes */
    rf_answer_t *a = s_pre_answer(p, S_AT("h-6") "," S_AT("h-7"), "", "",
                                  S_RUNNING(S_KEPT("low"), S_KEPT("prot"), S_KEPT("mid"), S_PRE("low2", "")), NULL);
    s_expect_violation(p, a, "running gang low2 (priority 0) is preempted, but no admitted gang of higher priority");
    rf_answer_destroy(&a);
    /* a gang of the same priority on its nodes is no preemptor */
    a = s_pre_answer(p, "", S_AT("h-4"), "", S_RUNNING(S_KEPT("low"), S_KEPT("prot"), S_KEPT("mid"), S_PRE("low2", "")),
                     NULL);
    s_expect_violation(p, a, "no admitted gang of higher priority");
    rf_answer_destroy(&a);
    rf_problem_destroy(&p);
    rf_test_no_leaks();
}

Test(check, by_lists_exactly_the_preemptors_in_problem_order)
{
    rf_problem_t *p = s_pre_problem(NULL);
    /* high on h-0, midg on h-1 (room freed by low, priority 0 < 5): both are
     * preemptors of low, in problem order high then midg... */
    const char *high = S_AT("h-0") "," S_AT("h-1");
    rf_answer_t *a =
        s_pre_answer(p, S_AT("h-0") "," S_AT("h-6"), "", S_AT("h-1"),
                     S_RUNNING(S_PRE("low", "\"midg\",\"high\""), S_KEPT("prot"), S_KEPT("mid"), S_KEPT("low2")), NULL);
    s_expect_violation(p, a, "by lists [midg, high], but its 2 preemptors");
    rf_answer_destroy(&a);
    /* one missing */
    a = s_pre_answer(p, high, "", "", S_RUNNING(S_PRE("low", ""), S_KEPT("prot"), S_KEPT("mid"), S_KEPT("low2")), NULL);
    s_expect_violation(p, a, "by lists [], but its 1 preemptors");
    rf_answer_destroy(&a);
    /* one too many: same (priority 0) is no preemptor */
    a = s_pre_answer(p, high, "", "",
                     S_RUNNING(S_PRE("low", "\"high\",\"same\""), S_KEPT("prot"), S_KEPT("mid"), S_KEPT("low2")), NULL);
    s_expect_violation(p, a, "by lists [high, same]");
    rf_answer_destroy(&a);
    /* a kept gang lists no preemptors */
    a = s_pre_answer(p, S_AT("h-6") "," S_AT("h-7"), "", "",
                     S_RUNNING(S_KEPT("low"), S_KEPT("prot"), S_KEPT("mid"),
                               "{\"name\":\"low2\",\"preempted\":false,\"by\":[\"high\"]}"),
                     NULL);
    s_expect_violation(p, a, "running gang low2 is kept, but by lists 1 gangs");
    rf_answer_destroy(&a);
    rf_problem_destroy(&p);
    rf_test_no_leaks();
}

/* The room a preempted gang frees serves only priorities above its own. */
Test(check, freed_room_is_checked_per_priority)
{
    rf_problem_t *p = s_pre_problem(NULL);
    /* midg (5) on h-4 freed by low2 (0): fine, low2's preemptor is midg */
    rf_answer_t *a =
        s_pre_answer(p, S_AT("h-6") "," S_AT("h-7"), "", S_AT("h-4"),
                     S_RUNNING(S_KEPT("low"), S_KEPT("prot"), S_KEPT("mid"), S_PRE("low2", "\"midg\"")), NULL);
    s_expect_ok(p, a);
    rf_answer_destroy(&a);
    /* same (0) on h-5, room freed by low2 (0) for midg: not for its own priority */
    a = s_pre_answer(p, S_AT("h-6") "," S_AT("h-7"), S_AT("h-5"), S_AT("h-4"),
                     S_RUNNING(S_KEPT("low"), S_KEPT("prot"), S_KEPT("mid"), S_PRE("low2", "\"midg\"")), NULL);
    s_expect_violation(p, a, "node h-5: nvidia.com/gpu 8 for new pods of priority <= 0 > free 0");
    rf_answer_destroy(&a);
    /* high and midg both on h-1: 16 GPUs where low freed 8 */
    a = s_pre_answer(p, S_AT("h-0") "," S_AT("h-1"), "", S_AT("h-1"),
                     S_RUNNING(S_PRE("low", "\"high\",\"midg\""), S_KEPT("prot"), S_KEPT("mid"), S_KEPT("low2")), NULL);
    s_expect_violation(p, a, "node h-1: nvidia.com/gpu 16 for new pods of priority <= 10 > free 8");
    rf_answer_destroy(&a);
    /* without any preemption, a full node stays full */
    a = s_pre_answer(p, S_AT("h-0") "," S_AT("h-1"), "", "", S_ALL_KEPT, NULL);
    s_expect_violation(p, a, "node h-0: nvidia.com/gpu 8 > free 0");
    rf_answer_destroy(&a);
    rf_problem_destroy(&p);
    rf_test_no_leaks();
}

Test(check, reported_totals_count_kept_running_gangs)
{
    rf_problem_t *p = s_pre_problem(NULL);
    const char *high = S_AT("h-6") "," S_AT("h-7");
    /* value without the kept running gangs */
    rf_answer_t *a = s_pre_answer(p, high, "", "", S_ALL_KEPT, "{\"value\":[[10,16,2],[5,0,0],[0,0,0]]}");
    s_expect_violation(p, a,
                       "summary: reported value [[10,16,2],[5,0,0],[0,0,0]], recomputed [[10,16,2],[5,8,1],[0,40,5]]");
    rf_answer_destroy(&a);
    /* penalty without theirs: high 1, low 1, low2 1 */
    a = s_pre_answer(p, high, "", "", S_ALL_KEPT, "{\"penalty\":1.0}");
    s_expect_violation(p, a, "reported penalty 1, recomputed 3");
    rf_answer_destroy(&a);
    a = s_pre_answer(p, high, "", "", S_ALL_KEPT, "{\"preempted\":1,\"penalty\":3.0}");
    s_expect_violation(p, a, "summary: reported 1 preempted, recomputed 0");
    rf_answer_destroy(&a);
    a = s_pre_answer(p, high, "", "", S_ALL_KEPT,
                     "{\"preempted\":0,\"penalty\":3.0,\"value\":[[10,16,2],[5,8,1],[0,40,5]]}");
    s_expect_ok(p, a);
    rf_answer_destroy(&a);
    rf_problem_destroy(&p);
    rf_test_no_leaks();
}
