/* watcher/kobj.c: typed extraction of nodes, pods, PodGroups and PodDisruptionBudgets from decoded
 * JSON (see kobj.h). Strings are copied; nothing points into the document. */
#include "kobj.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jw.h"
#include "kdoc.h"
#include "rackfit/quantity.h"
#include "requests.h"

static char *s_dup(const char *s)
{
    return s ? strdup(s) : NULL;
}

static bool s_oom(const void *p, const void *src)
{
    return src && !p;
}

/* ---- key-value lists and resource lists ------------------------------------------------------------------------ */

static int s_kv_cmp(const void *a, const void *b)
{
    return strcmp(((const rf__kv_t *)a)->key, ((const rf__kv_t *)b)->key);
}

static void s_kvs_fini(rf__kvs_t *kvs)
{
    for (int32_t i = 0; i < kvs->n; i++) {
        free(kvs->v[i].key);
        free(kvs->v[i].value);
    }
    free(kvs->v);
    memset(kvs, 0, sizeof *kvs);
}

/* A map of strings (labels, annotations, nodeSelector). */
static rf_status s_kvs(const rf_doc_t *m, const char *path, rf__kvs_t *out, rf_error_t *err)
{
    if (!m || m->type == RF_DOC_NULL)
        return RF_OK;
    if (m->type != RF_DOC_MAP)
        return rf_error_set(err, RF_ESCHEMA, path, "must be a map");
    if (m->len == 0)
        return RF_OK;
    out->v = calloc(m->len, sizeof *out->v);
    if (!out->v)
        return rf_error_set(err, RF_ENOMEM, path, "out of memory");
    for (uint32_t i = 0; i < m->len; i++) {
        const rf_doc_t *v = &m->u.pairs[i].value;
        if (v->type != RF_DOC_STR)
            return rf_error_set(err, RF_ESCHEMA, path, "[\"%s\"] must be a string", m->u.pairs[i].key);
        out->v[i].key = strdup(m->u.pairs[i].key);
        out->v[i].value = strdup(v->u.s);
        out->n++;
        if (!out->v[i].key || !out->v[i].value)
            return rf_error_set(err, RF_ENOMEM, path, "out of memory");
    }
    qsort(out->v, (size_t)out->n, sizeof *out->v, s_kv_cmp);
    return RF_OK;
}

const char *rf__kvs_get(const rf__kvs_t *kvs, const char *key)
{
    rf__kv_t probe = {.key = (char *)key};
    const rf__kv_t *hit = kvs->n ? bsearch(&probe, kvs->v, (size_t)kvs->n, sizeof *kvs->v, s_kv_cmp) : NULL;
    return hit ? hit->value : NULL;
}

/* ---- taints, tolerations, node selector terms ------------------------------------------------------------------ */

static void s_taints_free(rf__taint_t *t, int32_t n)
{
    for (int32_t i = 0; i < n; i++) {
        free(t[i].key);
        free(t[i].op);
        free(t[i].value);
        free(t[i].effect);
    }
    free(t);
}

static rf_status s_taints(const rf_doc_t *a, const char *path, rf__taint_t **out, int32_t *n, rf_error_t *err)
{
    if (!a || a->type == RF_DOC_NULL)
        return RF_OK;
    if (a->type != RF_DOC_ARRAY)
        return rf_error_set(err, RF_ESCHEMA, path, "must be an array");
    if (a->len == 0)
        return RF_OK;
    *out = calloc(a->len, sizeof **out);
    if (!*out)
        return rf_error_set(err, RF_ENOMEM, path, "out of memory");
    for (uint32_t i = 0; i < a->len; i++) {
        const rf_doc_t *t = &a->u.items[i];
        if (t->type != RF_DOC_MAP)
            return rf_error_set(err, RF_ESCHEMA, path, "[%u] must be a map", i);
        rf__taint_t *x = &(*out)[i];
        (*n)++;
        x->key = strdup(rf__doc_str(t, "key") ? rf__doc_str(t, "key") : "");
        x->op = strdup(rf__doc_str(t, "operator") ? rf__doc_str(t, "operator") : "Equal");
        x->value = strdup(rf__doc_str(t, "value") ? rf__doc_str(t, "value") : "");
        x->effect = strdup(rf__doc_str(t, "effect") ? rf__doc_str(t, "effect") : "");
        if (!x->key || !x->op || !x->value || !x->effect)
            return rf_error_set(err, RF_ENOMEM, path, "out of memory");
    }
    return RF_OK;
}

