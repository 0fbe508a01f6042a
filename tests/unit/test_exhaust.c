/* tests/unit/test_exhaust.c: the exhaustive reference (tests/support/exhaust.c)
 * and the greedy against it.
 *
 * - tiny hand-made problems whose optimum is worked out by hand in the
 *   comments: the objective's rules one at a time (levels weighed, required
 *   domains, slices, elastic, priorities, both admission policies, bound
 *   pods);
 * - on random tiny problems: the optimum, laid out as an answer, is feasible
 *   under rf_check and rf_answer_finish agrees with the exhaustive figures;
 *   the greedy is never better than the optimum (a "better" greedy would mean
 *   one of the two is wrong), and how often it is worse is logged;
 * - the problems of tests/integration/glpsol.sh (tests/data/glpsol/X.json):
 *   the exhaustive optimum equals X.expect, the optimum glpsol finds for
 *   models/placement.mod, so the model and this reference vouch for each
 *   other. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../support/exhaust.h"
#include "../support/leak.h"
#include "../support/randprob.h"
#include "../support/testutil.h"
#include "rackfit/rackfit.h"

/* Solve exhaustively, lay the optimum out, finish and check it, and make
 * sure finish and the exhaustive figures agree. Returns the finished answer. */
static rf_answer_t *s_optimum(const rf_problem_t *pb, rf_exhaust_t *ex, const char *what)
{
    cr_assert_eq(rf_exhaust_solve(pb, ex), RF_OK, "%s: exhaustive search failed", what);
    rf_answer_t *ans = NULL;
    cr_assert_eq(rf_exhaust_to_answer(pb, ex, &ans), RF_OK);
    cr_assert_eq(rf_answer_finish(ans), RF_OK);
    rf_test_assert_feasible(pb, ans, what);
    cr_assert_eq(ans->summary.n_value, ex->n_value, "%s: priorities", what);
    for (int32_t k = 0; k < ex->n_value; k++) {
        cr_assert_eq(ans->summary.value[k].priority, ex->value[k].priority, "%s", what);
        cr_assert_eq(ans->summary.value[k].units, ex->value[k].units, "%s: units at priority %lld: finish %lld", what,
                     (long long)ex->value[k].priority, (long long)ans->summary.value[k].units);
        cr_assert_eq(ans->summary.value[k].pods, ex->value[k].pods, "%s: pods", what);
    }
    cr_assert_float_eq(ans->summary.penalty, ex->penalty, 1e-9, "%s: penalty: finish %g, exhaustive %g", what,
                       ans->summary.penalty, ex->penalty);
    cr_assert_eq(rf_exhaust_compare(pb, ans), 0, "%s: the optimum does not compare equal to itself", what);
    return ans;
}

/* The optimum of a hand-made problem: value at the first (highest)
 * priority, and the penalty. */
static void s_expect(const char *json, const char *what, int64_t units, int64_t pods, double penalty)
{
    rf_problem_t *pb = rf_test_parse(json);
    rf_exhaust_t ex;
    rf_answer_t *ans = s_optimum(pb, &ex, what);
    cr_assert_eq(ex.value[0].units, units, "%s: units %lld, want %lld", what, (long long)ex.value[0].units,
                 (long long)units);
    cr_assert_eq(ex.value[0].pods, pods, "%s: pods %lld, want %lld", what, (long long)ex.value[0].pods,
                 (long long)pods);
    cr_assert_float_eq(ex.penalty, penalty, 1e-9, "%s: penalty %g, want %g", what, ex.penalty, penalty);
    rf_answer_t *gr = rf_test_solve(pb, RF_MODE_GREEDY, 1, 1000);
    cr_assert_geq(rf_exhaust_compare(pb, gr), 0, "%s: the greedy beats the optimum", what);
    rf_answer_destroy(&gr);
    rf_answer_destroy(&ans);
    rf_problem_destroy(&pb);
}

#define LEVELS "\"levels\":[\"example.com/block\",\"example.com/rack\",\"kubernetes.io/hostname\"]"
#define NODE(name, block, rack, gpus, used)                                                                            \
    "{\"name\":\"" name "\",\"labels\":{\"example.com/block\":\"" block "\",\"example.com/rack\":\"" rack              \
    "\",\"kubernetes.io/hostname\":\"" name "\"},\"allocatable\":{\"nvidia.com/gpu\":" #gpus                           \
    "},\"used\":{\"nvidia.com/gpu\":" #used "}}"
