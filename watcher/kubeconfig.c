/* watcher/kubeconfig.c: kubeconfig and in-cluster credentials, the
 * watcher's config file (see kubeconfig.h). The only file that includes
 * <yaml.h>: the document is loaded with libyaml's document API and walked
 * here; nothing from the yaml_document_t outlives these functions. */
#include "kubeconfig.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "jw.h"

#define S_SA_DIR "/var/run/secrets/kubernetes.io/serviceaccount"

/* ---- base64 ---------------------------------------------------------------------------------------------------- */

rf_status rf__base64_decode(const char *in, char **out, size_t *len)
{
    size_t n = strlen(in);
    char *buf = malloc(n / 4 * 3 + 4);
    if (!buf)
        return RF_ENOMEM;
    uint32_t acc = 0;
    int bits = 0;
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        char c = in[i];
        int v;
        if (c >= 'A' && c <= 'Z')
            v = c - 'A';
        else if (c >= 'a' && c <= 'z')
            v = c - 'a' + 26;
        else if (c >= '0' && c <= '9')
            v = c - '0' + 52;
        else if (c == '+' || c == '-')
            v = 62;
        else if (c == '/' || c == '_')
            v = 63;
        else if (c == '=' || c == ' ' || c == '\n' || c == '\r' || c == '\t')
            continue;
        else {
            free(buf);
            return RF_EPARSE;
        }
        acc = (acc << 6) | (uint32_t)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            buf[o++] = (char)((acc >> bits) & 0xFF);
        }
    }
    buf[o] = '\0';
    *out = buf;
    *len = o;
    return RF_OK;
}

/* ---- the YAML document ----------------------------------------------------------------------------------------- */

static rf_status s_load(const char *path, yaml_document_t *doc, rf_error_t *err)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return rf_error_set(err, RF_EIO, "", "%s: %s", path, strerror(errno));
    yaml_parser_t parser;
    if (!yaml_parser_initialize(&parser)) {
        fclose(f);
        return rf_error_set(err, RF_ENOMEM, "", "out of memory");
    }
    yaml_parser_set_input_file(&parser, f);
    rf_status rc = RF_OK;
    if (!yaml_parser_load(&parser, doc))
        rc = rf_error_set(err, RF_EPARSE, "", "%s: line %zu: %s", path, parser.problem_mark.line + 1,
                          parser.problem ? parser.problem : "not valid YAML");
    else if (!yaml_document_get_root_node(doc)) {
        yaml_document_delete(doc);
        rc = rf_error_set(err, RF_EPARSE, "", "%s: empty document", path);
    }
    yaml_parser_delete(&parser);
    fclose(f);
    return rc;
}

static const char *s_scalar(yaml_node_t *n)
{
    return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

static yaml_node_t *s_get(yaml_document_t *doc, yaml_node_t *map, const char *key)
{
    if (!map || map->type != YAML_MAPPING_NODE)
        return NULL;
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
        const char *k = s_scalar(yaml_document_get_node(doc, p->key));
        if (k && strcmp(k, key) == 0)
            return yaml_document_get_node(doc, p->value);
    }
    return NULL;
}

/* In a list of {name: N, <what>: {...}}, the <what> map of entry `name`. */
static yaml_node_t *s_named(yaml_document_t *doc, yaml_node_t *root, const char *list, const char *what,
                            const char *name)
{
    yaml_node_t *seq = s_get(doc, root, list);
    if (!seq || seq->type != YAML_SEQUENCE_NODE || !name)
        return NULL;
    for (yaml_node_item_t *it = seq->data.sequence.items.start; it < seq->data.sequence.items.top; it++) {
        yaml_node_t *e = yaml_document_get_node(doc, *it);
        const char *n = s_scalar(s_get(doc, e, "name"));
        if (n && strcmp(n, name) == 0)
            return s_get(doc, e, what);
    }
    return NULL;
}

static char *s_path(const char *base_dir, const char *p)
{
    if (!p)
        return NULL;
    if (p[0] == '/' || !base_dir)
        return strdup(p);
    rf__jw_t w;
    rf__jw_init(&w);
    rf__jw_printf(&w, "%s/%s", base_dir, p);
    return rf__jw_take(&w, NULL);
}

void rf__kubeconfig_fini(rf__kubeconfig_t *c)
{
    free(c->server);
    free(c->ca_file);
    free(c->ca_data);
    free(c->tls_server_name);
    if (c->token) {
        memset(c->token, 0, strlen(c->token));
        free(c->token);
    }
    free(c->token_file);
    free(c->cert_file);
    free(c->key_file);
    free(c->cert_data);
    if (c->key_data) {
        memset(c->key_data, 0, c->key_len);
        free(c->key_data);
    }
    free(c->namespace_);
    memset(c, 0, sizeof *c);
}

