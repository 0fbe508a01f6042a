/* watcher/requests.c: pod requests per Kubernetes (see requests.h). */
#include "requests.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kdoc.h"
#include "rackfit/quantity.h"

/* One container's requests, limits filling what requests leave out; `out`
 * must hold this container alone (a limit counts unless this container
 * requests the resource itself). */
static rf_status s_container(const rf_doc_t *c, const char *path, rf__res_t *out, rf_error_t *err)
{
    const rf_doc_t *res = rf__doc_get(c, "resources");
    if (!res || res->type != RF_DOC_MAP)
        return RF_OK;
    static const char *const which[2] = {"requests", "limits"};
    for (int w = 0; w < 2; w++) {
        const rf_doc_t *m = rf__doc_get(res, which[w]);
        if (!m || m->type == RF_DOC_NULL)
            continue;
        if (m->type != RF_DOC_MAP)
            return rf_error_set(err, RF_ESCHEMA, path, "resources.%s must be a map", which[w]);
        for (uint32_t i = 0; i < m->len; i++) {
            const char *name = m->u.pairs[i].key;
            const rf_doc_t *q = &m->u.pairs[i].value;
            bool have = false;
            for (int32_t k = 0; k < out->n; k++)
                have |= strcmp(out->names[k], name) == 0;
            if (w == 1 && have)
                continue; /* the request wins over the limit */
            int64_t v = 0;
            rf_status s;
            rf_qty_kind kind = rf_qty_kind_of(name);
            if (q->type == RF_DOC_STR)
                s = rf_qty_parse(q->u.s, q->len, kind, &v, err);
            else if (q->type == RF_DOC_INT)
                s = rf_qty_from_int(q->u.i, kind, &v, err);
            else if (q->type == RF_DOC_FLOAT)
                s = rf_qty_from_double(q->u.f, kind, &v, err);
            else
                s = rf_error_set(err, RF_ESCHEMA, "", "must be a quantity");
            if (s != RF_OK) {
                char msg[RF_ERROR_MESSAGE_MAX];
                snprintf(msg, sizeof msg, "%s", err ? err->message : "bad quantity");
                return rf_error_set(err, RF_ESCHEMA, path, "resources.%s[\"%s\"]: %s", which[w], name, msg);
            }
            RF_CALL(rf__res_add(out, name, v));
        }
    }
    return RF_OK;
}

static void s_res_clear(rf__res_t *r)
{
    rf__res_fini(r);
}

static rf_status s_add_all(rf__res_t *dst, const rf__res_t *src)
{
    for (int32_t i = 0; i < src->n; i++)
        RF_CALL(rf__res_add(dst, src->names[i], src->vals[i]));
    return RF_OK;
}

static rf_status s_max_all(rf__res_t *dst, const rf__res_t *src)
{
    for (int32_t i = 0; i < src->n; i++)
        RF_CALL(rf__res_max(dst, src->names[i], src->vals[i]));
    return RF_OK;
}

rf_status rf__pod_requests(const rf_doc_t *spec, rf__res_t *out, rf_error_t *err)
{
    rf__res_t sidecars = {0}, init_peak = {0}, one = {0};
    rf_status rc = RF_OK;
    char path[64];
    if (!spec || spec->type != RF_DOC_MAP)
        return rf_error_set(err, RF_ESCHEMA, "spec", "must be a map");
    const rf_doc_t *cs = rf__doc_get(spec, "containers");
    if (cs && cs->type == RF_DOC_ARRAY)
        for (uint32_t i = 0; i < cs->len; i++) {
            snprintf(path, sizeof path, "spec.containers[%u]", i);
            s_res_clear(&one);
            if ((rc = s_container(&cs->u.items[i], path, &one, err)) != RF_OK || (rc = s_add_all(out, &one)) != RF_OK)
                goto done;
        }
    const rf_doc_t *ics = rf__doc_get(spec, "initContainers");
    if (ics && ics->type == RF_DOC_ARRAY)
        for (uint32_t i = 0; i < ics->len; i++) {
            const rf_doc_t *c = &ics->u.items[i];
            snprintf(path, sizeof path, "spec.initContainers[%u]", i);
            s_res_clear(&one);
            if ((rc = s_container(c, path, &one, err)) != RF_OK)
                goto done;
            const char *rp = rf__doc_str(c, "restartPolicy");
            if (rp && strcmp(rp, "Always") == 0) {
                /* A native sidecar runs beside the containers: it adds to
                 * the regular total, and its peak is every sidecar so far. */
                if ((rc = s_add_all(out, &one)) != RF_OK || (rc = s_add_all(&sidecars, &one)) != RF_OK ||
                    (rc = s_max_all(&init_peak, &sidecars)) != RF_OK)
                    goto done;
            } else {
                if ((rc = s_add_all(&one, &sidecars)) != RF_OK || (rc = s_max_all(&init_peak, &one)) != RF_OK)
                    goto done;
            }
        }
    if ((rc = s_max_all(out, &init_peak)) != RF_OK)
        goto done;
    /* Pod-level requests (a pod-level limit without a request counts as one)
     * replace the totals of the resources they support. */
    const rf_doc_t *pl = rf__doc_at(spec, "resources.requests"), *pll = rf__doc_at(spec, "resources.limits");
    if ((pl && pl->type == RF_DOC_MAP) || (pll && pll->type == RF_DOC_MAP)) {
        rf_doc_t fake_container = {.type = RF_DOC_MAP, .len = 1, .offset = -1};
        rf_doc_kv_t kv = {.key = "resources", .key_len = 9, .value = *rf__doc_get(spec, "resources")};
        fake_container.u.pairs = &kv;
        s_res_clear(&one);
        if ((rc = s_container(&fake_container, "spec", &one, err)) != RF_OK)
            goto done;
        for (int32_t i = 0; i < one.n; i++)
            if (strcmp(one.names[i], "cpu") == 0 || strcmp(one.names[i], "memory") == 0) {
                int64_t cur = rf__res_get(out, one.names[i]);
                if ((rc = rf__res_add(out, one.names[i], one.vals[i] - cur)) != RF_OK)
                    goto done;
            }
    }
    const rf_doc_t *ov = rf__doc_get(spec, "overhead");
    if (ov && ov->type == RF_DOC_MAP) {
        rf_doc_t fake_res = {.type = RF_DOC_MAP, .len = 1, .offset = -1};
        rf_doc_kv_t kv1 = {.key = "requests", .key_len = 8, .value = *ov};
        fake_res.u.pairs = &kv1;
        rf_doc_t fake_container = {.type = RF_DOC_MAP, .len = 1, .offset = -1};
        rf_doc_kv_t kv2 = {.key = "resources", .key_len = 9, .value = fake_res};
        fake_container.u.pairs = &kv2;
        s_res_clear(&one);
        if ((rc = s_container(&fake_container, "spec.overhead", &one, err)) != RF_OK)
            goto done;
        if ((rc = s_add_all(out, &one)) != RF_OK)
            goto done;
    }
done:
    rf__res_fini(&sidecars);
    rf__res_fini(&init_peak);
    rf__res_fini(&one);
    return rc;
}
