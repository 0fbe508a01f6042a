/* tests/unit/test_watch_health.c: the kubelet's probes (watcher/health.c)
 * over a real loopback socket: /healthz 200 while the heart beats and 503
 * once it has not for a minute, /readyz 503 until synced, anything else 503;
 * the thread stops with *stop. */
#include <criterion/criterion.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../support/leak.h"
#include "clock.h"
#include "health.h"

static int s_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sin = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof sin;
    bind(fd, (struct sockaddr *)&sin, sizeof sin);
    getsockname(fd, (struct sockaddr *)&sin, &len);
    close(fd);
    return ntohs(sin.sin_port);
}

/* The status code of GET path, or -1. */
static int s_get(int port, const char *path)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sin = {
        .sin_family = AF_INET, .sin_port = htons((uint16_t)port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    if (connect(fd, (struct sockaddr *)&sin, sizeof sin) != 0) {
        close(fd);
        return -1;
    }
    char req[128], buf[256] = "";
    int n = snprintf(req, sizeof req, "GET %s HTTP/1.1\r\nHost: x\r\n\r\n", path);
    send(fd, req, (size_t)n, 0);
    ssize_t got = recv(fd, buf, sizeof buf - 1, 0);
    close(fd);
    int code = -1;
    if (got > 0)
        sscanf(buf, "HTTP/1.1 %d", &code);
    return code;
}

Test(watch_health, probes)
{
    atomic_int stop = 0;
    rf__health_t h = {.fd = -1};
    atomic_store(&h.heartbeat, rf__now());
    int port = s_port();
    rf_error_t err;
    cr_assert_eq(rf__health_start(&h, port, &stop, &err), RF_OK, "%s", err.message);
    cr_assert_eq(s_get(port, "/healthz"), 200);
    cr_assert_eq(s_get(port, "/readyz"), 503, "not synced yet");
    atomic_store(&h.ready, 1);
    cr_assert_eq(s_get(port, "/readyz"), 200);
    cr_assert_eq(s_get(port, "/metrics"), 503, "not served here");
    atomic_store(&h.heartbeat, rf__now() - 61);
    cr_assert_eq(s_get(port, "/healthz"), 503, "the heart stopped");
    cr_assert_eq(s_get(port, "/readyz"), 503);
    stop = 1;
    rf__health_stop(&h);
    cr_assert_eq(h.fd, -1);
    rf__health_t busy = {.fd = -1};
    rf__health_t again = {.fd = -1};
    stop = 0;
    cr_assert_eq(rf__health_start(&busy, port, &stop, &err), RF_OK);
    cr_assert_eq(rf__health_start(&again, port, &stop, &err), RF_EIO, "the port is taken");
    cr_assert_str_eq(err.path, "health-port");
    stop = 1;
    rf__health_stop(&busy);
    rf__health_stop(&again);
    rf_test_no_leaks();
}
