/* probe/nvml.c: NVML through dlopen (probe/nvml.h). The few NVML types used
 * are declared here with the layouts of nvml.h (CUDA 12 / driver R550+):
 * nvmlPciInfo_t (v3) and nvmlGpuFabricInfo_t. A driver without
 * nvmlDeviceGetGpuFabricInfo (older than R550) leaves the domain unknown. */
#include "nvml.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

typedef int s_ret_t; /* nvmlReturn_t: 0 is NVML_SUCCESS */
typedef void *s_dev_t;
typedef struct {
    char busIdLegacy[16];
    unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
    char busId[32];
} s_pci_t;
typedef struct {
    unsigned char clusterUuid[16];
    s_ret_t status;
    unsigned int cliqueId;
    unsigned char state; /* 0 not supported, 1 not started, 2 in progress, 3 completed */
} s_fabric_t;

typedef struct {
    s_ret_t (*init)(void);
    s_ret_t (*shutdown)(void);
    const char *(*error_string)(s_ret_t);
    s_ret_t (*count)(unsigned int *);
    s_ret_t (*handle)(unsigned int, s_dev_t *);
    s_ret_t (*pci)(s_dev_t, s_pci_t *);
    s_ret_t (*uuid)(s_dev_t, char *, unsigned int);
    s_ret_t (*fabric)(s_dev_t, s_fabric_t *);
} s_api_t;

static bool s_bind(void *h, s_api_t *a)
{
    /* dlsym returns void *; POSIX guarantees it converts to a function pointer. */
#define S_SYM(field, name) (*(void **)&a->field = dlsym(h, name))
    S_SYM(init, "nvmlInit_v2");
    S_SYM(shutdown, "nvmlShutdown");
    S_SYM(error_string, "nvmlErrorString");
    S_SYM(count, "nvmlDeviceGetCount_v2");
    S_SYM(handle, "nvmlDeviceGetHandleByIndex_v2");
    S_SYM(pci, "nvmlDeviceGetPciInfo_v3");
    S_SYM(uuid, "nvmlDeviceGetUUID");
    S_SYM(fabric, "nvmlDeviceGetGpuFabricInfo");
#undef S_SYM
    return a->init && a->shutdown && a->count && a->handle && a->pci && a->uuid;
}

static const char *s_err(const s_api_t *a, s_ret_t r)
{
    return a->error_string ? a->error_string(r) : "error";
}

/* Per GPU: UUID onto the hwloc GPU of the same bus id; fabric clique into `dom`. */
static void s_gpu(const s_api_t *a, s_dev_t d, rf_probe_facts_t *f, char *dom, size_t cap, int *n_done, int *n_none)
{
    s_pci_t pci;
    char uuid[96] = "";
    if (a->pci(d, &pci) == 0 && a->uuid(d, uuid, sizeof uuid) == 0) {
        char busid[16];
        snprintf(busid, sizeof busid, "%04x:%02x:%02x.0", pci.domain & 0xffff, pci.bus & 0xff, pci.device & 0xff);
        for (int g = 0; g < f->n_gpus; g++)
            if (!strncmp(f->gpus[g].busid, busid, 11) && !f->gpus[g].uuid[0])
                snprintf(f->gpus[g].uuid, sizeof f->gpus[g].uuid, "%.63s", uuid);
    }
    s_fabric_t fi;
    memset(&fi, 0, sizeof fi);
    if (!a->fabric)
        return; /* an old driver proves nothing either way */
    s_ret_t r = a->fabric(d, &fi);
    if (r == 3 /* NVML_ERROR_NOT_SUPPORTED */ || (r == 0 && fi.state == 0)) {
        (*n_none)++;
        return;
    }
    if (r != 0)
        return;
    static const unsigned char zero[16];
    if (fi.state != 3 || fi.status != 0 || !memcmp(fi.clusterUuid, zero, 16))
        return; /* not (yet) a member: neither a domain nor proof of none */
    const unsigned char *u = fi.clusterUuid;
    char mine[96];
    snprintf(mine, sizeof mine, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x.%u", u[0], u[1],
             u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15], fi.cliqueId);
    if (*n_done == 0)
        snprintf(dom, cap, "%s", mine);
    else if (strcmp(dom, mine))
        snprintf(dom, cap, "!"); /* GPUs disagree */
    (*n_done)++;
}

rf_status rf__nvml_read(const char *lib, rf_probe_facts_t *f, rf_error_t *err)
{
    lib = lib ? lib : "libnvidia-ml.so.1";
    snprintf(f->nvml.origin, sizeof f->nvml.origin, "%s", lib);
    void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (!h)
        return rf__src_fail(&f->nvml, RF_EUNSUPPORTED, err, "%s cannot be loaded (no NVIDIA driver here?): %s", lib,
                            dlerror());
    s_api_t a;
    memset(&a, 0, sizeof a);
    rf_status rc = RF_OK;
    s_ret_t r;
    unsigned int n = 0;
    if (!s_bind(h, &a))
        rc = rf__src_fail(&f->nvml, RF_EUNSUPPORTED, err, "%s lacks the NVML v2 entry points", lib);
    else if ((r = a.init()) != 0)
        rc = rf__src_fail(&f->nvml, RF_EIO, err, "nvmlInit failed: %s", s_err(&a, r));
    else {
        if ((r = a.count(&n)) != 0)
            rc = rf__src_fail(&f->nvml, RF_EIO, err, "nvmlDeviceGetCount failed: %s", s_err(&a, r));
        char dom[96] = "";
        int done = 0, none = 0;
        for (unsigned int i = 0; rc == RF_OK && i < n; i++) {
            s_dev_t d;
            if ((r = a.handle(i, &d)) != 0)
                rc = rf__src_fail(&f->nvml, RF_EIO, err, "nvmlDeviceGetHandleByIndex(%u) failed: %s", i, s_err(&a, r));
            else
                s_gpu(&a, d, f, dom, sizeof dom, &done, &none);
        }
        a.shutdown();
        if (rc == RF_OK) {
            f->nvml.state = RF_SRC_OK;
            if (n > 0 && done == (int)n && strcmp(dom, "!"))
                snprintf(f->accel_domain, sizeof f->accel_domain, "%s", dom);
            else if (n == 0 || none == (int)n)
                f->accel_none = true;
            else
                rf__facts_note(f,
                               "NVML: %d of %u GPUs are in a completed NVLink fabric%s; the domain is not "
                               "established",
                               done, n, !strcmp(dom, "!") ? " and they disagree" : "");
            if (!a.fabric)
                rf__facts_note(f, "NVML: the driver has no nvmlDeviceGetGpuFabricInfo (older than R550)");
        }
    }
    dlclose(h);
    return rc;
}
