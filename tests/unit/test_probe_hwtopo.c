/* tests/unit/test_probe_hwtopo.c: rackfit-probe's hwloc reader
 * (probe/hwtopo.c) on every XML of ../shared/data/hwloc (read from the
 * shared folder beside the clone), with the GPU-NIC and GPU-GPU path
 * classes pinned to what each file's PCI tree shows (worked out with
 * `lstopo-no-graphics -i FILE --filter io:important -p` and its bridge
 * list), NVLink/XGMI domains, and the faults: a truncated file, a missing
 * file, a file that is not XML. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../support/leak.h"
#include "facts.h"
#include "file.h"
#include "hwtopo.h"
#include "labels.h"

#define S_DIR RF_SOURCE_DIR "/../shared/data/hwloc/"

static rf_probe_facts_t s_f;

static void s_load_file(const char *file)
{
    char path[512];
    snprintf(path, sizeof path, "%s%s", S_DIR, file);
    rf_error_t err;
    rf__facts_init(&s_f);
    cr_assert_eq(rf__hwtopo_read(path, &s_f, &err), RF_OK, "%s: %s", file, err.message);
    cr_assert_eq(s_f.hwloc.state, RF_SRC_OK);
}

static int s_gpu(const char *busid)
{
    for (int g = 0; g < s_f.n_gpus; g++)
        if (!strcmp(s_f.gpus[g].busid, busid))
            return g;
    cr_assert_fail("no GPU %s", busid);
    return -1;
}

static int s_nic(const char *osdev)
{
    for (int n = 0; n < s_f.n_nics; n++)
        if (strstr(s_f.nics[n].osdevs, osdev))
            return n;
    cr_assert_fail("no NIC %s", osdev);
    return -1;
}

#define GN(g, n, cls)                                                                                                  \
    cr_expect_str_eq(rf__path_name((rf_probe_path)s_f.gpu_nic[s_gpu(g)][s_nic(n)]), cls, "%s -> %s", g, n)
#define GG(g, h, cls)                                                                                                  \
    cr_expect_str_eq(rf__path_name((rf_probe_path)s_f.gpu_gpu[s_gpu(g)][s_gpu(h)]), cls, "%s -> %s", g, h)

Test(probe_hwtopo, every_shared_xml_loads)
{
    DIR *d = opendir(S_DIR);
    cr_assert_not_null(d, "the shared data folder %s is missing", S_DIR);
    int files = 0;
    for (struct dirent *e; (e = readdir(d));) {
        size_t n = strlen(e->d_name);
        if (n < 5 || strcmp(e->d_name + n - 4, ".xml"))
            continue;
        s_load_file(e->d_name);
        cr_expect_gt(s_f.n_gpus, 0, "%s: no GPU found", e->d_name);
        cr_expect_gt(s_f.n_numa, 0, "%s: no NUMA node", e->d_name);
        for (int g = 0; g < s_f.n_gpus; g++) {
            cr_expect_neq(s_f.gpus[g].numa, 0, "%s: GPU %s has no locality", e->d_name, s_f.gpus[g].busid);
            for (int k = 0; k < s_f.n_nics; k++)
                cr_expect_lt(s_f.gpu_nic[g][k], RF_PATH_UNKNOWN, "%s: %s -> %s", e->d_name, s_f.gpus[g].busid,
                             s_f.nics[k].busid);
        }
        files++;
    }
    closedir(d);
    cr_expect_eq(files, 7);
    rf_test_no_leaks();
}

/* DGX-2H: PLX switch trees 4 bridges below each root port, two GPUs per
 * leaf switch, two host bridges per package; the file has no NIC (trimmed
 * by hwloc's author), so GPU-GPU paths are pinned instead; the NVLink
 * matrix links each GPU to the six NVSwitches of its baseboard and has no
 * NVSwitch-NVSwitch trunk entries: two domains of eight. */
Test(probe_hwtopo, dgx2_switch_tree_and_nvlink)
{
    s_load_file("hwloc-nvidiaDGX2.xml");
    cr_assert_eq(s_f.n_gpus, 16);
    cr_expect_eq(s_f.n_nics, 0);
    cr_expect_eq(s_f.n_numa, 2);
    cr_expect_eq(s_f.n_packages, 2);
    GG("0000:34:00.0", "0000:36:00.0", "pix");  /* nvml0, nvml1: one leaf PLX switch */
    GG("0000:34:00.0", "0000:39:00.0", "pxb");  /* nvml0, nvml2: through the upper switch */
    GG("0000:34:00.0", "0000:57:00.0", "node"); /* nvml4: the other host bridge of package 0 */
    GG("0000:34:00.0", "0000:b7:00.0", "sys");  /* nvml8: package 1 */
    GG("0000:e5:00.0", "0000:e7:00.0", "pix");
    cr_expect_str_eq(s_f.nvlink_matrix, "NVLinkBandwidth");
    cr_expect_eq(s_f.n_nvlink_domains, 2);
    for (int g = 0; g < 16; g++)
        cr_expect_eq(s_f.gpus[g].nvlink_domain, s_f.gpus[g].package, "GPU %s", s_f.gpus[g].busid);
    cr_expect_str_eq(s_f.gpus[s_gpu("0000:34:00.0")].osdevs, "nvml0");
    rf_test_no_leaks();
}

