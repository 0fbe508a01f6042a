/* tests/unit/test_watch_leader.c: Lease leader election (watcher/leader.c,
 * rf__leader_try and rf__leader_lost) against a real HTTP exchange on
 * loopback: a small server thread keeps one Lease in memory and answers GET
 * (404 while absent), POST (create) and PUT (409 unless the resourceVersion
 * read is the current one). Checks acquire, renew, refusal while another
 * holds it, take-over once it expired on our own clock (transitions,
 * recover_after), a lost update race, and when a leader counts as lost. */
#define _GNU_SOURCE /* strcasestr */
#include <criterion/criterion.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../support/leak.h"
#include "clock.h"
#include "leader.h"

typedef struct {
    int fd, port;
    atomic_int stop;
    pthread_mutex_t mu;
    bool exists;
    int rv;
    int duration;
    char holder[64];
    bool force_conflict; /* answer every PUT 409 */
    int puts, posts;
} s_srv_t;

/* A JSON string field's value in a request body (the writer's own compact form). */
static void s_field(const char *body, const char *key, char *out, size_t cap)
{
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\":\"", key);
    const char *p = strstr(body, pat);
    out[0] = '\0';
    if (!p)
        return;
    p += strlen(pat);
    const char *e = strchr(p, '"');
    snprintf(out, cap, "%.*s", e ? (int)(e - p) : 0, p);
}

static int s_answer(s_srv_t *s, const char *method, const char *body, char *out, size_t cap)
{
    char rv[32], holder[64];
    pthread_mutex_lock(&s->mu);
    int st = 200;
    if (strcmp(method, "GET") == 0) {
        st = s->exists ? 200 : 404;
    } else if (strcmp(method, "POST") == 0) {
        s->posts++;
        st = s->exists ? 409 : 201;
        if (!s->exists) {
            s_field(body, "holderIdentity", holder, sizeof holder);
            snprintf(s->holder, sizeof s->holder, "%s", holder);
            s->exists = true;
            s->rv++;
        }
    } else if (strcmp(method, "PUT") == 0) {
        s->puts++;
        s_field(body, "resourceVersion", rv, sizeof rv);
        if (s->force_conflict || atoi(rv) != s->rv) {
            st = 409;
        } else {
            s_field(body, "holderIdentity", holder, sizeof holder);
            snprintf(s->holder, sizeof s->holder, "%s", holder);
            s->rv++;
        }
    }
    int n = snprintf(out, cap,
                     "{\"metadata\":{\"name\":\"l\",\"namespace\":\"ns\",\"resourceVersion\":\"%d\"},\"spec\":{"
                     "\"holderIdentity\":\"%s\",\"leaseDurationSeconds\":%d,\"renewTime\":"
                     "\"2026-01-01T00:00:00.000000Z\",\"leaseTransitions\":0}}",
                     s->rv, s->holder, s->duration);
    pthread_mutex_unlock(&s->mu);
    if (st == 404 || st == 409)
        n = snprintf(out, cap, "{\"kind\":\"Status\",\"code\":%d}", st);
    (void)n;
    return st;
}

static void *s_serve(void *arg)
{
    s_srv_t *s = arg;
    while (!s->stop) {
        int c = accept(s->fd, NULL, NULL);
        if (c < 0)
            continue;
        char buf[8192];
        size_t got = 0;
        for (;;) { /* headers, then Content-Length bytes of body */
            ssize_t n = recv(c, buf + got, sizeof buf - 1 - got, 0);
            if (n <= 0)
                break;
            got += (size_t)n;
            buf[got] = '\0';
            char *end = strstr(buf, "\r\n\r\n");
            if (!end)
                continue;
            const char *cl = strcasestr(buf, "Content-Length:");
            size_t want = cl && cl < end ? (size_t)atol(cl + 15) : 0;
            if (got >= (size_t)(end + 4 - buf) + want)
                break;
        }
        buf[got] = '\0';
        char method[16] = "";
        sscanf(buf, "%15s", method);
        const char *body = strstr(buf, "\r\n\r\n");
        char out[1024], head[256];
        int st = s_answer(s, method, body ? body + 4 : "", out, sizeof out);
        int m = snprintf(head, sizeof head,
                         "HTTP/1.1 %d X\r\nContent-Type: application/json\r\nContent-Length: %zu\r\nConnection: "
                         "close\r\n\r\n",
                         st, strlen(out));
        send(c, head, (size_t)m, MSG_NOSIGNAL);
        send(c, out, strlen(out), MSG_NOSIGNAL);
        close(c);
    }
    return NULL;
}

typedef struct {
    s_srv_t srv;
    pthread_t thread;
    rf__kube_t *kube;
    rf__kconn_t *conn;
} s_env_t;

