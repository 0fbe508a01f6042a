/* tests/unit/test_greedy.c: the greedy strategy (solver/greedy.c).
 *
 * Every answer is checked by rf_check, which shares no code with the search.
 * - Kueue's own TestFindTopologyAssignments table (tests/data/kueue): rackfit
 *   admits exactly what Kueue admits (Kueue's rejections are infeasible under
 *   the contract too, see PORTING.md) at a contract penalty no higher than
 *   Kueue's placement;
 * - scenarios for the choices that go beyond Kueue (levels weighed, the batch
 *   as one problem), the admission policies, elastic gangs, slices, bound pods
 *   and rejection reasons;
 * - properties on random problems: feasible, deterministic;
 * - the fill that ilp runs after its search (rf__greedy_fill): a rejected
 *   gang that fits, an elastic gang grown, never fewer pods, never worse. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../support/leak.h"
#include "../support/randprob.h"
#include "../support/testutil.h"
#include "arena.h"
#include "clock.h"
#include "context.h"
#include "file.h"
#include "greedy.h"
#include "json.h"
#include "rackfit/rackfit.h"

static int32_t s_gang(const rf_problem_t *pb, const char *name)
{
    for (int32_t g = 0; g < pb->n_gangs; g++)
        if (strcmp(pb->gangs[g].name, name) == 0)
            return g;
    cr_assert_fail("no gang %s", name);
    return -1;
}

/* ------------------------------------------------------------------ Kueue's table */

Test(greedy, kueue_topology_assignment_cases)
{
    char *text = NULL;
    size_t len = 0;
    rf_error_t err;
    cr_assert_eq(rf__read_file(RF_SOURCE_DIR "/tests/data/kueue/cases.json", 64u << 20, &text, &len, &err), RF_OK, "%s",
                 err.message);
    rf__arena_t *arena = rf__arena_new(0);
    rf_doc_t *doc = NULL;
    rf_limits_t lim;
    rf_limits_default(&lim);
    cr_assert_eq(rf__json_parse(text, len, &lim, arena, &doc, &err), RF_OK, "%s", err.message);
    cr_assert_eq(doc->type, RF_DOC_ARRAY);
    int better = 0;
    for (uint32_t i = 0; i < doc->len; i++) {
        const rf_doc_t *c = &doc->u.items[i];
        const char *name = rf__doc_get(c, "name")->u.s;
        const rf_doc_t *kq = rf__doc_get(c, "kueue");
        bool k_admitted = rf__doc_get(kq, "admitted")->u.b;
        rf_problem_t *pb = NULL;
        cr_assert_eq(rf_problem_from_doc(rf__doc_get(c, "problem"), NULL, &lim, &pb, &err), RF_OK, "%s: %s: %s", name,
                     err.path, err.message);
        rf_answer_t *ans = rf_test_solve(pb, RF_MODE_GREEDY, 1, 1000);
        rf_test_assert_feasible(pb, ans, name);
        cr_expect_eq(ans->gangs[0].admitted, k_admitted, "case %u (%s): admitted %d, Kueue %d (%s)", i, name,
                     ans->gangs[0].admitted, k_admitted, ans->gangs[0].reason ? ans->gangs[0].reason : "");
        if (k_admitted && ans->gangs[0].admitted) {
            const rf_doc_t *kp = rf__doc_get(kq, "kueue_penalty");
            double kpen = kp->type == RF_DOC_FLOAT ? kp->u.f : (double)kp->u.i;
            cr_expect_leq(ans->gangs[0].penalty, kpen + 1e-9, "case %u (%s): penalty %g above Kueue's %g", i, name,
                          ans->gangs[0].penalty, kpen);
            better += ans->gangs[0].penalty < kpen - 1e-9;
        }
        if (!ans->gangs[0].admitted)
            cr_expect(ans->gangs[0].reason && ans->gangs[0].reason[0], "case %u: rejected without a reason", i);
        rf_answer_destroy(&ans);
        rf_problem_destroy(&pb);
    }
    cr_log_info("Kueue cases: %u, rackfit strictly better on %d", doc->len, better);
    rf__arena_destroy(&arena);
    free(text);
    rf_test_no_leaks();
}

