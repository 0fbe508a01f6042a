/* watcher/decisions.c: rackfitd's answer mapped onto the plan's pods (see decisions.h). */
#include "decisions.h"

#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "jw.h"
#include "kdoc.h"
#include "kube_http.h"

void rf__binds_free(rf__bind_t *p, int32_t n)
{
    for (int32_t i = 0; p && i < n; i++) {
        free(p[i].ns);
        free(p[i].name);
        free(p[i].uid);
        free(p[i].node);
    }
    free(p);
}

rf__bind_t *rf__binds_copy(const rf__bind_t *p, int32_t n)
{
    rf__bind_t *c = calloc((size_t)n + 1, sizeof *c);
    for (int32_t i = 0; c && i < n; i++) {
        c[i] = (rf__bind_t){.ns = strdup(p[i].ns ? p[i].ns : ""),
                            .name = strdup(p[i].name ? p[i].name : ""),
                            .uid = strdup(p[i].uid ? p[i].uid : ""),
                            .node = strdup(p[i].node ? p[i].node : "")};
        if (!c[i].ns || !c[i].name || !c[i].uid || !c[i].node) {
            rf__binds_free(c, i + 1);
            return NULL;
        }
    }
    return c;
}

void rf__decision_fini(rf__decision_t *d)
{
    rf__binds_free(d->binds, d->n_binds);
    free(d->gang);
    free(d->reason);
    memset(d, 0, sizeof *d);
}

void rf__decisions_free(rf__decision_t **dp, int32_t n)
{
    if (!dp || !*dp)
        return;
    for (int32_t i = 0; i < n; i++)
        rf__decision_fini(&(*dp)[i]);
    free(*dp);
    *dp = NULL;
}

static char *s_dup(const char *s)
{
    return strdup(s ? s : "");
}

rf_status rf__decisions_from_answer(const rf__plan_t *plan, const char *answer, size_t len, rf__decision_t **out,
                                    int32_t *n_out, rf_error_t *err)
{
    *out = NULL;
    *n_out = 0;
    rf__arena_t *arena = rf__arena_new(0);
    rf_doc_t *doc = NULL;
    rf_status rc = RF_OK;
    rf__decision_t *d = NULL;
    if (!arena)
        return rf_error_set(err, RF_ENOMEM, "", "out of memory");
    if ((rc = rf__kube_json(answer, len, arena, &doc, err)) != RF_OK)
        goto done;
    const rf_doc_t *gangs = rf__doc_get(doc, "gangs");
    if (!gangs || gangs->type != RF_DOC_ARRAY || (int32_t)gangs->len != plan->n_sent) {
        rc = rf_error_set(err, RF_ESCHEMA, "gangs", "the answer does not answer the %d gangs sent", plan->n_sent);
        goto done;
    }
    d = calloc((size_t)plan->n_sent + 1, sizeof *d);
    if (!d) {
        rc = rf_error_set(err, RF_ENOMEM, "", "out of memory");
        goto done;
    }
    for (int32_t j = 0; j < plan->n_sent; j++) {
        const rf__pgang_t *g = &plan->gangs[plan->sent[j]];
        const rf_doc_t *ga = &gangs->u.items[j];
        const char *name = rf__doc_str(ga, "name");
        rf__decision_t *x = &d[(*n_out)++];
        x->plan_gang = plan->sent[j];
        x->gang = s_dup(g->name);
        if (!name || strcmp(name, g->name) != 0) {
            rc = rf_error_set(err, RF_ESCHEMA, "gangs", "answer gang %d is `%s`, not `%s`", j, name ? name : "",
                              g->name);
            goto done;
        }
        const rf_doc_t *adm = rf__doc_get(ga, "admitted");
        x->admitted = adm && adm->type == RF_DOC_BOOL && adm->u.b;
        if (!x->admitted) {
            x->reason = s_dup(rf__doc_str(ga, "reason") ? rf__doc_str(ga, "reason") : "rejected by the solver");
            continue;
        }
        x->binds = calloc((size_t)g->n_pending + 1, sizeof *x->binds);
        if (!x->binds) {
            rc = rf_error_set(err, RF_ENOMEM, "", "out of memory");
            goto done;
        }
        const rf_doc_t *sets = rf__doc_get(ga, "pod_sets");
        for (uint32_t s = 0; sets && sets->type == RF_DOC_ARRAY && s < sets->len; s++) {
            const char *sname = rf__doc_str(&sets->u.items[s], "name");
            const rf__gset_t *gs = NULL;
            for (int32_t k = 0; sname && k < g->n_sets && !gs; k++)
                if (strcmp(g->sets[k].name, sname) == 0)
                    gs = &g->sets[k];
            if (!gs) {
                rc = rf_error_set(err, RF_ESCHEMA, "gangs", "gang %s: unknown pod set `%s`", g->name,
                                  sname ? sname : "");
                goto done;
            }
            const rf_doc_t *pl = rf__doc_get(&sets->u.items[s], "placements");
            int32_t next = 0;
            for (uint32_t p = 0; pl && pl->type == RF_DOC_ARRAY && p < pl->len; p++) {
                const char *node = rf__doc_str(&pl->u.items[p], "node");
                const rf_doc_t *cnt = rf__doc_get(&pl->u.items[p], "count");
                if (!node || !cnt || cnt->type != RF_DOC_INT || cnt->u.i < 0 || cnt->u.i > gs->n_pending - next) {
                    rc = rf_error_set(err, RF_ESCHEMA, "gangs",
                                      "gang %s, pod set %s: placements do not fit its %d "
                                      "pending pods",
                                      g->name, gs->name, gs->n_pending);
                    goto done;
                }
                for (int64_t c = 0; c < cnt->u.i; c++, next++) {
                    const rf__member_t *m = &gs->pending[next];
                    rf__bind_t *bd = &x->binds[x->n_binds++];
                    bd->ns = s_dup(m->ns);
                    bd->name = s_dup(m->name);
                    bd->uid = s_dup(m->uid);
                    bd->node = s_dup(node);
                    if (!bd->ns || !bd->name || !bd->uid || !bd->node) {
                        rc = rf_error_set(err, RF_ENOMEM, "", "out of memory");
                        goto done;
                    }
                }
            }
        }
    }
done:
    rf__arena_destroy(&arena);
    if (rc != RF_OK) {
        rf__decisions_free(&d, *n_out);
        *n_out = 0;
    }
    *out = d;
    return rc;
}

