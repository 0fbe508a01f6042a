/* tests/unit/test_watch_kube_http.c: the API server client
 * (watcher/kube_http.c) against a loopback server that echoes what it got:
 * one call (method, path, bearer token, body, Content-Type, status and
 * Retry-After), the observer hook, a streamed watch split into lines (and a
 * non-200 stream's Status line), a parallel batch, the token bucket, and
 * rf__kube_json's refusal of bad JSON. */
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
#include "clock.h"
#include "kube_http.h"

typedef struct {
    int fd;
    atomic_int stop;
    atomic_int seen;
} s_srv_t;

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
        s->seen++;
        char method[16] = "", path[256] = "", out[2048], body[1024];
        sscanf(buf, "%15s %255s", method, path);
        const char *b = strstr(buf, "\r\n\r\n");
        if (strncmp(path, "/stream", 7) == 0) {
            const char *lines = "{\"a\":1}\n{\"b\":2}\n{\"c\":3}\n";
            int m = snprintf(out, sizeof out, "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n%s", lines);
            send(c, out, (size_t)m, MSG_NOSIGNAL);
        } else if (strncmp(path, "/gone", 5) == 0) {
            const char *st = "{\"kind\":\"Status\",\"code\":410}";
            int m = snprintf(out, sizeof out, "HTTP/1.1 410 Gone\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n%s",
                             strlen(st), st);
            send(c, out, (size_t)m, MSG_NOSIGNAL);
        } else {
            int st = strncmp(path, "/busy", 5) == 0 ? 429 : 200;
            snprintf(body, sizeof body, "%s %s auth=%d json=%d body=%s", method, path,
                     strstr(buf, "Authorization: Bearer tok") != NULL,
                     strstr(buf, "Content-Type: application/json") != NULL, b ? b + 4 : "");
            int m = snprintf(out, sizeof out, "HTTP/1.1 %d X\r\nContent-Length: %zu\r\n%sConnection: close\r\n\r\n%s",
                             st, strlen(body), st == 429 ? "Retry-After: 3\r\n" : "", body);
            send(c, out, (size_t)m, MSG_NOSIGNAL);
        }
        close(c);
    }
    return NULL;
}

typedef struct {
    s_srv_t srv;
    pthread_t t;
    rf__kube_t *kube;
} s_env_t;

