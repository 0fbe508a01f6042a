/* tests/unit/test_preempt.c: the greedy's preemption (solver/preempt.c).
 *
 * On the 8-node, 2-rack fixture of tests/support/testutil.h (8 GPUs a node):
 * the gang that needs a whole rack frees exactly one, whole victims only,
 * protected ones never; the least value goes first, then the most compact
 * result; freed room serves only priorities above the victim's; `never`
 * evicts nothing; elastic gangs fall back to min_count; bound pods fix the
 * domain; settle keeps victims without a preemptor; the keep-back step undoes a
 * needless victim and a move that fails; the pass with Kueue's victim rule is
 * kept when better (on a random problem). Every answer is checked by rf_check (independent of
 * the search). The random comparison against the exhaustive optimum is in
 * test_exhaust.c. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../support/leak.h"
#include "../support/randprob.h"
#include "../support/testutil.h"
#include "preempt.h"
#include "rackfit/rackfit.h"

#define RUN(name, prio, extra, pl)                                                                                     \
    "{\"name\":\"" name "\",\"priority\":" #prio extra ",\"pod_sets\":[{\"name\":\"w\","                               \
    "\"requests\":{\"nvidia.com/gpu\":8},\"placements\":[" pl "]}]}"
#define AT(n)     "{\"node\":\"h-" #n "\",\"count\":1}"
#define RACK_GANG "{\"name\":\"train\",\"priority\":100,\"topology\":{\"required\":\"example.com/rack\"},"
#define GANG(name, prio, count, extra)                                                                                 \
    "{\"name\":\"" name "\",\"priority\":" #prio extra ",\"pod_sets\":[{\"name\":\"w\",\"count\":" #count              \
    ",\"requests\":{\"nvidia.com/gpu\":8}}]}"

static const int s_full[8] = {8, 8, 8, 8, 8, 8, 8, 8};

/* Solve with the greedy; check it; return it with its problem. */
static rf_answer_t *s_solve(const char *running, const char *gangs, const char *options, rf_problem_t **pb)
{
    char *json = rf_test_preempt_json(s_full, running, gangs, options);
    *pb = rf_test_parse(json);
    free(json);
    rf_answer_t *a = rf_test_solve(*pb, RF_MODE_GREEDY, 1, 1000);
    rf_test_assert_feasible(*pb, a, "greedy");
    return a;
}

/* "1" for each preempted running gang, "0" for each kept, in order. */
static void s_pattern(const rf_answer_t *a, char *out)
{
    for (int32_t i = 0; i < a->n_running; i++)
        out[i] = a->running[i].preempted ? '1' : '0';
    out[a->n_running] = '\0';
}

static void s_expect(const rf_answer_t *a, const char *pattern)
{
    char got[64];
    s_pattern(a, got);
    cr_assert_str_eq(got, pattern, "preempted %s, expected %s", got, pattern);
}

/* Rack r1: four 1-pod gangs of priority 0. Rack r2: one protected 4-pod gang. */
#define R1_SMALL RUN("a", 0, "", AT(0)) "," RUN("b", 0, "", AT(1)) "," RUN("c", 0, "", AT(2)) "," RUN("d", 0, "", AT(3))
#define R2_PROT  RUN("prot", 0, ",\"preemptible\":false", AT(4) "," AT(5) "," AT(6) "," AT(7))

Test(preempt, frees_exactly_one_rack_whole_victims_protected_never)
{
    rf_problem_t *pb;
    rf_answer_t *a = s_solve(
        "[" R1_SMALL "," R2_PROT "]",
        "[" RACK_GANG "\"pod_sets\":[{\"name\":\"w\",\"count\":4,\"requests\":{\"nvidia.com/gpu\":8}}]}]", NULL, &pb);
    cr_assert(a->gangs[0].admitted);
    s_expect(a, "11110");
    cr_assert_eq(a->summary.preempted, 4);
    for (int32_t i = 0; i < 4; i++) {
        cr_assert_eq(a->running[i].n_by, 1);
        cr_assert_eq(a->running[i].by[0], 0);
    }
    for (int32_t k = 0; k < a->gangs[0].pod_sets[0].n_placements; k++)
        cr_assert_lt(a->gangs[0].pod_sets[0].placements[k].node, 4, "placed outside rack r1");
    cr_assert(!a->summary.optimal, "an answer with preemptions is not proven optimal");
    rf_answer_destroy(&a);
    rf_problem_destroy(&pb);
    rf_test_no_leaks();
}

