/* tests/unit/test_watch_watch.c: applying watch events to the cache
 * (watcher/watch.c, rf__watch_apply): ADDED and MODIFIED store the object
 * (a malformed one is skipped), DELETED removes it by its key, a BOOKMARK
 * only advances the resourceVersion, an ERROR event with code 410 says
 * "relist" (1), any other ERROR, unknown type or unreadable line is -1 (an
 * unknown type that carries a resourceVersion still advances it). And the
 * list-then-watch thread (rf__watch_run) against a loopback server: a paged
 * list, a watch from its version with an event, a bookmark and a 410, then a
 * relist that sweeps what it no longer lists, a watch from the new one, and
 * a resume from a bookmark's version. */
#include <criterion/criterion.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../support/leak.h"
#include "watch.h"

static int s_apply(rf__cache_t *c, rf__kind kind, const char *line, char *rv)
{
    return rf__watch_apply(c, kind, line, strlen(line), rv, 64);
}

#define POD_EV(TYPE, RV, PHASE)                                                                                        \
    "{\"type\":\"" TYPE "\",\"object\":{\"metadata\":{\"namespace\":\"ns\",\"name\":\"p0\",\"uid\":\"u0\","            \
    "\"resourceVersion\":\"" RV "\"},\"spec\":{\"containers\":[{\"name\":\"c\"}]},\"status\":{\"phase\":\"" PHASE      \
    "\"}}}"

Test(watch_watch, pod_events)
{
    rf__cache_t *c = rf__cache_new(7);
    char rv[64] = "1";
    cr_assert_eq(s_apply(c, RF_KIND_POD, POD_EV("ADDED", "10", "Pending"), rv), 0);
    cr_assert_str_eq(rv, "10");
    rf__cache_lock(c);
    rf__kpod_t *p = rf__cache_get(c, RF_KIND_POD, "ns/p0");
    cr_assert_not_null(p);
    cr_assert_str_eq(p->phase, "Pending");
    rf__cache_unlock(c);

    cr_assert_eq(s_apply(c, RF_KIND_POD, POD_EV("MODIFIED", "11", "Running"), rv), 0);
    cr_assert_str_eq(rv, "11");
    rf__cache_lock(c);
    p = rf__cache_get(c, RF_KIND_POD, "ns/p0");
    cr_assert_not_null(p);
    cr_assert_str_eq(p->phase, "Running");
    rf__cache_unlock(c);

    cr_assert_eq(
        s_apply(c, RF_KIND_POD, "{\"type\":\"BOOKMARK\",\"object\":{\"metadata\":{\"resourceVersion\":\"15\"}}}", rv),
        0);
    cr_assert_str_eq(rv, "15", "a bookmark advances the version");
    rf__cache_lock(c);
    cr_assert_not_null(rf__cache_get(c, RF_KIND_POD, "ns/p0"), "and changes nothing else");
    rf__cache_unlock(c);

    cr_assert_eq(s_apply(c, RF_KIND_POD, POD_EV("DELETED", "16", "Running"), rv), 0);
    cr_assert_str_eq(rv, "16");
    rf__cache_lock(c);
    cr_assert_null(rf__cache_get(c, RF_KIND_POD, "ns/p0"));
    rf__cache_unlock(c);

    /* a malformed object is skipped, the stream goes on */
    cr_assert_eq(s_apply(c, RF_KIND_POD,
                         "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"x\",\"resourceVersion\":\"17\"}}}",
                         rv),
                 0);
    rf__cache_lock(c);
    cr_assert_null(rf__cache_get(c, RF_KIND_POD, "/x"));
    rf__cache_unlock(c);
    rf__cache_destroy(&c);
    rf_test_no_leaks();
}

Test(watch_watch, node_delete_by_name)
{
    rf__cache_t *c = rf__cache_new(7);
    char rv[64] = "";
    cr_assert_eq(s_apply(c, RF_KIND_NODE,
                         "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"h1\",\"resourceVersion\":\"3\"}}}",
                         rv),
                 0);
    rf__cache_lock(c);
    rf__knode_t *n = rf__cache_get(c, RF_KIND_NODE, "h1");
    cr_assert_not_null(n);
    cr_assert_str_eq(n->name, "h1");
    rf__cache_unlock(c);
    cr_assert_eq(s_apply(c, RF_KIND_NODE,
                         "{\"type\":\"DELETED\",\"object\":{\"metadata\":{\"name\":\"h1\",\"resourceVersion\":\"4\"}}}",
                         rv),
                 0);
    rf__cache_lock(c);
    cr_assert_null(rf__cache_get(c, RF_KIND_NODE, "h1"));
    rf__cache_unlock(c);
    cr_assert_str_eq(rv, "4");
    rf__cache_destroy(&c);
    rf_test_no_leaks();
}

Test(watch_watch, gone_errors_and_junk)
{
    rf__cache_t *c = rf__cache_new(7);
    char rv[64] = "42";
    cr_assert_eq(s_apply(c, RF_KIND_POD,
                         "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"code\":410,\"message\":\"too old\"}}",
                         rv),
                 1, "410 Gone: relist");
    cr_assert_eq(s_apply(c, RF_KIND_POD,
                         "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"code\":500,\"message\":\"boom\"}}", rv),
                 -1);
    cr_assert_eq(s_apply(c, RF_KIND_POD, "{\"type\":\"ADDED\"", rv), -1, "unreadable");
    cr_assert_eq(s_apply(c, RF_KIND_POD, "{\"type\":\"ADDED\",\"object\":[]}", rv), -1, "object not a map");
    cr_assert_eq(s_apply(c, RF_KIND_POD, "{\"object\":{}}", rv), -1, "no type");
    cr_assert_eq(
        s_apply(c, RF_KIND_POD, "{\"type\":\"SHRUG\",\"object\":{\"metadata\":{\"resourceVersion\":\"50\"}}}", rv), -1);
    cr_assert_eq(s_apply(c, RF_KIND_POD, "{\"type\":\"DELETED\",\"object\":{\"metadata\":{}}}", rv), -1,
                 "a delete needs a name");
    cr_assert_str_eq(rv, "50", "an unknown type still carried a version");
    rf__cache_destroy(&c);
    rf_test_no_leaks();
}

