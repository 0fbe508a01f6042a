/* tests/unit/test_watch_tell.c: telling a gang's pods why (watcher/tell.c),
 * sent by a binder thread (watcher/pool.c) to a loopback HTTP server that
 * counts what it gets: a condition patch and an Event per pending pod, none
 * for a pod whose condition says so already, nothing again within retell_s
 * for a changed reason, but a requeue state (with its annotation patches)
 * told at once. */
#include <criterion/criterion.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../support/leak.h"
#include "arena.h"
#include "json.h"
#include "tell.h"

typedef struct {
    int fd;
    atomic_int stop;
    atomic_int status_patches, meta_patches, events, bad_time;
} s_srv_t;

static void *s_serve(void *arg)
{
    s_srv_t *s = arg;
    while (!s->stop) {
        int c = accept(s->fd, NULL, NULL);
        if (c < 0)
            continue;
        char buf[8192];
        ssize_t n = recv(c, buf, sizeof buf - 1, 0);
        buf[n > 0 ? n : 0] = '\0';
        if (strncmp(buf, "PATCH", 5) == 0 && strstr(buf, "/status HTTP"))
            s->status_patches++;
        else if (strncmp(buf, "PATCH", 5) == 0)
            s->meta_patches++;
        else if (strncmp(buf, "POST", 4) == 0 && strstr(buf, "/events HTTP"))
            s->events++;
        if (strstr(buf, ".Z\""))
            s->bad_time++; /* the timestamp a real server refuses */
        const char *out = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}";
        send(c, out, strlen(out), MSG_NOSIGNAL);
        close(c);
    }
    return NULL;
}

static void s_pod(rf__cache_t *c, const char *name, const char *message)
{
    char buf[1024];
    snprintf(buf, sizeof buf,
             "{\"metadata\":{\"namespace\":\"ns\",\"name\":\"%s\",\"uid\":\"u-%s\"},\"spec\":{\"schedulerName\":"
             "\"rackfit\",\"containers\":[{\"name\":\"c\"}]},\"status\":{\"phase\":\"Pending\",\"conditions\":[{"
             "\"type\":\"PodScheduled\",\"status\":\"False\",\"reason\":\"Unschedulable\",\"message\":\"%s\"}]}}",
             name, name, message);
    rf_limits_t lim;
    rf_limits_default(&lim);
    rf__arena_t *a = rf__arena_new(0);
    rf_doc_t *doc = NULL;
    rf_error_t err;
    cr_assert_eq(rf__json_parse(buf, strlen(buf), &lim, a, &doc, &err), RF_OK, "%s", err.message);
    rf__kpod_t *p = NULL;
    cr_assert_eq(rf__kpod_from_doc(doc, &p, &err), RF_OK);
    cr_assert_eq(rf__cache_put(c, RF_KIND_POD, p), RF_OK);
    rf__arena_destroy(&a);
}

/* Wait until the pool has sent everything. */
static void s_drain(rf__pool_t *pool)
{
    for (int i = 0; i < 200 && rf__pool_inflight(pool) > 0; i++)
        usleep(10000);
}

Test(watch_tell, once_then_quiet)
{
    s_srv_t srv = {.fd = socket(AF_INET, SOCK_STREAM, 0)};
    struct sockaddr_in sin = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof sin;
    cr_assert_eq(bind(srv.fd, (struct sockaddr *)&sin, sizeof sin), 0);
    listen(srv.fd, 64);
    getsockname(srv.fd, (struct sockaddr *)&sin, &len);
    struct timeval tv = {.tv_sec = 0, .tv_usec = 200000};
    setsockopt(srv.fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    pthread_t t;
    pthread_create(&t, NULL, s_serve, &srv);
    rf_error_t err;
    rf__kube_global_init(&err);
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%d", ntohs(sin.sin_port));
    rf__kubeconfig_t kc = {.server = url, .token = "t"};
    rf__binder_t b;
    rf__binder_init(&b);
    b.kube = rf__kube_new(&kc, &err);
    b.cache = rf__cache_new(7);
    b.identity = "test";
    b.scheduler_name = "rackfit";
    rf__pool_t *pool = rf__pool_new(&b, 2, 4);
    s_pod(b.cache, "p0", "");
    s_pod(b.cache, "p1", "rackfit: gang ns/g: no room");
    rf__member_t members[2] = {{.ns = "ns", .name = "p0", .uid = "u-p0"}, {.ns = "ns", .name = "p1", .uid = "u-p1"}};
    rf__gset_t set = {.name = "set-0", .pending = members, .n_pending = 2, .count = 2};
    rf__pgang_t g = {.name = "ns/g", .ns = "ns", .sets = &set, .n_sets = 1, .n_pending = 2};
    rf__binder_tell(&b, pool, &g, "no room", NULL, NULL);
    s_drain(pool);
    cr_assert_eq(srv.status_patches, 1, "p1 says so already");
    cr_assert_eq(srv.events, 1);
    cr_assert_eq(srv.bad_time, 0, "whole-second timestamps");
    rf__binder_tell(&b, pool, &g, "fits 1 of 2", NULL, NULL);
    s_drain(pool);
    cr_assert_eq(srv.status_patches, 1, "a changed reason waits retell_s");
    rf__binder_tell(&b, pool, &g, "requeued 1 times", "GangRequeued", "1 2026-12-01T19:00:00Z");
    s_drain(pool);
    cr_assert_eq(srv.status_patches, 3, "a requeue state is told at once");
    cr_assert_eq(srv.meta_patches, 2, "with the annotation on every pending pod");
    cr_assert_eq(srv.events, 3);
    cr_assert_eq(atomic_load(&b.events), 3);
    rf__pool_destroy(&pool);
    srv.stop = 1;
    pthread_join(t, NULL);
    close(srv.fd);
    rf__cache_destroy(&b.cache);
    rf__kube_destroy(&b.kube);
    rf__binder_fini(&b);
    rf__kube_global_fini();
    rf_test_no_leaks();
}