#define GANG(name, prio, extra, count, min, gpu)                                                                       \
    "{\"name\":\"" name "\",\"priority\":" #prio extra ",\"pod_sets\":[{\"name\":\"w\",\"count\":" #count              \
    ",\"min_count\":" #min ",\"requests\":{\"nvidia.com/gpu\":" #gpu "}}]}"

/* ------------------------------------------------------------------ hand-made */

/* Two hosts beat many, scaled down: with hosts costing 2 and racks 1, the
 * three free hosts of r1 (one GPU each: penalty 2*2 = 4) lose to two hosts
 * in two racks (x holds 2, plus one more host: 1 + 2 = 3). */
Test(exhaust, levels_are_weighed)
{
    const char *json =
        "{\"cluster\":{" LEVELS
        ",\"level_costs\":[100,1,2],\"nodes\":[" NODE("a0", "b", "r1", 8, 7) "," NODE("a1", "b", "r1", 8, 7) "," NODE(
            "a2", "b", "r1", 8, 7) "," NODE("x", "b", "r2", 8, 6) "," NODE("y", "b", "r3", 8,
                                                                           6) "]},\"gangs\":[" GANG("g", 0, "", 3, 3,
                                                                                                    1) "]}";
    s_expect(json, "levels", 3, 3, 3.0);
    rf_test_no_leaks();
}

/* A required rack: r1 (two hosts, 2 pods of 2 GPUs each) holds the
 * 4-pod gang (penalty 1 host); r2's three hosts hold only 3 such pods. The
 * second gang (3 pods, required rack) then goes to r2: 3 hosts, penalty 2. */
Test(exhaust, required_rack)
{
    const char *json =
        "{\"cluster\":{" LEVELS ",\"nodes\":[" NODE("a1", "b", "r1", 4, 0) "," NODE("a2", "b", "r1", 4, 0) "," NODE(
            "c1", "b", "r2", 2,
            0) "," NODE("c2", "b", "r2", 2,
                        0) "," NODE("c3", "b", "r2", 2,
                                    0) "]},\"gangs\":[" GANG("big", 0,
                                                             ",\"topology\":{\"required\":\"example.com/rack\"}", 4, 4,
                                                             2) "," GANG("small", 0,
                                                                         ",\"topology\":{\"required\":\"example.com/"
                                                                         "rack\"}",
                                                                         3, 3, 2) "]}";
    s_expect(json, "required rack", 14, 7, 3.0);
    /* three pods of 3 GPUs fit in no rack (r1 holds one per host): rejected */
    const char *json2 = "{\"cluster\":{" LEVELS ",\"nodes\":[" NODE("a1", "b", "r1", 4, 0) "," NODE(
        "a2", "b", "r1", 4, 0) "," NODE("c1", "b", "r2", 2, 0) "]},\"gangs\":[" GANG("big", 0,
                                                                                     ",\"topology\":{\"required\":"
                                                                                     "\"example.com/rack\"}",
                                                                                     3, 3, 3) "]}";
    s_expect(json2, "required rack, too big", 0, 0, 0.0);
    rf_test_no_leaks();
}

/* Slices of 2 on one host: h1 has 3 free GPUs, h2 one. Without slices 4
 * pods fit (3 + 1); with them only one slice (2 pods on h1). */
Test(exhaust, slices_cost_pods)
{
    const char *fmt = "{\"cluster\":{" LEVELS ",\"nodes\":[" NODE("h1", "b", "r1", 4, 1) "," NODE(
        "h2", "b", "r1", 4, 3) "]},\"gangs\":[{\"name\":\"s\",\"pod_sets\":[{\"name\":\"w\",\"count\":4,"
                               "\"min_count\":2,\"requests\":{\"nvidia.com/gpu\":1}%s}]}]}";
    char json[2048];
    snprintf(json, sizeof json, fmt, ",\"slice\":{\"size\":2,\"required\":\"kubernetes.io/hostname\"}");
    s_expect(json, "sliced", 2, 2, 0.0);
    snprintf(json, sizeof json, fmt, "");
    s_expect(json, "not sliced", 4, 4, 1.0);
    rf_test_no_leaks();
}

