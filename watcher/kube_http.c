/* watcher/kube_http.c: libcurl to the API server (see kube_http.h). The
 * only file that includes <curl/curl.h>: curl's handles, errors and buffers
 * stay here; callers get our status codes and malloc'ed copies. */
#include "kube_http.h"

#include <curl/curl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "json.h"
#include "rackfit/problem.h"

#define S_MAX_BODY  ((size_t)512 << 20)
#define S_USERAGENT "rackfit-watch/" RACKFIT_VERSION_STRING
#ifndef RACKFIT_VERSION_STRING
#define RACKFIT_VERSION_STRING "0.1"
#endif

struct rf__kube {
    rf__kubeconfig_t cfg;
    pthread_mutex_t mu;
    char *token; /* current bearer token (from cfg.token or cfg.token_file) */
    double token_read;
    rf__kube_observer_fn observe; /* may be NULL: told of every answer (metrics) */
    void *observe_ctx;
};

void rf__kube_observe(rf__kube_t *kube, rf__kube_observer_fn fn, void *ctx)
{
    kube->observe = fn;
    kube->observe_ctx = ctx;
}

static void s_observe(const rf__kube_t *k, const char *verb, long status)
{
    if (k->observe)
        k->observe(k->observe_ctx, verb, status);
}

struct rf__kconn {
    rf__kube_t *kube;
    CURL *h;
};

rf_status rf__kube_global_init(rf_error_t *err)
{
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
        return rf_error_set(err, RF_EIO, "", "curl_global_init failed");
    return RF_OK;
}

void rf__kube_global_fini(void)
{
    curl_global_cleanup();
}

static char *s_dup(const char *s)
{
    return s ? strdup(s) : NULL;
}

static char *s_memdup(const char *s, size_t n)
{
    if (!s)
        return NULL;
    char *p = malloc(n + 1);
    if (p) {
        memcpy(p, s, n);
        p[n] = '\0';
    }
    return p;
}

static char *s_read_token(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char buf[16384];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    while (n && (buf[n - 1] == '\n' || buf[n - 1] == '\r' || buf[n - 1] == ' '))
        buf[--n] = '\0';
    return strdup(buf);
}

rf__kube_t *rf__kube_new(const rf__kubeconfig_t *cfg, rf_error_t *err)
{
    if (cfg->tls_server_name) {
        rf_error_set(err, RF_EUNSUPPORTED, "tls-server-name", "tls-server-name is not supported");
        return NULL;
    }
    rf__kube_t *k = calloc(1, sizeof *k);
    if (!k) {
        rf_error_set(err, RF_ENOMEM, "", "out of memory");
        return NULL;
    }
    pthread_mutex_init(&k->mu, NULL);
    rf__kubeconfig_t *c = &k->cfg;
    c->server = s_dup(cfg->server);
    /* the server URL without a trailing slash: paths start with one */
    if (c->server) {
        size_t n = strlen(c->server);
        while (n && c->server[n - 1] == '/')
            c->server[--n] = '\0';
    }
    c->ca_file = s_dup(cfg->ca_file);
    c->ca_data = s_memdup(cfg->ca_data, cfg->ca_len);
    c->ca_len = cfg->ca_len;
    c->insecure = cfg->insecure;
    c->token = s_dup(cfg->token);
    c->token_file = s_dup(cfg->token_file);
    c->cert_file = s_dup(cfg->cert_file);
    c->key_file = s_dup(cfg->key_file);
    c->cert_data = s_memdup(cfg->cert_data, cfg->cert_len);
    c->cert_len = cfg->cert_len;
    c->key_data = s_memdup(cfg->key_data, cfg->key_len);
    c->key_len = cfg->key_len;
    c->namespace_ = s_dup(cfg->namespace_);
    if (c->token_file) {
        k->token = s_read_token(c->token_file);
        if (!k->token) {
            rf_error_set(err, RF_EIO, "", "cannot read the token file %s", c->token_file);
            rf__kube_destroy(&k);
            return NULL;
        }
    } else if (c->token) {
        k->token = strdup(c->token);
    }
    k->token_read = rf__now();
    if (!c->server) {
        rf_error_set(err, RF_ENOMEM, "", "out of memory");
        rf__kube_destroy(&k);
    }
    return k;
}

