/* solver/answer.c: answers (include/rackfit/answer.h): build, finish, compare.
 *
 * Invariants:
 * - answer->gangs has problem->n_gangs entries and gangs[g].pod_sets has
 *   problem->gangs[g].n_pod_sets entries, always allocated (a rejected gang
 *   simply holds no placements);
 * - a placement list never holds a count <= 0 when built with rf_answer_add
 *   (answers read from JSON may hold anything the checker should see);
 * - summary.value lists the problem's distinct priorities (gangs' and
 *   running gangs'), highest first;
 * - answer->running has problem->n_running entries; `by` of a kept gang is
 *   empty, and after rf_answer_finish a preempted gang's `by` lists its
 *   preemptors in increasing gang index.
 *
 * rf_answer_finish runs after every solve, on up to 16,384 nodes x 1,000
 * gangs, so it computes each node's domain id per level once per call, by
 * interning (parent domain id, label value) pairs level by level in an
 * open-addressing hash table: a domain is the path of label values from the
 * top level down, and a node that lacks a level's label gets a fresh id of its
 * own at that level and every level below. D(g,l) is then a count of distinct
 * ids, marked with a per-gang stamp. */
#include <assert.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "rackfit/answer.h"

/* ------------------------------------------------------------------ */
/* Local methods                                                        */

static void s_why_none(rf_why_t *why)
{
    why->level = -1;
    why->resource = -1;
    why->fits = -1;
    why->needs = -1;
}

static int s_cmp_prio_desc(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x < y) - (x > y);
}

/* The problem's distinct priorities, highest first, into summary.value
 * (zeroed). Reallocates only when their number changed. */
static rf_status s_value_reset(rf_answer_t *answer)
{
    const rf_problem_t *p = answer->problem;
    int32_t total = p->n_gangs + p->n_running;
    int64_t *prios = malloc(sizeof *prios * (size_t)(total > 0 ? total : 1));
    if (!prios)
        return RF_ENOMEM;
    for (int32_t g = 0; g < p->n_gangs; g++)
        prios[g] = p->gangs[g].priority;
    for (int32_t i = 0; i < p->n_running; i++)
        prios[p->n_gangs + i] = p->running[i].priority;
    qsort(prios, (size_t)total, sizeof *prios, s_cmp_prio_desc);
    int32_t n = 0;
    for (int32_t g = 0; g < total; g++)
        if (n == 0 || prios[n - 1] != prios[g])
            prios[n++] = prios[g];
    rf_summary_t *s = &answer->summary;
    if (n != s->n_value || !s->value) {
        rf_value_t *v = calloc((size_t)(n > 0 ? n : 1), sizeof *v);
        if (!v) {
            free(prios);
            return RF_ENOMEM;
        }
        free(s->value);
        s->value = v;
        s->n_value = n;
    }
    for (int32_t i = 0; i < n; i++) {
        s->value[i].priority = prios[i];
        s->value[i].units = 0;
        s->value[i].pods = 0;
    }
    free(prios);
    return RF_OK;
}

/* Index of `priority` in summary.value (highest first), or -1. */
static int32_t s_value_index(const rf_summary_t *s, int64_t priority)
{
    int32_t lo = 0, hi = s->n_value - 1;
    while (lo <= hi) {
        int32_t mid = lo + (hi - lo) / 2;
        if (s->value[mid].priority == priority)
            return mid;
        if (s->value[mid].priority > priority)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return -1;
}

static int64_t s_sat_add(int64_t a, int64_t b)
{
    int64_t r;
    if (__builtin_add_overflow(a, b, &r))
        return INT64_MAX;
    return r;
}

static int64_t s_sat_mul(int64_t a, int64_t b)
{
    int64_t r;
    if (__builtin_mul_overflow(a, b, &r))
        return INT64_MAX;
    return r;
}

static rf_status s_reserve(rf_pod_set_answer_t *ps, int32_t need)
{
    if (need <= ps->cap_placements)
        return RF_OK;
    rf_placement_t *pl = rf__grow(ps->placements, &ps->cap_placements, need, 4, sizeof *pl);
    if (!pl)
        return RF_ENOMEM;
    ps->placements = pl;
    return RF_OK;
}

/* ------------------------------------------------------------------ */
/* Domain ids (for finish)                                              */

typedef struct {
    const char *value; /* NULL: empty slot */
    uint32_t hash;
    int32_t parent;
    int32_t id;
} s_slot_t;

static uint32_t s_hash(const char *s, int32_t parent)
{
    uint32_t h = 2166136261u ^ (uint32_t)parent * 0x9e3779b1u;
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
        h ^= *c;
        h *= 16777619u;
    }
    h ^= h >> 15;
    h *= 0x2c1b3c6du;
    h ^= h >> 12;
    return h;
}