/* Elastic: value comes first, so 4 pods over two racks (10 + 1) beat 3
 * pods on one host. */
Test(exhaust, elastic_takes_value_before_compactness)
{
    const char *json = "{\"cluster\":{" LEVELS ",\"nodes\":[" NODE("a1", "b", "r1", 4, 1) "," NODE(
        "c1", "b", "r2", 4, 2) "]},\"gangs\":[" GANG("e", 0, "", 4, 1, 1) "]}";
    s_expect(json, "elastic", 4, 4, 11.0);
    rf_test_no_leaks();
}

/* One node of 8 GPUs; gangs A (4), B (8), C (4) in that order. By value,
 * A + C (8 units, 2 pods) beat B alone (8 units, 1 pod); ordered, B blocks
 * C, and B does not fit after A: only A. */
Test(exhaust, admission_policies)
{
    const char *fmt = "{\"cluster\":{" LEVELS
                      ",\"nodes\":[" NODE("n", "b", "r1", 8, 0) "]},\"gangs\":[" GANG("A", 0, "", 1, 1, 4) "," GANG(
                          "B", 0, "", 1, 1, 8) "," GANG("C", 0, "", 1, 1, 4) "],\"options\":{\"admission\":\"%s\"}}";
    char json[2048];
    snprintf(json, sizeof json, fmt, "value");
    s_expect(json, "value", 8, 2, 0.0);
    snprintf(json, sizeof json, fmt, "ordered");
    s_expect(json, "ordered", 4, 1, 0.0);
    rf_problem_t *pb = rf_test_parse(json);
    rf_exhaust_t ex;
    cr_assert_eq(rf_exhaust_solve(pb, &ex), RF_OK);
    cr_assert(ex.admitted[0] && !ex.admitted[1] && !ex.admitted[2]);
    rf_problem_destroy(&pb);
    rf_test_no_leaks();
}

/* Priorities: the high-priority gang first, though the low one is larger.
 * With ordered admission and an elastic high-priority gang, the stage of the
 * higher priority decides first (docs/ilp.md): E takes all 4 pods (8 GPUs)
 * and F, alone at the lower priority, gets nothing. */
Test(exhaust, priorities_come_first)
{
    const char *json = "{\"cluster\":{" LEVELS ",\"nodes\":[" NODE("n", "b", "r1", 8, 0) "]},\"gangs\":[" GANG(
        "big-low", 0, "", 1, 1, 8) "," GANG("small-high", 10, "", 1, 1, 1) "]}";
    s_expect(json, "priority", 1, 1, 0.0);
    const char *json2 = "{\"cluster\":{" LEVELS ",\"nodes\":[" NODE("n", "b", "r1", 8, 0) "]},\"gangs\":[" GANG(
        "E", 1, "", 4, 1, 2) "," GANG("F", 0, "", 1, 1, 2) "],\"options\":{\"admission\":\"ordered\"}}";
    s_expect(json2, "ordered, elastic high priority", 8, 4, 0.0);
    rf_test_no_leaks();
}

/* Bound pods: three running on a1 (full) pin the required rack r1, so the
 * fourth goes to a2 (penalty 1 host); and a gang whose bound pod cannot be
 * completed (no room for the other three) is rejected, worth nothing. */
