/* service/client.c: the C client for rackfitd (include/rackfit/client.h),
 * one of the two files that include <zmq.h>.
 *
 * Invariants: the REQ socket is relaxed and correlated (ZMQ_REQ_RELAXED,
 * ZMQ_REQ_CORRELATE), so a request that timed out never leaves the client
 * stuck and a late reply to it is dropped by ZeroMQ; every reply is decoded
 * by the codec's stages (service/codec.h) before it is believed; secret
 * keys are wiped from our memory once handed to ZeroMQ. */
#include "rackfit/client.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

#include "arena.h"
#include "codec.h"
#include "doc.h"
#include "json.h"
#include "rackfit/problem.h"

struct rf_client {
    void *ctx;
    void *sock;
    int timeout_ms;
    int pipelined;
};

void rf_client_opts_default(rf_client_opts_t *opts)
{
    memset(opts, 0, sizeof *opts);
    opts->timeout_ms = 60000;
}

void rf_client_destroy(rf_client_t **client)
{
    if (!client || !*client)
        return;
    rf_client_t *c = *client;
    if (c->sock)
        zmq_close(c->sock);
    if (c->ctx)
        zmq_ctx_term(c->ctx);
    free(c);
    *client = NULL;
}

rf_client_t *rf_client_new(const char *endpoint, const rf_client_opts_t *opts, rf_error_t *err)
{
    rf_client_opts_t def;
    if (!opts) {
        rf_client_opts_default(&def);
        opts = &def;
    }
    rf_client_t *c = calloc(1, sizeof *c);
    if (!c) {
        rf_error_set(err, RF_ENOMEM, "", "out of memory");
        return NULL;
    }
    c->timeout_ms = opts->timeout_ms > 0 ? opts->timeout_ms : 60000;
    c->ctx = zmq_ctx_new();
    c->pipelined = opts->pipelined;
    c->sock = c->ctx ? zmq_socket(c->ctx, c->pipelined ? ZMQ_DEALER : ZMQ_REQ) : NULL;
    if (!c->sock) {
        rf_error_set(err, RF_EIO, "", "cannot create a ZeroMQ socket: %s", zmq_strerror(errno));
        rf_client_destroy(&c);
        return NULL;
    }
    int one = 1, linger = 0, hwm = 0;
    if (!c->pipelined) {
        zmq_setsockopt(c->sock, ZMQ_REQ_RELAXED, &one, sizeof one);
        zmq_setsockopt(c->sock, ZMQ_REQ_CORRELATE, &one, sizeof one);
    } else {
        zmq_setsockopt(c->sock, ZMQ_SNDHWM, &hwm, sizeof hwm);
        zmq_setsockopt(c->sock, ZMQ_RCVHWM, &hwm, sizeof hwm);
    }
    zmq_setsockopt(c->sock, ZMQ_LINGER, &linger, sizeof linger);
    zmq_setsockopt(c->sock, ZMQ_RCVTIMEO, &c->timeout_ms, sizeof c->timeout_ms);
    zmq_setsockopt(c->sock, ZMQ_SNDTIMEO, &c->timeout_ms, sizeof c->timeout_ms);
    if (opts->server_public_key) {
        char pub[41], sec[41];
        int rc = 0;
        /* Exactly 40 Z85 characters each: a longer one would be cut short
         * (snprintf, or the 40 bytes setsockopt reads) and a shorter one
         * read past its end. */
        if (strlen(opts->server_public_key) != 40 || (opts->public_key && strlen(opts->public_key) != 40) ||
            (opts->secret_key && strlen(opts->secret_key) != 40) || !opts->public_key != !opts->secret_key) {
            rf_error_set(err, RF_EINVAL, "",
                         "CURVE keys refused: each is 40 Z85 characters, and the client's public and secret key "
                         "come together");
            rf_client_destroy(&c);
            return NULL;
        }
        if (opts->public_key && opts->secret_key) {
            snprintf(pub, sizeof pub, "%s", opts->public_key);
            snprintf(sec, sizeof sec, "%s", opts->secret_key);
        } else {
            rc = zmq_curve_keypair(pub, sec);
        }
        if (rc != 0 || zmq_setsockopt(c->sock, ZMQ_CURVE_SERVERKEY, opts->server_public_key, 40) != 0 ||
            zmq_setsockopt(c->sock, ZMQ_CURVE_PUBLICKEY, pub, 40) != 0 ||
            zmq_setsockopt(c->sock, ZMQ_CURVE_SECRETKEY, sec, 40) != 0) {
            memset(sec, 0, sizeof sec);
            rf_error_set(err, RF_EINVAL, "", "CURVE keys refused (each is 40 Z85 characters): %s", zmq_strerror(errno));
            rf_client_destroy(&c);
            return NULL;
        }
        memset(sec, 0, sizeof sec);
    }
    if (zmq_connect(c->sock, endpoint) != 0) {
        rf_error_set(err, RF_EINVAL, "", "cannot connect to %.200s: %s", endpoint, zmq_strerror(errno));
        rf_client_destroy(&c);
        return NULL;
    }
    return c;
}

