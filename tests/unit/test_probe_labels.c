/* tests/unit/test_probe_labels.c: label values and keys, and the node patch
 * (probe/labels.c): one merge patch per change, nothing when nothing
 * changes, removal only of keys the probe recorded as its own, labels it
 * cannot establish left alone, keys outside its set never written. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "../support/leak.h"
#include "arena.h"
#include "json.h"
#include "labels.h"

static rf__arena_t *s_arena;

static void s_setup(void)
{
    s_arena = rf__arena_new(0);
}

static void s_teardown(void)
{
    rf__arena_destroy(&s_arena);
}

TestSuite(probe_labels, .init = s_setup, .fini = s_teardown);

static const rf_doc_t *s_node(const char *json)
{
    rf_limits_t lim;
    rf_limits_default(&lim);
    rf_doc_t *d = NULL;
    rf_error_t err;
    cr_assert_eq(rf__json_parse(json, strlen(json), &lim, s_arena, &d, &err), RF_OK, "%s", err.message);
    return d;
}

static rf_probe_label_t *s_add(rf_probe_labels_t *w, const char *key, rf_label_action a, const char *value)
{
    rf_probe_label_t *l = &w->l[w->n++];
    memset(l, 0, sizeof *l);
    strcpy(l->key, key);
    l->action = a;
    if (value)
        strcpy(l->value, value);
    return l;
}

Test(probe_labels, values_and_keys)
{
    char v[RF_LABEL_VALUE_MAX + 1];
    rf__label_value("leaf07.r07.pod1", v);
    cr_expect_str_eq(v, "leaf07.r07.pod1");
    rf__label_value("MF0;A09-P1-IBLEAF-04-04:MQM9701/U1", v); /* ';' ':' '/' are not allowed */
    cr_expect_eq(strlen(v), 17);
    cr_expect_eq(v[0], 'x');
    char w[RF_LABEL_VALUE_MAX + 1];
    rf__label_value("MF0;A09-P1-IBLEAF-04-04:MQM9701/U1", w);
    cr_expect_str_eq(v, w, "the rewrite is deterministic");
    rf__label_value("9277d399-0674-44a9-b64e-d85bb19ce2b0.32766", v);
    cr_expect_str_eq(v, "9277d399-0674-44a9-b64e-d85bb19ce2b0.32766");
    rf__label_value("-leading-dash", v);
    cr_expect_eq(v[0], 'x');
    char long_[100];
    memset(long_, 'a', 80);
    long_[80] = 0;
    rf__label_value(long_, v);
    cr_expect_eq(strlen(v), 17);
    cr_expect(rf__label_key_valid("fabric.topograph.run/tier-0"));
    cr_expect(rf__label_key_valid("tier0"));
    cr_expect(!rf__label_key_valid("Fabric.example/tier-0"), "the prefix is a lower-case DNS name");
    cr_expect(!rf__label_key_valid("example.com/"));
    cr_expect(!rf__label_key_valid("example.com/a b"));
    rf_probe_label_cfg_t c;
    rf__label_cfg_defaults(&c);
    rf_error_t err;
    cr_expect_eq(rf__label_cfg_check(&c, &err), RF_OK);
    c.tier0_key = "bad key";
    cr_expect_eq(rf__label_cfg_check(&c, &err), RF_EINVAL);
    cr_expect(strstr(err.message, "bad key") != NULL);
    rf__label_cfg_defaults(&c);
    c.tier0_source = "ethernet";
    cr_expect_eq(rf__label_cfg_check(&c, &err), RF_EINVAL);
    rf_test_no_leaks();
}