Test(exhaust, bound_pods)
{
    const char *json =
        "{\"cluster\":{" LEVELS ",\"nodes\":[" NODE("a1", "b", "r1", 8, 8) "," NODE("a2", "b", "r1", 8, 4) "," NODE(
            "c1", "b", "r2", 8,
            0) "," NODE("c2", "b", "r2", 8,
                        0) "]},\"gangs\":[{\"name\":\"g\",\"topology\":{\"required\":\"example.com/rack\"},"
                           "\"pod_sets\":[{\"name\":\"w\",\"count\":4,\"requests\":{\"nvidia.com/gpu\":2},"
                           "\"bound\":[{\"node\":\"a1\",\"ranks\":[0,1,2]}]}]}]}";
    s_expect(json, "bound", 8, 4, 1.0);
    const char *json2 = "{\"cluster\":{" LEVELS ",\"nodes\":[" NODE("a1", "b", "r1", 8, 8) "," NODE(
        "a2", "b", "r1", 8, 6) "]},\"gangs\":[{\"name\":\"g\",\"pod_sets\":[{\"name\":\"w\",\"count\":4,"
                               "\"requests\":{\"nvidia.com/gpu\":2},\"bound\":[{\"node\":\"a1\",\"count\":1}]}]}]}";
    s_expect(json2, "bound, cannot complete", 0, 0, 0.0);
    rf_test_no_leaks();
}

/* Out of scope: too many nodes, or a sliced pod set with bound pods. */
Test(exhaust, refuses_what_it_cannot_enumerate)
{
    char json[8192];
    int n = snprintf(json, sizeof json, "{\"cluster\":{" LEVELS ",\"nodes\":[");
    for (int i = 0; i < 6; i++)
        n += snprintf(json + n, sizeof json - (size_t)n, "%s{\"name\":\"n%d\"}", i ? "," : "", i);
    snprintf(json + n, sizeof json - (size_t)n, "]},\"gangs\":[]}");
    rf_problem_t *pb = rf_test_parse(json);
    rf_exhaust_t ex;
    const char *why = NULL;
    cr_assert(!rf_exhaust_supported(pb, &why));
    cr_assert_str_eq(why, "too many nodes");
    cr_assert_eq(rf_exhaust_solve(pb, &ex), RF_EUNSUPPORTED);
    rf_answer_t *ans = rf_answer_new(pb);
    cr_assert_eq(rf_exhaust_compare(pb, ans), RF_EXHAUST_UNSUPPORTED);
    rf_answer_destroy(&ans);
    rf_problem_destroy(&pb);
    pb = rf_test_parse("{\"cluster\":{" LEVELS ",\"nodes\":[" NODE(
        "a1", "b", "r1", 8, 2) "]},\"gangs\":[{\"name\":\"g\",\"pod_sets\":[{\"name\":\"w\",\"count\":4,"
                               "\"slice\":{\"size\":2,\"required\":\"kubernetes.io/hostname\"},"
                               "\"requests\":{\"nvidia.com/gpu\":1},\"bound\":[{\"node\":\"a1\",\"count\":2}]}]}]}");
    cr_assert(!rf_exhaust_supported(pb, &why));
    cr_assert_eq(rf_exhaust_solve(pb, &ex), RF_EUNSUPPORTED);
    rf_problem_destroy(&pb);
    rf_test_no_leaks();
}

/* ------------------------------------------------------------------ random */

Test(exhaust, greedy_never_beats_the_optimum_on_random_tiny_problems)
{
    rf_randprob_opts_t o;
    rf_exhaust_randprob_opts(&o);
    int worse = 0, worse_value = 0, n = 0;
    int64_t options = 0, visited = 0, most = 0;
    double t0 = rf_now_ms();
    for (uint64_t seed = 1; seed <= 1000; seed++) {
        char *json = rf_randprob(seed, &o);
        rf_problem_t *pb = rf_test_parse(json);
        char what[64];
        snprintf(what, sizeof what, "seed %llu", (unsigned long long)seed);
        const char *why = NULL;
        cr_assert(rf_exhaust_supported(pb, &why), "%s: %s", what, why);
        rf_exhaust_t ex;
        rf_answer_t *opt = s_optimum(pb, &ex, what);
        options += ex.options;
        visited += ex.visited;
        most = ex.visited > most ? ex.visited : most;
        rf_answer_t *gr = rf_test_solve(pb, RF_MODE_GREEDY, 1, 1000);
        int c = rf_exhaust_compare(pb, gr);
        cr_assert_geq(c, 0, "%s: the greedy beats the exhaustive optimum\n%s", what, json);
        if (pb->options.admission == RF_ADMIT_VALUE)
            cr_assert_geq(rf_answer_compare(gr, opt), 0, "%s: rf_answer_compare: the greedy beats the optimum", what);
        if (c > 0) {
            worse++;
            rf_exhaust_t g;
            cr_assert_eq(rf_exhaust_evaluate(pb, gr, &g), RF_OK);
            g.penalty = ex.penalty; /* value only */
            worse_value += rf_exhaust_cmp(&g, &ex) > 0;
        }
        n++;
        rf_answer_destroy(&gr);
        rf_answer_destroy(&opt);
        rf_problem_destroy(&pb);
        free(json);
    }
    cr_log_info("random tiny problems: %d, greedy optimal on %d, worse on %d (%d of them in value); "
                "%lld gang placements, %lld search nodes (at most %lld), %.0f ms",
                n, n - worse, worse, worse_value, (long long)options, (long long)visited, (long long)most,
                rf_now_ms() - t0);
    rf_test_no_leaks();
}

