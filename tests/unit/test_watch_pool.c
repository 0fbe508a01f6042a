/* tests/unit/test_watch_pool.c: the binder threads (watcher/pool.c) running
 * TELL jobs (condition patches and Events) against a loopback HTTP server that answers each
 * connection on its own thread after a short delay and records how many
 * requests were in flight at once and in which order they came. Checks:
 * every job of N run by K threads (each request sent once, the binder's
 * counter), in-flight requests bounded by workers x concurrency, jobs run in
 * submission order by one thread, inflight back to 0, and destroy dropping
 * queued jobs without leaking them. */
#include <criterion/criterion.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../support/leak.h"
#include "pool.h"

typedef struct {
    int fd;
    int delay_us;
    atomic_int stop;
    atomic_int active, max_active, handlers, total;
    pthread_mutex_t mu;
    int order[64];
    int n_order;
} s_srv_t;

typedef struct {
    s_srv_t *s;
    int c;
} s_conn_t;

static void *s_handle(void *arg)
{
    s_conn_t *cn = arg;
    s_srv_t *s = cn->s;
    int now = atomic_fetch_add(&s->active, 1) + 1;
    for (int m = s->max_active; now > m && !atomic_compare_exchange_weak(&s->max_active, &m, now);)
        ;
    char buf[4096];
    ssize_t n = recv(cn->c, buf, sizeof buf - 1, 0);
    buf[n > 0 ? n : 0] = '\0';
    int k = -1;
    if (sscanf(buf, "POST /j%d", &k) == 1 && k >= 0) {
        pthread_mutex_lock(&s->mu);
        if (s->n_order < 64)
            s->order[s->n_order++] = k;
        pthread_mutex_unlock(&s->mu);
    }
    atomic_fetch_add(&s->total, 1);
    usleep((useconds_t)s->delay_us);
    atomic_fetch_sub(&s->active, 1);
    const char *out = "HTTP/1.1 201 Created\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}";
    send(cn->c, out, strlen(out), MSG_NOSIGNAL);
    close(cn->c);
    free(cn);
    atomic_fetch_sub(&s->handlers, 1);
    return NULL;
}

static void *s_serve(void *arg)
{
    s_srv_t *s = arg;
    while (!s->stop) {
        int c = accept(s->fd, NULL, NULL);
        if (c < 0)
            continue;
        s_conn_t *cn = malloc(sizeof *cn);
        cn->s = s;
        cn->c = c;
        atomic_fetch_add(&s->handlers, 1);
        pthread_t t;
        pthread_create(&t, NULL, s_handle, cn);
        pthread_detach(t);
    }
    while (s->handlers > 0)
        usleep(1000);
    return NULL;
}

typedef struct {
    s_srv_t srv;
    pthread_t thread;
    rf__binder_t b;
} s_env_t;

