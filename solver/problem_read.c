/* solver/problem_read.c: the strict schema reader, from a decoded document
 * (base/doc.h, from JSON or MessagePack) to an rf_problem_t, and the public
 * JSON entry points.
 *
 * Every key is checked against the schema of its object (unknown keys are
 * errors), every value against its type, and every string copied into the
 * problem's arena, so nothing of the document outlives the read. A JSON null
 * is read as if the key were absent. Errors carry the field's contract path
 * (a stack of segments in s_rd_t while descending, formatted only for an
 * error) and the document's byte offset.
 *
 * Two passes: the first interns every resource name (allocatable, used,
 * requests, options.value_resource) so that each quantity array is allocated
 * once at its final length; the second reads everything. Rules that concern
 * the whole problem are left to rf_problem_validate, which runs last. */
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "doc.h"
#include "file.h"
#include "json.h"
#include "problem_read.h"
#include "rackfit/problem.h"
#include "rackfit/quantity.h"
#include "rackfit/status.h"

#define S_PATH_CAP RF_ERROR_PATH_MAX

/* ------------------------------------------------------- reader context */

/* The path of the value being read is a stack of segments (a key, or an
 * index when key is NULL), written out as text only when an error needs it:
 * formatting it for every field read costs more than reading the field. */
#define S_SEG_CAP 48

typedef struct {
    const char *key;
    long index;
} s_seg_t;

typedef struct {
    rf_problem_t *p;
    const rf_limits_t *lim;
    rf_error_t *err;
    s_seg_t seg[S_SEG_CAP]; /* contract path of the value being read */
    int n;                  /* segments in use (may exceed S_SEG_CAP: those are dropped) */
    char path[S_PATH_CAP];  /* the text of `seg`, made by s_path */
} s_rd_t;

static const char *const s_root_keys[] = {"cluster", "gangs", "running", "options", NULL};
static const char *const s_cluster_keys[] = {"levels", "level_costs", "nodes", NULL};
static const char *const s_node_keys[] = {"name", "labels", "allocatable", "used", "taints", "unschedulable", NULL};
static const char *const s_taint_keys[] = {"key", "value", "effect", NULL};
static const char *const s_gang_keys[] = {"name", "priority", "bandwidth", "topology", "pod_sets", NULL};
static const char *const s_pod_set_keys[] = {"name",        "count",    "min_count", "requests", "node_selector",
                                             "tolerations", "topology", "slice",     "bound",    NULL};
static const char *const s_toleration_keys[] = {"key", "operator", "value", "effect", NULL};
static const char *const s_topology_keys[] = {"required", "preferred", NULL};
static const char *const s_slice_keys[] = {"size", "required", NULL};
static const char *const s_bound_keys[] = {"node", "count", "ranks", NULL};
static const char *const s_options_keys[] = {"mode",           "time_limit_ms", "threads", "admission",
                                             "value_resource", "preemption",    NULL};
static const char *const s_running_keys[] = {"name", "priority", "bandwidth", "preemptible", "pod_sets", NULL};
static const char *const s_run_pod_set_keys[] = {"name", "requests", "placements", NULL};
static const char *const s_run_placement_keys[] = {"node", "count", NULL};
static const char *const s_run_placement_forbidden[] = {"ranks", NULL};
/* Keys of a pending gang or pod set that a running one must not have: it is
 * where it is. Named apart from unknown keys so the message says why. */
static const char *const s_running_forbidden[] = {"topology", NULL};
static const char *const s_run_pod_set_forbidden[] = {"count",    "min_count", "node_selector", "tolerations",
                                                      "topology", "slice",     "bound",         NULL};

static int s_push_key(s_rd_t *r, const char *key)
{
    int saved = r->n;
    if (r->n < S_SEG_CAP)
        r->seg[r->n] = (s_seg_t){key, 0};
    r->n++;
    return saved;
}

static int s_push_idx(s_rd_t *r, long i)
{
    int saved = r->n;
    if (r->n < S_SEG_CAP)
        r->seg[r->n] = (s_seg_t){NULL, i};
    r->n++;
    return saved;
}

static void s_pop(s_rd_t *r, int saved)
{
    r->n = saved;
}

static const char *s_path(s_rd_t *r)
{
    int len = 0;
    r->path[0] = '\0';
    for (int i = 0; i < r->n && i < S_SEG_CAP; i++)
        len = r->seg[i].key ? rf__path_key(r->path, len, S_PATH_CAP, r->seg[i].key)
                            : rf__path_index(r->path, len, S_PATH_CAP, r->seg[i].index);
    return r->path;
}

