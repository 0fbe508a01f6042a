/* tests/unit/test_probe_ib.c: rackfit-probe's saved-InfiniBand reader
 * (probe/ib.c) on ../shared/data/ib/ibsim-iblinkinfo-smpquery.txt (real
 * infiniband-diags output under ibsim), on transcripts of the four rails of
 * host a08-p1-dgx-04-c01 of the saved fabric (GUIDs and names as in
 * topograph-ibnetdiscover-example.out), and the faults: a timed-out SMP, no
 * port, down ports, a back-to-back CA link. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "../support/leak.h"
#include "facts.h"
#include "ib.h"
#include "labels.h"

static rf_probe_facts_t s_f;

static const rf_probe_label_t *s_tier0(const rf_probe_label_cfg_t *c)
{
    static rf_probe_labels_t l;
    rf__labels_derive(&s_f, c, &l);
    return &l.l[0];
}

static void s_parse(const char *text)
{
    rf_error_t err;
    rf__facts_init(&s_f);
    cr_assert_eq(rf__ib_parse(text, strlen(text), "test", &s_f, &err), RF_OK, "%s", err.message);
}

Test(probe_ib, saved_ibsim_output)
{
    rf_error_t err;
    rf__facts_init(&s_f);
    cr_assert_eq(rf__ib_read_file(RF_SOURCE_DIR "/../shared/data/ib/ibsim-iblinkinfo-smpquery.txt", &s_f, &err), RF_OK,
                 "%s", err.message);
    /* smpquery nodeinfo + nodedesc and iblinkinfo -l describe one cable. */
    cr_assert_eq(s_f.n_ib, 1);
    const rf_probe_ib_t *p = &s_f.ib_ports[0];
    cr_expect_str_eq(p->ca, "mlx5_5");
    cr_expect_eq(p->port, 1);
    cr_expect_eq(p->peer_type, RF_IB_PEER_SWITCH);
    cr_expect_eq(p->peer_guid, UINT64_C(0x2c5eab0300b87b40));
    cr_expect_eq(p->peer_port, 1);
    cr_expect_str_eq(p->peer_desc, "MF0;A09-P1-IBLEAF-04-04:MQM9701/U1");
    cr_expect_str_eq(p->error, "");
    rf_probe_label_cfg_t c;
    rf__label_cfg_defaults(&c);
    const rf_probe_label_t *t0 = s_tier0(&c);
    cr_expect_eq(t0->action, RF_LABEL_SET);
    cr_expect_str_eq(t0->value, "A09-P1-IBLEAF-04-04");
    rf_test_no_leaks();
}

/* One NodeInfo + NodeDescription per rail, as `smpquery -C <ca> -D ... 0,1` prints them. */
#define RAIL(ca, guid, port, desc)                                                                                     \
    "$ smpquery -C " ca " -D nodeinfo 0,1\n# Node info: DR path slid 65535; dlid 65535; 0,1\n"                         \
    "NodeType:........................Switch\nGuid:............................" guid "\n"                             \
    "LocalPort:.......................1\n$ smpquery -C " ca " -D nodedesc 0,1\nNode Description:." desc "\n"

#define C01_RAILS                                                                                                      \
    RAIL("mlx5_0", "0x2c5eab0300c260c0", 1, "MF0;A09-P1-IBLEAF-01-04:MQM9701/U1")                                      \
    RAIL("mlx5_1", "0x2c5eab0300c26340", 1, "MF0;A09-P1-IBLEAF-02-04:MQM9701/U1")                                      \
    RAIL("mlx5_4", "0x2c5eab0300c262c0", 1, "MF0;A09-P1-IBLEAF-03-04:MQM9701/U1")                                      \
    RAIL("mlx5_5", "0x2c5eab0300b87b40", 1, "MF0;A09-P1-IBLEAF-04-04:MQM9701/U1")

/* Rail-optimised: four HCAs on four leaves; the node's tier-0 is the leaf
 * with the smallest GUID (every node of the leaf group has the same set),
 * or the leaf of the rail chosen with --ib-rail. */
Test(probe_ib, four_rails_smallest_guid_or_chosen_rail)
{
    s_parse(C01_RAILS);
    cr_assert_eq(s_f.n_ib, 4);
    cr_expect_str_eq(s_f.ib_ports[2].ca, "mlx5_4");
    cr_expect_eq(s_f.ib_ports[2].peer_guid, UINT64_C(0x2c5eab0300c262c0));
    rf_probe_label_cfg_t c;
    rf__label_cfg_defaults(&c);
    cr_expect_str_eq(s_tier0(&c)->value, "A09-P1-IBLEAF-04-04");
    c.ib_rail = "mlx5_1";
    cr_expect_str_eq(s_tier0(&c)->value, "A09-P1-IBLEAF-02-04");
    c.ib_rail = "mlx5_9";
    cr_expect_eq(s_tier0(&c)->action, RF_LABEL_LEAVE);
    rf_test_no_leaks();
}

