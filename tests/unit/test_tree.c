/* tests/unit/test_tree.c: the topology tree (solver/tree.c).
 *
 * Every invariant tree.h states is checked on hand-made clusters and on
 * random ones against a plain reference (node labels compared directly):
 * levels contiguous, children contiguous and grouped by parent, node ranges,
 * unlabelled nodes outside, numbering a pure function of the input; and
 * rf__tree_of lends a problem's tree_hint instead of building one. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../support/leak.h"
#include "../support/randprob.h"
#include "../support/testutil.h"
#include "rackfit/rackfit.h"
#include "tree.h"

#define LEVELS "\"levels\":[\"example.com/block\",\"example.com/rack\",\"kubernetes.io/hostname\"]"
#define HOST(name, block, rack)                                                                                        \
    "{\"name\":\"" name "\",\"labels\":{\"example.com/block\":\"" block "\",\"example.com/rack\":\"" rack              \
    "\",\"kubernetes.io/hostname\":\"" name "\"}}"

/* Check every invariant of tree.h against the problem's labels. */
static void s_check_invariants(const rf_problem_t *pb, const rf__tree_t *t)
{
    const int32_t L = pb->n_levels;
    cr_assert_eq(t->n_levels, L);
    cr_assert_eq(t->n_nodes, pb->n_nodes);
    cr_assert_eq(t->level_start[0], 0);
    cr_assert_eq(t->level_start[L], t->n_domains);
    for (int32_t l = 0; l < L; l++)
        for (int32_t d = t->level_start[l]; d < t->level_start[l + 1]; d++) {
            cr_assert_eq(t->level[d], l, "domain %d numbered in level %d says %d", d, l, t->level[d]);
            if (l == 0)
                cr_assert_eq(t->parent[d], -1);
            else
                cr_assert(t->parent[d] >= t->level_start[l - 1] && t->parent[d] < t->level_start[l]);
            if (d > t->level_start[l] && l > 0)
                cr_assert_geq(t->parent[d], t->parent[d - 1], "level %d not grouped by parent", l);
            for (int32_t c = t->child_start[d]; l + 1 < L && c < t->child_start[d] + t->n_children[d]; c++)
                cr_assert_eq(t->parent[c], d, "child %d of %d has parent %d", c, d, t->parent[c]);
            cr_assert_lt(t->node_start[d], t->node_end[d], "domain %d holds no node", d);
            for (int32_t i = t->node_start[d]; i < t->node_end[d]; i++)
                cr_assert_eq(rf__tree_node_dom(t, t->node_order[i], l), d);
        }
    int32_t in = 0;
    for (int32_t n = 0; n < pb->n_nodes; n++) {
        bool labelled = true;
        for (int32_t l = 0; l < L; l++)
            labelled &= rf_node_label(&pb->nodes[n], pb->levels[l]) != NULL;
        in += labelled;
        for (int32_t l = 0; l < L; l++) {
            int32_t d = rf__tree_node_dom(t, n, l);
            cr_assert_eq(d >= 0, labelled, "node %s: in the tree %d, labelled %d", pb->nodes[n].name, d >= 0, labelled);
            if (!labelled)
                continue;
            if (l > 0)
                cr_assert_eq(t->parent[d], rf__tree_node_dom(t, n, l - 1));
            /* the same domain exactly when the label paths agree down to l */
            for (int32_t m = 0; m < n; m++) {
                int32_t e = rf__tree_node_dom(t, m, l);
                if (e < 0)
                    continue;
                bool same = true;
                for (int32_t k = 0; k <= l; k++)
                    same &= strcmp(rf_node_label(&pb->nodes[n], pb->levels[k]),
                                   rf_node_label(&pb->nodes[m], pb->levels[k])) == 0;
                cr_assert_eq(d == e, same, "nodes %d and %d at level %d", n, m, l);
            }
        }
    }
    cr_assert_eq(t->n_in_tree, in);
}

