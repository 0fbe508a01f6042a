/* tests/unit/test_httpd.c: the operators' HTTP endpoint (base/httpd.c) on a
 * real loopback socket: /metrics, /healthz, /readyz, 404, 405, and the
 * parsing of HOST:PORT addresses. */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../support/leak.h"
#include "httpd.h"

/* One HTTP/1.0 request to 127.0.0.1:port; the whole response (malloc'ed). */
static char *s_get(int port, const char *method, const char *path)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    cr_assert_geq(fd, 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    cr_assert_eq(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
    char req[256];
    int n = snprintf(req, sizeof req, "%s %s HTTP/1.0\r\nHost: x\r\n\r\n", method, path);
    cr_assert_eq(write(fd, req, (size_t)n), n);
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    ssize_t r;
    while ((r = read(fd, buf + len, cap - len - 1)) > 0) {
        len += (size_t)r;
        if (len + 1 == cap)
            buf = realloc(buf, cap *= 2);
    }
    buf[len] = '\0';
    close(fd);
    return buf;
}

static const char *s_reason;

static const char *s_not_ready(void *arg)
{
    (void)arg;
    return s_reason;
}

Test(httpd, serves_the_three_routes)
{
    rf__metrics_t *m = rf__metrics_new();
    rf__metric_t *c = rf__metrics_counter(m, "rackfit_test_total", "A test counter.", 0, NULL);
    rf__counter_add(rf__metric_series(c, NULL), 41);
    rf__httpd_config_t cfg = {.metrics = m, .not_ready = s_not_ready};
    rf__httpd_t *h = NULL;
    rf_error_t err;
    cr_assert_eq(rf__httpd_start("127.0.0.1:0", &cfg, &h, &err), RF_OK, "%s", err.message);
    int port = rf__httpd_port(h);
    cr_assert_gt(port, 0);

    char *r = s_get(port, "GET", "/metrics");
    cr_assert(strncmp(r, "HTTP/1.0 200", 12) == 0 || strncmp(r, "HTTP/1.1 200", 12) == 0, "%s", r);
    cr_assert_not_null(strstr(r, "Content-Type: text/plain; version=0.0.4"), "%s", r);
    cr_assert_not_null(strstr(r, "\r\n\r\n# HELP rackfit_test_total A test counter.\n"), "%s", r);
    cr_assert_not_null(strstr(r, "rackfit_test_total 41\n"), "%s", r);
    free(r);
    rf__counter_add(rf__metric_series(c, NULL), 1);
    r = s_get(port, "GET", "/metrics");
    cr_assert_not_null(strstr(r, "rackfit_test_total 42\n"), "every scrape renders anew: %s", r);
    free(r);

    r = s_get(port, "GET", "/healthz");
    cr_assert_not_null(strstr(r, " 200 "), "%s", r);
    cr_assert_not_null(strstr(r, "\r\n\r\nok\n"), "%s", r);
    free(r);

    s_reason = NULL;
    r = s_get(port, "GET", "/readyz");
    cr_assert_not_null(strstr(r, " 200 "), "%s", r);
    free(r);
    s_reason = "draining";
    r = s_get(port, "GET", "/readyz");
    cr_assert_not_null(strstr(r, " 503 "), "%s", r);
    cr_assert_not_null(strstr(r, "not ready: draining"), "%s", r);
    free(r);

    r = s_get(port, "GET", "/nope");
    cr_assert_not_null(strstr(r, " 404 "), "%s", r);
    free(r);
    r = s_get(port, "POST", "/metrics");
    cr_assert_not_null(strstr(r, " 405 "), "%s", r);
    free(r);
    r = s_get(port, "HEAD", "/healthz");
    cr_assert_not_null(strstr(r, " 200 "), "%s", r);
    cr_assert_null(strstr(r, "\r\n\r\nok"), "HEAD has no body: %s", r);
    free(r);

    rf__httpd_stop(&h);
    cr_assert_null(h);
    rf__httpd_stop(&h);
    rf__metrics_destroy(&m);
    rf_test_no_leaks();
}

Test(httpd, addresses)
{
    char host[64];
    int port = -1;
    rf_error_t err;
    cr_assert_eq(rf__httpd_parse_listen("0.0.0.0:9090", host, sizeof host, &port, &err), RF_OK);
    cr_assert_str_eq(host, "0.0.0.0");
    cr_assert_eq(port, 9090);
    cr_assert_eq(rf__httpd_parse_listen("[::1]:80", host, sizeof host, &port, &err), RF_OK);
    cr_assert_str_eq(host, "::1");
    cr_assert_eq(port, 80);
    cr_assert_eq(rf__httpd_parse_listen(":9100", host, sizeof host, &port, &err), RF_OK);
    cr_assert_str_eq(host, "");
    cr_assert_eq(port, 9100);
    const char *bad[] = {"", "localhost", "host:", "host:65536", "host:9x", "::1:80", "[::1:80", NULL};
    for (int i = 0; bad[i]; i++) {
        cr_assert_eq(rf__httpd_parse_listen(bad[i], host, sizeof host, &port, &err), RF_EINVAL, "%s", bad[i]);
        cr_assert_neq(err.message[0], '\0');
    }
    rf__httpd_t *h = NULL;
    rf__httpd_config_t cfg = {0};
    cr_assert_eq(rf__httpd_start("host.invalid.:9", &cfg, &h, &err), RF_EINVAL);
    cr_assert_null(h);
    /* A port already taken is an I/O error naming the address. */
    cr_assert_eq(rf__httpd_start("127.0.0.1:0", &cfg, &h, &err), RF_OK);
    char taken[64];
    snprintf(taken, sizeof taken, "127.0.0.1:%d", rf__httpd_port(h));
    rf__httpd_t *h2 = NULL;
    cr_assert_eq(rf__httpd_start(taken, &cfg, &h2, &err), RF_EIO);
    cr_assert_not_null(strstr(err.message, taken), "%s", err.message);
    cr_assert_null(h2);
    rf__httpd_stop(&h);
    rf_test_no_leaks();
}