static void s_reqs_free(rf__nsreq_t *r, int32_t n)
{
    for (int32_t i = 0; i < n; i++) {
        free(r[i].key);
        free(r[i].op);
        for (int32_t j = 0; j < r[i].n_values; j++)
            free(r[i].values[j]);
        free(r[i].values);
    }
    free(r);
}

static void s_terms_free(rf__nsterm_t *t, int32_t n)
{
    for (int32_t i = 0; i < n; i++) {
        s_reqs_free(t[i].exprs, t[i].n_exprs);
        s_reqs_free(t[i].fields, t[i].n_fields);
    }
    free(t);
}

static rf_status s_reqs(const rf_doc_t *a, const char *path, rf__nsreq_t **out, int32_t *n, rf_error_t *err)
{
    if (!a || a->type == RF_DOC_NULL || (a->type == RF_DOC_ARRAY && a->len == 0))
        return RF_OK;
    if (a->type != RF_DOC_ARRAY)
        return rf_error_set(err, RF_ESCHEMA, path, "must be an array");
    *out = calloc(a->len, sizeof **out);
    if (!*out)
        return rf_error_set(err, RF_ENOMEM, path, "out of memory");
    for (uint32_t i = 0; i < a->len; i++) {
        const rf_doc_t *r = &a->u.items[i];
        const char *key = rf__doc_str(r, "key"), *op = rf__doc_str(r, "operator");
        if (!key || !op)
            return rf_error_set(err, RF_ESCHEMA, path, "[%u] needs a key and an operator", i);
        rf__nsreq_t *x = &(*out)[i];
        (*n)++;
        x->key = strdup(key);
        x->op = strdup(op);
        if (!x->key || !x->op)
            return rf_error_set(err, RF_ENOMEM, path, "out of memory");
        const rf_doc_t *vs = rf__doc_get(r, "values");
        if (vs && vs->type == RF_DOC_ARRAY && vs->len) {
            x->values = calloc(vs->len, sizeof *x->values);
            if (!x->values)
                return rf_error_set(err, RF_ENOMEM, path, "out of memory");
            for (uint32_t j = 0; j < vs->len; j++) {
                if (vs->u.items[j].type != RF_DOC_STR)
                    return rf_error_set(err, RF_ESCHEMA, path, "[%u].values must hold strings", i);
                if (!(x->values[j] = strdup(vs->u.items[j].u.s)))
                    return rf_error_set(err, RF_ENOMEM, path, "out of memory");
                x->n_values++;
            }
        }
    }
    return RF_OK;
}

static rf_status s_terms(const rf_doc_t *a, rf__nsterm_t **out, int32_t *n, rf_error_t *err)
{
    const char *path = "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution";
    if (!a || a->type != RF_DOC_ARRAY)
        return RF_OK;
    /* No terms at all matches no node (Kubernetes); we keep one empty term
     * out of that case by refusing it in rf__kpod_from_doc's caller. */
    *out = calloc(a->len ? a->len : 1, sizeof **out);
    if (!*out)
        return rf_error_set(err, RF_ENOMEM, path, "out of memory");
    for (uint32_t i = 0; i < a->len; i++) {
        rf__nsterm_t *t = &(*out)[i];
        (*n)++;
        RF_CALL(s_reqs(rf__doc_get(&a->u.items[i], "matchExpressions"), path, &t->exprs, &t->n_exprs, err));
        RF_CALL(s_reqs(rf__doc_get(&a->u.items[i], "matchFields"), path, &t->fields, &t->n_fields, err));
    }
    return RF_OK;
}

