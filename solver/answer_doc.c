/* solver/answer_doc.c: the one answer encoder. An answer becomes an rf_doc
 * tree (base/doc.h) in the contract's shape (PLACEMENT-MODEL.md section 3);
 * the JSON writer (solver/answer_json.c) and the MessagePack codec
 * (service/codec.c) each serialise that tree generically, so the two wire
 * forms cannot drift apart.
 *
 * Invariants of the tree:
 * - keys appear in a fixed order: gangs, running (only when the problem has
 *   running gangs), summary; an admitted gang has name, admitted, pod_sets,
 *   domains, penalty; a rejected one name, admitted, reason, why (only the
 *   fields that apply); a running gang name, preempted and, when preempted,
 *   by; the summary admitted, rejected, preempted (only with running gangs),
 *   value, penalty, penalty_bound, optimal, mode_used, solve_ms;
 * - penalties and times are FLOAT, counts INT;
 * - strings are BORROWED from the problem and the answer (names, reasons,
 *   mode_used): the tree must not outlive either. Every array and map lives
 *   in the arena. */
#include <string.h>

#include "arena.h"
#include "doc.h"
#include "rackfit/answer.h"

/* ----------------------------------------------------------- builders */

typedef struct {
    rf__arena_t *arena;
    bool oom;
} s_b_t;

static rf_doc_t *s_items(s_b_t *b, rf_doc_t *d, uint32_t n)
{
    d->type = RF_DOC_ARRAY;
    d->len = n;
    d->offset = -1;
    d->u.items = rf__arena_alloc(b->arena, sizeof(rf_doc_t) * (n ? n : 1));
    if (!d->u.items)
        b->oom = true;
    return d->u.items;
}

/* A map of `n` pairs; pairs are then filled in order with s_key. */
static rf_doc_kv_t *s_pairs(s_b_t *b, rf_doc_t *d, uint32_t n)
{
    d->type = RF_DOC_MAP;
    d->len = 0;
    d->offset = -1;
    d->u.pairs = rf__arena_alloc(b->arena, sizeof(rf_doc_kv_t) * (n ? n : 1));
    if (!d->u.pairs)
        b->oom = true;
    return d->u.pairs;
}

/* The next pair of map `d` (capacity given to s_pairs), its value to fill. */
static rf_doc_t *s_key(rf_doc_t *d, const char *key)
{
    rf_doc_kv_t *kv = &d->u.pairs[d->len++];
    kv->key = key;
    kv->key_len = (uint32_t)strlen(key);
    kv->value.offset = -1;
    return &kv->value;
}

static void s_int(rf_doc_t *d, int64_t v)
{
    d->type = RF_DOC_INT;
    d->offset = -1;
    d->u.i = v;
}

static void s_float(rf_doc_t *d, double v)
{
    d->type = RF_DOC_FLOAT;
    d->offset = -1;
    d->u.f = v;
}

static void s_bool(rf_doc_t *d, bool v)
{
    d->type = RF_DOC_BOOL;
    d->offset = -1;
    d->u.b = v;
}

/* NULL becomes a null value. */
static void s_str(rf_doc_t *d, const char *s)
{
    d->offset = -1;
    if (!s) {
        d->type = RF_DOC_NULL;
        return;
    }
    d->type = RF_DOC_STR;
    d->len = (uint32_t)strlen(s);
    d->u.s = s;
}

/* ----------------------------------------------------------- the parts */

static void s_placements(s_b_t *b, const rf_problem_t *p, const rf_pod_set_answer_t *pa, rf_doc_t *d)
{
    rf_doc_t *items = s_items(b, d, (uint32_t)pa->n_placements);
    for (int32_t k = 0; items && k < pa->n_placements; k++) {
        const rf_placement_t *pl = &pa->placements[k];
        rf_doc_t *m = &items[k];
        if (!s_pairs(b, m, 2))
            return;
        s_str(s_key(m, "node"), pl->node >= 0 && pl->node < p->n_nodes ? p->nodes[pl->node].name : NULL);
        s_int(s_key(m, "count"), pl->count);
    }
}

static void s_admitted(s_b_t *b, const rf_problem_t *p, const rf_gang_t *gang, const rf_gang_answer_t *ga, rf_doc_t *m)
{
    rf_doc_t *sets = s_key(m, "pod_sets");
    rf_doc_t *items = s_items(b, sets, (uint32_t)gang->n_pod_sets);
    for (int32_t j = 0; items && j < gang->n_pod_sets; j++) {
        rf_doc_t *ps = &items[j];
        if (!s_pairs(b, ps, 2))
            break;
        s_str(s_key(ps, "name"), gang->pod_sets[j].name);
        s_placements(b, p, &ga->pod_sets[j], s_key(ps, "placements"));
    }
    rf_doc_t *dom = s_items(b, s_key(m, "domains"), (uint32_t)p->n_levels);
    for (int32_t l = 0; dom && l < p->n_levels; l++)
        s_int(&dom[l], ga->domains[l]);
    s_float(s_key(m, "penalty"), ga->penalty);
}