/* ---- rf__watch_run against a loopback server ---------------------------------------------------------------- */

typedef struct {
    int fd;
    atomic_int stop;
    atomic_int lists, watches;
    char watch_rv[4][32]; /* the resourceVersion each watch asked for */
} s_srv_t;

#define NODE_J(N) "{\"metadata\":{\"name\":\"" N "\"}}"

static void s_reply(int c, const char *body)
{
    char head[256];
    int m = snprintf(head, sizeof head,
                     "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %zu\r\nConnection: "
                     "close\r\n\r\n",
                     strlen(body));
    send(c, head, (size_t)m, MSG_NOSIGNAL);
    send(c, body, strlen(body), MSG_NOSIGNAL);
}

static void *s_serve(void *arg)
{
    s_srv_t *s = arg;
    while (!s->stop) {
        int c = accept(s->fd, NULL, NULL);
        if (c < 0)
            continue;
        char buf[4096];
        ssize_t n = recv(c, buf, sizeof buf - 1, 0);
        buf[n > 0 ? n : 0] = '\0';
        if (strstr(buf, "watch=1")) {
            int k = atomic_fetch_add(&s->watches, 1);
            const char *rv = strstr(buf, "resourceVersion=");
            if (k < 4 && rv)
                sscanf(rv + 16, "%31[0-9]", s->watch_rv[k]);
            if (k == 0)
                s_reply(c,
                        "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"h3\",\"resourceVersion\":\"11\"}}}\n"
                        "{\"type\":\"BOOKMARK\",\"object\":{\"metadata\":{\"resourceVersion\":\"12\"}}}\n"
                        "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"code\":410}}\n");
            else
                s_reply(c, "{\"type\":\"BOOKMARK\",\"object\":{\"metadata\":{\"resourceVersion\":\"21\"}}}\n");
        } else if (strstr(buf, "continue=c1")) {
            s_reply(c, "{\"metadata\":{\"resourceVersion\":\"10\"},\"items\":[" NODE_J("h2") "]}");
        } else {
            int k = atomic_fetch_add(&s->lists, 1);
            if (k == 0)
                s_reply(c,
                        "{\"metadata\":{\"resourceVersion\":\"10\",\"continue\":\"c1\"},\"items\":[" NODE_J("h1") "]}");
            else
                s_reply(c, "{\"metadata\":{\"resourceVersion\":\"20\"},\"items\":[" NODE_J("h3") "]}");
        }
        close(c);
    }
    return NULL;
}

Test(watch_watch, list_watch_gone_relist)
{
    s_srv_t srv = {.fd = socket(AF_INET, SOCK_STREAM, 0)};
    struct sockaddr_in sin = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof sin;
    cr_assert_eq(bind(srv.fd, (struct sockaddr *)&sin, sizeof sin), 0);
    listen(srv.fd, 64);
    getsockname(srv.fd, (struct sockaddr *)&sin, &len);
    struct timeval tv = {.tv_sec = 0, .tv_usec = 100000};
    setsockopt(srv.fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    pthread_t t;
    pthread_create(&t, NULL, s_serve, &srv);
    rf_error_t err;
    rf__kube_global_init(&err);
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%d", ntohs(sin.sin_port));
    rf__kubeconfig_t kc = {.server = url, .token = "t"};
    rf__cache_t *c = rf__cache_new(7);
    atomic_int stop = 0;
    rf__watch_t w = {.kube = rf__kube_new(&kc, &err),
                     .cache = c,
                     .kind = RF_KIND_NODE,
                     .path = "/api/v1/nodes",
                     .stop = &stop,
                     .timeout_s = 5};
    cr_assert_not_null(w.kube);
    pthread_t wt;
    pthread_create(&wt, NULL, rf__watch_run, &w);
    for (int i = 0; i < 500 && srv.watches < 3; i++)
        usleep(10000);
    stop = 1;
    pthread_join(wt, NULL);
    cr_assert_geq(srv.watches, 3);
    cr_assert_str_eq(srv.watch_rv[0], "10", "the watch starts at the (paged) list's version");
    cr_assert_str_eq(srv.watch_rv[1], "20", "after the 410, a new list and its version");
    cr_assert_str_eq(srv.watch_rv[2], "21", "a clean end resumes at once from the last bookmark's version");
    cr_assert_eq(atomic_load(&w.lists), 2);
    cr_assert_geq(atomic_load(&w.gone), 1);
    rf__cache_lock(c);
    cr_assert_null(rf__cache_get(c, RF_KIND_NODE, "h1"), "the relist swept what it no longer lists");
    cr_assert_null(rf__cache_get(c, RF_KIND_NODE, "h2"));
    cr_assert_not_null(rf__cache_get(c, RF_KIND_NODE, "h3"));
    cr_assert(c->synced & (1u << RF_KIND_NODE));
    rf__cache_unlock(c);
    srv.stop = 1;
    pthread_join(t, NULL);
    close(srv.fd);
    rf__kube_destroy(&w.kube);
    rf__cache_destroy(&c);
    rf__kube_global_fini();
    rf_test_no_leaks();
}
