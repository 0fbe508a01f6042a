/* bench/sim_cluster.c: the simulator's clusters (sim.h): read from a
 * contract JSON file, or built from a fabric shape or a Tiresias cluster
 * spec, with a domain id per node and level.
 *
 * Invariants after a load: at least one node; every node has >= 1 GPU and a
 * value for every level; domain ids are dense per level, and two nodes share
 * the id at level l exactly when their label paths agree down to l. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "file.h"
#include "sim.h"

#define S_MAX_FABRIC_NODES (1 << 20)

/* ---- local methods --------------------------------------------------------------------------------------------- */

static rf_status s_alloc(sim_cluster_t *c, int32_t L, int32_t n, rf_error_t *err)
{
    c->L = L;
    c->n_nodes = 0;
    c->names = calloc((size_t)n, sizeof(char *));
    c->vals = calloc((size_t)n * (size_t)L, sizeof(char *));
    c->gpus = calloc((size_t)n, sizeof(int64_t));
    c->dom = calloc((size_t)n * (size_t)L, sizeof(int32_t));
    if (!c->names || !c->vals || !c->gpus || !c->dom)
        return rf_error_set(err, RF_ENOMEM, "", "cluster: out of memory");
    return RF_OK;
}

static rf_status s_add(sim_cluster_t *c, const char *name, const char *const *vals, int64_t gpus, rf_error_t *err)
{
    int32_t i = c->n_nodes;
    c->names[i] = strdup(name);
    if (!c->names[i])
        return rf_error_set(err, RF_ENOMEM, "", "cluster: out of memory");
    c->n_nodes++;
    for (int32_t l = 0; l < c->L; l++) {
        c->vals[(size_t)i * (size_t)c->L + (size_t)l] = strdup(vals[l]);
        if (!c->vals[(size_t)i * (size_t)c->L + (size_t)l])
            return rf_error_set(err, RF_ENOMEM, "", "cluster: out of memory");
    }
    c->gpus[i] = gpus;
    return RF_OK;
}

typedef struct {
    const sim_cluster_t *c;
    int32_t level;
} s_sort_ctx_t;

static s_sort_ctx_t s_sort; /* qsort has no context argument; single-threaded use only */

static int s_cmp_path(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    const sim_cluster_t *c = s_sort.c;
    for (int32_t l = 0; l <= s_sort.level; l++) {
        int r = strcmp(c->vals[(size_t)x * (size_t)c->L + (size_t)l], c->vals[(size_t)y * (size_t)c->L + (size_t)l]);
        if (r)
            return r;
    }
    return (x > y) - (x < y);
}

/* Domain ids per level, GPUs per domain, the host size and the totals. */
static rf_status s_index(sim_cluster_t *c, rf_error_t *err)
{
    if (c->n_nodes == 0)
        return rf_error_set(err, RF_EINVAL, "", "cluster: no node with GPUs and every level label");
    int32_t *order = malloc((size_t)c->n_nodes * sizeof(int32_t));
    if (!order)
        return rf_error_set(err, RF_ENOMEM, "", "cluster: out of memory");
    for (int32_t l = 0; l < c->L; l++) {
        for (int32_t i = 0; i < c->n_nodes; i++)
            order[i] = i;
        s_sort = (s_sort_ctx_t){c, l};
        qsort(order, (size_t)c->n_nodes, sizeof(int32_t), s_cmp_path);
        int32_t id = -1;
        for (int32_t k = 0; k < c->n_nodes; k++) {
            if (k == 0 || s_cmp_path(&order[k - 1], &order[k]) != 0) {
                bool same = k > 0;
                for (int32_t m = 0; same && m <= l; m++)
                    same = strcmp(c->vals[(size_t)order[k - 1] * (size_t)c->L + (size_t)m],
                                  c->vals[(size_t)order[k] * (size_t)c->L + (size_t)m]) == 0;
                if (!same)
                    id++;
            }
            c->dom[(size_t)l * (size_t)c->n_nodes + (size_t)order[k]] = id;
        }
        c->n_dom[l] = id + 1;
        c->dom_gpus[l] = calloc((size_t)c->n_dom[l], sizeof(int64_t));
        if (!c->dom_gpus[l]) {
            free(order);
            return rf_error_set(err, RF_ENOMEM, "", "cluster: out of memory");
        }
        for (int32_t i = 0; i < c->n_nodes; i++)
            c->dom_gpus[l][c->dom[(size_t)l * (size_t)c->n_nodes + (size_t)i]] += c->gpus[i];
    }
    free(order);
    c->total_gpus = 0;
    c->g_host = 0;
    for (int32_t i = 0; i < c->n_nodes; i++) {
        c->total_gpus += c->gpus[i];
        if (c->gpus[i] > c->g_host)
            c->g_host = (int32_t)c->gpus[i];
    }
    return RF_OK;
}