/* One rail's SMP timed out: the smallest-GUID rule could pick another leaf
 * than its group's, so nothing is written; a chosen rail that answered
 * still works. */
Test(probe_ib, smp_timeout_leaves_the_label)
{
    s_parse(RAIL("mlx5_0", "0x2c5eab0300c260c0", 1,
                 "MF0;A09-P1-IBLEAF-01-04:MQM9701/U1") "$ smpquery -C mlx5_5 -D nodeinfo 0,1\n"
                                                       "ibwarn: [1234] mad_rpc: _do_madrpc failed; dport (DR path slid "
                                                       "0; dlid 0; 0,1)\n"
                                                       "smpquery: iberror: failed: operation NodeInfo: node info query "
                                                       "failed\n");
    cr_assert_eq(s_f.n_ib, 2);
    cr_expect(strstr(s_f.ib_ports[1].error, "failed") != NULL, "%s", s_f.ib_ports[1].error);
    rf_probe_label_cfg_t c;
    rf__label_cfg_defaults(&c);
    const rf_probe_label_t *t0 = s_tier0(&c);
    cr_expect_eq(t0->action, RF_LABEL_LEAVE);
    cr_expect(strstr(t0->reason, "mlx5_5") != NULL, "%s", t0->reason);
    c.ib_rail = "mlx5_0";
    cr_expect_str_eq(s_tier0(&c)->value, "A09-P1-IBLEAF-01-04");
    rf_test_no_leaks();
}

Test(probe_ib, iblinkinfo_lines_down_ports_and_ca_peers)
{
    /* iblinkinfo -D 0 -l for two ports: one linked, one without link. */
    s_parse("0xe09d7303007a4bd9 \"      a08-p1-dgx-04-c01 mlx5_5\"    647    1[  ] ==( 4X           2.5 Gbps "
            "Initialize/  LinkUp)==>  0x2c5eab0300b87b40     73    1[  ] \"MF0;A09-P1-IBLEAF-04-04:MQM9701/U1\" "
            "(Could be 12X Could be 10.0 Gbps)\n"
            "0xe09d7303007a4bdb \"      a08-p1-dgx-04-c01 mlx5_6\"    648    1[  ] ==(                Down/ "
            "Polling)==>             [  ] \"\" ( )\n");
    cr_assert_eq(s_f.n_ib, 2);
    cr_expect_str_eq(s_f.ib_ports[0].ca, "mlx5_5");
    cr_expect_eq(s_f.ib_ports[0].peer_type, RF_IB_PEER_UNKNOWN);
    cr_expect_eq(s_f.ib_ports[0].peer_guid, UINT64_C(0x2c5eab0300b87b40));
    cr_expect(s_f.ib_ports[1].down);
    rf_probe_label_cfg_t c;
    rf__label_cfg_defaults(&c);
    /* iblinkinfo does not say what the peer is: no label from it alone. */
    cr_expect_eq(s_tier0(&c)->action, RF_LABEL_LEAVE);
    /* A back-to-back cable to another host's CA names no leaf. */
    s_parse("# Node info: DR path slid 65535; dlid 65535; 0,1\nNodeType:.......Channel Adapter\n"
            "Guid:........0xe09d730300859298\nLocalPort:......1\nNode Description:.a08-p1-dgx-04-c02 mlx5_5\n");
    cr_expect_eq(s_f.ib_ports[0].peer_type, RF_IB_PEER_CA);
    cr_expect(strstr(s_tier0(&c)->reason, "cabled to a switch") != NULL, "%s", s_tier0(&c)->reason);
    rf_test_no_leaks();
}

Test(probe_ib, no_ports)
{
    s_parse("nothing to see here\n");
    cr_expect_eq(s_f.n_ib, 0);
    cr_expect_eq(s_f.ib.state, RF_SRC_OK);
    rf_probe_label_cfg_t c;
    rf__label_cfg_defaults(&c);
    c.tier0_source = "ib";
    const rf_probe_label_t *t0 = s_tier0(&c);
    cr_expect_eq(t0->action, RF_LABEL_LEAVE);
    cr_expect(strstr(t0->reason, "no InfiniBand port") != NULL, "%s", t0->reason);
    /* auto falls back to LLDP, which was not read. */
    c.tier0_source = "auto";
    cr_expect(strstr(s_tier0(&c)->reason, "LLDP") != NULL);
    rf_error_t err;
    rf__facts_init(&s_f);
    cr_expect_eq(rf__ib_read_file("/nonexistent/ib.txt", &s_f, &err), RF_EIO);
    c.tier0_source = "ib";
    cr_expect(strstr(s_tier0(&c)->reason, "/nonexistent/ib.txt") != NULL, "%s", s_tier0(&c)->reason);
    rf_test_no_leaks();
}
