/* tests/support/randprob.h: random small placement problems for property
 * tests (greedy, ILP, exhaustive search), as contract JSON text.
 *
 * The same seed gives the same text. Problems are valid by construction and
 * exercise every feature the contract has: partly used and cordoned nodes,
 * taints and tolerations, node selectors, several pod sets, elastic
 * min_count, required topology at gang and pod-set level, slices, bound pods
 * (with and without ranks), priorities, bandwidth, and both admission
 * policies. With max_running > 0, also running gangs (PLACEMENT-MODEL.md,
 * "Running gangs and preemption"): priorities 0 to 2 against pending gangs of
 * priority 0 to 2, one in four not preemptible, one or two pod sets placed
 * where the node has room, their pods (and the bound pods) in `used`
 * including `pods`; options.preemption `never` one time in five. */
#ifndef RF_TEST_RANDPROB_H
#define RF_TEST_RANDPROB_H

#include <stdbool.h>
#include <stdint.h>

typedef struct {
    int max_nodes;     /* 2..max_nodes nodes */
    int max_gangs;     /* 1..max_gangs gangs */
    int max_pods;      /* pods per pod set: 1..max_pods */
    int max_pod_sets;  /* 1..max_pod_sets per gang */
    int bound_percent; /* chance that a pod set has bound pods */
    bool slice_bound;  /* sliced pod sets may have bound pods (default true); false keeps
                          them off sliced pod sets, without changing the rest of the draw */
    int max_running;   /* 0..max_running running gangs (default 0: none, and the draw of
                          every other part is the same as without this option) */
    bool overcommit;   /* (default false) from a second random stream, so that the rest of
                          the draw is the same: a node in three has cpu `used` above its
                          `allocatable` (by 1 to 3 cores), and a pending pod set in three
                          requests no cpu (zero and non-zero requests mixed on one node);
                          the bound pods' usage follows their requests */
} rf_randprob_opts_t;

void rf_randprob_default(rf_randprob_opts_t *opts);
/* A malloc'ed NUL-terminated JSON problem. */
char *rf_randprob(uint64_t seed, const rf_randprob_opts_t *opts);

#endif
