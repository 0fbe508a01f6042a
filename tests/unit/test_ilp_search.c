/* tests/unit/test_ilp_search.c: the searches over the batch
 * (solver/ilp_search.c): rf__ilp_whole (one program for the batch) and
 * rf__ilp_lns (the neighbourhood search over regions).
 *
 * - The whole program turns an answer that admits nothing into the
 *   exhaustive optimum, proves its values, and bounds the penalty from
 *   below, on random problems with running gangs (but those whose bound
 *   pods sit on a node without every level label: the program keeps such
 *   a gang as the incumbent has it).
 * - The region search keeps an optimal incumbent as it is (nothing it
 *   finds may replace an answer that is not worse), and improves an empty
 *   one: every answer it keeps passes rf_check.
 * - A gang over two blocks, which no fine or coarse region holds whole, is
 *   gathered into one rack by a region around it (its bound pod's rack
 *   included). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../support/exhaust.h"
#include "../support/leak.h"
#include "../support/randprob.h"
#include "../support/testutil.h"
#include "clock.h"
#include "ilp_search.h"
#include "rackfit/rackfit.h"

/* An answer that rejects every gang and keeps every running gang, finished. */
static rf_answer_t *s_nothing(const rf_problem_t *pb)
{
    rf_answer_t *a = rf_answer_new(pb);
    rf_why_t why = {.level = -1, .resource = -1, .fits = -1, .needs = -1};
    for (int32_t g = 0; g < pb->n_gangs; g++)
        cr_assert_eq(rf_answer_reject(a, g, why, "not placed yet"), RF_OK);
    cr_assert_eq(rf_answer_finish(a), RF_OK);
    return a;
}

/* Does a gang have bound pods on a node without every level label? The
 * program keeps such a gang as the incumbent has it (docs/ilp.md). */
static bool s_unmodelled(const rf_problem_t *pb)
{
    for (int32_t g = 0; g < pb->n_gangs; g++)
        for (int32_t p = 0; p < pb->gangs[g].n_pod_sets; p++)
            for (int32_t b = 0; b < pb->gangs[g].pod_sets[p].n_bound; b++) {
                const rf_node_t *nd = &pb->nodes[pb->gangs[g].pod_sets[p].bound[b].node];
                for (int32_t l = 0; l < pb->n_levels; l++) {
                    bool has = false;
                    for (int32_t k = 0; k < nd->n_labels; k++)
                        has |= strcmp(nd->labels[k].key, pb->levels[l]) == 0;
                    if (!has)
                        return true;
                }
            }
    return false;
}

static void s_clock(rf__ilp_clock_t *ck, int64_t limit_ms)
{
    rf_solve_opts_t o;
    rf_solve_opts_default(&o);
    o.time_limit_ms = limit_ms;
    rf__ilp_clock_init(ck, &o);
}

Test(ilp_search, the_whole_program_reaches_the_optimum_from_nothing, .timeout = 300)
{
    rf_randprob_opts_t o;
    rf_randprob_default(&o);
    o.max_nodes = 5;
    o.max_gangs = 4;
    o.max_pods = 4;
    o.slice_bound = false;
    o.max_running = 4;
    int compared = 0, improved = 0;
    for (uint64_t seed = 1; seed <= 80; seed++) {
        char *json = rf_randprob(seed, &o);
        rf_problem_t *pb = rf_test_parse(json);
        if (!rf_exhaust_supported(pb, NULL) || s_unmodelled(pb)) {
            rf_problem_destroy(&pb);
            free(json);
            continue;
        }
        char what[64];
        snprintf(what, sizeof what, "seed %llu", (unsigned long long)seed);
        rf_answer_t *ans = s_nothing(pb);
        rf_answer_t *start = s_nothing(pb);
        rf__ilp_clock_t ck;
        s_clock(&ck, 60000);
        double bound = 0;
        bool proven = false;
        rf_error_t err;
        cr_assert_eq(rf__ilp_whole(pb, &ck, ans, NULL, 1, true, true, &bound, &proven, &err), RF_OK, "%s: %s", what,
                     err.message);
        rf_test_assert_feasible(pb, ans, what);
        cr_expect_eq(rf_exhaust_compare(pb, ans), 0, "%s: not the optimum", what);
        cr_expect(proven, "%s: values not proven", what);
        cr_expect_leq(bound, ans->summary.penalty + 1e-6, "%s: bound %g above the penalty %g", what, bound,
                      ans->summary.penalty);
        improved += rf_answer_compare(ans, start) < 0;
        compared++;
        rf_answer_destroy(&start);
        rf_answer_destroy(&ans);
        rf_problem_destroy(&pb);
        free(json);
    }
    cr_assert_geq(compared, 40);
    cr_assert_gt(improved, compared / 2, "most empty answers can be improved");
    rf_test_no_leaks();
}

