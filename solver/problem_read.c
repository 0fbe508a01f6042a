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

/* Field `key` of map v, to be read: NULL when absent or null; when present,
 * `key` is pushed on the error path and *sv is what s_pop restores. */
static const rf_doc_t *s_opt_n(s_rd_t *r, const rf_doc_t *v, const char *key, size_t len, int *sv)
{
    const rf_doc_t *x = s_get_n(v, key, len);
    if (x)
        *sv = s_push_key(r, key);
    return x;
}
#define s_opt(r, v, lit, sv) s_opt_n((r), (v), "" lit, sizeof(lit) - 1, (sv))

/* The same for a required field: `key` is pushed in any case, and an absent
 * one fails "is required" there (at v's offset). */
static rf_status s_req_n(s_rd_t *r, const rf_doc_t *v, const char *key, size_t len, const rf_doc_t **x, int *sv)
{
    *sv = s_push_key(r, key);
    *x = s_get_n(v, key, len);
    return *x ? RF_OK : s_fail(r, RF_ESCHEMA, v, "is required");
}
#define s_req(r, v, lit, x, sv) s_req_n((r), (v), "" lit, sizeof(lit) - 1, (x), (sv))

/* Reads the optional field LIT of map V, when present, with
 * READ(r, value, ...) under LIT in the error path. Like RF_CALL it returns
 * from the caller on failure. The one shape of every optional field. */
#define S_OPT(r, v, lit, READ, ...)                                                                                    \
    do {                                                                                                               \
        int s_sv_;                                                                                                     \
        const rf_doc_t *s_x_ = s_opt((r), (v), lit, &s_sv_);                                                           \
        if (s_x_) {                                                                                                    \
            RF_CALL(READ((r), s_x_, __VA_ARGS__));                                                                     \
            s_pop((r), s_sv_);                                                                                         \
        }                                                                                                              \
    } while (0)

/* The same for a required field: absent, it fails "is required" (s_req). */
#define S_REQ(r, v, lit, READ, ...)                                                                                    \
    do {                                                                                                               \
        int s_sv_;                                                                                                     \
        const rf_doc_t *s_x_;                                                                                          \
        RF_CALL(s_req((r), (v), lit, &s_x_, &s_sv_));                                                                  \
        RF_CALL(READ((r), s_x_, __VA_ARGS__));                                                                         \
        s_pop((r), s_sv_);                                                                                             \
    } while (0)

/* Reads the array X (already checked by s_array) into ARR, allocated in the
 * problem's arena, and sets N to its length: item i with READ(r, item,
 * &ARR[i]), under "[i]" in the error path. Like RF_CALL it returns from the
 * caller on the first failure (no cleanup is needed: the arena goes with the
 * problem). The one loop for every list. */
#define S_READ_ITEMS(r, x, arr, n, READ)                                                                               \
    do {                                                                                                               \
        (arr) = rf_problem_alloc((r)->p, (size_t)(x)->len * sizeof *(arr));                                            \
        if (!(arr))                                                                                                    \
            return s_fail((r), RF_ENOMEM, (x), "out of memory");                                                       \
        for (uint32_t s_i_ = 0; s_i_ < (x)->len; s_i_++) {                                                             \
            int s_si_ = s_push_idx((r), s_i_);                                                                         \
            RF_CALL(READ((r), &(x)->u.items[s_i_], &(arr)[s_i_]));                                                     \
            s_pop((r), s_si_);                                                                                         \
        }                                                                                                              \
        (n) = (int32_t)(x)->len;                                                                                       \
    } while (0)

/* (The first bytes compared before the call: these lists and the
 * resource names rarely share one, and the 16,384-node problem makes
 * ~300,000 such lookups.) */
