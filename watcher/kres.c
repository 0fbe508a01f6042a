/* watcher/kres.c: resource lists (see kres.h). */
#include "kres.h"

#include <stdlib.h>
#include <string.h>

int64_t rf__res_get(const rf__res_t *res, const char *name)
{
    for (int32_t i = 0; i < res->n; i++)
        if (strcmp(res->names[i], name) == 0)
            return res->vals[i];
    return 0;
}

static int32_t s_res_slot(rf__res_t *res, const char *name)
{
    for (int32_t i = 0; i < res->n; i++)
        if (strcmp(res->names[i], name) == 0)
            return i;
    char **names = realloc(res->names, (size_t)(res->n + 1) * sizeof *names);
    if (!names)
        return -1;
    res->names = names;
    int64_t *vals = realloc(res->vals, (size_t)(res->n + 1) * sizeof *vals);
    if (!vals)
        return -1;
    res->vals = vals;
    if (!(res->names[res->n] = strdup(name)))
        return -1;
    res->vals[res->n] = 0;
    return res->n++;
}

rf_status rf__res_add(rf__res_t *res, const char *name, int64_t v)
{
    int32_t i = s_res_slot(res, name);
    if (i < 0)
        return RF_ENOMEM;
    res->vals[i] += v;
    return RF_OK;
}

rf_status rf__res_max(rf__res_t *res, const char *name, int64_t v)
{
    int32_t i = s_res_slot(res, name);
    if (i < 0)
        return RF_ENOMEM;
    if (v > res->vals[i])
        res->vals[i] = v;
    return RF_OK;
}

void rf__res_fini(rf__res_t *res)
{
    for (int32_t i = 0; i < res->n; i++)
        free(res->names[i]);
    free(res->names);
    free(res->vals);
    memset(res, 0, sizeof *res);
}