static rf_status s_fabric(sim_cluster_t *c, int32_t B, int32_t R, int32_t H, int32_t G, rf_error_t *err)
{
    if (B < 1 || R < 1 || H < 1 || G < 1 || G > 1024 || (int64_t)B * R * H > S_MAX_FABRIC_NODES)
        return rf_error_set(err, RF_EINVAL, "",
                            "cluster: fabric:BxRxH[xG] needs B, R, H >= 1, 1 <= G <= 1024 and "
                            "at most %d hosts",
                            S_MAX_FABRIC_NODES);
    c->levels[0] = strdup("example.com/block");
    c->levels[1] = strdup("example.com/rack");
    c->levels[2] = strdup(RF_HOSTNAME_LABEL);
    if (!c->levels[0] || !c->levels[1] || !c->levels[2])
        return rf_error_set(err, RF_ENOMEM, "", "cluster: out of memory");
    RF_CALL(s_alloc(c, 3, B * R * H, err));
    for (int32_t b = 0; b < B; b++)
        for (int32_t r = 0; r < R; r++)
            for (int32_t h = 0; h < H; h++) {
                char bn[16], rn[32], hn[48];
                snprintf(bn, sizeof(bn), "b%03d", (int)b);
                snprintf(rn, sizeof(rn), "b%03d-r%03d", (int)b, (int)r);
                snprintf(hn, sizeof(hn), "b%03d-r%03d-h%03d", (int)b, (int)r, (int)h);
                const char *v[3] = {bn, rn, hn};
                RF_CALL(s_add(c, hn, v, G, err));
            }
    snprintf(c->desc, sizeof(c->desc), "fabric %d blocks x %d racks x %d hosts x %d GPUs", (int)B, (int)R, (int)H,
             (int)G);
    return RF_OK;
}

/* A Tiresias cluster spec: header `num_switch,num_node_p_switch,num_gpu_p_node,...`, one row. */
static rf_status s_tiresias(sim_cluster_t *c, const char *path, rf_error_t *err)
{
    char *text = NULL;
    size_t len = 0;
    RF_CALL(rf__read_file(path, 1 << 20, &text, &len, err));
    const char *nl = strchr(text, '\n');
    int sw = 0, nodes = 0, gpus = 0;
    bool ok = strncmp(text, "num_switch,num_node_p_switch,num_gpu_p_node", 43) == 0 && nl &&
              sscanf(nl + 1, "%d,%d,%d", &sw, &nodes, &gpus) == 3;
    free(text);
    if (!ok || sw < 1 || nodes < 1 || gpus < 1 || (int64_t)sw * nodes > S_MAX_FABRIC_NODES)
        return rf_error_set(err, RF_EPARSE, "",
                            "%s: not a Tiresias cluster spec "
                            "(num_switch,num_node_p_switch,num_gpu_p_node,... and one row of positive numbers)",
                            path);
    c->levels[0] = strdup("example.com/rack");
    c->levels[1] = strdup(RF_HOSTNAME_LABEL);
    if (!c->levels[0] || !c->levels[1])
        return rf_error_set(err, RF_ENOMEM, "", "cluster: out of memory");
    RF_CALL(s_alloc(c, 2, sw * nodes, err));
    for (int s = 0; s < sw; s++)
        for (int n = 0; n < nodes; n++) {
            char rn[16], hn[32];
            snprintf(rn, sizeof(rn), "s%02d", s);
            snprintf(hn, sizeof(hn), "s%02d-n%03d", s, n);
            const char *v[2] = {rn, hn};
            RF_CALL(s_add(c, hn, v, gpus, err));
        }
    snprintf(c->desc, sizeof(c->desc), "tiresias %d switches x %d nodes x %d GPUs", sw, nodes, gpus);
    return RF_OK;
}