/* ------------------------------------------------------------------ running gangs */

/* Two racks (r1: n0, n1; r2: n2, n3) of 8-GPU nodes, every node full of
 * running 8-GPU pods; `running` lists them. One pending gang, high (10): two
 * 8-GPU pods in one rack. */
#define PRE_NODE(n, rack)                                                                                              \
    "{\"name\":\"" n "\",\"labels\":{\"example.com/rack\":\"" rack "\",\"kubernetes.io/hostname\":\"" n "\"},"         \
    "\"allocatable\":{\"nvidia.com/gpu\":8},\"used\":{\"nvidia.com/gpu\":8}}"
#define PRE_RUN(name, extra, pl)                                                                                       \
    "{\"name\":\"" name "\"" extra ",\"pod_sets\":[{\"name\":\"w\",\"requests\":{\"nvidia.com/gpu\":8},"               \
    "\"placements\":[" pl "]}]}"
#define PRE_AT(n) "{\"node\":\"" n "\",\"count\":1}"
#define PRE_PROBLEM(running, options)                                                                                  \
    "{\"cluster\":{\"levels\":[\"example.com/rack\",\"kubernetes.io/"                                                  \
    "hostname\"],\"level_costs\":[10,1],\"nodes\":[" PRE_NODE("n0", "r1") "," PRE_NODE("n1", "r1") "," PRE_NODE(       \
        "n2", "r2") "," PRE_NODE("n3", "r2") "]},\"running\":" running                                                 \
                                             ",\"gangs\":[{\"name\":\"high\",\"priority\":10,\"topology\":{"           \
                                             "\"required\":\"example.com/"                                             \
                                             "rack\"},\"pod_sets\":[{\"name\":\"w\",\"count\":2,\"requests\":{"        \
                                             "\"nvidia.com/gpu\":8}}]}]" options "}"

static void s_expect_preempted(const char *json, const char *what, int64_t high_units, const bool *preempted,
                               double penalty)
{
    rf_problem_t *pb = rf_test_parse(json);
    rf_exhaust_t ex;
    rf_answer_t *ans = s_optimum(pb, &ex, what);
    cr_assert_eq(ex.value[0].priority, 10);
    cr_assert_eq(ex.value[0].units, high_units, "%s: units %lld", what, (long long)ex.value[0].units);
    for (int32_t i = 0; i < pb->n_running; i++)
        cr_assert_eq(ex.preempted[i], preempted[i], "%s: running gang %s", what, pb->running[i].name);
    cr_assert_float_eq(ex.penalty, penalty, 1e-9, "%s: penalty %g, want %g", what, ex.penalty, penalty);
    rf_answer_t *gr = rf_test_solve(pb, RF_MODE_GREEDY, 1, 1000);
    rf_test_assert_feasible(pb, gr, what);
    cr_assert_geq(rf_exhaust_compare(pb, gr), 0, "%s: the greedy beats the optimum", what);
    rf_answer_destroy(&gr);
    rf_answer_destroy(&ans);
    rf_problem_destroy(&pb);
}