/* The received message's bytes copied into *reply (malloc'ed, the caller's), and the message closed. */
static rf_status s_take(zmq_msg_t *m, void **reply, size_t *reply_len, rf_error_t *err)
{
    size_t n = zmq_msg_size(m);
    void *buf = malloc(n ? n : 1);
    if (!buf) {
        zmq_msg_close(m);
        return rf_error_set(err, RF_ENOMEM, "", "out of memory");
    }
    memcpy(buf, zmq_msg_data(m), n);
    zmq_msg_close(m);
    *reply = buf;
    *reply_len = n;
    return RF_OK;
}

rf_status rf_client_request(rf_client_t *c, const void *msg, size_t len, void **reply, size_t *reply_len,
                            rf_error_t *err)
{
    *reply = NULL;
    *reply_len = 0;
    /* A DEALER has other replies in flight: the next one need not be ours. */
    if (c->pipelined)
        return rf_error_set(err, RF_EINVAL, "", "rf_client_request needs a client that is not pipelined");
    if (zmq_send(c->sock, msg, len, 0) < 0)
        return rf_error_set(err, errno == EAGAIN ? RF_ETIMEOUT : RF_EIO, "", "send: %s",
                            errno == EAGAIN ? "timed out" : zmq_strerror(errno));
    zmq_msg_t m;
    zmq_msg_init(&m);
    if (zmq_msg_recv(&m, c->sock, 0) < 0) {
        int e = errno;
        zmq_msg_close(&m);
        return rf_error_set(err, e == EAGAIN ? RF_ETIMEOUT : RF_EIO, "", "no reply: %s",
                            e == EAGAIN ? "timed out" : zmq_strerror(e));
    }
    return s_take(&m, reply, reply_len, err);
}

rf_status rf_client_send(rf_client_t *c, const void *msg, size_t len, rf_error_t *err)
{
    if (!c->pipelined)
        return rf_error_set(err, RF_EINVAL, "", "rf_client_send needs a pipelined client");
    if (zmq_send(c->sock, "", 0, ZMQ_SNDMORE) < 0 || zmq_send(c->sock, msg, len, 0) < 0)
        return rf_error_set(err, RF_EIO, "", "send: %s", zmq_strerror(errno));
    return RF_OK;
}

rf_status rf_client_recv(rf_client_t *c, int timeout_ms, void **reply, size_t *reply_len, rf_error_t *err)
{
    *reply = NULL;
    *reply_len = 0;
    if (!c->pipelined)
        return rf_error_set(err, RF_EINVAL, "", "rf_client_recv needs a pipelined client");
    zmq_pollitem_t item = {c->sock, 0, ZMQ_POLLIN, 0};
    int rc = zmq_poll(&item, 1, timeout_ms);
    if (rc < 0)
        return rf_error_set(err, RF_EIO, "", "poll: %s", zmq_strerror(errno));
    if (rc == 0)
        return rf_error_set(err, RF_ETIMEOUT, "", "no reply yet");
    /* [""][reply] */
    zmq_msg_t m;
    for (;;) {
        zmq_msg_init(&m);
        if (zmq_msg_recv(&m, c->sock, 0) < 0) {
            zmq_msg_close(&m);
            return rf_error_set(err, RF_EIO, "", "recv: %s", zmq_strerror(errno));
        }
        if (!zmq_msg_more(&m))
            break;
        zmq_msg_close(&m);
    }
    return s_take(&m, reply, reply_len, err);
}

/* ------------------------------------------------------------ JSON output */

typedef struct {
    char *p;
    size_t len, cap;
    bool oom;
} s_buf_t;