static bool s_is_member(const char *key, const char *const *list)
{
    for (; list && *list; list++)
        if (key[0] == (*list)[0] && strcmp(key, *list) == 0)
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

/* The required array `key` of map v, of 1 to `max` items (a `what` each):
 * *x is it, with `key` pushed on the error path (*sv restores it). */
static rf_status s_req_list_n(s_rd_t *r, const rf_doc_t *v, const char *key, size_t len, int64_t max, const char *limit,
                              const char *what, const rf_doc_t **x, int *sv)
{
    RF_CALL(s_req_n(r, v, key, len, x, sv));
    RF_CALL(s_array(r, *x, max, limit));
    if ((*x)->len == 0)
        return s_fail(r, RF_ESCHEMA, *x, "must list at least one %s", what);
    return RF_OK;
}
#define s_req_list(r, v, lit, max, limit, what, x, sv)                                                                 \
    s_req_list_n((r), (v), "" lit, sizeof(lit) - 1, (max), (limit), (what), (x), (sv))

/* Reads the required array LIT of map V (s_req_list) into ARR and N with
 * READ (S_READ_ITEMS). */
#define S_REQ_LIST(r, v, lit, max, limit, what, arr, n, READ)                                                          \
    do {                                                                                                               \
        const rf_doc_t *s_l_;                                                                                          \
        int s_lsv_;                                                                                                    \
        RF_CALL(s_req_list((r), (v), lit, (max), (limit), (what), &s_l_, &s_lsv_));                                    \
        S_READ_ITEMS((r), s_l_, (arr), (n), READ);                                                                     \
        s_pop((r), s_lsv_);                                                                                            \
    } while (0)

/* Reads the optional array LIT of map V, of at most MAX items, into ARR and
 * N with READ (S_READ_ITEMS), when present. */
#define S_OPT_LIST(r, v, lit, max, limit, arr, n, READ)                                                                \
    do {                                                                                                               \
        int s_lsv_;                                                                                                    \
        const rf_doc_t *s_l_ = s_opt((r), (v), lit, &s_lsv_);                                                          \
        if (s_l_) {                                                                                                    \
            RF_CALL(s_array((r), s_l_, (max), (limit)));                                                               \
            S_READ_ITEMS((r), s_l_, (arr), (n), READ);                                                                 \
            s_pop((r), s_lsv_);                                                                                        \
        }                                                                                                              \
    } while (0)

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

/* A string that must not be empty. */
static rf_status s_nonempty_str(s_rd_t *r, const rf_doc_t *v, const char **out)
{
    RF_CALL(s_str(r, v, out));
    if (!(*out)[0])
        return s_fail(r, RF_ESCHEMA, v, "must not be empty");
    return RF_OK;
}

static rf_status s_bool(s_rd_t *r, const rf_doc_t *v, bool *out)
{
    RF_CALL(s_type(r, v, RF_DOC_BOOL));
    *out = v->u.b;
    return RF_OK;
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

/* An int32 in [lo, hi]. */
static rf_status s_i32(s_rd_t *r, const rf_doc_t *v, int32_t lo, int32_t hi, int32_t *out)
{
    int64_t i64 = 0;
    RF_CALL(s_int(r, v, lo, hi, &i64));
    *out = (int32_t)i64;
    return RF_OK;
}

/* A count: an int32 > 0 ("must be > 0" below 1). */
static rf_status s_count(s_rd_t *r, const rf_doc_t *v, int32_t *out)
{
    RF_CALL(s_type(r, v, RF_DOC_INT));
    if (v->u.i <= 0)
        return s_fail(r, RF_ESCHEMA, v, "must be > 0");
    return s_i32(r, v, 1, INT32_MAX, out);
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

/* A node by name (bound pods, placements): an unknown one is an error naming it. */
static rf_status s_node_ref(s_rd_t *r, const rf_doc_t *v, int32_t *out)
{
    RF_CALL(s_type(r, v, RF_DOC_STR));
    RF_CALL(s_text_ok(r, v, v->u.s, v->len));
    *out = rf_problem_node(r->p, v->u.s);
    if (*out < 0)
        return s_fail(r, RF_ESCHEMA, v, "unknown node \"%.200s\" (not in cluster.nodes)", v->u.s);
    return RF_OK;
}

/* The required, non-empty `name` of map v. */
static rf_status s_name(s_rd_t *r, const rf_doc_t *v, const char **out)
{
    S_REQ(r, v, "name", s_nonempty_str, out);
    return RF_OK;
}

/* A gang's or running gang's name, priority and bandwidth. */
static rf_status s_gang_head(s_rd_t *r, const rf_doc_t *v, const char **name, int64_t *priority, double *bandwidth)
{
    RF_CALL(s_name(r, v, name));
    S_OPT(r, v, "priority", s_int, INT64_MIN, INT64_MAX, priority);
    S_OPT(r, v, "bandwidth", s_nonneg_number, bandwidth);
    return RF_OK;
}

/* -------------------------------------------- pass 1: resource interning */

/* Resource `name` (the key or value at `at`) interned, within max_resources. */
static rf_status s_intern(s_rd_t *r, const rf_doc_t *at, const char *name, size_t len)
{
    RF_CALL(s_text_ok(r, at, name, len));
    if (rf_problem_resource(r->p, name) < 0)
        return s_fail(r, RF_ENOMEM, at, "out of memory");
    if (r->p->n_resources > r->lim->max_resources)
        return s_fail(r, RF_ELIMIT, at, "is resource number %d, more than max_resources (%d)", (int)r->p->n_resources,
                      (int)r->lim->max_resources);
    return RF_OK;
}

static rf_status s_intern_keys(s_rd_t *r, const rf_doc_t *map)
{
    if (!map || map->type != RF_DOC_MAP)
        return RF_OK; /* pass 2 reports it */
    for (uint32_t i = 0; i < map->len; i++) {
        const rf_doc_kv_t *kv = &map->u.pairs[i];
        int sv = s_push_key(r, kv->key);
        if (kv->key_len == 0)
            return s_fail(r, RF_ESCHEMA, &kv->value, "a resource name must not be empty");
        RF_CALL(s_intern(r, &kv->value, kv->key, kv->key_len));
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
        RF_CALL(s_intern(r, vr, vr->u.s, vr->len));
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
        for (int32_t k = 0; k < r->p->n_resources && idx < 0; k++)
            if (r->p->resources[k][0] == kv->key[0] && strcmp(r->p->resources[k], kv->key) == 0)
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

/* A pod set's `requests` (pending or running) into a new array: pods is 1. */
static rf_status s_requests(s_rd_t *r, const rf_doc_t *v, int64_t **out)
{
    int64_t *q = rf_problem_alloc(r->p, (size_t)r->p->n_resources * sizeof *q);
    if (!q)
        return s_fail(r, RF_ENOMEM, v, "out of memory");
    q[RF_RES_PODS] = 1;
    *out = q;
    S_OPT(r, v, "requests", s_quantities, true, q);
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
    int sv, e = 0;
    RF_CALL(s_object(r, v, s_taint_keys, NULL));
    S_REQ(r, v, "key", s_nonempty_str, &t->key);
    t->value = "";
    S_OPT(r, v, "value", s_str, &t->value);
    RF_CALL(s_req(r, v, "effect", &x, &sv));
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
    RF_CALL(s_object(r, v, s_node_keys, NULL));
    RF_CALL(s_name(r, v, &node->name));
    S_OPT(r, v, "labels", s_labels, &node->labels, &node->n_labels);

    node->allocatable = rf_problem_alloc(p, (size_t)p->n_resources * sizeof(int64_t));
    node->used = rf_problem_alloc(p, (size_t)p->n_resources * sizeof(int64_t));
    if (!node->allocatable || !node->used)
        return s_fail(r, RF_ENOMEM, v, "out of memory");
    node->allocatable[RF_RES_PODS] = RF_QTY_UNLIMITED;
    S_OPT(r, v, "allocatable", s_quantities, false, node->allocatable);
    S_OPT(r, v, "used", s_quantities, false, node->used);

    S_OPT_LIST(r, v, "taints", r->lim->max_taints, "max_taints", node->taints, node->n_taints, s_taint);
    S_OPT(r, v, "unschedulable", s_bool, &node->unschedulable);
    return RF_OK;
}

static rf_status s_cluster(s_rd_t *r, const rf_doc_t *v)
{
    rf_problem_t *p = r->p;
    const rf_doc_t *x;
    int sv;
    RF_CALL(s_object(r, v, s_cluster_keys, NULL));

    RF_CALL(s_req(r, v, "levels", &x, &sv));
    RF_CALL(s_type(r, x, RF_DOC_ARRAY));
    if (x->len < 1 || x->len > RF_MAX_LEVELS)
        return s_fail(r, RF_ESCHEMA, x, "must list 1 to %d levels, not %lu", RF_MAX_LEVELS, (unsigned long)x->len);
    S_READ_ITEMS(r, x, p->levels, p->n_levels, s_str);
    s_pop(r, sv);

    if ((x = s_opt(r, v, "level_costs", &sv))) {
        RF_CALL(s_type(r, x, RF_DOC_ARRAY));
        if ((int32_t)x->len != p->n_levels)
            return s_fail(r, RF_ESCHEMA, x, "has %lu entries, but there are %d levels", (unsigned long)x->len,
                          (int)p->n_levels);
        S_READ_ITEMS(r, x, p->level_costs, p->n_levels, s_nonneg_number); /* the same length */
        s_pop(r, sv);
    }

    RF_CALL(s_req(r, v, "nodes", &x, &sv));
    RF_CALL(s_array(r, x, r->lim->max_nodes, "max_nodes"));
    S_READ_ITEMS(r, x, p->nodes, p->n_nodes, s_node);
    s_pop(r, sv);
    /* Index names now: `bound` entries refer to nodes by name. */
    return rf_problem_index_nodes(p, r->err);
}

static rf_status s_topology(s_rd_t *r, const rf_doc_t *v, rf_topology_t *t)
{
    RF_CALL(s_object(r, v, s_topology_keys, NULL));
    S_OPT(r, v, "required", s_level, &t->required);
    S_OPT(r, v, "preferred", s_level, &t->preferred);
    return RF_OK;
}

static const char *const s_operator_names[] = {"Equal", "Exists", NULL};

static rf_status s_toleration(s_rd_t *r, const rf_doc_t *v, rf_toleration_t *t)
{
    int op = RF_TOL_EQUAL, e = RF_EFFECT_NONE;
    RF_CALL(s_object(r, v, s_toleration_keys, NULL));
    t->key = "";
    t->value = "";
    S_OPT(r, v, "key", s_str, &t->key);
    S_OPT(r, v, "operator", s_enum, s_operator_names, "Equal or Exists", &op);
    t->op = (rf_tol_op)op;
    S_OPT(r, v, "value", s_str, &t->value);
    S_OPT(r, v, "effect", s_enum, s_effect_names, "\"\", NoSchedule, PreferNoSchedule or NoExecute", &e);
    t->effect = (rf_effect)e;
    return RF_OK;
}

static rf_status s_slice(s_rd_t *r, const rf_doc_t *v, rf_slice_t *s)
{
    RF_CALL(s_object(r, v, s_slice_keys, NULL));
    S_REQ(r, v, "size", s_count, &s->size);
    S_REQ(r, v, "required", s_level, &s->level);
    return RF_OK;
}

/* A rank of a bound pod. */
static rf_status s_rank(s_rd_t *r, const rf_doc_t *v, int32_t *out)
{
    return s_i32(r, v, 0, INT32_MAX - 1, out);
}

static rf_status s_bound(s_rd_t *r, const rf_doc_t *v, rf_bound_t *b)
{
    const rf_doc_t *ranks;
    int sv;
    int32_t n_ranks = 0;
    RF_CALL(s_object(r, v, s_bound_keys, NULL));
    S_REQ(r, v, "node", s_node_ref, &b->node);

    const rf_doc_t *cnt = s_get(v, "count");
    if (!cnt && !s_get(v, "ranks"))
        return s_fail(r, RF_ESCHEMA, v, "needs count or ranks");
    S_OPT(r, v, "count", s_count, &b->count);
    if ((ranks = s_opt(r, v, "ranks", &sv))) {
        RF_CALL(s_array(r, ranks, r->lim->max_pods, "max_pods"));
        if (ranks->len == 0)
            return s_fail(r, RF_ESCHEMA, ranks, "must not be empty");
        if (cnt && (int64_t)ranks->len != b->count)
            return s_fail(r, RF_ESCHEMA, ranks, "lists %lu ranks, but count is %d", (unsigned long)ranks->len,
                          (int)b->count);
        S_READ_ITEMS(r, ranks, b->ranks, n_ranks, s_rank);
        b->count = n_ranks;
        s_pop(r, sv);
    }
    return RF_OK;
}

static rf_status s_pod_set(s_rd_t *r, const rf_doc_t *v, rf_pod_set_t *ps)
{
    const rf_doc_t *x;
    int sv;
    RF_CALL(s_object(r, v, s_pod_set_keys, NULL));
    rf_pod_set_init(ps);
    RF_CALL(s_name(r, v, &ps->name));

    RF_CALL(s_req(r, v, "count", &x, &sv));
    RF_CALL(s_type(r, x, RF_DOC_INT));
    if (x->u.i > r->lim->max_pods)
        return s_fail(r, RF_ELIMIT, x, "%lld is more than max_pods (%lld)", (long long)x->u.i,
                      (long long)r->lim->max_pods);
    RF_CALL(s_int(r, x, 1, INT32_MAX, &ps->count));
    s_pop(r, sv);

    S_OPT(r, v, "min_count", s_int, 0, INT64_MAX, &ps->min_count); /* <= count: validate */
    RF_CALL(s_requests(r, v, &ps->requests));
    S_OPT(r, v, "node_selector", s_labels, &ps->node_selector, &ps->n_node_selector);
    S_OPT_LIST(r, v, "tolerations", r->lim->max_taints, "max_taints", ps->tolerations, ps->n_tolerations, s_toleration);
    S_OPT(r, v, "topology", s_topology, &ps->topology);
    S_OPT(r, v, "slice", s_slice, &ps->slice);
    S_OPT_LIST(r, v, "bound", r->lim->max_bound, "max_bound", ps->bound, ps->n_bound, s_bound);
    return RF_OK;
}

static rf_status s_gang(s_rd_t *r, const rf_doc_t *v, rf_gang_t *gang)
{
    RF_CALL(s_object(r, v, s_gang_keys, NULL));
    rf_gang_init(gang);
    RF_CALL(s_gang_head(r, v, &gang->name, &gang->priority, &gang->bandwidth));
    S_OPT(r, v, "topology", s_topology, &gang->topology);
    S_REQ_LIST(r, v, "pod_sets", r->lim->max_pod_sets, "max_pod_sets", "pod set", gang->pod_sets, gang->n_pod_sets,
               s_pod_set);
    return RF_OK;
}

/* ---------------------------------------------------- running gangs */

static rf_status s_run_placement(s_rd_t *r, const rf_doc_t *v, rf_run_placement_t *pl)
{
    RF_CALL(s_running_object(r, v, s_run_placement_keys, s_run_placement_forbidden));
    S_REQ(r, v, "node", s_node_ref, &pl->node);
    S_REQ(r, v, "count", s_i32, 1, INT32_MAX, &pl->count);
    return RF_OK;
}

static rf_status s_run_pod_set(s_rd_t *r, const rf_doc_t *v, rf_run_pod_set_t *ps)
{
    RF_CALL(s_running_object(r, v, s_run_pod_set_keys, s_run_pod_set_forbidden));
    RF_CALL(s_name(r, v, &ps->name));
    RF_CALL(s_requests(r, v, &ps->requests));
    S_REQ_LIST(r, v, "placements", r->lim->max_bound, "max_bound", "placement", ps->placements, ps->n_placements,
               s_run_placement);
    return RF_OK;
}

static rf_status s_running_gang(s_rd_t *r, const rf_doc_t *v, rf_running_t *run)
{
    RF_CALL(s_running_object(r, v, s_running_keys, s_running_forbidden));
    rf_running_init(run);
    RF_CALL(s_gang_head(r, v, &run->name, &run->priority, &run->bandwidth));
    S_OPT(r, v, "preemptible", s_bool, &run->preemptible);
    S_REQ_LIST(r, v, "pod_sets", r->lim->max_pod_sets, "max_pod_sets", "pod set", run->pod_sets, run->n_pod_sets,
               s_run_pod_set);
    return RF_OK;
}

static const char *const s_mode_names[] = {"auto", "greedy", "ilp", NULL};         /* rf_mode order */
static const char *const s_admission_names[] = {"value", "ordered", NULL};         /* rf_admission order */
static const char *const s_preemption_names[] = {"lower_priority", "never", NULL}; /* rf_preemption order */

static rf_status s_options(s_rd_t *r, const rf_doc_t *v)
{
    rf_options_t *o = &r->p->options;
    int mode = (int)o->mode, admission = (int)o->admission, preemption = (int)o->preemption;
    RF_CALL(s_object(r, v, s_options_keys, NULL));
    S_OPT(r, v, "mode", s_enum, s_mode_names, "greedy, ilp or auto", &mode);
    o->mode = (rf_mode)mode;
    S_OPT(r, v, "time_limit_ms", s_int, 0, INT64_MAX, &o->time_limit_ms);
    S_OPT(r, v, "threads", s_i32, 0, INT32_MAX, &o->threads);
    S_OPT(r, v, "admission", s_enum, s_admission_names, "value or ordered", &admission);
    o->admission = (rf_admission)admission;
    S_OPT(r, v, "value_resource", s_nonempty_str, &o->value_resource_name);
    S_OPT(r, v, "preemption", s_enum, s_preemption_names, "lower_priority or never", &preemption);
    o->preemption = (rf_preemption)preemption;
    return RF_OK;
}

static rf_status s_read_batch(s_rd_t *r, const rf_doc_t *root);

static rf_status s_read(s_rd_t *r, const rf_doc_t *root, const char *const *extra_keys)
{
    const rf_doc_t *x;
    int sv;
    RF_CALL(s_object(r, root, s_root_keys, extra_keys));
    RF_CALL(s_intern_all(r, root));
    RF_CALL(s_req(r, root, "cluster", &x, &sv));
    RF_CALL(s_cluster(r, x));
    s_pop(r, sv);
    RF_CALL(s_read_batch(r, root));
    return rf_problem_validate(r->p, r->lim, r->err);
}

/* `running`: at most max_gangs running gangs (the same bound as `gangs`). */
static rf_status s_running_all(s_rd_t *r, const rf_doc_t *v)
{
    RF_CALL(s_array(r, v, r->lim->max_gangs, "max_gangs"));
    S_READ_ITEMS(r, v, r->p->running, r->p->n_running, s_running_gang);
    return RF_OK;
}

/* The batch of a problem: `gangs` (required), `running` and `options`. */
static rf_status s_read_batch(s_rd_t *r, const rf_doc_t *root)
{
    const rf_doc_t *x;
    int sv;
    RF_CALL(s_req(r, root, "gangs", &x, &sv));
    RF_CALL(s_array(r, x, r->lim->max_gangs, "max_gangs"));
    S_READ_ITEMS(r, x, r->p->gangs, r->p->n_gangs, s_gang);
    s_pop(r, sv);
    if ((x = s_opt(r, root, "running", &sv))) {
        RF_CALL(s_running_all(r, x));
        s_pop(r, sv);
    }
    if ((x = s_opt(r, root, "options", &sv))) {
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