/* ------------------------------------------------------------------ scenarios */

#define LEVELS "\"levels\":[\"example.com/block\",\"example.com/rack\",\"kubernetes.io/hostname\"]"
#define NODE(name, block, rack, gpus, used)                                                                            \
    "{\"name\":\"" name "\",\"labels\":{\"example.com/block\":\"" block "\",\"example.com/rack\":\"" rack              \
    "\",\"kubernetes.io/hostname\":\"" name "\"},\"allocatable\":{\"nvidia.com/gpu\":" #gpus                           \
    "},\"used\":{\"nvidia.com/gpu\":" #used "}}"

/* Kueue would take the one rack that holds all 16 pods on 16 hosts (penalty
 * 15); two whole hosts in two racks cost 10 + 1 = 11 under the contract. */
Test(greedy, weighs_levels_two_hosts_beat_sixteen)
{
    char json[8192];
    int n = snprintf(json, sizeof json, "{\"cluster\":{" LEVELS ",\"nodes\":[");
    for (int i = 0; i < 16; i++)
        n += snprintf(json + n, sizeof json - (size_t)n,
                      "{\"name\":\"a%d\",\"labels\":{\"example.com/block\":\"b\",\"example.com/rack\":\"r1\","
                      "\"kubernetes.io/hostname\":\"a%d\"},\"allocatable\":{\"nvidia.com/gpu\":8},"
                      "\"used\":{\"nvidia.com/gpu\":7}},",
                      i, i);
    snprintf(json + n, sizeof json - (size_t)n,
             NODE("x", "b", "r2", 8, 0) "," NODE("y", "b", "r3", 8, 0) "]},"
                                                                       "\"gangs\":[{\"name\":\"job\",\"pod_sets\":[{"
                                                                       "\"name\":\"w\",\"count\":16,\"requests\":{"
                                                                       "\"nvidia.com/gpu\":1}}]}]}");
    rf_problem_t *pb = rf_test_parse(json);
    rf_answer_t *ans = rf_test_solve(pb, RF_MODE_GREEDY, 1, 1000);
    rf_test_assert_feasible(pb, ans, "two hosts");
    cr_assert(ans->gangs[0].admitted);
    cr_assert_float_eq(ans->gangs[0].penalty, 11.0, 1e-9);
    cr_assert_eq(ans->gangs[0].domains[1], 2);
    cr_assert_eq(ans->gangs[0].domains[2], 2);
    rf_answer_destroy(&ans);
    rf_problem_destroy(&pb);
    rf_test_no_leaks();
}

/* The batch is one problem: the small gang comes first in the input, but
 * taking rack r1 (the only one that holds the large required-rack gang)
 * would reject the large one; r2 does for the small one. */
Test(greedy, small_gang_leaves_the_only_rack_to_the_large_one)
{
    const char *json =
        "{\"cluster\":{" LEVELS ",\"nodes\":[" NODE("a1", "b", "r1", 8, 0) "," NODE("a2", "b", "r1", 8, 0) "," NODE(
            "c1", "b", "r2", 8,
            4) "]},"
               "\"gangs\":["
               "{\"name\":\"small\",\"pod_sets\":[{\"name\":\"w\",\"count\":1,\"requests\":{\"nvidia."
               "com/gpu\":4}}]},"
               "{\"name\":\"large\",\"topology\":{\"required\":\"example.com/rack\"},\"pod_sets\":[{"
               "\"name\":\"w\",\"count\":2,\"requests\":{\"nvidia.com/gpu\":8}}]}]}";
    rf_problem_t *pb = rf_test_parse(json);
    rf_answer_t *ans = rf_test_solve(pb, RF_MODE_GREEDY, 1, 1000);
    rf_test_assert_feasible(pb, ans, "small and large");
    cr_assert(ans->gangs[0].admitted && ans->gangs[1].admitted);
    cr_assert_eq(ans->gangs[0].pod_sets[0].placements[0].node, 2, "the small gang goes to c1");
    rf_answer_destroy(&ans);
    rf_problem_destroy(&pb);
    rf_test_no_leaks();
}