static void s_put(s_buf_t *b, const char *s, size_t n)
{
    if (b->oom)
        return;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *p = realloc(b->p, cap);
        if (!p) {
            b->oom = true;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

static void s_puts(s_buf_t *b, const char *s)
{
    s_put(b, s, strlen(s));
}

static void s_json_str(s_buf_t *b, const char *s, size_t n)
{
    s_put(b, "\"", 1);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        char esc[8];
        if (c == '"' || c == '\\') {
            esc[0] = '\\';
            esc[1] = (char)c;
            s_put(b, esc, 2);
        } else if (c < 0x20) {
            snprintf(esc, sizeof esc, "\\u%04x", c);
            s_put(b, esc, 6);
        } else {
            s_put(b, (const char *)&s[i], 1);
        }
    }
    s_put(b, "\"", 1);
}

static void s_json(s_buf_t *b, const rf_doc_t *d, int depth, const char *const *skip)
{
    char tmp[40];
    switch (d->type) {
    case RF_DOC_NULL:
        s_puts(b, "null");
        return;
    case RF_DOC_BOOL:
        s_puts(b, d->u.b ? "true" : "false");
        return;
    case RF_DOC_INT:
        snprintf(tmp, sizeof tmp, "%lld", (long long)d->u.i);
        s_puts(b, tmp);
        return;
    case RF_DOC_FLOAT: {
        if (!isfinite(d->u.f)) {
            s_puts(b, "null");
            return;
        }
        for (int prec = 15; prec <= 17; prec++) {
            snprintf(tmp, sizeof tmp, "%.*g", prec, d->u.f);
            if (strtod(tmp, NULL) == d->u.f)
                break;
        }
        if (!strpbrk(tmp, ".eEn"))
            strcat(tmp, ".0");
        s_puts(b, tmp);
        return;
    }
    case RF_DOC_STR:
        s_json_str(b, d->u.s, d->len);
        return;
    case RF_DOC_ARRAY:
        s_puts(b, "[");
        for (uint32_t i = 0; i < d->len; i++) {
            if (i)
                s_puts(b, depth == 1 ? ",\n" : ",");
            s_json(b, &d->u.items[i], depth + 1, NULL);
        }
        s_puts(b, "]");
        return;
    case RF_DOC_MAP: {
        s_puts(b, "{");
        bool first = true;
        for (uint32_t i = 0; i < d->len; i++) {
            bool skipped = false;
            for (const char *const *k = skip; k && *k && !skipped; k++)
                skipped = strcmp(*k, d->u.pairs[i].key) == 0;
            if (skipped)
                continue;
            if (!first)
                s_puts(b, depth == 0 ? ",\n" : ",");
            first = false;
            s_json_str(b, d->u.pairs[i].key, d->u.pairs[i].key_len);
            s_puts(b, ":");
            s_json(b, &d->u.pairs[i].value, depth + 1, NULL);
        }
        s_puts(b, "}");
        return;
    }
    }
}

/* The rf_status of a wire code string. */
static rf_status s_status_of(const char *code)
{
    for (int s = 0; s >= -64; s--)
        if (strcmp(rf_status_code((rf_status)s), code) == 0)
            return (rf_status)s;
    return RF_EINTERNAL;
}

rf_status rf_client_solve_json(rf_client_t *c, const char *json, size_t len, char **answer, size_t *answer_len,
                               rf_error_t *err)
{
    *answer = NULL;
    if (answer_len)
        *answer_len = 0;
    rf_limits_t lim;
    rf_limits_default(&lim);
    rf__mp_limits_t mp;
    rf__mp_limits_from(&mp, &lim);
    mp.max_string = 0;
    rf__arena_t *arena = rf__arena_new(0);
    rf__mp_writer_t *w = rf__mp_writer_new();
    rf_doc_t *doc = NULL, *rep = NULL;
    void *reply = NULL;
    size_t reply_len = 0;
    s_buf_t out = {0};
    rf_status rc;
    if (!arena || !w) {
        rc = rf_error_set(err, RF_ENOMEM, "", "out of memory");
        goto done;
    }
    if ((rc = rf__json_parse(json, len, &lim, arena, &doc, err)) != RF_OK)
        goto done;
    rf__mp_doc(w, doc);
    size_t n = 0;
    const void *bytes = rf__mp_writer_data(w, &n);
    if (!rf__mp_writer_ok(w)) {
        rc = rf_error_set(err, RF_ENOMEM, "", "out of memory");
        goto done;
    }
    if ((rc = rf_client_request(c, bytes, n, &reply, &reply_len, err)) != RF_OK)
        goto done;
    mp.max_bytes = 0;
    mp.max_depth = RF__MP_MAX_DEPTH;
    if ((rc = rf__mp_decode(reply, reply_len, &mp, arena, &rep, err)) != RF_OK)
        goto done;
    const rf_doc_t *e = rf__doc_get(rep, "error");
    if (e && e->type == RF_DOC_MAP) {
        const rf_doc_t *code = rf__doc_get(e, "code"), *msg = rf__doc_get(e, "message"), *path = rf__doc_get(e, "path");
        rc = s_status_of(code && code->type == RF_DOC_STR ? code->u.s : "internal");
        rf_error_set(err, rc, path && path->type == RF_DOC_STR ? path->u.s : "", "%s",
                     msg && msg->type == RF_DOC_STR ? msg->u.s : rf_status_message(rc));
        goto done;
    }
    static const char *const skip[] = {"id", "cluster", NULL};
    s_json(&out, rep, 0, skip);
    s_puts(&out, "\n");
    if (out.oom) {
        rc = rf_error_set(err, RF_ENOMEM, "", "out of memory");
        goto done;
    }
    *answer = out.p;
    out.p = NULL;
    if (answer_len)
        *answer_len = out.len;
done:
    free(out.p);
    free(reply);
    rf__mp_writer_destroy(&w);
    rf__arena_destroy(&arena);
    return rc;
}
