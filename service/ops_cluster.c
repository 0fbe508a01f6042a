/* service/ops_cluster.c: the stored-cluster ops: cluster.put, .patch,
 * .release, .info and .delete (docs/protocol.md). Nodes of a put or a patch
 * are read by the one schema reader (the contract's cluster, paths
 * rewritten to the patch's own fields); the store (service/store.h) applies
 * the change all or nothing under its lock. */
#include <stdio.h>
#include <string.h>

#include "clock.h"
#include "request.h"

static rf_status s_fail(rf__req_t *q, rf_status code, const char *path, const char *fmt, const char *arg)
{
    return rf_error_set(&q->err, code, path, fmt, arg);
}

/* A document {"cluster": {"levels": levels, "nodes": nodes}, "gangs": []}
 * in the request's arena, so that nodes of a patch are read by the one
 * schema reader. */
static rf_doc_t *s_cluster_doc(rf__req_t *q, const rf_problem_t *like, const rf_doc_t *nodes)
{
    rf__arena_t *a = q->arena;
    rf_doc_t *root = rf__arena_alloc(a, sizeof *root);
    rf_doc_kv_t *top = rf__arena_alloc(a, 2 * sizeof *top);
    rf_doc_kv_t *cl = rf__arena_alloc(a, 2 * sizeof *cl);
    rf_doc_t *levels = rf__arena_alloc(a, ((size_t)like->n_levels + 1) * sizeof *levels);
    if (!root || !top || !cl || !levels)
        return NULL;
    for (int32_t l = 0; l < like->n_levels; l++)
        levels[l] = (rf_doc_t){
            .type = RF_DOC_STR, .len = (uint32_t)strlen(like->levels[l]), .offset = -1, .u.s = like->levels[l]};
    cl[0] = (rf_doc_kv_t){
        .key = "levels",
        .key_len = 6,
        .value = {.type = RF_DOC_ARRAY, .len = (uint32_t)like->n_levels, .offset = -1, .u.items = levels}};
    cl[1] = (rf_doc_kv_t){.key = "nodes", .key_len = 5, .value = *nodes};
    top[0] = (rf_doc_kv_t){
        .key = "cluster", .key_len = 7, .value = {.type = RF_DOC_MAP, .len = 2, .offset = -1, .u.pairs = cl}};
    top[1] = (rf_doc_kv_t){
        .key = "gangs", .key_len = 5, .value = {.type = RF_DOC_ARRAY, .len = 0, .offset = -1, .u.items = levels}};
    *root = (rf_doc_t){.type = RF_DOC_MAP, .len = 2, .offset = -1, .u.pairs = top};
    return root;
}

/* Rewrite an error path "cluster.nodes<rest>" as "<prefix><rest>" (and a
 * trailing ".name" as ".node" when `name_is_node`). */
static void s_repath(rf_error_t *err, const char *prefix, bool name_is_node)
{
    const char *head = "cluster.nodes";
    size_t hn = strlen(head);
    if (strncmp(err->path, head, hn) != 0)
        return;
    char rest[RF_ERROR_PATH_MAX];
    snprintf(rest, sizeof rest, "%s", err->path + hn);
    size_t rn = strlen(rest);
    if (name_is_node && rn >= 5 && strcmp(rest + rn - 5, ".name") == 0)
        memcpy(rest + rn - 5, ".node", 5);
    snprintf(err->path, sizeof err->path, "%s%s", prefix, rest);
}

static const char *const s_put_keys[] = {"v", "op", "id", "name", "version", "cluster", "running", NULL};

rf_status rf__op_put(rf__req_t *q)
{
    rf__ops_t *o = q->ops;
    const char *name = NULL;
    int64_t version = -1, new_version = 0;
    RF_CALL(rf__req_keys(q, s_put_keys));
    RF_CALL(rf__req_need_str(q, "name", &name));
    RF_CALL(rf__req_opt_int(q, "version", 0, INT64_MAX, &version));
    const rf_doc_t *cl = rf__req_get(q->root, "cluster");
    if (!cl)
        return s_fail(q, RF_ESCHEMA, "cluster", "%s", "is required");
    /* {"cluster": cl, "gangs": []}: the one reader, paths unchanged. */
    rf_doc_kv_t *top = rf__arena_alloc(q->arena, 2 * sizeof *top);
    if (!top)
        return s_fail(q, RF_ENOMEM, "", "%s", "out of memory");
    top[0] = (rf_doc_kv_t){.key = "cluster", .key_len = 7, .value = *cl};
    top[1] = (rf_doc_kv_t){.key = "gangs", .key_len = 5, .value = {.type = RF_DOC_ARRAY, .len = 0, .offset = -1}};
    rf_doc_t root = {.type = RF_DOC_MAP, .len = 2, .offset = -1, .u.pairs = top};
    rf_problem_t *p = NULL;
    RF_CALL(rf_problem_from_doc(&root, NULL, &o->cfg.limits, &p, &q->err));
    /* running gangs: validated by the store against the nodes it keeps */
    RF_CALL(rf__store_put(o->store, name, p, rf__req_get(q->root, "running"), &o->cfg.limits, version, rf_now_ms(),
                          &new_version, &q->err));
    rf__reply_name_version(q, name, new_version);
    return RF_OK;
}

