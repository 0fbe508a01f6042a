/* tests/unit/test_watch_kubeconfig.c: kubeconfig reading (watcher/kubeconfig.c):
 * contexts, tokens, certificate data, relative paths, the auth kinds that are
 * refused, in-cluster credentials, the flat config file, base64. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../support/leak.h"
#include "kubeconfig.h"

static char s_dir[64];

static void s_setup(void)
{
    snprintf(s_dir, sizeof s_dir, "/tmp/rf-kc-XXXXXX");
    cr_assert_not_null(mkdtemp(s_dir));
}

static void s_teardown(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", s_dir);
    cr_assert_eq(system(cmd), 0);
}

static const char *s_write(const char *name, const char *text)
{
    static char path[128];
    snprintf(path, sizeof path, "%s/%s", s_dir, name);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
    return path;
}

#define KC_HEAD                                                                                                        \
    "apiVersion: v1\nkind: Config\ncurrent-context: b\n"                                                               \
    "contexts:\n- name: a\n  context: {cluster: ca, user: ua}\n- name: b\n  context:\n    cluster: cb\n    user: "     \
    "ub\n    namespace: team\n"

TestSuite(watch_kubeconfig, .init = s_setup, .fini = s_teardown);

Test(watch_kubeconfig, token_and_ca_data)
{
    /* "aGVsbG8=" is "hello" */
    const char *p = s_write("kc", KC_HEAD "clusters:\n- name: cb\n  cluster:\n    server: https://10.0.0.1:6443\n"
                                          "    certificate-authority-data: aGVsbG8=\n"
                                          "users:\n- name: ub\n  user:\n    token: abc.def\n");
    rf__kubeconfig_t c;
    rf_error_t err;
    cr_assert_eq(rf__kubeconfig_load(p, NULL, &c, &err), RF_OK, "%s", err.message);
    cr_assert_str_eq(c.server, "https://10.0.0.1:6443");
    cr_assert_eq(c.ca_len, 5);
    cr_assert_eq(memcmp(c.ca_data, "hello", 5), 0);
    cr_assert_str_eq(c.token, "abc.def");
    cr_assert_str_eq(c.namespace_, "team");
    cr_assert(!c.insecure);
    rf__kubeconfig_fini(&c);
    rf_test_no_leaks();
}

Test(watch_kubeconfig, named_context_client_cert_relative_paths)
{
    const char *p =
        s_write("kc", KC_HEAD "clusters:\n- name: ca\n  cluster:\n    server: https://a:443\n"
                              "    certificate-authority: certs/ca.pem\n    insecure-skip-tls-verify: true\n"
                              "users:\n- name: ua\n  user:\n    client-certificate: /abs/c.pem\n"
                              "    client-key: k.pem\n    tokenFile: tok\n");
    rf__kubeconfig_t c;
    rf_error_t err;
    cr_assert_eq(rf__kubeconfig_load(p, "a", &c, &err), RF_OK, "%s", err.message);
    char want[160];
    snprintf(want, sizeof want, "%s/certs/ca.pem", s_dir);
    cr_assert_str_eq(c.ca_file, want);
    cr_assert_str_eq(c.cert_file, "/abs/c.pem");
    snprintf(want, sizeof want, "%s/k.pem", s_dir);
    cr_assert_str_eq(c.key_file, want);
    snprintf(want, sizeof want, "%s/tok", s_dir);
    cr_assert_str_eq(c.token_file, want);
    cr_assert(c.insecure);
    cr_assert_null(c.namespace_);
    rf__kubeconfig_fini(&c);
    rf_test_no_leaks();
}

Test(watch_kubeconfig, refused_auth_kinds)
{
    static const char *const kinds[] = {"    exec:\n      command: aws\n", "    auth-provider:\n      name: gcp\n",
                                        "    username: u\n    password: p\n", "    as: admin\n"};
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        char text[1024];
        snprintf(text, sizeof text, "%s%s%s", KC_HEAD "clusters:\n- name: cb\n  cluster: {server: https://x}\n",
                 "users:\n- name: ub\n  user:\n", kinds[i]);
        const char *p = s_write("kc", text);
        rf__kubeconfig_t c;
        rf_error_t err;
        cr_assert_eq(rf__kubeconfig_load(p, NULL, &c, &err), RF_EUNSUPPORTED, "%s", kinds[i]);
        cr_assert(strstr(err.message, "does not support") != NULL, "%s", err.message);
    }
    rf_test_no_leaks();
}