static rf_status s_json(sim_cluster_t *c, const char *path, rf_error_t *err)
{
    rf_limits_t lim;
    rf_limits_default(&lim);
    lim.max_nodes = lim.max_nodes > S_MAX_FABRIC_NODES ? lim.max_nodes : S_MAX_FABRIC_NODES;
    lim.max_gangs = lim.max_gangs > (1 << 20) ? lim.max_gangs : (1 << 20);
    lim.max_input_bytes = lim.max_input_bytes > ((int64_t)1 << 30) ? lim.max_input_bytes : ((int64_t)1 << 30);
    lim.max_shape_cells = INT64_MAX;
    rf_problem_t *p = NULL;
    RF_CALL(rf_problem_from_json_file(path, &lim, &p, err));
    int32_t gpu = -1;
    for (int32_t r = 0; r < p->n_resources; r++)
        if (strcmp(p->resources[r], "nvidia.com/gpu") == 0)
            gpu = r;
    rf_status st = RF_OK;
    for (int32_t l = 0; l < p->n_levels && st == RF_OK; l++)
        if (!(c->levels[l] = strdup(p->levels[l])))
            st = rf_error_set(err, RF_ENOMEM, "", "cluster: out of memory");
    if (st == RF_OK)
        st = s_alloc(c, p->n_levels, p->n_nodes, err);
    for (int32_t i = 0; st == RF_OK && i < p->n_nodes; i++) {
        const rf_node_t *n = &p->nodes[i];
        const char *v[RF_MAX_LEVELS];
        bool ok = gpu >= 0 && !n->unschedulable && n->allocatable[gpu] > 0;
        for (int32_t l = 0; ok && l < p->n_levels; l++)
            ok = (v[l] = rf_node_label(n, p->levels[l])) != NULL;
        if (ok)
            st = s_add(c, n->name, v, n->allocatable[gpu], err);
        else
            c->dropped++;
    }
    snprintf(c->desc, sizeof(c->desc), "%s (%d nodes)", path, (int)c->n_nodes);
    rf_problem_destroy(&p);
    return st;
}

/* ---- public API ------------------------------------------------------------------------------------------------ */

rf_status sim_cluster_load(const char *spec, sim_cluster_t *c, rf_error_t *err)
{
    memset(c, 0, sizeof(*c));
    rf_status st;
    if (strncmp(spec, "fabric:", 7) == 0) {
        int B = 0, R = 0, H = 0, G = 8;
        char tail;
        int k = sscanf(spec + 7, "%dx%dx%d%c", &B, &R, &H, &tail);
        if (k == 4 && tail == 'x' && sscanf(spec + 7, "%dx%dx%dx%d%c", &B, &R, &H, &G, &tail) == 4)
            k = 3;
        st = k == 3 ? s_fabric(c, B, R, H, G, err)
                    : rf_error_set(err, RF_EINVAL, "", "cluster: '%s': expected fabric:BxRxH or fabric:BxRxHxG", spec);
    } else if (strncmp(spec, "tiresias:", 9) == 0) {
        st = s_tiresias(c, spec + 9, err);
    } else {
        st = s_json(c, spec, err);
    }
    if (st == RF_OK)
        st = s_index(c, err);
    if (st != RF_OK)
        sim_cluster_fini(c);
    return st;
}

void sim_cluster_fini(sim_cluster_t *c)
{
    for (int32_t i = 0; c->names && i < c->n_nodes; i++)
        free(c->names[i]);
    for (int64_t i = 0; c->vals && i < (int64_t)c->n_nodes * c->L; i++)
        free(c->vals[i]);
    for (int32_t l = 0; l < RF_MAX_LEVELS; l++) {
        free(c->levels[l]);
        free(c->dom_gpus[l]);
    }
    free(c->names);
    free(c->vals);
    free(c->gpus);
    free(c->dom);
    memset(c, 0, sizeof(*c));
}

void sim_cluster_topo(const sim_cluster_t *c, comm_topo_t *t)
{
    t->L = c->L;
    t->n_nodes = c->n_nodes;
    t->dom = c->dom;
    t->n_dom = c->n_dom;
    t->dom_gpus = c->dom_gpus;
}