Test(probe_labels, patch_sets_and_records_ownership)
{
    rf_probe_label_cfg_t c;
    rf__label_cfg_defaults(&c);
    rf_probe_labels_t w = {0};
    s_add(&w, "fabric.topograph.run/tier-0", RF_LABEL_SET, "leaf07");
    s_add(&w, "accelerator.topograph.run/domain", RF_LABEL_LEAVE, NULL);
    const rf_doc_t *n = s_node("{\"metadata\":{\"name\":\"n1\",\"resourceVersion\":\"42\","
                               "\"labels\":{\"example.com/rack\":\"r1\"}}}");
    char *p = NULL;
    rf_error_t err;
    cr_assert_eq(rf__labels_patch(&w, &c, n, &p, &err), RF_OK, "%s", err.message);
    cr_assert_not_null(p);
    cr_expect_str_eq(p, "{\"metadata\":{\"resourceVersion\":\"42\",\"labels\":{\"fabric.topograph.run/tier-0\":"
                        "\"leaf07\"},\"annotations\":{\"rackfit.io/probe-labels\":\"fabric.topograph.run/tier-0\"}}}");
    free(p);
    /* Applied: nothing more to do. */
    n = s_node("{\"metadata\":{\"name\":\"n1\",\"resourceVersion\":\"43\",\"labels\":{\"example.com/rack\":\"r1\","
               "\"fabric.topograph.run/tier-0\":\"leaf07\"},\"annotations\":{\"rackfit.io/probe-labels\":"
               "\"fabric.topograph.run/tier-0\"}}}");
    cr_assert_eq(rf__labels_patch(&w, &c, n, &p, &err), RF_OK);
    cr_expect_null(p, "%s", p);
    /* A new value: one patch with the new value, the annotation unchanged. */
    strcpy(w.l[0].value, "leaf08");
    cr_assert_eq(rf__labels_patch(&w, &c, n, &p, &err), RF_OK);
    cr_expect_str_eq(p, "{\"metadata\":{\"resourceVersion\":\"43\",\"labels\":{\"fabric.topograph.run/tier-0\":"
                        "\"leaf08\"}}}");
    free(p);
    rf_test_no_leaks();
}

Test(probe_labels, removes_only_what_it_owns)
{
    rf_probe_label_cfg_t c;
    rf__label_cfg_defaults(&c);
    rf_probe_labels_t w = {0};
    s_add(&w, "accelerator.topograph.run/domain", RF_LABEL_REMOVE, NULL);
    s_add(&w, "fabric.topograph.run/tier-0", RF_LABEL_LEAVE, NULL);
    char *p = NULL;
    rf_error_t err;
    /* Set by hand (no ownership annotation): neither removed nor claimed. */
    const rf_doc_t *n = s_node("{\"metadata\":{\"name\":\"n1\",\"labels\":{\"accelerator.topograph.run/domain\":"
                               "\"mine\",\"fabric.topograph.run/tier-0\":\"by-hand\"}}}");
    cr_assert_eq(rf__labels_patch(&w, &c, n, &p, &err), RF_OK);
    cr_expect_null(p, "%s", p);
    /* Written by the probe earlier: removed, and dropped from the annotation;
     * the tier-0 it cannot establish now stays, and stays owned. */
    n = s_node("{\"metadata\":{\"name\":\"n1\",\"resourceVersion\":\"7\",\"labels\":{"
               "\"accelerator.topograph.run/domain\":\"u.1\",\"fabric.topograph.run/tier-0\":\"leaf07\"},"
               "\"annotations\":{\"rackfit.io/probe-labels\":\"fabric.topograph.run/tier-0,"
               "accelerator.topograph.run/domain\",\"other\":\"x\"}}}");
    cr_assert_eq(rf__labels_patch(&w, &c, n, &p, &err), RF_OK);
    cr_expect_str_eq(p, "{\"metadata\":{\"resourceVersion\":\"7\",\"labels\":{\"accelerator.topograph.run/domain\":"
                        "null},\"annotations\":{\"rackfit.io/probe-labels\":\"fabric.topograph.run/tier-0\"}}}");
    free(p);
    /* A key owned before but no longer configured is not touched and stays owned. */
    n = s_node("{\"metadata\":{\"name\":\"n1\",\"labels\":{\"old.example/tier\":\"a\"},"
               "\"annotations\":{\"rackfit.io/probe-labels\":\"old.example/tier\"}}}");
    cr_assert_eq(rf__labels_patch(&w, &c, n, &p, &err), RF_OK);
    cr_expect_null(p, "%s", p);
    cr_expect_eq(rf__labels_patch(&w, &c, s_node("{\"kind\":\"Status\"}"), &p, &err), RF_EPARSE);
    rf_test_no_leaks();
}