static rf_status s_b64(const char *field, const char *text, char **out, size_t *len, rf_error_t *err)
{
    rf_status s = rf__base64_decode(text, out, len);
    if (s != RF_OK)
        return rf_error_set(err, s, field, "not valid base64");
    return RF_OK;
}

rf_status rf__kubeconfig_load(const char *path, const char *context, rf__kubeconfig_t *out, rf_error_t *err)
{
    memset(out, 0, sizeof *out);
    yaml_document_t doc;
    RF_CALL(s_load(path, &doc, err));
    rf_status rc = RF_OK;
    char *dir = strdup(path);
    if (!dir) {
        yaml_document_delete(&doc);
        return rf_error_set(err, RF_ENOMEM, "", "out of memory");
    }
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = '\0';
    else
        strcpy(dir, ".");
    yaml_node_t *root = yaml_document_get_root_node(&doc);
    const char *ctx_name = context ? context : s_scalar(s_get(&doc, root, "current-context"));
    yaml_node_t *ctx = s_named(&doc, root, "contexts", "context", ctx_name);
    if (!ctx) {
        rc = rf_error_set(err, RF_ESCHEMA, "contexts", "%s: no context named `%s`", path,
                          ctx_name ? ctx_name : "(no current-context)");
        goto done;
    }
    const char *cluster_name = s_scalar(s_get(&doc, ctx, "cluster"));
    const char *user_name = s_scalar(s_get(&doc, ctx, "user"));
    const char *ns = s_scalar(s_get(&doc, ctx, "namespace"));
    yaml_node_t *cluster = s_named(&doc, root, "clusters", "cluster", cluster_name);
    yaml_node_t *user = s_named(&doc, root, "users", "user", user_name);
    if (!cluster) {
        rc = rf_error_set(err, RF_ESCHEMA, "clusters", "%s: no cluster named `%s`", path,
                          cluster_name ? cluster_name : "");
        goto done;
    }
    const char *server = s_scalar(s_get(&doc, cluster, "server"));
    if (!server) {
        rc = rf_error_set(err, RF_ESCHEMA, "clusters[].cluster.server", "%s: missing", path);
        goto done;
    }
    out->server = strdup(server);
    out->namespace_ = ns ? strdup(ns) : NULL;
    const char *v;
    if ((v = s_scalar(s_get(&doc, cluster, "certificate-authority-data"))) &&
        (rc = s_b64("certificate-authority-data", v, &out->ca_data, &out->ca_len, err)) != RF_OK)
        goto done;
    out->ca_file = s_path(dir, s_scalar(s_get(&doc, cluster, "certificate-authority")));
    v = s_scalar(s_get(&doc, cluster, "insecure-skip-tls-verify"));
    out->insecure = v && strcmp(v, "true") == 0;
    if ((v = s_scalar(s_get(&doc, cluster, "tls-server-name"))))
        out->tls_server_name = strdup(v);
    if (s_get(&doc, cluster, "proxy-url")) {
        rc = rf_error_set(err, RF_EUNSUPPORTED, "clusters[].cluster.proxy-url", "%s: proxies are not supported", path);
        goto done;
    }
    if (user) {
        static const char *const refused[] = {"exec", "auth-provider", "username", "password", "as", "as-groups", NULL};
        for (int i = 0; refused[i]; i++)
            if (s_get(&doc, user, refused[i])) {
                rc = rf_error_set(err, RF_EUNSUPPORTED, refused[i],
                                  "%s: user `%s` uses `%s`, which rackfit-watch does not support (supported: "
                                  "token, tokenFile, client certificates)",
                                  path, user_name, refused[i]);
                goto done;
            }
        if ((v = s_scalar(s_get(&doc, user, "token"))))
            out->token = strdup(v);
        out->token_file = s_path(dir, s_scalar(s_get(&doc, user, "tokenFile")));
        out->cert_file = s_path(dir, s_scalar(s_get(&doc, user, "client-certificate")));
        out->key_file = s_path(dir, s_scalar(s_get(&doc, user, "client-key")));
        if ((v = s_scalar(s_get(&doc, user, "client-certificate-data"))) &&
            (rc = s_b64("client-certificate-data", v, &out->cert_data, &out->cert_len, err)) != RF_OK)
            goto done;
        if ((v = s_scalar(s_get(&doc, user, "client-key-data"))) &&
            (rc = s_b64("client-key-data", v, &out->key_data, &out->key_len, err)) != RF_OK)
            goto done;
    }
    if (!out->server) {
        rc = rf_error_set(err, RF_ENOMEM, "", "out of memory");
        goto done;
    }
done:
    if (rc != RF_OK)
        rf__kubeconfig_fini(out);
    free(dir);
    yaml_document_delete(&doc);
    return rc;
}

