/* tests/unit/test_probe_lldp.c: rackfit-probe's LLDP reader (probe/lldp.c)
 * on the saved lldpcli outputs of ../shared/data/lldp (json and json0
 * shapes of the same neighbours must read the same), the tier-0 label they
 * give, and the faults: a neighbour without a System Name, switches that
 * disagree, text that is not lldpcli JSON, a missing lldpcli. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "../support/leak.h"
#include "facts.h"
#include "labels.h"
#include "lldp.h"

#define S_DIR RF_SOURCE_DIR "/../shared/data/lldp/"

static rf_probe_facts_t s_f, s_g;

static void s_read(rf_probe_facts_t *f, const char *file)
{
    rf_error_t err;
    rf__facts_init(f);
    cr_assert_eq(rf__lldp_read_file(file, f, &err), RF_OK, "%s: %s", file, err.message);
    cr_assert_eq(f->lldp.state, RF_SRC_OK);
}

static const rf_probe_label_t *s_tier0(const rf_probe_facts_t *f, const rf_probe_label_cfg_t *c)
{
    static rf_probe_labels_t l;
    rf__labels_derive(f, c, &l);
    cr_assert_str_eq(l.l[0].key, c->tier0_key);
    return &l.l[0];
}

static void s_same(const rf_probe_facts_t *a, const rf_probe_facts_t *b)
{
    cr_assert_eq(a->n_lldp, b->n_lldp);
    for (int i = 0; i < a->n_lldp; i++) {
        const rf_probe_lldp_t *x = &a->lldp_nbrs[i], *y = &b->lldp_nbrs[i];
        cr_expect_str_eq(x->ifname, y->ifname);
        cr_expect_str_eq(x->chassis_name, y->chassis_name);
        cr_expect_str_eq(x->chassis_id, y->chassis_id);
        cr_expect_str_eq(x->port_id, y->port_id);
        cr_expect_str_eq(x->port_descr, y->port_descr);
        cr_expect_eq(x->bridge, y->bridge);
    }
}

Test(probe_lldp, switchlike_peer_json0_and_json)
{
    s_read(&s_f, S_DIR "lldpcli-json0-switchlike-peer.json");
    s_read(&s_g, S_DIR "lldpcli-json-switchlike-peer.json");
    cr_assert_eq(s_f.n_lldp, 1);
    const rf_probe_lldp_t *n = &s_f.lldp_nbrs[0];
    cr_expect_str_eq(n->ifname, "ens1f0np0");
    cr_expect_str_eq(n->chassis_name, "leaf07.r07.pod1");
    cr_expect_str_eq(n->chassis_id_type, "mac");
    cr_expect_str_eq(n->chassis_id, "46:a1:73:e6:dd:48");
    cr_expect_str_eq(n->port_id_type, "ifname");
    cr_expect_str_eq(n->port_id, "Ethernet48");
    cr_expect_str_eq(n->port_descr, "r07-u12-gpu03:ens1f0np0");
    cr_expect(n->caps_known && n->bridge);
    s_same(&s_f, &s_g);
    rf_probe_label_cfg_t c;
    rf__label_cfg_defaults(&c);
    const rf_probe_label_t *t0 = s_tier0(&s_f, &c);
    cr_expect_eq(t0->action, RF_LABEL_SET);
    cr_expect_str_eq(t0->value, "leaf07.r07.pod1");
    rf_test_no_leaks();
}

/* Two neighbours on one interface (a Cisco SG200 and a ConnectX-4 Lx
 * firmware frame), neither with a System Name: nothing is written. */
Test(probe_lldp, nameless_neighbours_leave_the_label)
{
    s_read(&s_f, S_DIR "lldpcli-json0-sg200-connectx.json");
    s_read(&s_g, S_DIR "lldpcli-json-sg200-connectx.json");
    cr_assert_eq(s_f.n_lldp, 2);
    s_same(&s_f, &s_g);
    cr_expect_str_eq(s_f.lldp_nbrs[0].chassis_name, "");
    cr_expect_str_eq(s_f.lldp_nbrs[0].port_id, "g1");
    cr_expect_str_eq(s_f.lldp_nbrs[1].port_descr, "ConnectX-4 Lx, 25G/10G/1G SFP");
    rf_probe_label_cfg_t c;
    rf__label_cfg_defaults(&c);
    const rf_probe_label_t *t0 = s_tier0(&s_f, &c);
    cr_expect_eq(t0->action, RF_LABEL_LEAVE);
    cr_expect(strstr(t0->reason, "no System Name") && strstr(t0->reason, "rfv1"), "%s", t0->reason);
    /* Named by chassis id instead, the two neighbours disagree: still left alone. */
    c.lldp_chassis_id = true;
    t0 = s_tier0(&s_f, &c);
    cr_expect_eq(t0->action, RF_LABEL_LEAVE);
    cr_expect(strstr(t0->reason, "--lldp-interface") != NULL, "%s", t0->reason);
    rf_test_no_leaks();
}