Test(ilp_search, the_region_search_keeps_an_optimal_incumbent_and_improves_an_empty_one, .timeout = 300)
{
    rf_problem_t *pb = NULL;
    rf_error_t err;
    const char *file = RF_SOURCE_DIR "/tests/data/glpsol/10_two_priorities.json";
    cr_assert_eq(rf_problem_from_json_file(file, NULL, &pb, &err), RF_OK, "%s", err.message);
    /* an optimal answer (the exhaustive one) stays as it is */
    rf_exhaust_t ex;
    cr_assert_eq(rf_exhaust_solve(pb, &ex), RF_OK);
    rf_answer_t *opt = NULL;
    cr_assert_eq(rf_exhaust_to_answer(pb, &ex, &opt), RF_OK);
    cr_assert_eq(rf_answer_finish(opt), RF_OK);
    rf_answer_t *best = rf_answer_new(pb);
    cr_assert_eq(rf_answer_copy(best, opt), RF_OK);
    rf__ilp_clock_t ck;
    s_clock(&ck, 2000);
    cr_assert_eq(rf__ilp_lns(pb, &ck, best, rf_now_ms() + 1000, 2, &err), RF_OK, "%s", err.message);
    cr_expect_eq(rf_answer_compare(best, opt), 0, "an optimal incumbent is kept");
    rf_test_assert_feasible(pb, best, "kept");
    rf_answer_destroy(&best);
    /* an answer that admits nothing is improved, to a feasible answer */
    best = s_nothing(pb);
    rf_answer_t *empty = s_nothing(pb);
    s_clock(&ck, 2000);
    cr_assert_eq(rf__ilp_lns(pb, &ck, best, rf_now_ms() + 1000, 2, &err), RF_OK, "%s", err.message);
    rf_test_assert_feasible(pb, best, "improved");
    cr_expect_lt(rf_answer_compare(best, empty), 0, "the region search admits something");
    cr_expect_geq(rf_answer_compare(best, opt), 0, "never better than the optimum");
    rf_answer_destroy(&empty);
    rf_answer_destroy(&best);
    rf_answer_destroy(&opt);
    rf_problem_destroy(&pb);
    rf_test_no_leaks();
}

/* 2 blocks x 5 racks x 16 hosts of one GPU, full: gang "spread" (4 pods)
 * has two in the first rack of block 0 and two in the last of block 1 (with
 * `bound`: one of those two is a bound pod on a host of block 1's first
 * rack instead), one-pod gangs everywhere else. The fine regions (runs of
 * about 64 nodes) and the coarse ones (the blocks) each hold only part of
 * it, so only a region around it (its racks, the bound pod's included) can
 * gather it into one rack, by moving one-pod gangs out of its way. */
