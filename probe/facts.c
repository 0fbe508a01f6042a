/* probe/facts.c: the facts record's helpers (probe/facts.h): initialisation,
 * notes, failing a source, path names. */
#include "facts.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const char *rf__path_name(rf_probe_path p)
{
    static const char *const names[] = {"pix", "pxb", "phb", "node", "package", "sys", "unknown"};
    return (unsigned)p <= RF_PATH_UNKNOWN ? names[p] : "unknown";
}

void rf__facts_init(rf_probe_facts_t *f)
{
    memset(f, 0, sizeof *f);
    memset(f->gpu_nic, RF_PATH_UNKNOWN, sizeof f->gpu_nic);
    memset(f->gpu_gpu, RF_PATH_UNKNOWN, sizeof f->gpu_gpu);
}

void rf__facts_note(rf_probe_facts_t *f, const char *fmt, ...)
{
    if (f->n_notes >= RF_PROBE_MAX_NOTES) {
        snprintf(f->notes[RF_PROBE_MAX_NOTES - 1], sizeof f->notes[0], "(more notes than the limit of %d)",
                 RF_PROBE_MAX_NOTES);
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(f->notes[f->n_notes++], sizeof f->notes[0], fmt, ap);
    va_end(ap);
}

rf_status rf__src_fail(rf_probe_src_t *src, rf_status code, rf_error_t *err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(src->error, sizeof src->error, fmt, ap);
    va_end(ap);
    src->state = RF_SRC_ERROR;
    return rf_error_set(err, code, "", "%s", src->error);
}