Test(preempt, least_value_first_then_lowest_priority)
{
    rf_problem_t *pb;
    /* r1: one 4-pod gang (32 GPUs); r2: two 2-pod gangs of 16, one of them
     * priority 1: r1 costs 32 at priority 0, r2 costs 16 at 1 and 16 at 0:
     * losing at priority 1 is worse, so r1 goes */
    rf_answer_t *a = s_solve(
        "[" RUN("big", 0, "", AT(0) "," AT(1) "," AT(2) "," AT(3)) "," RUN("x", 1, "", AT(4) "," AT(5)) "," RUN(
            "y", 0, "", AT(6) "," AT(7)) "]",
        "[" RACK_GANG "\"pod_sets\":[{\"name\":\"w\",\"count\":4,\"requests\":{\"nvidia.com/gpu\":8}}]}]", NULL, &pb);
    s_expect(a, "100");
    rf_answer_destroy(&a);
    rf_problem_destroy(&pb);
    /* one pod anywhere, every running gang at priority 0: p (3 pods), q (1
     * pod), big (4 pods): the cheapest single victim is q */
    a = s_solve("[" RUN("p", 0, "", AT(0) "," AT(1) "," AT(2)) "," RUN("q", 0, "", AT(3)) "," RUN(
                    "big", 0, "", AT(4) "," AT(5) "," AT(6) "," AT(7)) "]",
                "[" GANG("one", 100, 1, "") "]", NULL, &pb);
    s_expect(a, "010");
    rf_answer_destroy(&a);
    rf_problem_destroy(&pb);
    rf_test_no_leaks();
}

/* Equal value in both racks (16 GPUs at priority 0): the penalty decides.
 * x holds h-0, h-1 (penalty 1); y holds h-4, h-5 with bandwidth 3 (penalty
 * 3). Freeing r1: the gang's 1 in, x's 1 out, net 0; freeing r2: 1 in, 3
 * out, net -2. r2 wins although r1 comes first in tree order. */
Test(preempt, equal_value_least_penalty)
{
    rf_problem_t *pb;
    rf_answer_t *a = s_solve(
        "[" RUN("x", 0, "", AT(0) "," AT(1)) "," RUN("y", 0, ",\"bandwidth\":3", AT(4) "," AT(5)) "," RUN(
            "p1", 0, ",\"preemptible\":false", AT(2) "," AT(3)) "," RUN("p2", 0, ",\"preemptible\":false",
                                                                        AT(6) "," AT(7)) "]",
        "[" RACK_GANG "\"pod_sets\":[{\"name\":\"w\",\"count\":2,\"requests\":{\"nvidia.com/gpu\":8}}]}]", NULL, &pb);
    s_expect(a, "0100");
    /* train 1, x 1, p1 1, p2 1 */
    cr_assert_float_eq(a->summary.penalty, 4.0, 1e-9, "penalty %g", a->summary.penalty);
    rf_answer_destroy(&a);
    rf_problem_destroy(&pb);
    rf_test_no_leaks();
}