static void s_start(s_env_t *e)
{
    memset(e, 0, sizeof *e);
    e->srv.fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sin = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof sin;
    cr_assert_eq(bind(e->srv.fd, (struct sockaddr *)&sin, sizeof sin), 0);
    listen(e->srv.fd, 64);
    getsockname(e->srv.fd, (struct sockaddr *)&sin, &len);
    struct timeval tv = {.tv_sec = 0, .tv_usec = 100000};
    setsockopt(e->srv.fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    pthread_create(&e->t, NULL, s_serve, &e->srv);
    rf_error_t err;
    cr_assert_eq(rf__kube_global_init(&err), RF_OK);
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%d", ntohs(sin.sin_port));
    rf__kubeconfig_t kc = {.server = url, .token = "tok"};
    e->kube = rf__kube_new(&kc, &err);
    cr_assert_not_null(e->kube, "%s", err.message);
    cr_assert_str_eq(rf__kube_server(e->kube), url);
}

static void s_stop(s_env_t *e)
{
    rf__kube_destroy(&e->kube);
    e->srv.stop = 1;
    pthread_join(e->t, NULL);
    close(e->srv.fd);
    rf__kube_global_fini();
}

static atomic_int s_observed_429;

static void s_observe(void *ctx, const char *verb, long status)
{
    (void)ctx;
    if (strcmp(verb, "GET") == 0 && status == 429)
        s_observed_429++;
}

Test(watch_kube_http, call)
{
    s_env_t e;
    s_start(&e);
    rf__kube_observe(e.kube, s_observe, NULL);
    rf__kconn_t *conn = rf__kconn_new(e.kube);
    rf__kresp_t r;
    rf_error_t err;
    cr_assert_eq(rf__kube_call(conn, "POST", "/api/v1/x", "application/json", "{\"k\":1}", 2000, &r, &err), RF_OK, "%s",
                 err.message);
    cr_assert_eq(r.status, 200);
    cr_assert_str_eq(r.body, "POST /api/v1/x auth=1 json=1 body={\"k\":1}");
    cr_assert_eq(r.len, strlen(r.body));
    rf__kresp_fini(&r);
    cr_assert_eq(rf__kube_call(conn, "GET", "/busy", NULL, NULL, 2000, &r, &err), RF_OK);
    cr_assert_eq(r.status, 429);
    cr_assert_float_eq(r.retry_after, 3.0, 1e-9);
    rf__kresp_fini(&r);
    cr_assert_eq(s_observed_429, 1, "the observer sees every answer");
    rf__kconn_destroy(&conn);
    cr_assert_null(conn);
    s_stop(&e);
    rf_test_no_leaks();
}

typedef struct {
    int n;
    char lines[8][32];
} s_lines_t;

static int s_on_line(void *ctx, const char *line, size_t len)
{
    s_lines_t *l = ctx;
    if (l->n < 8)
        snprintf(l->lines[l->n++], 32, "%.*s", (int)len, line);
    return 0;
}

Test(watch_kube_http, stream_lines)
{
    s_env_t e;
    s_start(&e);
    rf__kconn_t *conn = rf__kconn_new(e.kube);
    atomic_int stop = 0;
    s_lines_t l = {0};
    long status = 0;
    rf_error_t err;
    cr_assert_eq(rf__kube_stream(conn, "/stream", 5, s_on_line, &l, &stop, &status, &err), RF_OK, "%s", err.message);
    cr_assert_eq(status, 200);
    cr_assert_eq(l.n, 3);
    cr_assert_str_eq(l.lines[0], "{\"a\":1}");
    cr_assert_str_eq(l.lines[2], "{\"c\":3}");
    memset(&l, 0, sizeof l);
    rf__kube_stream(conn, "/gone", 5, s_on_line, &l, &stop, &status, &err);
    cr_assert_eq(status, 410);
    cr_assert_eq(l.n, 1, "the Status object goes to on_line");
    cr_assert(strstr(l.lines[0], "410") != NULL, "%s", l.lines[0]);
    rf__kconn_destroy(&conn);
    s_stop(&e);
    rf_test_no_leaks();
}

Test(watch_kube_http, batch_and_limiter)
{
    s_env_t e;
    s_start(&e);
    rf__kmulti_t *m = rf__kmulti_new(e.kube, 3);
    cr_assert_not_null(m);
    rf__kcall_t calls[6];
    char paths[6][16];
    memset(calls, 0, sizeof calls);
    for (int i = 0; i < 6; i++) {
        snprintf(paths[i], sizeof paths[i], "/c%d", i);
        calls[i].method = "DELETE";
        calls[i].path = paths[i];
    }
    rf_error_t err;
    cr_assert_eq(rf__kube_batch(m, calls, 6, NULL, 2000, NULL, &err), RF_OK, "%s", err.message);
    for (int i = 0; i < 6; i++) {
        cr_assert_eq(calls[i].transport, RF_OK);
        cr_assert_eq(calls[i].resp.status, 200);
        char want[64];
        snprintf(want, sizeof want, "DELETE /c%d auth=1", i);
        cr_assert(strncmp(calls[i].resp.body, want, strlen(want)) == 0, "%s", calls[i].resp.body);
        rf__kresp_fini(&calls[i].resp);
    }
    cr_assert_eq(e.srv.seen, 6);
    rf__kmulti_destroy(&m);

    rf__limiter_t lim;
    rf__limiter_init(&lim, 10, 2);
    double t0 = rf__now() + 1; /* the bucket is full */
    double w1 = rf__limiter_take(&lim, t0), w2 = rf__limiter_take(&lim, t0), w3 = rf__limiter_take(&lim, t0);
    cr_assert(w1 == 0 && w2 == 0, "a burst of 2: %g %g", w1, w2);
    cr_assert(w3 > 0.099 && w3 <= 0.1 + 1e-9, "then 10 per second: %g", w3);
    cr_assert_eq(rf__limiter_take(&lim, t0 + 0.2), 0, "a token again 0.2 s later");
    rf__limiter_fini(&lim);
    s_stop(&e);
    rf_test_no_leaks();
}

Test(watch_kube_http, json)
{
    rf__arena_t *a = rf__arena_new(0);
    rf_doc_t *doc = NULL;
    rf_error_t err;
    const char *ok = "{\"items\":[1,2]}";
    cr_assert_eq(rf__kube_json(ok, strlen(ok), a, &doc, &err), RF_OK);
    cr_assert_eq(rf__doc_get(doc, "items")->len, 2);
    rf_error_clear(&err);
    cr_assert_neq(rf__kube_json("{\"items\":", 9, a, &doc, &err), RF_OK);
    cr_assert_neq(err.message[0], '\0', "a message says what is wrong");
    rf__arena_destroy(&a);
    rf_test_no_leaks();
}