/* Minsky: one host bridge per GPU, two per socket; NVLink pairs 0-1 and 2-3
 * (the links to the POWER8 packages do not join GPUs). */
Test(probe_hwtopo, power8_nvlink_pairs)
{
    s_load_file("hwloc-power8gpudistances.xml");
    cr_assert_eq(s_f.n_gpus, 4);
    GG("0002:01:00.0", "0003:01:00.0", "node");
    GG("0002:01:00.0", "000a:01:00.0", "sys");
    cr_expect_eq(s_f.n_nvlink_domains, 2);
    cr_expect_eq(s_f.gpus[s_gpu("0002:01:00.0")].nvlink_domain, s_f.gpus[s_gpu("0003:01:00.0")].nvlink_domain);
    cr_expect_neq(s_f.gpus[s_gpu("0002:01:00.0")].nvlink_domain, s_f.gpus[s_gpu("000b:01:00.0")].nvlink_domain);
    cr_expect_str_eq(s_f.gpus[s_gpu("0002:01:00.0")].osdevs, "cuda0,opencl0d0,nvml0");
    rf_test_no_leaks();
}

/* Lassen (AC922): GPU pairs behind one switch per socket; the socket-direct
 * HCA's four mlx5 functions sit on their own host bridges (two per socket),
 * so GPU-HCA is NODE on the GPU's socket and SYS across. NUMA os 0 and 8. */
Test(probe_hwtopo, lassen_node_and_sys)
{
    s_load_file("mpibind-coral-lassen.xml");
    cr_assert_eq(s_f.n_gpus, 4);
    cr_expect_eq(s_f.n_nics, 6); /* mlx5_0..3 and two Broadcom Ethernet functions */
    cr_expect_eq(s_f.numa, (UINT64_C(1) << 0) | (UINT64_C(1) << 8));
    GN("0004:04:00.0", "mlx5_0", "node");
    GN("0004:04:00.0", "mlx5_1", "node");
    GN("0004:04:00.0", "mlx5_2", "sys");
    GN("0035:03:00.0", "mlx5_3", "node");
    GN("0035:03:00.0", "mlx5_0", "sys");
    GG("0004:04:00.0", "0004:05:00.0", "pix");
    cr_expect(s_f.nics[s_nic("mlx5_0")].rdma);
    cr_expect(!s_f.nics[s_nic("enP5p1s0f0")].rdma);
    rf_test_no_leaks();
}

/* Pascal: root port 00:03.0 -> PLX 8796 upstream port 02:00.0 -> downstream
 * ports 03:04.0 (GPU 04:00.0), 03:10.0 (GPU 07:00.0), 03:14.0 (HCA 08:00.0):
 * both GPUs and the HCA on one PCIe switch, each behind its own downstream
 * port, which nvidia-smi calls PIX (one switch). The Ethernet functions hang
 * off another root port of the same host bridge: PHB. */
Test(probe_hwtopo, pascal_one_plx_switch)
{
    s_load_file("mpibind-cts1-pascal.xml");
    cr_assert_eq(s_f.n_gpus, 2);
    GN("0000:04:00.0", "mlx5_0", "pix");
    GN("0000:07:00.0", "mlx5_0", "pix");
    GN("0000:04:00.0", "enp12s0f0", "phb");
    GG("0000:04:00.0", "0000:07:00.0", "pix");
    rf_test_no_leaks();
}

/* g4dn.metal: GPU pairs on root ports, the EFA and ENA behind a switch on socket 1. */
Test(probe_hwtopo, g4dn_efa_on_socket1)
{
    s_load_file("mpibind-g4dnmetal.xml");
    cr_assert_eq(s_f.n_gpus, 8);
    cr_expect(s_f.nics[s_nic("rdmap197s0")].rdma);
    const char *sock0[] = {"0000:18:00.0", "0000:19:00.0", "0000:35:00.0", "0000:36:00.0"};
    const char *sock1[] = {"0000:e7:00.0", "0000:e8:00.0", "0000:f4:00.0", "0000:f5:00.0"};
    for (int i = 0; i < 4; i++) {
        GN(sock0[i], "rdmap197s0", "sys");
        GN(sock1[i], "rdmap197s0", "node");
    }
    GG("0000:18:00.0", "0000:19:00.0", "phb");
    rf_test_no_leaks();
}