Test(preempt, freed_room_only_for_higher_priorities)
{
    rf_problem_t *pb;
    /* low (0) holds h-0..h-3; train (100) needs 2 pods in a rack: it evicts
     * low whole, which frees 4 nodes; mid (5) takes 2 of the freed nodes; peer
     * (0, like low) must not */
    rf_answer_t *a =
        s_solve("[" RUN("low", 0, "", AT(0) "," AT(1) "," AT(2) "," AT(3)) "," RUN(
                    "r2", 50, "", AT(4) "," AT(5) "," AT(6) "," AT(7)) "]",
                "[" RACK_GANG "\"pod_sets\":[{\"name\":\"w\",\"count\":2,\"requests\":{\"nvidia.com/gpu\":8}}]}," GANG(
                    "mid", 5, 2, "") "," GANG("peer", 0, 1, "") "]",
                NULL, &pb);
    s_expect(a, "10");
    cr_assert(a->gangs[0].admitted);
    cr_assert(a->gangs[1].admitted, "mid should use the room low left");
    cr_assert(!a->gangs[2].admitted, "peer has low's priority: not its room");
    cr_assert_eq(a->running[0].n_by, 2, "low was preempted for train and mid");
    rf_answer_destroy(&a);
    rf_problem_destroy(&pb);
    rf_test_no_leaks();
}

Test(preempt, never_evicts_nothing)
{
    rf_problem_t *pb;
    rf_answer_t *a =
        s_solve("[" R1_SMALL "," R2_PROT "]",
                "[" RACK_GANG "\"pod_sets\":[{\"name\":\"w\",\"count\":4,\"requests\":{\"nvidia.com/gpu\":8}}]}]",
                "{\"preemption\":\"never\"}", &pb);
    cr_assert(!a->gangs[0].admitted);
    s_expect(a, "00000");
    cr_assert_not_null(a->gangs[0].reason);
    rf_answer_destroy(&a);
    rf_problem_destroy(&pb);
    /* nor a gang of the same priority as every running one */
    a = s_solve("[" R1_SMALL "]", "[" GANG("same", 0, 1, "") "]", NULL, &pb);
    cr_assert(!a->gangs[0].admitted);
    s_expect(a, "0000");
    rf_answer_destroy(&a);
    rf_problem_destroy(&pb);
    rf_test_no_leaks();
}

Test(preempt, elastic_falls_back_to_min_count)
{
    rf_problem_t *pb;
    /* 8 pods wanted, 2 enough: only r1's two preemptible gangs can go */
    rf_answer_t *a =
        s_solve("[" RUN("a", 0, "", AT(0)) "," RUN("b", 0, "", AT(1)) "," RUN(
                    "p", 0, ",\"preemptible\":false", AT(2) "," AT(3) "," AT(4) "," AT(5) "," AT(6) "," AT(7)) "]",
                "[{\"name\":\"el\",\"priority\":9,\"pod_sets\":[{\"name\":\"w\",\"count\":8,\"min_count\":2,"
                "\"requests\":{\"nvidia.com/gpu\":8}}]}]",
                NULL, &pb);
    cr_assert(a->gangs[0].admitted);
    s_expect(a, "110");
    cr_assert_eq(a->summary.value[0].pods, 2);
    rf_answer_destroy(&a);
    rf_problem_destroy(&pb);
    rf_test_no_leaks();
}

/* A gang partly running (one bound pod on h-0, rack r1) that needs a rack:
 * only r1 holds its bound pod, so r1's gangs go although r2's cost less
 * (priority 0 against 1); two of them make room for its two new pods. */
Test(preempt, bound_pods_fix_the_domain)
{
    rf_problem_t *pb;
    rf_answer_t *a = s_solve(
        "[" RUN("a", 1, "", AT(1)) "," RUN("b", 1, "", AT(2)) "," RUN("c", 1, "", AT(3)) "," RUN(
            "d", 0, "", AT(4)) "," RUN("e", 0, "", AT(5)) "," RUN("f", 0, "", AT(6)) "," RUN("g", 0, "", AT(7)) "]",
        "[" RACK_GANG "\"pod_sets\":[{\"name\":\"w\",\"count\":3,\"requests\":{\"nvidia.com/gpu\":8},"
        "\"bound\":[{\"node\":\"h-0\",\"count\":1}]}]}]",
        NULL, &pb);
    cr_assert(a->gangs[0].admitted);
    s_expect(a, "1100000");
    cr_assert_eq(a->summary.value[0].pods, 3, "bound pod and two new ones");
    rf_answer_destroy(&a);
    rf_problem_destroy(&pb);
    rf_test_no_leaks();
}

