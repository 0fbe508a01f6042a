/* tests/support/loophttp.c: see loophttp.h. */
#include "loophttp.h"

#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

/* One request: headers, then Content-Length bytes of body (cut at cap). */
static void s_read(int c, char *buf, size_t cap)
{
    size_t have = 0;
    while (have + 1 < cap) {
        ssize_t n = recv(c, buf + have, cap - 1 - have, 0);
        if (n <= 0)
            break;
        have += (size_t)n;
        buf[have] = '\0';
        const char *end = strstr(buf, "\r\n\r\n");
        const char *cl = strstr(buf, "Content-Length:");
        if (end && (!cl || have >= (size_t)(end + 4 - buf) + (size_t)atol(cl + 15)))
            break;
    }
    buf[have] = '\0';
}

static void s_record(rf_loophttp_t *s, const char *buf)
{
    const char *sp = strchr(buf, ' ');
    const char *sp2 = sp ? strchr(sp + 1, ' ') : NULL;
    pthread_mutex_lock(&s->mu);
    if (s->n < RF_LOOPHTTP_MAX && sp && sp2) {
        const char *body = strstr(buf, "\r\n\r\n");
        snprintf(s->method[s->n], sizeof s->method[0], "%.*s", (int)(sp - buf), buf);
        snprintf(s->path[s->n], sizeof s->path[0], "%.*s", (int)(sp2 - sp - 1), sp + 1);
        snprintf(s->body[s->n], sizeof s->body[0], "%s", body ? body + 4 : "");
        s->n++;
    }
    pthread_mutex_unlock(&s->mu);
}

static void *s_serve(void *arg)
{
    rf_loophttp_t *s = arg;
    char *buf = malloc(16384);
    cr_assert_not_null(buf);
    while (!s->stop) {
        int c = accept(s->fd, NULL, NULL);
        if (c < 0)
            continue;
        s_read(c, buf, 16384);
        s_record(s, buf);
        const char *body = "{}", *headers = "";
        int st = strncmp(buf, "POST ", 5) == 0 ? 201 : 200;
        if (s->fn)
            st = s->fn(s->user, buf, &body, &headers);
        size_t blen = strlen(body);
        char head[512];
        int m = snprintf(head, sizeof head,
                         "HTTP/1.1 %d X\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n"
                         "%sConnection: close\r\n\r\n",
                         st, blen, headers);
        send(c, head, (size_t)m, MSG_NOSIGNAL);
        send(c, body, blen, MSG_NOSIGNAL);
        close(c);
    }
    free(buf);
    return NULL;
}

void rf_loophttp_start(rf_loophttp_t *s, rf_loophttp_fn fn, void *user)
{
    s->fn = fn;
    s->user = user;
    s->n = 0;
    atomic_store(&s->stop, 0);
    pthread_mutex_init(&s->mu, NULL);
    s->fd = socket(AF_INET, SOCK_STREAM, 0);
    cr_assert_geq(s->fd, 0);
    struct sockaddr_in sin = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof sin;
    cr_assert_eq(bind(s->fd, (struct sockaddr *)&sin, sizeof sin), 0);
    cr_assert_eq(listen(s->fd, 64), 0);
    getsockname(s->fd, (struct sockaddr *)&sin, &len);
    s->port = ntohs(sin.sin_port);
    struct timeval tv = {.tv_sec = 0, .tv_usec = 200000}; /* accept wakes up to see `stop` */
    setsockopt(s->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    cr_assert_eq(pthread_create(&s->thread, NULL, s_serve, s), 0);
}

void rf_loophttp_stop(rf_loophttp_t *s)
{
    atomic_store(&s->stop, 1);
    pthread_join(s->thread, NULL);
    close(s->fd);
    pthread_mutex_destroy(&s->mu);
}