static void s_start(s_env_t *e)
{
    memset(e, 0, sizeof *e);
    e->srv.fd = socket(AF_INET, SOCK_STREAM, 0);
    pthread_mutex_init(&e->srv.mu, NULL);
    e->srv.duration = 15;
    struct sockaddr_in sin = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof sin;
    cr_assert_eq(bind(e->srv.fd, (struct sockaddr *)&sin, sizeof sin), 0);
    listen(e->srv.fd, 64);
    getsockname(e->srv.fd, (struct sockaddr *)&sin, &len);
    e->srv.port = ntohs(sin.sin_port);
    struct timeval tv = {.tv_sec = 0, .tv_usec = 200000};
    setsockopt(e->srv.fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    pthread_create(&e->thread, NULL, s_serve, &e->srv);
    rf_error_t err;
    rf__kube_global_init(&err);
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%d", e->srv.port);
    rf__kubeconfig_t kc = {.server = url, .token = "t"};
    e->kube = rf__kube_new(&kc, &err);
    cr_assert_not_null(e->kube, "%s", err.message);
    e->conn = rf__kconn_new(e->kube);
    cr_assert_not_null(e->conn);
}

static void s_stop(s_env_t *e)
{
    rf__kconn_destroy(&e->conn);
    rf__kube_destroy(&e->kube);
    e->srv.stop = 1;
    pthread_join(e->thread, NULL);
    close(e->srv.fd);
    pthread_mutex_destroy(&e->srv.mu);
    rf__kube_global_fini();
}

static void s_leader(rf__leader_t *l, s_env_t *e, const char *identity)
{
    memset(l, 0, sizeof *l);
    l->kube = e->kube;
    l->ns = "ns";
    l->name = "l";
    l->identity = identity;
    l->lease_s = 15;
    l->renew_deadline_s = 10;
    l->retry_s = 2;
    l->settle_s = 5;
}

Test(watch_leader, acquire_renew_and_refuse)
{
    s_env_t e;
    s_start(&e);
    rf__leader_t a, b;
    s_leader(&a, &e, "alpha");
    s_leader(&b, &e, "beta");
    char obs_a[512] = "", obs_b[512] = "";
    double at_a = 0, at_b = 0;
    cr_assert_eq(rf__leader_try(&a, e.conn, obs_a, sizeof obs_a, &at_a), 1, "an absent Lease is created");
    cr_assert_eq(e.srv.posts, 1);
    cr_assert_str_eq(e.srv.holder, "alpha");
    cr_assert_eq(rf__leader_try(&a, e.conn, obs_a, sizeof obs_a, &at_a), 1, "our own Lease is renewed");
    cr_assert_eq(e.srv.puts, 1);
    cr_assert_eq(e.srv.rv, 2);
    cr_assert_eq(rf__leader_try(&b, e.conn, obs_b, sizeof obs_b, &at_b), -1, "another holds it, unexpired");
    cr_assert_eq(e.srv.puts, 1, "no write while another holds it");
    cr_assert_str_eq(e.srv.holder, "alpha");
    cr_assert(strstr(obs_b, "alpha") != NULL, "%s", obs_b);
    cr_assert_eq(atomic_load(&b.transitions), 0);
    s_stop(&e);
    rf_test_no_leaks();
}

Test(watch_leader, take_over_expired)
{
    s_env_t e;
    s_start(&e);
    e.srv.exists = true;
    e.srv.rv = 7;
    e.srv.duration = 1;
    snprintf(e.srv.holder, sizeof e.srv.holder, "gone");
    rf__leader_t b;
    s_leader(&b, &e, "beta");
    char obs[512] = "";
    double at = 0;
    cr_assert_eq(rf__leader_try(&b, e.conn, obs, sizeof obs, &at), -1, "just seen: not expired on our clock");
    cr_assert_gt(at, 0);
    usleep(1300 * 1000);
    double before = rf__now();
    cr_assert_eq(rf__leader_try(&b, e.conn, obs, sizeof obs, &at), 1, "unrenewed past leaseDurationSeconds");
    cr_assert_str_eq(e.srv.holder, "beta");
    cr_assert_eq(e.srv.rv, 8);
    cr_assert_eq(atomic_load(&b.transitions), 1);
    cr_assert_geq(atomic_load(&b.recover_after), before + b.settle_s - 0.5,
                  "the old holder's last requests may still land");
    s_stop(&e);
    rf_test_no_leaks();
}

Test(watch_leader, lost_race_and_lost)
{
    s_env_t e;
    s_start(&e);
    e.srv.exists = true;
    e.srv.rv = 3;
    e.srv.force_conflict = true;
    rf__leader_t a;
    s_leader(&a, &e, "alpha");
    char obs[512] = "";
    double at = 0;
    cr_assert_eq(rf__leader_try(&a, e.conn, obs, sizeof obs, &at), 0, "a free Lease whose update lost a race");
    cr_assert_eq(e.srv.puts, 1);
    cr_assert_eq(atomic_load(&a.transitions), 0);
    s_stop(&e);

    cr_assert(!rf__leader_lost(&a), "never led: not lost");
    atomic_store(&a.leading, 1);
    atomic_store(&a.valid_until, rf__now() + 5);
    cr_assert(!rf__leader_lost(&a), "leading within the renew deadline");
    atomic_store(&a.valid_until, rf__now() - 0.1);
    cr_assert(rf__leader_lost(&a), "past the renew deadline the Lease may be another's");
    atomic_store(&a.leading, 0);
    atomic_store(&a.lost, 1);
    cr_assert(rf__leader_lost(&a));
    rf_test_no_leaks();
}
