/* probe/nvml.h: NVIDIA's management library, loaded at run time
 * (dlopen("libnvidia-ml.so.1"), shipped with the driver; never a build
 * dependency). From it: each GPU's UUID and its NVLink fabric identity
 * (nvmlDeviceGetGpuFabricInfo: cluster UUID and clique id), which names the
 * multi-node NVLink domain ("<ClusterUUID>.<CliqueId>", the GPU Operator's
 * nvidia.com/gpu.clique form). Its absence is reported in f->nvml, never
 * fatal. */
#ifndef RACKFIT_PROBE_NVML_H
#define RACKFIT_PROBE_NVML_H

#include "facts.h"
#include "rackfit/status.h"

/* `lib` NULL: "libnvidia-ml.so.1". Fills f->nvml, f->accel_domain or
 * f->accel_none, and the UUIDs of the GPUs hwloc found (matched by bus id). */
rf_status rf__nvml_read(const char *lib, rf_probe_facts_t *f, rf_error_t *err);

#endif
