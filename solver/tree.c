/* solver/tree.c: builds the topology tree of solver/tree.h.
 *
 * Each node's path of level-label values is interned level by level in one
 * open-addressing hash keyed by (parent domain, value), giving domains in
 * first-seen order; a counting sort by parent then renumbers them so each
 * level is contiguous and children sit together, and a second counting sort
 * lays the nodes out in tree order. O(nodes * levels), no string sorting. */
#include "tree.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    int32_t parent; /* first-seen id of the parent, -1 at level 0 */
    int32_t level;
    const char *value;
    uint64_t hash;
} s_key_t;

static uint64_t s_hash(const char *s, int32_t parent)
{
    uint64_t h = 1469598103934665603ULL ^ (uint64_t)(uint32_t)parent * 0x9E3779B97F4A7C15ULL;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h ^ (h >> 29);
}

void rf__tree_fini(rf__tree_t *tree)
{
    if (!tree)
        return;
    free(tree->level);
    free(tree->parent);
    free(tree->child_start);
    free(tree->n_children);
    free(tree->node_start);
    free(tree->node_end);
    free(tree->node_order);
    free(tree->node_dom);
    memset(tree, 0, sizeof *tree);
}

void rf__tree_range(const rf__tree_t *tree, int32_t d, int32_t level, int32_t *first, int32_t *last)
{
    int32_t a = d, b = d + 1; /* [a, b) at the current level */
    for (int32_t l = tree->level[d]; l < level; l++) {
        int32_t na = tree->child_start[a];
        int32_t nb = tree->child_start[b - 1] + tree->n_children[b - 1];
        a = na;
        b = nb;
    }
    *first = a;
    *last = b;
}

/* Intern every labelled node's path of level values: keys[] in first-seen
 * order, first_dom[n * L + l] the first-seen id (-1 for unlabelled nodes).
 * Returns the number of domains; *n_in the nodes in the tree. */
static int32_t s_intern(const rf_problem_t *problem, int32_t *slots, size_t cap, s_key_t *keys, int32_t *first_dom,
                        int32_t *n_in_out)
{
    const int32_t L = problem->n_levels, N = problem->n_nodes;
    int32_t n_dom = 0;
    int32_t n_in = 0;
    for (int32_t n = 0; n < N; n++) {
        const rf_node_t *node = &problem->nodes[n];
        const char *values[RF_MAX_LEVELS];
        int ok = 1;
        for (int32_t l = 0; l < L && ok; l++) {
            values[l] = rf_node_label(node, problem->levels[l]);
            ok = values[l] != NULL;
        }
        if (!ok) {
            for (int32_t l = 0; l < L; l++)
                first_dom[(int64_t)n * L + l] = -1;
            continue;
        }
        n_in++;
        int32_t parent = -1;
        for (int32_t l = 0; l < L; l++) {
            uint64_t h = s_hash(values[l], parent);
            size_t i = h & (cap - 1);
            int32_t found = -1;
            while (slots[i] >= 0) {
                s_key_t *k = &keys[slots[i]];
                if (k->hash == h && k->parent == parent && k->level == l && strcmp(k->value, values[l]) == 0) {
                    found = slots[i];
                    break;
                }
                i = (i + 1) & (cap - 1);
            }
            if (found < 0) {
                found = n_dom++;
                keys[found] = (s_key_t){.parent = parent, .level = l, .value = values[l], .hash = h};
                slots[i] = found;
            }
            first_dom[(int64_t)n * L + l] = found;
            parent = found;
        }
    }

    *n_in_out = n_in;
    return n_dom;
}

/* Renumber: by level, then by parent's new id, then first-seen order.
 * Parents are renumbered before their children, so a stable counting sort
 * per level by new parent id does it. Fills renum[first-seen id], level,
 * parent, child_start, n_children and level_start. count has n_dom + 2. */
static void s_renumber(rf__tree_t *tree, const s_key_t *keys, int32_t n_dom, int32_t *renum, int32_t *count)
{
    const int32_t L = tree->n_levels;
    int32_t next = 0;
    for (int32_t l = 0; l < L; l++) {
        tree->level_start[l] = next;
        if (l == 0) {
            for (int32_t d = 0; d < n_dom; d++)
                if (keys[d].level == 0)
                    renum[d] = next++;
            continue;
        }
        /* counting sort by new parent id; parents of level l are in
         * [level_start[l-1], level_start[l]). */
        int32_t p0 = tree->level_start[l - 1], np = tree->level_start[l] - p0;
        memset(count, 0, ((size_t)np + 1) * sizeof *count);
        for (int32_t d = 0; d < n_dom; d++)
            if (keys[d].level == l)
                count[renum[keys[d].parent] - p0 + 1]++;
        for (int32_t i = 0; i < np; i++)
            count[i + 1] += count[i];
        for (int32_t d = 0; d < n_dom; d++)
            if (keys[d].level == l)
                renum[d] = next + count[renum[keys[d].parent] - p0]++;
        next += count[np];
    }
    tree->level_start[L] = next;
    for (int32_t d = 0; d < n_dom; d++) {
        int32_t nd = renum[d];
        tree->level[nd] = keys[d].level;
        tree->parent[nd] = keys[d].parent < 0 ? -1 : renum[keys[d].parent];
    }
    for (int32_t d = 0; d < n_dom; d++) {
        int32_t p = tree->parent[d];
        if (p >= 0) {
            if (tree->n_children[p] == 0)
                tree->child_start[p] = d;
            tree->n_children[p]++;
        }
    }
}