/* Leader and workers placed jointly: the leader (CPU only) fits on either
 * node of the required rack, the workers need the GPUs of `gpu`. Placing the
 * leader first on its own best fit takes a CPU of `gpu` and leaves the
 * workers one slot short; placed together, the leader goes to `cpu`, where it
 * costs no worker a slot. */
Test(greedy, leader_goes_where_it_costs_no_worker_a_slot)
{
    const char *json = "{\"cluster\":{" LEVELS ",\"nodes\":["
                       "{\"name\":\"gpu\",\"labels\":{\"example.com/block\":\"b\",\"example.com/rack\":\"r1\","
                       "\"kubernetes.io/hostname\":\"gpu\"},\"allocatable\":{\"cpu\":\"2\",\"nvidia.com/gpu\":2}},"
                       "{\"name\":\"cpu\",\"labels\":{\"example.com/block\":\"b\",\"example.com/rack\":\"r1\","
                       "\"kubernetes.io/hostname\":\"cpu\"},\"allocatable\":{\"cpu\":\"2\"}}]},"
                       "\"gangs\":[{\"name\":\"lws\",\"topology\":{\"required\":\"example.com/rack\"},\"pod_sets\":["
                       "{\"name\":\"leader\",\"count\":1,\"requests\":{\"cpu\":\"1\"}},"
                       "{\"name\":\"workers\",\"count\":2,\"requests\":{\"cpu\":\"1\",\"nvidia.com/gpu\":1}}]}]}";
    rf_problem_t *pb = rf_test_parse(json);
    rf_answer_t *ans = rf_test_solve(pb, RF_MODE_GREEDY, 1, 1000);
    rf_test_assert_feasible(pb, ans, "leader and workers");
    cr_assert(ans->gangs[0].admitted, "rejected: %s", ans->gangs[0].reason ? ans->gangs[0].reason : "");
    cr_assert_eq(ans->gangs[0].pod_sets[0].placements[0].node, 1, "the leader goes to the CPU-only node");
    cr_assert_eq(ans->gangs[0].pod_sets[1].n_placements, 1);
    cr_assert_eq(ans->gangs[0].pod_sets[1].placements[0].node, 0);
    cr_assert_float_eq(ans->gangs[0].penalty, 1.0, 1e-9);
    rf_answer_destroy(&ans);
    rf_problem_destroy(&pb);
    rf_test_no_leaks();
}

/* `ordered`: within a priority, the admitted gangs are a prefix of the
 * input order; a lower priority is still tried. */