void rf__kube_destroy(rf__kube_t **kube)
{
    if (!kube || !*kube)
        return;
    rf__kube_t *k = *kube;
    rf__kubeconfig_fini(&k->cfg);
    if (k->token) {
        memset(k->token, 0, strlen(k->token));
        free(k->token);
    }
    pthread_mutex_destroy(&k->mu);
    free(k);
    *kube = NULL;
}

const char *rf__kube_server(const rf__kube_t *kube)
{
    return kube->cfg.server;
}

/* The Authorization header for now ("" when there is no token); bound
 * service-account tokens rotate, so the file is re-read every minute. */
static struct curl_slist *s_headers(rf__kube_t *k, const char *ctype)
{
    struct curl_slist *h = curl_slist_append(NULL, "Accept: application/json");
    if (ctype) {
        char line[128];
        snprintf(line, sizeof line, "Content-Type: %s", ctype);
        h = curl_slist_append(h, line);
    }
    pthread_mutex_lock(&k->mu);
    if (k->cfg.token_file && rf__now() - k->token_read > 60) {
        char *t = s_read_token(k->cfg.token_file);
        if (t) {
            free(k->token);
            k->token = t;
        }
        k->token_read = rf__now();
    }
    if (k->token && *k->token) {
        size_t n = strlen(k->token) + 32;
        char *line = malloc(n);
        if (line) {
            snprintf(line, n, "Authorization: Bearer %s", k->token);
            h = curl_slist_append(h, line);
            memset(line, 0, n);
            free(line);
        }
    }
    pthread_mutex_unlock(&k->mu);
    return h;
}

/* A PEM item from memory (copied by curl) or from a file; type_opt (0: none)
 * says it is PEM where curl would otherwise guess. */
static void s_pem(CURL *h, const void *data, size_t len, CURLoption blob_opt, const char *file, CURLoption file_opt,
                  int type_opt)
{
    if (data) {
        struct curl_blob b = {.data = (void *)data, .len = len, .flags = CURL_BLOB_COPY};
        curl_easy_setopt(h, blob_opt, &b);
        if (type_opt)
            curl_easy_setopt(h, (CURLoption)type_opt, "PEM");
    } else if (file) {
        curl_easy_setopt(h, file_opt, file);
    }
}

static void s_tls(CURL *h, const rf__kubeconfig_t *c)
{
    if (c->insecure) {
        curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
        curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
    }
    s_pem(h, c->ca_data, c->ca_len, CURLOPT_CAINFO_BLOB, c->ca_file, CURLOPT_CAINFO, 0);
    s_pem(h, c->cert_data, c->cert_len, CURLOPT_SSLCERT_BLOB, c->cert_file, CURLOPT_SSLCERT, CURLOPT_SSLCERTTYPE);
    s_pem(h, c->key_data, c->key_len, CURLOPT_SSLKEY_BLOB, c->key_file, CURLOPT_SSLKEY, CURLOPT_SSLKEYTYPE);
}

rf__kconn_t *rf__kconn_new(rf__kube_t *kube)
{
    rf__kconn_t *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->kube = kube;
    c->h = curl_easy_init();
    if (!c->h) {
        free(c);
        return NULL;
    }
    return c;
}

void rf__kconn_destroy(rf__kconn_t **conn)
{
    if (!conn || !*conn)
        return;
    curl_easy_cleanup((*conn)->h);
    free(*conn);
    *conn = NULL;
}

void rf__kresp_fini(rf__kresp_t *resp)
{
    free(resp->body);
    memset(resp, 0, sizeof *resp);
}

/* ---- response collection --------------------------------------------------------------------------------------- */

typedef struct {
    rf__kresp_t *resp;
    size_t cap;
    bool too_big;
} s_sink_t;