/* Corona: the HCA shares a host bridge with rsmi5 only. */
Test(probe_hwtopo, corona_one_phb)
{
    s_load_file("mpibind-epyc-corona-p2.xml");
    cr_assert_eq(s_f.n_gpus, 8);
    GN("0000:c3:00.0", "mlx5_0", "phb");
    GN("0000:83:00.0", "mlx5_0", "node");
    GN("0000:a3:00.0", "mlx5_0", "node");
    GN("0000:e3:00.0", "mlx5_0", "node");
    GN("0000:03:00.0", "mlx5_0", "sys");
    GN("0000:63:00.0", "mlx5_0", "sys");
    cr_expect_eq(s_f.n_nvlink_domains, 0);
    rf_test_no_leaks();
}

/* Tioga: one NPS4 package (4 NUMA nodes), I/O below L3 caches; Slingshot NICs
 * are Network-only OS devices (not RDMA in hwloc's eyes); each hsiN shares a
 * host bridge with one GCD, other GCDs of its NUMA node are NODE, the rest
 * PACKAGE (same socket, another NUMA node); one XGMI domain of 8. */
Test(probe_hwtopo, tioga_nps4_and_xgmi)
{
    s_load_file("mpibind-eas-tioga.xml");
    cr_assert_eq(s_f.n_gpus, 8);
    cr_expect_eq(s_f.n_numa, 4);
    cr_expect_eq(s_f.n_packages, 1);
    cr_expect(!s_f.nics[s_nic("hsi0")].rdma);
    GN("0000:c6:00.0", "hsi0", "phb");
    GN("0000:ce:00.0", "hsi1", "phb");
    GN("0000:d6:00.0", "hsi2", "phb");
    GN("0000:de:00.0", "hsi3", "phb");
    GN("0000:c1:00.0", "hsi0", "node");
    GN("0000:c1:00.0", "hsi1", "package");
    cr_expect_str_eq(s_f.nvlink_matrix, "XGMIBandwidth");
    cr_expect_eq(s_f.n_nvlink_domains, 1);
    rf_test_no_leaks();
}

/* The opt-in locality labels on Pascal and on the NIC-less DGX-2. */
Test(probe_hwtopo, locality_labels)
{
    rf_probe_label_cfg_t c;
    rf__label_cfg_defaults(&c);
    c.locality_prefix = "rackfit.io/";
    rf_probe_labels_t l;
    s_load_file("mpibind-epyc-corona-p2.xml");
    rf__labels_derive(&s_f, &c, &l);
    cr_assert_eq(l.n, 7);
    cr_expect_str_eq(l.l[2].key, "rackfit.io/gpu-nic-path");
    cr_expect_str_eq(l.l[2].value, "sys");
    cr_expect_str_eq(l.l[5].key, "rackfit.io/gpu-nic-phb");
    cr_expect_str_eq(l.l[5].value, "1");
    cr_expect_str_eq(l.l[6].value, "4"); /* gpu-nic-node: rsmi4..7 */
    s_load_file("hwloc-nvidiaDGX2.xml");
    rf__labels_derive(&s_f, &c, &l);
    cr_expect_eq(l.l[2].action, RF_LABEL_REMOVE);
    rf_test_no_leaks();
}

static void s_fault(const char *text, size_t len, rf_status want)
{
    char path[] = "/tmp/rf-probe-xml-XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    FILE *f = fdopen(fd, "w");
    fwrite(text, 1, len, f);
    fclose(f);
    rf_error_t err;
    rf__facts_init(&s_f);
    cr_expect_eq(rf__hwtopo_read(path, &s_f, &err), want, "%s", err.message);
    cr_expect_eq(s_f.hwloc.state, RF_SRC_ERROR);
    cr_expect_eq(s_f.n_gpus, 0);
    cr_expect(strstr(s_f.hwloc.error, path) != NULL, "the error names the file: %s", s_f.hwloc.error);
    rf_probe_label_cfg_t c;
    rf__label_cfg_defaults(&c);
    c.locality_prefix = "rackfit.io/";
    rf_probe_labels_t l;
    rf__labels_derive(&s_f, &c, &l);
    for (int i = 2; i < l.n; i++)
        cr_expect_eq(l.l[i].action, RF_LABEL_LEAVE, "%s is left alone", l.l[i].key);
    unlink(path);
}

Test(probe_hwtopo, truncated_xml)
{
    char *text = NULL;
    size_t len = 0;
    rf_error_t err;
    cr_assert_eq(rf__read_file(S_DIR "mpibind-cts1-pascal.xml", 0, &text, &len, &err), RF_OK);
    s_fault(text, len / 2, RF_EPARSE);
    s_fault("this is not XML\n", 16, RF_EPARSE);
    s_fault("", 0, RF_EPARSE);
    free(text);
    rf__facts_init(&s_f);
    cr_expect_eq(rf__hwtopo_read("/nonexistent/topo.xml", &s_f, &err), RF_EIO);
    cr_expect(strstr(s_f.hwloc.error, "/nonexistent/topo.xml") != NULL, "%s", s_f.hwloc.error);
    rf_test_no_leaks();
}