static bool s_req_matches(const rf__nsreq_t *r, const char *value)
{
    if (strcmp(r->op, "Exists") == 0)
        return value != NULL;
    if (strcmp(r->op, "DoesNotExist") == 0)
        return value == NULL;
    bool in = false;
    for (int32_t j = 0; value && j < r->n_values; j++)
        in |= strcmp(r->values[j], value) == 0;
    if (strcmp(r->op, "In") == 0)
        return in;
    if (strcmp(r->op, "NotIn") == 0)
        return !in;
    if ((strcmp(r->op, "Gt") == 0 || strcmp(r->op, "Lt") == 0) && value && r->n_values == 1) {
        char *e1, *e2;
        errno = 0;
        long long a = strtoll(value, &e1, 10), b = strtoll(r->values[0], &e2, 10);
        if (errno || *e1 || *e2 || e1 == value)
            return false;
        return r->op[0] == 'G' ? a > b : a < b;
    }
    return false;
}

bool rf__kpod_affinity_matches(const rf__kpod_t *pod, const rf__knode_t *node)
{
    for (int32_t i = 0; i < pod->node_selector.n; i++) {
        const char *v = rf__kvs_get(&node->labels, pod->node_selector.v[i].key);
        if (!v || strcmp(v, pod->node_selector.v[i].value) != 0)
            return false;
    }
    if (!pod->affinity)
        return true;
    for (int32_t t = 0; t < pod->n_affinity; t++) {
        const rf__nsterm_t *term = &pod->affinity[t];
        if (term->n_exprs == 0 && term->n_fields == 0)
            continue; /* an empty term matches nothing */
        bool ok = true;
        for (int32_t i = 0; ok && i < term->n_exprs; i++)
            ok = s_req_matches(&term->exprs[i], rf__kvs_get(&node->labels, term->exprs[i].key));
        for (int32_t i = 0; ok && i < term->n_fields; i++)
            ok = strcmp(term->fields[i].key, "metadata.name") == 0 && s_req_matches(&term->fields[i], node->name);
        if (ok)
            return true;
    }
    return false;
}

bool rf__kpod_terminal(const rf__kpod_t *pod)
{
    return strcmp(pod->phase, "Succeeded") == 0 || strcmp(pod->phase, "Failed") == 0;
}

/* ---- nodes ----------------------------------------------------------------------------------------------------- */

void rf__knode_destroy(rf__knode_t **node)
{
    if (!node || !*node)
        return;
    rf__knode_t *n = *node;
    free(n->name);
    free(n->uid);
    s_kvs_fini(&n->labels);
    rf__res_fini(&n->alloc);
    s_taints_free(n->taints, n->n_taints);
    free(n);
    *node = NULL;
}

static rf_status s_quantities(const rf_doc_t *m, const char *path, rf__res_t *out, rf_error_t *err)
{
    if (!m || m->type != RF_DOC_MAP)
        return RF_OK;
    for (uint32_t i = 0; i < m->len; i++) {
        const rf_doc_t *q = &m->u.pairs[i].value;
        const char *name = m->u.pairs[i].key;
        int64_t v = 0;
        rf_qty_kind kind = rf_qty_kind_of(name);
        rf_status s = q->type == RF_DOC_STR   ? rf_qty_parse(q->u.s, q->len, kind, &v, err)
                      : q->type == RF_DOC_INT ? rf_qty_from_int(q->u.i, kind, &v, err)
                                              : rf_error_set(err, RF_ESCHEMA, "", "must be a quantity");
        if (s != RF_OK) {
            char msg[RF_ERROR_MESSAGE_MAX];
            snprintf(msg, sizeof msg, "%s", err ? err->message : "");
            return rf_error_set(err, RF_ESCHEMA, path, "[\"%s\"]: %s", name, msg);
        }
        RF_CALL(rf__res_add(out, name, v));
    }
    return RF_OK;
}

