/* solver/ilp_classes.c: classes of identical nodes for the penalty bounds
 * (solver/ilp_classes.h). */
#include "ilp_classes.h"

#include <stdlib.h>
#include <string.h>

#include "rackfit/quantity.h"

typedef struct {
    int32_t leaf, own, n;
    uint64_t h;
} s_key_t;

static int s_key_cmp(const void *a, const void *b)
{
    const s_key_t *x = a, *y = b;
    if (x->leaf != y->leaf)
        return x->leaf < y->leaf ? -1 : 1;
    if (x->own != y->own)
        return x->own < y->own ? -1 : 1;
    if (x->h != y->h)
        return x->h < y->h ? -1 : 1;
    return (x->n > y->n) - (x->n < y->n);
}

static uint64_t s_mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h * 0x100000001b3ull;
}

/* Same free capacity and eligibility: one unit can hold both. */
static bool s_same_node(const rf__ilp_classes_t *s, int32_t a, int32_t b)
{
    if (!s->coarse &&
        memcmp(&s->free[(int64_t)a * s->R], &s->free[(int64_t)b * s->R], (size_t)s->R * sizeof *s->free) != 0)
        return false;
    for (int32_t c = 0; c < s->elig.n_classes; c++)
        if (s->elig.ok[c][a] != s->elig.ok[c][b])
            return false;
    return true;
}

/* The units, in tree order (the units of any domain are contiguous). */
static bool s_units(rf__ilp_classes_t *s)
{
    const int32_t T = s->tree.n_in_tree;
    s_key_t *k = malloc(((size_t)T + 1) * sizeof *k);
    s->u_node = malloc(((size_t)T + 1) * sizeof *s->u_node);
    s->u_count = malloc(((size_t)T + 1) * sizeof *s->u_count);
    s->u_first = malloc(((size_t)T + 1) * sizeof *s->u_first);
    s->unodes = malloc(((size_t)T + 1) * sizeof *s->unodes);
    if (!k || !s->u_node || !s->u_count || !s->u_first || !s->unodes) {
        free(k);
        return false;
    }
    for (int32_t i = 0; i < T; i++) {
        int32_t n = s->tree.node_order[i];
        uint64_t h = 1469598103934665603ull;
        for (int32_t r = 0; r < s->R && !s->coarse; r++)
            h = s_mix(h, (uint64_t)s->free[(int64_t)n * s->R + r]);
        for (int32_t c = 0; c < s->elig.n_classes; c++)
            h = s_mix(h, s->elig.ok[c][n]);
        k[i] = (s_key_t){.leaf = s->zl > 0 ? rf__tree_node_dom(&s->tree, n, s->zl - 1) : 0,
                         .own = s->bnode[n] ? n : -1,
                         .n = n,
                         .h = h};
    }
    qsort(k, (size_t)T, sizeof *k, s_key_cmp);
    s->n_units = 0;
    for (int32_t i = 0; i < T; i++) {
        int32_t u = s->n_units - 1;
        bool join = u >= 0 && k[i].own < 0 && k[i - 1].own < 0 && k[i].leaf == k[i - 1].leaf && k[i].h == k[i - 1].h &&
                    s_same_node(s, s->u_node[u], k[i].n);
        if (join) {
            s->u_count[u]++;
        } else {
            s->u_node[s->n_units] = k[i].n;
            s->u_first[s->n_units] = i;
            s->u_count[s->n_units++] = 1;
        }
        s->unodes[i] = k[i].n;
        s->node_unit[k[i].n] = s->n_units - 1;
    }
    free(k);
    return true;
}

bool rf__ilp_classes_build(rf__ilp_classes_t *s, const rf_problem_t *pb, bool coarse)
{
    rf_error_t e;
    s->pb = pb;
    s->coarse = coarse;
    s->N = pb->n_nodes;
    s->R = pb->n_resources;
    s->L = pb->n_levels;
    s->host = s->L > 0 && strcmp(pb->levels[s->L - 1], RF_HOSTNAME_LABEL) == 0;
    s->zl = s->host ? s->L - 1 : s->L;
    if (rf__tree_of(pb, &s->tree, &s->tree_owned, &e) != RF_OK)
        return false;
    if (rf__elig_build(pb, &s->tree, &s->elig, &e) != RF_OK)
        return false;
    const size_t N1 = (size_t)s->N + 1;
    s->free = malloc(N1 * (size_t)s->R * sizeof *s->free);
    s->bnode = calloc(N1, sizeof *s->bnode);
    s->node_unit = malloc(N1 * sizeof *s->node_unit);
    if (!s->free || !s->bnode || !s->node_unit)
        return false;
    for (int32_t n = 0; n < s->N; n++)
        for (int32_t r = 0; r < s->R; r++) {
            int64_t al = pb->nodes[n].allocatable[r], us = pb->nodes[n].used[r];
            s->free[(int64_t)n * s->R + r] = al == RF_QTY_UNLIMITED ? RF_QTY_UNLIMITED : (al > us ? al - us : 0);
        }
    for (int32_t g = 0; g < pb->n_gangs; g++)
        for (int32_t p = 0; p < pb->gangs[g].n_pod_sets; p++)
            for (int32_t b = 0; b < pb->gangs[g].pod_sets[p].n_bound; b++)
                s->bnode[pb->gangs[g].pod_sets[p].bound[b].node] = true;
    for (int32_t n = 0; n < s->N; n++)
        s->node_unit[n] = -1;
    return s_units(s);
}

void rf__ilp_classes_fini(rf__ilp_classes_t *s)
{
    if (s->tree_owned)
        rf__tree_fini(&s->tree);
    rf__elig_fini(&s->elig);
    free(s->free);
    free(s->bnode);
    free(s->u_node);
    free(s->u_count);
    free(s->u_first);
    free(s->unodes);
    free(s->node_unit);
    memset(s, 0, sizeof *s);
}

int64_t rf__ilp_classes_fit(const rf__ilp_classes_t *s, const rf_pod_set_t *ps, int32_t n, int64_t cap)
{
    int64_t f = cap;
    for (int32_t r = 0; r < s->R && f > 0; r++) {
        int64_t q = ps->requests[r], fr = s->free[(int64_t)n * s->R + r];
        if (q > 0 && fr != RF_QTY_UNLIMITED && fr / q < f)
            f = fr / q;
    }
    return f;
}
