/* probe/nodepatch.c: the Node read-through-patch and the one label patch
 * (probe/nodepatch.h). */
#include "nodepatch.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"

/* The API server's reason, for messages: a Status body's `message`
 * (unescaped: it often quotes the object's name), else the body itself. */
static void s_reason(const rf__kresp_t *r, char *out, size_t cap)
{
    rf__arena_t *arena = r->body ? rf__arena_new(0) : NULL;
    rf_doc_t *doc = NULL;
    const rf_doc_t *m = NULL;
    if (arena && rf__kube_json(r->body, r->len, arena, &doc, NULL) == RF_OK && doc->type == RF_DOC_MAP)
        m = rf__doc_get(doc, "message");
    if (m && m->type == RF_DOC_STR)
        snprintf(out, cap, "%.200s", m->u.s);
    else
        snprintf(out, cap, "%.200s", r->body ? r->body : "");
    rf__arena_destroy(&arena);
}

static rf_status s_patch(rf__kconn_t *conn, const char *path, const char *body, long timeout_ms, rf__kresp_t *r,
                         rf_error_t *err)
{
    memset(r, 0, sizeof *r);
    return rf__kube_call(conn, "PATCH", path, "application/merge-patch+json", body, timeout_ms, r, err);
}

rf_status rf__node_apply(rf__kube_t *kube, const char *node, const rf_probe_labels_t *want,
                         const rf_probe_label_cfg_t *cfg, const rf_probe_patch_opts_t *opts, bool *patched,
                         char **patch_copy, rf_error_t *err)
{
    *patched = false;
    if (patch_copy)
        *patch_copy = NULL;
    for (const char *c = node; *c; c++)
        if (!islower((unsigned char)*c) && !isdigit((unsigned char)*c) && *c != '-' && *c != '.')
            return rf_error_set(err, RF_EINVAL, "node", "\"%s\" is not a Kubernetes node name", node);
    if (!node[0] || strlen(node) > 253)
        return rf_error_set(err, RF_EINVAL, "node", "the node name must have 1 to 253 characters");
    char path[320];
    snprintf(path, sizeof path, "/api/v1/nodes/%s", node);
    rf__kconn_t *conn = rf__kconn_new(kube);
    if (!conn)
        return rf_error_set(err, RF_ENOMEM, "", "out of memory");
    rf_status rc = RF_OK;
    for (int attempt = 0;; attempt++) {
        rf__kresp_t r;
        char why[256];
        if ((rc = s_patch(conn, path, "{}", opts->timeout_ms, &r, err)) != RF_OK) {
            rf__kresp_fini(&r);
            break;
        }
        if (r.status != 200) {
            s_reason(&r, why, sizeof why);
            rc = rf_error_set(err, r.status == 404 ? RF_ENOTFOUND : RF_EIO, "node",
                              "reading node %s (an empty patch) answered HTTP %ld: %s", node, r.status, why);
            rf__kresp_fini(&r);
            break;
        }
        rf__arena_t *arena = rf__arena_new(0);
        rf_doc_t *doc = NULL;
        char *body = NULL;
        rc = arena ? rf__kube_json(r.body, r.len, arena, &doc, err) : RF_ENOMEM;
        if (rc == RF_OK)
            rc = rf__labels_patch(want, cfg, doc, &body, err);
        rf__arena_destroy(&arena);
        rf__kresp_fini(&r);
        if (rc != RF_OK || !body)
            break; /* an error, or nothing to change */
        rc = s_patch(conn, path, body, opts->timeout_ms, &r, err);
        if (rc == RF_OK && r.status == 200) {
            *patched = true;
            if (patch_copy)
                *patch_copy = body;
            else
                free(body);
            rf__kresp_fini(&r);
            break;
        }
        free(body);
        long status = r.status;
        s_reason(&r, why, sizeof why);
        rf__kresp_fini(&r);
        if (rc != RF_OK)
            break;
        if (status == 409 && attempt < opts->max_conflicts)
            continue; /* the Node changed since we read it: read it again */
        rc = rf_error_set(err, RF_EIO, "node", "patching node %s answered HTTP %ld: %s", node, status, why);
        break;
    }
    rf__kconn_destroy(&conn);
    return rc;
}