/* dom[n * n_levels + l] = id of node n's domain at level l; ids are unique
 * across levels and < n_nodes * n_levels. */
static rf_status s_domain_ids(const rf_problem_t *p, const uint8_t *needed, int32_t *dom, int32_t *n_ids)
{
    int32_t L = p->n_levels, N = p->n_nodes;
    /* a level holds at most one domain per needed node: the table is sized
     * (and cleared, per level) by those, not by the cluster */
    size_t n_needed = 0;
    for (int32_t n = 0; n < N; n++)
        n_needed += needed[n] != 0;
    size_t cap = 16;
    while (cap < n_needed * 2)
        cap *= 2;
    s_slot_t *tab = malloc(sizeof *tab * cap);
    if (!tab)
        return RF_ENOMEM;
    int32_t next = 0;
    for (int32_t l = 0; l < L; l++) {
        memset(tab, 0, sizeof *tab * cap);
        const char *key = p->levels[l];
        for (int32_t n = 0; n < N; n++) {
            if (!needed[n])
                continue; /* no admitted gang has a pod there */
            int32_t parent = l > 0 ? dom[(size_t)n * L + l - 1] : -1;
            const char *v = NULL;
            /* once a level label is missing, the node is alone below it */
            if (l == 0 || parent >= 0)
                v = rf_node_label(&p->nodes[n], key);
            if (!v) {
                dom[(size_t)n * L + l] = -1 - next; /* alone: encoded negative below */
                next++;
                continue;
            }
            uint32_t h = s_hash(v, parent);
            size_t i = h & (cap - 1);
            for (;;) {
                s_slot_t *s = &tab[i];
                if (!s->value) {
                    s->value = v;
                    s->hash = h;
                    s->parent = parent;
                    s->id = next++;
                    dom[(size_t)n * L + l] = s->id;
                    break;
                }
                if (s->hash == h && s->parent == parent && strcmp(s->value, v) == 0) {
                    dom[(size_t)n * L + l] = s->id;
                    break;
                }
                i = (i + 1) & (cap - 1);
            }
        }
    }
    /* ids of lone domains were stored as -1 - id so that "parent < 0" marks
     * a node already alone; turn them back into plain ids */
    for (int32_t n = 0; n < N; n++)
        for (int32_t l = 0; n < N && needed[n] && l < L; l++)
            if (dom[(size_t)n * L + l] < 0)
                dom[(size_t)n * L + l] = -1 - dom[(size_t)n * L + l];
    free(tab);
    *n_ids = next;
    return RF_OK;
}

/* ------------------------------------------------------------------ */
/* Running gangs (for finish)                                           */

/* Add gang g to running gang i's `by` unless it is already last (gangs are
 * visited in increasing index, so the list stays sorted and distinct). */
static rf_status s_by_add(rf_running_answer_t *ra, int32_t g, int32_t *cap)
{
    if (ra->n_by > 0 && ra->by[ra->n_by - 1] == g)
        return RF_OK;
    if (ra->n_by >= *cap) {
        int32_t *by = rf__grow(ra->by, cap, (int64_t)ra->n_by + 1, 4, sizeof *by);
        if (!by)
            return RF_ENOMEM;
        ra->by = by;
    }
    ra->by[ra->n_by++] = g;
    return RF_OK;
}