rf_status rf__knode_from_doc(const rf_doc_t *obj, rf__knode_t **out, rf_error_t *err)
{
    *out = NULL;
    rf__knode_t *n = calloc(1, sizeof *n);
    rf_status rc;
    if (!n)
        return rf_error_set(err, RF_ENOMEM, "", "out of memory");
    const char *name = rf__doc_str(obj, "metadata.name");
    if (!name) {
        rc = rf_error_set(err, RF_ESCHEMA, "metadata.name", "missing");
        goto fail;
    }
    n->name = strdup(name);
    n->uid = strdup(rf__doc_str(obj, "metadata.uid") ? rf__doc_str(obj, "metadata.uid") : "");
    if (!n->name || !n->uid) {
        rc = rf_error_set(err, RF_ENOMEM, "", "out of memory");
        goto fail;
    }
    if ((rc = s_kvs(rf__doc_at(obj, "metadata.labels"), "metadata.labels", &n->labels, err)) != RF_OK ||
        (rc = s_quantities(rf__doc_at(obj, "status.allocatable"), "status.allocatable", &n->alloc, err)) != RF_OK ||
        (rc = s_taints(rf__doc_at(obj, "spec.taints"), "spec.taints", &n->taints, &n->n_taints, err)) != RF_OK)
        goto fail;
    const rf_doc_t *u = rf__doc_at(obj, "spec.unschedulable");
    n->unschedulable = u && u->type == RF_DOC_BOOL && u->u.b;
    const rf_doc_t *conds = rf__doc_at(obj, "status.conditions");
    for (uint32_t i = 0; conds && conds->type == RF_DOC_ARRAY && i < conds->len; i++) {
        const char *type = rf__doc_str(&conds->u.items[i], "type");
        const char *status = rf__doc_str(&conds->u.items[i], "status");
        if (type && strcmp(type, "Ready") == 0)
            n->ready = status && strcmp(status, "True") == 0;
    }
    *out = n;
    return RF_OK;
fail:
    rf__knode_destroy(&n);
    return rc;
}

/* ---- pods ------------------------------------------------------------------------------------------------------ */

void rf__kpod_destroy(rf__kpod_t **pod)
{
    if (!pod || !*pod)
        return;
    rf__kpod_t *p = *pod;
    free(p->ns);
    free(p->name);
    free(p->uid);
    free(p->node_name);
    free(p->scheduler_name);
    free(p->phase);
    free(p->reason);
    free(p->nominated);
    s_kvs_fini(&p->labels);
    s_kvs_fini(&p->annotations);
    s_kvs_fini(&p->node_selector);
    s_taints_free(p->tols, p->n_tols);
    s_terms_free(p->affinity, p->n_affinity);
    rf__res_fini(&p->requests);
    free(p->unsupported);
    free(p->sched_reason);
    free(p->sched_message);
    free(p->sig);
    free(p->assumed_node);
    free(p);
    *pod = NULL;
}

static bool s_nonempty_array(const rf_doc_t *d)
{
    return d && d->type == RF_DOC_ARRAY && d->len > 0;
}

