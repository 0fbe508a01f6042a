/* solver/eligible.c: which pod sets see the same eligible nodes (see
 * eligible.h). */
#include "eligible.h"

#include <string.h>

bool rf__same_eligibility(const rf_pod_set_t *a, const rf_pod_set_t *b)
{
    if (a->n_node_selector != b->n_node_selector || a->n_tolerations != b->n_tolerations)
        return false;
    for (int32_t i = 0; i < a->n_node_selector; i++)
        if (strcmp(a->node_selector[i].key, b->node_selector[i].key) != 0 ||
            strcmp(a->node_selector[i].value, b->node_selector[i].value) != 0)
            return false;
    for (int32_t i = 0; i < a->n_tolerations; i++) {
        const rf_toleration_t *x = &a->tolerations[i], *y = &b->tolerations[i];
        if (x->op != y->op || x->effect != y->effect || strcmp(x->key ? x->key : "", y->key ? y->key : "") != 0 ||
            strcmp(x->value ? x->value : "", y->value ? y->value : "") != 0)
            return false;
    }
    return true;
}
