/* tests/unit/test_comm.c: the simulator's communication model (bench/comm.c).
 *
 * The stretches of communication-model.md's table 4.5 (derived there by hand
 * from the same formulas and H100 / NDR-400 parameters), within 0.01; its
 * 70B tensor-parallel splits; the properties the model must keep (one host
 * costs nothing, fewer GPUs per host never helps, crossing a coarser level
 * never helps, contention only slows, the model off is sigma 1). */
#include <criterion/criterion.h>
#include <math.h>

#include "../support/leak.h"
#include "sim.h"

/* fabric:2x2x16 (2 blocks x 2 racks x 16 hosts x 8 GPUs, 64 hosts): host h is in rack h / 16, block h / 32. */
static sim_cluster_t s_c;
static comm_topo_t s_t;

static void s_setup(void)
{
    rf_error_t err;
    cr_assert_eq(sim_cluster_load("fabric:2x2x16", &s_c, &err), RF_OK, "%s", err.message);
    sim_cluster_topo(&s_c, &s_t);
}

static void s_teardown(void)
{
    sim_cluster_fini(&s_c);
}

/* sigma of a job of `n_pods` pods of `g` GPUs, pod k on host host_of(k). */
static double s_sigma(const comm_profile_t *p, comm_family_id f, int32_t n_pods, int32_t g, int32_t (*host_of)(int32_t))
{
    int32_t node[512], gpus[512];
    for (int32_t k = 0; k < n_pods; k++) {
        node[k] = host_of(k);
        gpus[k] = g;
    }
    comm_job_t j;
    rf_error_t err;
    cr_assert_eq(comm_job_init(&j, p, &s_t, f, 8, node, gpus, n_pods, &err), RF_OK, "%s", err.message);
    comm_job_t *jobs[1] = {&j};
    double scratch[256];
    comm_update(p, &s_t, jobs, 1, scratch);
    double s = j.sigma;
    comm_job_fini(&j);
    return s;
}

static int32_t s_same(int32_t k)
{
    (void)k;
    return 0;
}
static int32_t s_one_each(int32_t k)
{
    return k; /* hosts 0..15: one rack */
}
static int32_t s_racks(int32_t k)
{
    return k * 16; /* hosts 0 and 16: two racks of block 0 */
}
static int32_t s_blocks(int32_t k)
{
    return k * 32; /* hosts 0 and 32: two blocks */
}
static int32_t s_four(int32_t k)
{
    return k; /* with 4-GPU pods: 4 GPUs on each of 4 hosts */
}
static int32_t s_one_each_blocks(int32_t k)
{
    return (k % 2) * 32 + k / 2; /* 16 hosts alternating between the blocks */
}

TestSuite(comm, .init = s_setup, .fini = s_teardown);

Test(comm, table_4_5)
{
    comm_profile_t p;
    comm_profile_default(&p);
    /* family x (ResNet-50, BERT-large, GPT-7B), from communication-model.md 4.5 */
    static const comm_family_id fam[3] = {COMM_CNN, COMM_BERT, COMM_LLM_DP};
    static const double one_host[3] = {1.00, 1.00, 1.00};
    static const double one_gpu_16[3] = {1.09, 1.32, 1.54};
    static const double four_by_four[3] = {1.01, 1.05, 1.08};
    static const double racks[3] = {1.00, 1.00, 1.01};
    for (int f = 0; f < 3; f++) {
        cr_expect(fabs(s_sigma(&p, fam[f], 1, 8, s_same) - one_host[f]) < 1e-12, "one host");
        double s = s_sigma(&p, fam[f], 16, 1, s_one_each);
        cr_expect(fabs(s - one_gpu_16[f]) < 0.01, "%s 1 GPU x 16 hosts: %.3f, table %.2f", p.fam[fam[f]].name, s,
                  one_gpu_16[f]);
        s = s_sigma(&p, fam[f], 4, 4, s_four);
        cr_expect(fabs(s - four_by_four[f]) < 0.01, "%s 4 x 4 hosts: %.3f, table %.2f", p.fam[fam[f]].name, s,
                  four_by_four[f]);
        s = s_sigma(&p, fam[f], 2, 8, s_racks);
        cr_expect(fabs(s - racks[f]) < 0.011, "%s 2 hosts in 2 racks: %.3f, table %.2f", p.fam[fam[f]].name, s,
                  racks[f]);
    }
    rf_test_no_leaks();
}

/* llm-3d on 64 GPUs (TP8 x PP8 x DP1) in 1-GPU pods: TP groups split 4+4 over two hosts give 1.18 in the table;
 * one GPU per host 2.30 (both for 512 GPUs there; the same ratios here, as the TP bytes per step scale with the
 * micro-batches per replica). */