Test(greedy, ordered_admission_stops_at_the_first_rejection)
{
    const char *json = "{\"cluster\":{" LEVELS ",\"nodes\":[" NODE("a1", "b", "r1", 8, 0) "," NODE(
        "a2", "b", "r1", 8,
        0) "]},"
           "\"gangs\":["
           "{\"name\":\"first\",\"pod_sets\":[{\"name\":\"w\",\"count\":1,\"requests\":{\"nvidia.com/gpu\":8}}]},"
           "{\"name\":\"too-big\",\"pod_sets\":[{\"name\":\"w\",\"count\":3,\"requests\":{\"nvidia.com/gpu\":8}}]},"
           "{\"name\":\"would-fit\",\"pod_sets\":[{\"name\":\"w\",\"count\":1,\"requests\":{\"nvidia.com/gpu\":1}}]},"
           "{\"name\":\"low\",\"priority\":-1,\"pod_sets\":[{\"name\":\"w\",\"count\":1,\"requests\":{\"nvidia.com/"
           "gpu\":1}}]}],"
           "\"options\":{\"admission\":\"ordered\"}}";
    rf_problem_t *pb = rf_test_parse(json);
    rf_answer_t *ans = rf_test_solve(pb, RF_MODE_GREEDY, 1, 1000);
    rf_test_assert_feasible(pb, ans, "ordered");
    cr_assert(ans->gangs[s_gang(pb, "first")].admitted);
    cr_assert(!ans->gangs[s_gang(pb, "too-big")].admitted);
    cr_assert(!ans->gangs[s_gang(pb, "would-fit")].admitted);
    cr_assert(strstr(ans->gangs[s_gang(pb, "would-fit")].reason, "too-big") != NULL);
    cr_assert(ans->gangs[s_gang(pb, "low")].admitted);
    rf_answer_destroy(&ans);
    rf_problem_destroy(&pb);
    rf_test_no_leaks();
}

/* `value` (the default) admits around a gang that does not fit. */
Test(greedy, value_admission_fills_around_a_rejection)
{
    const char *json = "{\"cluster\":{" LEVELS ",\"nodes\":[" NODE(
        "a1", "b", "r1", 8,
        0) "]},"
           "\"gangs\":["
           "{\"name\":\"too-big\",\"pod_sets\":[{\"name\":\"w\",\"count\":3,\"requests\":{\"nvidia.com/gpu\":8}}]},"
           "{\"name\":\"fits\",\"pod_sets\":[{\"name\":\"w\",\"count\":1,\"requests\":{\"nvidia.com/gpu\":1}}]}]}";
    rf_problem_t *pb = rf_test_parse(json);
    rf_answer_t *ans = rf_test_solve(pb, RF_MODE_GREEDY, 1, 1000);
    rf_test_assert_feasible(pb, ans, "value");
    cr_assert(!ans->gangs[0].admitted);
    cr_assert(ans->gangs[1].admitted);
    rf_answer_destroy(&ans);
    rf_problem_destroy(&pb);
    rf_test_no_leaks();
}

/* Elastic: as many pods as fit between min_count and count. */
Test(greedy, elastic_gang_takes_what_fits)
{
    const char *json = "{\"cluster\":{" LEVELS ",\"nodes\":[" NODE(
        "a1", "b", "r1", 8, 3) "]},"
                               "\"gangs\":[{\"name\":\"e\",\"pod_sets\":[{\"name\":\"w\",\"count\":8,\"min_count\":2,"
                               "\"requests\":{\"nvidia.com/gpu\":1}}]}]}";
    rf_problem_t *pb = rf_test_parse(json);
    rf_answer_t *ans = rf_test_solve(pb, RF_MODE_GREEDY, 1, 1000);
    rf_test_assert_feasible(pb, ans, "elastic");
    cr_assert(ans->gangs[0].admitted);
    cr_assert_eq(ans->gangs[0].pod_sets[0].placements[0].count, 5);
    rf_answer_destroy(&ans);
    rf_problem_destroy(&pb);
    rf_test_no_leaks();
}

/* Slices of 4 inside a rack: two racks with 5 free GPUs each hold two
 * slices, one per rack, though 8 pods fit in neither alone. */