Test(watch_kubeconfig, errors)
{
    rf__kubeconfig_t c;
    rf_error_t err;
    cr_assert_eq(rf__kubeconfig_load("/nonexistent/kc", NULL, &c, &err), RF_EIO);
    const char *p = s_write("kc", "a: [unclosed\n");
    cr_assert_eq(rf__kubeconfig_load(p, NULL, &c, &err), RF_EPARSE);
    p = s_write("kc", KC_HEAD "clusters: []\n");
    cr_assert_eq(rf__kubeconfig_load(p, NULL, &c, &err), RF_ESCHEMA);
    cr_assert(strstr(err.message, "cb") != NULL, "%s", err.message);
    p = s_write("kc", KC_HEAD "clusters:\n- name: cb\n  cluster: {server: https://x}\n");
    cr_assert_eq(rf__kubeconfig_load(p, "nope", &c, &err), RF_ESCHEMA);
    p = s_write("kc", KC_HEAD "clusters:\n- name: cb\n  cluster: {certificate-authority-data: \"!!\"}\n");
    cr_assert_neq(rf__kubeconfig_load(p, NULL, &c, &err), RF_OK);
    rf_test_no_leaks();
}

Test(watch_kubeconfig, in_cluster)
{
    s_write("token", "tok-123\n");
    s_write("ca.crt", "PEM");
    s_write("namespace", "rackfit-system\n");
    setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
    setenv("KUBERNETES_SERVICE_PORT", "443", 1);
    rf__kubeconfig_t c;
    rf_error_t err;
    cr_assert_eq(rf__kubeconfig_in_cluster(s_dir, &c, &err), RF_OK, "%s", err.message);
    cr_assert_str_eq(c.server, "https://10.96.0.1:443");
    cr_assert_str_eq(c.token, "tok-123");
    cr_assert_str_eq(c.namespace_, "rackfit-system");
    rf__kubeconfig_fini(&c);
    setenv("KUBERNETES_SERVICE_HOST", "fd00::1", 1);
    cr_assert_eq(rf__kubeconfig_in_cluster(s_dir, &c, &err), RF_OK);
    cr_assert_str_eq(c.server, "https://[fd00::1]:443");
    rf__kubeconfig_fini(&c);
    unsetenv("KUBERNETES_SERVICE_HOST");
    cr_assert_eq(rf__kubeconfig_in_cluster(s_dir, &c, &err), RF_EINVAL);
    rf_test_no_leaks();
}

typedef struct {
    char keys[8][32];
    char vals[8][64];
    int n;
} s_kv_t;

static rf_status s_set(void *ctx, const char *k, const char *v, rf_error_t *err)
{
    s_kv_t *kv = ctx;
    if (strcmp(k, "bad") == 0)
        return rf_error_set(err, RF_EINVAL, k, "bad key");
    snprintf(kv->keys[kv->n], 32, "%s", k);
    snprintf(kv->vals[kv->n++], 64, "%s", v);
    return RF_OK;
}

Test(watch_kubeconfig, flat_config)
{
    const char *p = s_write("cfg", "qps: 50\nlevels:\n  - a/b\n  - kubernetes.io/hostname\nmode: greedy\n");
    s_kv_t kv = {0};
    rf_error_t err;
    cr_assert_eq(rf__yaml_flat_load(p, s_set, &kv, &err), RF_OK, "%s", err.message);
    cr_assert_eq(kv.n, 3);
    cr_assert_str_eq(kv.vals[0], "50");
    cr_assert_str_eq(kv.keys[1], "levels");
    cr_assert_str_eq(kv.vals[1], "a/b,kubernetes.io/hostname");
    p = s_write("cfg", "bad: 1\n");
    cr_assert_eq(rf__yaml_flat_load(p, s_set, &kv, &err), RF_EINVAL);
    p = s_write("cfg", "- a\n- b\n");
    cr_assert_eq(rf__yaml_flat_load(p, s_set, &kv, &err), RF_ESCHEMA);
    p = s_write("cfg", "x: {a: 1}\n");
    cr_assert_eq(rf__yaml_flat_load(p, s_set, &kv, &err), RF_ESCHEMA);
    rf_test_no_leaks();
}

Test(watch_kubeconfig, base64)
{
    char *out;
    size_t n;
    cr_assert_eq(rf__base64_decode("TWFu\nTWE=\n", &out, &n), RF_OK);
    cr_assert_eq(n, 5);
    cr_assert_eq(memcmp(out, "ManMa", 5), 0);
    free(out);
    cr_assert_eq(rf__base64_decode("", &out, &n), RF_OK);
    cr_assert_eq(n, 0);
    free(out);
    cr_assert_eq(rf__base64_decode("ab$c", &out, &n), RF_EPARSE);
    rf_test_no_leaks();
}
