/* tests/unit/test_probe_nodepatch.c: writing the probe's labels onto the Node
 * (probe/nodepatch.c, rf__node_apply) against a loopback API server that
 * answers from a script and records what it was sent: the empty merge
 * patch that reads the Node, then the one patch with its resourceVersion
 * (the copy handed back is what was sent); nothing sent when nothing would
 * change; a 409 read again and retried up to max_conflicts; 404 and other
 * answers as errors with the server's message (a Status's, unescaped, or
 * the body); a body that is not a Node;
 * and node names refused before any request. */
#include <criterion/criterion.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../support/leak.h"
#include "kube_http.h"
#include "nodepatch.h"

#define S_MAX_REQ 8

typedef struct {
    long status;
    const char *body;
} s_reply_t;

typedef struct {
    int fd;
    atomic_int stop;
    const s_reply_t *script; /* answers in order; past its end: 500 */
    int n_script;
    atomic_int n; /* requests seen */
    char method[S_MAX_REQ][16];
    char path[S_MAX_REQ][128];
    char ctype[S_MAX_REQ][64];
    char body[S_MAX_REQ][1024];
} s_srv_t;

/* Read one HTTP request (headers, then Content-Length bytes of body). */
static void s_handle(s_srv_t *s, int c)
{
    char buf[4096];
    size_t n = 0;
    const char *end = NULL;
    while (n < sizeof buf - 1 && !end) {
        ssize_t got = recv(c, buf + n, sizeof buf - 1 - n, 0);
        if (got <= 0)
            return;
        n += (size_t)got;
        buf[n] = '\0';
        end = strstr(buf, "\r\n\r\n");
    }
    if (!end)
        return;
    const char *cl = strstr(buf, "Content-Length: ");
    size_t want = cl ? (size_t)strtoul(cl + 16, NULL, 10) : 0;
    size_t head = (size_t)(end + 4 - buf);
    while (n < head + want && n < sizeof buf - 1) {
        ssize_t got = recv(c, buf + n, sizeof buf - 1 - n, 0);
        if (got <= 0)
            break;
        n += (size_t)got;
    }
    buf[n] = '\0';
    int i = s->n;
    if (i < S_MAX_REQ) {
        sscanf(buf, "%15s %127s", s->method[i], s->path[i]);
        const char *ct = strstr(buf, "Content-Type: ");
        if (ct)
            sscanf(ct + 14, "%63[^\r]", s->ctype[i]);
        snprintf(s->body[i], sizeof s->body[i], "%s", buf + head);
    }
    s->n++;
    s_reply_t r = i < s->n_script ? s->script[i] : (s_reply_t){500, "{\"message\":\"no more script\"}"};
    char out[4096];
    int m = snprintf(out, sizeof out,
                     "HTTP/1.1 %ld X\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n"
                     "Connection: close\r\n\r\n%s",
                     r.status, strlen(r.body), r.body);
    send(c, out, (size_t)m, MSG_NOSIGNAL);
}

static void *s_serve(void *arg)
{
    s_srv_t *s = arg;
    while (!s->stop) {
        int c = accept(s->fd, NULL, NULL);
        if (c < 0)
            continue;
        s_handle(s, c);
        close(c);
    }
    return NULL;
}

typedef struct {
    s_srv_t srv;
    pthread_t t;
    rf__kube_t *kube;
} s_env_t;

static void s_start(s_env_t *e, const s_reply_t *script, int n_script)
{
    memset(e, 0, sizeof *e);
    e->srv.script = script;
    e->srv.n_script = n_script;
    e->srv.fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sin = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof sin;
    cr_assert_eq(bind(e->srv.fd, (struct sockaddr *)&sin, sizeof sin), 0);
    listen(e->srv.fd, 16);
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
}

static void s_stop(s_env_t *e)
{
    rf__kube_destroy(&e->kube);
    e->srv.stop = 1;
    pthread_join(e->t, NULL);
    close(e->srv.fd);
    rf__kube_global_fini();
}

