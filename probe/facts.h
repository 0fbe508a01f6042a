/* probe/facts.h: what rackfit-probe finds out about one node, and from where.
 *
 * Filled by the readers (hwtopo.c: GPUs, NICs, NUMA nodes, paths, NVLink;
 * nvml.c: NVIDIA fabric ids; lldp.c: Ethernet neighbours; ib.c and ibmad.c:
 * InfiniBand peers), read by labels.c (which labels to write) and report.c
 * (the JSON the probe prints). Plain fixed-size data, no pointers: a facts
 * value is zeroed by rf__facts_init and needs no cleanup.
 *
 * Invariants: counts never exceed the RF_PROBE_MAX_* limits (a reader that
 * meets more fails its source with RF_ELIMIT rather than truncating: a
 * partial inventory could give a wrong label); every string is
 * NUL-terminated; a source whose state is not RF_SRC_OK contributes nothing
 * to the labels. */
#ifndef RACKFIT_PROBE_FACTS_H
#define RACKFIT_PROBE_FACTS_H

#include <stdbool.h>
#include <stdint.h>

#include "rackfit/status.h"

#define RF_PROBE_MAX_GPUS  64
#define RF_PROBE_MAX_NICS  64
#define RF_PROBE_MAX_LLDP  64
#define RF_PROBE_MAX_IB    64
#define RF_PROBE_MAX_NOTES 32
#define RF_PROBE_MAX_NUMA  64 /* NUMA os indexes 0..63 (a bit mask) */

/* Path between two PCI devices, nearest first (nvidia-smi's names, plus
 * PACKAGE for two NUMA nodes of one package, as on an NPS4 EPYC). */
typedef enum {
    RF_PATH_PIX = 0, /* one PCIe switch: at most one bridge below the common one on each side */
    RF_PATH_PXB,     /* several PCIe switches, no host bridge */
    RF_PATH_PHB,     /* the same host bridge (root complex) */
    RF_PATH_NODE,    /* host bridges of one NUMA node */
    RF_PATH_PACKAGE, /* NUMA nodes of one package (socket) */
    RF_PATH_SYS,     /* across packages */
    RF_PATH_UNKNOWN
} rf_probe_path;

/* "pix", "pxb", ... ; "unknown". Static storage. */
const char *rf__path_name(rf_probe_path p);

typedef enum { RF_SRC_UNUSED = 0, RF_SRC_OK, RF_SRC_ERROR } rf_probe_src_state;

typedef struct {
    rf_probe_src_state state;
    char origin[256]; /* the file read, or what was asked ("hwloc: this system") */
    char error[512];  /* when state == RF_SRC_ERROR */
} rf_probe_src_t;

typedef struct {
    char busid[16]; /* "0000:18:00.0" */
    unsigned vendor, device, class_id;
    char osdevs[128];  /* OS device names, comma-separated ("nvml0,cuda0", "mlx5_0,ib0") */
    char model[64];    /* GPUModel / PCI name, or "" */
    char uuid[64];     /* NVIDIAUUID, or "" */
    uint64_t numa;     /* NUMA node os indexes (bit i: node i) of the first non-I/O ancestor */
    int package;       /* os index of the package above, or -1 */
    bool rdma;         /* NICs: has an OpenFabrics OS device */
    int nvlink_domain; /* GPUs: index into the NVLink/XGMI domains, or -1 */
} rf_probe_dev_t;

typedef struct {
    char ifname[64];
    char chassis_name[256]; /* System Name, "" when the neighbour sent none */
    char chassis_id[128];
    char chassis_id_type[16];
    char port_id[128];
    char port_id_type[16];
    char port_descr[256];
    bool caps_known, bridge; /* capability list present; Bridge or Router enabled */
} rf_probe_lldp_t;

typedef enum {
    RF_IB_PEER_UNKNOWN = 0,
    RF_IB_PEER_CA = 1,
    RF_IB_PEER_SWITCH = 2,
    RF_IB_PEER_ROUTER = 3
} rf_probe_ib_peer;

typedef struct {
    char ca[64]; /* "mlx5_5", or "" when the input did not say */
    int port;
    bool down;       /* the local port has no link: no peer to ask */
    char error[256]; /* the query for this port failed (timeout, ...): "" when it did not */
    rf_probe_ib_peer peer_type;
    uint64_t peer_guid;
    int peer_port;
    char peer_desc[128];
} rf_probe_ib_t;

typedef struct {
    rf_probe_src_t hwloc, nvml, lldp, ib;
    char hostname[256];
    int n_numa;
    uint64_t numa; /* every NUMA node's os index */
    int n_packages;
    int n_gpus, n_nics;
    rf_probe_dev_t gpus[RF_PROBE_MAX_GPUS];
    rf_probe_dev_t nics[RF_PROBE_MAX_NICS];
    uint8_t gpu_nic[RF_PROBE_MAX_GPUS][RF_PROBE_MAX_NICS]; /* rf_probe_path */
    uint8_t gpu_gpu[RF_PROBE_MAX_GPUS][RF_PROBE_MAX_GPUS];
    int n_nvlink_domains;
    char nvlink_matrix[32]; /* "NVLinkBandwidth", "XGMIBandwidth", or "" */
    /* NVML fabric (multi-node NVLink) identity: "<ClusterUUID>.<CliqueId>" when
     * every GPU agrees and the fabric is set up; else "". */
    char accel_domain[96];
    bool accel_none; /* NVML answered and no GPU is in a multi-node NVLink fabric */
    int n_lldp;
    rf_probe_lldp_t lldp_nbrs[RF_PROBE_MAX_LLDP];
    int n_ib;
    rf_probe_ib_t ib_ports[RF_PROBE_MAX_IB];
    int n_notes;
    char notes[RF_PROBE_MAX_NOTES][256]; /* what could not be established, and why */
} rf_probe_facts_t;

void rf__facts_init(rf_probe_facts_t *f);
/* Append a note (printf-style); past the limit, the last note is replaced by one saying the limit was passed. */
void rf__facts_note(rf_probe_facts_t *f, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Mark a source failed with a message (printf-style); returns `code`. */
rf_status rf__src_fail(rf_probe_src_t *src, rf_status code, rf_error_t *err, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

#endif