void rf__victims_free(rf__victim_t **vp, int32_t n)
{
    if (!vp || !*vp)
        return;
    for (int32_t i = 0; i < n; i++)
        free((*vp)[i].by);
    free(*vp);
    *vp = NULL;
}

rf_status rf__victims_from_answer(const rf__plan_t *plan, const char *answer, size_t len, rf__victim_t **out,
                                  int32_t *n_out, rf_error_t *err)
{
    *out = NULL;
    *n_out = 0;
    if (plan->n_running == 0)
        return RF_OK;
    rf__arena_t *arena = rf__arena_new(0);
    rf_doc_t *doc = NULL;
    rf_status rc = RF_OK;
    rf__victim_t *v = NULL;
    if (!arena)
        return rf_error_set(err, RF_ENOMEM, "", "out of memory");
    if ((rc = rf__kube_json(answer, len, arena, &doc, err)) != RF_OK)
        goto done;
    const rf_doc_t *run = rf__doc_get(doc, "running");
    if (!run || run->type != RF_DOC_ARRAY || (int32_t)run->len != plan->n_running) {
        rc = rf_error_set(err, RF_ESCHEMA, "running", "the answer does not answer the %d running gangs sent",
                          plan->n_running);
        goto done;
    }
    if (!(v = calloc((size_t)plan->n_running + 1, sizeof *v))) {
        rc = rf_error_set(err, RF_ENOMEM, "", "out of memory");
        goto done;
    }
    for (int32_t r = 0; r < plan->n_running; r++) {
        const rf_doc_t *x = &run->u.items[r];
        const char *name = rf__doc_str(x, "name");
        if (!name || strcmp(name, plan->running[r].name) != 0) {
            rc = rf_error_set(err, RF_ESCHEMA, "running", "answer running gang %d is `%s`, not `%s`", r,
                              name ? name : "", plan->running[r].name);
            goto done;
        }
        const rf_doc_t *pre = rf__doc_get(x, "preempted"), *by = rf__doc_get(x, "by");
        if (!pre || pre->type != RF_DOC_BOOL || !pre->u.b)
            continue;
        rf__jw_t w;
        rf__jw_init(&w);
        rf__jw_puts(&w, ",");
        for (uint32_t k = 0; by && by->type == RF_DOC_ARRAY && k < by->len; k++)
            if (by->u.items[k].type == RF_DOC_STR) {
                rf__jw_puts(&w, by->u.items[k].u.s);
                rf__jw_puts(&w, ",");
            }
        v[*n_out].run = r;
        if (!(v[(*n_out)++].by = rf__jw_take(&w, NULL))) {
            rc = rf_error_set(err, RF_ENOMEM, "", "out of memory");
            goto done;
        }
    }
done:
    rf__arena_destroy(&arena);
    if (rc != RF_OK) {
        rf__victims_free(&v, *n_out);
        *n_out = 0;
    }
    *out = v;
    return rc;
}