/* What the contract cannot express, or NULL. Static strings. */
static const char *s_unsupported(const rf_doc_t *spec)
{
    if (s_nonempty_array(rf__doc_at(spec, "affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution")))
        return "required pod affinity";
    if (s_nonempty_array(rf__doc_at(spec, "affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution")))
        return "required pod anti-affinity";
    const rf_doc_t *tsc = rf__doc_get(spec, "topologySpreadConstraints");
    for (uint32_t i = 0; tsc && tsc->type == RF_DOC_ARRAY && i < tsc->len; i++) {
        const char *w = rf__doc_str(&tsc->u.items[i], "whenUnsatisfiable");
        if (!w || strcmp(w, "DoNotSchedule") == 0)
            return "topology spread constraints (DoNotSchedule)";
    }
    const rf_doc_t *vols = rf__doc_get(spec, "volumes");
    for (uint32_t i = 0; vols && vols->type == RF_DOC_ARRAY && i < vols->len; i++)
        if (rf__doc_get(&vols->u.items[i], "persistentVolumeClaim") || rf__doc_get(&vols->u.items[i], "ephemeral"))
            return "persistent volume claims (a volume may be bound to nodes; the watcher does not follow volumes)";
    if (s_nonempty_array(rf__doc_get(spec, "resourceClaims")))
        return "dynamic resource claims";
    static const char *const lists[2] = {"containers", "initContainers"};
    for (int l = 0; l < 2; l++) {
        const rf_doc_t *cs = rf__doc_get(spec, lists[l]);
        for (uint32_t i = 0; cs && cs->type == RF_DOC_ARRAY && i < cs->len; i++) {
            const rf_doc_t *ports = rf__doc_get(&cs->u.items[i], "ports");
            for (uint32_t j = 0; ports && ports->type == RF_DOC_ARRAY && j < ports->len; j++) {
                const rf_doc_t *hp = rf__doc_get(&ports->u.items[j], "hostPort");
                if (hp && hp->type == RF_DOC_INT && hp->u.i > 0)
                    return "host ports";
            }
        }
    }
    return NULL;
}

/* Labels that name a pod's role in its gang: pods with different roles are
 * different pod sets even with equal specs. */
const char *const rf__role_labels[] = {"rackfit.io/pod-set", "kueue.x-k8s.io/podset",
                                       "jobset.sigs.k8s.io/replicatedjob-name", "training.kubeflow.org/replica-type",
                                       NULL};
/* Pod annotations that shape the placement, part of the signature. */
static const char *const s_sig_annotations[] = {
    "kueue.x-k8s.io/podset-required-topology", "kueue.x-k8s.io/podset-preferred-topology",
    "kueue.x-k8s.io/podset-slice-required-topology", "kueue.x-k8s.io/podset-slice-size", NULL};

