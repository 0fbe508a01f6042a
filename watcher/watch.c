/* watcher/watch.c: list then watch, per kind (see watch.h). */
#include "watch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gangs.h"
#include "log.h"

static const char *const s_kind_names[RF_KIND_COUNT] = {"nodes", "pods", "podgroups", "poddisruptionbudgets"};

static void s_sleep(double s, const atomic_int *stop)
{
    double end = rf__now() + s;
    while (!*stop && rf__now() < end) {
        struct timespec ts = {.tv_sec = 0, .tv_nsec = 20 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
}

/* Decode one object of `kind`; NULL (logged) when it is malformed. `older`:
 * it came from the kind's older API version's path (a list's items carry no
 * apiVersion of their own; a watch event's object does). */
static void *s_object(rf__kind kind, const rf_doc_t *obj, bool older)
{
    rf_error_t err;
    rf_error_clear(&err);
    void *out = NULL;
    rf_status s;
    if (kind == RF_KIND_NODE)
        s = rf__knode_from_doc(obj, (rf__knode_t **)&out, &err);
    else if (kind == RF_KIND_POD)
        s = rf__kpod_from_doc(obj, (rf__kpod_t **)&out, &err);
    else if (kind == RF_KIND_PODGROUP)
        s = rf__kpodgroup_from_doc(obj, (rf__kpodgroup_t **)&out, &err);
    else
        s = rf__kpdb_from_doc(obj, (rf__kpdb_t **)&out, &err);
    if (s != RF_OK) {
        const char *name = rf__doc_str(obj, "metadata.name");
        rf__log(RF_LOG_WARN, "ignoring %s %s: %s%s%s", s_kind_names[kind], name ? name : "(unnamed)", err.path,
                err.path[0] ? ": " : "", err.message);
        return NULL;
    }
    if (kind == RF_KIND_PDB && !rf__doc_str(obj, "apiVersion"))
        ((rf__kpdb_t *)out)->v1beta1 = older;
    return out;
}

static bool s_forbidden_event(const rf_doc_t *obj);

/* rf__watch_apply, for a stream read from the older API version's path when `older`. */
static int s_apply(rf__cache_t *cache, rf__kind kind, const char *line, size_t len, char *rv, size_t rv_cap, bool older)
{
    rf__arena_t *arena = rf__arena_new(0);
    rf_doc_t *doc = NULL;
    rf_error_t err;
    int ret = 0;
    if (!arena)
        return -1;
    if (rf__kube_json(line, len, arena, &doc, &err) != RF_OK) {
        rf__log(RF_LOG_WARN, "watch %s: unreadable event: %s", s_kind_names[kind], err.message);
        ret = -1;
        goto done;
    }
    const char *type = rf__doc_str(doc, "type");
    const rf_doc_t *obj = rf__doc_get(doc, "object");
    if (!type || !obj || obj->type != RF_DOC_MAP) {
        ret = -1;
        goto done;
    }
    if (strcmp(type, "ERROR") == 0) {
        const rf_doc_t *code = rf__doc_get(obj, "code");
        const char *msg = rf__doc_str(obj, "message");
        if (code && code->type == RF_DOC_INT && code->u.i == 410) {
            ret = 1;
        } else if (s_forbidden_event(obj)) {
            rf__log(RF_LOG_WARN, "watch %s: error event: %s", s_kind_names[kind], msg ? msg : "(no message)");
            ret = 2;
        } else {
            rf__log(RF_LOG_WARN, "watch %s: error event: %s", s_kind_names[kind], msg ? msg : "(no message)");
            ret = -1;
        }
        goto done;
    }
    const char *orv = rf__doc_str(obj, "metadata.resourceVersion");
    if (orv && strlen(orv) < rv_cap)
        snprintf(rv, rv_cap, "%s", orv);
    if (strcmp(type, "BOOKMARK") == 0)
        goto done;
    if (strcmp(type, "DELETED") == 0) {
        char key[512];
        const char *ns = rf__doc_str(obj, "metadata.namespace"), *name = rf__doc_str(obj, "metadata.name");
        if (!name) {
            ret = -1;
            goto done;
        }
        if (kind == RF_KIND_NODE)
            snprintf(key, sizeof key, "%s", name);
        else
            snprintf(key, sizeof key, "%s/%s", ns ? ns : "", name);
        rf__cache_lock(cache);
        rf__cache_del(cache, kind, key);
        rf__cache_touch(cache);
        rf__cache_unlock(cache);
        goto done;
    }
    if (strcmp(type, "ADDED") != 0 && strcmp(type, "MODIFIED") != 0) {
        ret = -1;
        goto done;
    }
    void *o = s_object(kind, obj, older);
    if (o) {
        rf__cache_lock(cache);
        char gang[320] = "", key[512];
        if (kind == RF_KIND_POD && strcmp(type, "MODIFIED") == 0) { /* the same pod, its capacity as it was? */
            rf__cache_key(kind, o, key, sizeof key);
            if (rf__cache_pod_quiet(cache, rf__cache_get(cache, kind, key), o))
                rf__pod_gang_name(o, gang, sizeof gang);
        }
        if (rf__cache_put(cache, kind, o) != RF_OK) {
            rf__log(RF_LOG_ERROR, "watch %s: out of memory", s_kind_names[kind]);
            gang[0] = '\0';
        }
        if (gang[0])
            rf__cache_touch_quiet(cache, gang);
        else
            rf__cache_touch(cache);
        rf__cache_unlock(cache);
    }
done:
    rf__arena_destroy(&arena);
    return ret;
}

static bool s_forbidden_event(const rf_doc_t *obj)
{
    const rf_doc_t *code = rf__doc_get(obj, "code");
    return code && code->type == RF_DOC_INT && code->u.i == 403;
}

int rf__watch_apply(rf__cache_t *cache, rf__kind kind, const char *line, size_t len, char *rv, size_t rv_cap)
{
    int r = s_apply(cache, kind, line, len, rv, rv_cap, false);
    return r == 2 ? -1 : r;
}

typedef struct {
    rf__watch_t *w;
    char rv[64];
    bool gone;
    bool forbidden; /* an ERROR event with code 403 */
    int events;     /* understood */
    int bad;        /* not understood, or an ERROR event other than 410 */
} s_stream_ctx_t;

static int s_on_line(void *ud, const char *line, size_t len)
{
    s_stream_ctx_t *s = ud;
    const rf__watch_t *w = s->w;
    int r = s_apply(w->cache, w->kind, line, len, s->rv, sizeof s->rv, w->older && w->path == w->older);
    if (r == 2) {
        s->forbidden = true;
        s->bad++;
        return 1;
    }
    if (r < 0)
        s->bad++;
    else
        s->events++;
    if (r == 1) {
        s->gone = true;
        return 1;
    }
    return 0;
}

/* The list: every page, then mark and sweep. RF_ENOTFOUND for a 404, RF_ESTALE for a 410. */
static rf_status s_list(rf__watch_t *w, rf__kconn_t *conn, char *rv, size_t rv_cap)
{
    char path[2048], cont[1024] = "";
    rf_status rc = RF_OK;
    bool first = true;
    void **objs = NULL;
    size_t n_objs = 0, cap_objs = 0;
    do {
        snprintf(path, sizeof path, "%s?limit=500%s%s", w->path, cont[0] ? "&continue=" : "", cont);
        rf__kresp_t resp;
        rf_error_t err;
        rf_error_clear(&err);
        if ((rc = rf__kube_call(conn, "GET", path, NULL, NULL, 120000, &resp, &err)) != RF_OK) {
            rf__log(RF_LOG_WARN, "list %s: %s", s_kind_names[w->kind], err.message);
            goto done;
        }
        if (resp.status != 200) {
            rc = resp.status == 404                  ? RF_ENOTFOUND
                 : resp.status == 410                ? RF_ESTALE
                 : resp.status == 403 && w->optional ? RF_EUNSUPPORTED
                                                     : RF_EIO;
            if (rc != RF_ENOTFOUND && rc != RF_EUNSUPPORTED)
                rf__log(RF_LOG_WARN, "list %s: HTTP %ld: %.200s", s_kind_names[w->kind], resp.status, resp.body);
            rf__kresp_fini(&resp);
            goto done;
        }
        rf__arena_t *arena = rf__arena_new(0);
        rf_doc_t *doc = NULL;
        if (!arena || rf__kube_json(resp.body, resp.len, arena, &doc, &err) != RF_OK) {
            rf__log(RF_LOG_WARN, "list %s: unreadable answer: %s", s_kind_names[w->kind], err.message);
            rf__arena_destroy(&arena);
            rf__kresp_fini(&resp);
            rc = RF_EIO;
            goto done;
        }
        rf__kresp_fini(&resp);
        const char *lrv = rf__doc_str(doc, "metadata.resourceVersion");
        if (first && lrv)
            snprintf(rv, rv_cap, "%s", lrv);
        first = false;
        const char *c = rf__doc_str(doc, "metadata.continue");
        snprintf(cont, sizeof cont, "%s", c ? c : "");
        const rf_doc_t *items = rf__doc_get(doc, "items");
        for (uint32_t i = 0; items && items->type == RF_DOC_ARRAY && i < items->len; i++) {
            void *o = s_object(w->kind, &items->u.items[i], w->older && w->path == w->older);
            if (!o)
                continue;
            if (n_objs == cap_objs) {
                size_t nc = cap_objs ? cap_objs * 2 : 256;
                void **p = realloc(objs, nc * sizeof *p);
                if (!p) {
                    rf__arena_destroy(&arena);
                    rc = RF_ENOMEM;
                    goto done;
                }
                objs = p;
                cap_objs = nc;
            }
            objs[n_objs++] = o;
        }
        rf__arena_destroy(&arena);
    } while (cont[0] && !*w->stop);
    rf__cache_lock(w->cache);
    rf__cache_mark_begin(w->cache, w->kind);
    for (size_t i = 0; i < n_objs; i++)
        rf__cache_put(w->cache, w->kind, objs[i]);
    n_objs = 0;
    rf__cache_sweep(w->cache, w->kind);
    w->cache->synced |= 1u << w->kind;
    rf__cache_touch(w->cache);
    rf__cache_unlock(w->cache);
done:
    for (size_t i = 0; i < n_objs; i++)
        rf__kobj_destroy(w->kind, objs[i]);
    free(objs);
    return rc;
}

void *rf__watch_run(void *arg)
{
    rf__watch_t *w = arg;
    rf__kconn_t *conn = rf__kconn_new(w->kube);
    s_stream_ctx_t sc = {.w = w};
    bool need_list = true;
    double backoff = 0.2, older_at = 0; /* when the older version's path was last taken up */
    unsigned seed = (unsigned)(rf__now() * 1e6) ^ (unsigned)w->kind;
    if (!conn) {
        rf__log(RF_LOG_ERROR, "watch %s: out of memory", s_kind_names[w->kind]);
        return NULL;
    }
    while (!*w->stop) {
        /* read through the older version: look for the newer one again from time to time (an upgraded server) */
        double retry_newer = w->retry_newer_s > 0 ? w->retry_newer_s : 600;
        if (!need_list && w->older && w->path == w->older && w->primary && rf__now() - older_at >= retry_newer) {
            rf__log(RF_LOG_DEBUG, "%s: asking %s again", s_kind_names[w->kind], w->primary);
            w->path = w->primary;
            need_list = true;
        }
        if (need_list) {
            atomic_fetch_add(&w->lists, 1);
            rf_status s = s_list(w, conn, sc.rv, sizeof sc.rv);
            if (s == RF_ENOTFOUND && w->older && w->path != w->older) {
                /* what is cached stays until the older version's list replaces it (mark and sweep): each
                 * object is read by the rule of the version it was decoded from */
                rf__log(older_at > 0 ? RF_LOG_DEBUG : RF_LOG_INFO,
                        "%s: %s is not served by this API server (404): using %s", s_kind_names[w->kind], w->path,
                        w->older);
                w->primary = w->path;
                w->path = w->older;
                older_at = rf__now();
                continue;
            }
            if (s == RF_ENOTFOUND) {
                if (w->primary) /* neither is served: look for the newer one first next time */
                    w->path = w->primary;
                rf__cache_lock(w->cache);
                rf__cache_clear(w->cache, w->kind);
                w->cache->synced |= 1u << w->kind;
                rf__cache_touch(w->cache);
                rf__cache_unlock(w->cache);
                rf__log(RF_LOG_INFO, "%s are not served by this API server (404); retrying in 30 s",
                        s_kind_names[w->kind]);
                s_sleep(30, w->stop);
                continue;
            }
            if (s == RF_EUNSUPPORTED) { /* ready without them (nothing listed before stays), and keep asking */
                rf__log(RF_LOG_WARN,
                        "listing %s is forbidden (403): going on without them; grant list and watch "
                        "on them (deploy/rbac.yaml)",
                        s_kind_names[w->kind]);
                rf__cache_lock(w->cache);
                rf__cache_clear(w->cache, w->kind);
                w->cache->synced |= 1u << w->kind;
                rf__cache_touch(w->cache);
                rf__cache_unlock(w->cache);
            }
            if (s != RF_OK) {
                atomic_fetch_add(&w->errors, 1);
                double j = backoff * (0.5 + (double)rand_r(&seed) / RAND_MAX);
                s_sleep(j, w->stop);
                backoff = backoff * 2 > 30 ? 30 : backoff * 2;
                continue;
            }
            rf__log(RF_LOG_DEBUG, "listed %s at resourceVersion %s", s_kind_names[w->kind], sc.rv);
            need_list = false;
        }
        char path[2048];
        long timeout = w->timeout_s > 0 ? w->timeout_s : 300;
        /* jitter the stream's lifetime so the three streams do not end together */
        timeout += (long)(rand_r(&seed) % (unsigned)(timeout / 10 + 1));
        snprintf(path, sizeof path, "%s?watch=1&allowWatchBookmarks=true&resourceVersion=%s&timeoutSeconds=%ld",
                 w->path, sc.rv, timeout);
        sc.gone = sc.forbidden = false;
        sc.events = sc.bad = 0;
        double t_start = rf__now();
        long status = 0;
        rf_error_t err;
        rf_error_clear(&err);
        atomic_fetch_add(&w->watches, 1);
        rf_status s = rf__kube_stream(conn, path, timeout + 60, s_on_line, &sc, w->stop, &status, &err);
        if (*w->stop)
            break;
        if (sc.gone || status == 410) {
            atomic_fetch_add(&w->gone, 1);
            rf__log(RF_LOG_INFO, "watch %s: resourceVersion %s is gone (410): listing again", s_kind_names[w->kind],
                    sc.rv);
            need_list = true;
            continue;
        }
        /* a clean end (timeoutSeconds): resume at once; but a stream that brought an
         * ERROR event, or ended within a second with nothing in it, is an error
         * (resuming at once would be a tight loop) */
        bool empty = sc.events == 0 && rf__now() - t_start < 1.0;
        if (s == RF_OK && status == 200 && !sc.bad && !empty) {
            backoff = 0.2;
            continue;
        }
        atomic_fetch_add(&w->errors, 1);
        if (s == RF_OK && status == 200)
            rf__log(RF_LOG_WARN, "watch %s: the stream ended %s; resuming from %s after a backoff",
                    s_kind_names[w->kind], sc.bad ? "with an error" : "at once, empty", sc.rv);
        else if (s != RF_OK)
            rf__log(RF_LOG_WARN, "watch %s: %s; resuming from %s", s_kind_names[w->kind], err.message, sc.rv);
        else
            rf__log(RF_LOG_WARN, "watch %s: HTTP %ld; resuming from %s", s_kind_names[w->kind], status, sc.rv);
        if (status == 404)
            need_list = true;
        if (w->optional && (status == 403 || sc.forbidden)) {
            /* RBAC revoked after a list: what was listed is no longer seen change; drop it and list again
             * (which, while forbidden, keeps the kind synced and empty) */
            rf__cache_lock(w->cache);
            rf__cache_clear(w->cache, w->kind);
            rf__cache_touch(w->cache);
            rf__cache_unlock(w->cache);
            need_list = true;
        }
        if (sc.events > 0 && !sc.bad)
            backoff = 0.2;
        double j = backoff * (0.5 + (double)rand_r(&seed) / RAND_MAX);
        s_sleep(j, w->stop);
        backoff = backoff * 2 > 30 ? 30 : backoff * 2;
    }
    rf__kconn_destroy(&conn);
    return NULL;
}