static const char *const s_patch_keys[] = {
    "v", "op", "id", "name", "version", "remove", "upsert", "used", "running_remove", "running_upsert", NULL};
static const char *const s_used_keys[] = {"node", "used", "includes", NULL};

rf_status rf__op_patch(rf__req_t *q)
{
    rf__ops_t *o = q->ops;
    const char *name = NULL;
    int64_t version = -1, new_version = 0;
    rf__snapshot_t *snap = NULL;
    rf_problem_t *up = NULL, *us = NULL;
    rf__patch_t patch;
    memset(&patch, 0, sizeof patch);
    rf_status rc;
    const rf_doc_t *x;
    char path[RF_ERROR_PATH_MAX];

    RF_CALL(rf__req_keys(q, s_patch_keys));
    RF_CALL(rf__req_need_str(q, "name", &name));
    if (!rf__req_get(q->root, "version"))
        return s_fail(q, RF_ESCHEMA, "version", "%s", "is required (compare-and-swap)");
    RF_CALL(rf__req_opt_int(q, "version", 1, INT64_MAX, &version));
    if ((x = rf__req_get(q->root, "remove")))
        RF_CALL(rf__req_names(q, x, "remove", (const char ***)&patch.remove, &patch.n_remove));
    if ((x = rf__req_get(q->root, "running_remove")))
        RF_CALL(rf__req_names(q, x, "running_remove", (const char ***)&patch.running_remove, &patch.n_running_remove));
    patch.running_upsert = rf__req_get(q->root, "running_upsert");
    RF_CALL(rf__store_acquire(o->store, name, version, rf_now_ms(), &snap, &q->err));

    if ((x = rf__req_get(q->root, "upsert"))) {
        rf_doc_t *doc = x->type == RF_DOC_ARRAY ? s_cluster_doc(q, snap->problem, x) : NULL;
        if (x->type != RF_DOC_ARRAY)
            rc = s_fail(q, RF_ESCHEMA, "upsert", "must be an array of nodes, not %s", rf__doc_type_name(x->type));
        else if (!doc)
            rc = s_fail(q, RF_ENOMEM, "", "%s", "out of memory");
        else if ((rc = rf_problem_from_doc(doc, NULL, &o->cfg.limits, &up, &q->err)) != RF_OK)
            s_repath(&q->err, "upsert", false);
        if (rc != RF_OK)
            goto done;
        patch.upsert = up;
    }
    if ((x = rf__req_get(q->root, "used"))) {
        if (x->type != RF_DOC_ARRAY) {
            rc = s_fail(q, RF_ESCHEMA, "used", "must be an array, not %s", rf__doc_type_name(x->type));
            goto done;
        }
        /* [{node, used, includes?}] -> nodes [{name, used}] and the includes. */
        rf_doc_t *nodes = rf__arena_alloc(q->arena, ((size_t)x->len + 1) * sizeof *nodes);
        rf__includes_t *inc = rf__arena_alloc(q->arena, ((size_t)x->len + 1) * sizeof *inc);
        if (!nodes || !inc) {
            rc = s_fail(q, RF_ENOMEM, "", "%s", "out of memory");
            goto done;
        }
        for (uint32_t i = 0; i < x->len; i++) {
            const rf_doc_t *e = &x->u.items[i];
            snprintf(path, sizeof path, "used[%u]", (unsigned)i);
            if (e->type != RF_DOC_MAP) {
                rc = rf_error_set(&q->err, RF_ESCHEMA, path, "must be a map {node, used, includes}, not %s",
                                  rf__doc_type_name(e->type));
                goto done;
            }
            for (uint32_t k = 0; k < e->len; k++)
                if (!rf__req_in(e->u.pairs[k].key, s_used_keys)) {
                    rf__path_key(path, (int)strlen(path), sizeof path, e->u.pairs[k].key);
                    rc = rf_error_set(&q->err, RF_ESCHEMA, path, "unknown key");
                    goto done;
                }
            const rf_doc_t *nd = rf__req_get(e, "node"), *u = rf__req_get(e, "used"), *in = rf__req_get(e, "includes");
            if (!nd || !u) {
                rc = rf_error_set(&q->err, RF_ESCHEMA, path, "needs node and used");
                goto done;
            }
            rf_doc_kv_t *kv = rf__arena_alloc(q->arena, 2 * sizeof *kv);
            if (!kv) {
                rc = s_fail(q, RF_ENOMEM, "", "%s", "out of memory");
                goto done;
            }
            kv[0] = (rf_doc_kv_t){.key = "name", .key_len = 4, .value = *nd};
            kv[1] = (rf_doc_kv_t){.key = "used", .key_len = 4, .value = *u};
            nodes[i] = (rf_doc_t){.type = RF_DOC_MAP, .len = 2, .offset = -1, .u.pairs = kv};
            inc[i].n = 0;
            inc[i].gangs = NULL;
            if (in) {
                snprintf(path, sizeof path, "used[%u].includes", (unsigned)i);
                if ((rc = rf__req_names(q, in, path, &inc[i].gangs, &inc[i].n)) != RF_OK)
                    goto done;
            }
        }
        rf_doc_t arr = {.type = RF_DOC_ARRAY, .len = x->len, .offset = -1, .u.items = nodes};
        rf_doc_t *doc = s_cluster_doc(q, snap->problem, &arr);
        if (!doc) {
            rc = s_fail(q, RF_ENOMEM, "", "%s", "out of memory");
            goto done;
        }
        if ((rc = rf_problem_from_doc(doc, NULL, &o->cfg.limits, &us, &q->err)) != RF_OK) {
            s_repath(&q->err, "used", true);
            goto done;
        }
        patch.used = us;
        patch.includes = inc;
    }
    rc = rf__store_patch(o->store, name, version, &patch, &o->cfg.limits, rf_now_ms(), &new_version, &q->err);
    if (rc == RF_OK) {
        rf__reply_name_version(q, name, new_version);
    }
done:
    rf_problem_destroy(&up);
    rf_problem_destroy(&us);
    rf__store_unref(o->store, &snap);
    return rc;
}