/* Each preempted running gang's `by`, summary.preempted, and the kept
 * running gangs' value and penalty into the summary (whose value array was
 * reset by finish). A node-to-preempted-gangs index (CSR) keeps this linear
 * in the placements. */
static rf_status s_finish_running(rf_answer_t *answer)
{
    const rf_problem_t *p = answer->problem;
    rf_summary_t *s = &answer->summary;
    int32_t N = p->n_nodes;
    s->preempted = 0;
    s->has_preempted = true;
    answer->has_running = true;
    for (int32_t i = 0; i < answer->n_running; i++) {
        const rf_running_t *run = &p->running[i];
        answer->running[i].n_by = 0;
        if (answer->running[i].preempted) {
            s->preempted++;
            continue;
        }
        int32_t vi = s_value_index(s, run->priority);
        if (vi >= 0) {
            s->value[vi].units = s_sat_add(s->value[vi].units, run->units);
            s->value[vi].pods = s_sat_add(s->value[vi].pods, run->pods);
        }
        s->penalty += run->penalty;
    }
    if (s->preempted == 0)
        return RF_OK;
    int32_t *start = calloc((size_t)N + 2, sizeof *start);
    int32_t *caps = calloc((size_t)answer->n_running, sizeof *caps);
    int32_t *list = NULL;
    rf_status rc = RF_ENOMEM;
    if (!start || !caps)
        goto done;
    for (int32_t pass = 0; pass < 2; pass++) { /* count, then fill */
        for (int32_t i = 0; i < answer->n_running; i++) {
            if (!answer->running[i].preempted)
                continue;
            const rf_running_t *run = &p->running[i];
            for (int32_t j = 0; j < run->n_pod_sets; j++)
                for (int32_t k = 0; k < run->pod_sets[j].n_placements; k++) {
                    int32_t n = run->pod_sets[j].placements[k].node;
                    if (pass == 0)
                        start[n + 2]++;
                    else
                        list[start[n + 1]++] = i;
                }
        }
        if (pass == 0) {
            for (int32_t n = 0; n < N; n++)
                start[n + 2] += start[n + 1];
            if (!(list = malloc(sizeof *list * (size_t)(start[N + 1] > 0 ? start[N + 1] : 1))))
                goto done;
        }
    }
    /* now start[n]..start[n + 1] is node n's list */
    rc = RF_OK;
    for (int32_t g = 0; g < answer->n_gangs && rc == RF_OK; g++) {
        const rf_gang_answer_t *ga = &answer->gangs[g];
        if (!ga->admitted)
            continue;
        for (int32_t j = 0; j < p->gangs[g].n_pod_sets && rc == RF_OK; j++)
            for (int32_t k = 0; k < ga->pod_sets[j].n_placements && rc == RF_OK; k++) {
                const rf_placement_t *pl = &ga->pod_sets[j].placements[k];
                if (pl->count <= 0 || pl->node < 0 || pl->node >= N)
                    continue;
                for (int32_t q = start[pl->node]; q < start[pl->node + 1] && rc == RF_OK; q++) {
                    int32_t i = list[q];
                    if (p->gangs[g].priority > p->running[i].priority)
                        rc = s_by_add(&answer->running[i], g, &caps[i]);
                }
            }
    }
done:
    free(start);
    free(caps);
    free(list);
    return rc;
}

/* ------------------------------------------------------------------ */
/* Interface                                                            */