Test(greedy, slices_stay_inside_their_domain)
{
    const char *json =
        "{\"cluster\":{" LEVELS ",\"nodes\":[" NODE("a1", "b", "r1", 8, 3) "," NODE("c1", "b", "r2", 8, 3) "," NODE(
            "c2", "b", "r2", 8, 8) "]},"
                                   "\"gangs\":[{\"name\":\"s\",\"pod_sets\":[{\"name\":\"w\",\"count\":8,"
                                   "\"slice\":{\"size\":4,\"required\":\"example.com/rack\"},"
                                   "\"requests\":{\"nvidia.com/gpu\":1}}]}]}";
    rf_problem_t *pb = rf_test_parse(json);
    rf_answer_t *ans = rf_test_solve(pb, RF_MODE_GREEDY, 1, 1000);
    rf_test_assert_feasible(pb, ans, "slices");
    cr_assert(ans->gangs[0].admitted);
    cr_assert_eq(ans->gangs[0].domains[1], 2);
    rf_answer_destroy(&ans);
    rf_problem_destroy(&pb);
    rf_test_no_leaks();
}

/* Bound pods pin the gang's required domain: the replacement pod goes to the
 * rack the running ones are in (a1 is full), though the other rack is emptier. */
Test(greedy, bound_pods_pin_the_required_domain)
{
    const char *json =
        "{\"cluster\":{" LEVELS ",\"nodes\":[" NODE("a1", "b", "r1", 8, 8) "," NODE("a2", "b", "r1", 8, 4) "," NODE(
            "c1", "b", "r2", 8,
            0) "," NODE("c2", "b", "r2", 8,
                        0) "]},"
                           "\"gangs\":[{\"name\":\"g\",\"topology\":{\"required\":\"example.com/rack\"},"
                           "\"pod_sets\":[{\"name\":\"w\",\"count\":4,\"requests\":{\"nvidia.com/gpu\":2},"
                           "\"bound\":[{\"node\":\"a1\",\"ranks\":[0,1,2]}]}]}]}";
    rf_problem_t *pb = rf_test_parse(json);
    rf_answer_t *ans = rf_test_solve(pb, RF_MODE_GREEDY, 1, 1000);
    rf_test_assert_feasible(pb, ans, "bound");
    cr_assert(ans->gangs[0].admitted);
    cr_assert_eq(ans->gangs[0].pod_sets[0].n_placements, 1);
    cr_assert_eq(ans->gangs[0].pod_sets[0].placements[0].node, 1, "new pod on a2, inside r1");
    rf_answer_destroy(&ans);
    rf_problem_destroy(&pb);
    rf_test_no_leaks();
}

/* A rejection names the level, the resource and by how much. */
Test(greedy, rejection_names_level_resource_and_amounts)
{
    const char *json =
        "{\"cluster\":{" LEVELS ",\"nodes\":[" NODE("a1", "b", "r1", 8, 0) "," NODE("a2", "b", "r1", 8, 4) "," NODE(
            "c1", "b", "r2", 8,
            0) "]},"
               "\"gangs\":[{\"name\":\"g\",\"topology\":{\"required\":\"example.com/rack\"},"
               "\"pod_sets\":[{\"name\":\"w\",\"count\":16,\"requests\":{\"nvidia.com/gpu\":1}}]}]}";
    rf_problem_t *pb = rf_test_parse(json);
    rf_answer_t *ans = rf_test_solve(pb, RF_MODE_GREEDY, 1, 1000);
    rf_test_assert_feasible(pb, ans, "reject");
    const rf_gang_answer_t *g = &ans->gangs[0];
    cr_assert(!g->admitted);
    cr_assert_eq(g->why.level, 1);
    cr_assert_eq(g->why.fits, 12);
    cr_assert_eq(g->why.needs, 16);
    cr_assert_eq(g->why.resource, rf_problem_resource(pb, "nvidia.com/gpu"));
    cr_assert(strstr(g->reason, "example.com/rack") && strstr(g->reason, "12 of 16"), "reason: %s", g->reason);
    rf_answer_destroy(&ans);
    rf_problem_destroy(&pb);
    rf_test_no_leaks();
}