/* A SONiC switch's own view (json, interface array, nameless chassis,
 * mgmt-ip lists): 33 neighbours; all of them disagree unless one interface
 * is chosen. */
Test(probe_lldp, sonic_many_interfaces)
{
    s_read(&s_f, S_DIR "sonic-dbsyncd-lldpctl.json");
    cr_expect_eq(s_f.n_lldp, 33);
    cr_expect_str_eq(s_f.lldp_nbrs[0].ifname, "eth0");
    cr_expect_str_eq(s_f.lldp_nbrs[0].chassis_name, "switch218ad08");
    cr_expect_str_eq(s_f.lldp_nbrs[0].port_id, "ge-0/0/17");
    int nameless = 0;
    for (int i = 0; i < s_f.n_lldp; i++)
        nameless += !s_f.lldp_nbrs[i].chassis_name[0];
    cr_expect_eq(nameless, 1);
    rf_probe_label_cfg_t c;
    rf__label_cfg_defaults(&c);
    cr_expect_eq(s_tier0(&s_f, &c)->action, RF_LABEL_LEAVE);
    c.lldp_interface = "eth0";
    const rf_probe_label_t *t0 = s_tier0(&s_f, &c);
    cr_expect_eq(t0->action, RF_LABEL_SET);
    cr_expect_str_eq(t0->value, "switch218ad08");
    c.lldp_interface = "nonexistent0";
    cr_expect_eq(s_tier0(&s_f, &c)->action, RF_LABEL_LEAVE);
    rf_test_no_leaks();
}

Test(probe_lldp, not_lldpcli_output)
{
    rf_error_t err;
    const char *bad[] = {"{\"lldp\": [", "[1,2,3]", "{\"other\": 1}", "{\"lldp\": {\"interface\": [3]}}"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        rf__facts_init(&s_f);
        cr_expect_neq(rf__lldp_parse(bad[i], strlen(bad[i]), "test", &s_f, &err), RF_OK, "%s", bad[i]);
        cr_expect_eq(s_f.lldp.state, RF_SRC_ERROR);
        cr_expect_eq(s_f.n_lldp, 0);
        rf_probe_label_cfg_t c;
        rf__label_cfg_defaults(&c);
        cr_expect_eq(s_tier0(&s_f, &c)->action, RF_LABEL_LEAVE);
    }
    /* lldpcli with no neighbour at all prints an empty lldp object. */
    rf__facts_init(&s_f);
    cr_expect_eq(rf__lldp_parse("{\"lldp\": [{}]}", 14, "test", &s_f, &err), RF_OK, "%s", err.message);
    cr_expect_eq(s_f.n_lldp, 0);
    rf_probe_label_cfg_t c;
    rf__label_cfg_defaults(&c);
    cr_expect(strstr(s_tier0(&s_f, &c)->reason, "no switch neighbour") != NULL);
    rf__facts_init(&s_f);
    cr_expect_eq(rf__lldp_read_file("/nonexistent/lldp.json", &s_f, &err), RF_EIO);
    rf_test_no_leaks();
}

Test(probe_lldp, live_lldpcli_missing_or_failing)
{
    rf_error_t err;
    rf__facts_init(&s_f);
    cr_expect_neq(rf__lldp_live("/nonexistent/lldpcli", NULL, 2000, &s_f, &err), RF_OK);
    cr_expect_eq(s_f.lldp.state, RF_SRC_ERROR);
    /* The real lldpcli, pointed at a socket where no lldpd listens. */
    rf__facts_init(&s_f);
    cr_expect_eq(rf__lldp_live("lldpcli", "/nonexistent/lldpd.socket", 5000, &s_f, &err), RF_EIO);
    cr_expect(strstr(s_f.lldp.error, "lldpd") != NULL, "%s", s_f.lldp.error);
    rf_test_no_leaks();
}