#define TIER0 "fabric.topograph.run/tier-0"

/* Want tier-0 = leaf1, with the default configuration. */
static void s_want(rf_probe_labels_t *want, rf_probe_label_cfg_t *cfg)
{
    rf__label_cfg_defaults(cfg);
    memset(want, 0, sizeof *want);
    want->n = 1;
    snprintf(want->l[0].key, sizeof want->l[0].key, "%s", TIER0);
    want->l[0].action = RF_LABEL_SET;
    snprintf(want->l[0].value, sizeof want->l[0].value, "leaf1");
}

static const rf_probe_patch_opts_t s_opts = {.timeout_ms = 5000, .max_conflicts = 2};

#define NODE(rv, labels) "{\"kind\":\"Node\",\"metadata\":{\"name\":\"n1\",\"resourceVersion\":\"" rv "\"" labels "}}"

Test(probe_nodepatch, reads_with_an_empty_patch_then_writes_one_patch)
{
    static const s_reply_t script[] = {{200, NODE("5", "")}, {200, NODE("6", "")}};
    s_env_t e;
    s_start(&e, script, 2);
    rf_probe_labels_t want;
    rf_probe_label_cfg_t cfg;
    s_want(&want, &cfg);
    bool patched = false;
    char *patch = NULL;
    rf_error_t err;
    cr_assert_eq(rf__node_apply(e.kube, "n1", &want, &cfg, &s_opts, &patched, &patch, &err), RF_OK, "%s", err.message);
    cr_assert(patched);
    cr_assert_eq(e.srv.n, 2);
    for (int i = 0; i < 2; i++) {
        cr_assert_str_eq(e.srv.method[i], "PATCH");
        cr_assert_str_eq(e.srv.path[i], "/api/v1/nodes/n1");
        cr_assert_str_eq(e.srv.ctype[i], "application/merge-patch+json");
    }
    cr_assert_str_eq(e.srv.body[0], "{}");
    cr_assert_not_null(patch);
    cr_assert_str_eq(e.srv.body[1], patch); /* the copy is what was sent */
    cr_assert(strstr(patch, "\"resourceVersion\":\"5\""), "%s", patch);
    cr_assert(strstr(patch, "\"" TIER0 "\":\"leaf1\""), "%s", patch);
    free(patch);
    s_stop(&e);
    rf_test_no_leaks();
}

Test(probe_nodepatch, nothing_to_change_sends_nothing_more)
{
    static const s_reply_t script[] = {
        {200, NODE("5", ",\"labels\":{\"" TIER0 "\":\"leaf1\"},\"annotations\":{\"rackfit.io/probe-labels\":\"" TIER0
                        "\"}")}};
    s_env_t e;
    s_start(&e, script, 1);
    rf_probe_labels_t want;
    rf_probe_label_cfg_t cfg;
    s_want(&want, &cfg);
    bool patched = true;
    char *patch = (char *)&patch;
    rf_error_t err;
    cr_assert_eq(rf__node_apply(e.kube, "n1", &want, &cfg, &s_opts, &patched, &patch, &err), RF_OK, "%s", err.message);
    cr_assert_not(patched);
    cr_assert_null(patch);
    cr_assert_eq(e.srv.n, 1);
    s_stop(&e);
    rf_test_no_leaks();
}