/* Higher priority first even when a lower one is larger. */
Test(greedy, priority_before_size)
{
    const char *json = "{\"cluster\":{" LEVELS ",\"nodes\":[" NODE(
        "a1", "b", "r1", 8,
        0) "]},"
           "\"gangs\":["
           "{\"name\":\"big-low\",\"pod_sets\":[{\"name\":\"w\",\"count\":1,\"requests\":{\"nvidia.com/gpu\":8}}]},"
           "{\"name\":\"small-high\",\"priority\":10,\"pod_sets\":[{\"name\":\"w\",\"count\":1,\"requests\":{"
           "\"nvidia.com/gpu\":1}}]}]}";
    rf_problem_t *pb = rf_test_parse(json);
    rf_answer_t *ans = rf_test_solve(pb, RF_MODE_GREEDY, 1, 1000);
    rf_test_assert_feasible(pb, ans, "priority");
    cr_assert(ans->gangs[1].admitted);
    cr_assert(!ans->gangs[0].admitted);
    rf_answer_destroy(&ans);
    rf_problem_destroy(&pb);
    rf_test_no_leaks();
}

/* ------------------------------------------------------------------ properties */

static void s_random_runs(uint64_t first, uint64_t n, const rf_randprob_opts_t *po)
{
    rf_randprob_opts_t o = *po;
    int admitted = 0, rejected = 0;
    for (uint64_t seed = first; seed < first + n; seed++) {
        char *json = rf_randprob(seed, &o);
        rf_problem_t *pb = NULL;
        rf_error_t err;
        rf_status rc = rf_problem_from_json(json, strlen(json), NULL, &pb, &err);
        cr_assert_eq(rc, RF_OK, "seed %llu: %s: %s\n%s", (unsigned long long)seed, err.path, err.message, json);
        rf_answer_t *a = rf_test_solve(pb, RF_MODE_GREEDY, 1, 1000);
        rf_answer_t *b = rf_test_solve(pb, RF_MODE_GREEDY, 1, 1000);
        char what[64];
        snprintf(what, sizeof what, "seed %llu", (unsigned long long)seed);
        rf_test_assert_feasible(pb, a, what);
        char *ja = NULL, *jb = NULL;
        size_t la = 0, lb = 0;
        a->summary.solve_ms = b->summary.solve_ms = 0;
        cr_assert_eq(rf_answer_to_json(a, &ja, &la, NULL), RF_OK);
        cr_assert_eq(rf_answer_to_json(b, &jb, &lb, NULL), RF_OK);
        cr_assert(la == lb && memcmp(ja, jb, la) == 0, "%s: two solves differ", what);
        for (int32_t g = 0; g < pb->n_gangs; g++) {
            admitted += a->gangs[g].admitted;
            rejected += !a->gangs[g].admitted;
            if (!a->gangs[g].admitted)
                cr_assert(a->gangs[g].reason && a->gangs[g].reason[0], "%s: gang %d rejected without reason", what, g);
        }
        free(ja);
        free(jb);
        rf_answer_destroy(&a);
        rf_answer_destroy(&b);
        rf_problem_destroy(&pb);
        free(json);
    }
    cr_log_info("random problems: %d gangs admitted, %d rejected", admitted, rejected);
    cr_assert(admitted > 0 && rejected > 0, "the generator should produce both outcomes");
}

Test(greedy, random_small_problems_feasible_and_deterministic)
{
    rf_randprob_opts_t o;
    rf_randprob_default(&o);
    s_random_runs(1, 2000, &o);
    rf_test_no_leaks();
}

Test(greedy, random_larger_problems_feasible_and_deterministic)
{
    rf_randprob_opts_t o;
    rf_randprob_default(&o);
    o.max_nodes = 40;
    o.max_gangs = 16;
    o.max_pods = 12;
    o.max_pod_sets = 3;
    s_random_runs(100000, 400, &o);
    rf_test_no_leaks();
}

/* ------------------------------------------------------------------ fill (rf__greedy_fill) */

