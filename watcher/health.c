/* watcher/health.c: the kubelet's liveness and readiness probes (see health.h). */
#include "health.h"

#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "clock.h"
#include "log.h"

bool rf__health_alive(rf__health_t *h)
{
    return rf__now() - atomic_load(&h->heartbeat) < 60;
}

static void s_answer(rf__health_t *h, int c)
{
    char req[512];
    struct pollfd pc = {.fd = c, .events = POLLIN};
    ssize_t n = poll(&pc, 1, 1000) > 0 ? recv(c, req, sizeof req - 1, 0) : 0;
    req[n > 0 ? n : 0] = '\0';
    bool alive = rf__health_alive(h);
    bool ok = strncmp(req, "GET /readyz", 11) == 0    ? atomic_load(&h->ready) && alive
              : strncmp(req, "GET /healthz", 12) == 0 ? alive
                                                      : false;
    const char *body = ok ? "ok\n" : "not ok\n";
    char out[256];
    int m = snprintf(out, sizeof out,
                     "HTTP/1.1 %s\r\nContent-Type: text/plain\r\nContent-Length: %zu\r\n"
                     "Connection: close\r\n\r\n%s",
                     ok ? "200 OK" : "503 Service Unavailable", strlen(body), body);
    if (send(c, out, (size_t)m, MSG_NOSIGNAL) < 0)
        rf__log(RF_LOG_DEBUG, "health: send: %s", strerror(errno));
}

static void *s_run(void *arg)
{
    rf__health_t *h = arg;
    while (!*h->stop) {
        struct pollfd p = {.fd = h->fd, .events = POLLIN};
        if (poll(&p, 1, 200) <= 0)
            continue;
        int c = accept(h->fd, NULL, NULL);
        if (c < 0)
            continue;
        s_answer(h, c);
        close(c);
    }
    return NULL;
}

rf_status rf__health_start(rf__health_t *h, int port, const atomic_int *stop, rf_error_t *err)
{
    h->stop = stop;
    h->fd = socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    if (h->fd >= 0)
        setsockopt(h->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in sin = {
        .sin_family = AF_INET, .sin_port = htons((uint16_t)port), .sin_addr.s_addr = htonl(INADDR_ANY)};
    if (h->fd < 0 || bind(h->fd, (struct sockaddr *)&sin, sizeof sin) != 0 || listen(h->fd, 16) != 0)
        return rf_error_set(err, RF_EIO, "health-port", "port %d: %s", port, strerror(errno));
    if (pthread_create(&h->thread, NULL, s_run, h) != 0)
        return rf_error_set(err, RF_EIO, "health-port", "cannot start its thread");
    h->started = true;
    return RF_OK;
}

void rf__health_stop(rf__health_t *h)
{
    if (h->started)
        pthread_join(h->thread, NULL);
    h->started = false;
    if (h->fd >= 0)
        close(h->fd);
    h->fd = -1;
}