static void s_rejected(s_b_t *b, const rf_problem_t *p, const rf_gang_answer_t *ga, rf_doc_t *m)
{
    s_str(s_key(m, "reason"), ga->reason ? ga->reason : "not admitted");
    rf_doc_t *why = s_key(m, "why");
    if (!s_pairs(b, why, 4))
        return;
    if (ga->why.level >= 0 && ga->why.level < p->n_levels)
        s_str(s_key(why, "level"), p->levels[ga->why.level]);
    if (ga->why.resource >= 0 && ga->why.resource < p->n_resources)
        s_str(s_key(why, "resource"), p->resources[ga->why.resource]);
    if (ga->why.fits >= 0)
        s_int(s_key(why, "fits"), ga->why.fits);
    if (ga->why.needs >= 0)
        s_int(s_key(why, "needs"), ga->why.needs);
}

static void s_gangs(s_b_t *b, const rf_answer_t *a, rf_doc_t *d)
{
    const rf_problem_t *p = a->problem;
    rf_doc_t *items = s_items(b, d, (uint32_t)a->n_gangs);
    for (int32_t g = 0; items && g < a->n_gangs; g++) {
        const rf_gang_answer_t *ga = &a->gangs[g];
        rf_doc_t *m = &items[g];
        if (!s_pairs(b, m, 5))
            return;
        s_str(s_key(m, "name"), p->gangs[g].name);
        s_bool(s_key(m, "admitted"), ga->admitted);
        if (ga->admitted)
            s_admitted(b, p, &p->gangs[g], ga, m);
        else
            s_rejected(b, p, ga, m);
    }
}

static void s_running(s_b_t *b, const rf_answer_t *a, rf_doc_t *d)
{
    const rf_problem_t *p = a->problem;
    rf_doc_t *items = s_items(b, d, (uint32_t)a->n_running);
    for (int32_t i = 0; items && i < a->n_running; i++) {
        const rf_running_answer_t *ra = &a->running[i];
        rf_doc_t *m = &items[i];
        if (!s_pairs(b, m, 3))
            return;
        s_str(s_key(m, "name"), p->running[i].name);
        s_bool(s_key(m, "preempted"), ra->preempted);
        if (!ra->preempted)
            continue;
        rf_doc_t *by = s_items(b, s_key(m, "by"), (uint32_t)ra->n_by);
        for (int32_t k = 0; by && k < ra->n_by; k++)
            s_str(&by[k], ra->by[k] >= 0 && ra->by[k] < p->n_gangs ? p->gangs[ra->by[k]].name : NULL);
    }
}

static void s_summary(s_b_t *b, const rf_answer_t *a, rf_doc_t *m)
{
    const rf_summary_t *s = &a->summary;
    if (!s_pairs(b, m, 9))
        return;
    s_int(s_key(m, "admitted"), s->admitted);
    s_int(s_key(m, "rejected"), s->rejected);
    if (a->n_running > 0)
        s_int(s_key(m, "preempted"), s->preempted);
    rf_doc_t *value = s_items(b, s_key(m, "value"), (uint32_t)s->n_value);
    for (int32_t i = 0; value && i < s->n_value; i++) {
        rf_doc_t *t = s_items(b, &value[i], 3);
        if (!t)
            return;
        s_int(&t[0], s->value[i].priority);
        s_int(&t[1], s->value[i].units);
        s_int(&t[2], s->value[i].pods);
    }
    s_float(s_key(m, "penalty"), s->penalty);
    s_float(s_key(m, "penalty_bound"), s->penalty_bound);
    s_bool(s_key(m, "optimal"), s->optimal);
    s_str(s_key(m, "mode_used"), s->mode_used ? s->mode_used : "none");
    s_float(s_key(m, "solve_ms"), s->solve_ms);
}

/* ----------------------------------------------------------- interface */

rf_status rf_answer_to_doc(const rf_answer_t *answer, struct rf__arena *arena, struct rf_doc **out, rf_error_t *err)
{
    if (!answer || !out)
        return rf_error_set(err, RF_EINVAL, "", "rf_answer_to_doc: NULL argument");
    *out = NULL;
    s_b_t b = {arena ? arena : answer->problem->arena, false};
    rf_doc_t *root = rf__arena_alloc(b.arena, sizeof *root);
    if (!root || !s_pairs(&b, root, 3))
        return rf_error_set(err, RF_ENOMEM, "", "out of memory building the answer document");
    s_gangs(&b, answer, s_key(root, "gangs"));
    if (answer->n_running > 0)
        s_running(&b, answer, s_key(root, "running"));
    s_summary(&b, answer, s_key(root, "summary"));
    if (b.oom)
        return rf_error_set(err, RF_ENOMEM, "", "out of memory building the answer document");
    *out = root;
    return RF_OK;
}