Test(tree, hand_made_cluster_numbered_level_by_level)
{
    /* b2 comes first in the input, so it is domain 0; x-nolabel lacks a rack */
    rf_problem_t *pb = rf_test_parse(
        "{\"cluster\":{" LEVELS
        ",\"nodes\":[" HOST("h1", "b2", "r1") "," HOST("h2", "b1", "r1") "," HOST("h3", "b2", "r2") "," HOST(
            "h4", "b2", "r1") ","
                              "{\"name\":\"x-nolabel\",\"labels\":{\"example.com/block\":\"b1\","
                              "\"kubernetes.io/hostname\":\"x-nolabel\"}}]},\"gangs\":[]}");
    rf__tree_t t;
    rf_error_t err;
    cr_assert_eq(rf__tree_build(pb, &t, &err), RF_OK, "%s", err.message);
    s_check_invariants(pb, &t);
    cr_assert_eq(t.n_domains, 2 + 3 + 4); /* blocks b2, b1; racks b2/r1, b2/r2, b1/r1; 4 hosts */
    cr_assert_eq(t.level_start[1], 2);
    cr_assert_eq(rf__tree_node_dom(&t, 0, 0), 0, "b2 first seen, first numbered");
    cr_assert_eq(rf__tree_node_dom(&t, 1, 0), 1);
    cr_assert_eq(rf__tree_node_dom(&t, 4, 0), -1, "a node without every level label is outside");
    cr_assert_eq(t.n_children[0], 2, "b2 has racks r1 and r2");
    cr_assert_eq(t.node_end[0] - t.node_start[0], 3);
    /* racks of b2 (domain 0) span both of them; hosts under b2 too */
    int32_t a, b;
    rf__tree_range(&t, 0, 1, &a, &b);
    cr_assert_eq(b - a, 2);
    rf__tree_range(&t, 0, 2, &a, &b);
    cr_assert_eq(b - a, 3);
    rf__tree_range(&t, 0, 0, &a, &b);
    cr_assert(a == 0 && b == 1, "a domain's own level is itself");
    rf__tree_fini(&t);
    rf__tree_fini(&t); /* fini leaves a zeroed tree: a second one is harmless */
    rf_problem_destroy(&pb);
    rf_test_no_leaks();
}

Test(tree, random_clusters_keep_every_invariant_and_are_deterministic)
{
    rf_randprob_opts_t o;
    rf_randprob_default(&o);
    for (uint64_t seed = 1; seed <= 40; seed++) {
        char *json = rf_randprob(seed, &o);
        rf_problem_t *pb = rf_test_parse(json);
        rf__tree_t t1, t2;
        rf_error_t err;
        cr_assert_eq(rf__tree_build(pb, &t1, &err), RF_OK);
        cr_assert_eq(rf__tree_build(pb, &t2, &err), RF_OK);
        s_check_invariants(pb, &t1);
        cr_assert_eq(t1.n_domains, t2.n_domains);
        cr_assert_eq(memcmp(t1.node_dom, t2.node_dom, (size_t)pb->n_nodes * pb->n_levels * sizeof(int32_t)), 0,
                     "seed %llu: two builds differ", (unsigned long long)seed);
        rf__tree_fini(&t1);
        rf__tree_fini(&t2);
        rf_problem_destroy(&pb);
        free(json);
    }
    rf_test_no_leaks();
}

Test(tree, tree_of_lends_the_hint_and_builds_without_one)
{
    rf_problem_t *pb = rf_test_parse(
        "{\"cluster\":{" LEVELS ",\"nodes\":[" HOST("h1", "b1", "r1") "," HOST("h2", "b1", "r2") "]},\"gangs\":[]}");
    rf_error_t err;
    rf__tree_t own, lent;
    bool owned = false;
    cr_assert_eq(rf__tree_of(pb, &own, &owned, &err), RF_OK);
    cr_assert(owned, "no hint: a tree of its own");
    pb->tree_hint = &own;
    cr_assert_eq(rf__tree_of(pb, &lent, &owned, &err), RF_OK);
    cr_assert(!owned, "the hint is lent");
    cr_assert_eq(lent.node_dom, own.node_dom, "the same arrays, not a copy");
    pb->tree_hint = NULL;
    rf__tree_fini(&own);
    rf_problem_destroy(&pb);
    rf_test_no_leaks();
}