/* Lay the nodes out in tree order and give every domain its node range. */
static rf_status s_layout(rf__tree_t *tree, const int32_t *first_dom, const int32_t *renum)
{
    const int32_t L = tree->n_levels, N = tree->n_nodes;
    /* nodes in tree order: counting sort by new leaf id (stable in input order) */
    int32_t leaf0 = tree->level_start[L - 1], n_leaf = tree->level_start[L] - leaf0;
    int32_t *lc = calloc((size_t)n_leaf + 1, sizeof *lc);
    if (!lc)
        return RF_ENOMEM;
    for (int32_t n = 0; n < N; n++) {
        for (int32_t l = 0; l < L; l++) {
            int32_t f = first_dom[(int64_t)n * L + l];
            tree->node_dom[(int64_t)n * L + l] = f < 0 ? -1 : renum[f];
        }
        int32_t leaf = tree->node_dom[(int64_t)n * L + L - 1];
        if (leaf >= 0)
            lc[leaf - leaf0 + 1]++;
    }
    for (int32_t i = 0; i < n_leaf; i++)
        lc[i + 1] += lc[i];
    for (int32_t i = 0; i < n_leaf; i++) {
        tree->node_start[leaf0 + i] = lc[i];
        tree->node_end[leaf0 + i] = lc[i + 1];
    }
    for (int32_t n = 0; n < N; n++) {
        int32_t leaf = tree->node_dom[(int64_t)n * L + L - 1];
        if (leaf >= 0)
            tree->node_order[lc[leaf - leaf0]++] = n;
    }
    free(lc);
    /* node ranges of inner domains, deepest first */
    for (int32_t l = L - 2; l >= 0; l--)
        for (int32_t d = tree->level_start[l]; d < tree->level_start[l + 1]; d++) {
            int32_t c0 = tree->child_start[d], c1 = c0 + tree->n_children[d] - 1;
            tree->node_start[d] = tree->node_start[c0];
            tree->node_end[d] = tree->node_end[c1];
        }
    return RF_OK;
}

rf_status rf__tree_build(const rf_problem_t *problem, rf__tree_t *tree, rf_error_t *err)
{
    rf_status rc = RF_ENOMEM;
    const int32_t L = problem->n_levels, N = problem->n_nodes;
    memset(tree, 0, sizeof *tree);
    tree->n_levels = L;
    tree->n_nodes = N;

    int64_t max_dom = (int64_t)N * L;
    size_t cap = 16;
    while ((int64_t)cap < 2 * max_dom + 16)
        cap <<= 1;
    int32_t *slots = malloc(cap * sizeof *slots);
    s_key_t *keys = malloc((size_t)(max_dom + 1) * sizeof *keys);
    int32_t *first_dom = malloc((size_t)(max_dom + 1) * sizeof *first_dom); /* node -> leaf path, first-seen ids */
    int32_t *renum = NULL, *count = NULL;
    tree->node_dom = malloc((size_t)(max_dom + 1) * sizeof *tree->node_dom);
    if (!slots || !keys || !first_dom || !tree->node_dom)
        goto done;
    memset(slots, 0xff, cap * sizeof *slots);

    int32_t n_in = 0;
    int32_t n_dom = s_intern(problem, slots, cap, keys, first_dom, &n_in);

    renum = malloc((size_t)(n_dom + 1) * sizeof *renum);
    count = calloc((size_t)n_dom + 2, sizeof *count);
    tree->n_domains = n_dom;
    tree->level = malloc((size_t)(n_dom + 1) * sizeof(int32_t));
    tree->parent = malloc((size_t)(n_dom + 1) * sizeof(int32_t));
    tree->child_start = calloc((size_t)n_dom + 1, sizeof(int32_t));
    tree->n_children = calloc((size_t)n_dom + 1, sizeof(int32_t));
    tree->node_start = calloc((size_t)n_dom + 1, sizeof(int32_t));
    tree->node_end = calloc((size_t)n_dom + 1, sizeof(int32_t));
    tree->node_order = malloc((size_t)(n_in + 1) * sizeof(int32_t));
    if (!renum || !count || !tree->level || !tree->parent || !tree->child_start || !tree->n_children ||
        !tree->node_start || !tree->node_end || !tree->node_order)
        goto done;

    s_renumber(tree, keys, n_dom, renum, count);
    tree->n_in_tree = n_in;
    if (s_layout(tree, first_dom, renum) != RF_OK)
        goto done;
    rc = RF_OK;
done:
    free(slots);
    free(keys);
    free(first_dom);
    free(renum);
    free(count);
    if (rc != RF_OK) {
        rf__tree_fini(tree);
        rf_error_set(err, rc, "", "out of memory building the topology tree");
    }
    return rc;
}

rf_status rf__tree_of(const rf_problem_t *problem, rf__tree_t *tree, bool *owned, rf_error_t *err)
{
    if (problem->tree_hint) {
        *tree = *(const rf__tree_t *)problem->tree_hint;
        *owned = false;
        return RF_OK;
    }
    *owned = true;
    return rf__tree_build(problem, tree, err);
}