/* settle keeps a victim no admitted gang of higher priority preempts. */
Test(preempt, settle_keeps_victims_without_a_preemptor)
{
    char *json = rf_test_preempt_json(s_full, "[" RUN("a", 0, "", AT(0)) "," RUN("b", 0, "", AT(1)) "]",
                                      "[" GANG("g", 5, 1, "") "]", NULL);
    rf_problem_t *pb = rf_test_parse(json);
    free(json);
    rf_answer_t *a = rf_answer_new(pb);
    cr_assert_eq(rf_answer_add(a, 0, 0, rf_problem_node(pb, "h-0"), 1), RF_OK);
    cr_assert_eq(rf_answer_preempt(a, 0, true), RF_OK);
    cr_assert_eq(rf_answer_preempt(a, 1, true), RF_OK);
    cr_assert_eq(rf__preempt_settle(a), RF_OK);
    cr_assert(a->running[0].preempted);
    cr_assert(!a->running[1].preempted);
    cr_assert_eq(rf_answer_finish(a), RF_OK);
    rf_test_assert_feasible(pb, a, "settled");
    rf_answer_destroy(&a);
    rf_problem_destroy(&pb);
    rf_test_no_leaks();
}

/* A sliced gang larger than a rack, no required level: six pods in slices of
 * two per rack need both racks, whole slices in each. Rack r2 has a protected
 * node, so it can give only one slice (three evictable nodes hold one whole
 * slice and a spare): 4 pods in r1, 2 in r2, exactly six victims. */
Test(preempt, sliced_gang_spans_racks_in_whole_slices)
{
    rf_problem_t *pb;
    rf_answer_t *a = s_solve("[" R1_SMALL "," RUN("e", 0, "", AT(4)) "," RUN("f", 0, "", AT(5)) "," RUN(
                                 "g", 0, "", AT(6)) "," RUN("prot", 0, ",\"preemptible\":false", AT(7)) "]",
                             "[{\"name\":\"train\",\"priority\":100,\"pod_sets\":[{\"name\":\"w\",\"count\":6,"
                             "\"requests\":{\"nvidia.com/gpu\":8},"
                             "\"slice\":{\"size\":2,\"required\":\"example.com/rack\"}}]}]",
                             NULL, &pb);
    cr_assert(a->gangs[0].admitted, "the gang fits only across both racks");
    cr_assert_eq(a->summary.preempted, 6);
    cr_assert(!a->running[7].preempted, "the protected gang is kept");
    int64_t in_r1 = 0, in_r2 = 0;
    for (int32_t k = 0; k < a->gangs[0].pod_sets[0].n_placements; k++) {
        const rf_placement_t *pl = &a->gangs[0].pod_sets[0].placements[k];
        *(pl->node < 4 ? &in_r1 : &in_r2) += pl->count;
    }
    cr_assert_eq(in_r1, 4);
    cr_assert_eq(in_r2, 2, "r2 takes one whole slice, not three pods");
    rf_answer_destroy(&a);
    rf_problem_destroy(&pb);
    rf_test_no_leaks();
}

#define RUN4(name, extra, node)                                                                                        \
    "{\"name\":\"" name "\",\"priority\":0" extra ",\"pod_sets\":[{\"name\":\"w\","                                    \
    "\"requests\":{\"nvidia.com/gpu\":4},\"placements\":[" AT(node) "]}]}"
#define GANG4(name)                                                                                                    \
    "{\"name\":\"" name                                                                                                \
    "\",\"priority\":100,\"pod_sets\":[{\"name\":\"w\",\"count\":1,\"requests\":{\"nvidia.com/gpu\":4}}]}"

/* Keep-back (solver/greedy.c): each gang alone takes its cheapest victims,
 * which for the batch is not the cheapest. p1 (4 GPUs) evicts v (4 GPUs on
 * h-0, beside a protected 4-GPU gang) rather than w (a whole 8-GPU host,
 * h-4); p2 then finds h-0 full and evicts w, whose host keeps 4 GPUs free.
 * Both victim rules choose so (v is also the more recent). Keeping v back
 * and placing p1 again in w's freed room loses 8 GPUs, not 12. */
