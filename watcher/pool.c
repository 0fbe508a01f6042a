/* watcher/pool.c: the binder threads and their job queue (see pool.h). */
#include "pool.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "follow.h"
#include "log.h"
#include "tell.h"

struct rf__pool {
    rf__binder_t *b;
    pthread_t *threads;
    rf__kmulti_t **multis;
    int n;
    int started;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    rf__job_t *head, *tail;
    int queued, running, binding;
    bool quit;
};

rf__job_t *rf__job_new(rf__job_kind kind, const char *gang)
{
    rf__job_t *j = calloc(1, sizeof *j);
    if (!j)
        return NULL;
    j->kind = kind;
    if (!(j->gang = strdup(gang ? gang : ""))) {
        free(j);
        return NULL;
    }
    return j;
}

void rf__job_free(rf__job_t **jp)
{
    if (!jp || !*jp)
        return;
    rf__job_t *j = *jp;
    rf__decision_fini(&j->bind);
    rf__binds_free(j->pods, j->n);
    rf__kreqs_free(j->status, j->n_status);
    rf__kreqs_free(j->meta, j->n_meta);
    rf__kreqs_free(j->events, j->n_events);
    free(j->why);
    free(j->gang);
    free(j);
    *jp = NULL;
}

static bool s_marks_busy(const rf__job_t *j)
{
    return j->kind != RF_JOB_TELL;
}

static void s_run(rf__pool_t *p, rf__kmulti_t *multi, rf__job_t *j)
{
    rf__binder_t *b = p->b;
    char why[1024] = "";
    switch (j->kind) {
    case RF_JOB_BIND:
        rf__bind_gang(b, multi, &j->bind, j->seen_at, why, sizeof why);
        break;
    case RF_JOB_ROLLBACK:
        rf__log(RF_LOG_WARN, "gang %s: %s: rolling the gang back", j->gang, j->why ? j->why : "");
        rf__binder_rollback(b, multi, j->gang, j->pods, j->n, NULL);
        break;
    case RF_JOB_EVICT:
        rf__binder_evict(b, multi, j->gang, j->pods, j->n, j->why ? j->why : "", &j->rq);
        break;
    case RF_JOB_TELL:
        rf__tell_run(b, multi, j);
        break;
    }
}

static void *s_worker(void *arg)
{
    rf__pool_t *p = ((void **)arg)[0];
    rf__kmulti_t *multi = ((void **)arg)[1];
    free(arg);
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (!p->quit && !p->head)
            pthread_cond_wait(&p->cv, &p->mu);
        if (p->quit)
            break;
        rf__job_t *j = p->head;
        p->head = j->next;
        if (!p->head)
            p->tail = NULL;
        p->queued--;
        p->running++;
        pthread_mutex_unlock(&p->mu);
        s_run(p, multi, j);
        if (s_marks_busy(j))
            rf__binder_busy(p->b, j->gang, -1);
        pthread_mutex_lock(&p->mu);
        p->running--;
        if (j->kind == RF_JOB_BIND)
            p->binding--;
        pthread_mutex_unlock(&p->mu);
        rf__job_free(&j);
        rf__cache_lock(p->b->cache); /* wake the cycle: a gang is free again */
        rf__cache_touch(p->b->cache);
        rf__cache_unlock(p->b->cache);
        pthread_mutex_lock(&p->mu);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

rf__pool_t *rf__pool_new(rf__binder_t *b, int workers, int concurrency)
{
    rf__pool_t *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    if (workers < 1)
        workers = 1;
    p->b = b;
    p->n = workers;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    p->threads = calloc((size_t)workers, sizeof *p->threads);
    p->multis = calloc((size_t)workers, sizeof *p->multis);
    if (!p->threads || !p->multis) {
        rf__pool_destroy(&p);
        return NULL;
    }
    for (int i = 0; i < workers; i++) {
        void **arg = malloc(2 * sizeof *arg);
        if (!arg || !(p->multis[i] = rf__kmulti_new(b->kube, concurrency))) {
            free(arg);
            rf__pool_destroy(&p);
            return NULL;
        }
        arg[0] = p;
        arg[1] = p->multis[i];
        if (pthread_create(&p->threads[i], NULL, s_worker, arg) != 0) {
            free(arg);
            rf__pool_destroy(&p);
            return NULL;
        }
        p->started++;
    }
    return p;
}

void rf__pool_destroy(rf__pool_t **pp)
{
    if (!pp || !*pp)
        return;
    rf__pool_t *p = *pp;
    pthread_mutex_lock(&p->mu);
    p->quit = true;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    for (int i = 0; i < p->started; i++)
        pthread_join(p->threads[i], NULL);
    while (p->head) {
        rf__job_t *j = p->head;
        p->head = j->next;
        if (s_marks_busy(j))
            rf__binder_busy(p->b, j->gang, -1);
        rf__job_free(&j);
    }
    for (int i = 0; p->multis && i < p->n; i++)
        rf__kmulti_destroy(&p->multis[i]);
    free(p->multis);
    free(p->threads);
    pthread_cond_destroy(&p->cv);
    pthread_mutex_destroy(&p->mu);
    free(p);
    *pp = NULL;
}

void rf__pool_submit(rf__pool_t *p, rf__job_t *j)
{
    if (!j)
        return;
    if (s_marks_busy(j))
        rf__binder_busy(p->b, j->gang, +1);
    j->next = NULL;
    pthread_mutex_lock(&p->mu);
    if (p->quit) {
        pthread_mutex_unlock(&p->mu);
        if (s_marks_busy(j))
            rf__binder_busy(p->b, j->gang, -1);
        rf__job_free(&j);
        return;
    }
    if (p->tail)
        p->tail->next = j;
    else
        p->head = j;
    p->tail = j;
    p->queued++;
    if (j->kind == RF_JOB_BIND)
        p->binding++;
    pthread_cond_signal(&p->cv);
    pthread_mutex_unlock(&p->mu);
}

int rf__pool_inflight(rf__pool_t *p)
{
    pthread_mutex_lock(&p->mu);
    int n = p->queued + p->running;
    pthread_mutex_unlock(&p->mu);
    return n;
}

int rf__pool_binding(rf__pool_t *p)
{
    pthread_mutex_lock(&p->mu);
    int n = p->binding;
    pthread_mutex_unlock(&p->mu);
    return n;
}
