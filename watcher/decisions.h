/* watcher/decisions.h: what rackfitd's answer means for each sent gang:
 * admitted (pod -> node for every pending pod) or rejected (with the
 * solver's sentence).
 *
 * Placements are handed to each pod set's pending pods in rank order (ranks
 * held by bound pods are not in `pending`, so the k-th new pod is the k-th
 * pending one). An answer that does not answer the plan (another gang count,
 * names, unknown pod sets, more placements than pending pods) is refused
 * whole with a message; nothing of it is bound. */
#ifndef RACKFIT_WATCHER_DECISIONS_H
#define RACKFIT_WATCHER_DECISIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gangs.h"

/* One pod and the node it goes to (every string malloc'ed). */
typedef struct {
    char *ns;
    char *name;
    char *uid;
    char *node;
} rf__bind_t;

/* What the answer says about one sent gang. */
typedef struct {
    char *gang;
    bool admitted;
    char *reason;      /* rejected: the solver's sentence */
    rf__bind_t *binds; /* admitted: pod -> node, rank order within each pod set */
    int32_t n_binds;
    int32_t plan_gang; /* index in plan->gangs */
} rf__decision_t;

rf_status rf__decisions_from_answer(const rf__plan_t *plan, const char *answer, size_t len, rf__decision_t **out,
                                    int32_t *n, rf_error_t *err);
/* Free the fields of one decision (not the decision itself). */
void rf__decision_fini(rf__decision_t *d);
void rf__decisions_free(rf__decision_t **d, int32_t n);

/* A running gang the answer preempts: plan->running[run], and the gangs it
 * was preempted for, as ",NAME,NAME," (so ",NAME," finds one). */
typedef struct {
    int32_t run;
    char *by;
} rf__victim_t;

/* The preempted running gangs of an answer (none when the plan sent none).
 * An answer whose `running` does not list the plan's running gangs in order
 * is refused with a message. */
rf_status rf__victims_from_answer(const rf__plan_t *plan, const char *answer, size_t len, rf__victim_t **out,
                                  int32_t *n, rf_error_t *err);
void rf__victims_free(rf__victim_t **v, int32_t n);

/* Copies of pod lists (NULL on OOM, or when n is 0 an empty allocation). */
rf__bind_t *rf__binds_copy(const rf__bind_t *p, int32_t n);
void rf__binds_free(rf__bind_t *p, int32_t n);

#endif