Test(preempt, keep_back_undoes_a_victim_another_made_needless)
{
    rf_problem_t *pb;
    rf_answer_t *a =
        s_solve("[" RUN("w", 0, "", AT(4)) "," RUN4("v", "", 0) "," RUN4("u", ",\"preemptible\":false", 0) "]",
                "[" GANG4("p1") "," GANG4("p2") "]", NULL, &pb);
    cr_assert(a->gangs[0].admitted && a->gangs[1].admitted);
    s_expect(a, "100");
    cr_assert_eq(a->running[0].n_by, 2, "w's host serves both");
    cr_assert_eq(a->gangs[0].pod_sets[0].placements[0].node, 4);
    cr_assert_eq(a->gangs[1].pod_sets[0].placements[0].node, 4);
    rf_answer_destroy(&a);
    rf_problem_destroy(&pb);
    rf_test_no_leaks();
}

/* Keep-back undoes a move that fails: as above, plus x (8 GPUs, h-1) and p3
 * (8 GPUs, pinned to h-1 by its node selector), which evicts x first. The
 * step tries w (p2 takes w again: no better), then x (p3 fits nowhere else:
 * rejected, the move undone), then v (p1 into w's freed room: better). In a
 * debug build s_keep_back asserts that every undone move left its capacity
 * view as the answer has it. */
Test(preempt, keep_back_undoes_a_move_that_fails)
{
    rf_problem_t *pb;
    rf_answer_t *a = s_solve(
        "[" RUN("w", 0, "", AT(4)) "," RUN4("v", "", 0) "," RUN4("u", ",\"preemptible\":false", 0) "," RUN("x", 0, "",
                                                                                                           AT(1)) "]",
        "[" GANG4("p1") "," GANG4(
            "p2") ","
                  "{\"name\":\"p3\",\"priority\":100,\"pod_sets\":[{\"name\":\"w\",\"count\":1,"
                  "\"requests\":{\"nvidia.com/gpu\":8},\"node_selector\":{\"kubernetes.io/hostname\":\"h-1\"}}]}]",
        NULL, &pb);
    for (int32_t g = 0; g < 3; g++)
        cr_assert(a->gangs[g].admitted, "gang %d", g);
    s_expect(a, "1001");
    cr_assert_eq(a->gangs[2].pod_sets[0].placements[0].node, 1);
    cr_assert_eq(a->gangs[0].pod_sets[0].placements[0].node, 4);
    rf_answer_destroy(&a);
    rf_problem_destroy(&pb);
    rf_test_no_leaks();
}

/* The pass again with Kueue's victim rule (solver/greedy.c, rf__greedy_run),
 * kept when better: on this random problem (7 nodes, 3 gangs, 2 running
 * gangs, found by a search over seeds) the cheapest-first victims leave g1
 * (priority 0, a rack required, pool "a") out; with Kueue's rule, the most
 * recently admitted first, all three gangs are admitted. */
Test(preempt, kueue_rule_pass_kept_when_better)
{
    rf_randprob_opts_t o;
    rf_randprob_default(&o);
    o.max_nodes = 8;
    o.max_gangs = 10;
    o.max_pods = 6;
    o.max_pod_sets = 1;
    o.slice_bound = false;
    o.max_running = 10;
    char *json = rf_randprob(5658, &o);
    rf_problem_t *pb = rf_test_parse(json);
    free(json);
    cr_assert_eq(pb->n_gangs, 3);
    cr_assert_eq(pb->n_running, 2);
    rf_answer_t *a = rf_test_solve(pb, RF_MODE_GREEDY, 1, 1000);
    rf_test_assert_feasible(pb, a, "greedy");
    for (int32_t g = 0; g < 3; g++)
        cr_expect(a->gangs[g].admitted, "gang %s", pb->gangs[g].name);
    cr_expect(a->running[1].preempted && !a->running[0].preempted);
    rf_answer_destroy(&a);
    rf_problem_destroy(&pb);
    rf_test_no_leaks();
}
