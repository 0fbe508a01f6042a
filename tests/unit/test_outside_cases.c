/* tests/unit/test_outside_cases.c: Volcano's and KAI Scheduler's topology
 * allocation test tables (tests/data/volcano, tests/data/kai; sources and what
 * was not ported in each PORTING.md), run as checks of feasibility and domain
 * counts.
 *
 * Each case is one gang and the peer's expectation from its own table: the
 * new pods it binds and, where the table names every node, the domains per
 * level its placement uses (bound pods included). For each case and for the
 * greedy strategy and the integer program (a short limit):
 * - rf_check accepts the answer;
 * - rackfit places at least the peer's new pods, and none where the peer binds
 *   none (the peer's rejections are the contract's too: PORTING.md);
 * - where the peer's domains are known, rackfit's D(l) is never above them.
 * The peer's data is read from the files, never written here. */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../support/leak.h"
#include "../support/testutil.h"
#include "arena.h"
#include "file.h"
#include "json.h"
#include "rackfit/rackfit.h"

typedef struct {
    int cases;
    int admitted_equal; /* admitted as the peer (its new pods, or none), greedy and ilp */
    int dom_fewer;      /* greedy: fewer domains than the peer's placement at some level, more at none */
    int dom_equal;      /* greedy: the peer's domains at every level */
    int worse;          /* cases where an answer is behind the peer (each also fails the test) */
} s_tally_t;

static int64_t s_new_pods(const rf_problem_t *pb, const rf_answer_t *ans)
{
    int64_t n = 0;
    if (!ans->gangs[0].admitted)
        return 0;
    for (int32_t j = 0; j < pb->gangs[0].n_pod_sets; j++)
        for (int32_t k = 0; k < ans->gangs[0].pod_sets[j].n_placements; k++)
            n += ans->gangs[0].pod_sets[j].placements[k].count;
    return n;
}

/* Does the answer admit as the peer: at least its new pods, none where it
 * binds none? */
static bool s_admits_as_peer(const rf_problem_t *pb, const rf_answer_t *ans, const rf_doc_t *peer, const char *what)
{
    int64_t binds = rf__doc_get(peer, "binds")->u.i;
    int64_t placed = s_new_pods(pb, ans);
    const rf_gang_answer_t *g = &ans->gangs[0];
    if (!g->admitted)
        cr_expect(g->reason && g->reason[0], "%s: rejected without a reason", what);
    if (binds == 0) {
        cr_expect_eq(placed, 0, "%s: the peer binds nothing, rackfit places %lld", what, (long long)placed);
        return placed == 0;
    }
    cr_expect(g->admitted && placed >= binds, "%s: the peer binds %lld, rackfit %s %lld (%s)", what, (long long)binds,
              g->admitted ? "places" : "rejects:", (long long)placed, g->reason ? g->reason : "");
    return g->admitted && placed >= binds;
}

/* The answer's domains against the peer's placement: -1 fewer (at some level,
 * more at none), 0 equal, 1 more at some level; 0 when there is nothing to
 * compare (no full placement from the peer, or the gang not admitted). */
static int s_domains_vs_peer(const rf_problem_t *pb, const rf_answer_t *ans, const rf_doc_t *peer, const char *what)
{
    const rf_doc_t *dom = rf__doc_get(peer, "domains");
    const rf_gang_answer_t *g = &ans->gangs[0];
    if (!g->admitted || !dom || dom->type != RF_DOC_ARRAY)
        return 0;
    cr_assert_eq((int32_t)dom->len, pb->n_levels, "%s: peer domains per level", what);
    bool fewer = false, more = false;
    for (uint32_t l = 0; l < dom->len; l++) {
        int64_t want = dom->u.items[l].u.i;
        cr_expect_leq(g->domains[l], want, "%s: level %s: %d domains, the peer %lld", what, pb->levels[l],
                      g->domains[l], (long long)want);
        more |= g->domains[l] > want;
        fewer |= g->domains[l] < want;
    }
    return more ? 1 : fewer ? -1 : 0;
}

static void s_run_table(const char *path, const char *peer_name, s_tally_t *t)
{
    char *text = NULL;
    size_t len = 0;
    rf_error_t err;
    cr_assert_eq(rf__read_file(path, 64u << 20, &text, &len, &err), RF_OK, "%s: %s", path, err.message);
    rf__arena_t *arena = rf__arena_new(0);
    rf_doc_t *doc = NULL;
    rf_limits_t lim;
    rf_limits_default(&lim);
    cr_assert_eq(rf__json_parse(text, len, &lim, arena, &doc, &err), RF_OK, "%s: %s", path, err.message);
    cr_assert_eq(doc->type, RF_DOC_ARRAY);
    cr_assert_gt(doc->len, 0, "%s: no cases", path);
    memset(t, 0, sizeof *t);
    static const struct {
        int mode;
        int64_t limit_ms;
        const char *name;
    } runs[] = {{RF_MODE_GREEDY, 1000, "greedy"}, {RF_MODE_ILP, 200, "ilp"}};
    for (uint32_t i = 0; i < doc->len; i++) {
        const rf_doc_t *c = &doc->u.items[i];
        const char *name = rf__doc_get(c, "name")->u.s;
        const rf_doc_t *peer = rf__doc_get(c, "peer");
        cr_assert_not_null(peer, "%s case %u: no peer", peer_name, i);
        rf_problem_t *pb = NULL;
        cr_assert_eq(rf_problem_from_doc(rf__doc_get(c, "problem"), NULL, &lim, &pb, &err), RF_OK,
                     "%s case %u (%s): %s: %s", peer_name, i, name, err.path, err.message);
        bool as_peer = true, more = false;
        int greedy_vs = 0;
        for (size_t r = 0; r < sizeof runs / sizeof runs[0]; r++) {
            char what[512];
            snprintf(what, sizeof what, "%s case %u (%s), %s", peer_name, i, name, runs[r].name);
            rf_answer_t *ans = rf_test_solve(pb, runs[r].mode, 1, runs[r].limit_ms);
            rf_test_assert_feasible(pb, ans, what);
            as_peer &= s_admits_as_peer(pb, ans, peer, what);
            int vs = s_domains_vs_peer(pb, ans, peer, what);
            more |= vs > 0;
            if (runs[r].mode == RF_MODE_GREEDY)
                greedy_vs = vs;
            rf_answer_destroy(&ans);
        }
        const rf_doc_t *dom = rf__doc_get(peer, "domains");
        t->cases++;
        t->admitted_equal += as_peer;
        t->worse += !as_peer || more;
        if (as_peer && dom && dom->type == RF_DOC_ARRAY) {
            t->dom_fewer += greedy_vs < 0;
            t->dom_equal += greedy_vs == 0;
        }
        rf_problem_destroy(&pb);
    }
    cr_log_info("%s cases: %d; admitted as the peer: %d; against the peer's full placements: %d with fewer domains, "
                "%d equal; worse: %d",
                peer_name, t->cases, t->admitted_equal, t->dom_fewer, t->dom_equal, t->worse);
    rf__arena_destroy(&arena);
    free(text);
}

Test(outside_cases, volcano_network_topology_tables)
{
    s_tally_t t;
    s_run_table(RF_SOURCE_DIR "/tests/data/volcano/cases.json", "Volcano", &t);
    cr_expect_eq(t.worse, 0);
    rf_test_no_leaks();
}

Test(outside_cases, kai_topology_allocation_table)
{
    s_tally_t t;
    s_run_table(RF_SOURCE_DIR "/tests/data/kai/cases.json", "KAI", &t);
    cr_expect_eq(t.worse, 0);
    rf_test_no_leaks();
}