static char *s_signature(const rf__kpod_t *p)
{
    rf__jw_t w;
    rf__jw_init(&w);
    for (int i = 0; rf__role_labels[i]; i++) {
        const char *v = rf__kvs_get(&p->labels, rf__role_labels[i]);
        if (v)
            rf__jw_printf(&w, "role=%s;", v);
    }
    /* requests, sorted by name (insertion sort: a pod names few resources) */
    int32_t order[64];
    int32_t nr = p->requests.n < 64 ? p->requests.n : 64;
    for (int32_t i = 0; i < nr; i++)
        order[i] = i;
    for (int32_t i = 1; i < nr; i++)
        for (int32_t j = i; j > 0 && strcmp(p->requests.names[order[j - 1]], p->requests.names[order[j]]) > 0; j--) {
            int32_t t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    for (int32_t i = 0; i < nr; i++)
        rf__jw_printf(&w, "r:%s=%lld;", p->requests.names[order[i]], (long long)p->requests.vals[order[i]]);
    for (int32_t i = 0; i < p->node_selector.n; i++)
        rf__jw_printf(&w, "s:%s=%s;", p->node_selector.v[i].key, p->node_selector.v[i].value);
    for (int32_t i = 0; i < p->n_tols; i++)
        rf__jw_printf(&w, "t:%s,%s,%s,%s;", p->tols[i].key, p->tols[i].op, p->tols[i].value, p->tols[i].effect);
    for (int32_t t = 0; p->affinity && t < p->n_affinity; t++) {
        rf__jw_puts(&w, "a:(");
        for (int k = 0; k < 2; k++) {
            const rf__nsreq_t *rs = k ? p->affinity[t].fields : p->affinity[t].exprs;
            int32_t n = k ? p->affinity[t].n_fields : p->affinity[t].n_exprs;
            for (int32_t i = 0; i < n; i++) {
                rf__jw_printf(&w, "%c%s %s", k ? 'f' : 'e', rs[i].key, rs[i].op);
                for (int32_t j = 0; j < rs[i].n_values; j++)
                    rf__jw_printf(&w, ",%s", rs[i].values[j]);
                rf__jw_puts(&w, ";");
            }
        }
        rf__jw_puts(&w, ")");
    }
    for (int i = 0; s_sig_annotations[i]; i++) {
        const char *v = rf__kvs_get(&p->annotations, s_sig_annotations[i]);
        if (v)
            rf__jw_printf(&w, "k%d=%s;", i, v);
    }
    rf__jw_puts(&w, ".");
    return rf__jw_take(&w, NULL);
}

rf_status rf__kpod_from_doc(const rf_doc_t *obj, rf__kpod_t **out, rf_error_t *err)
{
    *out = NULL;
    rf__kpod_t *p = calloc(1, sizeof *p);
    rf_status rc;
    if (!p)
        return rf_error_set(err, RF_ENOMEM, "", "out of memory");
    const char *ns = rf__doc_str(obj, "metadata.namespace"), *name = rf__doc_str(obj, "metadata.name");
    if (!ns || !name) {
        rc = rf_error_set(err, RF_ESCHEMA, "metadata", "a pod needs a namespace and a name");
        goto fail;
    }
    const rf_doc_t *spec = rf__doc_get(obj, "spec");
    if (!spec || spec->type != RF_DOC_MAP) {
        rc = rf_error_set(err, RF_ESCHEMA, "spec", "missing");
        goto fail;
    }
    const char *sn = rf__doc_str(spec, "schedulerName");
    const char *nn = rf__doc_str(spec, "nodeName");
    const char *phase = rf__doc_str(obj, "status.phase");
    const char *reason = rf__doc_str(obj, "status.reason");
    const char *nom = rf__doc_str(obj, "status.nominatedNodeName");
    p->ns = strdup(ns);
    p->name = strdup(name);
    p->uid = s_dup(rf__doc_str(obj, "metadata.uid") ? rf__doc_str(obj, "metadata.uid") : "");
    p->node_name = nn && *nn ? strdup(nn) : NULL;
    p->scheduler_name = strdup(sn ? sn : "default-scheduler");
    p->phase = strdup(phase ? phase : "");
    p->reason = strdup(reason ? reason : "");
    p->nominated = nom && *nom ? strdup(nom) : NULL;
    if (!p->ns || !p->name || !p->uid || s_oom(p->node_name, nn && *nn ? nn : NULL) || !p->scheduler_name ||
        !p->phase || !p->reason || s_oom(p->nominated, nom && *nom ? nom : NULL)) {
        rc = rf_error_set(err, RF_ENOMEM, "", "out of memory");
        goto fail;
    }
    const rf_doc_t *dt = rf__doc_at(obj, "metadata.deletionTimestamp");
    p->deleting = dt && dt->type == RF_DOC_STR;
    p->gated = s_nonempty_array(rf__doc_get(spec, "schedulingGates"));
    p->started = rf__doc_str(obj, "status.startTime") != NULL;
    const rf_doc_t *prio = rf__doc_get(spec, "priority");
    p->priority = prio && prio->type == RF_DOC_INT ? prio->u.i : 0;
    if ((rc = s_kvs(rf__doc_at(obj, "metadata.labels"), "metadata.labels", &p->labels, err)) != RF_OK ||
        (rc = s_kvs(rf__doc_at(obj, "metadata.annotations"), "metadata.annotations", &p->annotations, err)) != RF_OK ||
        (rc = s_kvs(rf__doc_get(spec, "nodeSelector"), "spec.nodeSelector", &p->node_selector, err)) != RF_OK ||
        (rc = s_taints(rf__doc_get(spec, "tolerations"), "spec.tolerations", &p->tols, &p->n_tols, err)) != RF_OK)
        goto fail;
    const rf_doc_t *na = rf__doc_at(spec, "affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution");
    if (na && na->type == RF_DOC_MAP) {
        const rf_doc_t *terms = rf__doc_get(na, "nodeSelectorTerms");
        if (!terms || terms->type != RF_DOC_ARRAY) {
            rc = rf_error_set(err, RF_ESCHEMA, "spec.affinity.nodeAffinity", "nodeSelectorTerms must be an array");
            goto fail;
        }
        if ((rc = s_terms(terms, &p->affinity, &p->n_affinity, err)) != RF_OK)
            goto fail;
    }
    rf_error_t qerr;
    rf_error_clear(&qerr);
    if (rf__pod_requests(spec, &p->requests, &qerr) != RF_OK) {
        char msg[RF_ERROR_MESSAGE_MAX + RF_ERROR_PATH_MAX + 8];
        snprintf(msg, sizeof msg, "%s: %s", qerr.path, qerr.message);
        p->unsupported = strdup(msg);
    } else {
        const char *why = s_unsupported(spec);
        p->unsupported = why ? strdup(why) : NULL;
    }
    const rf_doc_t *conds = rf__doc_at(obj, "status.conditions");
    for (uint32_t i = 0; conds && conds->type == RF_DOC_ARRAY && i < conds->len; i++) {
        const rf_doc_t *c = &conds->u.items[i];
        const char *type = rf__doc_str(c, "type"), *status = rf__doc_str(c, "status");
        if (type && strcmp(type, "Ready") == 0)
            p->ready = status && strcmp(status, "True") == 0;
        if (type && strcmp(type, "PodScheduled") == 0 && status && strcmp(status, "False") == 0) {
            const char *r = rf__doc_str(c, "reason"), *m = rf__doc_str(c, "message");
            p->sched_reason = strdup(r ? r : "");
            p->sched_message = strdup(m ? m : "");
        }
    }
    if (!(p->sig = s_signature(p))) {
        rc = rf_error_set(err, RF_ENOMEM, "", "out of memory");
        goto fail;
    }
    *out = p;
    return RF_OK;
fail:
    rf__kpod_destroy(&p);
    return rc;
}

/* ---- PodGroups ------------------------------------------------------------------------------------------------- */

void rf__kpodgroup_destroy(rf__kpodgroup_t **pg)
{
    if (!pg || !*pg)
        return;
    free((*pg)->ns);
    free((*pg)->name);
    s_kvs_fini(&(*pg)->annotations);
    free(*pg);
    *pg = NULL;
}

rf_status rf__kpodgroup_from_doc(const rf_doc_t *obj, rf__kpodgroup_t **out, rf_error_t *err)
{
    *out = NULL;
    const char *ns = rf__doc_str(obj, "metadata.namespace"), *name = rf__doc_str(obj, "metadata.name");
    if (!ns || !name)
        return rf_error_set(err, RF_ESCHEMA, "metadata", "a PodGroup needs a namespace and a name");
    const rf_doc_t *mm = rf__doc_at(obj, "spec.minMember");
    rf__kpodgroup_t *pg = calloc(1, sizeof *pg);
    if (!pg)
        return rf_error_set(err, RF_ENOMEM, "", "out of memory");
    pg->ns = strdup(ns);
    pg->name = strdup(name);
    pg->min_member = mm && mm->type == RF_DOC_INT && mm->u.i > 0 ? mm->u.i : 0;
    if (!pg->ns || !pg->name) {
        rf__kpodgroup_destroy(&pg);
        return rf_error_set(err, RF_ENOMEM, "", "out of memory");
    }
    rf_status rc = s_kvs(rf__doc_at(obj, "metadata.annotations"), "metadata.annotations", &pg->annotations, err);
    if (rc != RF_OK) {
        rf__kpodgroup_destroy(&pg);
        return rc;
    }
    *out = pg;
    return RF_OK;
}

/* ---- PodDisruptionBudgets -------------------------------------------------------------------------------------- */

void rf__kpdb_destroy(rf__kpdb_t **pdb)
{
    if (!pdb || !*pdb)
        return;
    free((*pdb)->ns);
    free((*pdb)->name);
    s_kvs_fini(&(*pdb)->match_labels);
    s_reqs_free((*pdb)->exprs, (*pdb)->n_exprs);
    free(*pdb);
    *pdb = NULL;
}

rf_status rf__kpdb_from_doc(const rf_doc_t *obj, rf__kpdb_t **out, rf_error_t *err)
{
    *out = NULL;
    const char *ns = rf__doc_str(obj, "metadata.namespace"), *name = rf__doc_str(obj, "metadata.name");
    if (!ns || !name)
        return rf_error_set(err, RF_ESCHEMA, "metadata", "a PodDisruptionBudget needs a namespace and a name");
    rf__kpdb_t *d = calloc(1, sizeof *d);
    if (!d)
        return rf_error_set(err, RF_ENOMEM, "", "out of memory");
    d->ns = strdup(ns);
    d->name = strdup(name);
    rf_status rc = RF_OK;
    if (!d->ns || !d->name) {
        rc = rf_error_set(err, RF_ENOMEM, "", "out of memory");
        goto done;
    }
    const char *api = rf__doc_str(obj, "apiVersion");
    d->v1beta1 = api && strcmp(api, "policy/v1beta1") == 0;
    const rf_doc_t *sel = rf__doc_at(obj, "spec.selector");
    d->has_selector = sel && sel->type == RF_DOC_MAP;
    if (d->has_selector &&
        ((rc = s_kvs(rf__doc_get(sel, "matchLabels"), "spec.selector.matchLabels", &d->match_labels, err)) != RF_OK ||
         (rc = s_reqs(rf__doc_get(sel, "matchExpressions"), "spec.selector.matchExpressions", &d->exprs, &d->n_exprs,
                      err)) != RF_OK))
        goto done;
    const rf_doc_t *allowed = rf__doc_at(obj, "status.disruptionsAllowed");
    const rf_doc_t *gen = rf__doc_at(obj, "metadata.generation"), *seen = rf__doc_at(obj, "status.observedGeneration");
    int64_t g = gen && gen->type == RF_DOC_INT ? gen->u.i : 0, o = seen && seen->type == RF_DOC_INT ? seen->u.i : 0;
    d->allowed = allowed && allowed->type == RF_DOC_INT && allowed->u.i > 0 && o >= g ? allowed->u.i : 0;
done:
    if (rc != RF_OK)
        rf__kpdb_destroy(&d);
    *out = d;
    return rc;
}

bool rf__kpdb_selects(const rf__kpdb_t *pdb, const rf__kpod_t *pod)
{
    if (!pdb->has_selector || strcmp(pdb->ns, pod->ns) != 0)
        return false;
    if (pdb->v1beta1 && pod->labels.n == 0) /* 1.20's Eviction API: a pod without labels has no budget */
        return false;
    if (pdb->match_labels.n == 0 && pdb->n_exprs == 0)
        return !pdb->v1beta1;
    for (int32_t i = 0; i < pdb->match_labels.n; i++) {
        const char *v = rf__kvs_get(&pod->labels, pdb->match_labels.v[i].key);
        if (!v || strcmp(v, pdb->match_labels.v[i].value) != 0)
            return false;
    }
    for (int32_t i = 0; i < pdb->n_exprs; i++) {
        const rf__nsreq_t *r = &pdb->exprs[i];
        if (strcmp(r->op, "Gt") == 0 || strcmp(r->op, "Lt") == 0)
            return false; /* not a label selector operator: the server refuses such a budget */
        if (!s_req_matches(r, rf__kvs_get(&pod->labels, r->key)))
            return false;
    }
    return true;
}
