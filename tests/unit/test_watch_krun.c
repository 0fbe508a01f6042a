/* tests/unit/test_watch_krun.c: the retrying request runner
 * (watcher/krun.c) against a real HTTP exchange on loopback: a small server
 * thread answers each request by the first path segment's script (a 503
 * then 200, a 429 with Retry-After then 201, always 500, 404 and 409 for
 * deletes). Checks what is retried, what is given up after max_retries,
 * the 429's extra patience, `unsure` after a 5xx, the counters, and a stop
 * test that refuses every request ("not sent"). */
#include <criterion/criterion.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../support/leak.h"
#include "krun.h"

typedef struct {
    int fd, port;
    atomic_int stop;
    atomic_int seen[8]; /* requests per script */
} s_srv_t;

/* Script k answers its n-th request (0-based) with this status. */
static int s_status(int k, int n)
{
    switch (k) {
    case 1:
        return n == 0 ? 503 : 200; /* a passing failure, then success */
    case 2:
        return n < 3 ? 429 : 201; /* throttled three times */
    case 3:
        return 500; /* always failing */
    case 4:
        return 404; /* gone */
    case 5:
        return 409; /* replaced */
    default:
        return 400; /* refused: not retried */
    }
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
        int k = 0;
        sscanf(buf, "%*s /s%d", &k);
        k = k < 0 || k > 7 ? 0 : k;
        int seen = atomic_fetch_add(&s->seen[k], 1);
        int st = s_status(k, seen);
        char out[256];
        int m = snprintf(out, sizeof out, "HTTP/1.1 %d X\r\nContent-Length: 2\r\nConnection: close\r\n%s\r\n{}", st,
                         st == 429 ? "Retry-After: 0\r\n" : "");
        send(c, out, (size_t)m, MSG_NOSIGNAL);
        close(c);
    }
    return NULL;
}

static bool s_never(void *ctx)
{
    (void)ctx;
    return false;
}

static bool s_always(void *ctx)
{
    (void)ctx;
    return true;
}

Test(watch_krun, retries_and_outcomes)
{
    s_srv_t srv = {.fd = socket(AF_INET, SOCK_STREAM, 0)};
    struct sockaddr_in sin = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof sin;
    cr_assert_eq(bind(srv.fd, (struct sockaddr *)&sin, sizeof sin), 0);
    listen(srv.fd, 64);
    getsockname(srv.fd, (struct sockaddr *)&sin, &len);
    srv.port = ntohs(sin.sin_port);
    struct timeval tv = {.tv_sec = 0, .tv_usec = 200000};
    setsockopt(srv.fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    pthread_t t;
    pthread_create(&t, NULL, s_serve, &srv);
    rf_error_t err;
    rf__kube_global_init(&err);
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%d", srv.port);
    rf__kubeconfig_t kc = {.server = url, .token = "t"};
    rf__kube_t *kube = rf__kube_new(&kc, &err);
    rf__kmulti_t *multi = rf__kmulti_new(kube, 4);
    rf__limiter_t lim;
    rf__limiter_init(&lim, 0, 1);
    atomic_long retries = 0, throttled = 0;
    rf__krun_t run = {.multi = multi,
                      .lim = &lim,
                      .max_retries = 2,
                      .timeout_ms = 2000,
                      .stop = s_never,
                      .retries = &retries,
                      .throttled = &throttled};
    rf__kreq_t reqs[3] = {{.path = strdup("/s1"), .body = strdup("{}")},
                          {.path = strdup("/s2"), .body = strdup("{}")},
                          {.path = strdup("/s3"), .body = strdup("{}")}};
    bool ok[3], unsure[3];
    char why[512] = "";
    int failed =
        rf__krun(&run, "POST", "application/json", reqs, 3, ok, unsure, rf__kaccept_2xx, NULL, why, sizeof why);
    cr_assert_eq(failed, 1);
    cr_assert(ok[0], "a 503 is retried");
    cr_assert(ok[1], "three 429s are waited out beyond max_retries");
    cr_assert(!ok[2]);
    cr_assert(unsure[2], "its last answer was a 5xx: the server may have applied it");
    cr_assert_eq(srv.seen[3], 3, "1 try + max_retries");
    cr_assert(strstr(why, "POST /s3: HTTP 500") != NULL, "%s", why);
    cr_assert_eq(atomic_load(&throttled), 3);
    cr_assert_eq(atomic_load(&retries), 1 + 3 + 2);
    rf__kreqs_free(NULL, 0);
    for (int i = 0; i < 3; i++) {
        free(reqs[i].path);
        free(reqs[i].body);
    }
    /* deletes: 404 and 409 leave nothing of ours; a 400 is not retried */
    rf__kreq_t del[3] = {{.path = strdup("/s4")}, {.path = strdup("/s5")}, {.path = strdup("/s0")}};
    why[0] = '\0';
    failed = rf__krun(&run, "DELETE", NULL, del, 3, ok, NULL, rf__kaccept_gone, NULL, why, sizeof why);
    cr_assert_eq(failed, 1);
    cr_assert(ok[0] && ok[1] && !ok[2]);
    cr_assert_eq(srv.seen[0], 1, "a 400 is not a passing failure");
    /* stopped: nothing is sent */
    run.stop = s_always;
    why[0] = '\0';
    int before = srv.seen[4];
    failed = rf__krun(&run, "DELETE", NULL, del, 1, ok, NULL, rf__kaccept_gone, NULL, why, sizeof why);
    cr_assert_eq(failed, 1);
    cr_assert(strstr(why, "not sent") != NULL, "%s", why);
    cr_assert_eq(srv.seen[4], before);
    for (int i = 0; i < 3; i++)
        free(del[i].path);
    srv.stop = 1;
    pthread_join(t, NULL);
    close(srv.fd);
    rf__limiter_fini(&lim);
    rf__kmulti_destroy(&multi);
    rf__kube_destroy(&kube);
    rf__kube_global_fini();
    rf_test_no_leaks();
}