rf_answer_t *rf_answer_new(const rf_problem_t *problem)
{
    assert(problem);
    rf_answer_t *a = calloc(1, sizeof *a);
    if (!a)
        return NULL;
    a->problem = problem;
    a->n_gangs = problem->n_gangs;
    a->gangs = calloc((size_t)(problem->n_gangs > 0 ? problem->n_gangs : 1), sizeof *a->gangs);
    if (!a->gangs)
        goto fail;
    for (int32_t g = 0; g < problem->n_gangs; g++) {
        rf_gang_answer_t *ga = &a->gangs[g];
        int32_t n = problem->gangs[g].n_pod_sets;
        ga->pod_sets = calloc((size_t)(n > 0 ? n : 1), sizeof *ga->pod_sets);
        if (!ga->pod_sets)
            goto fail;
        s_why_none(&ga->why);
    }
    a->n_running = problem->n_running;
    a->running = calloc((size_t)(problem->n_running > 0 ? problem->n_running : 1), sizeof *a->running);
    if (!a->running)
        goto fail;
    if (s_value_reset(a) != RF_OK)
        goto fail;
    a->summary.rejected = problem->n_gangs;
    return a;
fail:
    rf_answer_destroy(&a);
    return NULL;
}

void rf_answer_destroy(rf_answer_t **answer)
{
    if (!answer || !*answer)
        return;
    rf_answer_t *a = *answer;
    if (a->gangs) {
        for (int32_t g = 0; g < a->n_gangs; g++) {
            rf_gang_answer_t *ga = &a->gangs[g];
            if (ga->pod_sets) {
                int32_t n = a->problem->gangs[g].n_pod_sets;
                for (int32_t j = 0; j < n; j++)
                    free(ga->pod_sets[j].placements);
                free(ga->pod_sets);
            }
            free(ga->reason);
        }
        free(a->gangs);
    }
    if (a->running)
        for (int32_t i = 0; i < a->n_running; i++)
            free(a->running[i].by);
    free(a->running);
    free(a->summary.value);
    free(a->mode_owned);
    free(a);
    *answer = NULL;
}

void rf_answer_gang_reset(rf_answer_t *answer, int32_t gang)
{
    assert(answer && gang >= 0 && gang < answer->n_gangs);
    rf_gang_answer_t *ga = &answer->gangs[gang];
    int32_t n = answer->problem->gangs[gang].n_pod_sets;
    for (int32_t j = 0; j < n; j++)
        ga->pod_sets[j].n_placements = 0;
    ga->admitted = false;
    memset(ga->domains, 0, sizeof ga->domains);
    ga->penalty = 0;
    free(ga->reason);
    ga->reason = NULL;
    s_why_none(&ga->why);
    ga->has_domains = false;
    ga->has_penalty = false;
}

rf_status rf_answer_add(rf_answer_t *answer, int32_t gang, int32_t pod_set, int32_t node, int32_t count)
{
    if (!answer || gang < 0 || gang >= answer->n_gangs)
        return RF_EINVAL;
    const rf_problem_t *p = answer->problem;
    if (pod_set < 0 || pod_set >= p->gangs[gang].n_pod_sets || node < 0 || node >= p->n_nodes || count < 0)
        return RF_EINVAL;
    if (count == 0)
        return RF_OK;
    rf_gang_answer_t *ga = &answer->gangs[gang];
    rf_pod_set_answer_t *ps = &ga->pod_sets[pod_set];
    if (ps->n_placements > 0 && ps->placements[ps->n_placements - 1].node == node) {
        rf_placement_t *last = &ps->placements[ps->n_placements - 1];
        if (last->count > INT32_MAX - count)
            return RF_EINVAL;
        last->count += count;
    } else {
        if (ps->n_placements == INT32_MAX)
            return RF_EINVAL;
        RF_CALL(s_reserve(ps, ps->n_placements + 1));
        ps->placements[ps->n_placements].node = node;
        ps->placements[ps->n_placements].count = count;
        ps->n_placements++;
    }
    if (!ga->admitted) {
        ga->admitted = true;
        free(ga->reason);
        ga->reason = NULL;
        s_why_none(&ga->why);
    }
    return RF_OK;
}