Test(exhaust, preempts_whole_lower_gangs_only_where_allowed)
{
    /* r2 holds a protected gang: the one rack to free is r1, at the cost of
     * lowA's 16 GPUs at priority 0 for 16 at priority 10; penalty: high 1,
     * the kept ones 0 */
    const char *running = "[" PRE_RUN("lowA", "", PRE_AT("n0") "," PRE_AT("n1")) "," PRE_RUN(
        "lowB", "", PRE_AT("n2")) "," PRE_RUN("prot", ",\"preemptible\":false", PRE_AT("n3")) "]";
    char json[4096];
    snprintf(json, sizeof json, PRE_PROBLEM("%s", ""), running);
    s_expect_preempted(json, "one rack to free", 16, (const bool[]){true, false, false}, 1.0);
    /* under preemption: never, nothing is evicted and high waits */
    snprintf(json, sizeof json, PRE_PROBLEM("%s", ",\"options\":{\"preemption\":\"never\"}"), running);
    s_expect_preempted(json, "never", 0, (const bool[]){false, false, false}, 1.0);
    /* a gang of the same priority is never evicted for it: the 16 units at
     * priority 10 are peer's, kept; high is rejected */
    snprintf(json, sizeof json, PRE_PROBLEM("%s", ""),
             "[" PRE_RUN("peer", ",\"priority\":10", PRE_AT("n0") "," PRE_AT("n1")) "," PRE_RUN(
                 "prot", ",\"preemptible\":false", PRE_AT("n2") "," PRE_AT("n3")) "]");
    s_expect_preempted(json, "same priority", 16, (const bool[]){false, false}, 2.0);
    rf_test_no_leaks();
}

/* Equal value either way (16 GPUs at priority 0): the penalty picks the
 * victims whose loss leaves the rest most compact. lowA spans two hosts
 * (penalty 1 while kept); lowB1 and lowB2 one each. Evicting lowA leaves
 * penalty 1 (high's); evicting lowB1 and lowB2 leaves 2. */
Test(exhaust, equal_value_victims_chosen_by_penalty)
{
    char json[4096];
    snprintf(json, sizeof json, PRE_PROBLEM("%s", ""),
             "[" PRE_RUN("lowB1", "", PRE_AT("n2")) "," PRE_RUN("lowA", "", PRE_AT("n0") "," PRE_AT("n1")) "," PRE_RUN(
                 "lowB2", "", PRE_AT("n3")) "]");
    s_expect_preempted(json, "tie on value", 16, (const bool[]){false, true, false}, 1.0);
    /* when lowA is worth more (a third pod elsewhere), r2's gangs go */
    snprintf(
        json, sizeof json,
        "{\"cluster\":{\"levels\":[\"example.com/rack\",\"kubernetes.io/hostname\"],\"level_costs\":[10,1],"
        "\"nodes\":[" PRE_NODE("n0", "r1") "," PRE_NODE("n1", "r1") "," PRE_NODE("n2", "r2") "," PRE_NODE("n3", "r2") "," PRE_NODE(
            "n4",
            "r3") "]},\"running\":[" PRE_RUN("lowB1", "",
                                             PRE_AT(
                                                 "n2")) "," PRE_RUN("lowA", "",
                                                                    PRE_AT("n0") "," PRE_AT("n1") "," PRE_AT(
                                                                        "n4")) "," PRE_RUN("lowB2", "",
                                                                                           PRE_AT(
                                                                                               "n3")) "],"
                                                                                                      "\"gangs\":[{"
                                                                                                      "\"name\":"
                                                                                                      "\"high\","
                                                                                                      "\"priority\":10,"
                                                                                                      "\"topology\":{"
                                                                                                      "\"required\":"
                                                                                                      "\"example.com/"
                                                                                                      "rack\"},"
                                                                                                      "\"pod_sets\":[{"
                                                                                                      "\"name\":\"w\","
                                                                                                      "\"count\":2,"
                                                                                                      "\"requests\":{"
                                                                                                      "\"nvidia.com/"
                                                                                                      "gpu\":8}}]}]}");
    /* penalty: high 1, lowA kept 10 (two racks) + 2 (three hosts) */
    s_expect_preempted(json, "least value", 16, (const bool[]){true, false, true}, 13.0);
    rf_test_no_leaks();
}