/* Fail at the current path, with the offset of `at` (NULL: unknown). */
static rf_status s_fail(s_rd_t *r, rf_status code, const rf_doc_t *at, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
static rf_status s_fail(s_rd_t *r, rf_status code, const rf_doc_t *at, const char *fmt, ...)
{
    char msg[RF_ERROR_MESSAGE_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    rf_error_set(r->err, code, s_path(r), "%s", msg);
    if (r->err)
        r->err->offset = at ? at->offset : -1;
    return code;
}

/* Reads the array X (already checked by s_array) into ARR, allocated in P's
 * arena: item i with READ(r, item, &ARR[i]), under "[i]" in the error path.
 * Like RF_CALL it returns from the caller on the first failure (no cleanup is
 * needed: the arena goes with the problem). The one loop for every list. */
#define S_READ_ITEMS(r, p, x, arr, READ)                                                                               \
    do {                                                                                                               \
        (arr) = rf_problem_alloc((p), (size_t)(x)->len * sizeof *(arr));                                               \
        if (!(arr))                                                                                                    \
            return s_fail((r), RF_ENOMEM, (x), "out of memory");                                                       \
        for (uint32_t s_i_ = 0; s_i_ < (x)->len; s_i_++) {                                                             \
            int s_si_ = s_push_idx((r), s_i_);                                                                         \
            RF_CALL(READ((r), &(x)->u.items[s_i_], &(arr)[s_i_]));                                                     \
            s_pop((r), s_si_);                                                                                         \
        }                                                                                                              \
    } while (0)

/* A field of a map, or NULL when absent or null. Keys are literals: their
 * length is known at compile time (no strlen per lookup). */
static const rf_doc_t *s_get_n(const rf_doc_t *map, const char *key, size_t len)
{
    if (!map || map->type != RF_DOC_MAP)
        return NULL;
    for (uint32_t i = 0; i < map->len; i++) {
        const rf_doc_kv_t *kv = &map->u.pairs[i];
        if (kv->key_len == len && memcmp(kv->key, key, len) == 0)
            return kv->value.type != RF_DOC_NULL ? &kv->value : NULL;
    }
    return NULL;
}
#define s_get(map, lit) s_get_n((map), "" lit, sizeof(lit) - 1)

static bool s_is_member(const char *key, const char *const *list)
{
    for (; list && *list; list++)
        if (strcmp(key, *list) == 0)
            return true;
    return false;
}

static rf_status s_type(s_rd_t *r, const rf_doc_t *v, rf_doc_type type)
{
    if (v->type != type)
        return s_fail(r, RF_ESCHEMA, v, "must be %s, not %s", rf__doc_type_name(type), rf__doc_type_name(v->type));
    return RF_OK;
}

/* A map whose keys are all in `allowed` (or `extra`). */
static rf_status s_object(s_rd_t *r, const rf_doc_t *v, const char *const *allowed, const char *const *extra)
{
    RF_CALL(s_type(r, v, RF_DOC_MAP));
    for (uint32_t i = 0; i < v->len; i++) {
        const rf_doc_kv_t *kv = &v->u.pairs[i];
        if (!s_is_member(kv->key, allowed) && !s_is_member(kv->key, extra)) {
            s_push_key(r, kv->key);
            return s_fail(r, RF_ESCHEMA, &kv->value, "unknown key");
        }
    }
    return RF_OK;
}

/* The same for a running gang's maps: a key in `forbidden` (a pending gang's
 * key) is refused with the reason. */
static rf_status s_running_object(s_rd_t *r, const rf_doc_t *v, const char *const *allowed,
                                  const char *const *forbidden)
{
    RF_CALL(s_type(r, v, RF_DOC_MAP));
    for (uint32_t i = 0; i < v->len; i++) {
        const rf_doc_kv_t *kv = &v->u.pairs[i];
        if (s_is_member(kv->key, forbidden)) {
            s_push_key(r, kv->key);
            return s_fail(r, RF_ESCHEMA, &kv->value,
                          "must not be given for a running gang: it is where it is (see placements)");
        }
    }
    return s_object(r, v, allowed, NULL);
}

/* An array of at most `max` items (RF_ELIMIT naming `limit` beyond). */
static rf_status s_array(s_rd_t *r, const rf_doc_t *v, int64_t max, const char *limit)
{
    RF_CALL(s_type(r, v, RF_DOC_ARRAY));
    if ((int64_t)v->len > max)
        return s_fail(r, RF_ELIMIT, v, "has %lu entries, more than %s (%lld)", (unsigned long)v->len, limit,
                      (long long)max);
    return RF_OK;
}

/* Text (a string value or a key) fit to copy: no NUL inside, within max_string. */
static rf_status s_text_ok(s_rd_t *r, const rf_doc_t *at, const char *s, size_t len)
{
    if (strlen(s) != len)
        return s_fail(r, RF_ESCHEMA, at, "must not contain NUL bytes");
    if (len > (size_t)r->lim->max_string)
        return s_fail(r, RF_ELIMIT, at, "is %zu bytes, longer than max_string (%d)", len, (int)r->lim->max_string);
    return RF_OK;
}

static rf_status s_copy(s_rd_t *r, const rf_doc_t *at, const char *s, size_t len, const char **out)
{
    RF_CALL(s_text_ok(r, at, s, len));
    *out = rf_problem_strdup(r->p, s, len);
    if (!*out)
        return s_fail(r, RF_ENOMEM, at, "out of memory");
    return RF_OK;
}

static rf_status s_str(s_rd_t *r, const rf_doc_t *v, const char **out)
{
    RF_CALL(s_type(r, v, RF_DOC_STR));
    return s_copy(r, v, v->u.s, v->len, out);
}

static rf_status s_int(s_rd_t *r, const rf_doc_t *v, int64_t lo, int64_t hi, int64_t *out)
{
    RF_CALL(s_type(r, v, RF_DOC_INT));
    if (v->u.i < lo)
        return s_fail(r, RF_ESCHEMA, v, "must be >= %lld", (long long)lo);
    if (v->u.i > hi)
        return s_fail(r, RF_ESCHEMA, v, "must be <= %lld", (long long)hi);
    *out = v->u.i;
    return RF_OK;
}

/* A finite number >= 0. */
static rf_status s_nonneg_number(s_rd_t *r, const rf_doc_t *v, double *out)
{
    double d;
    if (v->type == RF_DOC_INT)
        d = (double)v->u.i;
    else if (v->type == RF_DOC_FLOAT)
        d = v->u.f;
    else
        return s_fail(r, RF_ESCHEMA, v, "must be a number, not %s", rf__doc_type_name(v->type));
    if (!isfinite(d) || d < 0)
        return s_fail(r, RF_ESCHEMA, v, "must be a finite number >= 0");
    *out = d;
    return RF_OK;
}

/* One of `names` (NULL-terminated); *out is its index. `expect` lists them
 * for the message. */
static rf_status s_enum(s_rd_t *r, const rf_doc_t *v, const char *const *names, const char *expect, int *out)
{
    RF_CALL(s_type(r, v, RF_DOC_STR));
    for (int i = 0; names[i]; i++)
        if (strlen(names[i]) == v->len && memcmp(names[i], v->u.s, v->len) == 0) {
            *out = i;
            return RF_OK;
        }
    return s_fail(r, RF_ESCHEMA, v, "must be %s, not \"%.100s\"", expect, v->u.s);
}

/* A level by name: -1 never; an unknown name is an error naming it. */
static rf_status s_level(s_rd_t *r, const rf_doc_t *v, int32_t *out)
{
    RF_CALL(s_type(r, v, RF_DOC_STR));
    RF_CALL(s_text_ok(r, v, v->u.s, v->len));
    int32_t l = rf_problem_level(r->p, v->u.s);
    if (l < 0)
        return s_fail(r, RF_ESCHEMA, v, "unknown level \"%.200s\" (not in cluster.levels)", v->u.s);
    *out = l;
    return RF_OK;
}

/* The required, non-empty `name` of map v. */
static rf_status s_name(s_rd_t *r, const rf_doc_t *v, const char **out)
{
    const rf_doc_t *x;
    int sv = s_push_key(r, "name");
    if (!(x = s_get(v, "name")))
        return s_fail(r, RF_ESCHEMA, v, "is required");
    RF_CALL(s_str(r, x, out));
    if (!(*out)[0])
        return s_fail(r, RF_ESCHEMA, x, "must not be empty");
    s_pop(r, sv);
    return RF_OK;
}

/* A gang's or running gang's name, priority and bandwidth. */
static rf_status s_gang_head(s_rd_t *r, const rf_doc_t *v, const char **name, int64_t *priority, double *bandwidth)
{
    const rf_doc_t *x;
    int sv;
    RF_CALL(s_name(r, v, name));
    if ((x = s_get(v, "priority"))) {
        sv = s_push_key(r, "priority");
        RF_CALL(s_int(r, x, INT64_MIN, INT64_MAX, priority));
        s_pop(r, sv);
    }
    if ((x = s_get(v, "bandwidth"))) {
        sv = s_push_key(r, "bandwidth");
        RF_CALL(s_nonneg_number(r, x, bandwidth));
        s_pop(r, sv);
    }
    return RF_OK;
}

/* -------------------------------------------- pass 1: resource interning */

static rf_status s_intern_keys(s_rd_t *r, const rf_doc_t *map)
{
    if (!map || map->type != RF_DOC_MAP)
        return RF_OK; /* pass 2 reports it */
    for (uint32_t i = 0; i < map->len; i++) {
        const rf_doc_kv_t *kv = &map->u.pairs[i];
        int sv = s_push_key(r, kv->key);
        RF_CALL(s_text_ok(r, &kv->value, kv->key, kv->key_len));
        if (kv->key_len == 0)
            return s_fail(r, RF_ESCHEMA, &kv->value, "a resource name must not be empty");
        if (rf_problem_resource(r->p, kv->key) < 0)
            return s_fail(r, RF_ENOMEM, &kv->value, "out of memory");
        if (r->p->n_resources > r->lim->max_resources)
            return s_fail(r, RF_ELIMIT, &kv->value, "is resource number %d, more than max_resources (%d)",
                          (int)r->p->n_resources, (int)r->lim->max_resources);
        s_pop(r, sv);
    }
    return RF_OK;
}

static rf_status s_intern_all(s_rd_t *r, const rf_doc_t *root)
{
    const rf_doc_t *cluster = s_get(root, "cluster");
    const rf_doc_t *nodes = cluster && cluster->type == RF_DOC_MAP ? s_get(cluster, "nodes") : NULL;
    if (nodes && nodes->type == RF_DOC_ARRAY) {
        int s0 = s_push_key(r, "cluster");
        s_push_key(r, "nodes");
        for (uint32_t i = 0; i < nodes->len; i++) {
            const rf_doc_t *node = &nodes->u.items[i];
            if (node->type != RF_DOC_MAP)
                continue;
            int s1 = s_push_idx(r, i);
            int s2 = s_push_key(r, "allocatable");
            RF_CALL(s_intern_keys(r, s_get(node, "allocatable")));
            s_pop(r, s2);
            s_push_key(r, "used");
            RF_CALL(s_intern_keys(r, s_get(node, "used")));
            s_pop(r, s1);
        }
        s_pop(r, s0);
    }
    /* Pending gangs first, then running ones: the same pod_sets[].requests. */
    static const char *const lists[] = {"gangs", "running"};
    for (size_t k = 0; k < sizeof lists / sizeof lists[0]; k++) {
        const rf_doc_t *list = s_get_n(root, lists[k], strlen(lists[k]));
        for (uint32_t g = 0; list && list->type == RF_DOC_ARRAY && g < list->len; g++) {
            const rf_doc_t *gang = &list->u.items[g];
            const rf_doc_t *sets = gang->type == RF_DOC_MAP ? s_get(gang, "pod_sets") : NULL;
            for (uint32_t j = 0; sets && sets->type == RF_DOC_ARRAY && j < sets->len; j++) {
                const rf_doc_t *ps = &sets->u.items[j];
                if (ps->type != RF_DOC_MAP)
                    continue;
                int s0 = s_push_key(r, lists[k]);
                s_push_idx(r, g);
                s_push_key(r, "pod_sets");
                s_push_idx(r, j);
                s_push_key(r, "requests");
                RF_CALL(s_intern_keys(r, s_get(ps, "requests")));
                s_pop(r, s0);
            }
        }
    }
    const rf_doc_t *options = s_get(root, "options");
    const rf_doc_t *vr = options && options->type == RF_DOC_MAP ? s_get(options, "value_resource") : NULL;
    if (vr && vr->type == RF_DOC_STR && vr->len > 0) {
        int s0 = s_push_key(r, "options");
        s_push_key(r, "value_resource");
        RF_CALL(s_text_ok(r, vr, vr->u.s, vr->len));
        if (rf_problem_resource(r->p, vr->u.s) < 0)
            return s_fail(r, RF_ENOMEM, vr, "out of memory");
        if (r->p->n_resources > r->lim->max_resources)
            return s_fail(r, RF_ELIMIT, vr, "is resource number %d, more than max_resources (%d)",
                          (int)r->p->n_resources, (int)r->lim->max_resources);
        s_pop(r, s0);
    }
    return RF_OK;
}

/* ------------------------------------------------------ pass 2: reading */

/* A map of quantities into `q` (n_resources entries, already interned). */
static rf_status s_quantities(s_rd_t *r, const rf_doc_t *v, bool is_requests, int64_t *q)
{
    RF_CALL(s_type(r, v, RF_DOC_MAP));
    for (uint32_t i = 0; i < v->len; i++) {
        const rf_doc_kv_t *kv = &v->u.pairs[i];
        const rf_doc_t *x = &kv->value;
        int sv = s_push_key(r, kv->key);
        RF_CALL(s_text_ok(r, x, kv->key, kv->key_len));
        if (is_requests && strcmp(kv->key, "pods") == 0)
            return s_fail(r, RF_ESCHEMA, x, "must not be given: every pod uses pods: 1");
        int32_t idx = -1;
        for (int32_t k = 0; k < r->p->n_resources; k++)
            if (strcmp(r->p->resources[k], kv->key) == 0)
                idx = k;
        if (idx < 0)
            return s_fail(r, RF_EINTERNAL, x, "resource not interned");
        rf_qty_kind kind = rf_qty_kind_of(kv->key);
        rf_error_t qe;
        rf_error_clear(&qe);
        rf_status st;
        if (x->type == RF_DOC_INT)
            st = rf_qty_from_int(x->u.i, kind, &q[idx], &qe);
        else if (x->type == RF_DOC_FLOAT)
            st = rf_qty_from_double(x->u.f, kind, &q[idx], &qe);
        else if (x->type == RF_DOC_STR)
            st = rf_qty_parse(x->u.s, x->len, kind, &q[idx], &qe);
        else
            return s_fail(r, RF_ESCHEMA, x, "must be a quantity (a number or a string), not %s",
                          rf__doc_type_name(x->type));
        if (st != RF_OK)
            return s_fail(r, st, x, "%s", qe.message[0] ? qe.message : rf_status_message(st));
        s_pop(r, sv);
    }
    return RF_OK;
}

/* A map of string to string (labels, node_selector). */
static rf_status s_labels(s_rd_t *r, const rf_doc_t *v, rf_label_t **out, int32_t *n_out)
{
    RF_CALL(s_type(r, v, RF_DOC_MAP));
    if ((int64_t)v->len > r->lim->max_labels)
        return s_fail(r, RF_ELIMIT, v, "has %lu keys, more than max_labels (%d)", (unsigned long)v->len,
                      (int)r->lim->max_labels);
    rf_label_t *labels = rf_problem_alloc(r->p, (size_t)v->len * sizeof *labels);
    if (!labels)
        return s_fail(r, RF_ENOMEM, v, "out of memory");
    for (uint32_t i = 0; i < v->len; i++) {
        const rf_doc_kv_t *kv = &v->u.pairs[i];
        int sv = s_push_key(r, kv->key);
        if (kv->key_len == 0)
            return s_fail(r, RF_ESCHEMA, &kv->value, "a label key must not be empty");
        RF_CALL(s_copy(r, &kv->value, kv->key, kv->key_len, &labels[i].key));
        RF_CALL(s_str(r, &kv->value, &labels[i].value));
        s_pop(r, sv);
    }
    *out = labels;
    *n_out = (int32_t)v->len;
    return RF_OK;
}

static const char *const s_effect_names[] = {"", "NoSchedule", "PreferNoSchedule", "NoExecute", NULL};

static rf_status s_taint(s_rd_t *r, const rf_doc_t *v, rf_taint_t *t)
{
    const rf_doc_t *x;
    int sv;
    RF_CALL(s_object(r, v, s_taint_keys, NULL));
    sv = s_push_key(r, "key");
    if (!(x = s_get(v, "key")))
        return s_fail(r, RF_ESCHEMA, v, "is required");
    RF_CALL(s_str(r, x, &t->key));
    if (!t->key[0])
        return s_fail(r, RF_ESCHEMA, x, "must not be empty");
    s_pop(r, sv);
    t->value = "";
    if ((x = s_get(v, "value"))) {
        sv = s_push_key(r, "value");
        RF_CALL(s_str(r, x, &t->value));
        s_pop(r, sv);
    }
    sv = s_push_key(r, "effect");
    if (!(x = s_get(v, "effect")))
        return s_fail(r, RF_ESCHEMA, v, "is required");
    int e = 0;
    RF_CALL(s_enum(r, x, s_effect_names, "NoSchedule, PreferNoSchedule or NoExecute", &e));
    if (e == RF_EFFECT_NONE)
        return s_fail(r, RF_ESCHEMA, x, "must be NoSchedule, PreferNoSchedule or NoExecute, not \"\"");
    t->effect = (rf_effect)e;
    s_pop(r, sv);
    return RF_OK;
}

static rf_status s_node(s_rd_t *r, const rf_doc_t *v, rf_node_t *node)
{
    rf_problem_t *p = r->p;
    const rf_doc_t *x;
    int sv;
    RF_CALL(s_object(r, v, s_node_keys, NULL));

    RF_CALL(s_name(r, v, &node->name));

    if ((x = s_get(v, "labels"))) {
        sv = s_push_key(r, "labels");
        RF_CALL(s_labels(r, x, &node->labels, &node->n_labels));
        s_pop(r, sv);
    }

    node->allocatable = rf_problem_alloc(p, (size_t)p->n_resources * sizeof(int64_t));
    node->used = rf_problem_alloc(p, (size_t)p->n_resources * sizeof(int64_t));
    if (!node->allocatable || !node->used)
        return s_fail(r, RF_ENOMEM, v, "out of memory");
    node->allocatable[RF_RES_PODS] = RF_QTY_UNLIMITED;
    if ((x = s_get(v, "allocatable"))) {
        sv = s_push_key(r, "allocatable");
        RF_CALL(s_quantities(r, x, false, node->allocatable));
        s_pop(r, sv);
    }
    if ((x = s_get(v, "used"))) {
        sv = s_push_key(r, "used");
        RF_CALL(s_quantities(r, x, false, node->used));
        s_pop(r, sv);
    }

    if ((x = s_get(v, "taints"))) {
        sv = s_push_key(r, "taints");
        RF_CALL(s_array(r, x, r->lim->max_taints, "max_taints"));
        S_READ_ITEMS(r, p, x, node->taints, s_taint);
        node->n_taints = (int32_t)x->len;
        s_pop(r, sv);
    }

    if ((x = s_get(v, "unschedulable"))) {
        sv = s_push_key(r, "unschedulable");
        RF_CALL(s_type(r, x, RF_DOC_BOOL));
        node->unschedulable = x->u.b;
        s_pop(r, sv);
    }
    return RF_OK;
}

static rf_status s_cluster(s_rd_t *r, const rf_doc_t *v)
{
    rf_problem_t *p = r->p;
    const rf_doc_t *x;
    int sv;
    RF_CALL(s_object(r, v, s_cluster_keys, NULL));

    sv = s_push_key(r, "levels");
    if (!(x = s_get(v, "levels")))
        return s_fail(r, RF_ESCHEMA, v, "is required");
    RF_CALL(s_type(r, x, RF_DOC_ARRAY));
    if (x->len < 1 || x->len > RF_MAX_LEVELS)
        return s_fail(r, RF_ESCHEMA, x, "must list 1 to %d levels, not %lu", RF_MAX_LEVELS, (unsigned long)x->len);
    S_READ_ITEMS(r, p, x, p->levels, s_str);
    p->n_levels = (int32_t)x->len;
    s_pop(r, sv);

    if ((x = s_get(v, "level_costs"))) {
        sv = s_push_key(r, "level_costs");
        RF_CALL(s_type(r, x, RF_DOC_ARRAY));
        if ((int32_t)x->len != p->n_levels)
            return s_fail(r, RF_ESCHEMA, x, "has %lu entries, but there are %d levels", (unsigned long)x->len,
                          (int)p->n_levels);
        S_READ_ITEMS(r, p, x, p->level_costs, s_nonneg_number);
        s_pop(r, sv);
    }

    sv = s_push_key(r, "nodes");
    if (!(x = s_get(v, "nodes")))
        return s_fail(r, RF_ESCHEMA, v, "is required");
    RF_CALL(s_array(r, x, r->lim->max_nodes, "max_nodes"));
    S_READ_ITEMS(r, p, x, p->nodes, s_node);
    p->n_nodes = (int32_t)x->len;
    s_pop(r, sv);
    /* Index names now: `bound` entries refer to nodes by name. */
    return rf_problem_index_nodes(p, r->err);
}

static rf_status s_topology(s_rd_t *r, const rf_doc_t *v, rf_topology_t *t)
{
    const rf_doc_t *x;
    int sv;
    RF_CALL(s_object(r, v, s_topology_keys, NULL));
    if ((x = s_get(v, "required"))) {
        sv = s_push_key(r, "required");
        RF_CALL(s_level(r, x, &t->required));
        s_pop(r, sv);
    }
    if ((x = s_get(v, "preferred"))) {
        sv = s_push_key(r, "preferred");
        RF_CALL(s_level(r, x, &t->preferred));
        s_pop(r, sv);
    }
    return RF_OK;
}

static const char *const s_operator_names[] = {"Equal", "Exists", NULL};

static rf_status s_toleration(s_rd_t *r, const rf_doc_t *v, rf_toleration_t *t)
{
    const rf_doc_t *x;
    int sv;
    RF_CALL(s_object(r, v, s_toleration_keys, NULL));
    t->key = "";
    t->value = "";
    t->op = RF_TOL_EQUAL;
    t->effect = RF_EFFECT_NONE;
    if ((x = s_get(v, "key"))) {
        sv = s_push_key(r, "key");
        RF_CALL(s_str(r, x, &t->key));
        s_pop(r, sv);
    }
    if ((x = s_get(v, "operator"))) {
        int op = 0;
        sv = s_push_key(r, "operator");
        RF_CALL(s_enum(r, x, s_operator_names, "Equal or Exists", &op));
        t->op = (rf_tol_op)op;
        s_pop(r, sv);
    }
    if ((x = s_get(v, "value"))) {
        sv = s_push_key(r, "value");
        RF_CALL(s_str(r, x, &t->value));
        s_pop(r, sv);
    }
    if ((x = s_get(v, "effect"))) {
        int e = 0;
        sv = s_push_key(r, "effect");
        RF_CALL(s_enum(r, x, s_effect_names, "\"\", NoSchedule, PreferNoSchedule or NoExecute", &e));
        t->effect = (rf_effect)e;
        s_pop(r, sv);
    }
    return RF_OK;
}

static rf_status s_slice(s_rd_t *r, const rf_doc_t *v, rf_slice_t *s)
{
    const rf_doc_t *x;
    int sv;
    int64_t size = 0;
    RF_CALL(s_object(r, v, s_slice_keys, NULL));
    sv = s_push_key(r, "size");
    if (!(x = s_get(v, "size")))
        return s_fail(r, RF_ESCHEMA, v, "is required");
    RF_CALL(s_type(r, x, RF_DOC_INT));
    if (x->u.i <= 0)
        return s_fail(r, RF_ESCHEMA, x, "must be > 0");
    RF_CALL(s_int(r, x, 1, INT32_MAX, &size));
    s->size = (int32_t)size;
    s_pop(r, sv);
    sv = s_push_key(r, "required");
    if (!(x = s_get(v, "required")))
        return s_fail(r, RF_ESCHEMA, v, "is required");
    RF_CALL(s_level(r, x, &s->level));
    s_pop(r, sv);
    return RF_OK;
}

static rf_status s_bound(s_rd_t *r, const rf_doc_t *v, rf_bound_t *b)
{
    const rf_doc_t *x, *cnt, *ranks;
    int sv;
    int64_t i64 = 0;
    RF_CALL(s_object(r, v, s_bound_keys, NULL));

    sv = s_push_key(r, "node");
    if (!(x = s_get(v, "node")))
        return s_fail(r, RF_ESCHEMA, v, "is required");
    RF_CALL(s_type(r, x, RF_DOC_STR));
    RF_CALL(s_text_ok(r, x, x->u.s, x->len));
    b->node = rf_problem_node(r->p, x->u.s);
    if (b->node < 0)
        return s_fail(r, RF_ESCHEMA, x, "unknown node \"%.200s\" (not in cluster.nodes)", x->u.s);
    s_pop(r, sv);

    cnt = s_get(v, "count");
    ranks = s_get(v, "ranks");
    if (!cnt && !ranks)
        return s_fail(r, RF_ESCHEMA, v, "needs count or ranks");
    if (cnt) {
        sv = s_push_key(r, "count");
        RF_CALL(s_type(r, cnt, RF_DOC_INT));
        if (cnt->u.i <= 0)
            return s_fail(r, RF_ESCHEMA, cnt, "must be > 0");
        RF_CALL(s_int(r, cnt, 1, INT32_MAX, &i64));
        b->count = (int32_t)i64;
        s_pop(r, sv);
    }
    if (ranks) {
        sv = s_push_key(r, "ranks");
        RF_CALL(s_array(r, ranks, r->lim->max_pods, "max_pods"));
        if (ranks->len == 0)
            return s_fail(r, RF_ESCHEMA, ranks, "must not be empty");
        if (cnt && (int64_t)ranks->len != b->count)
            return s_fail(r, RF_ESCHEMA, ranks, "lists %lu ranks, but count is %d", (unsigned long)ranks->len,
                          (int)b->count);
        b->count = (int32_t)ranks->len;
        b->ranks = rf_problem_alloc(r->p, (size_t)ranks->len * sizeof *b->ranks);
        if (!b->ranks)
            return s_fail(r, RF_ENOMEM, ranks, "out of memory");
        for (uint32_t i = 0; i < ranks->len; i++) {
            int si = s_push_idx(r, i);
            RF_CALL(s_int(r, &ranks->u.items[i], 0, INT32_MAX - 1, &i64));
            b->ranks[i] = (int32_t)i64;
            s_pop(r, si);
        }
        s_pop(r, sv);
    }
    return RF_OK;
}

static rf_status s_pod_set(s_rd_t *r, const rf_doc_t *v, rf_pod_set_t *ps)
{
    rf_problem_t *p = r->p;
    const rf_doc_t *x;
    int sv;
    RF_CALL(s_object(r, v, s_pod_set_keys, NULL));
    rf_pod_set_init(ps);

    RF_CALL(s_name(r, v, &ps->name));

    sv = s_push_key(r, "count");
    if (!(x = s_get(v, "count")))
        return s_fail(r, RF_ESCHEMA, v, "is required");
    RF_CALL(s_type(r, x, RF_DOC_INT));
    if (x->u.i > r->lim->max_pods)
        return s_fail(r, RF_ELIMIT, x, "%lld is more than max_pods (%lld)", (long long)x->u.i,
                      (long long)r->lim->max_pods);
    RF_CALL(s_int(r, x, 1, INT32_MAX, &ps->count));
    s_pop(r, sv);

    if ((x = s_get(v, "min_count"))) {
        sv = s_push_key(r, "min_count");
        RF_CALL(s_int(r, x, 0, INT64_MAX, &ps->min_count)); /* <= count: validate */
        s_pop(r, sv);
    }

    ps->requests = rf_problem_alloc(p, (size_t)p->n_resources * sizeof(int64_t));
    if (!ps->requests)
        return s_fail(r, RF_ENOMEM, v, "out of memory");
    ps->requests[RF_RES_PODS] = 1;
    if ((x = s_get(v, "requests"))) {
        sv = s_push_key(r, "requests");
        RF_CALL(s_quantities(r, x, true, ps->requests));
        s_pop(r, sv);
    }

    if ((x = s_get(v, "node_selector"))) {
        sv = s_push_key(r, "node_selector");
        RF_CALL(s_labels(r, x, &ps->node_selector, &ps->n_node_selector));
        s_pop(r, sv);
    }

    if ((x = s_get(v, "tolerations"))) {
        sv = s_push_key(r, "tolerations");
        RF_CALL(s_array(r, x, r->lim->max_taints, "max_taints"));
        S_READ_ITEMS(r, p, x, ps->tolerations, s_toleration);
        ps->n_tolerations = (int32_t)x->len;
        s_pop(r, sv);
    }

    if ((x = s_get(v, "topology"))) {
        sv = s_push_key(r, "topology");
        RF_CALL(s_topology(r, x, &ps->topology));
        s_pop(r, sv);
    }

    if ((x = s_get(v, "slice"))) {
        sv = s_push_key(r, "slice");
        RF_CALL(s_slice(r, x, &ps->slice));
        s_pop(r, sv);
    }

    if ((x = s_get(v, "bound"))) {
        sv = s_push_key(r, "bound");
        RF_CALL(s_array(r, x, r->lim->max_bound, "max_bound"));
        S_READ_ITEMS(r, p, x, ps->bound, s_bound);
        ps->n_bound = (int32_t)x->len;
        s_pop(r, sv);
    }
    return RF_OK;
}

static rf_status s_gang(s_rd_t *r, const rf_doc_t *v, rf_gang_t *gang)
{
    const rf_doc_t *x;
    int sv;
    RF_CALL(s_object(r, v, s_gang_keys, NULL));
    rf_gang_init(gang);

    RF_CALL(s_gang_head(r, v, &gang->name, &gang->priority, &gang->bandwidth));
    if ((x = s_get(v, "topology"))) {
        sv = s_push_key(r, "topology");
        RF_CALL(s_topology(r, x, &gang->topology));
        s_pop(r, sv);
    }

    sv = s_push_key(r, "pod_sets");
    if (!(x = s_get(v, "pod_sets")))
        return s_fail(r, RF_ESCHEMA, v, "is required");
    RF_CALL(s_array(r, x, r->lim->max_pod_sets, "max_pod_sets"));
    if (x->len == 0)
        return s_fail(r, RF_ESCHEMA, x, "must list at least one pod set");
    S_READ_ITEMS(r, r->p, x, gang->pod_sets, s_pod_set);
    gang->n_pod_sets = (int32_t)x->len;
    s_pop(r, sv);
    return RF_OK;
}

/* ---------------------------------------------------- running gangs */

static rf_status s_run_placement(s_rd_t *r, const rf_doc_t *v, rf_run_placement_t *pl)
{
    const rf_doc_t *x;
    int sv;
    int64_t i64 = 0;
    RF_CALL(s_running_object(r, v, s_run_placement_keys, s_run_placement_forbidden));
    sv = s_push_key(r, "node");
    if (!(x = s_get(v, "node")))
        return s_fail(r, RF_ESCHEMA, v, "is required");
    RF_CALL(s_type(r, x, RF_DOC_STR));
    RF_CALL(s_text_ok(r, x, x->u.s, x->len));
    pl->node = rf_problem_node(r->p, x->u.s);
    if (pl->node < 0)
        return s_fail(r, RF_ESCHEMA, x, "unknown node \"%.200s\" (not in cluster.nodes)", x->u.s);
    s_pop(r, sv);
    sv = s_push_key(r, "count");
    if (!(x = s_get(v, "count")))
        return s_fail(r, RF_ESCHEMA, v, "is required");
    RF_CALL(s_int(r, x, 1, INT32_MAX, &i64));
    pl->count = (int32_t)i64;
    s_pop(r, sv);
    return RF_OK;
}

static rf_status s_run_pod_set(s_rd_t *r, const rf_doc_t *v, rf_run_pod_set_t *ps)
{
    rf_problem_t *p = r->p;
    const rf_doc_t *x;
    int sv;
    RF_CALL(s_running_object(r, v, s_run_pod_set_keys, s_run_pod_set_forbidden));
    RF_CALL(s_name(r, v, &ps->name));

    ps->requests = rf_problem_alloc(p, (size_t)p->n_resources * sizeof(int64_t));
    if (!ps->requests)
        return s_fail(r, RF_ENOMEM, v, "out of memory");
    ps->requests[RF_RES_PODS] = 1;
    if ((x = s_get(v, "requests"))) {
        sv = s_push_key(r, "requests");
        RF_CALL(s_quantities(r, x, true, ps->requests));
        s_pop(r, sv);
    }

    sv = s_push_key(r, "placements");
    if (!(x = s_get(v, "placements")))
        return s_fail(r, RF_ESCHEMA, v, "is required");
    RF_CALL(s_array(r, x, r->lim->max_bound, "max_bound"));
    if (x->len == 0)
        return s_fail(r, RF_ESCHEMA, x, "must list at least one placement");
    S_READ_ITEMS(r, p, x, ps->placements, s_run_placement);
    ps->n_placements = (int32_t)x->len;
    s_pop(r, sv);
    return RF_OK;
}

static rf_status s_running_gang(s_rd_t *r, const rf_doc_t *v, rf_running_t *run)
{
    const rf_doc_t *x;
    int sv;
    RF_CALL(s_running_object(r, v, s_running_keys, s_running_forbidden));
    rf_running_init(run);
    RF_CALL(s_gang_head(r, v, &run->name, &run->priority, &run->bandwidth));
    if ((x = s_get(v, "preemptible"))) {
        sv = s_push_key(r, "preemptible");
        RF_CALL(s_type(r, x, RF_DOC_BOOL));
        run->preemptible = x->u.b;
        s_pop(r, sv);
    }
    sv = s_push_key(r, "pod_sets");
    if (!(x = s_get(v, "pod_sets")))
        return s_fail(r, RF_ESCHEMA, v, "is required");
    RF_CALL(s_array(r, x, r->lim->max_pod_sets, "max_pod_sets"));
    if (x->len == 0)
        return s_fail(r, RF_ESCHEMA, x, "must list at least one pod set");
    S_READ_ITEMS(r, r->p, x, run->pod_sets, s_run_pod_set);
    run->n_pod_sets = (int32_t)x->len;
    s_pop(r, sv);
    return RF_OK;
}

/* `running`: at most max_gangs running gangs (the same bound as `gangs`). */
static rf_status s_running_all(s_rd_t *r, const rf_doc_t *v)
{
    RF_CALL(s_array(r, v, r->lim->max_gangs, "max_gangs"));
    r->p->running = rf_problem_alloc(r->p, (size_t)v->len * sizeof *r->p->running);
    if (!r->p->running)
        return s_fail(r, RF_ENOMEM, v, "out of memory");
    r->p->n_running = (int32_t)v->len;
    for (uint32_t i = 0; i < v->len; i++) {
        int si = s_push_idx(r, i);
        RF_CALL(s_running_gang(r, &v->u.items[i], &r->p->running[i]));
        s_pop(r, si);
    }
    return RF_OK;
}

static const char *const s_mode_names[] = {"auto", "greedy", "ilp", NULL};         /* rf_mode order */
static const char *const s_admission_names[] = {"value", "ordered", NULL};         /* rf_admission order */
static const char *const s_preemption_names[] = {"lower_priority", "never", NULL}; /* rf_preemption order */

static rf_status s_options(s_rd_t *r, const rf_doc_t *v)
{
    rf_options_t *o = &r->p->options;
    const rf_doc_t *x;
    int sv, e = 0;
    RF_CALL(s_object(r, v, s_options_keys, NULL));
    if ((x = s_get(v, "mode"))) {
        sv = s_push_key(r, "mode");
        RF_CALL(s_enum(r, x, s_mode_names, "greedy, ilp or auto", &e));
        o->mode = (rf_mode)e;
        s_pop(r, sv);
    }
    if ((x = s_get(v, "time_limit_ms"))) {
        sv = s_push_key(r, "time_limit_ms");
        RF_CALL(s_int(r, x, 0, INT64_MAX, &o->time_limit_ms));
        s_pop(r, sv);
    }
    if ((x = s_get(v, "threads"))) {
        int64_t t = 0;
        sv = s_push_key(r, "threads");
        RF_CALL(s_int(r, x, 0, INT32_MAX, &t));
        o->threads = (int32_t)t;
        s_pop(r, sv);
    }
    if ((x = s_get(v, "admission"))) {
        sv = s_push_key(r, "admission");
        RF_CALL(s_enum(r, x, s_admission_names, "value or ordered", &e));
        o->admission = (rf_admission)e;
        s_pop(r, sv);
    }
    if ((x = s_get(v, "value_resource"))) {
        sv = s_push_key(r, "value_resource");
        RF_CALL(s_str(r, x, &o->value_resource_name));
        if (!o->value_resource_name[0])
            return s_fail(r, RF_ESCHEMA, x, "must not be empty");
        s_pop(r, sv);
    }
    if ((x = s_get(v, "preemption"))) {
        sv = s_push_key(r, "preemption");
        RF_CALL(s_enum(r, x, s_preemption_names, "lower_priority or never", &e));
        o->preemption = (rf_preemption)e;
        s_pop(r, sv);
    }
    return RF_OK;
}

static rf_status s_read_batch(s_rd_t *r, const rf_doc_t *root);

static rf_status s_read(s_rd_t *r, const rf_doc_t *root, const char *const *extra_keys)
{
    const rf_doc_t *x;
    int sv;
    RF_CALL(s_object(r, root, s_root_keys, extra_keys));
    RF_CALL(s_intern_all(r, root));

    sv = s_push_key(r, "cluster");
    if (!(x = s_get(root, "cluster")))
        return s_fail(r, RF_ESCHEMA, root, "is required");
    RF_CALL(s_cluster(r, x));
    s_pop(r, sv);

    RF_CALL(s_read_batch(r, root));
    return rf_problem_validate(r->p, r->lim, r->err);
}

/* The batch of a problem: `gangs` (required) and `options`. */
static rf_status s_read_batch(s_rd_t *r, const rf_doc_t *root)
{
    const rf_doc_t *x;
    int sv;
    sv = s_push_key(r, "gangs");
    if (!(x = s_get(root, "gangs")))
        return s_fail(r, RF_ESCHEMA, root, "is required");
    RF_CALL(s_array(r, x, r->lim->max_gangs, "max_gangs"));
    S_READ_ITEMS(r, r->p, x, r->p->gangs, s_gang);
    r->p->n_gangs = (int32_t)x->len;
    s_pop(r, sv);

    if ((x = s_get(root, "running"))) {
        sv = s_push_key(r, "running");
        RF_CALL(s_running_all(r, x));
        s_pop(r, sv);
    }

    if ((x = s_get(root, "options"))) {
        sv = s_push_key(r, "options");
        RF_CALL(s_options(r, x));
        s_pop(r, sv);
    }
    return RF_OK;
}

/* ------------------------------------------------------------ interface */

rf_status rf__problem_from_doc(const rf_doc_t *root, const char *const *extra_keys, const rf_limits_t *limits,
                               rf_problem_t **out, rf_error_t *err)
{
    rf_limits_t defaults;
    if (!limits) {
        rf_limits_default(&defaults);
        limits = &defaults;
    }
    *out = NULL;
    rf_error_clear(err);
    if (!root)
        return rf_error_set(err, RF_EINVAL, "", "no document");
    s_rd_t r = {.p = rf_problem_new(), .lim = limits, .err = err, .n = 0};
    if (!r.p)
        return rf_error_set(err, RF_ENOMEM, "", "out of memory");
    rf_status st = s_read(&r, root, extra_keys);
    if (st != RF_OK) {
        rf_problem_destroy(&r.p);
        return st;
    }
    *out = r.p;
    return RF_OK;
}

static const char *const s_batch_keys[] = {"gangs", "running", "options", NULL};

/* Copy the cluster's nodes into `p` so that rf_problem_validate may touch
 * them (it sorts labels and rebuilds the name index): node structs and label
 * arrays are copied, quantity arrays copied at p's (possibly longer)
 * resource count; names, label strings and taints stay borrowed. */
static rf_status s_own_nodes(rf_problem_t *p, const rf_problem_t *cluster, rf_error_t *err)
{
    int32_t n = cluster->n_nodes, R = p->n_resources, Rc = cluster->n_resources;
    rf_node_t *nodes = rf_problem_alloc(p, (size_t)(n ? n : 1) * sizeof *nodes);
    int64_t *q = rf_problem_alloc(p, (size_t)n * 2 * (size_t)R * sizeof *q + 1);
    if (!nodes || !q)
        return rf_error_set(err, RF_ENOMEM, "", "out of memory copying %d nodes", (int)n);
    for (int32_t i = 0; i < n; i++) {
        const rf_node_t *src = &cluster->nodes[i];
        nodes[i] = *src;
        if (src->n_labels > 0) {
            nodes[i].labels = rf_problem_alloc(p, (size_t)src->n_labels * sizeof *src->labels);
            if (!nodes[i].labels)
                return rf_error_set(err, RF_ENOMEM, "", "out of memory copying labels");
            memcpy(nodes[i].labels, src->labels, (size_t)src->n_labels * sizeof *src->labels);
        }
        nodes[i].allocatable = q + (size_t)i * 2 * (size_t)R;
        nodes[i].used = nodes[i].allocatable + R;
        memcpy(nodes[i].allocatable, src->allocatable, (size_t)Rc * sizeof *q);
        memcpy(nodes[i].used, src->used, (size_t)Rc * sizeof *q);
    }
    p->nodes = nodes;
    p->n_nodes = n;
    p->node_by_name = NULL;
    return RF_OK;
}

rf_status rf__problem_from_doc_on(const rf_doc_t *root, const char *const *extra_keys, const rf_problem_t *cluster,
                                  const rf_limits_t *limits, rf_problem_t **out, rf_error_t *err)
{
    rf_limits_t defaults;
    if (!limits) {
        rf_limits_default(&defaults);
        limits = &defaults;
    }
    *out = NULL;
    rf_error_clear(err);
    if (!root || !cluster)
        return rf_error_set(err, RF_EINVAL, "", "no document or no cluster");
    s_rd_t r = {.p = rf_problem_new(), .lim = limits, .err = err, .n = 0};
    if (!r.p)
        return rf_error_set(err, RF_ENOMEM, "", "out of memory");
    rf_problem_t *p = r.p;
    rf_status st = s_object(&r, root, s_batch_keys, extra_keys);
    if (st != RF_OK)
        goto done;

    /* The cluster's resources first, in its order: its quantity arrays stay
     * valid as prefixes of ours. */
    p->levels = cluster->levels;
    p->level_costs = cluster->level_costs;
    p->n_levels = cluster->n_levels;
    for (int32_t k = 1; k < cluster->n_resources; k++)
        if (rf_problem_resource(p, cluster->resources[k]) != k) {
            st = rf_error_set(err, RF_ENOMEM, "", "out of memory");
            goto done;
        }
    if ((st = s_intern_all(&r, root)) != RF_OK)
        goto done;
    /* Bound pods name nodes: resolve them against the cluster's index. */
    p->nodes = cluster->nodes;
    p->n_nodes = cluster->n_nodes;
    p->node_by_name = cluster->node_by_name;
    p->tree_hint = cluster->tree_hint; /* same nodes, same levels: the same tree */
    if ((st = rf_problem_check_shapes(p, p->n_nodes, limits, err)) != RF_OK)
        goto done;
    if ((st = s_read_batch(&r, root)) != RF_OK)
        goto done;

    bool any_bound = p->n_running > 0; /* running gangs are checked against the nodes' used, too */
    for (int32_t g = 0; g < p->n_gangs && !any_bound; g++)
        for (int32_t j = 0; j < p->gangs[g].n_pod_sets; j++)
            any_bound = any_bound || p->gangs[g].pod_sets[j].n_bound > 0;
    if (any_bound || p->n_resources != cluster->n_resources) {
        /* Rare path (bound pods or running gangs): validate everything on our own copy of the nodes. */
        if ((st = s_own_nodes(p, cluster, err)) != RF_OK)
            goto done;
        st = rf_problem_validate(p, limits, err);
        goto done;
    }
    /* Fast path: the cluster was validated when it was stored and is not
     * touched; validate the batch against a problem without nodes (nothing
     * of the batch refers to a node here: no bound pods), then lend the
     * cluster's nodes and index. */
    p->nodes = NULL;
    p->n_nodes = 0;
    p->node_by_name = NULL;
    if ((st = rf_problem_validate(p, limits, err)) != RF_OK)
        goto done;
    p->nodes = cluster->nodes;
    p->n_nodes = cluster->n_nodes;
    p->node_by_name = cluster->node_by_name;
    p->tree_hint = cluster->tree_hint; /* same nodes, same levels: the same tree */
    if ((st = rf_problem_check_shapes(p, p->n_nodes, limits, err)) != RF_OK)
        goto done;
    /* The value resource counts when a node mentions it (validate looked at
     * the requests only). */
    int32_t vr = -1;
    for (int32_t k = 0; k < p->n_resources; k++)
        if (strcmp(p->resources[k], p->options.value_resource_name) == 0)
            vr = k;
    if (p->options.value_resource < 0 && vr > 0)
        for (int32_t i = 0; i < p->n_nodes && p->options.value_resource < 0; i++)
            if (p->nodes[i].allocatable[vr] || p->nodes[i].used[vr])
                p->options.value_resource = vr;
done:
    if (st != RF_OK) {
        rf_problem_destroy(&r.p);
        return st;
    }
    *out = r.p;
    return RF_OK;
}

rf_status rf_problem_from_doc(const rf_doc_t *root, const char *const *extra_keys, const rf_limits_t *limits,
                              rf_problem_t **out, rf_error_t *err)
{
    return rf__problem_from_doc(root, extra_keys, limits, out, err);
}

rf_status rf_problem_from_doc_on(const rf_doc_t *root, const char *const *extra_keys, const rf_problem_t *cluster,
                                 const rf_limits_t *limits, rf_problem_t **out, rf_error_t *err)
{
    return rf__problem_from_doc_on(root, extra_keys, cluster, limits, out, err);
}

rf_status rf_problem_from_json(const char *text, size_t len, const rf_limits_t *limits, rf_problem_t **out,
                               rf_error_t *err)
{
    rf_limits_t defaults;
    if (!limits) {
        rf_limits_default(&defaults);
        limits = &defaults;
    }
    *out = NULL;
    rf_error_clear(err);
    if (!text)
        return rf_error_set(err, RF_EINVAL, "", "no text");
    rf__arena_t *arena = rf__arena_new(0);
    if (!arena)
        return rf_error_set(err, RF_ENOMEM, "", "out of memory");
    rf_doc_t *doc = NULL;
    rf_status st = rf__json_parse(text, len, limits, arena, &doc, err);
    if (st == RF_OK)
        st = rf__problem_from_doc(doc, NULL, limits, out, err);
    rf__arena_destroy(&arena);
    return st;
}

rf_status rf_problem_from_json_file(const char *path, const rf_limits_t *limits, rf_problem_t **out, rf_error_t *err)
{
    rf_limits_t defaults;
    if (!limits) {
        rf_limits_default(&defaults);
        limits = &defaults;
    }
    *out = NULL;
    rf_error_clear(err);
    if (!path)
        return rf_error_set(err, RF_EINVAL, "", "no path");
    char *buf = NULL;
    size_t len = 0;
    size_t max = limits->max_input_bytes > 0 ? (size_t)limits->max_input_bytes : SIZE_MAX;
    RF_CALL(rf__read_file(path, max, &buf, &len, err));
    rf_status st = rf_problem_from_json(buf, len, limits, out, err);
    free(buf);
    return st;
}