static const char *const s_release_keys[] = {"v", "op", "id", "name", "version", "gangs", NULL};

rf_status rf__op_release(rf__req_t *q)
{
    const char *name = NULL;
    const char **gangs = NULL;
    int32_t n = 0, released = 0;
    int64_t version = -1, new_version = 0;
    RF_CALL(rf__req_keys(q, s_release_keys));
    RF_CALL(rf__req_need_str(q, "name", &name));
    RF_CALL(rf__req_opt_int(q, "version", 1, INT64_MAX, &version));
    const rf_doc_t *x = rf__req_get(q->root, "gangs");
    if (!x)
        return s_fail(q, RF_ESCHEMA, "gangs", "%s", "is required");
    RF_CALL(rf__req_names(q, x, "gangs", &gangs, &n));
    RF_CALL(rf__store_release(q->ops->store, name, version, gangs, n, rf_now_ms(), &new_version, &released, &q->err));
    rf__reply_released(q, name, new_version, released);
    return RF_OK;
}

static const char *const s_info_keys[] = {"v", "op", "id", "name", NULL};
static const char *const s_delete_keys[] = {"v", "op", "id", "name", "version", NULL};

rf_status rf__op_info(rf__req_t *q)
{
    const char *name = NULL;
    rf__store_info_t info;
    RF_CALL(rf__req_keys(q, s_info_keys));
    RF_CALL(rf__req_need_str(q, "name", &name));
    RF_CALL(rf__store_info(q->ops->store, name, rf_now_ms(), &info, &q->err));
    rf__reply_info(q, name, &info);
    return RF_OK;
}

rf_status rf__op_delete(rf__req_t *q)
{
    const char *name = NULL;
    int64_t version = -1;
    RF_CALL(rf__req_keys(q, s_delete_keys));
    RF_CALL(rf__req_need_str(q, "name", &name));
    RF_CALL(rf__req_opt_int(q, "version", 1, INT64_MAX, &version));
    RF_CALL(rf__store_delete(q->ops->store, name, version, &q->err));
    rf__reply_deleted(q, name);
    return RF_OK;
}
