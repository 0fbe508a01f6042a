/* watcher/kdoc.c: dotted-path lookups in decoded Kubernetes objects (see kdoc.h). */
#include "kdoc.h"

#include <string.h>

const rf_doc_t *rf__doc_at(const rf_doc_t *doc, const char *dotted)
{
    char key[128];
    const char *p = dotted;
    while (doc && *p) {
        const char *dot = strchr(p, '.');
        size_t n = dot ? (size_t)(dot - p) : strlen(p);
        if (n >= sizeof key || doc->type != RF_DOC_MAP)
            return NULL;
        memcpy(key, p, n);
        key[n] = '\0';
        doc = rf__doc_get(doc, key);
        p += n + (dot ? 1 : 0);
    }
    return doc;
}

const char *rf__doc_str(const rf_doc_t *doc, const char *dotted)
{
    const rf_doc_t *d = rf__doc_at(doc, dotted);
    return d && d->type == RF_DOC_STR ? d->u.s : NULL;
}
