/* solver/eligible.c: node eligibility for the search strategies (see
 * eligible.h). */
#include "eligible.h"

#include <string.h>

const char *rf__node_label(const rf_node_t *node, const char *key)
{
    int32_t lo = 0, hi = node->n_labels - 1;
    while (lo <= hi) {
        int32_t mid = lo + (hi - lo) / 2;
        int c = strcmp(node->labels[mid].key, key);
        if (c == 0)
            return node->labels[mid].value;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return NULL;
}

static bool s_tolerated(const rf_taint_t *t, const rf_pod_set_t *ps)
{
    for (int32_t i = 0; i < ps->n_tolerations; i++) {
        const rf_toleration_t *tol = &ps->tolerations[i];
        if (tol->effect != RF_EFFECT_NONE && tol->effect != t->effect)
            continue;
        bool empty_key = tol->key == NULL || tol->key[0] == '\0';
        if (empty_key && tol->op == RF_TOL_EXISTS)
            return true;
        if (empty_key || strcmp(tol->key, t->key) != 0)
            continue;
        if (tol->op == RF_TOL_EXISTS)
            return true;
        if (strcmp(tol->value ? tol->value : "", t->value ? t->value : "") == 0)
            return true;
    }
    return false;
}

bool rf__node_eligible(const rf_problem_t *pb, const rf__tree_t *tree, int32_t n, const rf_pod_set_t *ps)
{
    const rf_node_t *node = &pb->nodes[n];
    if (node->unschedulable || rf__tree_node_dom(tree, n, pb->n_levels - 1) < 0)
        return false;
    for (int32_t i = 0; i < ps->n_node_selector; i++) {
        const char *v = rf__node_label(node, ps->node_selector[i].key);
        if (!v || strcmp(v, ps->node_selector[i].value) != 0)
            return false;
    }
    for (int32_t i = 0; i < node->n_taints; i++) {
        const rf_taint_t *t = &node->taints[i];
        if ((t->effect == RF_EFFECT_NO_SCHEDULE || t->effect == RF_EFFECT_NO_EXECUTE) && !s_tolerated(t, ps))
            return false;
    }
    return true;
}

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
