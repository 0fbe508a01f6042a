/* solver/eligible.c: node eligibility for the search (see eligible.h): the
 * Kubernetes rules for a labelled node (cordon, node_selector, taints and
 * tolerations), and the per-solve eligibility classes built from them.
 * (solver/check.c keeps its own copy of the rules on purpose.) */
#include "eligible.h"

#include "cluster_cache.h"
#include <stdlib.h>
#include <string.h>

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

bool rf__node_admits_labelled(const rf_problem_t *pb, int32_t n, const rf_pod_set_t *ps)
{
    const rf_node_t *node = &pb->nodes[n];
    if (node->unschedulable)
        return false;
    for (int32_t i = 0; i < ps->n_node_selector; i++) {
        const char *v = rf_node_label(node, ps->node_selector[i].key);
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

/* A new class for pod set ps: its node mask, the cache's when it keeps
 * (or can add) the class, else computed here. */
static rf_status s_add_class(rf__elig_t *e, const rf_problem_t *pb, const rf__tree_t *tree, rf_cluster_cache_t *cache,
                             const rf_pod_set_t *ps)
{
    int32_t c = e->n_classes;
    e->rep[c] = ps;
    int32_t cc = cache ? rf__cache_class(cache, ps) : -1;
    e->cache_class[c] = cc;
    if (cc >= 0) {
        e->ok[c] = cache->classes[cc].ok;
        e->n_ok[c] = cache->classes[cc].n_ok;
        e->n_classes++;
        return RF_OK;
    }
    e->ok[c] = malloc((size_t)pb->n_nodes + 1);
    if (!e->ok[c])
        return RF_ENOMEM;
    e->n_classes++;
    e->n_ok[c] = 0;
    for (int32_t n = 0; n < pb->n_nodes; n++) {
        bool in_tree = pb->n_levels > 0 && rf__tree_node_dom(tree, n, pb->n_levels - 1) >= 0;
        e->ok[c][n] = in_tree && rf__node_admits_labelled(pb, n, ps);
        e->n_ok[c] += e->ok[c][n];
    }
    return RF_OK;
}

rf_status rf__elig_build(const rf_problem_t *pb, const rf__tree_t *tree, rf__elig_t *e, rf_error_t *err)
{
    return rf__elig_build_cached(pb, tree, NULL, e, err);
}

rf_status rf__elig_build_cached(const rf_problem_t *pb, const rf__tree_t *tree, rf_cluster_cache_t *cache,
                                rf__elig_t *e, rf_error_t *err)
{
    memset(e, 0, sizeof *e);
    for (int32_t g = 0; g < pb->n_gangs; g++)
        e->n_pod_sets += pb->gangs[g].n_pod_sets;
    size_t n_ps = (size_t)e->n_pod_sets + 1;
    e->rep = malloc(n_ps * sizeof *e->rep);
    e->ok = calloc(n_ps, sizeof *e->ok);
    e->n_ok = malloc(n_ps * sizeof *e->n_ok);
    e->class_of = malloc(n_ps * sizeof *e->class_of);
    e->gang_ps0 = malloc(((size_t)pb->n_gangs + 1) * sizeof *e->gang_ps0);
    e->cache_class = malloc(n_ps * sizeof *e->cache_class);
    if (!e->rep || !e->ok || !e->n_ok || !e->class_of || !e->gang_ps0 || !e->cache_class)
        goto oom;
    /* quadratic in distinct classes only: each pod set is compared with the
     * classes found so far */
    int64_t k = 0;
    for (int32_t g = 0; g < pb->n_gangs; g++) {
        e->gang_ps0[g] = (int32_t)k;
        for (int32_t p = 0; p < pb->gangs[g].n_pod_sets; p++, k++) {
            const rf_pod_set_t *ps = &pb->gangs[g].pod_sets[p];
            int32_t c = 0;
            while (c < e->n_classes && !rf__same_eligibility(e->rep[c], ps))
                c++;
            if (c == e->n_classes && s_add_class(e, pb, tree, cache, ps) != RF_OK)
                goto oom;
            e->class_of[k] = c;
        }
    }
    e->gang_ps0[pb->n_gangs] = (int32_t)k;
    return RF_OK;
oom:
    rf__elig_fini(e);
    return rf_error_set(err, RF_ENOMEM, "", "out of memory computing node eligibility");
}

void rf__elig_fini(rf__elig_t *e)
{
    if (e->ok)
        for (int32_t c = 0; c < e->n_classes; c++)
            if (!e->cache_class || e->cache_class[c] < 0)
                free(e->ok[c]);
    free(e->ok);
    free(e->rep);
    free(e->n_ok);
    free(e->class_of);
    free(e->gang_ps0);
    free(e->cache_class);
    memset(e, 0, sizeof *e);
}