static size_t s_write(char *data, size_t size, size_t nmemb, void *ud)
{
    s_sink_t *s = ud;
    size_t n = size * nmemb;
    rf__kresp_t *r = s->resp;
    if (r->len + n > S_MAX_BODY) {
        s->too_big = true;
        return 0;
    }
    if (r->len + n + 1 > s->cap) {
        size_t cap = s->cap ? s->cap : 4096;
        while (cap < r->len + n + 1)
            cap *= 2;
        char *p = realloc(r->body, cap);
        if (!p)
            return 0;
        r->body = p;
        s->cap = cap;
    }
    memcpy(r->body + r->len, data, n);
    r->len += n;
    r->body[r->len] = '\0';
    return n;
}

static size_t s_header(char *data, size_t size, size_t nmemb, void *ud)
{
    rf__kresp_t *r = ud;
    size_t n = size * nmemb;
    if (n > 12 && strncasecmp(data, "Retry-After:", 12) == 0) {
        char buf[32];
        size_t m = n - 12 < sizeof buf - 1 ? n - 12 : sizeof buf - 1;
        memcpy(buf, data + 12, m);
        buf[m] = '\0';
        double v = strtod(buf, NULL);
        r->retry_after = v > 0 ? (v < 60 ? v : 60) : 1; /* capped: a longer wait outlives the health probe */
    }
    return n;
}

static void s_setup(CURL *h, rf__kube_t *k, const char *method, const char *path, const char *body,
                    struct curl_slist *hdrs, long timeout_ms, char *url, size_t url_cap)
{
    snprintf(url, url_cap, "%s%s", k->cfg.server, path);
    curl_easy_reset(h);
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
    curl_easy_setopt(h, CURLOPT_USERAGENT, S_USERAGENT);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, 10000L);
    curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, "");
    if (timeout_ms > 0)
        curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, timeout_ms);
    s_tls(h, &k->cfg);
    if (strcmp(method, "GET") != 0)
        curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
    if (body) {
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE, (long)strlen(body));
    } else if (strcmp(method, "POST") == 0 || strcmp(method, "PUT") == 0 || strcmp(method, "PATCH") == 0) {
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, "");
    }
}

static rf_status s_curl_status(CURLcode cc, const char *method, const char *path, rf_error_t *err)
{
    if (cc == CURLE_OK)
        return RF_OK;
    rf_status s = cc == CURLE_OPERATION_TIMEDOUT ? RF_ETIMEOUT : RF_EIO;
    return rf_error_set(err, s, "", "%s %s: %s", method, path, curl_easy_strerror(cc));
}

rf_status rf__kube_call(rf__kconn_t *conn, const char *method, const char *path, const char *ctype, const char *body,
                        long timeout_ms, rf__kresp_t *resp, rf_error_t *err)
{
    memset(resp, 0, sizeof *resp);
    char url[2048];
    struct curl_slist *hdrs = s_headers(conn->kube, body ? ctype : NULL);
    s_sink_t sink = {.resp = resp};
    s_setup(conn->h, conn->kube, method, path, body, hdrs, timeout_ms, url, sizeof url);
    curl_easy_setopt(conn->h, CURLOPT_WRITEFUNCTION, s_write);
    curl_easy_setopt(conn->h, CURLOPT_WRITEDATA, &sink);
    curl_easy_setopt(conn->h, CURLOPT_HEADERFUNCTION, s_header);
    curl_easy_setopt(conn->h, CURLOPT_HEADERDATA, resp);
    CURLcode cc = curl_easy_perform(conn->h);
    curl_slist_free_all(hdrs);
    long code = 0;
    if (cc == CURLE_OK)
        curl_easy_getinfo(conn->h, CURLINFO_RESPONSE_CODE, &code);
    s_observe(conn->kube, method, code);
    if (cc != CURLE_OK) {
        rf__kresp_fini(resp);
        if (sink.too_big)
            return rf_error_set(err, RF_ELIMIT, "", "%s %s: answer larger than %zu bytes", method, path, S_MAX_BODY);
        return s_curl_status(cc, method, path, err);
    }
    curl_easy_getinfo(conn->h, CURLINFO_RESPONSE_CODE, &resp->status);
    if (!resp->body)
        resp->body = calloc(1, 1);
    return RF_OK;
}