rf_status rf_answer_reject(rf_answer_t *answer, int32_t gang, rf_why_t why, const char *fmt, ...)
{
    if (!answer || gang < 0 || gang >= answer->n_gangs)
        return RF_EINVAL;
    rf_answer_gang_reset(answer, gang);
    rf_gang_answer_t *ga = &answer->gangs[gang];
    ga->why = why;
    if (!fmt)
        fmt = "not admitted";
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        n = 0;
    char *r = malloc((size_t)n + 1);
    if (!r)
        return RF_ENOMEM;
    va_start(ap, fmt);
    vsnprintf(r, (size_t)n + 1, fmt, ap);
    va_end(ap);
    ga->reason = r;
    return RF_OK;
}

rf_status rf_answer_preempt(rf_answer_t *answer, int32_t running, bool preempted)
{
    if (!answer || running < 0 || running >= answer->n_running)
        return RF_EINVAL;
    answer->running[running].preempted = preempted;
    if (!preempted)
        answer->running[running].n_by = 0;
    return RF_OK;
}

double rf_answer_kept_penalty(const rf_answer_t *answer)
{
    double pen = 0;
    for (int32_t i = 0; i < answer->n_running; i++)
        if (!answer->running[i].preempted)
            pen += answer->problem->running[i].penalty;
    return pen;
}

rf_status rf_answer_copy(rf_answer_t *dst, const rf_answer_t *src)
{
    if (!dst || !src || dst->problem != src->problem || dst->n_gangs != src->n_gangs)
        return RF_EINVAL;
    if (dst == src)
        return RF_OK;
    const rf_problem_t *p = src->problem;
    for (int32_t g = 0; g < src->n_gangs; g++) {
        const rf_gang_answer_t *sg = &src->gangs[g];
        rf_gang_answer_t *dg = &dst->gangs[g];
        for (int32_t j = 0; j < p->gangs[g].n_pod_sets; j++) {
            const rf_pod_set_answer_t *sp = &sg->pod_sets[j];
            rf_pod_set_answer_t *dp = &dg->pod_sets[j];
            RF_CALL(s_reserve(dp, sp->n_placements));
            if (sp->n_placements > 0)
                memcpy(dp->placements, sp->placements, sizeof *sp->placements * (size_t)sp->n_placements);
            dp->n_placements = sp->n_placements;
        }
        char *reason = NULL;
        if (sg->reason && !(reason = strdup(sg->reason)))
            return RF_ENOMEM;
        free(dg->reason);
        dg->reason = reason;
        dg->admitted = sg->admitted;
        memcpy(dg->domains, sg->domains, sizeof dg->domains);
        dg->penalty = sg->penalty;
        dg->why = sg->why;
        dg->has_domains = sg->has_domains;
        dg->has_penalty = sg->has_penalty;
    }
    for (int32_t i = 0; i < src->n_running; i++) {
        rf_running_answer_t *dr = &dst->running[i];
        const rf_running_answer_t *sr = &src->running[i];
        if (sr->n_by > dr->n_by) {
            int32_t *by = realloc(dr->by, sizeof *by * (size_t)sr->n_by);
            if (!by)
                return RF_ENOMEM;
            dr->by = by;
        }
        if (sr->n_by > 0)
            memcpy(dr->by, sr->by, sizeof *sr->by * (size_t)sr->n_by);
        dr->n_by = sr->n_by;
        dr->preempted = sr->preempted;
    }
    dst->has_running = src->has_running;
    /* summary: value array, then the owned mode string */
    rf_value_t *value = dst->summary.value;
    if (src->summary.n_value != dst->summary.n_value || !value) {
        value = calloc((size_t)(src->summary.n_value > 0 ? src->summary.n_value : 1), sizeof *value);
        if (!value)
            return RF_ENOMEM;
        free(dst->summary.value);
    }
    if (src->summary.n_value > 0)
        memcpy(value, src->summary.value, sizeof *value * (size_t)src->summary.n_value);
    char *mode_owned = NULL;
    if (src->mode_owned && src->summary.mode_used == src->mode_owned) {
        if (!(mode_owned = strdup(src->mode_owned))) {
            dst->summary.value = value;
            dst->summary.n_value = src->summary.n_value;
            return RF_ENOMEM;
        }
    }
    free(dst->mode_owned);
    dst->mode_owned = mode_owned;
    dst->summary = src->summary;
    dst->summary.value = value;
    if (mode_owned)
        dst->summary.mode_used = mode_owned;
    return RF_OK;
}

