/* tests/unit/test_sim_cluster.c: the simulator's cluster loader
 * (bench/sim_cluster.c): a `fabric:BxRxH[xG]` spec gives B*R*H nodes of G
 * GPUs with per-level domain ids and GPU totals; bad specs are refused with
 * a message. */
#include <criterion/criterion.h>
#include <string.h>

#include "../support/leak.h"
#include "sim.h"

Test(sim_cluster, fabric_spec_gives_its_shape)
{
    sim_cluster_t c;
    rf_error_t err;
    cr_assert_eq(sim_cluster_load("fabric:2x3x4x4", &c, &err), RF_OK, "%s", err.message);
    cr_assert_eq(c.n_nodes, 24);
    cr_assert_eq(c.total_gpus, 96);
    cr_assert_eq(c.g_host, 4);
    cr_assert_eq(c.dropped, 0);
    cr_assert_gt(c.L, 1);
    cr_assert_eq(c.n_dom[c.L - 1], 24, "the last level is the host");
    cr_assert_eq(c.n_dom[0], 2, "the first level is the block");
    int64_t sum = 0;
    for (int32_t d = 0; d < c.n_dom[0]; d++)
        sum += c.dom_gpus[0][d];
    cr_assert_eq(sum, c.total_gpus, "block GPUs add up");
    for (int32_t n = 0; n < c.n_nodes; n++) {
        cr_assert_eq(c.gpus[n], 4);
        for (int32_t l = 0; l < c.L; l++)
            cr_assert(c.dom[l * c.n_nodes + n] >= 0 && c.dom[l * c.n_nodes + n] < c.n_dom[l]);
    }
    /* hosts of one rack share the rack's domain */
    int32_t rack = c.L - 2;
    cr_assert_eq(c.dom[rack * c.n_nodes + 0], c.dom[rack * c.n_nodes + 3]);
    cr_assert_neq(c.dom[rack * c.n_nodes + 0], c.dom[rack * c.n_nodes + 4]);
    sim_cluster_fini(&c);

    cr_assert_eq(sim_cluster_load("fabric:1x1x2", &c, &err), RF_OK, "%s", err.message);
    cr_assert_eq(c.total_gpus, 16, "8 GPUs by default");
    sim_cluster_fini(&c);
    rf_test_no_leaks();
}

Test(sim_cluster, bad_specs_are_refused)
{
    static const char *const bad[] = {"fabric:", "fabric:0x1x1", "fabric:2x2", "fabric:axbxc", "/nonexistent.json"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        sim_cluster_t c;
        rf_error_t err;
        rf_error_clear(&err);
        cr_assert_neq(sim_cluster_load(bad[i], &c, &err), RF_OK, "%s was accepted", bad[i]);
        cr_assert_neq(err.message[0], '\0', "%s: no message", bad[i]);
    }
    rf_test_no_leaks();
}