static void s_start(s_env_t *e, int delay_us)
{
    memset(e, 0, sizeof *e);
    e->srv.fd = socket(AF_INET, SOCK_STREAM, 0);
    e->srv.delay_us = delay_us;
    pthread_mutex_init(&e->srv.mu, NULL);
    struct sockaddr_in sin = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof sin;
    cr_assert_eq(bind(e->srv.fd, (struct sockaddr *)&sin, sizeof sin), 0);
    listen(e->srv.fd, 64);
    getsockname(e->srv.fd, (struct sockaddr *)&sin, &len);
    struct timeval tv = {.tv_sec = 0, .tv_usec = 100000};
    setsockopt(e->srv.fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    pthread_create(&e->thread, NULL, s_serve, &e->srv);
    rf_error_t err;
    rf__kube_global_init(&err);
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%d", ntohs(sin.sin_port));
    rf__kubeconfig_t kc = {.server = url, .token = "t"};
    rf__binder_init(&e->b);
    e->b.kube = rf__kube_new(&kc, &err);
    cr_assert_not_null(e->b.kube, "%s", err.message);
    e->b.cache = rf__cache_new(7);
    e->b.identity = "test";
    e->b.scheduler_name = "rackfit";
}

static void s_stop(s_env_t *e)
{
    e->srv.stop = 1;
    pthread_join(e->thread, NULL);
    close(e->srv.fd);
    pthread_mutex_destroy(&e->srv.mu);
    rf__cache_destroy(&e->b.cache);
    rf__kube_destroy(&e->b.kube);
    rf__binder_fini(&e->b);
    rf__kube_global_fini();
}

/* A TELL job of `n` condition patches (PATCH /p<id>) and `n` Events (POST
 * /j<id>). As many patches as Events: rf__tell_run sizes its result array by
 * the patches only (see the report on watcher/tell.c). */
static rf__job_t *s_job(int id, int n)
{
    char gang[32], path[32];
    snprintf(gang, sizeof gang, "ns/g%d", id);
    rf__job_t *j = rf__job_new(RF_JOB_TELL, gang);
    cr_assert_not_null(j);
    j->events = calloc((size_t)n, sizeof *j->events);
    j->n_events = n;
    j->status = calloc((size_t)n, sizeof *j->status);
    j->n_status = n;
    for (int i = 0; i < n; i++) {
        snprintf(path, sizeof path, "/p%d", id);
        j->status[i].path = strdup(path);
        j->status[i].body = strdup("{}");
        snprintf(path, sizeof path, "/j%d", id);
        j->events[i].path = strdup(path);
        j->events[i].body = strdup("{}");
    }
    return j;
}

static void s_drain(rf__pool_t *pool)
{
    for (int i = 0; i < 800 && rf__pool_inflight(pool) > 0; i++)
        usleep(10000);
}

Test(watch_pool, n_jobs_k_threads_bounded)
{
    s_env_t e;
    s_start(&e, 30000);
    rf__pool_t *pool = rf__pool_new(&e.b, 2, 2);
    cr_assert_not_null(pool);
    for (int i = 0; i < 8; i++)
        rf__pool_submit(pool, s_job(i, 3));
    cr_assert_gt(rf__pool_inflight(pool), 0);
    s_drain(pool);
    cr_assert_eq(rf__pool_inflight(pool), 0);
    cr_assert_eq(rf__pool_binding(pool), 0, "no BIND jobs");
    cr_assert_eq(e.srv.total, 48, "every request of every job sent once");
    cr_assert_eq(atomic_load(&e.b.events), 24);
    cr_assert_leq(e.srv.max_active, 4, "at most workers x concurrency in flight (%d)", e.srv.max_active);
    cr_assert_geq(e.srv.max_active, 2, "the threads run at the same time (%d)", e.srv.max_active);
    rf__pool_destroy(&pool);
    cr_assert_null(pool);
    s_stop(&e);
    rf_test_no_leaks();
}

Test(watch_pool, submission_order)
{
    s_env_t e;
    s_start(&e, 0);
    rf__pool_t *pool = rf__pool_new(&e.b, 0, 1); /* at least 1 worker */
    cr_assert_not_null(pool);
    for (int i = 0; i < 10; i++)
        rf__pool_submit(pool, s_job(i, 1));
    s_drain(pool);
    cr_assert_eq(e.srv.n_order, 10);
    for (int i = 0; i < 10; i++)
        cr_assert_eq(e.srv.order[i], i, "jobs run in submission order");
    rf__pool_destroy(&pool);
    s_stop(&e);
    rf_test_no_leaks();
}

Test(watch_pool, destroy_drops_queued)
{
    s_env_t e;
    s_start(&e, 100000);
    rf__pool_t *pool = rf__pool_new(&e.b, 1, 1);
    for (int i = 0; i < 20; i++)
        rf__pool_submit(pool, s_job(i, 1));
    usleep(50000);
    rf__pool_destroy(&pool); /* the running job finishes, the queued ones are dropped */
    cr_assert_null(pool);
    cr_assert_lt(e.srv.total, 40, "queued jobs were dropped (%d sent)", e.srv.total);
    cr_assert_geq(e.srv.total, 1);
    s_stop(&e);
    rf_test_no_leaks();
}