/* `count` pods of gang answer `ga` on `node` (skipped when either is out of
 * range): added to *n_pods, and each of the node's domains (`dom`, L a node)
 * counted in ga->domains the first time the gang meets it (stamp == mark). */
static void s_meet(rf_gang_answer_t *ga, int32_t node, int32_t count, int32_t N, int32_t L, const int32_t *dom,
                   int32_t *stamp, int32_t mark, int64_t *n_pods)
{
    if (count <= 0 || node < 0 || node >= N)
        return;
    *n_pods += count;
    const int32_t *d = &dom[(size_t)node * L];
    for (int32_t l = 0; l < L; l++)
        if (stamp[d[l]] != mark) {
            stamp[d[l]] = mark;
            ga->domains[l]++;
        }
}

rf_status rf_answer_finish(rf_answer_t *answer)
{
    assert(answer && answer->problem);
    const rf_problem_t *p = answer->problem;
    int32_t L = p->n_levels, N = p->n_nodes;
    rf_status rc = RF_OK;
    size_t total = (size_t)N * (size_t)L;
    int32_t *dom = malloc(sizeof *dom * (total > 0 ? total : 1));
    uint8_t *needed = calloc((size_t)N + 1, 1);
    int32_t *stamp = NULL;
    int32_t n_ids = 0;
    if (!dom || !needed) {
        rc = RF_ENOMEM;
        goto done;
    }
    /* domains are computed only for the nodes admitted gangs use: a batch
     * of one gang on a large cluster need not hash every node's labels */
    for (int32_t g = 0; g < answer->n_gangs; g++) {
        if (!answer->gangs[g].admitted)
            continue;
        for (int32_t j = 0; j < p->gangs[g].n_pod_sets; j++) {
            const rf_pod_set_t *ps = &p->gangs[g].pod_sets[j];
            for (int32_t b = 0; b < ps->n_bound; b++)
                if (ps->bound[b].node >= 0 && ps->bound[b].node < N)
                    needed[ps->bound[b].node] = 1;
            const rf_pod_set_answer_t *pa = &answer->gangs[g].pod_sets[j];
            for (int32_t k = 0; k < pa->n_placements; k++)
                if (pa->placements[k].node >= 0 && pa->placements[k].node < N)
                    needed[pa->placements[k].node] = 1;
        }
    }
    if ((rc = s_domain_ids(p, needed, dom, &n_ids)) != RF_OK)
        goto done;
    stamp = calloc((size_t)(n_ids > 0 ? n_ids : 1), sizeof *stamp);
    if (!stamp) {
        rc = RF_ENOMEM;
        goto done;
    }
    if ((rc = s_value_reset(answer)) != RF_OK)
        goto done;

    rf_summary_t *s = &answer->summary;
    int32_t vr = p->options.value_resource;
    s->admitted = 0;
    s->rejected = 0;
    s->penalty = 0;
    for (int32_t g = 0; g < answer->n_gangs; g++) {
        const rf_gang_t *gang = &p->gangs[g];
        rf_gang_answer_t *ga = &answer->gangs[g];
        memset(ga->domains, 0, sizeof ga->domains);
        ga->penalty = 0;
        ga->has_domains = true;
        ga->has_penalty = true;
        if (!ga->admitted) {
            s->rejected++;
            continue;
        }
        s->admitted++;
        int32_t mark = g + 1;
        int64_t units = 0, pods = 0;
        for (int32_t j = 0; j < gang->n_pod_sets; j++) {
            const rf_pod_set_t *ps = &gang->pod_sets[j];
            const rf_pod_set_answer_t *pa = &ga->pod_sets[j];
            int64_t n_pods = 0;
            for (int32_t b = 0; b < ps->n_bound; b++)
                s_meet(ga, ps->bound[b].node, ps->bound[b].count, N, L, dom, stamp, mark, &n_pods);
            for (int32_t k = 0; k < pa->n_placements; k++)
                s_meet(ga, pa->placements[k].node, pa->placements[k].count, N, L, dom, stamp, mark, &n_pods);
            pods = s_sat_add(pods, n_pods);
            if (vr >= 0 && vr < p->n_resources)
                units = s_sat_add(units, s_sat_mul(n_pods, ps->requests[vr]));
        }
        double pen = 0;
        for (int32_t l = 0; l < L; l++)
            if (ga->domains[l] > 1)
                pen += p->level_costs[l] * (double)(ga->domains[l] - 1);
        ga->penalty = gang->bandwidth * pen;
        s->penalty += ga->penalty;
        int32_t vi = s_value_index(s, gang->priority);
        if (vi >= 0) {
            s->value[vi].units = s_sat_add(s->value[vi].units, units);
            s->value[vi].pods = s_sat_add(s->value[vi].pods, pods);
        }
    }
    if ((rc = s_finish_running(answer)) != RF_OK)
        goto done;
    s->has_counts = true;
    s->has_value = true;
    s->has_penalty = true;
done:
    free(dom);
    free(needed);
    free(stamp);
    return rc;
}

