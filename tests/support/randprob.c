/* tests/support/randprob.c: random small problems as JSON (see randprob.h). */
#include "randprob.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    char *s;
    size_t len, cap;
} s_buf_t;

static void s_put(s_buf_t *b, const char *fmt, ...)
{
    va_list ap;
    for (;;) {
        va_start(ap, fmt);
        int n = vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
        va_end(ap);
        if (n >= 0 && (size_t)n < b->cap - b->len) {
            b->len += (size_t)n;
            return;
        }
        b->cap = b->cap * 2 + (size_t)n + 64;
        b->s = realloc(b->s, b->cap);
        if (!b->s)
            abort();
    }
}

static uint64_t s_next(uint64_t *x)
{
    uint64_t z = (*x += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static int s_rand(uint64_t *x, int lo, int hi) /* inclusive */
{
    return lo + (int)(s_next(x) % (uint64_t)(hi - lo + 1));
}

void rf_randprob_default(rf_randprob_opts_t *opts)
{
    opts->max_nodes = 8;
    opts->max_gangs = 5;
    opts->max_pods = 6;
    opts->max_pod_sets = 2;
    opts->bound_percent = 15;
    opts->slice_bound = true;
    opts->max_running = 0;
    opts->overcommit = false;
}

/* Running gangs, drawn after the gangs; their pods go into the nodes' used. */
typedef struct {
    int prio, preemptible, bw, n_ps;
    struct {
        int gpu, cpu, n_pl, node[3], count[3];
    } ps[2];
} s_run_t;

static int s_draw_running(uint64_t *x, int max_running, int N, const int *gpu_cap, int *gpu_used, const int *cpu_cap,
                          int *cpu_used, int *pods_used, s_run_t *run)
{
    int K = s_rand(x, 0, max_running > 8 ? 8 : max_running), k = 0;
    for (int i = 0; i < K; i++) {
        s_run_t *r = &run[k];
        int w = s_rand(x, 0, 9);
        r->prio = w < 6 ? 0 : w < 9 ? 1 : 2;
        r->preemptible = s_rand(x, 0, 3) > 0;
        r->bw = s_rand(x, 1, 2);
        r->n_ps = s_rand(x, 1, 2);
        int placed = 0;
        for (int p = 0; p < r->n_ps; p++) {
            r->ps[p].gpu = s_rand(x, 0, 3) == 0 ? 0 : s_rand(x, 1, 4);
            r->ps[p].cpu = s_rand(x, 0, 2);
            r->ps[p].n_pl = 0;
            int tries = s_rand(x, 1, 3);
            for (int t = 0; t < tries; t++) {
                int n = s_rand(x, 0, N - 1), c = s_rand(x, 1, 2);
                bool dup = false;
                for (int q = 0; q < r->ps[p].n_pl; q++)
                    dup |= r->ps[p].node[q] == n;
                while (c > 0 &&
                       (gpu_used[n] + c * r->ps[p].gpu > gpu_cap[n] || cpu_used[n] + c * r->ps[p].cpu > cpu_cap[n]))
                    c--;
                if (dup || c == 0)
                    continue;
                r->ps[p].node[r->ps[p].n_pl] = n;
                r->ps[p].count[r->ps[p].n_pl++] = c;
                gpu_used[n] += c * r->ps[p].gpu;
                cpu_used[n] += c * r->ps[p].cpu;
                pods_used[n] += c;
            }
            placed += r->ps[p].n_pl > 0;
        }
        if (placed == r->n_ps)
            k++; /* else dropped; its pods stay in used as usage nobody lists */
    }
    return k;
}

/* The draw of one problem: what the gangs and running gangs put into the
 * nodes' `used` is known before the nodes are written. */
typedef struct {
    int count, min, gpu, cpu, slice, slice_level, ps_level, sel, tol;
    int bound_node[4], bound_count[4], n_bound, ranks;
} s_ps_t;

typedef struct {
    int n_ps, prio, req_level, bw;
    s_ps_t ps[4];
} s_gang_t;

typedef struct {
    uint64_t x;
    uint64_t x2; /* the overcommit option's own stream */
    s_buf_t b;
    const rf_randprob_opts_t *o;
    const char *lv[3];
    int nl, N, G, K;
    int gpu_cap[64], gpu_used[64], cpu_cap[64], cpu_used[64], rack[64], block[64], pods_used[64];
    bool has_taint[64];
    s_gang_t g[16];
    s_run_t run[8];
} s_rp_t;

static void s_put_running(s_buf_t *b, const s_run_t *run, int K);

static void s_draw_gang(s_rp_t *c, s_gang_t *g)
{
    const rf_randprob_opts_t *o = c->o;
    g->n_ps = s_rand(&c->x, 1, o->max_pod_sets > 4 ? 4 : o->max_pod_sets);
    g->prio = s_rand(&c->x, 0, 3) == 0 ? 1 : 0;
    g->req_level = s_rand(&c->x, 0, 2) == 0 ? s_rand(&c->x, 0, c->nl - 1) : -1;
    g->bw = s_rand(&c->x, 1, 2);
    for (int p = 0; p < g->n_ps; p++) {
        s_ps_t *ps = &g->ps[p];
        memset(ps, 0, sizeof *ps);
        ps->slice = s_rand(&c->x, 0, 4) == 0 ? 2 : 1;
        int n = s_rand(&c->x, 1, o->max_pods);
        if (ps->slice > 1)
            n = (n + 1) / 2 * 2;
        ps->count = n;
        ps->min = s_rand(&c->x, 0, 2) == 0 ? s_rand(&c->x, 0, n) : n;
        if (ps->slice > 1)
            ps->min = ps->min / 2 * 2;
        ps->gpu = s_rand(&c->x, 0, 3) == 0 ? 0 : s_rand(&c->x, 1, 4);
        ps->cpu = s_rand(&c->x, 0, 3);
        if (o->overcommit && s_rand(&c->x2, 0, 2) == 0)
            ps->cpu = 0;
        ps->slice_level = s_rand(&c->x, g->req_level < 0 ? 0 : g->req_level, c->nl - 1);
        ps->ps_level = s_rand(&c->x, 0, 3) == 0 ? s_rand(&c->x, g->req_level < 0 ? 0 : g->req_level, c->nl - 1) : -1;
        if (ps->slice > 1 && ps->ps_level > ps->slice_level)
            ps->slice_level = ps->ps_level;
        ps->sel = s_rand(&c->x, 0, 5) == 0;
        ps->tol = s_rand(&c->x, 0, 2) == 0;
        if (s_rand(&c->x, 0, 99) < o->bound_percent && (o->slice_bound || ps->slice <= 1)) {
            int left = s_rand(&c->x, 1, n);
            ps->ranks = s_rand(&c->x, 0, 1);
            while (left > 0 && ps->n_bound < 4) {
                int node = s_rand(&c->x, 0, c->N - 1);
                bool dup = false;
                for (int k = 0; k < ps->n_bound; k++)
                    dup |= ps->bound_node[k] == node;
                if (dup)
                    break;
                int k = s_rand(&c->x, 1, left);
                ps->bound_node[ps->n_bound] = node;
                ps->bound_count[ps->n_bound++] = k;
                c->gpu_used[node] += k * ps->gpu;
                c->cpu_used[node] += k * ps->cpu;
                left -= k;
            }
        }
    }
}

static void s_put_nodes(s_rp_t *c)
{
    s_buf_t *b = &c->b;
    for (int n = 0; n < c->N; n++) {
        s_put(b, "%s{\"name\":\"n%d\",\"labels\":{", n ? "," : "", n);
        int first = 1;
        for (int l = 0; l < c->nl; l++) {
            if (s_rand(&c->x, 0, 30) == 0 && strcmp(c->lv[l], "kubernetes.io/hostname") != 0)
                continue; /* a node missing a level label */
            const char *k = c->lv[l];
            if (strcmp(k, "example.com/block") == 0)
                s_put(b, "%s\"%s\":\"b%d\"", first ? "" : ",", k, c->block[n]);
            else if (strcmp(k, "example.com/rack") == 0)
                s_put(b, "%s\"%s\":\"r%d\"", first ? "" : ",", k, c->rack[n]);
            else
                s_put(b, "%s\"%s\":\"n%d\"", first ? "" : ",", k, n);
            first = 0;
        }
        s_put(b, "%s\"pool\":\"%s\"}", first ? "" : ",", n % 3 ? "a" : "b");
        s_put(b, ",\"allocatable\":{\"nvidia.com/gpu\":%d,\"cpu\":\"%d\"%s}", c->gpu_cap[n], c->cpu_cap[n],
              s_rand(&c->x, 0, 3) == 0 ? ",\"pods\":3" : "");
        s_put(b, ",\"used\":{\"nvidia.com/gpu\":%d,\"cpu\":\"%dm\"", c->gpu_used[n], c->cpu_used[n] * 1000);
        if (c->o->max_running > 0)
            s_put(b, ",\"pods\":%d", c->pods_used[n]);
        s_put(b, "}");
        if (c->has_taint[n])
            s_put(b, ",\"taints\":[{\"key\":\"dedicated\",\"value\":\"x\",\"effect\":\"NoSchedule\"}]");
        if (s_rand(&c->x, 0, 9) == 0)
            s_put(b, ",\"unschedulable\":true");
        s_put(b, "}");
    }
}

static void s_put_pod_set(s_rp_t *c, const s_ps_t *ps, int p)
{
    s_buf_t *b = &c->b;
    s_put(b, "%s{\"name\":\"p%d\",\"count\":%d,\"min_count\":%d,\"requests\":{", p ? "," : "", p, ps->count, ps->min);
    s_put(b, "\"cpu\":\"%d\"", ps->cpu);
    if (ps->gpu)
        s_put(b, ",\"nvidia.com/gpu\":%d", ps->gpu);
    s_put(b, "}");
    if (ps->sel)
        s_put(b, ",\"node_selector\":{\"pool\":\"a\"}");
    if (ps->tol)
        s_put(b, ",\"tolerations\":[{\"key\":\"dedicated\",\"operator\":\"Exists\"}]");
    if (ps->slice > 1)
        s_put(b, ",\"slice\":{\"size\":%d,\"required\":\"%s\"}", ps->slice, c->lv[ps->slice_level]);
    if (ps->ps_level >= 0)
        s_put(b, ",\"topology\":{\"required\":\"%s\"}", c->lv[ps->ps_level]);
    if (ps->n_bound > 0) {
        s_put(b, ",\"bound\":[");
        int next_rank = ps->count - 1; /* explicit ranks from the top */
        for (int k = 0; k < ps->n_bound; k++) {
            s_put(b, "%s{\"node\":\"n%d\"", k ? "," : "", ps->bound_node[k]);
            if (ps->ranks) {
                s_put(b, ",\"ranks\":[");
                for (int r = 0; r < ps->bound_count[k]; r++)
                    s_put(b, "%s%d", r ? "," : "", next_rank--);
                s_put(b, "]}");
            } else {
                s_put(b, ",\"count\":%d}", ps->bound_count[k]);
            }
        }
        s_put(b, "]");
    }
    s_put(b, "}");
}

static void s_put_gangs(s_rp_t *c)
{
    for (int i = 0; i < c->G; i++) {
        const s_gang_t *g = &c->g[i];
        s_put(&c->b, "%s{\"name\":\"g%d\",\"priority\":%d,\"bandwidth\":%d", i ? "," : "", i, g->prio, g->bw);
        if (g->req_level >= 0)
            s_put(&c->b, ",\"topology\":{\"required\":\"%s\"}", c->lv[g->req_level]);
        s_put(&c->b, ",\"pod_sets\":[");
        for (int p = 0; p < g->n_ps; p++)
            s_put_pod_set(c, &g->ps[p], p);
        s_put(&c->b, "]}");
    }
}

/* The levels, the level costs and the nodes' capacities. */
static void s_draw_cluster(s_rp_t *c)
{
    s_buf_t *b = &c->b;
    int n_levels = s_rand(&c->x, 1, 3);
    bool hostname = s_rand(&c->x, 0, 3) > 0;
    if (n_levels >= 3)
        c->lv[c->nl++] = "example.com/block";
    if (n_levels >= 2 || !hostname)
        c->lv[c->nl++] = "example.com/rack";
    if (hostname)
        c->lv[c->nl++] = "kubernetes.io/hostname";
    c->N = s_rand(&c->x, 2, c->o->max_nodes > 64 ? 64 : c->o->max_nodes);
    s_put(b, "{\"cluster\":{\"levels\":[");
    for (int l = 0; l < c->nl; l++)
        s_put(b, "%s\"%s\"", l ? "," : "", c->lv[l]);
    s_put(b, "]");
    if (s_rand(&c->x, 0, 2) == 0) {
        s_put(b, ",\"level_costs\":[");
        for (int l = 0; l < c->nl; l++)
            s_put(b, "%s%d", l ? "," : "", s_rand(&c->x, 0, 5) * (c->nl - l));
        s_put(b, "]");
    }
    s_put(b, ",\"nodes\":[");
    int racks = s_rand(&c->x, 1, 3 + c->N / 8);
    for (int n = 0; n < c->N; n++) {
        c->gpu_cap[n] = s_rand(&c->x, 0, 2) ? 4 : s_rand(&c->x, 1, 8);
        c->gpu_used[n] = s_rand(&c->x, 0, 2) ? 0 : s_rand(&c->x, 0, c->gpu_cap[n]);
        c->cpu_cap[n] = s_rand(&c->x, 4, 16);
        c->cpu_used[n] = 0;
        c->rack[n] = s_rand(&c->x, 0, racks - 1);
        c->block[n] = c->rack[n] % 2;
        c->has_taint[n] = s_rand(&c->x, 0, 6) == 0;
    }
}

char *rf_randprob(uint64_t seed, const rf_randprob_opts_t *o)
{
    s_rp_t *c = calloc(1, sizeof *c);
    if (!c)
        abort();
    c->x = seed * 7919 + 17;
    c->x2 = seed * 104729 + 5;
    c->o = o;
    c->b = (s_buf_t){malloc(4096), 0, 4096};
    if (!c->b.s)
        abort();
    s_draw_cluster(c);
    /* bound pods are decided with the gangs but must be in `used`: draw
     * gangs first into a small table */
    c->G = s_rand(&c->x, 1, o->max_gangs);
    if (c->G > 16)
        c->G = 16;
    for (int i = 0; i < c->G; i++)
        s_draw_gang(c, &c->g[i]);
    if (o->max_running > 0) {
        for (int i = 0; i < c->G; i++)
            for (int p = 0; p < c->g[i].n_ps; p++)
                for (int k = 0; k < c->g[i].ps[p].n_bound; k++)
                    c->pods_used[c->g[i].ps[p].bound_node[k]] += c->g[i].ps[p].bound_count[k];
        c->K = s_draw_running(&c->x, o->max_running, c->N, c->gpu_cap, c->gpu_used, c->cpu_cap, c->cpu_used,
                              c->pods_used, c->run);
        for (int i = 0; i < c->G; i++)
            if (s_rand(&c->x, 0, 2) == 0)
                c->g[i].prio = 2;
    }
    for (int n = 0; o->overcommit && n < c->N; n++) /* after the running gangs, placed where there was room */
        if (s_rand(&c->x2, 0, 2) == 0 && c->cpu_used[n] <= c->cpu_cap[n])
            c->cpu_used[n] = c->cpu_cap[n] + s_rand(&c->x2, 1, 3);
    s_put_nodes(c);
    s_put(&c->b, "]},\"gangs\":[");
    s_put_gangs(c);
    s_put(&c->b, "]");
    if (o->max_running > 0)
        s_put_running(&c->b, c->run, c->K);
    s_put(&c->b, ",\"options\":{\"admission\":\"%s\"", s_rand(&c->x, 0, 4) == 0 ? "ordered" : "value");
    if (o->max_running > 0 && s_rand(&c->x, 0, 4) == 0)
        s_put(&c->b, ",\"preemption\":\"never\"");
    s_put(&c->b, "}}");
    char *out = c->b.s;
    free(c);
    return out;
}

static void s_put_running(s_buf_t *b, const s_run_t *run, int K)
{
    s_put(b, ",\"running\":[");
    for (int i = 0; i < K; i++) {
        const s_run_t *r = &run[i];
        s_put(b, "%s{\"name\":\"r%d\",\"priority\":%d,\"bandwidth\":%d%s,\"pod_sets\":[", i ? "," : "", i, r->prio,
              r->bw, r->preemptible ? "" : ",\"preemptible\":false");
        for (int p = 0; p < r->n_ps; p++) {
            s_put(b, "%s{\"name\":\"p%d\",\"requests\":{\"cpu\":\"%d\"", p ? "," : "", p, r->ps[p].cpu);
            if (r->ps[p].gpu)
                s_put(b, ",\"nvidia.com/gpu\":%d", r->ps[p].gpu);
            s_put(b, "},\"placements\":[");
            for (int q = 0; q < r->ps[p].n_pl; q++)
                s_put(b, "%s{\"node\":\"n%d\",\"count\":%d}", q ? "," : "", r->ps[p].node[q], r->ps[p].count[q]);
            s_put(b, "]}");
        }
        s_put(b, "]}");
    }
    s_put(b, "]");
}