static char *s_read_small(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = malloc(1 << 20);
    size_t n = buf ? fread(buf, 1, (1 << 20) - 1, f) : 0;
    fclose(f);
    if (!buf)
        return NULL;
    buf[n] = '\0';
    while (n && (buf[n - 1] == '\n' || buf[n - 1] == '\r' || buf[n - 1] == ' '))
        buf[--n] = '\0';
    if (len)
        *len = n;
    return buf;
}

rf_status rf__kubeconfig_in_cluster(const char *sa_dir, rf__kubeconfig_t *out, rf_error_t *err)
{
    memset(out, 0, sizeof *out);
    const char *host = getenv("KUBERNETES_SERVICE_HOST"), *port = getenv("KUBERNETES_SERVICE_PORT");
    if (!host || !*host || !port || !*port)
        return rf_error_set(err, RF_EINVAL, "", "--in-cluster: KUBERNETES_SERVICE_HOST/PORT are not set");
    const char *dir = sa_dir ? sa_dir : S_SA_DIR;
    rf__jw_t w;
    rf__jw_init(&w);
    if (strchr(host, ':'))
        rf__jw_printf(&w, "https://[%s]:%s", host, port);
    else
        rf__jw_printf(&w, "https://%s:%s", host, port);
    out->server = rf__jw_take(&w, NULL);
    rf__jw_init(&w);
    rf__jw_printf(&w, "%s/token", dir);
    out->token_file = rf__jw_take(&w, NULL);
    rf__jw_init(&w);
    rf__jw_printf(&w, "%s/ca.crt", dir);
    out->ca_file = rf__jw_take(&w, NULL);
    rf__jw_init(&w);
    rf__jw_printf(&w, "%s/namespace", dir);
    char *nsf = rf__jw_take(&w, NULL);
    out->namespace_ = nsf ? s_read_small(nsf, NULL) : NULL;
    free(nsf);
    if (!out->server || !out->token_file || !out->ca_file) {
        rf__kubeconfig_fini(out);
        return rf_error_set(err, RF_ENOMEM, "", "out of memory");
    }
    out->token = s_read_small(out->token_file, NULL);
    if (!out->token) {
        rf_status s = rf_error_set(err, RF_EIO, "", "--in-cluster: cannot read %s", out->token_file);
        rf__kubeconfig_fini(out);
        return s;
    }
    return RF_OK;
}

/* ---- the watcher's config file --------------------------------------------------------------------------------- */

rf_status rf__yaml_flat_load(const char *path, rf_status (*set)(void *, const char *, const char *, rf_error_t *),
                             void *ctx, rf_error_t *err)
{
    yaml_document_t doc;
    RF_CALL(s_load(path, &doc, err));
    rf_status rc = RF_OK;
    yaml_node_t *root = yaml_document_get_root_node(&doc);
    if (root->type != YAML_MAPPING_NODE) {
        rc = rf_error_set(err, RF_ESCHEMA, "", "%s: must be a map of settings", path);
        goto done;
    }
    for (yaml_node_pair_t *p = root->data.mapping.pairs.start; p < root->data.mapping.pairs.top; p++) {
        const char *k = s_scalar(yaml_document_get_node(&doc, p->key));
        yaml_node_t *v = yaml_document_get_node(&doc, p->value);
        if (!k) {
            rc = rf_error_set(err, RF_ESCHEMA, "", "%s: keys must be strings", path);
            goto done;
        }
        if (v->type == YAML_SCALAR_NODE) {
            rc = set(ctx, k, s_scalar(v), err);
        } else if (v->type == YAML_SEQUENCE_NODE) {
            rf__jw_t w;
            rf__jw_init(&w);
            for (yaml_node_item_t *it = v->data.sequence.items.start; it < v->data.sequence.items.top; it++) {
                const char *s = s_scalar(yaml_document_get_node(&doc, *it));
                if (!s) {
                    rf__jw_fini(&w);
                    rc = rf_error_set(err, RF_ESCHEMA, k, "%s: list items must be scalars", path);
                    goto done;
                }
                if (it != v->data.sequence.items.start)
                    rf__jw_puts(&w, ",");
                rf__jw_puts(&w, s);
            }
            char *joined = rf__jw_take(&w, NULL);
            rc = joined ? set(ctx, k, joined, err) : rf_error_set(err, RF_ENOMEM, "", "out of memory");
            free(joined);
        } else {
            rc = rf_error_set(err, RF_ESCHEMA, k, "%s: must be a scalar or a list", path);
        }
        if (rc != RF_OK)
            goto done;
    }
done:
    yaml_document_delete(&doc);
    return rc;
}
