/* service/request.c: the envelope and the schema helpers of one request
 * (service/request.h). Errors name the field by its path. */
#include "request.h"

#include <stdio.h>
#include <string.h>

#include "stats.h"

static rf_status s_fail(rf__req_t *q, rf_status code, const char *path, const char *fmt, const char *arg)
{
    return rf_error_set(&q->err, code, path, fmt, arg);
}

bool rf__req_in(const char *key, const char *const *list)
{
    for (; list && *list; list++)
        if (strcmp(key, *list) == 0)
            return true;
    return false;
}

const rf_doc_t *rf__req_get(const rf_doc_t *map, const char *key)
{
    const rf_doc_t *v = rf__doc_get(map, key);
    return v && v->type != RF_DOC_NULL ? v : NULL;
}

rf_status rf__req_envelope(rf__req_t *q, const void *msg, size_t len, bool scanned)
{
    rf_doc_t *root = NULL;
    if (scanned)
        RF_CALL(rf__mp_decode_prescanned(msg, len, &q->ops->mp, q->arena, &root, &q->err));
    else
        RF_CALL(rf__mp_decode(msg, len, &q->ops->mp, q->arena, &root, &q->err));
    if (root->type != RF_DOC_MAP)
        return s_fail(q, RF_ESCHEMA, "", "the request must be a map, not %s", rf__doc_type_name(root->type));
    q->root = root;
    const rf_doc_t *id = rf__req_get(root, "id");
    if (id && id->type != RF_DOC_STR && id->type != RF_DOC_INT)
        return s_fail(q, RF_ESCHEMA, "id", "must be a string or an integer, not %s", rf__doc_type_name(id->type));
    q->id = id;
    const rf_doc_t *v = rf__req_get(root, "v");
    if (v && (v->type != RF_DOC_INT || v->u.i != RF__PROTOCOL_VERSION))
        return s_fail(q, RF_EUNSUPPORTED, "v", "%s", "protocol version 1 is the only one served");
    const char *op = "solve";
    const rf_doc_t *opd = rf__req_get(root, "op");
    if (opd) {
        if (opd->type != RF_DOC_STR)
            return s_fail(q, RF_ESCHEMA, "op", "must be a string, not %s", rf__doc_type_name(opd->type));
        op = opd->u.s;
    }
    for (int i = 0; i < RF__OP_COUNT; i++)
        if (strcmp(op, rf__op_names[i]) == 0 && (!opd || strlen(op) == opd->len))
            q->op = (rf__op_id_t)i;
    if (q->op == RF__OP_UNKNOWN)
        return rf_error_set(&q->err, RF_EUNSUPPORTED, "op", "unknown op \"%.100s\" (ping lists the ops)", op);
    return RF_OK;
}

rf_status rf__req_keys(rf__req_t *q, const char *const *allowed)
{
    for (uint32_t i = 0; i < q->root->len; i++) {
        const char *k = q->root->u.pairs[i].key;
        /* "op\0x" is not "op": a key with a NUL byte is never a known one. */
        bool nul = strlen(k) != q->root->u.pairs[i].key_len;
        if (nul || !rf__req_in(k, allowed)) {
            char path[RF_ERROR_PATH_MAX];
            path[0] = '\0';
            rf__path_key(path, 0, sizeof path, k);
            return rf_error_set(&q->err, RF_ESCHEMA, path, nul ? "unknown key (it has a NUL byte)" : "unknown key");
        }
    }
    return RF_OK;
}

rf_status rf__req_need_str(rf__req_t *q, const char *key, const char **out)
{
    const rf_doc_t *v = rf__req_get(q->root, key);
    if (!v)
        return s_fail(q, RF_ESCHEMA, key, "%s", "is required");
    if (v->type != RF_DOC_STR)
        return s_fail(q, RF_ESCHEMA, key, "must be a string, not %s", rf__doc_type_name(v->type));
    if (v->len == 0 || strlen(v->u.s) != v->len)
        return s_fail(q, RF_ESCHEMA, key, "%s", "must be a non-empty string without NUL bytes");
    *out = v->u.s;
    return RF_OK;
}

rf_status rf__req_opt_int(rf__req_t *q, const char *key, int64_t lo, int64_t hi, int64_t *out)
{
    const rf_doc_t *v = rf__req_get(q->root, key);
    if (!v)
        return RF_OK;
    if (v->type != RF_DOC_INT)
        return s_fail(q, RF_ESCHEMA, key, "must be an integer, not %s", rf__doc_type_name(v->type));
    if (v->u.i < lo || v->u.i > hi)
        return rf_error_set(&q->err, RF_ESCHEMA, key, "must be from %lld to %lld", (long long)lo, (long long)hi);
    *out = v->u.i;
    return RF_OK;
}

rf_status rf__req_opt_bool(rf__req_t *q, const char *key, bool *out)
{
    const rf_doc_t *v = rf__req_get(q->root, key);
    if (!v)
        return RF_OK;
    if (v->type != RF_DOC_BOOL)
        return s_fail(q, RF_ESCHEMA, key, "must be a boolean, not %s", rf__doc_type_name(v->type));
    *out = v->u.b;
    return RF_OK;
}

rf_status rf__req_names(rf__req_t *q, const rf_doc_t *v, const char *key, const char ***out, int32_t *n)
{
    char path[RF_ERROR_PATH_MAX];
    if (v->type != RF_DOC_ARRAY)
        return s_fail(q, RF_ESCHEMA, key, "must be an array of strings, not %s", rf__doc_type_name(v->type));
    const char **names = rf__arena_alloc(q->arena, ((size_t)v->len + 1) * sizeof *names);
    if (!names)
        return s_fail(q, RF_ENOMEM, "", "%s", "out of memory");
    for (uint32_t i = 0; i < v->len; i++) {
        const rf_doc_t *x = &v->u.items[i];
        if (x->type != RF_DOC_STR || x->len == 0 || strlen(x->u.s) != x->len) {
            snprintf(path, sizeof path, "%s[%u]", key, (unsigned)i);
            return rf_error_set(&q->err, RF_ESCHEMA, path, "must be a non-empty string");
        }
        names[i] = x->u.s;
    }
    *out = names;
    *n = (int32_t)v->len;
    return RF_OK;
}