/* Gangs admitted at `priority` (for `ordered` admission: the longest
 * prefix comes first, and admitted gangs are a prefix, so the count is the
 * prefix's length). */
static int32_t s_admitted_at(const rf_answer_t *a, int64_t priority)
{
    int32_t n = 0;
    for (int32_t g = 0; g < a->n_gangs; g++)
        n += a->gangs[g].admitted && a->problem->gangs[g].priority == priority;
    return n;
}

int rf_answer_compare(const rf_answer_t *a, const rf_answer_t *b)
{
    assert(a && b);
    const rf_summary_t *x = &a->summary, *y = &b->summary;
    bool ordered = a->problem && a->problem->options.admission == RF_ADMIT_ORDERED && a->problem == b->problem;
    /* merge by priority, highest first; a priority missing on one side
     * counts as value (0, 0) there */
    int32_t i = 0, j = 0;
    while (i < x->n_value || j < y->n_value) {
        rf_value_t vx = {0, 0, 0}, vy = {0, 0, 0};
        int64_t pr;
        if (j >= y->n_value || (i < x->n_value && x->value[i].priority > y->value[j].priority)) {
            pr = x->value[i].priority;
            vx = x->value[i++];
        } else if (i >= x->n_value || y->value[j].priority > x->value[i].priority) {
            pr = y->value[j].priority;
            vy = y->value[j++];
        } else {
            pr = x->value[i].priority;
            vx = x->value[i++];
            vy = y->value[j++];
        }
        if (ordered) {
            int32_t na = s_admitted_at(a, pr), nb = s_admitted_at(b, pr);
            if (na != nb)
                return na > nb ? -1 : 1;
        }
        if (vx.units != vy.units)
            return vx.units > vy.units ? -1 : 1;
        if (vx.pods != vy.pods)
            return vx.pods > vy.pods ? -1 : 1;
    }
    double pa = x->penalty, pb = y->penalty;
    double scale = fmax(1.0, fmax(fabs(pa), fabs(pb)));
    if (fabs(pa - pb) <= 1e-9 * scale)
        return 0;
    return pa < pb ? -1 : 1;
}
