/* solver/answer_json.c: an answer to and from JSON (PLACEMENT-MODEL.md
 * section 3).
 *
 * Writing goes through the one answer encoder, rf_answer_to_doc
 * (solver/answer_doc.c), and serialises its tree with the one JSON writer
 * (base/jw.h): strings JSON-escaped, integers exact, doubles in the shortest
 * form that reads back to the same double (with ".0" added to whole numbers
 * so they stay floats to a reader), the root's pairs and the gangs one per
 * line.
 *
 * Reading goes through the one JSON boundary (base/json.c, via
 * rf__json_parse) into a temporary arena, then a strict extraction: unknown
 * keys and wrong types are errors with the field's contract path; names are
 * resolved to indices (gangs by position and name, pod sets by name, nodes
 * with rf_problem_node). Meaning is left to the checker: placements are kept
 * exactly as written. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "doc.h"
#include "json.h"
#include "jw.h"
#include "rackfit/answer.h"

/* ------------------------------------------------------------------ */
/* Writer                                                               */

/* Shortest text that reads back as the same double; "null" when not finite
 * (never produced by a sane solver: penalties and times are finite). */
static void s_double(rf__jw_t *w, double v)
{
    char tmp[40];
    if (!isfinite(v)) {
        rf__jw_puts(w, "null");
        return;
    }
    int n = 0;
    for (int prec = 15; prec <= 17; prec++) {
        n = snprintf(tmp, sizeof tmp, "%.*g", prec, v);
        if (strtod(tmp, NULL) == v)
            break;
    }
    if (!strpbrk(tmp, ".eEn"))
        n += snprintf(tmp + n, sizeof tmp - (size_t)n, ".0");
    rf__jw_raw(w, tmp, (size_t)n);
}

/* Any document as JSON. `depth` 0 is the root map: its pairs go one per
 * line, and the items of its arrays (gangs, running) one per line too. */
static void s_write(rf__jw_t *w, const rf_doc_t *d, int depth)
{
    switch (d->type) {
    case RF_DOC_NULL:
        rf__jw_puts(w, "null");
        return;
    case RF_DOC_BOOL:
        rf__jw_puts(w, d->u.b ? "true" : "false");
        return;
    case RF_DOC_INT:
        rf__jw_printf(w, "%lld", (long long)d->u.i);
        return;
    case RF_DOC_FLOAT:
        s_double(w, d->u.f);
        return;
    case RF_DOC_STR:
        rf__jw_strn(w, d->u.s, d->len);
        return;
    case RF_DOC_ARRAY:
        rf__jw_raw(w, "[", 1);
        for (uint32_t i = 0; i < d->len; i++) {
            if (i)
                rf__jw_raw(w, ",", 1);
            if (depth == 1)
                rf__jw_raw(w, "\n", 1);
            s_write(w, &d->u.items[i], depth + 1);
        }
        rf__jw_puts(w, depth == 1 && d->len > 0 ? "\n]" : "]");
        return;
    case RF_DOC_MAP:
        rf__jw_raw(w, "{", 1);
        for (uint32_t i = 0; i < d->len; i++) {
            if (i)
                rf__jw_puts(w, depth == 0 ? ",\n" : ",");
            rf__jw_strn(w, d->u.pairs[i].key, d->u.pairs[i].key_len);
            rf__jw_raw(w, ":", 1);
            s_write(w, &d->u.pairs[i].value, depth + 1);
        }
        rf__jw_raw(w, "}", 1);
        return;
    }
}

