/* watcher/kubeconfig.h: how to reach the API server: a kubeconfig file
 * (YAML, read with libyaml; this module is the only one that includes
 * <yaml.h>) or the in-cluster service account; and the watcher's own flat
 * YAML config file.
 *
 * Supported auth: bearer tokens (`token`, `tokenFile`), client certificates
 * (`client-certificate[-data]`, `client-key[-data]`), the cluster CA
 * (`certificate-authority[-data]`), `insecure-skip-tls-verify`,
 * `tls-server-name`. Refused with a clear error: `exec` credential plugins,
 * `auth-provider` (gcp, oidc, azure), `username`/`password`, and
 * impersonation (`as`, `as-groups`). Relative file paths are relative to the
 * kubeconfig's folder, as kubectl resolves them. */
#ifndef RACKFIT_WATCHER_KUBECONFIG_H
#define RACKFIT_WATCHER_KUBECONFIG_H

#include <stdbool.h>
#include <stddef.h>

#include "rackfit/status.h"

typedef struct {
    char *server;  /* "https://host:port" */
    char *ca_file; /* PEM file, or NULL */
    char *ca_data; /* PEM bytes (decoded from base64), or NULL */
    size_t ca_len;
    bool insecure;         /* insecure-skip-tls-verify */
    char *tls_server_name; /* or NULL */
    char *token;           /* bearer token, or NULL */
    char *token_file;      /* re-read periodically (bound tokens rotate), or NULL */
    char *cert_file, *key_file;
    char *cert_data, *key_data; /* PEM bytes, or NULL */
    size_t cert_len, key_len;
    char *namespace_; /* the context's namespace (in-cluster: the pod's), or NULL */
} rf__kubeconfig_t;

/* Read `path`; `context` NULL means current-context. */
rf_status rf__kubeconfig_load(const char *path, const char *context, rf__kubeconfig_t *out, rf_error_t *err);
/* KUBERNETES_SERVICE_HOST/PORT and /var/run/secrets/kubernetes.io/serviceaccount
 * (`sa_dir` overrides that folder, for tests; NULL: the real one). */
rf_status rf__kubeconfig_in_cluster(const char *sa_dir, rf__kubeconfig_t *out, rf_error_t *err);
void rf__kubeconfig_fini(rf__kubeconfig_t *cfg);

/* A flat YAML map (`key: scalar`, or `key: [a, b]` / a block list, joined
 * with commas) for the watcher's config file. Calls `set` for each pair in
 * order; `set` returns RF_OK or an error it has filled. */
rf_status rf__yaml_flat_load(const char *path,
                             rf_status (*set)(void *ctx, const char *key, const char *value, rf_error_t *err),
                             void *ctx, rf_error_t *err);

/* Standard base64 (padding optional, whitespace skipped). *out malloc'ed. */
rf_status rf__base64_decode(const char *in, char **out, size_t *len);

#endif