static int32_t s_tp_split_half(int32_t r)
{
    return (r / 4) % 8;
}
static int32_t s_tp_split_all(int32_t r)
{
    return r % 8;
}
static int32_t s_tp_whole(int32_t r)
{
    return r / 8;
}

Test(comm, llm_3d_tensor_parallel_splits)
{
    comm_profile_t p;
    comm_profile_default(&p);
    double whole = s_sigma(&p, COMM_LLM_3D, 64, 1, s_tp_whole);
    double half = s_sigma(&p, COMM_LLM_3D, 64, 1, s_tp_split_half);
    double all = s_sigma(&p, COMM_LLM_3D, 64, 1, s_tp_split_all);
    cr_expect(fabs(whole - 1.0) < 1e-9, "TP groups whole in hosts, one rack: %.4f", whole);
    cr_expect(fabs(half - 1.18) < 0.03, "TP split 4+4: %.3f, table 1.18", half);
    cr_expect(fabs(all - 2.30) < 0.08, "TP split 1 per host: %.3f, table 2.30", all);
    rf_test_no_leaks();
}

Test(comm, properties)
{
    comm_profile_t p;
    comm_profile_default(&p);
    for (comm_family_id f = 0; f < COMM_N_FAMILIES; f++) {
        double packed = s_sigma(&p, f, 2, 8, s_one_each), racks = s_sigma(&p, f, 2, 8, s_racks),
               blocks = s_sigma(&p, f, 2, 8, s_blocks);
        cr_expect(fabs(packed - 1.0) < 1e-12, "%s two full hosts in a rack is the reference", p.fam[f].name);
        cr_expect(racks >= packed && blocks >= racks, "%s: %.4f %.4f %.4f", p.fam[f].name, packed, racks, blocks);
        double one = s_sigma(&p, f, 16, 1, s_one_each), spread = s_sigma(&p, f, 16, 1, s_one_each_blocks);
        cr_expect(one >= s_sigma(&p, f, 4, 4, s_four) - 1e-12, "%s: fewer GPUs per host never helps", p.fam[f].name);
        cr_expect(spread >= one, "%s: crossing blocks never helps", p.fam[f].name);
    }
    /* no floors, no oversubscription and one switch latency: rack and block crossings cost the same as one rack */
    comm_profile_t flat = p;
    for (int u = 0; u < RF_MAX_LEVELS; u++) {
        flat.kappa_floor[u] = flat.oversub[u] = 1.0;
        flat.lam[u] = flat.lam[0];
    }
    cr_expect(fabs(s_sigma(&flat, COMM_LLM_DP, 2, 8, s_blocks) - 1.0) < 1e-12);
    comm_profile_t off = p;
    off.on = false;
    cr_expect_eq(s_sigma(&off, COMM_LLM_DP, 16, 1, s_one_each_blocks), 1.0);
    rf_test_no_leaks();
}

/* Two llm-dp jobs of 16 single-GPU pods, each alternating between the blocks, share the blocks' uplinks:
 * with a 1000:1 oversubscription their load passes the floor, and together they load it twice as much. */
Test(comm, contention_between_jobs)
{
    comm_profile_t p;
    comm_profile_default(&p);
    for (int u = 1; u < RF_MAX_LEVELS; u++)
        p.oversub[u] = 1000;
    int32_t node_a[16], node_b[16], gpus[16];
    for (int32_t k = 0; k < 16; k++) {
        node_a[k] = s_one_each_blocks(k);
        node_b[k] = s_one_each_blocks(k) + 8;
        gpus[k] = 1;
    }
    comm_job_t a, b;
    rf_error_t err;
    cr_assert_eq(comm_job_init(&a, &p, &s_t, COMM_LLM_DP, 8, node_a, gpus, 16, &err), RF_OK);
    cr_assert_eq(comm_job_init(&b, &p, &s_t, COMM_LLM_DP, 8, node_b, gpus, 16, &err), RF_OK);
    double scratch[256];
    comm_job_t *one[1] = {&a}, *two[2] = {&a, &b};
    comm_update(&p, &s_t, one, 1, scratch);
    double alone = a.sigma, k_alone = a.kappa;
    comm_update(&p, &s_t, two, 2, scratch);
    cr_expect(k_alone > p.kappa_floor[2], "alone: kappa %.3f above the floor", k_alone);
    cr_expect(a.kappa > k_alone * 1.2, "shared: kappa %.3f vs %.3f alone", a.kappa, k_alone);
    cr_expect(a.sigma > alone, "shared: sigma %.3f vs %.3f alone", a.sigma, alone);
    p.contention = false;
    comm_update(&p, &s_t, two, 2, scratch);
    cr_expect_eq(a.kappa, p.kappa_floor[2], "no contention: the floor");
    comm_job_fini(&a);
    comm_job_fini(&b);
    rf_test_no_leaks();
}
