/* tests/unit/test_eligible.c: node eligibility for the search
 * (solver/eligible.c).
 *
 * - rf__node_admits_labelled keeps Kubernetes' rules: cordon, exact
 *   node_selector, NoSchedule/NoExecute taints tolerated by key, value and
 *   effect (Exists, an empty key, an empty effect), PreferNoSchedule ignored;
 * - rf__elig_build gives every pod set a class, one class per distinct
 *   node_selector and tolerations, and each class's mask equals
 *   rf_node_admits node by node (the reference), on hand-made and random
 *   problems. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "../support/leak.h"
#include "../support/randprob.h"
#include "../support/testutil.h"
#include "eligible.h"
#include "rackfit/rackfit.h"

/* The fixture, in JSON with ' for " (s_cluster swaps them back): one line a
 * node or a pod set, in the order of the enum and of `expected` below. */
static const char s_cluster_text[] =
    "{'cluster':{'levels':['kubernetes.io/hostname'],'nodes':["
    "{'name':'plain','labels':{'kubernetes.io/hostname':'plain'}},"
    "{'name':'gpu-a100','labels':{'kubernetes.io/hostname':'gpu-a100','gpu':'a100'}},"
    "{'name':'cordoned','labels':{'kubernetes.io/hostname':'cordoned'},'unschedulable':true},"
    "{'name':'tainted','labels':{'kubernetes.io/hostname':'tainted'},"
    "'taints':[{'key':'maint','value':'yes','effect':'NoSchedule'}]},"
    "{'name':'evicting','labels':{'kubernetes.io/hostname':'evicting'},"
    "'taints':[{'key':'bad','effect':'NoExecute'}]},"
    "{'name':'soft','labels':{'kubernetes.io/hostname':'soft'},"
    "'taints':[{'key':'soft','effect':'PreferNoSchedule'}]},"
    "{'name':'unlabelled'}"
    "]},'gangs':[{'name':'g','pod_sets':["
    "{'name':'any','count':1},"
    "{'name':'a100','count':1,'node_selector':{'gpu':'a100'}},"
    "{'name':'maint-equal','count':1,"
    "'tolerations':[{'key':'maint','operator':'Equal','value':'yes','effect':'NoSchedule'}]},"
    "{'name':'maint-wrong-value','count':1,'tolerations':[{'key':'maint','operator':'Equal','value':'no'}]},"
    "{'name':'everything','count':1,'tolerations':[{'operator':'Exists'}]},"
    "{'name':'any-again','count':1}"
    "]}]}";

/* The fixture problem: s_cluster_text with its quotes swapped. */
static rf_problem_t *s_cluster(void)
{
    char json[sizeof s_cluster_text];
    for (size_t i = 0; i < sizeof json; i++)
        json[i] = s_cluster_text[i] == '\'' ? '"' : s_cluster_text[i];
    return rf_test_parse(json);
}

enum { PLAIN, GPU, CORDONED, TAINTED, EVICTING, SOFT, UNLABELLED };

Test(eligible, kubernetes_rules_for_labelled_nodes)
{
    rf_problem_t *pb = s_cluster();
    const rf_pod_set_t *ps = pb->gangs[0].pod_sets;
    /* expected[pod set][node] for the labelled nodes */
    static const bool expected[6][6] = {
        /* plain gpu  cordon taint evict soft */
        {true, true, false, false, false, true},   /* any */
        {false, true, false, false, false, false}, /* a100 */
        {true, true, false, true, false, true},    /* maint-equal */
        {true, true, false, false, false, true},   /* maint-wrong-value */
        {true, true, false, true, true, true},     /* everything (Exists, no key) */
        {true, true, false, false, false, true},   /* any-again */
    };
    for (int32_t p = 0; p < 6; p++)
        for (int32_t n = 0; n < 6; n++) {
            cr_assert_eq(rf__node_admits_labelled(pb, n, &ps[p]), expected[p][n], "pod set %s on node %s", ps[p].name,
                         pb->nodes[n].name);
            cr_assert_eq(rf_node_admits(pb, n, &ps[p]), expected[p][n]);
        }
    for (int32_t p = 0; p < 6; p++)
        cr_assert(!rf_node_admits(pb, UNLABELLED, &ps[p]), "a node without the level labels takes no new pods");
    cr_assert(rf__same_eligibility(&ps[0], &ps[5]));
    cr_assert(!rf__same_eligibility(&ps[0], &ps[1]));
    cr_assert(!rf__same_eligibility(&ps[2], &ps[3]), "same key, other value");
    rf_problem_destroy(&pb);
    rf_test_no_leaks();
}

/* The classes against rf_node_admits, node by node. */
static void s_check_classes(const rf_problem_t *pb, const rf__elig_t *e)
{
    int64_t k = 0;
    for (int32_t g = 0; g < pb->n_gangs; g++) {
        cr_assert_eq(e->gang_ps0[g], k);
        for (int32_t p = 0; p < pb->gangs[g].n_pod_sets; p++, k++) {
            int32_t c = e->class_of[k];
            cr_assert(c >= 0 && c < e->n_classes);
            const rf_pod_set_t *ps = &pb->gangs[g].pod_sets[p];
            cr_assert(rf__same_eligibility(e->rep[c], ps));
            int32_t n_ok = 0;
            for (int32_t n = 0; n < pb->n_nodes; n++) {
                cr_assert_eq(e->ok[c][n] != 0, rf_node_admits(pb, n, ps), "gang %d pod set %d node %d", g, p, n);
                n_ok += e->ok[c][n];
            }
            cr_assert_eq(e->n_ok[c], n_ok);
        }
    }
    cr_assert_eq(e->n_pod_sets, k);
    for (int32_t a = 0; a < e->n_classes; a++)
        for (int32_t b = a + 1; b < e->n_classes; b++)
            cr_assert(!rf__same_eligibility(e->rep[a], e->rep[b]), "classes %d and %d are the same", a, b);
}

Test(eligible, classes_match_node_admits)
{
    rf_problem_t *pb = s_cluster();
    rf__tree_t t;
    rf__elig_t e;
    rf_error_t err;
    cr_assert_eq(rf__tree_build(pb, &t, &err), RF_OK);
    cr_assert_eq(rf__elig_build(pb, &t, &e, &err), RF_OK, "%s", err.message);
    s_check_classes(pb, &e);
    cr_assert_eq(e.n_classes, 5, "`any` and `any-again` share a class");
    cr_assert_eq(e.class_of[0], e.class_of[5]);
    rf__elig_fini(&e);
    rf__elig_fini(&e); /* fini leaves it zeroed */
    rf__tree_fini(&t);
    rf_problem_destroy(&pb);
    rf_test_no_leaks();
}

Test(eligible, random_problems)
{
    rf_randprob_opts_t o;
    rf_randprob_default(&o);
    for (uint64_t seed = 1; seed <= 40; seed++) {
        char *json = rf_randprob(seed, &o);
        rf_problem_t *pb = rf_test_parse(json);
        rf__tree_t t;
        rf__elig_t e;
        rf_error_t err;
        cr_assert_eq(rf__tree_build(pb, &t, &err), RF_OK);
        cr_assert_eq(rf__elig_build(pb, &t, &e, &err), RF_OK);
        s_check_classes(pb, &e);
        rf__elig_fini(&e);
        rf__tree_fini(&t);
        rf_problem_destroy(&pb);
        free(json);
    }
    rf_test_no_leaks();
}