rf_status rf_answer_to_json(const rf_answer_t *answer, char **out, size_t *len, rf_error_t *err)
{
    if (!answer || !out)
        return rf_error_set(err, RF_EINVAL, "", "rf_answer_to_json: NULL argument");
    rf__arena_t *arena = rf__arena_new(0);
    if (!arena)
        return rf_error_set(err, RF_ENOMEM, "", "out of memory writing the answer");
    rf_doc_t *doc = NULL;
    rf_status rc = rf_answer_to_doc(answer, arena, &doc, err);
    if (rc != RF_OK) {
        rf__arena_destroy(&arena);
        return rc;
    }
    rf__jw_t w;
    rf__jw_init(&w);
    s_write(&w, doc, 0);
    rf__jw_raw(&w, "\n", 1);
    rf__arena_destroy(&arena);
    if (w.oom) {
        rf__jw_fini(&w);
        return rf_error_set(err, RF_ENOMEM, "", "out of memory writing the answer");
    }
    *out = rf__jw_take(&w, len);
    return RF_OK;
}

/* ------------------------------------------------------------------ */
/* Reader                                                               */

typedef struct {
    const rf_problem_t *p;
    rf_answer_t *a;
    rf_error_t *err;
    char path[RF_ERROR_PATH_MAX];
    int plen;
} s_rd_t;

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static rf_status
s_fail(s_rd_t *r, const rf_doc_t *at, const char *fmt, ...)
{
    char msg[RF_ERROR_MESSAGE_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    rf_status rc = rf_error_set(r->err, RF_ESCHEMA, r->path, "%s", msg);
    if (r->err && at)
        r->err->offset = at->offset;
    return rc;
}

static rf_status s_type(s_rd_t *r, const rf_doc_t *v, rf_doc_type want)
{
    if (v->type == want)
        return RF_OK;
    char msg[96];
    snprintf(msg, sizeof msg, "%s, not %s", rf__doc_type_name(want), rf__doc_type_name(v->type));
    return s_fail(r, v, "must be %s", msg);
}

static rf_status s_number(s_rd_t *r, const rf_doc_t *v, double *out)
{
    if (v->type == RF_DOC_INT) {
        *out = (double)v->u.i;
        return RF_OK;
    }
    if (v->type == RF_DOC_FLOAT) {
        *out = v->u.f;
        return RF_OK;
    }
    return s_fail(r, v, "must be a number, not %s", rf__doc_type_name(v->type));
}

static rf_status s_int_in(s_rd_t *r, const rf_doc_t *v, int64_t lo, int64_t hi, int64_t *out)
{
    RF_CALL(s_type(r, v, RF_DOC_INT));
    if (v->u.i < lo || v->u.i > hi) {
        char msg[96];
        snprintf(msg, sizeof msg, "%lld is out of range [%lld, %lld]", (long long)v->u.i, (long long)lo, (long long)hi);
        return s_fail(r, v, "%s", msg);
    }
    *out = v->u.i;
    return RF_OK;
}

/* Path helpers: push a key or an index, pop back to a saved length. */
static int s_pk(s_rd_t *r, const char *key)
{
    int saved = r->plen;
    r->plen = rf__path_key(r->path, r->plen, (int)sizeof r->path, key);
    return saved;
}

static int s_pi(s_rd_t *r, long i)
{
    int saved = r->plen;
    r->plen = rf__path_index(r->path, r->plen, (int)sizeof r->path, i);
    return saved;
}

static void s_pop(s_rd_t *r, int saved)
{
    r->plen = saved;
    r->path[saved] = '\0';
}

static rf_status s_unknown_key(s_rd_t *r, const rf_doc_kv_t *kv)
{
    s_pk(r, kv->key);
    return s_fail(r, &kv->value, "unknown key \"%s\"", kv->key);
}

/* The values of map v's `keys` (NULL-terminated) into `vals` (NULL when
 * absent; of a repeated key, the last): a key not in `keys` is an error, so
 * is a missing one among the first `n_required`. */
static rf_status s_fields(s_rd_t *r, const rf_doc_t *v, const char *const *keys, int n_required, const rf_doc_t **vals)
{
    for (int k = 0; keys[k]; k++)
        vals[k] = NULL;
    for (uint32_t q = 0; q < v->len; q++) {
        const rf_doc_kv_t *kv = &v->u.pairs[q];
        int k = 0;
        while (keys[k] && strcmp(kv->key, keys[k]) != 0)
            k++;
        if (!keys[k])
            return s_unknown_key(r, kv);
        vals[k] = &kv->value;
    }
    for (int k = 0; k < n_required; k++)
        if (!vals[k])
            return s_fail(r, v, "missing key \"%s\"", keys[k]);
    return RF_OK;
}

/* The `name` and the flag (`flag_key`) every gang and running gang starts
 * with: the name must be the problem's (`what` number i, `want`). */
static rf_status s_head(s_rd_t *r, const rf_doc_t *name, const char *want, const char *what, int32_t i,
                        const char *flag_key, const rf_doc_t *flag, bool *out)
{
    int s0 = s_pk(r, "name");
    RF_CALL(s_type(r, name, RF_DOC_STR));
    if (strcmp(name->u.s, want) != 0)
        return s_fail(r, name, "is \"%.180s\", but the problem's %s %d is \"%.180s\"", name->u.s, what, (int)i, want);
    s_pop(r, s0);
    s0 = s_pk(r, flag_key);
    RF_CALL(s_type(r, flag, RF_DOC_BOOL));
    *out = flag->u.b;
    s_pop(r, s0);
    return RF_OK;
}

static rf_status s_read_placements(s_rd_t *r, const rf_doc_t *arr, rf_pod_set_answer_t *pa)
{
    RF_CALL(s_type(r, arr, RF_DOC_ARRAY));
    if (arr->len > (uint32_t)INT32_MAX)
        return s_fail(r, arr, "%s", "too many placements");
    if (arr->len > 0) {
        rf_placement_t *pl = malloc(sizeof *pl * arr->len);
        if (!pl)
            return rf_error_set(r->err, RF_ENOMEM, r->path, "out of memory");
        free(pa->placements);
        pa->placements = pl;
        pa->cap_placements = (int32_t)arr->len;
    }
    pa->n_placements = 0;
    for (uint32_t k = 0; k < arr->len; k++) {
        const rf_doc_t *item = &arr->u.items[k];
        int s0 = s_pi(r, k);
        RF_CALL(s_type(r, item, RF_DOC_MAP));
        int32_t node = -1;
        int64_t count = -1;
        for (uint32_t q = 0; q < item->len; q++) {
            const rf_doc_kv_t *kv = &item->u.pairs[q];
            int s1 = s_pk(r, kv->key);
            if (strcmp(kv->key, "node") == 0) {
                RF_CALL(s_type(r, &kv->value, RF_DOC_STR));
                node = rf_problem_node(r->p, kv->value.u.s);
                if (node < 0)
                    return s_fail(r, &kv->value, "unknown node \"%s\"", kv->value.u.s);
            } else if (strcmp(kv->key, "count") == 0) {
                RF_CALL(s_int_in(r, &kv->value, 1, INT32_MAX, &count));
            } else {
                s_pop(r, s1);
                return s_unknown_key(r, kv);
            }
            s_pop(r, s1);
        }
        if (node < 0)
            return s_fail(r, item, "%s", "missing key \"node\"");
        if (count < 0)
            return s_fail(r, item, "%s", "missing key \"count\"");
        pa->placements[pa->n_placements].node = node;
        pa->placements[pa->n_placements].count = (int32_t)count;
        pa->n_placements++;
        s_pop(r, s0);
    }
    return RF_OK;
}

static rf_status s_read_pod_sets(s_rd_t *r, const rf_doc_t *arr, int32_t g)
{
    const rf_gang_t *gang = &r->p->gangs[g];
    rf_gang_answer_t *ga = &r->a->gangs[g];
    RF_CALL(s_type(r, arr, RF_DOC_ARRAY));
    bool seen_any[64] = {false};
    bool *seen = gang->n_pod_sets <= 64 ? seen_any : calloc((size_t)gang->n_pod_sets, sizeof *seen);
    if (!seen)
        return rf_error_set(r->err, RF_ENOMEM, r->path, "out of memory");
    rf_status rc = RF_OK;
    for (uint32_t i = 0; i < arr->len && rc == RF_OK; i++) {
        const rf_doc_t *item = &arr->u.items[i];
        int s0 = s_pi(r, i);
        if ((rc = s_type(r, item, RF_DOC_MAP)) != RF_OK)
            break;
        static const char *const keys[] = {"name", "placements", NULL};
        const rf_doc_t *f[2];
        if ((rc = s_fields(r, item, keys, 1, f)) != RF_OK)
            break;
        const rf_doc_t *name = f[0], *placements = f[1];
        int s1 = s_pk(r, "name");
        if ((rc = s_type(r, name, RF_DOC_STR)) != RF_OK)
            break;
        int32_t j = 0;
        while (j < gang->n_pod_sets && strcmp(gang->pod_sets[j].name, name->u.s) != 0)
            j++;
        if (j == gang->n_pod_sets) {
            rc = s_fail(r, name, "unknown pod set \"%s\"", name->u.s);
            break;
        }
        if (seen[j]) {
            rc = s_fail(r, name, "pod set \"%s\" is listed twice", name->u.s);
            break;
        }
        seen[j] = true;
        s_pop(r, s1);
        if (placements) {
            s1 = s_pk(r, "placements");
            if ((rc = s_read_placements(r, placements, &ga->pod_sets[j])) != RF_OK)
                break;
            s_pop(r, s1);
        }
        s_pop(r, s0);
    }
    if (seen != seen_any)
        free(seen);
    return rc;
}

static rf_status s_read_why(s_rd_t *r, const rf_doc_t *v, rf_why_t *why)
{
    RF_CALL(s_type(r, v, RF_DOC_MAP));
    for (uint32_t q = 0; q < v->len; q++) {
        const rf_doc_kv_t *kv = &v->u.pairs[q];
        int s0 = s_pk(r, kv->key);
        if (strcmp(kv->key, "level") == 0) {
            RF_CALL(s_type(r, &kv->value, RF_DOC_STR));
            why->level = rf_problem_level(r->p, kv->value.u.s);
            if (why->level < 0)
                return s_fail(r, &kv->value, "unknown level \"%s\"", kv->value.u.s);
        } else if (strcmp(kv->key, "resource") == 0) {
            RF_CALL(s_type(r, &kv->value, RF_DOC_STR));
            int32_t res = 0;
            while (res < r->p->n_resources && strcmp(r->p->resources[res], kv->value.u.s) != 0)
                res++;
            /* a resource no node or pod names is still a fine reason: keep -1 */
            why->resource = res < r->p->n_resources ? res : -1;
        } else if (strcmp(kv->key, "fits") == 0) {
            RF_CALL(s_int_in(r, &kv->value, 0, INT64_MAX, &why->fits));
        } else if (strcmp(kv->key, "needs") == 0) {
            RF_CALL(s_int_in(r, &kv->value, 0, INT64_MAX, &why->needs));
        } else {
            s_pop(r, s0);
            return s_unknown_key(r, kv);
        }
        s_pop(r, s0);
    }
    return RF_OK;
}

static rf_status s_read_gang(s_rd_t *r, const rf_doc_t *v, int32_t g)
{
    const rf_gang_t *gang = &r->p->gangs[g];
    rf_gang_answer_t *ga = &r->a->gangs[g];
    RF_CALL(s_type(r, v, RF_DOC_MAP));
    const rf_doc_t *name = NULL, *admitted = NULL;
    for (uint32_t q = 0; q < v->len; q++) {
        const rf_doc_kv_t *kv = &v->u.pairs[q];
        if (strcmp(kv->key, "name") == 0)
            name = &kv->value;
        else if (strcmp(kv->key, "admitted") == 0)
            admitted = &kv->value;
    }
    if (!name)
        return s_fail(r, v, "%s", "missing key \"name\"");
    if (!admitted)
        return s_fail(r, v, "%s", "missing key \"admitted\"");
    RF_CALL(s_head(r, name, gang->name, "gang", g, "admitted", admitted, &ga->admitted));
    for (uint32_t q = 0; q < v->len; q++) {
        const rf_doc_kv_t *kv = &v->u.pairs[q];
        const rf_doc_t *x = &kv->value;
        if (strcmp(kv->key, "name") == 0 || strcmp(kv->key, "admitted") == 0)
            continue;
        int s1 = s_pk(r, kv->key);
        if (strcmp(kv->key, "pod_sets") == 0) {
            RF_CALL(s_read_pod_sets(r, x, g));
        } else if (strcmp(kv->key, "domains") == 0) {
            RF_CALL(s_type(r, x, RF_DOC_ARRAY));
            if (x->len != (uint32_t)r->p->n_levels) {
                char msg[64];
                snprintf(msg, sizeof msg, "%d", (int)r->p->n_levels);
                return s_fail(r, x, "must have one entry per level (%s)", msg);
            }
            for (uint32_t l = 0; l < x->len; l++) {
                int s2 = s_pi(r, l);
                int64_t d = 0;
                RF_CALL(s_int_in(r, &x->u.items[l], 0, INT32_MAX, &d));
                ga->domains[l] = (int32_t)d;
                s_pop(r, s2);
            }
            ga->has_domains = true;
        } else if (strcmp(kv->key, "penalty") == 0) {
            RF_CALL(s_number(r, x, &ga->penalty));
            ga->has_penalty = true;
        } else if (strcmp(kv->key, "reason") == 0) {
            RF_CALL(s_type(r, x, RF_DOC_STR));
            char *reason = strdup(x->u.s);
            if (!reason)
                return rf_error_set(r->err, RF_ENOMEM, r->path, "out of memory");
            free(ga->reason);
            ga->reason = reason;
        } else if (strcmp(kv->key, "why") == 0) {
            RF_CALL(s_read_why(r, x, &ga->why));
        } else {
            s_pop(r, s1);
            return s_unknown_key(r, kv);
        }
        s_pop(r, s1);
    }
    return RF_OK;
}

static rf_status s_read_value(s_rd_t *r, const rf_doc_t *v)
{
    rf_summary_t *s = &r->a->summary;
    RF_CALL(s_type(r, v, RF_DOC_ARRAY));
    rf_value_t *val = calloc(v->len > 0 ? v->len : 1, sizeof *val);
    if (!val)
        return rf_error_set(r->err, RF_ENOMEM, r->path, "out of memory");
    free(s->value);
    s->value = val;
    s->n_value = 0;
    for (uint32_t i = 0; i < v->len; i++) {
        const rf_doc_t *t = &v->u.items[i];
        int s0 = s_pi(r, i);
        RF_CALL(s_type(r, t, RF_DOC_ARRAY));
        if (t->len != 3)
            return s_fail(r, t, "%s", "must be [priority, units, pods]");
        int64_t x[3] = {0, 0, 0};
        for (uint32_t k = 0; k < 3; k++) {
            int s1 = s_pi(r, k);
            RF_CALL(s_int_in(r, &t->u.items[k], k == 0 ? INT64_MIN : 0, INT64_MAX, &x[k]));
            s_pop(r, s1);
        }
        val[i].priority = x[0];
        val[i].units = x[1];
        val[i].pods = x[2];
        s->n_value++;
        s_pop(r, s0);
    }
    s->has_value = true;
    return RF_OK;
}

static rf_status s_read_summary(s_rd_t *r, const rf_doc_t *v)
{
    rf_summary_t *s = &r->a->summary;
    RF_CALL(s_type(r, v, RF_DOC_MAP));
    bool has_adm = false, has_rej = false;
    for (uint32_t q = 0; q < v->len; q++) {
        const rf_doc_kv_t *kv = &v->u.pairs[q];
        const rf_doc_t *x = &kv->value;
        int s0 = s_pk(r, kv->key);
        int64_t n = 0;
        if (strcmp(kv->key, "admitted") == 0) {
            RF_CALL(s_int_in(r, x, 0, INT32_MAX, &n));
            s->admitted = (int32_t)n;
            has_adm = true;
        } else if (strcmp(kv->key, "rejected") == 0) {
            RF_CALL(s_int_in(r, x, 0, INT32_MAX, &n));
            s->rejected = (int32_t)n;
            has_rej = true;
        } else if (strcmp(kv->key, "preempted") == 0) {
            RF_CALL(s_int_in(r, x, 0, INT32_MAX, &n));
            s->preempted = (int32_t)n;
            s->has_preempted = true;
        } else if (strcmp(kv->key, "value") == 0) {
            RF_CALL(s_read_value(r, x));
        } else if (strcmp(kv->key, "penalty") == 0) {
            RF_CALL(s_number(r, x, &s->penalty));
            s->has_penalty = true;
        } else if (strcmp(kv->key, "penalty_bound") == 0) {
            RF_CALL(s_number(r, x, &s->penalty_bound));
        } else if (strcmp(kv->key, "optimal") == 0) {
            RF_CALL(s_type(r, x, RF_DOC_BOOL));
            s->optimal = x->u.b;
        } else if (strcmp(kv->key, "mode_used") == 0) {
            RF_CALL(s_type(r, x, RF_DOC_STR));
            char *m = strdup(x->u.s);
            if (!m)
                return rf_error_set(r->err, RF_ENOMEM, r->path, "out of memory");
            free(r->a->mode_owned);
            r->a->mode_owned = m;
            s->mode_used = m;
        } else if (strcmp(kv->key, "solve_ms") == 0) {
            RF_CALL(s_number(r, x, &s->solve_ms));
        } else {
            s_pop(r, s0);
            return s_unknown_key(r, kv);
        }
        s_pop(r, s0);
    }
    /* one count alone implies the other: they add up to the gangs */
    if (has_adm || has_rej) {
        if (!has_adm)
            s->admitted = r->a->n_gangs - s->rejected;
        if (!has_rej)
            s->rejected = r->a->n_gangs - s->admitted;
        s->has_counts = true;
    }
    return RF_OK;
}

/* `by`: gang names of the problem, kept as written (order and repeats
 * included) for the checker to judge. */
static rf_status s_read_by(s_rd_t *r, const rf_doc_t *v, rf_running_answer_t *ra)
{
    RF_CALL(s_type(r, v, RF_DOC_ARRAY));
    if (v->len > (uint32_t)INT32_MAX)
        return s_fail(r, v, "%s", "too many entries");
    free(ra->by);
    ra->by = malloc(sizeof *ra->by * (v->len ? v->len : 1));
    ra->n_by = 0;
    if (!ra->by)
        return rf_error_set(r->err, RF_ENOMEM, r->path, "out of memory");
    for (uint32_t k = 0; k < v->len; k++) {
        int s0 = s_pi(r, k);
        const rf_doc_t *x = &v->u.items[k];
        RF_CALL(s_type(r, x, RF_DOC_STR));
        int32_t g = 0;
        while (g < r->p->n_gangs && strcmp(r->p->gangs[g].name, x->u.s) != 0)
            g++;
        if (g == r->p->n_gangs)
            return s_fail(r, x, "unknown gang \"%.200s\" (not in the problem's gangs)", x->u.s);
        ra->by[ra->n_by++] = g;
        s_pop(r, s0);
    }
    return RF_OK;
}

static rf_status s_read_one_running(s_rd_t *r, const rf_doc_t *v, int32_t i)
{
    rf_running_answer_t *ra = &r->a->running[i];
    RF_CALL(s_type(r, v, RF_DOC_MAP));
    /* A running gang is kept or preempted whole: no pod_sets here. */
    static const char *const keys[] = {"name", "preempted", "by", NULL};
    const rf_doc_t *f[3];
    RF_CALL(s_fields(r, v, keys, 2, f));
    const rf_doc_t *name = f[0], *preempted = f[1], *by = f[2];
    RF_CALL(s_head(r, name, r->p->running[i].name, "running gang", i, "preempted", preempted, &ra->preempted));
    if (by) {
        int s0 = s_pk(r, "by");
        RF_CALL(s_read_by(r, by, ra));
        s_pop(r, s0);
    }
    return RF_OK;
}

static rf_status s_read_running(s_rd_t *r, const rf_doc_t *v)
{
    RF_CALL(s_type(r, v, RF_DOC_ARRAY));
    if (v->len != (uint32_t)r->p->n_running)
        return s_fail(r, v, "has %lu running gangs, the problem %d (every running gang once, in order)",
                      (unsigned long)v->len, (int)r->p->n_running);
    for (int32_t i = 0; i < r->p->n_running; i++) {
        int s0 = s_pi(r, i);
        RF_CALL(s_read_one_running(r, &v->u.items[i], i));
        s_pop(r, s0);
    }
    r->a->has_running = true;
    return RF_OK;
}

static rf_status s_read_root(s_rd_t *r, const rf_doc_t *root)
{
    RF_CALL(s_type(r, root, RF_DOC_MAP));
    static const char *const keys[] = {"gangs", "running", "summary", NULL};
    const rf_doc_t *f[3];
    RF_CALL(s_fields(r, root, keys, 1, f));
    const rf_doc_t *gangs = f[0], *running = f[1], *summary = f[2];
    int s0 = s_pk(r, "gangs");
    RF_CALL(s_type(r, gangs, RF_DOC_ARRAY));
    int32_t n = r->p->n_gangs;
    if (gangs->len != (uint32_t)n) {
        char msg[96];
        snprintf(msg, sizeof msg, "has %lu gangs, the problem %d (every gang once, in order)",
                 (unsigned long)gangs->len, (int)n);
        return s_fail(r, gangs, "%s", msg);
    }
    for (int32_t g = 0; g < n; g++) {
        int s1 = s_pi(r, g);
        RF_CALL(s_read_gang(r, &gangs->u.items[g], g));
        s_pop(r, s1);
    }
    s_pop(r, s0);
    if (running) {
        s0 = s_pk(r, "running");
        RF_CALL(s_read_running(r, running));
        s_pop(r, s0);
    } else if (r->p->n_running > 0) {
        return s_fail(r, root, "missing key \"running\" (the problem has %d running gangs: each is kept or preempted)",
                      (int)r->p->n_running);
    }
    if (summary) {
        s0 = s_pk(r, "summary");
        RF_CALL(s_read_summary(r, summary));
        s_pop(r, s0);
    }
    return RF_OK;
}

rf_status rf_answer_from_json(const rf_problem_t *problem, const char *text, size_t len, rf_answer_t **out,
                              rf_error_t *err)
{
    if (!problem || !text || !out)
        return rf_error_set(err, RF_EINVAL, "", "rf_answer_from_json: NULL argument");
    *out = NULL;
    rf_limits_t limits;
    rf_limits_default(&limits);
    rf__arena_t *arena = rf__arena_new(0);
    rf_answer_t *a = rf_answer_new(problem);
    rf_doc_t *root = NULL;
    rf_status rc;
    if (!arena || !a) {
        rc = rf_error_set(err, RF_ENOMEM, "", "out of memory");
        goto done;
    }
    if ((rc = rf__json_parse(text, len, &limits, arena, &root, err)) != RF_OK)
        goto done;
    s_rd_t r = {.p = problem, .a = a, .err = err};
    if ((rc = s_read_root(&r, root)) != RF_OK)
        goto done;
    if (!a->summary.has_counts) {
        a->summary.admitted = 0;
        for (int32_t g = 0; g < a->n_gangs; g++)
            a->summary.admitted += a->gangs[g].admitted;
        a->summary.rejected = a->n_gangs - a->summary.admitted;
    }
    *out = a;
    a = NULL;
done:
    rf_answer_destroy(&a);
    rf__arena_destroy(&arena);
    return rc;
}