/* Pods of gang g's pod set p that `a` places (bound pods aside). */
static int64_t s_placed(const rf_answer_t *a, int32_t g, int32_t p)
{
    int64_t n = 0;
    for (int32_t k = 0; k < a->gangs[g].pod_sets[p].n_placements; k++)
        n += a->gangs[g].pod_sets[p].placements[k].count;
    return n;
}

/* rf__greedy_fill on a copy of `a`; the copy (finished) is returned. */
static rf_answer_t *s_filled(const rf_problem_t *pb, const rf_answer_t *a, bool *added)
{
    rf_solve_ctx_t ctx;
    rf_error_t err;
    cr_assert_eq(rf__ctx_init(&ctx, pb, NULL, &err), RF_OK, "%s", err.message);
    rf_answer_t *f = rf_answer_new(pb);
    cr_assert_eq(rf_answer_copy(f, a), RF_OK);
    cr_assert_eq(rf__greedy_fill(&ctx, f, rf_now_ms() + 60000, added, &err), RF_OK, "%s", err.message);
    rf__ctx_fini(&ctx);
    return f;
}

/* A rejected gang that fits is admitted first (value order), then an
 * admitted elastic gang short of its count grows into the room left; the
 * pods already placed are never fewer. */
Test(greedy, fill_admits_a_gang_that_fits_and_grows_an_elastic_one)
{
    const char *json = "{\"cluster\":{" LEVELS ",\"nodes\":[" NODE("a1", "b", "r1", 4, 0) "," NODE(
        "a2", "b", "r1", 4, 0) "]},\"gangs\":["
                               "{\"name\":\"e\",\"pod_sets\":[{\"name\":\"w\",\"count\":8,\"min_count\":2,"
                               "\"requests\":{\"nvidia.com/gpu\":1}}]},"
                               "{\"name\":\"f\",\"pod_sets\":[{\"name\":\"w\",\"count\":2,"
                               "\"requests\":{\"nvidia.com/gpu\":1}}]}]}";
    rf_problem_t *pb = rf_test_parse(json);
    rf_answer_t *a = rf_answer_new(pb);
    cr_assert_eq(rf_answer_add(a, 0, 0, 0, 2), RF_OK); /* e: 2 pods on a1 */
    a->gangs[0].admitted = true;
    rf_why_t why = {.level = -1, .resource = -1, .fits = -1, .needs = -1};
    cr_assert_eq(rf_answer_reject(a, 1, why, "%s", "left out by the test"), RF_OK);
    cr_assert_eq(rf_answer_finish(a), RF_OK);
    rf_test_assert_feasible(pb, a, "the start");
    bool added = false;
    rf_answer_t *f = s_filled(pb, a, &added);
    rf_test_assert_feasible(pb, f, "filled");
    cr_assert(added);
    cr_assert(f->gangs[1].admitted, "f fits on the 6 free GPUs");
    cr_assert_eq(s_placed(f, 1, 0), 2);
    cr_assert_eq(s_placed(f, 0, 0), 6, "e grows into the 6 - 2 + 2 GPUs left: %lld", (long long)s_placed(f, 0, 0));
    cr_assert_lt(rf_answer_compare(f, a), 0, "the fill ranks above its start");
    rf_answer_destroy(&f);
    rf_answer_destroy(&a);
    rf_problem_destroy(&pb);
    rf_test_no_leaks();
}

/* Ordered admission: the fill leaves the answer as it is (admitting a later
 * gang of a priority whose earlier one was rejected would break the prefix). */