/* ---- streams --------------------------------------------------------------------------------------------------- */

typedef struct {
    char *buf;
    size_t len, cap;
    int (*on_line)(void *, const char *, size_t);
    void *ctx;
    bool ended; /* on_line asked to stop */
    const atomic_int *stop;
    double last_data;
} s_stream_t;

static size_t s_stream_write(char *data, size_t size, size_t nmemb, void *ud)
{
    s_stream_t *s = ud;
    size_t n = size * nmemb;
    s->last_data = rf__now();
    if (s->len + n + 1 > s->cap) {
        size_t cap = s->cap ? s->cap : 65536;
        while (cap < s->len + n + 1)
            cap *= 2;
        if (cap > S_MAX_BODY)
            return 0;
        char *p = realloc(s->buf, cap);
        if (!p)
            return 0;
        s->buf = p;
        s->cap = cap;
    }
    memcpy(s->buf + s->len, data, n);
    s->len += n;
    size_t start = 0;
    for (size_t i = s->len - n; i < s->len; i++)
        if (s->buf[i] == '\n') {
            s->buf[i] = '\0';
            if (i > start && s->on_line(s->ctx, s->buf + start, i - start) != 0) {
                s->ended = true;
                return 0;
            }
            start = i + 1;
        }
    memmove(s->buf, s->buf + start, s->len - start);
    s->len -= start;
    return n;
}

static int s_progress(void *ud, curl_off_t a, curl_off_t b, curl_off_t c, curl_off_t d)
{
    (void)a;
    (void)b;
    (void)c;
    (void)d;
    const s_stream_t *s = ud;
    return s->stop && *s->stop ? 1 : 0;
}

