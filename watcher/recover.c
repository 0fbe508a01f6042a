/* watcher/recover.c: intents and requeue states left by earlier watchers (see recover.h). */
#include "recover.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "follow.h"
#include "log.h"

static char *s_str(const char *s)
{
    return strdup(s ? s : "");
}

typedef struct {
    char attempt[RF_ATTEMPT_CAP];
    char gang[320];
    rf__bind_t pod;
    int size; /* the attempt's pod count, from the intent */
    bool bound, pending, started, ended;
} s_intent_t;

static int s_intent_cmp(const void *x, const void *y)
{
    return strcmp(((const s_intent_t *)x)->attempt, ((const s_intent_t *)y)->attempt);
}

/* Requeue states from the PodGroups' annotations. */
static void s_restore_requeues(rf__binder_t *b)
{
    rf__cache_lock(b->cache);
    rf__kmap_t *gm = &b->cache->maps[RF_KIND_PODGROUP];
    for (int32_t i = 0; i < gm->n; i++) {
        const rf__kpodgroup_t *g = gm->items[i].obj;
        const char *v = rf__kvs_get(&g->annotations, RF_ANN_REQUEUE);
        int count;
        double until;
        bool failed;
        if (!v)
            continue;
        if (!rf__requeue_parse(v, &count, &until, &failed)) {
            rf__log(RF_LOG_WARN, "PodGroup %s: annotation %s: `%s` is not \"COUNT NEXT-TRY\" or \"COUNT failed\"",
                    gm->items[i].key, RF_ANN_REQUEUE, v);
            continue;
        }
        rf__binder_requeue_restore(b, gm->items[i].key, count, until, failed);
    }
    rf__cache_unlock(b->cache);
}

void rf__binder_recover(rf__binder_t *b)
{
    s_restore_requeues(b);
    rf__cache_lock(b->cache);
    rf__kmap_t *pm = &b->cache->maps[RF_KIND_POD];
    s_intent_t *in = calloc((size_t)pm->n + 1, sizeof *in);
    int n = 0;
    for (int32_t i = 0; in && i < pm->n; i++) {
        const rf__kpod_t *p = pm->items[i].obj;
        const char *v = rf__kvs_get(&p->annotations, RF_ANN_INTENT);
        if (!v || p->deleting || !p->scheduler_name || strcmp(p->scheduler_name, b->scheduler_name) != 0)
            continue; /* another scheduler's pod (an intent copied from a template, say) is not ours */
        char attempt[RF_ATTEMPT_CAP], node[RF_NODE_NAME_CAP];
        int size = 0;
        if (!rf__bind_intent_parse(v, attempt, node, &size)) {
            rf__log(RF_LOG_WARN, "pod %s/%s: annotation %s: `%s` is not \"ATTEMPT NODE SIZE\"", p->ns, p->name,
                    RF_ANN_INTENT, v);
            continue;
        }
        s_intent_t *x = &in[n++];
        snprintf(x->attempt, sizeof x->attempt, "%s", attempt);
        x->size = size;
        rf__pod_gang_name(p, x->gang, sizeof x->gang);
        if (rf__kpod_terminal(p)) { /* it ran (or was rejected): counts towards the size, nothing to undo */
            x->ended = true;
            continue;
        }
        x->pod = (rf__bind_t){.ns = s_str(p->ns),
                              .name = s_str(p->name),
                              .uid = s_str(p->uid),
                              .node = s_str(p->node_name ? p->node_name : node)};
        x->bound = p->node_name != NULL;
        x->pending = !p->node_name;
        x->started = p->started || strcmp(p->phase, "Running") == 0;
    }
    rf__cache_unlock(b->cache);
    if (!in)
        return;
    qsort(in, (size_t)n, sizeof *in, s_intent_cmp);
    for (int a = 0; a < n;) {
        int z = a, bound = 0, pending = 0, started = 0, ended = 0, size = 0;
        while (z < n && strcmp(in[z].attempt, in[a].attempt) == 0) {
            bound += in[z].bound;
            pending += in[z].pending;
            started += in[z].started && in[z].bound;
            ended += in[z].ended;
            size = in[z].size > size ? in[z].size : size;
            z++;
        }
        /* partial: fewer bound than the attempt's size (the others never bound,
         * deleted, or recreated), or a partner still pending with the intent
         * (only left by watchers that patched the intent before binding) */
        if (bound > 0 && (pending > 0 || bound + ended < size)) {
            rf__bind_t *pods = calloc((size_t)(z - a), sizeof *pods);
            bool *sel = calloc((size_t)(z - a), sizeof *sel);
            if (pods && sel) {
                for (int k = a; k < z; k++) {
                    pods[k - a] = in[k].pod;
                    sel[k - a] = in[k].bound && !in[k].ended;
                }
                rf__log(RF_LOG_WARN,
                        "gang %s: attempt %s was left partly bound (%d of %d bound, %d pending): rolling back",
                        in[a].gang, in[a].attempt, bound, size, pending);
                rf__binder_rollback(b, b->multi, in[a].gang, pods, z - a, sel);
            }
            free(pods);
            free(sel);
        } else if (bound > 0 && started < bound) {
            rf__bind_t *pods = calloc((size_t)(z - a), sizeof *pods);
            int m = 0;
            if (pods) {
                for (int k = a; k < z; k++)
                    if (!in[k].ended)
                        pods[m++] = in[k].pod;
                rf__log(RF_LOG_INFO, "gang %s: attempt %s is bound; following it until the kubelets admit it",
                        in[a].gang, in[a].attempt);
                rf__follow_add(b, in[a].gang, in[a].attempt, pods, m, rf__now());
            }
            free(pods);
        }
        a = z;
    }
    for (int k = 0; k < n; k++) {
        free(in[k].pod.ns);
        free(in[k].pod.name);
        free(in[k].pod.uid);
        free(in[k].pod.node);
    }
    free(in);
}