Test(greedy, fill_leaves_ordered_admission_alone)
{
    const char *json =
        "{\"cluster\":{" LEVELS
        ",\"nodes\":[" NODE("a1", "b", "r1", 4, 0) "]},\"options\":{\"admission\":\"ordered\"},\"gangs\":["
                                                   "{\"name\":\"f\",\"pod_sets\":[{\"name\":\"w\",\"count\":2,"
                                                   "\"requests\":{\"nvidia.com/gpu\":1}}]}]}";
    rf_problem_t *pb = rf_test_parse(json);
    rf_answer_t *a = rf_answer_new(pb);
    rf_why_t why = {.level = -1, .resource = -1, .fits = -1, .needs = -1};
    cr_assert_eq(rf_answer_reject(a, 0, why, "%s", "left out by the test"), RF_OK);
    cr_assert_eq(rf_answer_finish(a), RF_OK);
    bool added = true;
    rf_answer_t *f = s_filled(pb, a, &added);
    cr_assert(!added);
    cr_assert(!f->gangs[0].admitted);
    rf_answer_destroy(&f);
    rf_answer_destroy(&a);
    rf_problem_destroy(&pb);
    rf_test_no_leaks();
}

/* Random problems: the greedy's answer with every third admitted gang
 * rejected again, then filled. The result is feasible (rf_check), ranks at
 * least as high, keeps every gang that was admitted with at least its pods
 * in every pod set, and with preemption or ordered admission is unchanged. */
Test(greedy, fill_on_random_problems_feasible_and_never_worse)
{
    rf_randprob_opts_t o;
    rf_randprob_default(&o);
    o.max_nodes = 40;
    o.max_gangs = 16;
    o.max_pods = 12;
    o.max_pod_sets = 3;
    o.max_running = 4;
    int helped = 0, runs = 0;
    for (uint64_t seed = 1; seed <= 400; seed++) {
        char *json = rf_randprob(seed, &o);
        rf_problem_t *pb = rf_test_parse(json);
        free(json);
        char what[64];
        snprintf(what, sizeof what, "seed %llu", (unsigned long long)seed);
        rf_answer_t *a = rf_test_solve(pb, RF_MODE_GREEDY, 1, 1000);
        int32_t k = 0;
        for (int32_t g = 0; g < pb->n_gangs; g++)
            if (a->gangs[g].admitted && k++ % 3 == 0 && a->summary.preempted == 0 &&
                pb->options.admission != RF_ADMIT_ORDERED) { /* (a gap in an ordered prefix is infeasible) */
                rf_answer_gang_reset(a, g);
                rf_why_t why = {.level = -1, .resource = -1, .fits = -1, .needs = -1};
                cr_assert_eq(rf_answer_reject(a, g, why, "%s", "left out by the test"), RF_OK);
            }
        cr_assert_eq(rf_answer_finish(a), RF_OK);
        a->summary.penalty_bound = 0; /* the greedy's bound spoke of the gangs it admitted */
        a->summary.optimal = false;
        rf_test_assert_feasible(pb, a, what);
        bool added = false;
        rf_answer_t *f = s_filled(pb, a, &added);
        rf_test_assert_feasible(pb, f, what);
        cr_assert_leq(rf_answer_compare(f, a), 0, "%s: the fill ranks below its start", what);
        for (int32_t g = 0; g < pb->n_gangs; g++) {
            if (!a->gangs[g].admitted)
                continue;
            cr_assert(f->gangs[g].admitted, "%s: gang %d lost", what, g);
            for (int32_t p = 0; p < pb->gangs[g].n_pod_sets; p++)
                cr_assert_geq(s_placed(f, g, p), s_placed(a, g, p), "%s: gang %d pod set %d lost pods", what, g, p);
        }
        if (pb->options.admission == RF_ADMIT_ORDERED || a->summary.preempted > 0)
            cr_assert(!added && rf_answer_compare(f, a) == 0, "%s: the fill acted where it should not", what);
        helped += added && rf_answer_compare(f, a) < 0;
        runs++;
        rf_answer_destroy(&f);
        rf_answer_destroy(&a);
        rf_problem_destroy(&pb);
    }
    cr_log_info("fill: %d of %d answers ranked higher after it", helped, runs);
    cr_assert_gt(helped, runs / 4, "the fill should help where a third of the admitted gangs were left out");
    rf_test_no_leaks();
}