rf_status rf__kube_stream(rf__kconn_t *conn, const char *path, long idle_s,
                          int (*on_line)(void *, const char *, size_t), void *ctx, const atomic_int *stop, long *status,
                          rf_error_t *err)
{
    char url[2048];
    struct curl_slist *hdrs = s_headers(conn->kube, NULL);
    s_stream_t st = {.on_line = on_line, .ctx = ctx, .stop = stop, .last_data = rf__now()};
    s_setup(conn->h, conn->kube, "GET", path, NULL, hdrs, 0, url, sizeof url);
    curl_easy_setopt(conn->h, CURLOPT_ACCEPT_ENCODING, NULL);
    curl_easy_setopt(conn->h, CURLOPT_WRITEFUNCTION, s_stream_write);
    curl_easy_setopt(conn->h, CURLOPT_WRITEDATA, &st);
    curl_easy_setopt(conn->h, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(conn->h, CURLOPT_XFERINFOFUNCTION, s_progress);
    curl_easy_setopt(conn->h, CURLOPT_XFERINFODATA, &st);
    if (idle_s > 0) {
        curl_easy_setopt(conn->h, CURLOPT_LOW_SPEED_LIMIT, 1L);
        curl_easy_setopt(conn->h, CURLOPT_LOW_SPEED_TIME, idle_s);
    }
    CURLcode cc = curl_easy_perform(conn->h);
    curl_slist_free_all(hdrs);
    *status = 0;
    curl_easy_getinfo(conn->h, CURLINFO_RESPONSE_CODE, status);
    s_observe(conn->kube, "WATCH", *status);
    /* an answer without a final newline (an error Status) */
    if (cc == CURLE_OK && st.len > 0 && !st.ended) {
        st.buf[st.len] = '\0';
        on_line(ctx, st.buf, st.len);
    }
    free(st.buf);
    if (st.ended || (stop && *stop))
        return RF_OK;
    if (cc == CURLE_OPERATION_TIMEDOUT)
        return rf_error_set(err, RF_ETIMEOUT, "", "watch %s: nothing for %ld s", path, idle_s);
    return s_curl_status(cc, "GET", path, err);
}

/* ---- parallel requests ----------------------------------------------------------------------------------------- */

void rf__limiter_init(rf__limiter_t *lim, double rate, double burst)
{
    pthread_mutex_init(&lim->mu, NULL);
    lim->rate = rate;
    lim->burst = burst > 1 ? burst : 1;
    lim->tokens = lim->burst;
    lim->last = rf__now();
}

void rf__limiter_fini(rf__limiter_t *lim)
{
    pthread_mutex_destroy(&lim->mu);
}

double rf__limiter_take(rf__limiter_t *lim, double now)
{
    if (!lim || lim->rate <= 0)
        return 0;
    pthread_mutex_lock(&lim->mu);
    if (now > lim->last) { /* threads may pass slightly older clocks: time never runs back */
        lim->tokens += (now - lim->last) * lim->rate;
        lim->last = now;
    }
    if (lim->tokens > lim->burst)
        lim->tokens = lim->burst;
    double wait = 0;
    if (lim->tokens >= 1)
        lim->tokens -= 1;
    else
        wait = (1 - lim->tokens) / lim->rate;
    pthread_mutex_unlock(&lim->mu);
    return wait;
}

typedef struct {
    CURL *h;
    int call; /* index, -1 when idle */
    struct curl_slist *hdrs;
    s_sink_t sink;
    char url[2048];
} s_slot_t;

struct rf__kmulti {
    rf__kube_t *kube;
    CURLM *m;
    s_slot_t *slots;
    int n;
};

rf__kmulti_t *rf__kmulti_new(rf__kube_t *kube, int concurrency)
{
    if (concurrency < 1)
        concurrency = 1;
    rf__kmulti_t *m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
    m->kube = kube;
    m->m = curl_multi_init();
    m->slots = calloc((size_t)concurrency, sizeof *m->slots);
    m->n = concurrency;
    if (!m->m || !m->slots) {
        rf__kmulti_destroy(&m);
        return NULL;
    }
    curl_multi_setopt(m->m, CURLMOPT_PIPELINING, CURLPIPE_MULTIPLEX);
    curl_multi_setopt(m->m, CURLMOPT_MAX_HOST_CONNECTIONS, (long)concurrency);
    curl_multi_setopt(m->m, CURLMOPT_MAXCONNECTS, (long)concurrency);
    for (int i = 0; i < concurrency; i++) {
        m->slots[i].call = -1;
        if (!(m->slots[i].h = curl_easy_init())) {
            rf__kmulti_destroy(&m);
            return NULL;
        }
    }
    return m;
}

void rf__kmulti_destroy(rf__kmulti_t **mp)
{
    if (!mp || !*mp)
        return;
    rf__kmulti_t *m = *mp;
    for (int i = 0; m->slots && i < m->n; i++) {
        if (m->slots[i].call >= 0)
            curl_multi_remove_handle(m->m, m->slots[i].h);
        if (m->slots[i].h)
            curl_easy_cleanup(m->slots[i].h);
        curl_slist_free_all(m->slots[i].hdrs);
    }
    free(m->slots);
    if (m->m)
        curl_multi_cleanup(m->m);
    free(m);
    *mp = NULL;
}

static bool s_atomic_stop(void *ctx)
{
    const atomic_int *stop = ctx;
    return stop && *stop;
}

rf_status rf__kube_batch(rf__kmulti_t *m, rf__kcall_t *calls, int n, rf__limiter_t *lim, long timeout_ms,
                         const atomic_int *stop, rf_error_t *err)
{
    return rf__kube_batch_fn(m, calls, n, lim, timeout_ms, s_atomic_stop, (void *)stop, err);
}

rf_status rf__kube_batch_fn(rf__kmulti_t *m, rf__kcall_t *calls, int n, rf__limiter_t *lim, long timeout_ms,
                            bool (*stop)(void *), void *stop_ctx, rf_error_t *err)
{
    double t0 = rf__now();
    int next = 0, running = 0, done = 0;
    for (int i = 0; i < n; i++) {
        memset(&calls[i].resp, 0, sizeof calls[i].resp);
        calls[i].transport = RF_EBUSY;
        calls[i].t_done = 0;
    }
    /* calls with a delay go after the others are started, in order: they are few (retries) */
    while (done < n) {
        bool stopping = stop && stop(stop_ctx);
        double now = rf__now();
        double wait = 0.05;
        /* start what may start; the stop test is asked again before each one */
        while (!stopping && next < n && running < m->n && !(stopping = stop && stop(stop_ctx))) {
            if (calls[next].delay_s > 0 && now - t0 < calls[next].delay_s) {
                double w = calls[next].delay_s - (now - t0);
                wait = w < wait ? w : wait;
                break;
            }
            double w = rf__limiter_take(lim, now);
            if (w > 0) {
                wait = w < wait ? w : wait;
                break;
            }
            int s = 0;
            while (m->slots[s].call >= 0)
                s++;
            s_slot_t *sl = &m->slots[s];
            rf__kcall_t *c = &calls[next];
            sl->hdrs = s_headers(m->kube, c->body ? c->ctype : NULL);
            sl->sink = (s_sink_t){.resp = &c->resp};
            s_setup(sl->h, m->kube, c->method, c->path, c->body, sl->hdrs, timeout_ms, sl->url, sizeof sl->url);
            curl_easy_setopt(sl->h, CURLOPT_WRITEFUNCTION, s_write);
            curl_easy_setopt(sl->h, CURLOPT_WRITEDATA, &sl->sink);
            curl_easy_setopt(sl->h, CURLOPT_HEADERFUNCTION, s_header);
            curl_easy_setopt(sl->h, CURLOPT_HEADERDATA, &c->resp);
            curl_easy_setopt(sl->h, CURLOPT_PRIVATE, sl);
            sl->call = next;
            curl_multi_add_handle(m->m, sl->h);
            running++;
            next++;
        }
        if (stopping && next < n) {
            done += n - next; /* never started: transport stays RF_EBUSY */
            next = n;
        }
        if (running == 0) {
            if (next >= n)
                break;
            struct timespec ts = {.tv_sec = 0, .tv_nsec = (long)(wait * 1e9)};
            nanosleep(&ts, NULL);
            continue;
        }
        int still = 0;
        curl_multi_perform(m->m, &still);
        CURLMsg *msg;
        int left;
        while ((msg = curl_multi_info_read(m->m, &left))) {
            if (msg->msg != CURLMSG_DONE)
                continue;
            s_slot_t *sl = NULL;
            curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&sl);
            rf__kcall_t *c = &calls[sl->call];
            CURLcode cc = msg->data.result;
            if (cc == CURLE_OK) {
                curl_easy_getinfo(sl->h, CURLINFO_RESPONSE_CODE, &c->resp.status);
                c->transport = RF_OK;
                if (!c->resp.body)
                    c->resp.body = calloc(1, 1);
            } else {
                rf__kresp_fini(&c->resp);
                c->transport = cc == CURLE_OPERATION_TIMEDOUT ? RF_ETIMEOUT : RF_EIO;
            }
            c->t_done = rf__now() - t0;
            s_observe(m->kube, c->method, c->transport == RF_OK ? c->resp.status : 0);
            curl_multi_remove_handle(m->m, sl->h);
            curl_slist_free_all(sl->hdrs);
            sl->hdrs = NULL;
            sl->call = -1;
            running--;
            done++;
        }
        if (running > 0 || next < n) {
            int ms = (int)(wait * 1000);
            curl_multi_poll(m->m, NULL, 0, ms > 0 ? ms : 1, NULL);
        }
    }
    (void)err;
    return RF_OK;
}

/* ---- JSON ------------------------------------------------------------------------------------------------------ */

rf_status rf__kube_json(const char *text, size_t len, rf__arena_t *arena, rf_doc_t **out, rf_error_t *err)
{
    rf_limits_t lim;
    rf_limits_default(&lim);
    lim.max_string = 1 << 20; /* annotations may be long (last-applied-configuration) */
    lim.max_depth = 100;      /* CRD objects nest deeper than problems */
    lim.max_input_bytes = (int64_t)S_MAX_BODY;
    return rf__json_parse(text, len, &lim, arena, out, err);
}