Test(probe_nodepatch, a_conflict_reads_the_node_again)
{
    static const s_reply_t script[] = {{200, NODE("5", "")},
                                       {409, "{\"kind\":\"Status\",\"message\":\"the object has been modified\"}"},
                                       {200, NODE("6", "")},
                                       {200, NODE("7", "")}};
    s_env_t e;
    s_start(&e, script, 4);
    rf_probe_labels_t want;
    rf_probe_label_cfg_t cfg;
    s_want(&want, &cfg);
    bool patched = false;
    rf_error_t err;
    cr_assert_eq(rf__node_apply(e.kube, "n1", &want, &cfg, &s_opts, &patched, NULL, &err), RF_OK, "%s", err.message);
    cr_assert(patched);
    cr_assert_eq(e.srv.n, 4);
    cr_assert_str_eq(e.srv.body[2], "{}");
    cr_assert(strstr(e.srv.body[3], "\"resourceVersion\":\"6\""), "%s", e.srv.body[3]);
    s_stop(&e);

    /* no retries left: the conflict is the error, with the server's message */
    s_start(&e, script, 4);
    rf_probe_patch_opts_t once = {.timeout_ms = 5000, .max_conflicts = 0};
    cr_assert_eq(rf__node_apply(e.kube, "n1", &want, &cfg, &once, &patched, NULL, &err), RF_EIO);
    cr_assert_not(patched);
    cr_assert_str_eq(err.path, "node");
    cr_assert_str_eq(err.message, "patching node n1 answered HTTP 409: the object has been modified");
    cr_assert_eq(e.srv.n, 2);
    s_stop(&e);
    rf_test_no_leaks();
}

Test(probe_nodepatch, answers_that_are_errors)
{
    static const s_reply_t missing[] = {{404, "{\"kind\":\"Status\",\"message\":\"nodes \\\"n1\\\" not found\"}"}};
    static const s_reply_t forbidden[] = {{403, "forbidden: no patch on nodes"}};
    static const s_reply_t not_a_node[] = {{200, "{\"kind\":\"Status\"}"}};
    rf_probe_labels_t want;
    rf_probe_label_cfg_t cfg;
    s_want(&want, &cfg);
    bool patched = true;
    rf_error_t err;
    s_env_t e;

    s_start(&e, missing, 1);
    cr_assert_eq(rf__node_apply(e.kube, "n1", &want, &cfg, &s_opts, &patched, NULL, &err), RF_ENOTFOUND);
    cr_assert_not(patched);
    cr_assert_str_eq(err.message, "reading node n1 (an empty patch) answered HTTP 404: nodes \"n1\" not found");
    s_stop(&e);

    s_start(&e, forbidden, 1);
    cr_assert_eq(rf__node_apply(e.kube, "n1", &want, &cfg, &s_opts, &patched, NULL, &err), RF_EIO);
    cr_assert_str_eq(err.message, "reading node n1 (an empty patch) answered HTTP 403: forbidden: no patch on nodes");
    s_stop(&e);

    s_start(&e, not_a_node, 1);
    cr_assert_eq(rf__node_apply(e.kube, "n1", &want, &cfg, &s_opts, &patched, NULL, &err), RF_EPARSE);
    cr_assert_str_eq(err.path, "metadata");
    cr_assert_eq(e.srv.n, 1);
    s_stop(&e);
    rf_test_no_leaks();
}

Test(probe_nodepatch, node_names_refused_before_any_request)
{
    s_env_t e;
    s_start(&e, NULL, 0);
    rf_probe_labels_t want;
    rf_probe_label_cfg_t cfg;
    s_want(&want, &cfg);
    bool patched = true;
    rf_error_t err;
    cr_assert_eq(rf__node_apply(e.kube, "Node-1", &want, &cfg, &s_opts, &patched, NULL, &err), RF_EINVAL);
    cr_assert_not(patched);
    cr_assert_str_eq(err.message, "\"Node-1\" is not a Kubernetes node name");
    cr_assert_eq(rf__node_apply(e.kube, "n1/../x", &want, &cfg, &s_opts, &patched, NULL, &err), RF_EINVAL);
    cr_assert_eq(rf__node_apply(e.kube, "", &want, &cfg, &s_opts, &patched, NULL, &err), RF_EINVAL);
    cr_assert_str_eq(err.message, "the node name must have 1 to 253 characters");
    char name[256];
    memset(name, 'a', 254);
    name[254] = '\0';
    cr_assert_eq(rf__node_apply(e.kube, name, &want, &cfg, &s_opts, &patched, NULL, &err), RF_EINVAL);
    cr_assert_str_eq(err.path, "node");
    cr_assert_eq(e.srv.n, 0);
    s_stop(&e);
    rf_test_no_leaks();
}