Test(exhaust, optimum_with_running_gangs_on_random_tiny_problems)
{
    rf_randprob_opts_t o;
    rf_exhaust_randprob_opts(&o);
    o.max_running = RF_EXHAUST_MAX_RUNNING;
    int n = 0, with_running = 0, preempting = 0, worse = 0;
    double t0 = rf_now_ms();
    for (uint64_t seed = 1; seed <= 400; seed++) {
        char *json = rf_randprob(seed, &o);
        rf_problem_t *pb = rf_test_parse(json);
        char what[64];
        snprintf(what, sizeof what, "running seed %llu", (unsigned long long)seed);
        const char *why = NULL;
        cr_assert(rf_exhaust_supported(pb, &why), "%s: %s", what, why);
        rf_exhaust_t ex;
        rf_answer_t *opt = s_optimum(pb, &ex, what);
        with_running += pb->n_running > 0;
        preempting += opt->summary.preempted > 0;
        rf_answer_t *gr = rf_test_solve(pb, RF_MODE_GREEDY, 1, 1000);
        rf_test_assert_feasible(pb, gr, what);
        int c = rf_exhaust_compare(pb, gr);
        cr_assert_geq(c, 0, "%s: the greedy beats the exhaustive optimum\n%s", what, json);
        worse += c > 0;
        n++;
        rf_answer_destroy(&gr);
        rf_answer_destroy(&opt);
        rf_problem_destroy(&pb);
        free(json);
    }
    cr_assert_geq(with_running, n / 2, "only %d of %d problems have running gangs", with_running, n);
    cr_assert_geq(preempting, n / 20, "only %d of %d optima preempt", preempting, n);
    cr_log_info("random tiny problems with running gangs: %d (%d with running gangs), optimum preempts in %d, "
                "greedy worse on %d, %.0f ms",
                n, with_running, preempting, worse, rf_now_ms() - t0);
    rf_test_no_leaks();
}

/* ------------------------------------------------------------------ glpsol's problems */

Test(exhaust, agrees_with_the_mathprog_model)
{
    const char *dir = RF_SOURCE_DIR "/tests/data/glpsol";
    DIR *d = opendir(dir);
    cr_assert_not_null(d, "cannot open %s", dir);
    int checked = 0;
    for (struct dirent *e; (e = readdir(d));) {
        size_t len = strlen(e->d_name);
        if (len < 6 || strcmp(e->d_name + len - 5, ".json") != 0)
            continue;
        char path[1024], expect[1024];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        snprintf(expect, sizeof expect, "%s/%.*s.expect", dir, (int)(len - 5), e->d_name);
        FILE *f = fopen(expect, "r");
        if (!f)
            continue;
        rf_problem_t *pb = NULL;
        rf_error_t err;
        cr_assert_eq(rf_problem_from_json_file(path, NULL, &pb, &err), RF_OK, "%s: %s: %s", path, err.path,
                     err.message);
        rf_exhaust_t ex;
        rf_answer_t *ans = s_optimum(pb, &ex, e->d_name);
        char line[256];
        int values = 0;
        while (fgets(line, sizeof line, f)) {
            long long prio, units, pods;
            double pen;
            if (sscanf(line, "value %lld %lld %lld", &prio, &units, &pods) == 3) {
                bool found = false;
                for (int32_t k = 0; k < ex.n_value; k++) {
                    if (ex.value[k].priority != prio)
                        continue;
                    found = true;
                    cr_expect(ex.value[k].units == units && ex.value[k].pods == pods,
                              "%s: priority %lld: exhaustive %lld units %lld pods, model %lld %lld", e->d_name, prio,
                              (long long)ex.value[k].units, (long long)ex.value[k].pods, units, pods);
                }
                cr_expect(found, "%s: no priority %lld", e->d_name, prio);
                values++;
            } else if (sscanf(line, "penalty %lf", &pen) == 1) {
                cr_expect_float_eq(ex.penalty, pen, 1e-6, "%s: penalty: exhaustive %g, model %g", e->d_name, ex.penalty,
                                   pen);
            }
        }
        fclose(f);
        cr_expect_eq(values, ex.n_value, "%s: priorities", e->d_name);
        checked++;
        rf_answer_destroy(&ans);
        rf_problem_destroy(&pb);
    }
    closedir(d);
    cr_assert_geq(checked, 20, "only %d problems with an .expect file", checked);
    rf_test_no_leaks();
}