static void s_gather(bool bound)
{
    enum { B = 2, RK = 5, H = 16, N = B * RK * H };
    const int at[4] = {0, 1, N - 2, bound ? RK * H : N - 1}; /* the last: the bound pod's host when bound */
    size_t cap = 256 * (size_t)N + 64 * (size_t)N + 1024, len = 0;
    char *json = malloc(cap);
    cr_assert_not_null(json);
    len += (size_t)snprintf(json + len, cap - len,
                            "{\"cluster\": {\"levels\": [\"b\", \"r\", \"kubernetes.io/hostname\"], "
                            "\"level_costs\": [100, 10, 1], \"nodes\": [");
    for (int n = 0; n < N; n++)
        len += (size_t)snprintf(json + len, cap - len,
                                "%s{\"name\": \"h%d\", \"labels\": {\"b\": \"b%d\", \"r\": \"r%d\", "
                                "\"kubernetes.io/hostname\": \"h%d\"}, \"allocatable\": {\"nvidia.com/gpu\": 1}}",
                                n ? ", " : "", n, n / (RK * H), n / H, n);
    len += (size_t)snprintf(json + len, cap - len,
                            "]}, \"gangs\": [{\"name\": \"spread\", \"pod_sets\": [{\"name\": \"w\", \"count\": 4, "
                            "\"requests\": {\"nvidia.com/gpu\": 1}");
    if (bound)
        len += (size_t)snprintf(json + len, cap - len, ", \"bound\": [{\"node\": \"h%d\", \"count\": 1}]", at[3]);
    len += (size_t)snprintf(json + len, cap - len, "}]}");
    for (int s = 0; s < N - 4; s++)
        len += (size_t)snprintf(json + len, cap - len,
                                ", {\"name\": \"one-%d\", \"pod_sets\": [{\"name\": \"w\", \"count\": 1, "
                                "\"requests\": {\"nvidia.com/gpu\": 1}}]}",
                                s);
    len += (size_t)snprintf(json + len, cap - len, "]}");
    cr_assert_lt(len, cap);
    rf_problem_t *pb = rf_test_parse(json);
    free(json);
    /* the incumbent: the spread gang's new pods on its hosts, a one-pod gang
     * on every other host */
    rf_answer_t *best = rf_answer_new(pb);
    for (int i = 0; i < (bound ? 3 : 4); i++)
        cr_assert_eq(rf_answer_add(best, 0, 0, at[i], 1), RF_OK);
    best->gangs[0].admitted = true;
    for (int n = 0, g = 1; n < N; n++) {
        if (n == at[0] || n == at[1] || n == at[2] || n == at[3])
            continue;
        cr_assert_eq(rf_answer_add(best, g, 0, n, 1), RF_OK);
        best->gangs[g++].admitted = true;
    }
    cr_assert_eq(rf_answer_finish(best), RF_OK);
    rf_test_assert_feasible(pb, best, "the incumbent");
    cr_assert_eq(best->gangs[0].domains[0], 2, "the incumbent spans both blocks");
    double before = best->summary.penalty;
    rf__ilp_clock_t ck;
    rf_error_t err;
    s_clock(&ck, 10000);
    cr_assert_eq(rf__ilp_lns(pb, &ck, best, rf_now_ms() + 5000, 2, &err), RF_OK, "%s", err.message);
    rf_test_assert_feasible(pb, best, "after the search");
    cr_expect_eq(best->summary.admitted, pb->n_gangs, "every gang still admitted");
    cr_expect_eq(best->gangs[0].domains[0], 1, "one block");
    cr_expect_eq(best->gangs[0].domains[1], 1, "one rack");
    cr_expect_lt(best->summary.penalty, before, "a lower penalty");
    rf_answer_destroy(&best);
    rf_problem_destroy(&pb);
    rf_test_no_leaks();
}

Test(ilp_search, a_region_around_a_gang_over_two_blocks_gathers_it, .timeout = 300)
{
    s_gather(false);
}

/* Its bound pod's rack is in the region too: without it the gang would not
 * lie wholly inside, and stay where it is. */
Test(ilp_search, a_region_around_a_gang_with_a_bound_pod_gathers_it_around_that_pod, .timeout = 300)
{
    s_gather(true);
}
