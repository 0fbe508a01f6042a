/* base/httpd.c: /metrics, /healthz and /readyz over libmicrohttpd
 * (base/httpd.h). The only file that includes <microhttpd.h>; nothing of
 * libmicrohttpd crosses it. Every response is built in full, then handed to
 * libmicrohttpd, which frees it (MHD_RESPMEM_MUST_FREE or persistent static
 * text). */
#include "httpd.h"

#include <errno.h>
#include <netdb.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <microhttpd.h>

/* --------------------------------------------------------- data structures */

struct rf__httpd {
    struct MHD_Daemon *d;
    rf__httpd_config_t cfg;
    int port;
};

/* ------------------------------------------------------------- local methods */

static enum MHD_Result s_send(struct MHD_Connection *c, unsigned status, const char *type, char *body, size_t len,
                              bool owned)
{
    struct MHD_Response *r =
        MHD_create_response_from_buffer(len, body, owned ? MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_PERSISTENT);
    if (!r) {
        if (owned)
            free(body);
        return MHD_NO;
    }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
    enum MHD_Result rc = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return rc;
}

static enum MHD_Result s_text(struct MHD_Connection *c, unsigned status, const char *text)
{
    return s_send(c, status, "text/plain; charset=utf-8", (char *)text, strlen(text), false);
}

static enum MHD_Result s_answer(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                                const char *version, const char *upload_data, size_t *upload_data_size, void **con_cls)
{
    rf__httpd_t *h = cls;
    (void)version;
    (void)upload_data;
    /* First call per request: headers only. Answer at once; a body is
     * refused (no route takes one), so nothing is ever uploaded. */
    if (*upload_data_size != 0) {
        *upload_data_size = 0;
        return MHD_YES;
    }
    if (*con_cls == NULL)
        *con_cls = h;
    if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 && strcmp(method, MHD_HTTP_METHOD_HEAD) != 0)
        return s_text(c, MHD_HTTP_METHOD_NOT_ALLOWED, "only GET and HEAD are served\n");
    if (strcmp(url, "/metrics") == 0) {
        if (!h->cfg.metrics)
            return s_text(c, MHD_HTTP_NOT_FOUND, "no metrics\n");
        size_t len = 0;
        char *text = rf__metrics_render(h->cfg.metrics, &len);
        if (!text)
            return s_text(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
        return s_send(c, MHD_HTTP_OK, RF__METRICS_CONTENT_TYPE, text, len, true);
    }
    if (strcmp(url, "/healthz") == 0)
        return s_text(c, MHD_HTTP_OK, "ok\n");
    if (strcmp(url, "/readyz") == 0) {
        const char *why = h->cfg.not_ready ? h->cfg.not_ready(h->cfg.arg) : NULL;
        if (!why)
            return s_text(c, MHD_HTTP_OK, "ready\n");
        size_t cap = strlen(why) + 16;
        char *body = malloc(cap);
        if (!body)
            return s_text(c, MHD_HTTP_SERVICE_UNAVAILABLE, "not ready\n");
        int n = snprintf(body, cap, "not ready: %s\n", why);
        return s_send(c, MHD_HTTP_SERVICE_UNAVAILABLE, "text/plain; charset=utf-8", body, (size_t)n, true);
    }
    return s_text(c, MHD_HTTP_NOT_FOUND, "not found: /metrics, /healthz and /readyz are served\n");
}

/* ------------------------------------------------------------------ interface */

rf_status rf__httpd_parse_listen(const char *listen, char *host, size_t host_size, int *port, rf_error_t *err)
{
    if (!listen || !*listen)
        return rf_error_set(err, RF_EINVAL, "", "the metrics address is empty (HOST:PORT)");
    const char *colon = strrchr(listen, ':');
    if (!colon)
        return rf_error_set(err, RF_EINVAL, "", "metrics address \"%.100s\" has no port (HOST:PORT)", listen);
    const char *h = listen;
    size_t hl = (size_t)(colon - listen);
    if (hl > 0 && h[0] == '[') {
        if (hl < 2 || h[hl - 1] != ']')
            return rf_error_set(err, RF_EINVAL, "", "metrics address \"%.100s\": an IPv6 host is [ADDRESS]", listen);
        h++;
        hl -= 2;
    } else if (memchr(h, ':', hl)) {
        return rf_error_set(err, RF_EINVAL, "", "metrics address \"%.100s\": write an IPv6 host as [ADDRESS]:PORT",
                            listen);
    }
    if (hl + 1 > host_size)
        return rf_error_set(err, RF_EINVAL, "", "metrics address \"%.100s\": the host is too long", listen);
    const char *p = colon + 1;
    long v = 0;
    if (!*p)
        return rf_error_set(err, RF_EINVAL, "", "metrics address \"%.100s\" has no port (HOST:PORT)", listen);
    for (; *p; p++) {
        if (*p < '0' || *p > '9' || (v = v * 10 + (*p - '0')) > 65535)
            return rf_error_set(err, RF_EINVAL, "", "metrics address \"%.100s\": the port must be 0 to 65535", listen);
    }
    memcpy(host, h, hl);
    host[hl] = '\0';
    *port = (int)v;
    return RF_OK;
}

rf_status rf__httpd_start(const char *listen, const rf__httpd_config_t *cfg, rf__httpd_t **out, rf_error_t *err)
{
    char host[256], port_text[8];
    int port = 0;
    *out = NULL;
    RF_CALL(rf__httpd_parse_listen(listen, host, sizeof host, &port, err));
    snprintf(port_text, sizeof port_text, "%d", port);
    struct addrinfo hints, *ai = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    int gai = getaddrinfo(host[0] ? host : NULL, port_text, &hints, &ai);
    if (gai != 0 || !ai)
        return rf_error_set(err, RF_EINVAL, "", "metrics address \"%.100s\": %s", listen,
                            gai ? gai_strerror(gai) : "no address");
    rf__httpd_t *h = calloc(1, sizeof *h);
    if (!h) {
        freeaddrinfo(ai);
        return rf_error_set(err, RF_ENOMEM, "", "out of memory");
    }
    h->cfg = *cfg;
    if (!h->cfg.max_connections)
        h->cfg.max_connections = 16;
    if (!h->cfg.timeout_s)
        h->cfg.timeout_s = 10;
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | (ai->ai_family == AF_INET6 ? MHD_USE_IPv6 : 0);
    errno = 0;
    h->d = MHD_start_daemon(flags, (uint16_t)port, NULL, NULL, s_answer, h, MHD_OPTION_SOCK_ADDR, ai->ai_addr,
                            MHD_OPTION_CONNECTION_LIMIT, h->cfg.max_connections, MHD_OPTION_CONNECTION_TIMEOUT,
                            h->cfg.timeout_s, MHD_OPTION_END);
    int saved = errno;
    freeaddrinfo(ai);
    if (!h->d) {
        free(h);
        return rf_error_set(err, RF_EIO, "", "cannot serve metrics on %.100s: %s", listen,
                            saved ? strerror(saved) : "libmicrohttpd could not start");
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(h->d, MHD_DAEMON_INFO_BIND_PORT);
    h->port = info ? (int)info->port : port;
    *out = h;
    return RF_OK;
}

int rf__httpd_port(const rf__httpd_t *h)
{
    return h ? h->port : -1;
}

void rf__httpd_stop(rf__httpd_t **hp)
{
    if (!hp || !*hp)
        return;
    MHD_stop_daemon((*hp)->d);
    free(*hp);
    *hp = NULL;
}
